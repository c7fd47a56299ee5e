/*
 * kerf get tenants|queue|nodes|gpus: kerf serve's read-only API
 * (serve/api.h), or a file of `kerf sim snapshot` (--snapshot), as
 * kubectl-like tables, or the answer as JSON or YAML.
 * GPU amounts are shown in GPUs ("2.5"); the API counts them in milli.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/api_client.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/table.h"

static const char usage_text[] =
	"usage: kerf get tenants|queue|nodes|gpus [-o table|wide|json|yaml] [--server URL | --snapshot FILE]\n"
	"\n"
	"  tenants    the tenant tree: quota, usage and borrowing per GPU flavor, pending work, budget\n"
	"  queue      pending workloads in the order the next cycle takes them, and why each waits\n"
	"  nodes      nodes: GPU model, GPUs free, cordon, NVLink domain, MIG layout (wide)\n"
	"  gpus       every GPU: health, mode (free, whole, shared, mig), free share, tenant, pods\n"
	"\n"
	"  -o, --output FMT   table (default), wide (more columns), json or yaml\n"
	"  --server URL       kerf serve's endpoint (default $KERF_SERVER, else " KERF_CLI_DEFAULT_SERVER ")\n"
	"  --snapshot FILE    read a file of 'kerf sim snapshot' instead of kerf serve\n"
	"\n"
	"exit status: 0 (also when there is nothing to list), 1 failure (server or file\n"
	"not read), 2 usage\n";

static const char prog[] = "kerf get";

/* "8", "2.5", or "-" for no limit (null) */
static const char *gpus(const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		snprintf(buf, size, "-");
	else
		kerf_units_gpus(json_integer_value(v), buf, size);
	return buf;
}

static void tenant_rows(struct kerf_table *t, const json_t *item, bool wide)
{
	const json_t *fl = json_object_get(item, "flavors"), *f, *budget = json_object_get(item, "budget");
	char pend[32], bud[32], weight[32], nom[32], bor[32], lend[32], use[32], brw[32];
	size_t i;
	int64_t sum_use = 0, sum_nom = 0, sum_brw = 0;

	snprintf(pend, sizeof(pend), "%lld", kerf_cli_int(item, "pending"));
	snprintf(weight, sizeof(weight), "%lld", kerf_cli_int(item, "weight"));
	if (json_is_object(budget))
		kerf_units_percent((double)kerf_cli_int(budget, "usedPercent"), 0, bud, sizeof(bud));
	else
		snprintf(bud, sizeof(bud), "-");
	json_array_foreach(fl, i, f) {
		if (wide) {
			const char *row[] = {
				kerf_cli_str(item, "name"), json_is_string(json_object_get(item, "parent")) ? kerf_cli_str(item, "parent") : "-",
				weight, kerf_cli_str(f, "flavor"),
				gpus(f, "nominalGPUMilli", nom, sizeof(nom)), gpus(f, "borrowingLimitGPUMilli", bor, sizeof(bor)),
				gpus(f, "lendingLimitGPUMilli", lend, sizeof(lend)), gpus(f, "usageGPUMilli", use, sizeof(use)),
				gpus(f, "borrowedGPUMilli", brw, sizeof(brw)), pend, bud,
				kerf_cli_str(item, "isolation"),
			};

			kerf_table_row(t, row);
		}
		sum_use += kerf_cli_int(f, "usageGPUMilli");
		sum_nom += kerf_cli_int(f, "nominalGPUMilli");
		sum_brw += kerf_cli_int(f, "borrowedGPUMilli");
	}
	if (!wide) {
		const char *row[] = {
			kerf_cli_str(item, "name"), json_is_string(json_object_get(item, "parent")) ? kerf_cli_str(item, "parent") : "-",
			weight, (kerf_units_gpus(sum_nom, nom, sizeof(nom)), nom),
			(kerf_units_gpus(sum_use, use, sizeof(use)), use),
			(kerf_units_gpus(sum_brw, brw, sizeof(brw)), brw), pend, bud,
		};

		kerf_table_row(t, row);
	}
}

