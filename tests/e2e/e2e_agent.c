/*
 * e2e_agent: kerf's node agent through the API server, on the fake NVML
 * (reliability N-01..N-06, N-12, N-14; docs/agent.md "The agent loop").
 *
 * The agent runs in this process, driven step by step like kerf serve in
 * e2e_serve, on a Node the suite creates (no kubelet: the suite binds the
 * pods itself, with kerf.io/assigned-gpus as kerf serve writes it).  Events
 * are appended to the fake's event file while the agent runs; what the
 * agent did is read back from the API, as a scheduler would see it.  Runs
 * unchanged against a real cluster (KERF_E2E_KUBECONFIG): only standard
 * calls, objects named kerf-e2e-*.
 *
 * usage: e2e_agent CERT_SCRIPT FAKE_NVML_LIBRARY NVML_SCRIPT KERF [MPS_CONTROL]
 * (MPS_CONTROL: a stand-in nvidia-cuda-mps-control, tests/mps; without it
 * the MPS part is left out)
 */
#include <signal.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "e2e_lib.h"
#ifdef KERF_E2E_DP
#include "e2e_agent_dp.h"
#endif

static const char *ns = "kerf-e2e-agent";
static const char *node = "kerf-e2e-agent-1";
static struct kerf_agent *agent, *agent2;
static void (*lib_step)(void);
static char events_path[600];
static const char *dp_dir;    /* the device plugin's, for the first node's agent */
static const char *mps_root, *mps_control;   /* MPS daemons, for that agent */
static char proc_root[600];   /* a /proc with one GPU process in on-gpu1's cgroup */

static void step(void)
{
	lib_step();
	if (agent)
		kerf_agent_step(agent, 0);
	if (agent2)
		kerf_agent_step(agent2, 0);
}

static void event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void event(const char *fmt, ...)
{
	FILE *f = fopen(events_path, "a");
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static json_t *get_node(const char *name)
{
	char path[256];
	json_t *n = NULL;

	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	if (e2e_api("GET", path, NULL, NULL, &n) != 200) {
		json_decref(n);
		return NULL;
	}
	return n;
}

static const char *md(const json_t *n, const char *map, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(n, "metadata"),
								  map), key));
}

/* The node's annotation (or label) key as a string, "" when absent. */
static void node_str(const char *name, const char *map, const char *key, char *out, size_t n)
{
	json_t *nd = get_node(name);
	const char *v = nd ? md(nd, map, key) : NULL;

	snprintf(out, n, "%s", v ? v : "");
	json_decref(nd);
}

static void condition(const char *name, char *status, size_t n, char *msg, size_t m)
{
	json_t *nd = get_node(name), *c;
	size_t i;

	snprintf(status, n, "%s", "");
	snprintf(msg, m, "%s", "");
	json_array_foreach(json_object_get(json_object_get(nd, "status"), "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, "kerf.io/GPUHealthy")) {
			snprintf(status, n, "%s", json_string_value(json_object_get(c, "status")));
			snprintf(msg, m, "%s", json_string_value(json_object_get(c, "message")));
		}
	}
	json_decref(nd);
}

struct want_str {
	const char *node, *map, *key, *want;  /* want NULL: absent or "" */
	bool contains;
};

#define WS(n, m, k, w) (&(struct want_str){ .node = (n), .map = (m), .key = (k), .want = (w) })
#define WSC(n, m, k, w) \
	(&(struct want_str){ .node = (n), .map = (m), .key = (k), .want = (w), .contains = true })

static bool str_is(void *arg)
{
	struct want_str *w = arg;
	char v[512];

	node_str(w->node, w->map, w->key, v, sizeof(v));
	if (!w->want)
		return !v[0];
	return w->contains ? strstr(v, w->want) != NULL : !strcmp(v, w->want);
}

struct want_cond {
	const char *node, *status;
};

static bool cond_is(void *arg)
{
	struct want_cond *w = arg;
	char st[32], msg[512];

	condition(w->node, st, sizeof(st), msg, sizeof(msg));
	return !strcmp(st, w->status);
}

