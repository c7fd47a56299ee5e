/*
 * fault_serve: kerf serve through the fault proxy (src/faultproxy), on
 * kerf's test API server over TLS by default or the cluster of
 * KERF_E2E_KUBECONFIG.  kerf serve runs in this process and talks only to
 * the proxy; the suite creates objects and checks the outcome straight on
 * the API server.
 *
 * One scenario per fault class, and one with all of them: 409 on 20 % of
 * writes (bindings answered before they land, then after), 410 at watch
 * starts, ERROR 410 mid-stream and streams cut, 5xx on 10 %, 429 with
 * Retry-After, 200 ms on every answer, everything at once.  Each scenario
 * has two 8-GPU nodes of its own (pods select them) and a 4-pod gang of 2
 * GPUs, a 2-pod gang of 1 GPU and two 1-GPU pods, 12 of its 16 GPUs, some
 * made before kerf serve starts and some after.  Afterwards, on the API
 * server: 0 lost (every pod bound within the deadline), every gang whole,
 * 0 doubled (per node the GPUs bound at most its capacity and no GPU named
 * by two pods' kerf.io/assigned-gpus; every bound pod bound exactly once
 * by the proxy's own count of 201s), and kerf's counters show the faults
 * it met.  Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_lib.h"
#include "faultproxy/faultproxy.h"
#include "kube/kubeconfig.h"

#define NS "kerf-fault"

enum { DEADLINE_MS = 45000, NODE_GPUS = 8 };

struct scenario {
	const char *name;
	struct kerf_fault_rates rates;
	/* kerf's side shows it met the faults */
	bool (*saw)(const struct kerf_fault_counts *px,
		    const struct kerf_kube_counters *kc,
		    const struct kerf_informer_stats *inf,
		    const struct kerf_controller_stats *st);
};

static uint64_t by_class(const struct kerf_kube_counters *kc,
			 enum kerf_kube_class cls)
{
	uint64_t n = 0;

	for (int v = 0; v < KERF_KUBE_VERB_COUNT_; v++)
		n += kc->requests[v][cls];
	return n;
}

static bool saw_conflicts(const struct kerf_fault_counts *px,
			  const struct kerf_kube_counters *kc,
			  const struct kerf_informer_stats *inf,
			  const struct kerf_controller_stats *st)
{
	/* which writes the 409s hit is chance: a binding, a plan or a status */
	(void)inf, (void)st;
	return px->conflicts > 0 &&
	       by_class(kc, KERF_KUBE_CONFLICT) + by_class(kc, KERF_KUBE_ALREADY_EXISTS) > 0;
}

static bool saw_watch_faults(const struct kerf_fault_counts *px,
			     const struct kerf_kube_counters *kc,
			     const struct kerf_informer_stats *inf,
			     const struct kerf_controller_stats *st)
{
	(void)kc, (void)st;
	return px->gone_at_start + px->gone_mid_stream > 0 && px->drops > 0 &&
	       inf->expired > 0 && inf->relists > 0 && inf->watch_restarts > 0;
}

static bool saw_5xx(const struct kerf_fault_counts *px,
		    const struct kerf_kube_counters *kc,
		    const struct kerf_informer_stats *inf,
		    const struct kerf_controller_stats *st)
{
	(void)inf, (void)st;
	return px->server_errors[0] + px->server_errors[1] + px->server_errors[2] > 0 &&
	       by_class(kc, KERF_KUBE_INTERNAL) + by_class(kc, KERF_KUBE_UNAVAILABLE) +
			       by_class(kc, KERF_KUBE_SERVER_TIMEOUT) > 0;
}

static bool saw_429(const struct kerf_fault_counts *px,
		    const struct kerf_kube_counters *kc,
		    const struct kerf_informer_stats *inf,
		    const struct kerf_controller_stats *st)
{
	(void)inf, (void)st;
	return px->throttled > 0 && by_class(kc, KERF_KUBE_TOO_MANY_REQUESTS) > 0;
}

static bool saw_latency(const struct kerf_fault_counts *px,
			const struct kerf_kube_counters *kc,
			const struct kerf_informer_stats *inf,
			const struct kerf_controller_stats *st)
{
	(void)kc, (void)inf, (void)st;
	return px->delayed > 0;
}

static bool saw_all(const struct kerf_fault_counts *px,
		    const struct kerf_kube_counters *kc,
		    const struct kerf_informer_stats *inf,
		    const struct kerf_controller_stats *st)
{
	return px->conflicts > 0 && saw_5xx(px, kc, inf, st) &&
	       px->throttled > 0 && px->delayed > 0 &&
	       inf->watch_restarts > 0;
}

