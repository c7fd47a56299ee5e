/*
 * kerf top: per-tenant GPU use, from kerf serve's read-only API or a file
 * of `kerf sim snapshot`: GPUs in use by flavor, the share of the
 * cluster's GPUs, nominal quota (the tenant's entitlement), borrowed,
 * pending workloads and budget, leaf tenants sorted by use.  On a
 * terminal it redraws every --interval seconds (clear + redraw) until
 * interrupted; with --once, -o json|yaml, or when standard output is not
 * a terminal it prints one sample and exits.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/parse.h"
#include "cmd/api_client.h"
#include "cmd/cmd.h"
#include "cmd/spec.h"
#include "cmd/opt.h"
#include "cmd/table.h"

static const char usage_text[] =
	"usage: kerf top [--server URL | --snapshot FILE] [--interval S] [--once] [-o table|wide|json|yaml]\n"
	"\n"
	"Per-tenant GPU use, leaf tenants sorted by GPUs in use: GPUs in use by\n"
	"flavor, their share of the cluster's GPUs, nominal quota, borrowed GPUs,\n"
	"pending workloads and budget used.  On a terminal the screen is redrawn\n"
	"every interval until interrupted; otherwise one sample is printed.\n"
	"\n"
	"  --server URL       kerf serve's endpoint (default $KERF_SERVER, else " KERF_CLI_DEFAULT_SERVER ")\n"
	"  --snapshot FILE    read a file of 'kerf sim snapshot' instead (read again at each refresh)\n"
	"  --interval S       seconds between refreshes, 0.1..3600 (default 2)\n"
	"  --once             print one sample and exit, even on a terminal\n"
	"  -o, --output FMT   table (default), wide (GPUs per flavor), json or yaml (one sample)\n"
	"  -h, --help         this text\n"
	"\n"
	"exit status: 0, 1 failure (server or file not read), 2 usage\n";

static const char prog[] = "kerf top";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct top_row {
	const json_t *tenant;
	long long use;            /* GPU milli in use */
};

static int by_use(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	return strcmp(kerf_cli_str(x->tenant, "name"), kerf_cli_str(y->tenant, "name"));
}

static long long flavor_sum(const json_t *tenant, const char *key)
{
	const json_t *f;
	long long sum = 0;
	size_t i;

	json_array_foreach(json_object_get(tenant, "flavors"), i, f)
		sum += kerf_cli_int(f, key);
	return sum;
}

/*
 * One sample from the tenants and nodes answers: {apiVersion, kind:
 * "TopSample", clusterGPUMilli, usedGPUMilli, items: [...]}, NULL on OOM.
 */
