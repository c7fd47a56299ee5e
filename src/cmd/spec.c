/*
 * spec: the registry of kerf's commands and options (see spec.h).  Data
 * first, then the lookups.
 */
#include "cmd/spec.h"

#include <string.h>

#include "cmd/admission_options.h"
#include "cmd/cmd.h"
#include "core/policy.h"

#define OUTPUT_FORMATS "table wide json yaml"

/* Shorthands for the option lines. */
#define FLAG(n, h) { (n), '\0', NULL, (h), KERF_VALUE_TEXT, NULL }
#define TEXT(n, a, h) { (n), '\0', (a), (h), KERF_VALUE_TEXT, NULL }
#define FILE_OPT(n, a, h) { (n), '\0', (a), (h), KERF_VALUE_FILE, NULL }
#define DIR_OPT(n, a, h) { (n), '\0', (a), (h), KERF_VALUE_DIR, NULL }
#define CHOICE(n, s, a, h, c) { (n), (s), (a), (h), KERF_VALUE_CHOICE, (c) }

#define REPORT_OPTS \
	FILE_OPT("report", "FILE", "also write a report with charts, FILE.html or FILE.md"), \
	{ "quiet", 'q', NULL, "no progress lines on stderr", KERF_VALUE_TEXT, NULL }
#define OVERRIDE_OPTS \
	{ "policy", '\0', "NAME", "the placement policy, over the scenario's", KERF_VALUE_POLICIES, NULL }, \
	TEXT("seed", "N", "the seed of every random draw, 0..2^62")

static const struct kerf_spec_opt sim_openb_opts[] = {
	FILE_OPT("nodes", "FILE", "the openb node list (openb_node_list_gpu_node.csv)"),
	FILE_OPT("pods", "FILE", "the openb pod list (openb_pod_list_*.csv)"),
	{ "policy", '\0', "NAME[,NAME]|all", "the placement policies to run (default: kerf)",
	  KERF_VALUE_POLICIES, NULL },
	TEXT("seeds", "A-B|A,B,...", "seeds, at most 1000, each once (default 42-51)"),
	TEXT("inflate", "X", "workload as a multiple of GPU capacity, 0.01..10 (default 1.3)"),
	FILE_OPT("curve", "FILE", "write the allocation curve as CSV"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml: one OpenbRun document", OUTPUT_FORMATS),
	FLAG("json", "the same as -o json"),
	TEXT("jobs", "N", "worker threads, 1..64 (default: online CPUs)"),
	TEXT("policy-options", "KEY=N,...", "settings of the policies chosen, checked before the run"),
	FLAG("defrag", "move best-effort pods to place pods that fit nowhere"),
	TEXT("defrag-moves-per-hour", "N", "the defrag budget in moves, 0..1000000 (default 60)"),
	TEXT("defrag-lost-per-hour", "X", "GPU-hours moves may lose per hour (default 8)"),
	TEXT("arrival-s", "S", "seconds between arrivals, for defrag (default 60)"),
	TEXT("checkpoint-s", "S", "pods checkpoint this often in seconds, for defrag (default 1800)"),
	REPORT_OPTS,
	{ 0 },
};

static const struct kerf_spec_opt sim_day_opts[] = {
	FLAG("print-scenario", "write the built-in day out as a scenario file"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	OVERRIDE_OPTS,
	REPORT_OPTS,
	{ 0 },
};

static const struct kerf_spec_opt sim_run_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FLAG("json", "the same as -o json"),
	FLAG("builtin", "the built-in day instead of FILE"),
	FLAG("print", "with --builtin: write that scenario out, run nothing"),
	OVERRIDE_OPTS,
	REPORT_OPTS,
	{ 0 },
};

static const struct kerf_spec_opt sim_snapshot_opts[] = {
	TEXT("at", "TIME|end", "the point of the run: seconds, 2h30m or end"),
	CHOICE("output", 'o', "FMT", "json (default) or yaml", "json yaml"),
	FILE_OPT("out", "FILE", "write the snapshot to FILE (default: stdout)"),
	{ 0 },
};

static const struct kerf_spec_opt top_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	TEXT("server", "URL", "kerf serve's endpoint (default $KERF_SERVER)"),
	FILE_OPT("snapshot", "FILE", "a simulator snapshot instead of kerf serve"),
	TEXT("interval", "S", "seconds between refreshes on a terminal, 0.1..3600"),
	FLAG("once", "print one sample and stop"),
	{ 0 },
};