static int tenants(const json_t *items, bool wide, struct kerf_table *t)
{
	static const char *const head[] = { "NAME", "PARENT", "WEIGHT", "NOMINAL", "USAGE",
					    "BORROWED", "PENDING", "BUDGET", NULL };
	static const char *const head_wide[] = { "NAME", "PARENT", "WEIGHT", "FLAVOR", "NOMINAL",
						 "BORROWING", "LENDING", "USAGE", "BORROWED",
						 "PENDING", "BUDGET", "ISOLATION", NULL };
	const json_t *item;
	size_t i;

	kerf_table_init(t, wide ? head_wide : head);
	json_array_foreach(items, i, item)
		tenant_rows(t, item, wide);
	return 0;
}

static int queue(const json_t *answer, bool wide, struct kerf_table *t)
{
	static const char *const head[] = { "POS", "WORKLOAD", "TENANT", "CLASS", "PODS", "GPUS",
					    "WAIT", "REASON", "MESSAGE", NULL };
	const json_t *item;
	size_t i;
	char pos[32], pods[32], g[32], wait[32];
	const char *const *h = head;
	char msg[200];

	if (!wide) {
		static const char *const narrow[] = { "POS", "WORKLOAD", "TENANT", "CLASS", "PODS",
						      "GPUS", "WAIT", "REASON", NULL };
		h = narrow;
	}
	kerf_table_init(t, h);
	json_array_foreach(json_object_get(answer, "items"), i, item) {
		snprintf(pos, sizeof(pos), "%lld", kerf_cli_int(item, "position"));
		snprintf(pods, sizeof(pods), "%lld", kerf_cli_int(item, "pods"));
		kerf_units_gpus(kerf_cli_int(item, "gpuMilli"), g, sizeof(g));
		kerf_units_duration((int64_t)(json_number_value(json_object_get(item, "waitSeconds")) * 1000), wait, sizeof(wait));
		snprintf(msg, sizeof(msg), "%s", kerf_cli_str(item, "message"));
		const char *row[] = { pos, kerf_cli_str(item, "key"), kerf_cli_str(item, "tenant"),
				      kerf_cli_str(item, "class"), pods, g, wait,
				      kerf_cli_str(item, "reason"), msg };

		kerf_table_row(t, row);
	}
	/* pods held back before the scheduler sees them (GangIncomplete ...) */
	json_array_foreach(json_object_get(answer, "waiting"), i, item) {
		const char *wl = kerf_cli_str(item, "workload");

		kerf_units_duration((int64_t)(json_number_value(json_object_get(item, "waitSeconds")) * 1000), wait, sizeof(wait));
		snprintf(msg, sizeof(msg), "%s", kerf_cli_str(item, "message"));
		const char *row[] = { "-", wl[0] ? wl : kerf_cli_str(item, "pod"), "-", "-", "-", "-",
				      wait, kerf_cli_str(item, "reason"), msg };

		kerf_table_row(t, row);
	}
	return 0;
}

/* "0:3g.40gb@4*,1g.10gb@0 1:..." (* in use, ! out of service) */
static void mig_text(const json_t *mig, char *buf, size_t size)
{
	struct kerf_buf b;
	const json_t *gpu, *inst;
	size_t i, k;
	int rc = 0;

	kerf_buf_init(&b, size - 1);
	json_array_foreach(mig, i, gpu) {
		rc |= kerf_buf_addf(&b, "%s%lld:", i ? " " : "", kerf_cli_int(gpu, "gpu"));
		json_array_foreach(json_object_get(gpu, "instances"), k, inst)
			rc |= kerf_buf_addf(&b, "%s%s@%lld%s%s", k ? "," : "", kerf_cli_str(inst, "profile"),
					    kerf_cli_int(inst, "start"),
					    json_is_true(json_object_get(inst, "inUse")) ? "*" : "",
					    json_is_true(json_object_get(inst, "down")) ? "!" : "");
	}
	(void)rc;   /* cut short at size: the JSON output has it whole */
	snprintf(buf, size, "%s", b.len ? kerf_buf_str(&b) : "-");
	kerf_buf_release(&b);
}

/* The GPUs out of service: "0,3", "all?" when a mark did not read, "-". */
static void down_text(const json_t *item, char *buf, size_t size)
{
	const json_t *g;
	size_t i, len = 0;

	buf[0] = 0;
	json_array_foreach(json_object_get(item, "gpusDown"), i, g)
		if (len + 8 < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
						(long long)json_integer_value(g));
	if (kerf_cli_str(item, "gpuMarksError")[0])
		snprintf(buf, size, "all?");
	else if (!buf[0])
		snprintf(buf, size, "-");
}

