/*
 * crash_serve: the real `kerf serve` process killed with SIGKILL at its
 * named crash points (KERF_CRASH_AT, serve/crash.h), started again, and
 * the API checked: nothing lost (every pod that fits is bound), nothing
 * doubled (no GPU of a node given twice, no pod bound twice), every gang
 * whole.  Then two replicas with leader election: only the leader binds;
 * the leader killed, the other takes over within the lease and binds.
 *
 *   crash_serve CERT_SCRIPT KERF KERF_TESTAPI
 *
 * The API server is the kerf-testapi process (over TLS, certificates made
 * for the run), or the cluster KERF_E2E_KUBECONFIG names (nodes and a
 * namespace named kerf-crash-*, removed at the end; the relist point is
 * skipped there: it needs the test server to forget its history).  No
 * kubelet runs: the suite creates Nodes with GPUs and plays the kubelet
 * and the workload where a scenario needs one (a pod Running, a
 * checkpoint acknowledged).  TAP; ends with "N passed, N failed".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "e2e_api.h"
#include "kobj/time.h"

#define NS "kerf-crash-a"
#define NODE_GPUS 8

static const char *kerf_bin;
static char tmp[] = "/tmp/kerf-crash-XXXXXX";
static char kc[512];
static int nr_serve;

/* --- processes -------------------------------------------------------- */

/* A free loopback port (closed again: the child binds it at once). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* In a child: its output goes to the file path. */
static void to_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

/*
 * kerf serve as a child: crash is KERF_CRASH_AT ("" for none), identity
 * non-NULL for leader election; its output goes to a log of its own.
 */
static pid_t serve(const char *crash, const char *identity, int metrics_port)
{
	char log[600], metrics[64];
	const char *lease_ns = NS;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/serve-%d-%s.log", tmp, ++nr_serve,
		 crash[0] ? crash : identity ? identity : "plain");
	snprintf(metrics, sizeof(metrics), "127.0.0.1:%d", metrics_port);
	pid = fork();
	if (pid == 0) {
		const char *base[] = {
			kerf_bin, "serve", "--kubeconfig", kc, "--metrics-addr",
			metrics_port ? metrics : "", "--resync", "200ms",
			"--qps", "1000", "--burst", "1000",
		};
		const char *elect[] = {
			"--leader-elect", "--lease-namespace", lease_ns,
			"--identity", identity, "--lease-duration", "3s",
			"--renew-deadline", "2s", "--retry-period", "500ms",
		};
		char *args[sizeof(base) / sizeof(base[0]) + sizeof(elect) / sizeof(elect[0]) + 1];
		size_t n = 0;

		to_log(log);
		if (crash[0])
			setenv("KERF_CRASH_AT", crash, 1);
		else
			unsetenv("KERF_CRASH_AT");
		for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			args[n++] = (char *)base[i];
		for (size_t i = 0; identity && i < sizeof(elect) / sizeof(elect[0]); i++)
			args[n++] = (char *)elect[i];
		args[n] = NULL;
		execv(kerf_bin, args);
		_exit(127);
	}
	return pid;
}

/* While waiting: what a kubelet and the workloads would do. */
static void (*kubelet)(void);
static long long metric(int port, const char *name);

/*
 * kerf serve as a child, its metrics on a port of its own, and its caches
 * synced and a cycle run (up to 20 s), so what follows is its doing.
 */
static pid_t serve_ready(const char *crash, const char *identity, int *port)
{
	int64_t end = e2e_wall_ms() + 20000;
	pid_t pid;

	*port = free_port();
	pid = serve(crash, identity, *port);
	while (e2e_wall_ms() < end && (metric(*port, "kerf_synced") != 1 ||
					metric(*port, "kerf_cycles_total") < 1)) {
		if (kubelet)
			kubelet();
		e2e_turn(50);
	}
	return pid;
}

/* Wait for pid to end, up to timeout_ms: its wait status, -1 if it runs. */
static int wait_end(pid_t pid, int64_t timeout_ms)
{
	int64_t end = e2e_wall_ms() + timeout_ms;
	int status;

	while (e2e_wall_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		if (kubelet)
			kubelet();
		e2e_turn(50);
	}
	return -1;
}