static const struct kerf_spec_opt what_if_opts[] = {
	TEXT("server", "URL", "kerf serve's endpoint; its state is re-run"),
	FILE_OPT("scenario", "FILE", "a scenario file instead, run to --at first"),
	TEXT("at", "TIME", "with --scenario: the point of the run"),
	TEXT("horizon", "DURATION", "also run cycles this long with nothing arriving"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	TEXT("set-quota", "TENANT[:FLAVOR]=GPUS", "change a tenant's nominal quota"),
	TEXT("set-borrowing-limit", "TENANT[:FLAVOR]=GPUS", "change how much it may borrow"),
	TEXT("set-weight", "TENANT=W", "change its fair-share weight"),
	TEXT("set-budget", "TENANT=GPU_HOURS", "change its GPU-hour budget"),
	{ "policy", '\0', "NAME", "another placement policy", KERF_VALUE_POLICIES, NULL },
	{ 0 },
};

static const struct kerf_spec_opt sim_check_opts[] = {
	TEXT("runs", "N", "how many random scenarios (default 100)"),
	TEXT("seed", "S", "the first scenario's seed (default 1)"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml: one CheckRun document", OUTPUT_FORMATS),
	{ 0 },
};

static const struct kerf_spec_opt plan_mig_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FLAG("json", "the same as -o json"),
	{ 0 },
};

static const struct kerf_spec_opt sim_mig_opts[] = {
	TEXT("model", "M", "the GPU model (default H100-80GB; docs/mig.md)"),
	TEXT("nodes", "N", "nodes, 1..4096 (default 4)"),
	TEXT("gpus", "G", "GPUs per node (default 8)"),
	TEXT("hours", "H", "hours simulated, 1..8760 (default 24)"),
	TEXT("load", "PCT", "percent of the compute slices offered, 1..1000 (default 90)"),
	TEXT("seed", "S", "the demand's seed (default 1)"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FLAG("json", "the same as -o json"),
	{ 0 },
};

static const struct kerf_spec_opt sim_gpuspec_opts[] = {
	FILE_OPT("pods", "BASE", "the base pod list (openb_pod_list_default.csv)"),
	FILE_OPT("like", "REF", "a published gpuspec file to learn from"),
	TEXT("share", "PCT", "percent of GPU pods that name a model, 0..100"),
	TEXT("seed", "S", "the generator's seed (default 1)"),
	FILE_OPT("out", "FILE", "where to write the pod list (default: stdout)"),
	{ 0 },
};

static const struct kerf_spec_opt sim_replay_opts[] = {
	FILE_OPT("nodes", "FILE", "the openb node list"),
	FILE_OPT("pods", "FILE", "the openb pod list, with creation and deletion times"),
	TEXT("days", "N", "the last N days of the trace, 1..365 (default 30)"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FLAG("json", "the same as -o json"),
	REPORT_OPTS,
	{ 0 },
};

static const struct kerf_spec_opt serve_opts[] = {
	FILE_OPT("kubeconfig", "FILE", "out of a cluster (default: the service account)"),
	TEXT("context", "NAME", "a context of the kubeconfig (default: current)"),
	TEXT("scheduler-name", "NAME", "pods with this schedulerName are kerf's (kerf)"),
	{ "policy", '\0', "NAME", "the placement policy (kerf)", KERF_VALUE_POLICY, NULL },
	TEXT("qps", "N", "client-side rate limit, requests per second (50)"),
	TEXT("burst", "N", "client-side burst (100)"),
	TEXT("max-in-flight", "N", "API requests on the wire at once, watches apart (64)"),
	TEXT("metrics-addr", "ADDR", "/metrics, /healthz, /readyz, /api/v1/ (:8080; '' off)"),
	FLAG("leader-elect", "elect a leader on a Lease (for several replicas)"),
	TEXT("lease-namespace", "NS", "the Lease's namespace (kerf-system)"),
	TEXT("lease-name", "NAME", "the Lease's name (kerf-scheduler)"),
	TEXT("lease-duration", "D", "how long a lease holds (15s)"),
	TEXT("renew-deadline", "D", "the leader gives up if not renewed by then (10s)"),
	TEXT("retry-period", "D", "between tries to acquire or renew (2s)"),
	TEXT("identity", "ID", "this replica's name (the host name)"),
	TEXT("resync", "D", "a cycle at least this often (1s)"),
	TEXT("seed", "N", "of the policy and jitter (1)"),
	TEXT("webhook-addr", "ADDR", "serve the admission webhook here ('' off, the default)"),
	FILE_OPT("webhook-cert", "FILE", "the webhook's serving certificate (PEM)"),
	FILE_OPT("webhook-key", "FILE", "the webhook's private key (PEM)"),
	TEXT("webhook-threads", "N", "the webhook's worker threads (2)"),
	{ 0 },
};

/* kerf_admission_longopts: kerf serve's and kerf admission review's. */
static const struct kerf_spec_opt admission_opts[] = {
	TEXT("kerf-user", "USER", "kerf's identity, may write allocation annotations"),
	TEXT("label-user", "USER", "may set a namespace's kerf.io/tenant"),
	TEXT("label-group", "GROUP", "the same, by group (system:masters)"),
	TEXT("exclude-namespace", "NS", "a namespace never judged"),
	TEXT("gpu-runtime-class", "RC", "a runtime class that injects GPUs"),
	TEXT("allow-host-path", "PATH", "a hostPath prefix tenants may mount (none)"),
	TEXT("gpu-taint", "KEY:EFFECT", "GPU nodes' taint that GPU pods tolerate"),
	TEXT("nccl-ib-hca", "HCAS", "NCCL_IB_HCA for tenants with an RDMA class (none)"),
	TEXT("default-priority-class", "NAME", "for pods without one (the tenant's lowest)"),
	FLAG("interposer", "limits are enforced by an LD_PRELOAD interposer"),
	TEXT("gpu-device-class", "NAME", "a DRA device class that gives GPUs"),
	{ 0 },
};

static const struct kerf_spec_opt admission_review_opts[] = {
	FILE_OPT("objects", "FILE", "Namespaces, Tenants, PriorityClasses, GPUPools (YAML)"),
	CHOICE("webhook", '\0', "PATH", "only this webhook (default: by the object's kind)",
	       "/validate/pods /mutate/pods /validate/namespaces /validate/tenants /validate/resourceclaims"),
	TEXT("scheduler-name", "NAME", "kerf's scheduler name (kerf)"),
	{ 0 },
};

static const struct kerf_spec_opt cli_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	TEXT("server", "URL", "kerf serve's endpoint (default $KERF_SERVER)"),
	FILE_OPT("snapshot", "FILE", "a simulator snapshot (kerf sim snapshot) instead of kerf serve"),
	{ 0 },
};

static const struct kerf_spec_opt agent_inventory_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FILE_OPT("nvml-library", "PATH", "libnvidia-ml.so.1 to load"),
	{ 0 },
};

static const struct kerf_spec_opt agent_metrics_opts[] = {
	FILE_OPT("nvml-library", "PATH", "libnvidia-ml.so.1 to load"),
	TEXT("hostname", "NAME", "the node's name in the samples (the host name)"),
	DIR_OPT("proc-root", "DIR", "the host's /proc, for each GPU process's pod"),
	TEXT("gpm-interval-ms", "MS", "GPM sampling window, 0 (off) or 100..60000 (1000)"),
	{ 0 },
};

/* kerf_agent_run_longopts serves run and verify, each its part. */
static const struct kerf_spec_opt agent_run_opts[] = {
	TEXT("node-name", "NAME", "this node (in a pod: the downward API's spec.nodeName)"),
	FILE_OPT("kubeconfig", "FILE", "out of a cluster (default: the service account)"),
	TEXT("context", "NAME", "a context of the kubeconfig"),
	FILE_OPT("nvml-library", "PATH", "libnvidia-ml.so.1 to load"),
	TEXT("metrics-addr", "ADDR", "/metrics, /healthz, /readyz (127.0.0.1:9400; '' none)"),
	TEXT("health-addr", "ADDR", "/healthz and /readyz also on ADDR"),
	DIR_OPT("device-plugin-dir", "DIR", "serve the kubelet's device plugin API there"),
	TEXT("nvlink-domain", "NAME", "the label kerf.io/nvlink-domain"),
	TEXT("inventory-interval", "S", "re-read the GPUs every S seconds (30)"),
	FLAG("no-drain", "mark unhealthy GPUs but evict nothing"),
	FLAG("no-mig", "never create or destroy MIG instances"),
	DIR_OPT("mps-root", "DIR", "run MPS control daemons, their pipes and logs under DIR"),
	FILE_OPT("mps-control", "PATH", "nvidia-cuda-mps-control to run (default: from PATH)"),
	DIR_OPT("proc-root", "DIR", "the host's /proc, for each GPU process's pod"),
	{ 0 },
};

static const struct kerf_spec_opt agent_verify_opts[] = {
	TEXT("node-name", "NAME", "this node"),
	TEXT("gpu", "N", "verify GPU N"),
	TEXT("mig", "GPU:PROFILE@START", "verify one MIG instance"),
	FLAG("node", "verify every GPU of the node"),
	FILE_OPT("kubeconfig", "FILE", "out of a cluster (default: the service account)"),
	TEXT("context", "NAME", "a context of the kubeconfig"),
	FILE_OPT("nvml-library", "PATH", "libnvidia-ml.so.1 to load"),
	FLAG("force", "verify even while pods use the GPU"),
	{ 0 },
};

static const struct kerf_spec_opt agent_mig_opts[] = {
	TEXT("want", "PROFILE=N[,..]", "that many free instances per profile (the planner)"),
	TEXT("assigned", "GPU:PROFILE@START[,..]", "make these instances exist"),
	TEXT("in-use", "GPU:PROFILE@START[,..]", "instances pods use, never destroyed"),
	FLAG("dry-run", "apply: say what would be done, do nothing"),
	TEXT("gpu", "N", "enable, disable: the GPU, 0..63"),
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml", OUTPUT_FORMATS),
	FILE_OPT("nvml-library", "PATH", "libnvidia-ml.so.1 to load"),
	{ 0 },
};

static const struct kerf_spec_opt sim_placement_opts[] = {
	CHOICE("output", 'o', "FMT", "table (default), wide, json or yaml: one PlacementComparison document",
	       OUTPUT_FORMATS),
	{ 0 },
};

static const struct kerf_spec_opt no_opts[] = { { 0 } };

/*
 * Every command: parents before their subcommands.  An entry without run
 * is run by the nearest entry above it that has one.
 */
static const struct kerf_spec specs[] = {
	{ .path = "sim", .run = kerf_cmd_sim, .longopts = kerf_sim_day_longopts, .opts = sim_day_opts,
	  .summary = "the simulator: the built-in day, scenario files, the openb trace, MIG",
	  .synopsis = "[--policy NAME] [--seed N] [-o FMT] [--report FILE] [-q]" },
	{ .path = "sim placement", .run = kerf_cmd_sim_demo, .longopts = kerf_sim_demo_longopts,
	  .opts = sim_placement_opts,
	  .summary = "the placement demo: kerf against first-fit, best-fit and FGD",
	  .synopsis = "[-o table|wide|json|yaml]" },
	{ .path = "sim run", .run = kerf_cmd_sim_run, .longopts = kerf_sim_run_longopts,
	  .opts = sim_run_opts, .operand = KERF_VALUE_FILE,
	  .summary = "run a time-mode scenario file; exit 3 when a workload still waits",
	  .synopsis = "FILE|--builtin [--policy NAME] [--seed N] [-o FMT] [--report FILE] [-q]" },
	{ .path = "sim snapshot", .run = kerf_cmd_sim_snapshot, .longopts = kerf_sim_snapshot_longopts,
	  .opts = sim_snapshot_opts, .operand = KERF_VALUE_FILE,
	  .summary = "the cluster at a point of a scenario, as kerf get, explain and top read it",
	  .synopsis = "FILE --at TIME|end [-o json|yaml] [--out FILE]" },
	{ .path = "sim check", .run = kerf_cmd_sim_check, .longopts = kerf_sim_check_longopts,
	  .opts = sim_check_opts,
	  .summary = "random scenarios, every invariant checked after every event; exit 3 on a violation",
	  .synopsis = "[--runs N] [--seed S] [-o table|wide|json|yaml]" },
	{ .path = "sim openb", .run = kerf_cmd_sim_openb, .longopts = kerf_sim_openb_longopts,
	  .opts = sim_openb_opts,
	  .summary = "the openb trace placed by each policy, seed by seed",
	  .synopsis = "--nodes FILE --pods FILE [-o FMT] [options]" },
	{ .path = "sim openb-replay", .run = kerf_cmd_sim_replay,
	  .longopts = kerf_sim_replay_longopts, .opts = sim_replay_opts,
	  .summary = "the openb trace in time mode, tenants by qos",
	  .synopsis = "--nodes FILE --pods FILE [--days N] [-o FMT] [--report FILE] [-q]" },
	{ .path = "sim openb-gpuspec", .run = kerf_cmd_sim_gpuspec,
	  .longopts = kerf_sim_gpuspec_longopts, .opts = sim_gpuspec_opts,
	  .summary = "a gpuspecXX pod list for any share",
	  .synopsis = "--pods BASE --like REF --share PCT [--seed S] [--out FILE]" },
	{ .path = "sim mig", .run = kerf_cmd_sim_mig, .longopts = kerf_sim_mig_longopts,
	  .opts = sim_mig_opts,
	  .summary = "MIG demand: static layouts against dynamic planning",
	  .synopsis = "[--model M] [--nodes N] [--gpus G] [--hours H] [--load PCT] [--seed S] [-o FMT]" },
	{ .path = "plan-mig", .run = kerf_cmd_plan_mig, .longopts = kerf_plan_mig_longopts,
	  .opts = plan_mig_opts, .operand = KERF_VALUE_FILE,
	  .summary = "the MIG plan for a node description",
	  .synopsis = "FILE [-o FMT]" },
	{ .path = "serve", .run = kerf_cmd_serve, .longopts = kerf_serve_longopts,
	  .more_longopts = kerf_admission_longopts,
	  .nr_more_longopts = KERF_ADM_OPT_NR, .opts = serve_opts,
	  .more_opts = admission_opts,
	  .summary = "the controller, scheduler and admission webhook",
	  .synopsis = "[options]" },
	{ .path = "get", .run = kerf_cmd_get, .longopts = kerf_cli_longopts, .opts = cli_opts,
	  .operand = KERF_VALUE_CHOICE, .operand_choices = "tenants queue nodes gpus",
	  .summary = "tenants, queue, nodes, GPUs as kerf serve or a snapshot sees them",
	  .synopsis = "tenants|queue|nodes|gpus [-o table|wide|json|yaml] [--server URL|--snapshot FILE]" },
	{ .path = "explain", .run = kerf_cmd_explain, .longopts = kerf_cli_longopts,
	  .opts = cli_opts,
	  .summary = "why a pod waits, layer by layer",
	  .synopsis = "NAMESPACE/POD [-o table|wide|json|yaml] [--server URL|--snapshot FILE]" },
	{ .path = "top", .run = kerf_cmd_top, .longopts = kerf_top_longopts, .opts = top_opts,
	  .summary = "per-tenant GPU use, refreshed (kerf serve or a snapshot)",
	  .synopsis = "[--server URL|--snapshot FILE] [--interval S] [--once] [-o FMT]" },
	{ .path = "what-if", .run = kerf_cmd_what_if, .longopts = kerf_what_if_longopts,
	  .opts = what_if_opts,
	  .summary = "the state re-run with a changed quota, weight or policy",
	  .synopsis = "[--server URL|--scenario FILE --at TIME] CHANGE... [--horizon D] [-o FMT]" },
	{ .path = "admission", .run = kerf_cmd_admission, .opts = no_opts,
	  .summary = "the admission webhook's decisions on files",
	  .synopsis = "review ..." },
	{ .path = "admission review", .longopts = kerf_admission_review_longopts,
	  .more_longopts = kerf_admission_longopts,
	  .nr_more_longopts = KERF_ADM_OPT_NR, .opts = admission_review_opts,
	  .more_opts = admission_opts,
	  .operand = KERF_VALUE_FILE,
	  .summary = "AdmissionReview files through the webhook's own code, offline",
	  .synopsis = "FILE... --objects OBJECTS.yaml [options]" },
	{ .path = "agent", .run = kerf_cmd_agent, .opts = no_opts,
	  .summary = "the node agent: run, verify, inventory, metrics, mig",
	  .synopsis = "run|verify|inventory|metrics|mig ..." },
	{ .path = "agent run", .run = kerf_cmd_agent_run, .longopts = kerf_agent_run_longopts,
	  .opts = agent_run_opts,
	  .summary = "the node agent: GPU health, MIG, MPS, device plugin, metrics",
	  .synopsis = "--node-name NAME [options]" },
	{ .path = "agent verify", .run = kerf_cmd_agent_verify,
	  .longopts = kerf_agent_run_longopts, .opts = agent_verify_opts,
	  .summary = "check a GPU, a MIG instance or the node and report it",
	  .synopsis = "--node-name NAME (--gpu N | --mig GPU:PROFILE@START | --node) [options]" },
	{ .path = "agent inventory", .longopts = kerf_agent_inventory_longopts,
	  .opts = agent_inventory_opts,
	  .summary = "the node's GPUs as NVML reports them",
	  .synopsis = "[-o table|wide|json|yaml] [--nvml-library PATH]" },
	{ .path = "agent metrics", .run = kerf_cmd_agent_metrics,
	  .longopts = kerf_agent_metrics_longopts, .opts = agent_metrics_opts,
	  .summary = "one sample of the node's GPUs as Prometheus text",
	  .synopsis = "[--nvml-library PATH] [--hostname NAME] [--proc-root DIR] [--gpm-interval-ms MS]" },
	{ .path = "agent mig", .run = kerf_cmd_agent_mig, .longopts = kerf_agent_mig_longopts,
	  .opts = agent_mig_opts,
	  .operand = KERF_VALUE_CHOICE, .operand_choices = "plan apply enable disable",
	  .summary = "MIG actuation on this node's GPUs through NVML",
	  .synopsis = "plan|apply|enable|disable [options]" },
	{ .path = "completion", .run = kerf_cmd_completion,
	  .longopts = kerf_completion_longopts, .opts = no_opts,
	  .operand = KERF_VALUE_CHOICE, .operand_choices = "bash zsh spec",
	  .summary = "a shell completion script (bash, zsh) or the option list (spec)",
	  .synopsis = "bash|zsh|spec" },
	{ .path = "man", .run = kerf_cmd_man, .longopts = kerf_completion_longopts,
	  .opts = no_opts,
	  .summary = "the manual page kerf(1), as roff",
	  .synopsis = "" },
	{ .path = "help", .run = kerf_cmd_help, .opts = no_opts,
	  .operand = KERF_VALUE_COMMAND,
	  .summary = "the commands; 'help COMMAND [SUB]' for one",
	  .synopsis = "[COMMAND [SUB]]" },
	{ .path = "version", .run = kerf_cmd_version, .opts = no_opts,
	  .summary = "print the version (also -V, --version)",
	  .synopsis = "" },
};

const char *kerf_prog_name = "kerf";

const struct kerf_spec *kerf_spec_all(size_t *nr)
{
	*nr = sizeof(specs) / sizeof(specs[0]);
	return specs;
}

const struct kerf_spec *kerf_spec_find(const char *path)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strcmp(specs[i].path, path))
			return &specs[i];
	return NULL;
}

