/*
 * test_api: kerf serve's read-only JSON API (serve/api.h) over a world
 * fed Nodes, Namespaces, Tenants and Pods as the API server sends them:
 * the tenant tree with usage, borrowing and pending counts per flavor; the
 * queue in the cycle's order with each reason (and the pods held back
 * before the core sees them); nodes with free GPUs, cordon and its
 * reason, NVLink domain and MIG layout; explanations whose blocking layer
 * is the one that holds the pod (gang, quota with its numbers, capacity
 * node by node); every GPU with its pods, MIG instances and health; 404
 * Status objects for unknown pods and paths, 405 for writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/persist.h"
#include "persist/state_doc.h"
#include "serve/api.h"

#define NOW 1767225900000LL     /* 2026-01-01T00:05:00Z */

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad JSON: %s: %s", e.text, text);
	return j;
}

/* Node name with the annotation members ann (JSON, may be ""). */
static void add_node_ann(struct kerf_world *w, const char *name, int gpus,
			 const char *extra_labels, const char *ann, bool cordoned)
{
	char text[2048];
	struct kerf_err err = { 0 };
	struct kerf_knode n;
	json_t *j;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\",\"labels\":{"
		 "\"nvidia.com/gpu.product\":\"A100-SXM4-40GB\",\"nvidia.com/gpu.memory\":\"40960\"%s},"
		 "\"annotations\":{%s}},"
		 "\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\","
		 "\"nvidia.com/gpu\":\"%d\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
		 name, name, extra_labels, ann, cordoned ? "\"unschedulable\":true" : "", gpus);
	j = parse(text);
	if (kerf_knode_decode(j, &n, &err) < 0 || kerf_world_node_set(w, &n, NOW, &err) < 0)
		fail_msg("node %s: %s", name, err.msg);
	json_decref(j);
}

static void add_node(struct kerf_world *w, const char *name, int gpus, const char *extra_labels,
		     bool cordoned)
{
	add_node_ann(w, name, gpus, extra_labels, "", cordoned);
}

/* A pending pod of kerf's; gang "" for none. */
static void add_pod(struct kerf_world *w, const char *ns, const char *name, int gpus,
		    const char *gang, int gang_size, const char *pclass, int created_s)
{
	char text[2048], labels[128] = "", ann[128] = "", pc[64] = "";
	struct kerf_err err = { 0 };
	struct kerf_kpod p;
	json_t *j;

	if (gang[0]) {
		snprintf(labels, sizeof(labels), "\"kerf.io/gang\":\"%s\"", gang);
		snprintf(ann, sizeof(ann), "\"kerf.io/gang-size\":\"%d\"", gang_size);
	}
	if (pclass)
		snprintf(pc, sizeof(pc), ",\"priorityClassName\":\"%s\"", pclass);
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\","
		 "\"creationTimestamp\":\"2026-01-01T00:00:%02dZ\",\"labels\":{%s},\"annotations\":{%s}},"
		 "\"spec\":{\"schedulerName\":\"kerf\"%s,\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"nvidia.com/gpu\":\"%d\"}}}]},"
		 "\"status\":{\"phase\":\"Pending\"}}",
		 name, ns, name, created_s, labels, ann, pc, gpus);
	j = parse(text);
	if (kerf_kpod_decode(j, &p, &err) < 0 || kerf_world_pod_set(w, &p, NOW, &err) < 0)
		fail_msg("pod %s: %s", name, err.msg);
	json_decref(j);
}

static void add_tenant(struct kerf_world *w, const char *name, const char *parent,
		       int64_t nominal, int64_t borrow)
{
	struct kerf_tenant_spec s = { .name = name, .weight = 2 };
	struct kerf_err err = { 0 };

	kerf_quota_default(&s.quota);
	s.quota.nominal.v[KERF_RES_GPU0] = nominal;
	s.quota.borrow_limit.v[KERF_RES_GPU0] = borrow;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		s.budget_model_weight_pct[m] = 100;
	if (kerf_world_tenant_set(w, &s, parent, &err) < 0)
		fail_msg("tenant %s: %s", name, err.msg);
}