static bool killed_by_sigkill(int status)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* kerf serve pid, started at point, killed itself there (within 30 s). */
static void crashed(pid_t pid, const char *point)
{
	char what[128];
	int status = wait_end(pid, 30000);

	snprintf(what, sizeof(what), "%s: kerf serve killed itself with SIGKILL", point);
	e2e_check(killed_by_sigkill(status), what);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* SIGTERM: kerf serve gives its lease back and ends, with status 0. */
static void stop(pid_t pid, const char *what)
{
	char text[160];
	int status;

	kill(pid, SIGTERM);
	status = wait_end(pid, 10000);
	if (status == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	snprintf(text, sizeof(text), "%s: kerf serve ends cleanly on SIGTERM (wait status %d)",
		 what, status);
	e2e_check(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, text);
}

/* Run the client (and the kubelet) until cond holds or timeout_ms. */
static bool until(bool (*cond)(void *), void *arg, int64_t timeout_ms)
{
	int64_t end = e2e_wall_ms() + timeout_ms;

	while (e2e_wall_ms() < end) {
		if (cond(arg))
			return true;
		if (kubelet)
			kubelet();
		for (int i = 0; i < 5; i++)
			e2e_turn(20);
	}
	return cond(arg);
}

struct want { const char *prefix; int n, bound; };

static bool bound_is(void *arg)
{
	struct want *w = arg;

	return e2e_count_bound(NS, w->prefix, w->n) == w->bound;
}

/* A counter of kerf serve's /metrics on port (-1 when unreadable). */
static long long metric(int port, const char *name)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char buf[32768], line[160];
	size_t len = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	const char *at;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(line, sizeof(line), "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
	if (write(fd, line, strlen(line)) < 0) {
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	snprintf(line, sizeof(line), "\n%s ", name);
	at = strstr(buf, line);
	return at ? strtoll(at + strlen(line), NULL, 10) : -1;
}

/* --- what the API server holds ---------------------------------------- */

static json_t *get_pod(const char *name)
{
	char path[256];
	json_t *p = NULL;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", NS, name);
	if (e2e_api("GET", path, NULL, NULL, &p) != 200) {
		json_decref(p);
		return NULL;
	}
	return p;
}

static const char *annotation(const json_t *pod, const char *key)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(pod, "metadata"),
								 "annotations"), key));
}

static const char *pod_node(const json_t *pod)
{
	return json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
}

/*
 * Every bound pod of the namespace: no GPU of a node held twice, none
 * past the node's 8; every gang bound whole or not at all; and every pod
 * bound where its plan, if any, said.  The reason of a failure goes to
 * why.
 */