static void mps_pod(const char *name, const char *gpu)
{
	e2e_post("/api/v1/namespaces/kerf-e2e-agent/pods",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"kerf.io/tenant\":\"team-e2e\"},"
		 "\"annotations\":{\"kerf.io/assigned-gpus\":\"%s\",\"kerf.io/assigned-fraction\":\"250m\","
		 "\"kerf.io/gpu-sharing\":\"mps\"}},"
		 "\"spec\":{\"nodeName\":\"%s\",\"securityContext\":{\"runAsUser\":%u,\"runAsGroup\":%u},"
		 "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}",
		 name, gpu, node, (unsigned)getuid(), (unsigned)getgid());
}

static void pod(const char *name, const char *gpus, const char *mig)
{
	char mig_ann[96] = "";

	if (mig)
		snprintf(mig_ann, sizeof(mig_ann), ",\"kerf.io/assigned-mig\":\"%s\"", mig);
	e2e_post("/api/v1/namespaces/kerf-e2e-agent/pods",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"kerf.io/tenant\":\"team-e2e\"},"
		 "\"annotations\":{\"kerf.io/assigned-gpus\":\"%s\"%s}},"
		 "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
		 "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
		 name, gpus, mig_ann, node);
}

/* 2: gone or being deleted; 1: annotated untrusted; 0: as it was. */
static int pod_fate(const char *name)
{
	char path[256];
	json_t *p = NULL;
	int fate = 0;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	long st = e2e_api("GET", path, NULL, NULL, &p);
	if (st == 404 || (p && json_object_get(json_object_get(p, "metadata"), "deletionTimestamp")))
		fate = 2;
	else if (p && md(p, "annotations", "kerf.io/results-untrusted"))
		fate = 1;
	json_decref(p);
	return fate;
}

static bool untrusted_or_gone(void *arg)
{
	return pod_fate(arg) == 2;
}

static char *metrics(struct kerf_agent *a)
{
	struct kerf_buf b;

	kerf_buf_init(&b, 0);
	if (kerf_agent_metrics(a, &b) < 0) {
		kerf_buf_release(&b);
		return NULL;
	}
	return kerf_buf_detach(&b, NULL);
}

static bool metric_has(struct kerf_agent *a, const char *line)
{
	char *m = metrics(a);
	bool has = m && strstr(m, line);

	free(m);
	return has;
}

static double metric(struct kerf_agent *a, const char *name)
{
	char *m = metrics(a), *at, key[128];
	double v = -1;

	snprintf(key, sizeof(key), "\n%s ", name);
	if (m && (at = strstr(m, key)))
		v = strtod(at + strlen(key), NULL);
	free(m);
	return v;
}

static void run_ms(int ms)
{
	int64_t end = e2e_wall_ms() + ms;

	while (e2e_wall_ms() < end)
		e2e_turn(20);
}

static bool ready(void *arg)
{
	return kerf_agent_ready(arg);
}

static struct kerf_agent *start_agent(const char *name, struct kerf_nvml *nv, const char *why)
{
	struct kerf_agent_opts o = {
		.node_name = name, .ops = &e2e_ops, .nv = nv, .nvml_error = why,
		.inventory_ms = 2000, .util_window_ms = 3000, .seed = 7, .dp_dir = dp_dir,
		.mps_root = mps_root, .mps_control = mps_control, .proc_root = proc_root,
	};
	struct kerf_err err = { 0 };
	struct kerf_agent *a = NULL;

	if (kerf_agent_new(&o, &a, &err) < 0 || kerf_agent_start(a, &err) < 0) {
		printf("# agent: %s\n", err.msg);
		kerf_agent_free(a);
		return NULL;
	}
	return a;
}

static int verify(const char *kerf, const char *lib, const char *script, const char *what)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "KERF_NVML_LIBRARY='%s' KERF_FAKE_NVML_SCRIPT='%s' '%s' agent verify "
		 "--node-name %s %s --kubeconfig '%s' >/dev/null 2>&1",
		 lib, script, kerf, node, what, e2e.kubeconfig);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int64_t timed(struct want_str *w, int64_t t0, int64_t limit_ms)
{
	return e2e_run_until(str_is, w, limit_ms) ? e2e_wall_ms() - t0 : -1;
}