/*
 * Nodes n0, n1 (8 GPUs each, NVLink domain rack-1), n2 cordoned, m0 with
 * 2 GPUs in MIG mode; team-a (8 GPUs nominal, no borrowing) under org,
 * team-b (nothing nominal, borrows freely).  a/big (8 GPUs) runs; a/more
 * (8 GPUs) waits for quota; b/g-0 of a gang of 2 is alone; b/wide wants
 * 16 GPUs on one pod (no node has them); b/first (production) runs
 * before b/late and b/after, which wait.
 */
static struct kerf_world *world(void)
{
	struct kerf_world_config cfg = { .scheduler_name = "kerf", .seed = 1 };
	struct kerf_world *w;
	struct kerf_actions acts;
	struct kerf_err err = { 0 };

	if (kerf_world_new(&cfg, &w, &err) < 0)
		fail_msg("world: %s", err.msg);
	add_node(w, "n0", 8, ",\"kerf.io/nvlink-domain\":\"rack-1\"", false);
	add_node(w, "n1", 8, ",\"kerf.io/nvlink-domain\":\"rack-1\"", false);
	add_node(w, "n2", 8, "", true);
	add_node(w, "m0", 2, ",\"kerf.io/mig-gpus\":\"2\"", false);
	add_tenant(w, "org", NULL, 16000, KERF_QTY_INF);
	add_tenant(w, "team-a", "org", 8000, 0);
	add_tenant(w, "team-b", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	assert_int_equal(kerf_world_namespace_set(w, "b", "team-b", &err), 0);
	add_pod(w, "a", "big", 8, "", 0, NULL, 1);
	kerf_actions_init(&acts);
	if (kerf_world_cycle(w, NOW, &acts, &err) < 0)
		fail_msg("cycle: %s", err.msg);
	add_pod(w, "a", "more", 8, "", 0, NULL, 2);
	add_pod(w, "b", "g-0", 1, "g", 2, NULL, 3);
	add_pod(w, "b", "wide", 16, "", 0, NULL, 4);
	add_pod(w, "b", "late", 8, "", 0, NULL, 5);
	add_pod(w, "b", "first", 8, "", 0, "production", 6);
	add_pod(w, "b", "after", 8, "", 0, NULL, 7);
	kerf_actions_clear(&acts);
	if (kerf_world_cycle(w, NOW, &acts, &err) < 0)
		fail_msg("cycle: %s", err.msg);
	kerf_actions_release(&acts);
	return w;
}

static json_t *get(const struct kerf_world *w, const char *method, const char *url, int want)
{
	char *body = NULL;
	int code = kerf_api_answer(w, method, url, NOW, &body);
	json_t *j;

	assert_non_null(body);
	if (code != want)
		fail_msg("%s %s: %d, not %d: %s", method, url, code, want, body);
	j = parse(body);
	free(body);
	return j;
}

static const json_t *item(const json_t *list, const char *key, const char *value)
{
	const json_t *it;
	size_t i;

	json_array_foreach(json_object_get(list, "items"), i, it)
		if (!strcmp(json_string_value(json_object_get(it, key)), value))
			return it;
	fail_msg("no item %s=%s", key, value);
	return NULL;
}

static long long num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("%s: not an integer", key);
	return (long long)json_integer_value(v);
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s)
		fail_msg("%s: not a string", key);
	return s;
}