static bool consistent(char *why, size_t size)
{
	json_t *list = NULL, *items, *p;
	struct { char node[64]; unsigned mask; } used[16];
	struct { char gang[64]; int size, bound, seen; } gangs[16];
	size_t nr_used = 0, nr_gangs = 0, i;
	bool ok = true;

	why[0] = '\0';
	if (e2e_api("GET", "/api/v1/namespaces/" NS "/pods", NULL, NULL, &list) != 200) {
		snprintf(why, size, "cannot list the pods");
		json_decref(list);
		return false;
	}
	items = json_object_get(list, "items");
	json_array_foreach(items, i, p) {
		const char *name = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
		const char *node = pod_node(p), *gpus = annotation(p, "kerf.io/assigned-gpus");
		const char *gang = json_string_value(json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"), "kerf.io/gang"));
		const char *plan = annotation(p, "kerf.io/planned-node");
		const char *phase = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
		size_t k;

		if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
			continue;
		if (gang) {
			for (k = 0; k < nr_gangs && strcmp(gangs[k].gang, gang); k++)
				;
			if (k == nr_gangs && nr_gangs < 16) {
				snprintf(gangs[k].gang, sizeof(gangs[k].gang), "%s", gang);
				gangs[k].size = atoi(annotation(p, "kerf.io/gang-size") ?: "0");
				gangs[k].bound = gangs[k].seen = 0;
				nr_gangs++;
			}
			if (k < nr_gangs) {
				gangs[k].seen++;
				gangs[k].bound += node != NULL;
			}
		}
		if (!node)
			continue;
		if (plan && strcmp(plan, node)) {
			snprintf(why, size, "pod %.60s bound to %.60s, planned on %.60s", name, node, plan);
			ok = false;
		}
		for (k = 0; k < nr_used && strcmp(used[k].node, node); k++)
			;
		if (k == nr_used && nr_used < 16) {
			snprintf(used[k].node, sizeof(used[k].node), "%s", node);
			used[k].mask = 0;
			nr_used++;
		}
		for (const char *s = gpus ? gpus : ""; *s && k < nr_used; ) {
			int g = atoi(s);

			if (g < 0 || g >= NODE_GPUS || (used[k].mask >> g & 1)) {
				snprintf(why, size, "GPU %d of %.60s given twice (pod %.60s)", g, node, name);
				ok = false;
			}
			used[k].mask |= 1u << (g & 31);
			s = strchr(s, ',');
			s = s ? s + 1 : "";
		}
	}
	for (i = 0; i < nr_gangs; i++)
		if (gangs[i].bound && gangs[i].bound != gangs[i].size) {
			snprintf(why, size, "gang %.60s: %d of %d bound", gangs[i].gang,
				 gangs[i].bound, gangs[i].size);
			ok = false;
		}
	json_decref(list);
	return ok;
}

static void check_consistent(const char *when)
{
	char why[256], what[512];
	bool ok = consistent(why, sizeof(why));

	snprintf(what, sizeof(what), "%.60s: no GPU twice, every gang whole, bound as planned%s%s",
		 when, ok ? "" : " # ", why);
	e2e_check(ok, what);
}

/* --- the workload's side of preemption -------------------------------- */

static const char *victim;

/* The victim acknowledges every checkpoint request (again each second). */
static void ack_checkpoint(void)
{
	static int64_t last_ms;
	char path[256], when[KERF_TIME_TEXT_MAX], body[256];
	json_t *p;

	if (!victim || e2e_wall_ms() - last_ms < 1000)
		return;
	last_ms = e2e_wall_ms();
	p = get_pod(victim);
	if (p && annotation(p, "kerf.io/preempt-at")) {
		kerf_time_format(e2e_wall_ms(), when);
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", NS, victim);
		snprintf(body, sizeof(body), "{\"metadata\":{\"annotations\":{\"kerf.io/checkpoint-done\":\"%s\"}}}", when);
		e2e_api("PATCH", path, "application/merge-patch+json", body, NULL);
	}
	json_decref(p);
}

/* A pod Running, as its kubelet would say. */
static void running(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", NS, name);
	e2e_api("PATCH", path, "application/merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}", NULL);
}

static bool gone(void *arg)
{
	json_t *p = get_pod(arg);
	bool leaving = !p || json_object_get(json_object_get(p, "metadata"), "deletionTimestamp");

	json_decref(p);
	return leaving;
}

/* --- scenarios -------------------------------------------------------- */

/* Killed after a gang's first binding: the gang is finished from its plan. */
static void after_first_bind(void)
{
	char what[128];
	int bound, planned = 0, port;
	pid_t pid;

	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ga-%d", i);
		e2e_pod(NS, name, "ga", 4, 4, "kerf", "production", NULL);
	}
	pid = serve("after-first-bind", NULL, 0);
	crashed(pid, "after-first-bind");
	bound = e2e_count_bound(NS, "ga", 4);
	for (int i = 0; i < 4; i++) {
		char name[16];
		json_t *p;

		snprintf(name, sizeof(name), "ga-%d", i);
		p = get_pod(name);
		planned += p && annotation(p, "kerf.io/planned-node") != NULL;
		json_decref(p);
	}
	snprintf(what, sizeof(what), "the crash left the gang partly bound (%d of 4), its plan on all 4 (%d)",
		 bound, planned);
	e2e_check(bound == 1 && planned == 4, what);
	pid = serve_ready("", NULL, &port);
	e2e_check(until(bound_is, &(struct want){ "ga", 4, 4 }, 20000),
		  "after-first-bind: restarted, the gang is finished whole");
	check_consistent("after-first-bind");
	stop(pid, "after-first-bind");
}

/*
 * Killed once the victim's eviction was answered (the preemptor's binding
 * goes out in the same cycle: it may have landed or not): restarted, the
 * preemptor is bound once, where the victim was, and the victim is not
 * placed again.
 */
static void mid_preemption(void)
{
	char node[256], msg[512];
	int port;
	pid_t pid;

	e2e_node("kerf-crash-node-3", NODE_GPUS, NULL);
	e2e_pod(NS, "low-0", NULL, 0, NODE_GPUS, "kerf", NULL, NULL);
	pid = serve_ready("", NULL, &port);
	until(bound_is, &(struct want){ "low", 1, 1 }, 20000);
	running("low-0");
	stop(pid, "mid-preemption, before");
	e2e_pod_state(NS, "low-0", node, sizeof(node), msg, sizeof(msg));
	e2e_check(!strcmp(node, "kerf-crash-node-3"), "mid-preemption: the preemptible pod runs on node 3");
	victim = "low-0";
	kubelet = ack_checkpoint;
	e2e_pod(NS, "high-0", NULL, 0, NODE_GPUS, "kerf", "production", NULL);
	pid = serve("mid-preemption", NULL, 0);
	crashed(pid, "mid-preemption");
	e2e_check(gone("low-0"), "mid-preemption: the victim was evicted");
	pid = serve_ready("", NULL, &port);
	e2e_check(until(bound_is, &(struct want){ "high", 1, 1 }, 20000),
		  "mid-preemption: restarted, the preemptor is bound");
	e2e_pod_state(NS, "high-0", node, sizeof(node), msg, sizeof(msg));
	e2e_check(!strcmp(node, "kerf-crash-node-3") && gone("low-0"),
		  "mid-preemption: where the victim was, the victim not back");
	check_consistent("mid-preemption");
	kubelet = NULL;
	victim = NULL;
	stop(pid, "mid-preemption");
}