/* Whether entry s is path plus one more word, word. */
static int is_child(const struct kerf_spec *s, const char *path, size_t len,
		    const char *word)
{
	if (len)
		return !strncmp(s->path, path, len) && s->path[len] == ' ' &&
		       !strcmp(s->path + len + 1, word);
	return !strcmp(s->path, word);
}

const struct kerf_spec *kerf_spec_lookup(int argc, char *const *argv,
					 int *nr_words)
{
	const struct kerf_spec *found = NULL;
	size_t len = 0;
	int i;

	for (i = 1; i < argc; i++) {
		const struct kerf_spec *next = NULL;
		const char *path = found ? found->path : "";

		for (size_t j = 0; j < sizeof(specs) / sizeof(specs[0]); j++)
			if (is_child(&specs[j], path, len, argv[i])) {
				next = &specs[j];
				break;
			}
		if (!next)
			break;
		found = next;
		len = strlen(found->path);
	}
	*nr_words = i - 1;
	return found;
}

bool kerf_spec_has_children(const struct kerf_spec *s)
{
	size_t len = strlen(s->path);

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strncmp(specs[i].path, s->path, len) && specs[i].path[len] == ' ')
			return true;
	return false;
}

/* The options of the first table ({0}-ended). */
static size_t nr_own(const struct kerf_spec *s)
{
	size_t n = 0;

	while (s->longopts && s->longopts[n].name)
		n++;
	return n;
}

size_t kerf_spec_nr_longopts(const struct kerf_spec *s)
{
	return nr_own(s) + (s->more_longopts ? s->nr_more_longopts : 0);
}

const struct option *kerf_spec_longopt(const struct kerf_spec *s, size_t i)
{
	size_t own = nr_own(s);

	return i < own ? &s->longopts[i] : &s->more_longopts[i - own];
}

void kerf_spec_policy_words(FILE *out, bool all)
{
	for (size_t i = 0; i < kerf_policy_count(); i++)
		fprintf(out, "%s%s", i ? " " : "", kerf_policy_at(i)->name);
	if (all)
		fputs(" all", out);
}