static void test_tenants(void **state)
{
	struct kerf_world *w = world();
	json_t *l = get(w, "GET", "/api/v1/tenants", 200);
	const json_t *a, *org, *b, *root, *f;

	(void)state;
	assert_string_equal(str(l, "kind"), "TenantList");
	assert_string_equal(str(l, "apiVersion"), KERF_API_VERSION);
	root = item(l, "name", "cluster");
	assert_true(json_is_null(json_object_get(root, "parent")));
	/* n0, n1, n2 and m0's GPUs: the root's nominal is the capacity */
	assert_int_equal(num(json_array_get(json_object_get(root, "flavors"), 0), "nominalGPUMilli"), 26000);
	a = item(l, "name", "team-a");
	assert_string_equal(str(a, "parent"), "org");
	assert_int_equal(num(a, "weight"), 2);
	assert_true(json_is_true(json_object_get(a, "leaf")));
	assert_int_equal(num(a, "pending"), 1);
	assert_int_equal(num(a, "pendingGPUMilli"), 8000);
	f = json_array_get(json_object_get(a, "flavors"), 0);
	assert_string_equal(str(f, "flavor"), "A100-SXM4-40GB");
	assert_int_equal(num(f, "nominalGPUMilli"), 8000);
	assert_int_equal(num(f, "borrowingLimitGPUMilli"), 0);
	assert_true(json_is_null(json_object_get(f, "lendingLimitGPUMilli")));
	assert_int_equal(num(f, "usageGPUMilli"), 8000);
	assert_int_equal(num(f, "borrowedGPUMilli"), 0);
	/* a parent counts its subtree */
	org = item(l, "name", "org");
	assert_false(json_is_true(json_object_get(org, "leaf")));
	assert_int_equal(num(org, "pending"), 1);
	assert_int_equal(num(json_array_get(json_object_get(org, "flavors"), 0), "usageGPUMilli"), 8000);
	/* team-b borrows all it uses: nothing nominal, no limit */
	b = item(l, "name", "team-b");
	f = json_array_get(json_object_get(b, "flavors"), 0);
	assert_true(json_is_null(json_object_get(f, "borrowingLimitGPUMilli")));
	assert_int_equal(num(f, "borrowedGPUMilli"), num(f, "usageGPUMilli"));
	assert_true(num(f, "usageGPUMilli") > 0);
	assert_true(json_is_null(json_object_get(b, "budget")));
	json_decref(l);
	kerf_world_free(w);
}

static void test_queue(void **state)
{
	struct kerf_world *w = world();
	json_t *q = get(w, "GET", "/api/v1/queue?watch=true", 200);
	const json_t *items = json_object_get(q, "items"), *it, *wait;
	const char *keys[8];
	size_t i, nr = json_array_size(items);

	(void)state;
	assert_string_equal(str(q, "kind"), "Queue");
	json_array_foreach(items, i, it) {
		keys[i < 8 ? i : 7] = str(it, "key");
		assert_int_equal(num(it, "position"), (long long)i + 1);
	}
	/* b/first ran (production, 8 GPUs of n1); what is left, by the cycle's order */
	if (getenv("KERF_API_DEBUG"))
		for (i = 0; i < nr; i++)
			fprintf(stderr, "%s\n", keys[i]);
	it = item(q, "key", "a/more");
	assert_string_equal(str(it, "reason"), "QuotaExceeded");
	assert_non_null(strstr(str(it, "message"), "tenant 'team-a'"));
	assert_string_equal(str(it, "tenant"), "team-a");
	assert_string_equal(str(it, "class"), "preemptible");
	assert_int_equal(num(it, "gpuMilli"), 8000);
	assert_int_equal(num(it, "pods"), 1);
	assert_string_equal(str(it, "submitTime"), "2026-01-01T00:00:02Z");
	assert_true(json_real_value(json_object_get(it, "waitSeconds")) == 298.0);
	it = item(q, "key", "b/wide");
	assert_string_equal(str(it, "reason"), "InsufficientCapacity");
	/* org (weight 2) uses 8 GPUs, team-b (weight 1) 8: org's work first */
	assert_int_equal(nr, 4);
	assert_string_equal(keys[0], "a/more");
	/* older first within a class and tenant */
	for (i = 0; i + 1 < nr; i++)
		if (!strcmp(keys[i], "b/after"))
			fail_msg("b/after queued before b/late");
		else if (!strcmp(keys[i], "b/late"))
			break;
	/* the gang member the core has not seen is listed apart */
	it = json_array_get(json_object_get(q, "waiting"), 0);
	assert_non_null(it);
	assert_string_equal(str(it, "pod"), "b/g-0");
	assert_string_equal(str(it, "reason"), "GangIncomplete");
	wait = json_object_get(it, "waitSeconds");
	assert_true(json_real_value(wait) == 297.0);
	json_decref(q);
	kerf_world_free(w);
}