static json_t *sample(const json_t *tenants, const json_t *nodes)
{
	const json_t *t, *n, *f;
	long long cluster = 0, used = 0;
	size_t i, k, nr = 0;
	json_t *o, *items;
	struct top_row *rows = calloc(json_array_size(json_object_get(tenants, "items")) + 1,
				      sizeof(*rows));

	if (!rows)
		return NULL;
	json_array_foreach(json_object_get(nodes, "items"), i, n)
		cluster += 1000 * kerf_cli_int(n, "gpus");
	json_array_foreach(json_object_get(tenants, "items"), i, t) {
		if (!json_is_true(json_object_get(t, "leaf")))
			continue;
		rows[nr].tenant = t;
		rows[nr].use = flavor_sum(t, "usageGPUMilli");
		used += rows[nr++].use;
	}
	qsort(rows, nr, sizeof(*rows), by_use);
	o = json_pack("{s:s, s:s, s:I, s:I}", "apiVersion", "kerf.io/api/v1", "kind", "TopSample",
		      "clusterGPUMilli", (json_int_t)cluster, "usedGPUMilli", (json_int_t)used);
	items = json_array();
	for (k = 0; o && items && k < nr; k++) {
		const json_t *b = json_object_get(rows[k].tenant, "budget");
		json_t *by = json_array(), *x;

		json_array_foreach(json_object_get(rows[k].tenant, "flavors"), i, f)
			if (kerf_cli_int(f, "usageGPUMilli") > 0 || json_is_integer(json_object_get(f, "nominalGPUMilli")))
				json_array_append_new(by, json_pack("{s:s, s:I, s:O}", "flavor",
								    kerf_cli_str(f, "flavor"), "usageGPUMilli",
								    (json_int_t)kerf_cli_int(f, "usageGPUMilli"),
								    "nominalGPUMilli", json_object_get(f, "nominalGPUMilli")));
		x = json_pack("{s:s, s:I, s:f, s:I, s:I, s:I, s:o, s:o}",
			      "tenant", kerf_cli_str(rows[k].tenant, "name"),
			      "usageGPUMilli", (json_int_t)rows[k].use,
			      "sharePercent", cluster > 0 ? (double)((rows[k].use * 1000 + cluster / 2) / cluster) / 10.0 : 0.0,
			      "nominalGPUMilli", (json_int_t)flavor_sum(rows[k].tenant, "nominalGPUMilli"),
			      "borrowedGPUMilli", (json_int_t)flavor_sum(rows[k].tenant, "borrowedGPUMilli"),
			      "pending", (json_int_t)kerf_cli_int(rows[k].tenant, "pending"),
			      "budgetPercent", json_is_object(b) ? json_integer(kerf_cli_int(b, "usedPercent")) : json_null(),
			      "flavors", by ? by : json_array());
		if (!x || json_array_append_new(items, x) < 0) {
			json_decref(items);
			items = NULL;
		}
	}
	free(rows);
	if (!o || !items || json_object_set_new(o, "items", items) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "H100-80GB:8,H200-141GB:2.5" or "-" */
static void by_flavor(const json_t *item, char *buf, size_t size)
{
	struct kerf_buf b;
	const json_t *f;
	char g[32];
	size_t i;
	int rc = 0;

	kerf_buf_init(&b, size - 1);
	json_array_foreach(json_object_get(item, "flavors"), i, f) {
		if (kerf_cli_int(f, "usageGPUMilli") <= 0)
			continue;
		kerf_units_gpus(kerf_cli_int(f, "usageGPUMilli"), g, sizeof(g));
		rc |= kerf_buf_addf(&b, "%s%s:%s", b.len ? "," : "", kerf_cli_str(f, "flavor"), g);
	}
	(void)rc;   /* cut short at size: -o json has it whole */
	snprintf(buf, size, "%s", b.len ? kerf_buf_str(&b) : "-");
	kerf_buf_release(&b);
}

static int print_table(const json_t *s, bool wide, FILE *out)
{
	static const char *const head[] = { "TENANT", "GPUS", "SHARE", "NOMINAL", "BORROWED",
					    "PENDING", "BUDGET", NULL };
	static const char *const head_wide[] = { "TENANT", "GPUS", "SHARE", "NOMINAL", "BORROWED",
						 "PENDING", "BUDGET", "BY-FLAVOR", NULL };
	char used[32], all[32];
	const json_t *item;
	struct kerf_table t;
	size_t i;
	int rc;

	kerf_units_gpus(kerf_cli_int(s, "usedGPUMilli"), used, sizeof(used));
	kerf_units_gpus(kerf_cli_int(s, "clusterGPUMilli"), all, sizeof(all));
	fprintf(out, "GPUs in use: %s of %s\n\n", used, all);
	kerf_table_init(&t, wide ? head_wide : head);
	json_array_foreach(json_object_get(s, "items"), i, item) {
		char g[32], share[32], nom[32], brw[32], pend[32], bud[32], fl[512];
		const json_t *b = json_object_get(item, "budgetPercent");

		kerf_units_gpus(kerf_cli_int(item, "usageGPUMilli"), g, sizeof(g));
		kerf_units_percent(json_number_value(json_object_get(item, "sharePercent")), 1, share, sizeof(share));
		kerf_units_gpus(kerf_cli_int(item, "nominalGPUMilli"), nom, sizeof(nom));
		kerf_units_gpus(kerf_cli_int(item, "borrowedGPUMilli"), brw, sizeof(brw));
		snprintf(pend, sizeof(pend), "%lld", kerf_cli_int(item, "pending"));
		if (json_is_integer(b))
			kerf_units_percent((double)json_integer_value(b), 0, bud, sizeof(bud));
		else
			snprintf(bud, sizeof(bud), "-");
		by_flavor(item, fl, sizeof(fl));
		const char *row[] = { kerf_cli_str(item, "tenant"), g, share, nom, brw, pend, bud, fl };

		kerf_table_row(&t, row);
	}
	rc = t.nr_rows > 1 ? kerf_table_print(&t, out) : (fprintf(out, "No tenants found.\n"), 0);
	kerf_table_release(&t);
	return rc;
}

/* Fetch and print one sample: 0, or the exit status of a failure. */
static int once(const char *server, const char *snapshot, enum kerf_cli_output fmt, bool clear)
{
	json_t *tenants = NULL, *nodes = NULL, *s;
	int rc = kerf_cli_fetch(prog, server, snapshot, "/api/v1/tenants", &tenants);

	if (rc == 0)
		rc = kerf_cli_fetch(prog, server, snapshot, "/api/v1/nodes", &nodes);
	if (rc) {
		json_decref(tenants);
		return rc;
	}
	s = sample(tenants, nodes);
	if (!s) {
		fprintf(stderr, "%s: out of memory\n", prog);
		rc = 1;
	} else if (fmt == KERF_OUT_JSON || fmt == KERF_OUT_YAML) {
		rc = kerf_cli_print(prog, s, fmt, stdout);
	} else {
		if (clear)
			fputs("\033[H\033[2J", stdout);
		if (print_table(s, fmt == KERF_OUT_WIDE, stdout) < 0) {
			fprintf(stderr, "%s: out of memory\n", prog);
			rc = 1;
		}
		fflush(stdout);
	}
	json_decref(s);
	json_decref(tenants);
	json_decref(nodes);
	return rc;
}

const struct option kerf_top_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "server", required_argument, NULL, 's' },
	{ "snapshot", required_argument, NULL, 'f' },
	{ "interval", required_argument, NULL, 'i' },
	{ "once", no_argument, NULL, '1' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int kerf_cmd_top(int argc, char **argv)
{
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *server = NULL, *snapshot = NULL;
	struct kerf_err err = { 0 };
	uint64_t interval_ms = 2000;
	bool single = false;
	int opt, rc;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":ho:", kerf_top_longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (kerf_cli_output(prog, optarg, &fmt))
				return 2;
			break;
		case 's':
			server = optarg;
			break;
		case 'f':
			snapshot = optarg;
			break;
		case 'i':
			if (kerf_parse_fixed_opt("--interval", optarg, 3, 100, 3600 * 1000, &interval_ms, &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			break;
		case '1':
			single = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			kerf_opt_error(prog, opt, argv);
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], NULL);
		return 2;
	}
	if ((rc = kerf_cli_source_check(prog, server, snapshot)) >= 0)
		return rc;
	if (single || fmt == KERF_OUT_JSON || fmt == KERF_OUT_YAML || !isatty(STDOUT_FILENO))
		return once(server, snapshot, fmt, false);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop) {
		struct timespec ts = { .tv_sec = (time_t)(interval_ms / 1000),
				       .tv_nsec = (long)(interval_ms % 1000) * 1000000L };

		rc = once(server, snapshot, fmt, true);
		if (rc)
			return rc;
		nanosleep(&ts, NULL);
	}
	return 0;
}