/* The pid in the MPS daemon's pid file of GPU uuid, or 0. */
static long mps_pid(const char *uuid)
{
	char path[1024], *text;
	long pid;

	snprintf(path, sizeof(path), "%s/%s/%u/pipe/nvidia-cuda-mps-control.pid", mps_root, uuid,
		 (unsigned)getuid());
	text = e2e_slurp(path);
	pid = text ? strtol(text, NULL, 10) : 0;
	free(text);
	return pid;
}

/* How many times the daemon's log shows the thread limit set. */
static int limits_sent(const char *uuid)
{
	char path[1024], *text, *at;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/%u/pipe/fake.log", mps_root, uuid, (unsigned)getuid());
	text = e2e_slurp(path);
	for (at = text; at && (at = strstr(at, "cmd set_default_active_thread_percentage 25")); at++)
		n++;
	free(text);
	return n;
}

static bool mps_running(void *arg)
{
	char line[128];

	snprintf(line, sizeof(line), "kerf_agent_mps_daemon_running{gpu=\"2\",uid=\"%u\"} 1",
		 (unsigned)getuid());
	return (!arg || mps_pid(arg) > 1) && metric_has(agent, line);
}

static bool process_gone(void *arg)
{
	return kill((pid_t)*(long *)arg, 0) != 0;
}

/* N-07: the MPS daemon killed with SIGKILL. */
static void mps_checks(void)
{
	const char *uuid = "GPU-a2222222-0000-0000-0000-000000000000";
	long pid;
	int64_t t0, dt;

	mps_pod("share-a", "2");
	e2e_check(e2e_run_until(mps_running, (void *)uuid, 10000) && limits_sent(uuid) == 1,
		  "MPS: a daemon for the pod's GPU and UID, limited from 250m (25 % of the threads)");
	pid = mps_pid(uuid);
	t0 = e2e_wall_ms();
	kill((pid_t)pid, SIGKILL);
	dt = e2e_run_until(str_is, WS(node, "annotations", "kerf.io/mps-failed-gpus", "2"), 10000)
		     ? e2e_wall_ms() - t0 : -1;
	printf("# N-07: kill -9 of the MPS daemon to kerf.io/mps-failed-gpus on the Node: %" PRId64
	       " ms\n", dt);
	e2e_check(dt >= 0 && dt <= 5000, "N-07: the dead daemon seen and its GPU's MPS slices "
		  "marked failed on the Node within 5 s");
	e2e_check(e2e_run_until(str_is, WS(node, "annotations", "kerf.io/mps-failed-gpus", NULL),
				10000) && mps_running((void *)uuid) && mps_pid(uuid) != pid &&
		  limits_sent(uuid) == 2,
		  "N-07: the daemon restarted with the same limits, the mark gone");
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-agent/pods/share-a?gracePeriodSeconds=0",
		NULL, NULL, NULL);
	pid = mps_pid(uuid);
	e2e_check(pid > 1 && e2e_run_until(process_gone, &pid, 15000),
		  "MPS: the pod gone, its daemon stopped");
}

#ifdef KERF_E2E_DP
static void tick(void *arg)
{
	(void)arg;
	e2e_turn(5);
}

/* The device plugin in the loop: Allocate as the kubelet calls it. */
static void allocate_checks(void)
{
	char sock[600], msg[512];
	int rc;

	snprintf(sock, sizeof(sock), "%s/kerf-gpu.sock", dp_dir);
	rc = e2e_agent_allocate(sock, "GPU-a1111111-0000-0000-0000-000000000000", tick, msg,
				sizeof(msg));
	e2e_check(rc == 0, "device plugin: Allocate of GPU 1, what kerf assigned on-gpu1: OK");
	rc = e2e_agent_allocate(sock, "GPU-a3333333-0000-0000-0000-000000000000", tick, msg,
				sizeof(msg));
	printf("# refused: %s\n", msg);
	e2e_check(rc > 0, "device plugin: Allocate of all of GPU 3 (only MIG pods were given parts of it): refused");
	rc = e2e_agent_allocate(sock, "GPU-ffffffff-0000-0000-0000-000000000000", tick, msg,
				sizeof(msg));
	e2e_check(rc > 0, "device plugin: Allocate of a device it does not serve: refused");
}
#endif