static void test_nodes(void **state)
{
	struct kerf_world *w = world();
	json_t *l = get(w, "GET", "/api/v1/nodes", 200);
	const json_t *n0, *n2, *m0, *mig;

	(void)state;
	assert_string_equal(str(l, "kind"), "NodeList");
	assert_int_equal(json_array_size(json_object_get(l, "items")), 4);
	/* by rank: ties by name */
	assert_string_equal(str(json_array_get(json_object_get(l, "items"), 0), "name"), "m0");
	n0 = item(l, "name", "n0");
	assert_string_equal(str(n0, "model"), "A100-SXM4-40GB");
	assert_int_equal(num(n0, "gpus"), 8);
	assert_int_equal(num(n0, "gpusFree") + num(n0, "gpuMilliFree") / 1000 >= 0, 1);
	assert_string_equal(str(n0, "nvlinkDomain"), "rack-1");
	assert_true(json_is_true(json_object_get(n0, "usable")));
	assert_true(json_is_null(json_object_get(n0, "mig")));
	assert_true(json_is_null(json_object_get(n0, "cordonReason")));
	n2 = item(l, "name", "n2");
	assert_true(json_is_true(json_object_get(n2, "cordoned")));
	assert_false(json_is_true(json_object_get(n2, "usable")));
	assert_non_null(strstr(str(n2, "cordonReason"), "unschedulable"));
	assert_true(json_is_null(json_object_get(n2, "nvlinkDomain")));
	m0 = item(l, "name", "m0");
	mig = json_object_get(m0, "mig");
	assert_true(json_is_array(mig));
	assert_int_equal(json_array_size(mig), 2);
	assert_int_equal(num(json_array_get(mig, 1), "gpu"), 1);
	assert_true(json_is_array(json_object_get(json_array_get(mig, 0), "instances")));
	/* GPUs in MIG mode show nothing free to whole-GPU pods */
	assert_int_equal(num(m0, "gpuMilliFree"), 0);
	assert_int_equal(json_array_size(json_object_get(n0, "gpusDown")), 0);
	assert_true(json_is_null(json_object_get(n0, "gpuMarksError")));
	json_decref(l);
	/* GPUs out of service: by index; a mark that does not read: all, why */
	add_node_ann(w, "d0", 4, "", "\"kerf.io/unhealthy-gpus\":\"1,3\"", false);
	add_node_ann(w, "d1", 2, "", "\"kerf.io/unhealthy-gpus\":\"one\","
		     "\"kerf.io/gpu-utilization\":\"0:x\"", false);
	add_node_ann(w, "u0", 2, "", "\"kerf.io/gpu-utilization\":\"1:35\"", false);
	l = get(w, "GET", "/api/v1/nodes", 200);
	n0 = item(l, "name", "d0");
	mig = json_object_get(n0, "gpusDown");
	assert_int_equal(json_array_size(mig), 2);
	assert_int_equal(json_integer_value(json_array_get(mig, 0)), 1);
	assert_int_equal(json_integer_value(json_array_get(mig, 1)), 3);
	assert_int_equal(num(n0, "gpuMilliFree"), 2000);
	assert_int_equal(num(n0, "gpusFree"), 2);
	n2 = item(l, "name", "d1");
	assert_int_equal(json_array_size(json_object_get(n2, "gpusDown")), 2);
	assert_non_null(strstr(str(n2, "gpuMarksError"), "kerf.io/unhealthy-gpus 'one'"));
	assert_true(json_is_true(json_object_get(n2, "usable")));
	/* the agent's utilisation: by GPU; a value that does not read: why */
	assert_int_equal(json_array_size(json_object_get(n2, "gpuUtilization")), 0);
	assert_non_null(strstr(str(n2, "gpuUtilizationError"), "kerf.io/gpu-utilization '0:x'"));
	assert_true(json_is_null(json_object_get(n0, "gpuUtilizationError")));
	n0 = item(l, "name", "u0");
	mig = json_object_get(n0, "gpuUtilization");
	assert_int_equal(json_array_size(mig), 1);
	assert_int_equal(num(json_array_get(mig, 0), "gpu"), 1);
	assert_int_equal(num(json_array_get(mig, 0), "percent"), 35);
	assert_true(json_is_null(json_object_get(n0, "gpuUtilizationError")));
	json_decref(l);
	kerf_world_free(w);
}