static const struct scenario scenarios[] = {
	{ "409 on 20% of writes, bindings refused before they land",
	  { .conflict_permille = 200 }, saw_conflicts },
	{ "409 on 20% of writes, bindings refused after they land",
	  { .conflict_permille = 200, .conflict_after_forward = true },
	  saw_conflicts },
	{ "410 at watch starts and mid-stream, streams dropped",
	  { .gone_permille = 300, .gone_after_events = 3, .drop_after_ms = 1500 },
	  saw_watch_faults },
	{ "5xx on 10% of requests", { .server_error_permille = 100 }, saw_5xx },
	{ "429 with Retry-After: 1 on 10% of requests",
	  { .throttle_permille = 100, .retry_after_s = 1 }, saw_429 },
	{ "200 ms on every answer", { .latency_ms = 200 }, saw_latency },
	{ "all of them at once",
	  { .conflict_permille = 200, .conflict_after_forward = true,
	    .server_error_permille = 100, .throttle_permille = 100,
	    .retry_after_s = 1, .gone_permille = 300, .gone_after_events = 7,
	    .drop_after_events = 4, .drop_after_ms = 1500, .latency_ms = 200 },
	  saw_all },
};

/* The pods of scenario s: gang a 4 x 2 GPUs, gang b 2 x 1, solo 2 x 1. */
static const struct {
	const char *group;   /* name prefix after "sN-" */
	bool gang;
	int size, gpus;
	bool late;           /* made after kerf serve started */
} pods[] = {
	{ "a", true, 4, 2, false },
	{ "b", true, 2, 1, true },
	{ "solo", false, 2, 1, true },
};

enum { NR_GROUPS = sizeof(pods) / sizeof(pods[0]) };

static struct kerf_fault_proxy *proxy;

static void make_pods(int s, bool late)
{
	char sel[128], name[64], gang[32];

	snprintf(sel, sizeof(sel), "\"kerf.io/fault-scenario\":\"s%d\"", s);
	for (int g = 0; g < NR_GROUPS; g++) {
		if (pods[g].late != late)
			continue;
		snprintf(gang, sizeof(gang), "s%d-%s", s, pods[g].group);
		for (int i = 0; i < pods[g].size; i++) {
			snprintf(name, sizeof(name), "%s-%d", gang, i);
			e2e_pod(NS, name, pods[g].gang ? gang : NULL,
				pods[g].size, pods[g].gpus, "kerf", NULL, sel);
		}
	}
}

static bool all_bound(void *arg)
{
	int s = *(int *)arg;
	char prefix[32];

	for (int g = 0; g < NR_GROUPS; g++) {
		snprintf(prefix, sizeof(prefix), "s%d-%s", s, pods[g].group);
		if (e2e_count_bound(NS, prefix, pods[g].size) != pods[g].size)
			return false;
	}
	return true;
}

