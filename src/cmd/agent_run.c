/*
 * agent_run: `kerf agent run`, the node agent (src/agent, docs/agent.md
 * "The agent loop"), and `kerf agent verify`, the explicit check that
 * returns a GPU, a MIG instance or the node to service.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/marks.h"
#include "agent/node_doc.h"
#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "kobj/time.h"
#include "kube/client.h"
#include "kube/incluster.h"
#include "kube/kubeconfig.h"
#include "nvml/inventory.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char run_usage[] =
	"usage: kerf agent run --node-name NAME [options]\n"
	"  --node-name NAME          this node (in a pod: the downward API's spec.nodeName)\n"
	"  --kubeconfig FILE         out of a cluster (default: the service account)\n"
	"  --context NAME            a context of the kubeconfig\n"
	"  --nvml-library PATH       libnvidia-ml.so.1 to load\n"
	"  --metrics-addr ADDR       /metrics, /healthz, /readyz (default 127.0.0.1:9400; \"\" none)\n"
	"  --health-addr ADDR        /healthz and /readyz (and /metrics) also on ADDR\n"
	"  --device-plugin-dir DIR   serve the kubelet's device plugin API there\n"
	"                            (/var/lib/kubelet/device-plugins)\n"
	"  --nvlink-domain NAME      the label kerf.io/nvlink-domain (a domain spans nodes)\n"
	"  --inventory-interval S    re-read the GPUs every S seconds (default 30)\n"
	"  --no-drain                mark unhealthy GPUs but evict nothing\n"
	"  --no-mig                  never create or destroy MIG instances\n"
	"  --mps-root DIR            run MPS control daemons for the pods' MPS shares,\n"
	"                            their pipes and logs under DIR (/run/kerf/mps)\n"
	"  --mps-control PATH        nvidia-cuda-mps-control to run (default: from PATH)\n"
	"  --proc-root DIR           the host's /proc, for each GPU process's pod (default /proc)\n";

static const char verify_usage[] =
	"usage: kerf agent verify --node-name NAME (--gpu N | --mig GPU:PROFILE@START | --node)\n"
	"                         [--kubeconfig FILE] [--context NAME] [--nvml-library PATH] [--force]\n";

struct conn {
	struct kerf_kube_config cfg;
	struct kerf_kube_client *client;
	struct kerf_kube_ops ops;
};

static int connect_api(const char *prog, const char *kubeconfig, const char *context,
		       struct conn *c)
{
	struct kerf_kube_client_opts ko = { .qps_milli = 20000, .burst = 50 };
	struct kerf_err err = { 0 };
	int rc;

	kerf_kube_config_init(&c->cfg);
	rc = kubeconfig ? kerf_kubeconfig_load(&c->cfg, kubeconfig, context, &err)
			: kerf_kube_incluster_from_env(&c->cfg, NULL, &err);
	if (rc == 0 && !(c->client = kerf_kube_client_new(&c->cfg, &ko, &err)))
		rc = -1;
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		kerf_kube_config_release(&c->cfg);
		return 1;
	}
	kerf_kube_client_ops(c->client, &c->ops);
	return 0;
}

static void disconnect_api(struct conn *c)
{
	kerf_kube_client_free(c->client);
	kerf_kube_config_release(&c->cfg);
}

enum { OPT_NODE = 256, OPT_KUBECONFIG, OPT_CONTEXT, OPT_NVML, OPT_METRICS, OPT_HEALTH, OPT_DP,
       OPT_DOMAIN, OPT_INVENTORY, OPT_NO_DRAIN, OPT_NO_MIG, OPT_MPS_ROOT, OPT_MPS_CONTROL,
       OPT_PROC_ROOT, OPT_GPU, OPT_MIG, OPT_WHOLE_NODE, OPT_FORCE };

const struct option kerf_agent_run_longopts[] = {
	{ "node-name", required_argument, NULL, OPT_NODE },
	{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "nvml-library", required_argument, NULL, OPT_NVML },
	{ "metrics-addr", required_argument, NULL, OPT_METRICS },
	{ "health-addr", required_argument, NULL, OPT_HEALTH },
	{ "device-plugin-dir", required_argument, NULL, OPT_DP },
	{ "nvlink-domain", required_argument, NULL, OPT_DOMAIN },
	{ "inventory-interval", required_argument, NULL, OPT_INVENTORY },
	{ "no-drain", no_argument, NULL, OPT_NO_DRAIN },
	{ "no-mig", no_argument, NULL, OPT_NO_MIG },
	{ "mps-root", required_argument, NULL, OPT_MPS_ROOT },
	{ "mps-control", required_argument, NULL, OPT_MPS_CONTROL },
	{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
	{ "gpu", required_argument, NULL, OPT_GPU },
	{ "mig", required_argument, NULL, OPT_MIG },
	{ "node", no_argument, NULL, OPT_WHOLE_NODE },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct run_args {
	const char *node, *kubeconfig, *context, *nvml, *metrics, *health, *dp, *domain, *mig;
	const char *mps_root, *mps_control, *proc_root;
	uint64_t inventory_s, gpu;
	bool no_drain, no_mig, has_gpu, whole_node, force;
};

/* -1 to go on, else the exit status. */
static int parse(const char *prog, const char *usage, bool verify, int argc, char **argv,
		 struct run_args *r)
{
	struct kerf_err err = { 0 };
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", kerf_agent_run_longopts, NULL)) != -1) {
		bool run_only = c == OPT_METRICS || c == OPT_HEALTH || c == OPT_DP || c == OPT_DOMAIN ||
				c == OPT_INVENTORY || c == OPT_NO_DRAIN || c == OPT_NO_MIG ||
				c == OPT_MPS_ROOT || c == OPT_MPS_CONTROL || c == OPT_PROC_ROOT;
		bool verify_only = c == OPT_GPU || c == OPT_MIG || c == OPT_WHOLE_NODE ||
				   c == OPT_FORCE;