/* Killed while it lists again after a 410: it converges when restarted. */
static void during_relist(pid_t testapi)
{
	int port;
	pid_t pid;

	e2e_node("kerf-crash-node-4", NODE_GPUS, NULL);
	e2e_pod(NS, "c-0", NULL, 0, 2, "kerf", NULL, NULL);
	pid = serve("during-relist", NULL, 0);
	until(bound_is, &(struct want){ "c", 1, 1 }, 20000);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "gd-%d", i);
		e2e_pod(NS, name, "gd", 3, 2, "kerf", NULL, NULL);
	}
	/* the API server forgets its history: every watch gets a 410 */
	kill(testapi, SIGUSR1);
	crashed(pid, "during-relist");
	pid = serve_ready("", NULL, &port);
	e2e_check(until(bound_is, &(struct want){ "gd", 3, 3 }, 20000) &&
		  e2e_count_bound(NS, "c", 1) == 1,
		  "during-relist: restarted, the gang whole and the pod before it still bound");
	check_consistent("during-relist");
	stop(pid, "during-relist");
}

static bool holder_is(void *arg)
{
	const char **out = arg;
	json_t *l = NULL;
	const char *h;

	if (e2e_api("GET", "/apis/coordination.k8s.io/v1/namespaces/" NS "/leases/kerf-scheduler",
		    NULL, NULL, &l) != 200) {
		json_decref(l);
		return false;
	}
	h = json_string_value(json_object_get(json_object_get(l, "spec"), "holderIdentity"));
	if (h && (!strcmp(h, "a") || !strcmp(h, "b")) && (!out[1] || strcmp(h, out[1]))) {
		out[0] = !strcmp(h, "a") ? "a" : "b";
		json_decref(l);
		return true;
	}
	json_decref(l);
	return false;
}

/* Two replicas: only the leader binds; killed, the other takes over. */
static void two_replicas(void)
{
	int port[2] = { free_port(), free_port() };
	pid_t pid[2];
	const char *h[2] = { NULL, NULL };
	char what[200];
	int lead, other;
	int64_t t0, took_ms;

	e2e_node("kerf-crash-node-5", NODE_GPUS, NULL);
	pid[0] = serve("", "a", port[0]);
	pid[1] = serve("", "b", port[1]);
	e2e_check(until(holder_is, h, 20000), "two replicas: one holds the lease");
	lead = h[0] && !strcmp(h[0], "a") ? 0 : 1;
	other = 1 - lead;
	e2e_pod(NS, "e-0", NULL, 0, 1, "kerf", NULL, NULL);
	e2e_check(until(bound_is, &(struct want){ "e", 1, 1 }, 20000), "two replicas: a pod is bound");
	snprintf(what, sizeof(what), "only the leader binds (leader %s sent %lld, the other %lld)",
		 lead ? "b" : "a", metric(port[lead], "kerf_binds_sent_total"),
		 metric(port[other], "kerf_binds_sent_total"));
	e2e_check(metric(port[lead], "kerf_binds_sent_total") >= 1 &&
		  metric(port[other], "kerf_binds_sent_total") == 0 &&
		  metric(port[other], "kerf_leader") == 0, what);
	kill(pid[lead], SIGKILL);
	waitpid(pid[lead], NULL, 0);
	t0 = e2e_wall_ms();
	e2e_pod(NS, "e-1", NULL, 0, 1, "kerf", NULL, NULL);
	h[1] = h[0];
	e2e_check(until(bound_is, &(struct want){ "e", 2, 2 }, 20000),
		  "the leader killed: the other binds the new pod");
	took_ms = e2e_wall_ms() - t0;
	snprintf(what, sizeof(what), "... within the lease (3 s) and a cycle (%lld ms)", (long long)took_ms);
	e2e_check(took_ms <= 3000 + 2000, what);
	e2e_check(holder_is(h) && h[0] != h[1], "the lease changed hands");
	snprintf(what, sizeof(what), "nothing bound twice (the new leader: %lld sent, %lld refused)",
		 metric(port[other], "kerf_binds_sent_total"),
		 metric(port[other], "kerf_binds_conflict_total"));
	e2e_check(metric(port[other], "kerf_binds_sent_total") == 1 &&
		  metric(port[other], "kerf_binds_conflict_total") == 0, what);
	check_consistent("two replicas");
	stop(pid[other], "two replicas");
}