/* A GPU mask from "0,1,2"; -1 when it does not read. */
static int64_t gpu_mask(const char *s)
{
	int64_t m = 0;

	while (s && *s) {
		char *end;
		long g = strtol(s, &end, 10);

		if (end == s || g < 0 || g >= 62)
			return -1;
		m |= (int64_t)1 << g;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return m;
}

struct node_use {
	char name[128];
	int gpus;
	int64_t mask;
	bool overlap;
};

/*
 * Over every pod of the namespace (every scenario so far): no node given
 * more GPUs than it has, no GPU named twice, every bound pod bound once.
 */
static void check_doubles(const char *what)
{
	json_t *list = NULL, *p;
	struct node_use use[64];
	size_t nr_use = 0, i;
	bool over = false, overlap = false, twice = false, unread = false;
	char msg[256];

	if (e2e_api("GET", "/api/v1/namespaces/" NS "/pods", NULL, NULL, &list) != 200) {
		json_decref(list);
		e2e_check(false, "the pods listed");
		return;
	}
	json_array_foreach(json_object_get(list, "items"), i, p) {
		const char *node = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
		const char *name = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
		const char *gpus = json_string_value(json_object_get(json_object_get(
			json_object_get(p, "metadata"), "annotations"), "kerf.io/assigned-gpus"));
		json_t *c0 = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
		const char *req = json_string_value(json_object_get(json_object_get(
			json_object_get(c0, "resources"), "limits"), "nvidia.com/gpu"));
		unsigned binds = kerf_fault_proxy_binds(proxy, NS, name ? name : "");
		int64_t m = gpu_mask(gpus);
		size_t k;

		if (binds != (node ? 1u : 0u)) {
			printf("# %s bound %u times through the proxy (node %s)\n",
			       name ? name : "?", binds, node ? node : "none");
			twice = true;
		}
		if (!node)
			continue;
		for (k = 0; k < nr_use && strcmp(use[k].name, node); k++)
			;
		if (k == nr_use && nr_use < sizeof(use) / sizeof(use[0])) {
			memset(&use[k], 0, sizeof(use[k]));
			snprintf(use[k].name, sizeof(use[k].name), "%s", node);
			nr_use++;
		}
		if (k == nr_use || m < 0 || !req) {
			unread = true;
			continue;
		}
		use[k].gpus += atoi(req);
		if (use[k].mask & m) {
			printf("# GPUs %s of %s given again to %s\n", gpus, node, name);
			overlap = true;
		}
		use[k].mask |= m;
	}
	json_decref(list);
	for (i = 0; i < nr_use; i++)
		if (use[i].gpus > NODE_GPUS) {
			printf("# %s: %d GPUs bound of %d\n", use[i].name, use[i].gpus, NODE_GPUS);
			over = true;
		}
	snprintf(msg, sizeof(msg), "%s: no node over its GPUs, no GPU given twice", what);
	e2e_check(!over && !overlap && !unread, msg);
	snprintf(msg, sizeof(msg), "%s: every bound pod bound once (the proxy's 201s)", what);
	e2e_check(!twice, msg);
}

static void check_gangs(int s, const char *what)
{
	char prefix[32], msg[256];
	bool whole = true;

	for (int g = 0; g < NR_GROUPS; g++) {
		int n;

		if (!pods[g].gang)
			continue;
		snprintf(prefix, sizeof(prefix), "s%d-%s", s, pods[g].group);
		n = e2e_count_bound(NS, prefix, pods[g].size);
		if (n != 0 && n != pods[g].size) {
			printf("# gang %s: %d of %d bound\n", prefix, n, pods[g].size);
			whole = false;
		}
	}
	snprintf(msg, sizeof(msg), "%s: every gang whole", what);
	e2e_check(whole, msg);
}

/* kerf serve's own client, to the proxy. */
static struct kerf_kube_client *kerf_client(struct kerf_kube_config *cfg,
					    const char *kc, uint64_t seed)
{
	struct kerf_kube_client_opts o = { .seed = seed };
	struct kerf_kube_client *c;
	struct kerf_err err = { 0 };

	if (kerf_kubeconfig_load(cfg, kc, NULL, &err) < 0 ||
	    !(c = kerf_kube_client_new(cfg, &o, &err))) {
		fprintf(stderr, "fault_serve: kerf's client: %s\n", err.msg);
		return NULL;
	}
	return c;
}

static void run_scenario(int s, const struct scenario *sc, const char *kc)
{
	struct kerf_fault_counts before, after, px;
	struct kerf_kube_config cfg;
	struct kerf_kube_ops ops;
	struct kerf_informer_stats inf;
	struct kerf_kube_client *c;
	char node[64], label[64], what[160], msg[256];
	bool bound;
	int64_t t0;

	snprintf(what, sizeof(what), "s%d (%s)", s, sc->name);
	printf("# %s\n", what);
	snprintf(label, sizeof(label), "\"kerf.io/fault-scenario\":\"s%d\"", s);
	for (int i = 1; i <= 2; i++) {
		snprintf(node, sizeof(node), "kerf-fault-s%d-node-%d", s, i);
		e2e_node(node, NODE_GPUS, label);
	}
	make_pods(s, false);
	kerf_kube_config_init(&cfg);
	c = kerf_client(&cfg, kc, (uint64_t)s);
	if (!c) {
		e2e_check(false, "kerf's client to the proxy");
		kerf_kube_config_release(&cfg);
		return;
	}
	kerf_kube_client_ops(c, &ops);
	e2e.other = c;
	kerf_fault_proxy_counts(proxy, &before);
	kerf_fault_proxy_set(proxy, &sc->rates);
	t0 = e2e_wall_ms();
	if (!e2e_controller_start(&ops)) {
		e2e_check(false, "kerf serve started");
		goto out;
	}
	/* let it list, then the rest of the pods arrive */
	for (int i = 0; i < 50; i++)
		e2e_turn(20);
	make_pods(s, true);
	bound = e2e_run_until(all_bound, &s, DEADLINE_MS);
	/* a little more under faults: nothing may come undone or twice */
	for (int i = 0; i < 25; i++)
		e2e_turn(20);
	kerf_fault_proxy_counts(proxy, &after);
	kerf_controller_informer_totals(e2e.ctl, &inf);
	px = after;
	px.requests -= before.requests;
	px.conflicts -= before.conflicts;
	px.conflicts_forwarded -= before.conflicts_forwarded;
	for (int k = 0; k < 3; k++)
		px.server_errors[k] -= before.server_errors[k];
	px.throttled -= before.throttled;
	px.gone_at_start -= before.gone_at_start;
	px.gone_mid_stream -= before.gone_mid_stream;
	px.drops -= before.drops;
	px.delayed -= before.delayed;
	px.binds_created -= before.binds_created;
	printf("# %.1f s; proxy: %" PRIu64 " requests, 409 %" PRIu64 " (%" PRIu64
	       " after the bind), 500/503/504 %" PRIu64 "/%" PRIu64 "/%" PRIu64
	       ", 429 %" PRIu64 ", 410 %" PRIu64 "+%" PRIu64 ", drops %" PRIu64
	       ", delayed %" PRIu64 ", binds %" PRIu64 "\n",
	       (double)(e2e_wall_ms() - t0) / 1000.0, px.requests, px.conflicts,
	       px.conflicts_forwarded, px.server_errors[0], px.server_errors[1],
	       px.server_errors[2], px.throttled, px.gone_at_start,
	       px.gone_mid_stream, px.drops, px.delayed, px.binds_created);
	{
		const struct kerf_kube_counters *kc_ = kerf_kube_client_counters(c);
		const struct kerf_controller_stats *st = kerf_controller_stats(e2e.ctl);

		printf("# kerf: binds sent %" PRIu64 " ok %" PRIu64 " conflict %" PRIu64
		       " failed %" PRIu64 " retried %" PRIu64 "; client retries %" PRIu64
		       " denied %" PRIu64 "; informers relists %" PRIu64 " 410s %" PRIu64
		       " watch restarts %" PRIu64 " errors %" PRIu64 "\n",
		       st->binds_sent, st->binds_ok, st->binds_conflict,
		       st->binds_failed, st->binds_retried, kc_->retries,
		       kc_->retries_denied, inf.relists, inf.expired,
		       inf.watch_restarts, inf.errors);
		if (st->last_error[0])
			printf("# last error: %s\n", st->last_error);
		snprintf(msg, sizeof(msg), "%s: every pod bound (0 lost)", what);
		e2e_check(bound, msg);
		check_gangs(s, what);
		check_doubles(what);
		snprintf(msg, sizeof(msg), "%s: kerf's counters show the faults", what);
		e2e_check(sc->saw(&px, kc_, &inf, st), msg);
	}
out:
	kerf_fault_proxy_set(proxy, &(struct kerf_fault_rates){ 0 });
	e2e_controller_stop();
	e2e.other = NULL;
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

int main(int argc, char **argv)
{
	struct kerf_fault_proxy_opts o = { .token = "kerf-fault-token", .seed = 42 };
	struct kerf_err err = { 0 };
	char path[512], kc[512];
	char *cert = NULL, *key = NULL;
	const char *only = getenv("KERF_FAULT_SCENARIO");
	int rc;

	rc = e2e_setup(argc > 1 ? argv[1] : NULL, "fault_serve");
	if (rc != 0)
		return rc < 0 ? 1 : 0;
	if (!e2e.dir[0]) {
		printf("1..0 # SKIP no openssl to make the proxy's certificate\n0 passed, 0 failed\n");
		e2e_teardown();
		return 0;
	}
	snprintf(path, sizeof(path), "%s/server.crt", e2e.dir);
	cert = e2e_slurp(path);
	snprintf(path, sizeof(path), "%s/server.key", e2e.dir);
	key = e2e_slurp(path);
	o.upstream = e2e_kube_config();
	o.tls_cert_pem = cert;
	o.tls_key_pem = key;
	snprintf(path, sizeof(path), "%s/ca.crt", e2e.dir);
	snprintf(kc, sizeof(kc), "%s/proxy.kubeconfig", e2e.dir);
	if (kerf_fault_proxy_start(&o, &proxy, &err) < 0 ||
	    kerf_fault_proxy_write_kubeconfig(proxy, kc, path, &err) < 0) {
		fprintf(stderr, "fault_serve: %s\n", err.msg);
		free(cert);
		free(key);
		return 1;
	}
	free(cert);
	free(key);

	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
		 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"" NS "\"},\"spec\":{\"weight\":1}}");
	e2e_post("/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\",\"labels\":{\"kerf.io/tenant\":\"" NS "\"}}}");
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++)
		if (!only || atoi(only) == (int)s + 1)
			run_scenario((int)s + 1, &scenarios[s], kc);

	/* clean up what the suite made (a real cluster keeps it otherwise) */
	kerf_fault_proxy_stop(proxy);
	e2e_api("DELETE", "/api/v1/namespaces/" NS, NULL, NULL, NULL);
	for (size_t s = 1; s <= sizeof(scenarios) / sizeof(scenarios[0]); s++)
		for (int i = 1; i <= 2; i++) {
			snprintf(path, sizeof(path), "/api/v1/nodes/kerf-fault-s%zu-node-%d", s, i);
			e2e_api("DELETE", path, NULL, NULL, NULL);
		}
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/" NS, NULL, NULL, NULL);
	e2e_teardown();
	return e2e_done();
}