static int nodes(const json_t *items, bool wide, struct kerf_table *t)
{
	static const char *const head[] = { "NAME", "MODEL", "GPUS", "FREE", "STATUS", "NVLINK",
					    "PODS", "CPU-FREE", "MEM-FREE", "MIG", "DOWN", "REASON",
					    NULL };
	static const char *const narrow[] = { "NAME", "MODEL", "GPUS", "FREE", "STATUS", "NVLINK", NULL };
	const json_t *item;
	size_t i;

	kerf_table_init(t, wide ? head : narrow);
	json_array_foreach(items, i, item) {
		char n[32], f[32], pods[32], cpu[32], mem[32], mig[512], down[64];
		const char *dom = kerf_cli_str(item, "nvlinkDomain"), *model = kerf_cli_str(item, "model");
		bool cordoned = json_is_true(json_object_get(item, "cordoned"));

		snprintf(n, sizeof(n), "%lld", kerf_cli_int(item, "gpus"));
		kerf_units_gpus(kerf_cli_int(item, "gpuMilliFree"), f, sizeof(f));
		snprintf(pods, sizeof(pods), "%lld", kerf_cli_int(item, "pods"));
		kerf_units_gpus(kerf_cli_int(item, "cpuMilliFree"), cpu, sizeof(cpu));
		snprintf(mem, sizeof(mem), "%lldMi", kerf_cli_int(item, "memoryMiBFree"));
		mig_text(json_object_get(item, "mig"), mig, sizeof(mig));
		down_text(item, down, sizeof(down));
		const char *row[] = { kerf_cli_str(item, "name"), model[0] ? model : "-", n, f,
				      cordoned ? "Cordoned" : "Usable", dom[0] ? dom : "-", pods, cpu,
				      mem, mig, down, cordoned ? kerf_cli_str(item, "cordonReason") : "-" };

		kerf_table_row(t, row);
	}
	return 0;
}

/* "ns/a(0.5 mps),ns/b(1 whole)" or "-" */
static void pods_text(const json_t *pods, char *buf, size_t size)
{
	struct kerf_buf b;
	const json_t *p;
	char g[32];
	size_t i;
	int rc = 0;

	kerf_buf_init(&b, size - 1);
	json_array_foreach(pods, i, p) {
		kerf_units_gpus(kerf_cli_int(p, "gpuMilli"), g, sizeof(g));
		rc |= kerf_buf_addf(&b, "%s%s/%s(%s %s)", i ? "," : "", kerf_cli_str(p, "namespace"),
				    kerf_cli_str(p, "name"), g, kerf_cli_str(p, "share"));
	}
	(void)rc;   /* cut short at size: the JSON output has it whole */
	snprintf(buf, size, "%s", b.len ? kerf_buf_str(&b) : "-");
	kerf_buf_release(&b);
}

/* "3g.40gb@0=research,1g.10gb@4!" (= its tenant, ! out of service) or "-" */
static void gpu_mig_text(const json_t *mig, char *buf, size_t size)
{
	struct kerf_buf b;
	const json_t *m;
	size_t i;
	int rc = 0;

	kerf_buf_init(&b, size - 1);
	json_array_foreach(mig, i, m) {
		const char *t = kerf_cli_str(m, "tenant");

		rc |= kerf_buf_addf(&b, "%s%s@%lld%s%s%s", i ? "," : "", kerf_cli_str(m, "profile"),
				    kerf_cli_int(m, "start"), t[0] ? "=" : "", t,
				    strcmp(kerf_cli_str(m, "health"), "down") ? "" : "!");
	}
	(void)rc;
	snprintf(buf, size, "%s", b.len ? kerf_buf_str(&b) : "-");
	kerf_buf_release(&b);
}