static const json_t *layer(const json_t *e, const char *name)
{
	const json_t *l;
	size_t i;

	json_array_foreach(json_object_get(e, "layers"), i, l)
		if (!strcmp(str(l, "layer"), name))
			return l;
	fail_msg("no layer %s", name);
	return NULL;
}

static size_t blocking(const json_t *e)
{
	const json_t *l;
	size_t i, n = 0;

	json_array_foreach(json_object_get(e, "layers"), i, l)
		n += json_is_true(json_object_get(l, "blocking"));
	return n;
}

/* A running pod of kerf's: resources (JSON members), annotations, selector. */
static void add_pod_on(struct kerf_world *w, const char *ns, const char *name,
		       const char *res, const char *ann, const char *sel)
{
	char text[2048];
	struct kerf_err err = { 0 };
	struct kerf_kpod p;
	json_t *j;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s\","
		 "\"creationTimestamp\":\"2026-01-01T00:00:01Z\",\"annotations\":{%s}},"
		 "\"spec\":{\"schedulerName\":\"kerf\",\"nodeSelector\":{\"kerf.io/pool\":\"%s\"},"
		 "\"containers\":[{\"name\":\"c\",\"resources\":"
		 "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"%s}}}]},"
		 "\"status\":{\"phase\":\"Pending\"}}",
		 name, ns, name, ann, sel, res);
	j = parse(text);
	if (kerf_kpod_decode(j, &p, &err) < 0 || kerf_world_pod_set(w, &p, NOW, &err) < 0)
		fail_msg("pod %s: %s", name, err.msg);
	json_decref(j);
}

static const json_t *gpu_item(const json_t *l, const char *node, int index)
{
	const json_t *it;
	size_t i;

	json_array_foreach(json_object_get(l, "items"), i, it)
		if (!strcmp(str(it, "node"), node) && num(it, "index") == index)
			return it;
	fail_msg("no GPU %s/%d", node, index);
	return NULL;
}

/*
 * GET /api/v1/gpus: g0 (4 GPUs, GPU 3 marked unhealthy) runs a/w2 (2
 * GPUs) and b/w1 (1); m0 has GPU 0 in MIG mode with a/mig on a 3g
 * instance; s0's one GPU is shared by MPS between a/f1 (250m) and b/f2
 * (500m).  Every GPU once, by node then index, with its pods and what
 * is left free.
 */