int main(int argc, char **argv)
{
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	char v[512], st[32], msg[512];
	int64_t t0, dt;
	int rc;

	if (argc < 5) {
		fprintf(stderr, "usage: e2e_agent CERT_SCRIPT FAKE_NVML NVML_SCRIPT KERF\n");
		return 2;
	}
	rc = e2e_setup(argv[1], "e2e_agent");
	if (rc != 0)
		return rc < 0 ? 1 : 0;
	snprintf(events_path, sizeof(events_path), "%s/nvml-events", e2e.dir[0] ? e2e.dir : "/tmp");
	if (!e2e.dir[0])
		snprintf(events_path, sizeof(events_path), "/tmp/kerf-e2e-agent-events.%d",
			 (int)getpid());
	fclose(fopen(events_path, "w"));
	setenv("KERF_FAKE_NVML_SCRIPT", argv[3], 1);
	setenv("KERF_FAKE_NVML_EVENTS", events_path, 1);
	lib_step = e2e_step;
	e2e_step = step;
	char mps_tmp[] = "/tmp/kerf-e2e-mps.XXXXXX", proc_tmp[] = "/tmp/kerf-e2e-proc.XXXXXX";
	if (mkdtemp(proc_tmp))
		snprintf(proc_root, sizeof(proc_root), "%s", proc_tmp);
	if (argc > 5 && mkdtemp(mps_tmp)) {
		mps_root = mps_tmp;
		mps_control = argv[5];
	}
#ifdef KERF_E2E_DP
	char dp_tmp[] = "/tmp/kerf-e2e-dp.XXXXXX";
	dp_dir = mkdtemp(dp_tmp);
#endif
	memset(&nv, 0, sizeof(nv));
	e2e_check(kerf_nvml_open(&nv, argv[2], &err) == 0, "the fake NVML loads");

	e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		 "\"metadata\":{\"name\":\"%s\"}}", ns);
	e2e_node(node, 4, NULL);
	e2e_node("kerf-e2e-agent-2", 4, NULL);
	pod("on-gpu0", "0", NULL);
	pod("on-gpu1", "1", NULL);
	pod("on-gpu2", "2", NULL);
	pod("mig-a", "3", "3g.40gb@0");
	pod("mig-b", "3", "3g.40gb@4");
	pod("mig-new", "4", "3g.40gb@4");   /* an instance the agent must make */

	/* the fake's GPU 1 runs pid 424242: put it in on-gpu1's cgroup */
	{
		char path[800], cmd[900];
		json_t *p = NULL;
		const char *uid = NULL;

		e2e_api("GET", "/api/v1/namespaces/kerf-e2e-agent/pods/on-gpu1", NULL, NULL, &p);
		uid = json_string_value(json_object_get(json_object_get(p, "metadata"), "uid"));
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/424242'", proc_root);
		if (uid && system(cmd) == 0) {
			snprintf(path, sizeof(path), "%s/424242/cgroup", proc_root);
			FILE *f = fopen(path, "w");
			if (f) {
				fprintf(f, "0::/kubepods/besteffort/pod%s/0123abcd\n", uid);
				fclose(f);
			}
		}
		json_decref(p);
	}

	/* publication: what the scheduler reads, written by the agent */
	agent = start_agent(node, &nv, NULL);
	e2e_check(agent != NULL, "the agent starts");
	if (!agent)
		goto out;
	e2e_check(e2e_run_until(ready, agent, 10000), "the agent is ready (Node and pods read)");
	e2e_check(e2e_run_until(str_is, WS(node, "labels", "nvidia.com/gpu.count", "5"),
				5000) &&
		  str_is(WS(node, "labels", "kerf.io/mig-gpus", "2")) &&
		  str_is(WS(node, "labels", "kerf.io/gpu-model", "H100-80GB")),
		  "the Node carries the GPU count, model and MIG GPUs");
	e2e_check(e2e_run_until(str_is, WS(node, "annotations", "kerf.io/mig-layout",
					   "3:3g.40gb@0,3g.40gb@4;4:3g.40gb@4"), 5000) &&
		  str_is(WS(node, "annotations", "kerf.io/mig-actuation", "ok: 2 steps")),
		  "MIG: the instance a pod was assigned is made (GPU and compute instance), "
		  "the layout on the Node");
	e2e_check(e2e_run_until(cond_is, &(struct want_cond){ .node = node, .status = "True" }, 5000),
		  "condition kerf.io/GPUHealthy True");
	e2e_check(e2e_run_until(str_is, WS(node, "annotations", "kerf.io/gpu-utilization",
					   "0:40,1:10,2:0"), 5000),
		  "the GPUs' utilisation on the Node for idle reclamation (none for the MIG GPU)");
	node_str(node, "annotations", "kerf.io/gpu-utilization", v, sizeof(v));
	printf("# kerf.io/gpu-utilization: %s\n", v);