		if ((verify && run_only) || (!verify && verify_only)) {
			const char *name = "?";

			for (const struct option *o = kerf_agent_run_longopts; o->name; o++)
				if (o->val == c)
					name = o->name;
			fprintf(stderr, "%s: --%s: not an option of this command\n%s", prog, name,
				usage);
			return 2;
		}
		switch (c) {
		case OPT_NODE: r->node = optarg; break;
		case OPT_KUBECONFIG: r->kubeconfig = optarg; break;
		case OPT_CONTEXT: r->context = optarg; break;
		case OPT_NVML: r->nvml = optarg; break;
		case OPT_METRICS: r->metrics = optarg; break;
		case OPT_HEALTH: r->health = optarg; break;
		case OPT_DP: r->dp = optarg; break;
		case OPT_DOMAIN: r->domain = optarg; break;
		case OPT_NO_DRAIN: r->no_drain = true; break;
		case OPT_NO_MIG: r->no_mig = true; break;
		case OPT_MPS_ROOT: r->mps_root = optarg; break;
		case OPT_MPS_CONTROL: r->mps_control = optarg; break;
		case OPT_PROC_ROOT: r->proc_root = optarg; break;
		case OPT_MIG: r->mig = optarg; break;
		case OPT_WHOLE_NODE: r->whole_node = true; break;
		case OPT_FORCE: r->force = true; break;
		case OPT_INVENTORY:
			if (kerf_parse_u64_opt("--inventory-interval", optarg, 1, 3600,
					       &r->inventory_s, &err) < 0)
				goto bad;
			break;
		case OPT_GPU:
			if (kerf_parse_u64_opt("--gpu", optarg, 0, 63, &r->gpu, &err) < 0)
				goto bad;
			r->has_gpu = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			kerf_opt_error(prog, c, argv);
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], usage);
		return 2;
	}
	if (!r->node || !r->node[0]) {
		fprintf(stderr, "%s: --node-name: required\n%s", prog, usage);
		return 2;
	}
	if (verify && r->has_gpu + !!r->mig + r->whole_node != 1) {
		fprintf(stderr, "%s: give exactly one of --gpu, --mig, --node\n%s", prog, usage);
		return 2;
	}
	return -1;
bad:
	fprintf(stderr, "%s: %s\n%s", prog, err.msg, usage);
	return 2;
}