/* --- the API server ----------------------------------------------------- */

/* kerf-testapi over TLS; its kubeconfig written to kc.  Its pid, or -1. */
static pid_t start_testapi(const char *certs, const char *bin)
{
	char cmd[1200], a[6][600];
	pid_t pid;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "sh '%s' '%s' >/dev/null 2>&1", certs, tmp);
	if (system(cmd) != 0)
		return 0;
	snprintf(a[0], sizeof(a[0]), "%s/token", tmp);
	f = fopen(a[0], "w");
	if (!f)
		return -1;
	fputs("kerf-crash-token\n", f);
	fclose(f);
	snprintf(a[1], sizeof(a[1]), "%s/server.crt", tmp);
	snprintf(a[2], sizeof(a[2]), "%s/server.key", tmp);
	snprintf(a[3], sizeof(a[3]), "%s/ca.crt", tmp);
	snprintf(kc, sizeof(kc), "%s/kubeconfig", tmp);
	snprintf(a[4], sizeof(a[4]), "%s/testapi.log", tmp);
	pid = fork();
	if (pid == 0) {
		to_log(a[4]);
		execl(bin, bin, "--port", "0", "--token-file", a[0], "--tls-cert", a[1],
		      "--tls-key", a[2], "--tls-ca", a[3], "--kubeconfig-out", kc,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		struct stat sb;

		if (stat(kc, &sb) == 0 && sb.st_size > 0)
			return pid;
		e2e_sleep_ms(50);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int main(int argc, char **argv)
{
	const char *real = getenv("KERF_E2E_KUBECONFIG");
	pid_t testapi = -1;
	long pc;

	if (argc < 4) {
		fprintf(stderr, "usage: crash_serve CERT_SCRIPT KERF KERF_TESTAPI\n");
		return 2;
	}
	kerf_bin = argv[2];
	if (!mkdtemp(tmp)) {
		perror("crash_serve: mkdtemp");
		return 1;
	}
	if (real) {
		snprintf(kc, sizeof(kc), "%s", real);
	} else {
		testapi = start_testapi(argv[1], argv[3]);
		if (testapi == 0) {
			printf("1..0 # SKIP no openssl to make certificates\n0 passed, 0 failed\n");
			return 0;
		}
		if (testapi < 0) {
			fprintf(stderr, "crash_serve: kerf-testapi did not start (see %s/testapi.log)\n", tmp);
			return 1;
		}
	}
	if (e2e_connect(kc) < 0)
		return 1;
	printf("# logs in %s\n", tmp);

	/* the cluster: the CRD, a tenant, its namespace, two 8-GPU nodes */
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
		 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-crash-a\"},\"spec\":{\"weight\":1}}");
	e2e_post("/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-crash-a\"}}}", NS);
	/* a real API server resolves the class to its value; kerf reads both */
	pc = e2e_post("/apis/scheduling.k8s.io/v1/priorityclasses",
		      "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"production\"},\"value\":1000}");
	e2e_node("kerf-crash-node-1", NODE_GPUS, NULL);
	e2e_node("kerf-crash-node-2", NODE_GPUS, NULL);

	after_first_bind();
	mid_preemption();
	if (testapi > 0)
		during_relist(testapi);
	else
		printf("ok %d - during-relist # SKIP needs the test API server\n",
		       e2e_nr_passed + e2e_nr_failed + 1);
	two_replicas();

	/* clean up what the suite made (a real cluster keeps it otherwise) */
	e2e_api("DELETE", "/api/v1/namespaces/" NS, NULL, NULL, NULL);
	for (int i = 1; i <= 5; i++) {
		char path[128];

		snprintf(path, sizeof(path), "/api/v1/nodes/kerf-crash-node-%d", i);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-crash-a", NULL, NULL, NULL);
	if (pc == 201)
		e2e_api("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/production", NULL, NULL, NULL);
	e2e_disconnect();
	if (testapi > 0) {
		kill(testapi, SIGTERM);
		waitpid(testapi, NULL, 0);
	}
	return e2e_done();
}