static void test_gpus(void **state)
{
	struct kerf_world_config cfg = { .scheduler_name = "kerf", .seed = 1 };
	const char *mps = "\"kerf.io/gpu-sharing\":\"mps\",\"kerf.io/gpu-fraction\":";
	char ann[128];
	struct kerf_world *w;
	struct kerf_actions acts;
	struct kerf_err err = { 0 };
	const json_t *g, *p, *mig, *it;
	json_t *l;
	size_t i;
	int whole = 0;

	(void)state;
	if (kerf_world_new(&cfg, &w, &err) < 0)
		fail_msg("world: %s", err.msg);
	add_node_ann(w, "g0", 4, ",\"kerf.io/pool\":\"g\"", "\"kerf.io/unhealthy-gpus\":\"3\"", false);
	add_node(w, "m0", 2, ",\"kerf.io/pool\":\"m\",\"kerf.io/mig-gpus\":\"1\"", false);
	add_node(w, "s0", 1, ",\"kerf.io/pool\":\"s\"", false);
	add_tenant(w, "team-a", NULL, 100000, KERF_QTY_INF);
	add_tenant(w, "team-b", NULL, 100000, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	assert_int_equal(kerf_world_namespace_set(w, "b", "team-b", &err), 0);
	add_pod_on(w, "a", "w2", ",\"nvidia.com/gpu\":\"2\"", "", "g");
	add_pod_on(w, "b", "w1", ",\"nvidia.com/gpu\":\"1\"", "", "g");
	add_pod_on(w, "a", "mig", ",\"nvidia.com/mig-3g.20gb\":\"1\"", "", "m");
	snprintf(ann, sizeof(ann), "%s\"250m\"", mps);
	add_pod_on(w, "a", "f1", "", ann, "s");
	snprintf(ann, sizeof(ann), "%s\"500m\"", mps);
	add_pod_on(w, "b", "f2", "", ann, "s");
	kerf_actions_init(&acts);
	if (kerf_world_cycle(w, NOW, &acts, &err) < 0)
		fail_msg("cycle: %s", err.msg);
	kerf_actions_release(&acts);

	l = get(w, "GET", "/api/v1/gpus", 200);
	if (getenv("KERF_API_DEBUG"))
		json_dumpf(l, stderr, JSON_INDENT(1));
	assert_string_equal(str(l, "kind"), "GPUList");
	assert_string_equal(str(l, "apiVersion"), KERF_API_VERSION);
	assert_int_equal(json_array_size(json_object_get(l, "items")), 7);
	/* by node rank (ties by name), then index */
	json_array_foreach(json_object_get(l, "items"), i, it) {
		static const char *const order[] = { "g0", "g0", "g0", "g0", "m0", "m0", "s0" };
		static const int index[] = { 0, 1, 2, 3, 0, 1, 0 };

		assert_string_equal(str(it, "node"), order[i]);
		assert_int_equal(num(it, "index"), index[i]);
		assert_string_equal(str(it, "model"), "A100-SXM4-40GB");
		assert_int_equal(num(it, "memoryMiB"), 40960);
		assert_int_equal(json_object_get(it, "mig") != NULL, !strcmp(str(it, "mode"), "mig"));
	}
	/* g0: three GPUs whole (two team-a's, one team-b's), GPU 3 down and free */
	for (int k = 0; k < 3; k++) {
		g = gpu_item(l, "g0", k);
		assert_string_equal(str(g, "health"), "ok");
		assert_string_equal(str(g, "mode"), "whole");
		assert_int_equal(num(g, "freeMilli"), 0);
		assert_int_equal(json_array_size(json_object_get(g, "pods")), 1);
		p = json_array_get(json_object_get(g, "pods"), 0);
		assert_int_equal(num(p, "gpuMilli"), 1000);
		assert_string_equal(str(p, "share"), "whole");
		assert_string_equal(str(g, "tenant"), str(p, "tenant"));
		whole += !strcmp(str(p, "name"), "w2") ? 10 : 1;
		assert_string_equal(str(p, "namespace"), !strcmp(str(p, "name"), "w2") ? "a" : "b");
		assert_string_equal(str(p, "tenant"), !strcmp(str(p, "name"), "w2") ? "team-a" : "team-b");
	}
	assert_int_equal(whole, 21);
	g = gpu_item(l, "g0", 3);
	assert_string_equal(str(g, "health"), "down");
	assert_string_equal(str(g, "mode"), "free");
	assert_int_equal(num(g, "freeMilli"), 1000);
	assert_true(json_is_null(json_object_get(g, "tenant")));
	assert_int_equal(json_array_size(json_object_get(g, "pods")), 0);
	/* m0: GPU 0 in MIG mode (nothing free to whole or shared pods), a/mig on a 3g instance */
	g = gpu_item(l, "m0", 0);
	assert_string_equal(str(g, "mode"), "mig");
	assert_int_equal(num(g, "freeMilli"), 0);
	assert_string_equal(str(g, "tenant"), "team-a");
	p = json_array_get(json_object_get(g, "pods"), 0);
	assert_string_equal(str(p, "name"), "mig");
	assert_string_equal(str(p, "share"), "mig");
	assert_true(num(p, "gpuMilli") > 0 && num(p, "gpuMilli") < 1000);
	mig = json_object_get(g, "mig");
	assert_true(json_array_size(mig) >= 1);
	it = NULL;
	json_array_foreach(mig, i, p)
		if (json_is_string(json_object_get(p, "pod")))
			it = p;
	assert_non_null(it);
	assert_string_equal(str(it, "pod"), "a/mig");
	assert_string_equal(str(it, "profile"), "3g.20gb");
	assert_string_equal(str(it, "tenant"), "team-a");
	assert_string_equal(str(it, "health"), "ok");
	g = gpu_item(l, "m0", 1);
	assert_string_equal(str(g, "mode"), "free");
	assert_int_equal(num(g, "freeMilli"), 1000);
	assert_null(json_object_get(g, "mig"));
	/* s0: two tenants' fractions by MPS: mixed, 250 milli left */
	g = gpu_item(l, "s0", 0);
	assert_string_equal(str(g, "mode"), "shared");
	assert_int_equal(num(g, "freeMilli"), 250);
	assert_true(json_is_null(json_object_get(g, "tenant")));
	assert_int_equal(json_array_size(json_object_get(g, "pods")), 2);
	p = json_array_get(json_object_get(g, "pods"), 0);
	assert_string_equal(str(p, "name"), "f1");
	assert_int_equal(num(p, "gpuMilli"), 250);
	assert_string_equal(str(p, "share"), "mps");
	p = json_array_get(json_object_get(g, "pods"), 1);
	assert_string_equal(str(p, "name"), "f2");
	assert_string_equal(str(p, "tenant"), "team-b");
	assert_int_equal(num(p, "gpuMilli"), 500);
	json_decref(l);
	kerf_world_free(w);
}

static void test_explain(void **state)
{
	struct kerf_world *w = world();
	json_t *e;
	const json_t *l, *f, *wl;

	(void)state;
	/* quota: the numbers of the flavor that does not fit */
	e = get(w, "GET", "/api/v1/explain/a/more", 200);
	assert_string_equal(str(e, "kind"), "Explanation");
	assert_string_equal(str(e, "reason"), "QuotaExceeded");
	wl = json_object_get(e, "workload");
	assert_string_equal(str(wl, "key"), "a/more");
	assert_string_equal(str(wl, "state"), "Pending");
	l = layer(e, "quota");
	assert_true(json_is_true(json_object_get(l, "blocking")));
	f = json_array_get(json_object_get(l, "flavors"), 0);
	assert_false(json_is_true(json_object_get(f, "fits")));
	assert_int_equal(num(f, "requestGPUMilli"), 8000);
	assert_int_equal(num(f, "nominalGPUMilli"), 8000);
	assert_int_equal(num(f, "usageGPUMilli"), 8000);
	assert_string_equal(str(f, "limitedBy"), "team-a");
	assert_int_equal(num(f, "need"), 16000);
	assert_int_equal(num(f, "limit"), 8000);
	assert_false(json_is_true(json_object_get(layer(e, "class"), "blocking")));
	assert_int_equal(blocking(e), 1);
	json_decref(e);
	/* the same through the workloads path */
	e = get(w, "GET", "/api/v1/workloads/a/more", 200);
	assert_string_equal(str(e, "reason"), "QuotaExceeded");
	json_decref(e);
	/* capacity: no node has 16 GPUs */
	e = get(w, "GET", "/api/v1/explain/b/wide", 200);
	assert_string_equal(str(e, "reason"), "InsufficientCapacity");
	l = layer(e, "capacity");
	assert_true(json_is_true(json_object_get(l, "blocking")));
	f = json_array_get(json_object_get(l, "sets"), 0);
	assert_int_equal(num(f, "nodesFit"), 0);
	assert_int_equal(num(f, "gpusPerPod"), 16);
	assert_non_null(strstr(str(l, "message"), "0/4 nodes could take a pod of set 0"));
	assert_non_null(strstr(str(l, "message"), "1 node is cordoned"));
	assert_false(json_is_true(json_object_get(layer(e, "quota"), "blocking")));
	json_decref(e);
	/* the gang: held back by the world, before the core */
	e = get(w, "GET", "/api/v1/explain/b/g-0", 200);
	assert_string_equal(str(e, "reason"), "GangIncomplete");
	l = layer(e, "gang");
	assert_true(json_is_true(json_object_get(l, "blocking")));
	assert_int_equal(num(l, "gangSize"), 2);
	assert_int_equal(num(l, "podsThere"), 1);
	json_decref(e);
	/* a running pod: where */
	e = get(w, "GET", "/api/v1/explain/a/big", 200);
	assert_string_equal(str(json_object_get(e, "workload"), "state"), "Running");
	assert_int_equal(blocking(e), 0);
	json_decref(e);
	kerf_world_free(w);
}

static void test_errors(void **state)
{
	struct kerf_world *w = world();
	json_t *e;

	(void)state;
	e = get(w, "GET", "/api/v1/explain/a/nope", 404);
	assert_string_equal(str(e, "kind"), "Status");
	assert_string_equal(str(e, "status"), "Failure");
	assert_string_equal(str(e, "reason"), "NotFound");
	assert_int_equal(num(e, "code"), 404);
	assert_non_null(strstr(str(e, "message"), "a/nope"));
	json_decref(e);
	e = get(w, "GET", "/api/v1/pods", 404);
	assert_non_null(strstr(str(e, "message"), "/api/v1/pods"));
	json_decref(e);
	/* neither NS/POD: a/b/c, a/, /b */
	json_decref(get(w, "GET", "/api/v1/explain/a/b/c", 404));
	json_decref(get(w, "GET", "/api/v1/explain/a/", 404));
	json_decref(get(w, "GET", "/api/v1/explain//b", 404));
	e = get(w, "POST", "/api/v1/tenants", 405);
	assert_string_equal(str(e, "reason"), "MethodNotAllowed");
	json_decref(e);
	json_decref(get(w, "DELETE", "/api/v1/explain/a/more", 405));
	json_decref(get(w, "HEAD", "/api/v1/nodes", 200));
	kerf_world_free(w);
}

/* GET /api/v1/state: the world's state as a document that loads again. */
static void test_state(void **state)
{
	struct kerf_world *w = world();
	const struct kerf_state *ws = kerf_world_state(w);
	json_t *d = get(w, "GET", "/api/v1/state", 200);
	struct kerf_state st;
	struct kerf_state_doc_info info;
	struct kerf_persist hist;
	struct kerf_err err = { 0 };
	size_t live = 0;

	(void)state;
	assert_string_equal(str(d, "kind"), "State");
	assert_string_equal(str(d, "apiVersion"), KERF_API_VERSION);
	assert_int_equal(num(d, "nowMs"), NOW);
	for (size_t i = 0; i < ws->nr_wl; i++)
		live += ws->wl[i]->state != KERF_WL_FINISHED;
	assert_int_equal(json_array_size(json_object_get(d, "workloads")), live);
	if (kerf_state_doc_decode(d, &st, &info, &hist, &err) < 0)
		fail_msg("the state does not load: %s", err.msg);
	assert_int_equal(st.cluster.nr_nodes, ws->cluster.nr_nodes);
	assert_int_equal(st.nr_wl, live);
	assert_int_equal(st.tenants.nr, ws->tenants.nr);
	assert_true(info.history);
	kerf_persist_release(&hist);
	kerf_state_release(&st);
	json_decref(d);
	kerf_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tenants),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