static int gpus_table(const json_t *items, bool wide, struct kerf_table *t)
{
	static const char *const head[] = { "NODE", "GPU", "MODEL", "HEALTH", "MODE", "FREE",
					    "TENANT", "PODS", NULL };
	static const char *const head_wide[] = { "NODE", "GPU", "MODEL", "MEMORY", "HEALTH", "MODE",
						 "FREE", "TENANT", "PODS", "MIG", NULL };
	const json_t *item;
	size_t i;

	kerf_table_init(t, wide ? head_wide : head);
	json_array_foreach(items, i, item) {
		char idx[32], f[32], n[32], mem[32], pods[512], mig[512];
		const char *model = kerf_cli_str(item, "model"), *tenant = kerf_cli_str(item, "tenant");

		snprintf(idx, sizeof(idx), "%lld", kerf_cli_int(item, "index"));
		kerf_units_gpus(kerf_cli_int(item, "freeMilli"), f, sizeof(f));
		snprintf(n, sizeof(n), "%zu", json_array_size(json_object_get(item, "pods")));
		if (json_is_integer(json_object_get(item, "memoryMiB")))
			snprintf(mem, sizeof(mem), "%lldMi", kerf_cli_int(item, "memoryMiB"));
		else
			snprintf(mem, sizeof(mem), "-");
		pods_text(json_object_get(item, "pods"), pods, sizeof(pods));
		gpu_mig_text(json_object_get(item, "mig"), mig, sizeof(mig));
		if (wide) {
			const char *row[] = { kerf_cli_str(item, "node"), idx, model[0] ? model : "-", mem,
					      kerf_cli_str(item, "health"), kerf_cli_str(item, "mode"), f,
					      tenant[0] ? tenant : "-", pods, mig };

			kerf_table_row(t, row);
		} else {
			const char *row[] = { kerf_cli_str(item, "node"), idx, model[0] ? model : "-",
					      kerf_cli_str(item, "health"), kerf_cli_str(item, "mode"), f,
					      tenant[0] ? tenant : "-", n };

			kerf_table_row(t, row);
		}
	}
	return 0;
}

int kerf_cmd_get(int argc, char **argv)
{
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *server = NULL, *snapshot = NULL, *what, *path;
	char shown[80];
	struct kerf_table t;
	json_t *answer, *items;
	enum { RES_TENANTS, RES_QUEUE, RES_NODES, RES_GPUS } res;
	int rc;

	rc = kerf_cli_options(prog, usage_text, argc, argv, &fmt, &server, &snapshot);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		fprintf(stderr, "%s: what to get? tenants, queue, nodes or gpus\n", prog);
		fputs(usage_text, stderr);
		return 2;
	}
	what = argv[optind];
	if (!strcmp(what, "tenants") || !strcmp(what, "tenant")) {
		res = RES_TENANTS;
		path = "/api/v1/tenants";
	} else if (!strcmp(what, "queue")) {
		res = RES_QUEUE;
		path = "/api/v1/queue";
	} else if (!strcmp(what, "nodes") || !strcmp(what, "node")) {
		res = RES_NODES;
		path = "/api/v1/nodes";
	} else if (!strcmp(what, "gpus") || !strcmp(what, "gpu")) {
		res = RES_GPUS;
		path = "/api/v1/gpus";
	} else {
		fprintf(stderr, "%s: unknown resource '%s': expected tenants, queue, nodes or gpus\n", prog,
			kerf_escape(shown, sizeof(shown), what));
		return 2;
	}
	if (optind + 1 < argc) {
		kerf_opt_unexpected(prog, argv[optind + 1], NULL);
		return 2;
	}
	rc = kerf_cli_fetch(prog, server, snapshot, path, &answer);
	if (rc)
		return rc;
	if (fmt == KERF_OUT_JSON || fmt == KERF_OUT_YAML) {
		rc = kerf_cli_print(prog, answer, fmt, stdout);
		json_decref(answer);
		return rc;
	}
	items = json_object_get(answer, "items");
	if (res == RES_TENANTS)
		tenants(items, fmt == KERF_OUT_WIDE, &t);
	else if (res == RES_QUEUE)
		queue(answer, fmt == KERF_OUT_WIDE, &t);
	else if (res == RES_NODES)
		nodes(items, fmt == KERF_OUT_WIDE, &t);
	else
		gpus_table(items, fmt == KERF_OUT_WIDE, &t);
	if (t.nr_rows == 1) {
		fprintf(stderr, "No resources found.\n");
	} else if (kerf_table_print(&t, stdout) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		rc = 1;
	}
	kerf_table_release(&t);
	json_decref(answer);
	return rc;
}