int kerf_cmd_agent_run(int argc, char **argv)
{
	const char *prog = "kerf agent run";
	struct run_args r = { .metrics = "127.0.0.1:9400", .inventory_s = 30 };
	struct kerf_err err = { 0 }, nerr = { 0 };
	struct kerf_agent *a = NULL;
	struct kerf_nvml nv;
	struct conn c = { 0 };
	int rc = parse(prog, run_usage, false, argc, argv, &r);

	if (rc >= 0)
		return rc;
	if (connect_api(prog, r.kubeconfig, r.context, &c))
		return 1;
	memset(&nv, 0, sizeof(nv));
	if (kerf_nvml_open(&nv, r.nvml, &nerr) < 0)
		fprintf(stderr, "%s: %s: GPUs Unknown, 0 advertised\n", prog, nerr.msg);
	struct kerf_agent_opts o = {
		.node_name = r.node, .ops = &c.ops, .nv = &nv,
		.nvml_error = nerr.msg[0] ? nerr.msg : NULL, .nvlink_domain = r.domain,
		.metrics_addr = r.metrics[0] ? r.metrics : NULL, .dp_dir = r.dp,
		.health_addr = r.health && r.health[0] ? r.health : NULL,
		.no_drain = r.no_drain, .no_mig = r.no_mig,
		.mps_root = r.mps_root && r.mps_root[0] ? r.mps_root : NULL,
		.mps_control = r.mps_control, .proc_root = r.proc_root, .inventory_ms = (int)r.inventory_s * 1000,
		.seed = (uint64_t)time(NULL),
	};
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	rc = 1;
	if (kerf_agent_new(&o, &a, &err) < 0 || kerf_agent_start(a, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	fprintf(stderr, "%s: node %s, %s\n", prog, r.node,
		nv.initialised ? "NVML loaded" : "no NVML");
	while (!stop)
		kerf_agent_step(a, 50);
	rc = 0;
out:
	kerf_agent_free(a);
	kerf_nvml_close(&nv);
	disconnect_api(&c);
	return rc;
}

/* --- verify -------------------------------------------------------------- */

struct sync_req {
	bool done;
	long status;
	char msg[KERF_KUBE_MSG_MAX];
	json_t *body;
};

static void sync_done(void *arg, const struct kerf_kube_response *resp)
{
	struct sync_req *s = arg;

	s->done = true;
	s->status = resp->http_status;
	snprintf(s->msg, sizeof(s->msg), "%s", resp->msg);
	s->body = json_loadb(resp->body, resp->body_len, 0, NULL);
}

static long call(struct conn *c, const char *method, const char *path, const char *ctype,
		 const json_t *body, struct sync_req *s)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct kerf_kube_request req = { .method = method, .path = path, .content_type = ctype,
					 .body = text, .body_len = text ? strlen(text) : 0 };
	uint64_t id;

	memset(s, 0, sizeof(*s));
	if (c->ops.request(c->ops.ctx, &req, sync_done, s, &id) < 0) {
		free(text);
		snprintf(s->msg, sizeof(s->msg), "cannot start the request");
		return 0;
	}
	free(text);
	while (!s->done)
		c->ops.poll(c->ops.ctx, 100);
	return s->status;
}

/* The checks a GPU passes before it returns to service. */
static int check_gpu(const char *prog, const struct run_args *r, int gpu, const char *mig)
{
	struct kerf_gpu_inventory inv;
	struct kerf_err err = { 0 };
	struct kerf_nvml nv;
	int bad = 0;

	memset(&nv, 0, sizeof(nv));
	memset(&inv, 0, sizeof(inv));
	if (kerf_nvml_open(&nv, r->nvml, &err) < 0 || kerf_gpu_inventory_read(&inv, &nv, &err) < 0) {
		fprintf(stderr, "%s: cannot check: %s\n", prog, err.msg);
		kerf_gpu_inventory_release(&inv);
		kerf_nvml_close(&nv);
		return -1;
	}
	for (uint32_t i = 0; i < inv.nr_gpus; i++) {
		const struct kerf_gpu *g = &inv.gpus[i];
		bool mine = gpu < 0 || (int)g->index == gpu;
		bool found = !mig;

		if (!mine)
			continue;
		if (g->lost) {
			fprintf(stderr, "%s: GPU %u: lost (NVML_ERROR_GPU_IS_LOST)\n", prog, g->index);
			bad++;
		}
		if (g->nr_errors) {
			fprintf(stderr, "%s: GPU %u: %s: %s\n", prog, g->index, g->errors[0].field,
				kerf_nvml_return_name(g->errors[0].nvml_rc));
			bad++;
		}
		for (uint32_t k = 0; mig && k < g->nr_gis; k++) {
			char name[48];

			snprintf(name, sizeof(name), "%s@%u", g->gis[k].profile, g->gis[k].start);
			found |= !strcmp(name, mig);
		}
		if (!found) {
			fprintf(stderr, "%s: GPU %u: no MIG instance %s\n", prog, g->index, mig);
			bad++;
		}
		printf("GPU %u %s: %s\n", g->index, g->uuid, bad ? "FAILED" : "ok");
	}
	if (gpu >= 0 && (uint32_t)gpu >= inv.nr_gpus) {
		fprintf(stderr, "%s: GPU %d: not found (%u GPUs)\n", prog, gpu, inv.nr_gpus);
		bad++;
	}
	kerf_gpu_inventory_release(&inv);
	kerf_nvml_close(&nv);
	return bad ? -1 : 0;
}

static json_t *verified_patch(const json_t *node, const struct run_args *r)
{
	struct kerf_agent_marks m;
	struct kerf_err err = { 0 };
	json_t *ann, *patch;

	if (kerf_agent_marks_from_node(node, &m, &err) < 0 && !r->force)
		return NULL;
	if (r->has_gpu) {
		m.gpus_down &= ~(1ull << r->gpu);
		m.gpu[r->gpu].reason[0] = '\0';
		for (uint32_t i = 0; i < m.nr_mig;)   /* its instances come back with it */
			if (m.mig[i].gpu == r->gpu)
				m.mig[i] = m.mig[--m.nr_mig];
			else
				i++;
	}
	for (uint32_t i = 0; r->mig && i < m.nr_mig; i++) {
		char name[48];

		snprintf(name, sizeof(name), "%u:%s@%u", m.mig[i].gpu, m.mig[i].profile,
			 m.mig[i].start);
		if (!strcmp(name, r->mig)) {
			m.mig[i] = m.mig[--m.nr_mig];
			break;
		}
	}
	if (r->whole_node)
		m.node_failed = false;
	if (!(ann = kerf_agent_marks_annotations(&m)))
		return NULL;
	patch = json_pack("{s:{s:o, s:O}}", "metadata", "annotations", ann, "resourceVersion",
			  json_object_get(json_object_get(node, "metadata"), "resourceVersion"));
	if (patch && r->whole_node) {
		const json_t *spec = json_object_get(node, "spec"), *t;
		json_t *taints = json_array(), *sp = json_object();
		size_t i;

		json_array_foreach(json_object_get(spec, "taints"), i, t) {
			const char *key = json_string_value(json_object_get(t, "key"));

			if (!key || strcmp(key, KERF_TAINT_GPU_FAILED))
				json_array_append_new(taints, json_deep_copy(t));
		}
		json_object_set_new(sp, "taints", taints);
		json_object_set_new(patch, "spec", sp);
		json_t *pa = json_object_get(json_object_get(patch, "metadata"), "annotations");
		json_object_set_new(pa, KERF_ANN_REMEDIATION, json_null());
	}
	return patch;
}

int kerf_cmd_agent_verify(int argc, char **argv)
{
	const char *prog = "kerf agent verify";
	struct run_args r = { 0 };
	struct conn c = { 0 };
	struct sync_req s;
	char path[512];
	int rc = parse(prog, verify_usage, true, argc, argv, &r);
	int gpu = r.has_gpu ? (int)r.gpu : -1;

	if (rc >= 0)
		return rc;
	if (r.mig) {
		struct kerf_agent_marks m;
		struct kerf_err err = { 0 };

		if (kerf_agent_marks_parse(NULL, r.mig, &m, &err) < 0) {
			fprintf(stderr, "%s: --mig: %s\n", prog, err.msg);
			return 2;
		}
		gpu = m.mig[0].gpu;
	}
	/* the check: the GPU answers, is not lost, reports no error; a node
	   check covers every GPU */
	char inst[48] = "";
	if (r.mig)
		snprintf(inst, sizeof(inst), "%s", strchr(r.mig, ':') + 1);
	if (check_gpu(prog, &r, gpu, r.mig ? inst : NULL) < 0 && !r.force) {
		fprintf(stderr, "%s: the check failed: the mark stays\n", prog);
		return 3;
	}
	if (connect_api(prog, r.kubeconfig, r.context, &c))
		return 1;
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", r.node);
	rc = 1;
	for (int attempt = 0; attempt < 5; attempt++) {
		if (call(&c, "GET", path, NULL, NULL, &s) != 200) {
			fprintf(stderr, "%s: GET node %s: %s\n", prog, r.node, s.msg);
			json_decref(s.body);
			break;
		}
		json_t *patch = verified_patch(s.body, &r);
		json_decref(s.body);
		if (!patch) {
			fprintf(stderr, "%s: node %s: its marks do not read (--force to clear)\n",
				prog, r.node);
			break;
		}
		long st = call(&c, "PATCH", path, "application/merge-patch+json", patch, &s);
		json_decref(patch);
		json_decref(s.body);
		if (st == 409)
			continue;   /* the Node changed meanwhile: read it again */
		if (st / 100 != 2) {
			fprintf(stderr, "%s: PATCH node %s: %s\n", prog, r.node, s.msg);
			break;
		}
		printf("node %s: %s back in service\n", r.node,
		       r.whole_node ? "node" : r.mig ? r.mig : "GPU");
		rc = 0;
		break;
	}
	disconnect_api(&c);
	return rc;
}