#ifdef KERF_E2E_DP
	allocate_checks();
#endif
	if (mps_root)
		mps_checks();

	/* N-03: application Xids: counted against the pod, never a cordon */
	event("{\"device\": 1, \"type\": \"xid\", \"xid\": 13}");
	event("{\"device\": 1, \"type\": \"xid\", \"xid\": 31}");
	event("{\"device\": 1, \"type\": \"xid\", \"xid\": 43}");
	run_ms(2500);
	node_str(node, "annotations", "kerf.io/unhealthy-gpus", v, sizeof(v));
	e2e_check(!v[0] && pod_fate("on-gpu1") == 0,
		  "N-03: Xid 13/31/43: no GPU out of service, the pod untouched");
	e2e_check(metric_has(agent, "kerf_agent_pod_gpu_errors_total{namespace=\"kerf-e2e-agent\","
				    "pod=\"on-gpu1\",tenant=\"team-e2e\"} 3"),
		  "N-03: the pod's error counter is 3");
	e2e_check(metric_has(agent, "pod=\"on-gpu1\",namespace=\"kerf-e2e-agent\",tenant=\"team-e2e\"} "
				    "104857600") &&
		  metric_has(agent, "kerf_tenant_gpu_memory_used_bytes{tenant=\"team-e2e\"} 104857600"),
		  "/metrics: the GPU memory of on-gpu1's process, by pod and by tenant");

	/* N-02: Xid 48 on GPU 0: out of service within 10 s, drained, untrusted */
	t0 = e2e_wall_ms();
	event("{\"device\": 0, \"type\": \"xid\", \"xid\": 48}");
	dt = timed(WS(node, "annotations", "kerf.io/unhealthy-gpus", "0"), t0, 10000);
	printf("# N-02: Xid 48 to the mark in the API: %" PRId64 " ms\n", dt);
	e2e_check(dt >= 0 && dt <= 10000, "N-02: GPU 0 out of service in the API within 10 s");
	e2e_check(e2e_run_until(untrusted_or_gone, "on-gpu0", 5000),
		  "N-02: the pod on GPU 0 is evicted");
	e2e_check(pod_fate("on-gpu1") == 0 && pod_fate("on-gpu2") == 0,
		  "N-02: pods on other GPUs untouched");
	condition(node, st, sizeof(st), msg, sizeof(msg));
	e2e_check(!strcmp(st, "False") && strstr(msg, "GPUs [0]"),
		  "N-02: condition kerf.io/GPUHealthy False, naming GPU 0");

	/* N-06: an event naming one MIG instance: only it goes */
	t0 = e2e_wall_ms();
	event("{\"device\": 3, \"type\": \"xid\", \"xid\": 48, \"gi\": 2, \"ci\": 0}");
	dt = timed(WS(node, "annotations", "kerf.io/unhealthy-mig", "3:3g.40gb@4"),
		   t0, 10000);
	printf("# N-06: instance event to the mark: %" PRId64 " ms\n", dt);
	node_str(node, "annotations", "kerf.io/unhealthy-gpus", v, sizeof(v));
	e2e_check(dt >= 0 && !strcmp(v, "0"),
		  "N-06: only MIG instance 3:3g.40gb@4 out of service, GPU 3 stays in");
	e2e_check(e2e_run_until(untrusted_or_gone, "mig-b", 5000) && pod_fate("mig-a") == 0,
		  "N-06: the instance's pod evicted, its sibling untouched");

	/* N-04: Xid 79: cordon, remediation asked, the pod left to end */
	t0 = e2e_wall_ms();
	event("{\"device\": 2, \"type\": \"xid\", \"xid\": 79}");
	dt = timed(WSC(node, "annotations", "kerf.io/remediation-requested", "reboot"), t0, 30000);
	printf("# N-04: Xid 79 to the cordon: %" PRId64 " ms\n", dt);
	{
		json_t *nd = get_node(node);
		const json_t *spec = json_object_get(nd, "spec"), *t;
		bool tainted = false;
		size_t i;

		json_array_foreach(json_object_get(spec, "taints"), i, t)
			tainted |= !strcmp(json_string_value(json_object_get(t, "key")) ?
					   json_string_value(json_object_get(t, "key")) : "",
					   "kerf.io/gpu-failed");
		e2e_check(dt >= 0 && tainted, "N-04: node cordoned by the taint "
			  "kerf.io/gpu-failed:NoSchedule, remediation asked");
		json_decref(nd);
	}
	run_ms(1000);
	e2e_check(pod_fate("on-gpu2") == 0, "N-04: the pod on the lost GPU is not deleted (its "
					    "allocation goes only when it ends)");

	/* N-12: a storm of 1,000 events in one second; the one that counts is kept */
	{
		FILE *f = fopen(events_path, "a");

		for (int i = 0; f && i < 999; i++)
			fprintf(f, "{\"device\": 1, \"type\": \"xid\", \"xid\": 13}\n");
		if (f) {
			fprintf(f, "{\"device\": 1, \"type\": \"dbe\"}\n");
			fclose(f);
		}
		t0 = e2e_wall_ms();
		dt = timed(WS(node, "annotations", "kerf.io/unhealthy-gpus", "0,1,2"),
			   t0, 20000);
		printf("# N-12: 1,000 events, the double-bit ECC at the end marked in %" PRId64 " ms\n",
		       dt);
		e2e_check(dt >= 0, "N-12: 999 application Xids then a double-bit ECC: GPU 1 marked");
	}

	/* N-05: waiting for events fails: Unknown, no busy loop, then back */
	{
		double before = metric(agent, "kerf_agent_nvml_wait_errors_total"), after;

		event("{\"failWait\": \"UNKNOWN\"}");
		e2e_check(e2e_run_until(cond_is, &(struct want_cond){ node, "Unknown" }, 10000),
			  "N-05: the event wait fails: condition kerf.io/GPUHealthy Unknown");
		run_ms(3000);
		after = metric(agent, "kerf_agent_nvml_wait_errors_total");
		printf("# N-05: failed waits in about 4 s: %.0f\n", after - before);
		e2e_check(after - before >= 1 && after - before <= 4,
			  "N-05: waits back off (at most 4 failed waits in 4 s)");
		e2e_check(metric(agent, "kerf_agent_health_known") == 0,
			  "N-05: /metrics says health is not known");
		event("{\"failWait\": 0}");
		e2e_check(e2e_run_until(cond_is, &(struct want_cond){ node, "False" }, 20000),
			  "N-05: waits work again: the condition shows the marks again");
	}

	/* GPM (agent.json scripts GPU 0's): the rates between two scrapes */
	{
		char *m, *at;

		metric_has(agent, "DCGM_FI_PROF_");
		run_ms(200);
		m = metrics(agent);
		at = m ? strstr(m, "\nDCGM_FI_PROF_SM_OCCUPANCY{gpu=\"0\",uuid=\"GPU-a0000000-") : NULL;
		at = at ? strchr(at, '}') : NULL;
		e2e_check(at && !strncmp(at, "} 0.375\n", 8),
			  "GPM: GPU 0's SM occupancy in /metrics (0.375, the fake's 37.5 %)");
		e2e_check(m && strstr(m, "\nDCGM_FI_PROF_NVLINK_RX_BYTES{gpu=\"0\",") &&
				  !strstr(m, "DCGM_FI_PROF_SM_ACTIVE{gpu=\"1\","),
			  "GPM: NVLink bytes/s for GPU 0; GPU 1 (no GPM) has none");
		free(m);
	}

	/* the agent's /metrics as Prometheus reads it (promtool, when installed) */
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		char *m = metrics(agent), path[700], cmd[900];
		FILE *f;

		snprintf(path, sizeof(path), "%s.metrics", events_path);
		if (m && (f = fopen(path, "w"))) {
			fputs(m, f);
			fclose(f);
		}
		free(m);
		snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' >&2", path);
		e2e_check(system(cmd) == 0, "promtool check metrics accepts the agent's /metrics");
		unlink(path);
	}
	printf("# event to its mark in the API, the longest of this agent: %.3f s\n",
	       metric(agent, "kerf_agent_health_report_max_seconds"));
	e2e_check(metric(agent, "kerf_agent_health_report_max_seconds") > 0 &&
		  metric(agent, "kerf_agent_health_report_max_seconds") <= 10,
		  "every mark reached the API within 10 s of its event (the agent's own measure)");

	/* N-14: an agent restart forgets nothing */
	kerf_agent_free(agent);
	agent = start_agent(node, &nv, NULL);
	e2e_check(agent && e2e_run_until(ready, agent, 10000), "the agent restarts");
	run_ms(1500);
	node_str(node, "annotations", "kerf.io/unhealthy-gpus", v, sizeof(v));
	e2e_check(!strcmp(v, "0,1,2") && agent &&
		  metric_has(agent, "kerf_agent_gpu_in_service{gpu=\"0\",uuid=\"GPU-a0000000-0000-0000-0000-000000000000\"} 0"),
		  "N-14: after a restart the marks hold (API and the agent's view)");

	/* N-14: only an explicit verification returns a GPU */
	e2e_check(verify(argv[4], argv[2], argv[3], "--gpu 0") == 0,
		  "kerf agent verify --gpu 0 checks the GPU and clears its mark");
	run_ms(2000);
	node_str(node, "annotations", "kerf.io/unhealthy-gpus", v, sizeof(v));
	e2e_check(!strcmp(v, "1,2") &&
		  metric_has(agent, "kerf_agent_gpu_in_service{gpu=\"0\",uuid=\"GPU-a0000000-0000-0000-0000-000000000000\"} 1"),
		  "N-14: GPU 0 back in service, the agent follows, the others stay out");
	e2e_check(verify(argv[4], argv[2], argv[3], "--node") == 0 &&
		  e2e_run_until(str_is, WS(node, "annotations", "kerf.io/remediation-requested", NULL),
				5000),
		  "kerf agent verify --node lifts the node mark");
	{
		json_t *nd = get_node(node), *t;
		bool tainted = false;
		size_t i;

		json_array_foreach(json_object_get(json_object_get(nd, "spec"), "taints"), i, t)
			tainted |= json_string_value(json_object_get(t, "key")) &&
				   !strcmp(json_string_value(json_object_get(t, "key")),
					   "kerf.io/gpu-failed");
		e2e_check(nd && !tainted, "the node takes pods again (taint kerf.io/gpu-failed gone)");
		json_decref(nd);
	}

	/* N-01: no NVML: Unknown, no GPU advertised */
	{
		struct kerf_nvml none;

		memset(&none, 0, sizeof(none));
		dp_dir = NULL;
		mps_root = NULL;
		agent2 = start_agent("kerf-e2e-agent-2", &none,
				     "libnvidia-ml.so.1: cannot open shared object file");
		e2e_check(agent2 && e2e_run_until(cond_is, &(struct want_cond){ "kerf-e2e-agent-2",
										"Unknown" }, 10000),
			  "N-01: NVML missing: condition kerf.io/GPUHealthy Unknown");
		node_str("kerf-e2e-agent-2", "labels", "nvidia.com/gpu.count", v, sizeof(v));
		e2e_check(!v[0] && agent2 && metric(agent2, "kerf_agent_health_known") == 0,
			  "N-01: no GPU count written, health not known");
		kerf_agent_free(agent2);
		agent2 = NULL;
	}
out:
	kerf_agent_free(agent);
	agent = NULL;
	kerf_nvml_close(&nv);
	unlink(events_path);
	if (strcmp(mps_tmp, "/tmp/kerf-e2e-mps.XXXXXX") ||
	    strcmp(proc_tmp, "/tmp/kerf-e2e-proc.XXXXXX")) {
		char rmm[256];

		snprintf(rmm, sizeof(rmm), "rm -rf '%s' '%s'", mps_tmp, proc_tmp);
		if (system(rmm) != 0)
			printf("# could not remove %s\n", mps_tmp);
	}
#ifdef KERF_E2E_DP
	char rm[128];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dp_tmp);
	if (system(rm) != 0)
		printf("# could not remove %s\n", dp_tmp);
#endif
	e2e_teardown();
	return e2e_done();
}
