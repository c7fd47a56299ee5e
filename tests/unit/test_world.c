/*
 * test_world: kerf serve's world fed Pods and Nodes as the API server
 * sends them (JSON, decoded by kobj): single pods bound with devices,
 * gangs placed whole or not at all, quota and tenant reasons on every
 * pod, invalid pods told why, other schedulers' GPU pods counted, a
 * restart that adopts what runs and places nothing twice, preemption
 * through the checkpoint handshake, node deletion, label and taint terms
 * interned as pods and nodes need them.  The core's invariants hold after
 * every call.  A seeded property test drives random pods, gangs, nodes,
 * deletions and phases, replaying every binding as the API server would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "kobj/names.h"
#include "kobj/pdb.h"
#include "serve/world.h"
#include "serve/world_int.h"

#define T0 1767225600000LL      /* 2026-01-01T00:00:00Z */

struct ps {
	char ns[32], name[64];
	const char *sched;          /* NULL: kerf */
	int gpus;
	int milli;                  /* fraction (annotation); 0 */
	char gang[32];
	int gang_size;
	char node[256];             /* "" unbound */
	const char *phase;          /* NULL: Pending */
	const char *pclass;
	char ann[256];              /* extra annotations, JSON members */
	const char *spec;           /* extra spec members */
	const char *labels;         /* extra label members */
	int created_s;
	bool terminating;           /* metadata.deletionTimestamp set */
};

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad test JSON: %s at %d: %s", e.text, e.position, text);
	return j;
}

static void state_ok(const struct kerf_world *w)
{
	struct kerf_err err = { 0 };

	if (kerf_state_check(kerf_world_state(w), &err) < 0)
		fail_msg("state check: %s", err.msg);
}

static void pod_json(const struct ps *p, char *text, size_t size)
{
	char res[128] = "", labels[128] = "", ann[512] = "", spec[1024] = "";

	if (p->gpus)
		snprintf(res, sizeof(res), ",\"nvidia.com/gpu\":\"%d\"", p->gpus);
	if (p->gang[0])
		snprintf(labels, sizeof(labels), "\"kerf.io/gang\":\"%s\"", p->gang);
	if (p->labels)
		snprintf(labels + strlen(labels), sizeof(labels) - strlen(labels), "%s%s",
			 labels[0] ? "," : "", p->labels);
	snprintf(ann, sizeof(ann), "%s", p->ann);
	if (p->gang_size)
		snprintf(ann + strlen(ann), sizeof(ann) - strlen(ann),
			 "%s\"kerf.io/gang-size\":\"%d\"", ann[0] ? "," : "", p->gang_size);
	if (p->milli)
		snprintf(ann + strlen(ann), sizeof(ann) - strlen(ann),
			 "%s\"kerf.io/gpu-fraction\":\"%dm\"", ann[0] ? "," : "", p->milli);
	snprintf(spec, sizeof(spec), "\"schedulerName\":\"%s\"", p->sched ? p->sched : "kerf");
	if (p->node[0])
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec),
			 ",\"nodeName\":\"%s\"", p->node);
	if (p->pclass)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec),
			 ",\"priorityClassName\":\"%s\"", p->pclass);
	if (p->spec)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), ",%s", p->spec);
	snprintf(text, size,
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"uid-%s-%s\","
		 "\"creationTimestamp\":\"2026-01-01T00:%02d:%02dZ\",%s\"labels\":{%s},"
		 "\"annotations\":{%s}},\"spec\":{%s,\"containers\":[{\"name\":\"c\","
		 "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"%s}}}]},"
		 "\"status\":{\"phase\":\"%s\"}}",
		 p->name, p->ns, p->ns, p->name, p->created_s / 60 % 60, p->created_s % 60,
		 p->terminating ? "\"deletionTimestamp\":\"2026-01-01T00:00:20Z\"," : "",
		 labels, ann, spec, res, p->phase ? p->phase : "Pending");
}

static int pod_set_rc(struct kerf_world *w, const struct ps *p, int64_t now,
		      struct kerf_err *err)
{
	char text[4096];
	struct kerf_kpod k;
	json_t *j;
	int rc;

	pod_json(p, text, sizeof(text));
	j = parse(text);
	rc = kerf_kpod_decode(j, &k, err);
	json_decref(j);
	if (rc < 0)
		fail_msg("pod decode: %s", err->msg);
	rc = kerf_world_pod_set(w, &k, now, err);
	state_ok(w);
	return rc;
}

static void pod_set(struct kerf_world *w, const struct ps *p, int64_t now)
{
	struct kerf_err err = { 0 };

	if (pod_set_rc(w, p, now, &err) < 0)
		fail_msg("pod set: %s", err.msg);
}

static void pod_del(struct kerf_world *w, const char *ns, const char *name, int64_t now)
{
	struct kerf_err err = { 0 };

	if (kerf_world_pod_delete(w, ns, name, now, &err) < 0)
		fail_msg("pod delete: %s", err.msg);
	state_ok(w);
}

/* Node name with the annotation members ann (JSON, or NULL). */
static void node_set_ann(struct kerf_world *w, const char *name, int gpus,
			 const char *labels, const char *ann, const char *spec,
			 int64_t now)
{
	char text[2048];
	struct kerf_err err = { 0 };
	struct kerf_knode n;
	json_t *j;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"uid\":\"u-%s\",\"labels\":{"
		 "\"nvidia.com/gpu.product\":\"NVIDIA-H100-80GB-HBM3\","
		 "\"nvidia.com/gpu.memory\":\"81559\"%s%s},\"annotations\":{%s}},"
		 "\"spec\":{%s},\"status\":{"
		 "\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"%d\"},"
		 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
		 name, name, labels && *labels ? "," : "", labels ? labels : "",
		 ann ? ann : "", spec ? spec : "", gpus);
	j = parse(text);
	if (kerf_knode_decode(j, &n, &err) < 0)
		fail_msg("node decode: %s", err.msg);
	json_decref(j);
	if (kerf_world_node_set(w, &n, now, &err) < 0)
		fail_msg("node set: %s", err.msg);
	state_ok(w);
}

static void node_set(struct kerf_world *w, const char *name, int gpus,
		     const char *labels, const char *spec, int64_t now)
{
	node_set_ann(w, name, gpus, labels, NULL, spec, now);
}

static void tenant(struct kerf_world *w, const char *name, const char *parent,
		   int64_t gpu_nominal, int64_t gpu_borrow)
{
	struct kerf_tenant_spec s = { .name = name, .weight = 1 };
	struct kerf_err err = { 0 };

	kerf_quota_default(&s.quota);
	s.quota.nominal.v[KERF_RES_GPU0] = gpu_nominal;
	s.quota.borrow_limit.v[KERF_RES_GPU0] = gpu_borrow;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		s.budget_model_weight_pct[m] = 100;
	if (kerf_world_tenant_set(w, &s, parent, &err) < 0)
		fail_msg("tenant: %s", err.msg);
	state_ok(w);
}

static struct kerf_world *world(void)
{
	struct kerf_world_config cfg = { .scheduler_name = "kerf", .seed = 1 };
	struct kerf_world *w;
	struct kerf_err err = { 0 };

	if (kerf_world_new(&cfg, &w, &err) < 0)
		fail_msg("world: %s", err.msg);
	state_ok(w);
	return w;
}

static void cycle(struct kerf_world *w, int64_t now, struct kerf_actions *a)
{
	struct kerf_err err = { 0 };

	kerf_actions_clear(a);
	if (kerf_world_cycle(w, now, a, &err) < 0)
		fail_msg("cycle: %s", err.msg);
	state_ok(w);
	if (getenv("KERF_WORLD_DEBUG"))
		for (size_t i = 0; i < a->nr; i++)
			fprintf(stderr, "  %d %s/%s node=%s gpus=%s reason=%s msg=%s\n",
				a->a[i].kind, a->a[i].ns, a->a[i].name, a->a[i].node,
				a->a[i].gpus, a->a[i].reason, a->a[i].message);
}

static size_t count(const struct kerf_actions *a, uint8_t kind, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nr; i++)
		n += a->a[i].kind == kind && (!name || !strncmp(a->a[i].name, name, strlen(name)));
	return n;
}

static const struct kerf_action *find(const struct kerf_actions *a, uint8_t kind,
				      const char *name)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->a[i].kind == kind && !strcmp(a->a[i].name, name))
			return &a->a[i];
	return NULL;
}

static struct ps pod(const char *ns, const char *name, int gpus)
{
	struct ps p = { .gpus = gpus };

	snprintf(p.ns, sizeof(p.ns), "%s", ns);
	snprintf(p.name, sizeof(p.name), "%s", name);
	return p;
}

/* Pod PREFIX-i of gang (of size) in namespace ns. */
static struct ps gang_pod(const char *ns, const char *prefix, int i,
			  const char *gang, int size, int gpus)
{
	char name[32];
	struct ps p;

	snprintf(name, sizeof(name), "%s-%d", prefix, i);
	p = pod(ns, name, gpus);
	snprintf(p.gang, sizeof(p.gang), "%s", gang);
	p.gang_size = size;
	return p;
}

/* The pod as the API server has it after kerf's binding. */
static void bound(struct ps *p, const struct kerf_action *a)
{
	snprintf(p->node, sizeof(p->node), "%s", a->node);
	snprintf(p->ann, sizeof(p->ann), "\"kerf.io/assigned-gpus\":\"%s\"", a->gpus);
}

/* Two nodes of 8 GPUs; team-a (namespace a), team-b (b). */
static struct kerf_world *cluster(int nodes, int64_t a_nominal, int64_t a_borrow)
{
	struct kerf_world *w = world();
	struct kerf_err err = { 0 };

	for (int i = 0; i < nodes; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		node_set(w, name, 8, NULL, NULL, T0);
	}
	tenant(w, "team-a", NULL, a_nominal, a_borrow);
	tenant(w, "team-b", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	assert_int_equal(kerf_world_namespace_set(w, "b", "team-b", &err), 0);
	return w;
}

/* A list that grew past KERF_ACTIONS_KEEP gives its storage back. */
static void test_actions_clear(void **state)
{
	struct kerf_actions l;

	(void)state;
	kerf_actions_init(&l);
	for (int n = 0; n < 2; n++) {
		size_t want = n ? KERF_ACTIONS_KEEP + 1 : 10;

		for (size_t i = 0; i < want; i++)
			assert_non_null(kerf_world_action(&l));
		assert_int_equal(l.nr, want);
		kerf_actions_clear(&l);
		assert_int_equal(l.nr, 0);
		if (n) {
			assert_null(l.a);
			assert_int_equal(l.alloc, 0);
		} else {
			assert_non_null(l.a);   /* small: kept for the next cycle */
		}
	}
	kerf_actions_release(&l);
}

static void test_single(void **state)
{
	struct kerf_world *w = cluster(2, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps p = pod("a", "p1", 2);
	const struct kerf_action *b;

	(void)state;
	kerf_actions_init(&a);
	pod_set(w, &p, T0);
	assert_string_equal(kerf_world_pod_workload(w, "a", "p1"), "a/p1");
	cycle(w, T0 + 1000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 1);
	b = find(&a, KERF_ACT_BIND, "p1");
	assert_non_null(b);
	assert_string_equal(b->node, "n0");
	assert_string_equal(b->gpus, "0,1");
	assert_string_equal(b->ns, "a");
	assert_string_equal(b->uid, "uid-a-p1");
	/* the binding comes back; running; done: finished and forgotten */
	bound(&p, b);
	pod_set(w, &p, T0 + 2000);
	cycle(w, T0 + 3000, &a);
	assert_int_equal(a.nr, 0);
	p.phase = "Running";
	pod_set(w, &p, T0 + 4000);
	p.phase = "Succeeded";
	pod_set(w, &p, T0 + 5000);
	assert_int_equal(kerf_world_stats(w)->nr_finished, 1);
	assert_int_equal(kerf_world_state(w)->nr_wl, 0);
	pod_del(w, "a", "p1", T0 + 6000);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_gang_whole(void **state)
{
	struct kerf_world *w = cluster(2, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps p[4];

	(void)state;
	kerf_actions_init(&a);
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g-%d", i);
		p[i] = pod("a", name, 4);
		snprintf(p[i].gang, sizeof(p[i].gang), "train");
		p[i].gang_size = 4;
		p[i].created_s = 10 - i;
	}
	for (int i = 0; i < 3; i++)
		pod_set(w, &p[i], T0 + i);
	cycle(w, T0 + 100, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	assert_int_equal(count(&a, KERF_ACT_PENDING, NULL), 3);
	assert_string_equal(a.a[0].reason, "GangIncomplete");
	assert_non_null(strstr(a.a[0].message, "GangIncomplete: 3 of 4 pods"));
	assert_string_equal(kerf_world_pod_workload(w, "a", "g-0"), "a/gang:train");
	/* told once */
	cycle(w, T0 + 200, &a);
	assert_int_equal(a.nr, 0);
	pod_set(w, &p[3], T0 + 300);
	cycle(w, T0 + 400, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 4);
	for (size_t i = 1; i < a.nr; i++)
		assert_int_equal(a.a[i].group, a.a[0].group);
	/* pods of a set in name order: g-0 and g-1 on n0 */
	assert_string_equal(find(&a, KERF_ACT_BIND, "g-0")->node, "n0");
	assert_string_equal(find(&a, KERF_ACT_BIND, "g-3")->node, "n1");
	/* submitted at the earliest member's creation */
	assert_int_equal(kerf_state_find_key(kerf_world_state(w), "a/gang:train")->submit_ms,
			 T0 + 7000);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_gang_quota_and_tenants(void **state)
{
	struct kerf_world *w = cluster(2, 8000, 0);
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	struct ps p;

	(void)state;
	kerf_actions_init(&a);
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "q-%d", i);
		p = pod("a", name, 4);
		snprintf(p.gang, sizeof(p.gang), "big");
		p.gang_size = 4;
		pod_set(w, &p, T0);
	}
	/* no tenant: told so */
	p = pod("c", "lost", 0);
	pod_set(w, &p, T0);
	assert_null(kerf_world_pod_workload(w, "c", "lost"));
	/* too many pods in a gang, sizes that disagree */
	for (int i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "d-%d", i);
		p = pod("b", name, 1);
		snprintf(p.gang, sizeof(p.gang), "odd");
		p.gang_size = 2 + i;
		pod_set(w, &p, T0);
	}
	cycle(w, T0 + 1000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	assert_int_equal(count(&a, KERF_ACT_PENDING, "q-"), 4);
	for (size_t i = 0; i < a.nr; i++) {
		if (strncmp(a.a[i].name, "q-", 2))
			continue;
		assert_string_equal(a.a[i].reason, "Unschedulable");
		assert_non_null(strstr(a.a[i].message, "over its limit 8000"));
	}
	assert_string_equal(find(&a, KERF_ACT_PENDING, "lost")->reason, "NoTenant");
	assert_non_null(strstr(find(&a, KERF_ACT_PENDING, "lost")->message, "namespace 'c'"));
	assert_string_equal(find(&a, KERF_ACT_PENDING, "d-0")->reason, "InvalidSpec");
	assert_non_null(strstr(find(&a, KERF_ACT_PENDING, "d-1")->message, "disagree"));
	/* the namespace joins a tenant: placed */
	assert_int_equal(kerf_world_namespace_set(w, "c", "team-b", &err), 0);
	state_ok(w);
	cycle(w, T0 + 2000, &a);
	assert_non_null(find(&a, KERF_ACT_BIND, "lost"));
	/* more quota: the gang goes */
	tenant(w, "team-a", NULL, 16000, 0);
	cycle(w, T0 + 3000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, "q-"), 4);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_invalid(void **state)
{
	struct kerf_world *w = cluster(1, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps p;

	(void)state;
	kerf_actions_init(&a);
	p = pod("a", "bad-size", 1);
	snprintf(p.ann, sizeof(p.ann), "\"kerf.io/gang-size\":\"zero\"");
	snprintf(p.gang, sizeof(p.gang), "x");
	pod_set(w, &p, T0);
	p = pod("a", "affine", 1);
	p.spec = "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
		 "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"In\","
		 "\"values\":[\"v\"]}]}]}}}";
	pod_set(w, &p, T0);
	p = pod("a", "mig", 0);
	p.spec = NULL;
	pod_set(w, &p, T0);   /* no GPU at all: placed like any pod */
	p = pod("a", "nosize", 1);
	snprintf(p.gang, sizeof(p.gang), "y");
	pod_set(w, &p, T0);
	cycle(w, T0 + 1000, &a);
	assert_string_equal(find(&a, KERF_ACT_PENDING, "bad-size")->reason, "InvalidSpec");
	assert_non_null(strstr(find(&a, KERF_ACT_PENDING, "bad-size")->message, "gang-size"));
	assert_string_equal(find(&a, KERF_ACT_PENDING, "affine")->reason, "UnsupportedAffinity");
	assert_string_equal(find(&a, KERF_ACT_PENDING, "nosize")->reason, "InvalidSpec");
	assert_non_null(find(&a, KERF_ACT_BIND, "mig"));
	assert_int_equal(kerf_world_stats(w)->nr_invalid, 3);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 1);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_external(void **state)
{
	struct kerf_world *w = cluster(1, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps p;

	(void)state;
	kerf_actions_init(&a);
	/* another scheduler's pod holds 6 of n0's 8 GPUs (its node unknown first) */
	p = pod("other", "ext", 6);
	p.sched = "default-scheduler";
	snprintf(p.node, sizeof(p.node), "n9");
	pod_set(w, &p, T0);
	assert_int_equal(kerf_world_stats(w)->nr_external, 0);
	assert_int_equal(kerf_world_stats(w)->nr_conflicts, 1);
	snprintf(p.node, sizeof(p.node), "n0");
	pod_set(w, &p, T0);
	assert_int_equal(kerf_world_stats(w)->nr_external, 1);
	assert_null(kerf_world_pod_workload(w, "other", "ext"));
	p = pod("a", "want2", 2);
	pod_set(w, &p, T0);
	cycle(w, T0 + 500, &a);
	assert_string_equal(find(&a, KERF_ACT_BIND, "want2")->gpus, "6,7");
	p = pod("a", "want4", 4);
	pod_set(w, &p, T0);
	cycle(w, T0 + 1000, &a);
	assert_null(find(&a, KERF_ACT_BIND, "want4"));
	/* it ends: its GPUs are free */
	p = pod("other", "ext", 6);
	p.sched = "default-scheduler";
	snprintf(p.node, sizeof(p.node), "n0");
	p.phase = "Succeeded";
	pod_set(w, &p, T0 + 2000);
	cycle(w, T0 + 3000, &a);
	assert_string_equal(find(&a, KERF_ACT_BIND, "want4")->gpus, "0,1,2,3");
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* A restart: a second world fed the same bound pods adopts them. */
static void test_restart(void **state)
{
	struct kerf_world *w = cluster(2, 0, KERF_QTY_INF), *w2;
	struct kerf_actions a;
	struct ps p[3];

	(void)state;
	kerf_actions_init(&a);
	for (int i = 0; i < 2; i++) {
		p[i] = gang_pod("a", "r", i, "g", 2, 4);
		pod_set(w, &p[i], T0);
	}
	p[2] = pod("b", "s", 6);
	pod_set(w, &p[2], T0);
	cycle(w, T0 + 1000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 3);
	for (int i = 0; i < 3; i++) {
		bound(&p[i], find(&a, KERF_ACT_BIND, p[i].name));
		pod_set(w, &p[i], T0 + 2000);
	}
	w2 = cluster(2, 0, KERF_QTY_INF);
	for (int i = 2; i >= 0; i--) {
		p[i].phase = "Running";
		pod_set(w2, &p[i], T0 + 3000);
	}
	assert_int_equal(kerf_world_stats(w2)->nr_adopted, 2);
	cycle(w2, T0 + 4000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	/* the GPUs are where the annotations say */
	for (int k = 0; k < 2; k++) {
		const struct kerf_node *n0 = &kerf_world_state(w)->cluster.nodes[k];
		const struct kerf_node *n1 = &kerf_world_state(w2)->cluster.nodes[k];

		assert_string_equal(n0->name, n1->name);
		assert_memory_equal(n0->gpu_free_milli, n1->gpu_free_milli,
				    sizeof(n0->gpu_free_milli));
	}
	/* a partly bound gang: the bound pod is counted, nothing placed */
	{
		struct ps q[2];

		for (int i = 0; i < 2; i++) {
			char name[16];

			snprintf(name, sizeof(name), "h-%d", i);
			q[i] = pod("a", name, 2);
			snprintf(q[i].gang, sizeof(q[i].gang), "half");
			q[i].gang_size = 2;
		}
		snprintf(q[0].node, sizeof(q[0].node), "n1");
		pod_set(w2, &q[1], T0 + 5000);
		pod_set(w2, &q[0], T0 + 5000);
		cycle(w2, T0 + 6000, &a);
		/* no plan on the pod left: the bound one is evicted, told why */
		assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
		assert_string_equal(find(&a, KERF_ACT_EVICT, "h-0")->reason, "GangPlanUndone");
		assert_non_null(strstr(find(&a, KERF_ACT_EVICT, "h-0")->message,
				       "has no kerf.io/planned-node"));
		assert_string_equal(find(&a, KERF_ACT_PENDING, "h-1")->reason, "GangPlanUndone");
		assert_int_equal(kerf_world_stats(w2)->nr_partial, 1);
		assert_int_equal(kerf_world_stats(w2)->nr_plans_undone, 1);
		/* and it is not placed or adopted again while it leaves */
		cycle(w2, T0 + 7000, &a);
		assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
		assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 0);
	}
	kerf_actions_release(&a);
	kerf_world_free(w);
	kerf_world_free(w2);
}

/* The pod as it is after its gang's plan patch (bound: and its binding). */
static void planned(struct ps *p, const struct kerf_action *a, bool is_bound)
{
	snprintf(p->ann, sizeof(p->ann),
		 "\"kerf.io/planned-node\":\"%.64s\",\"kerf.io/assigned-gpus\":\"%.60s\"",
		 a->node, a->gpus);
	if (is_bound)
		snprintf(p->node, sizeof(p->node), "%.64s", a->node);
}

/*
 * A gang's plan: kerf stopped after the first of its bindings.  A new
 * kerf finishes the gang where the plan says (the GPUs held, nobody else
 * gets them), or, when the plan cannot be carried out, evicts what was
 * bound.  A plan that could not be written puts the gang back in line.
 */
static void test_gang_plan(void **state)
{
	struct kerf_world *w = cluster(2, 0, KERF_QTY_INF), *w2, *w3;
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	struct ps p[4], other = pod("b", "other", 4);
	struct kerf_action plan[4];
	uint32_t group;

	(void)state;
	kerf_actions_init(&a);
	for (int i = 0; i < 4; i++) {
		p[i] = gang_pod("a", "g", i, "g", 4, 4);
		pod_set(w, &p[i], T0);
	}
	cycle(w, T0 + 1000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 4);
	for (int i = 0; i < 4; i++)
		plan[i] = *find(&a, KERF_ACT_BIND, p[i].name);
	group = plan[0].group;

	/* the plan could not be written: nothing bound, placed again */
	assert_int_equal(kerf_world_unplace(w, group, T0 + 1500, &err), 0);
	state_ok(w);
	assert_int_equal(kerf_world_stats(w)->nr_unplaced, 1);
	cycle(w, T0 + 2000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 4);
	for (int i = 0; i < 4; i++)
		plan[i] = *find(&a, KERF_ACT_BIND, p[i].name);
	/* once a pod is bound, it is not undone from here */
	planned(&p[0], &plan[0], true);
	pod_set(w, &p[0], T0 + 2500);
	assert_int_equal(kerf_world_unplace(w, plan[0].group, T0 + 2500, &err), 0);
	assert_int_equal(kerf_world_stats(w)->nr_unplaced, 1);

	/* a restart after the first binding: the rest bound where planned */
	w2 = cluster(2, 0, KERF_QTY_INF);
	for (int i = 3; i >= 0; i--) {
		planned(&p[i], &plan[i], i == 0);
		pod_set(w2, &p[i], T0 + 3000);
	}
	other.created_s = 1;
	pod_set(w2, &other, T0 + 3000);
	cycle(w2, T0 + 4000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, "g-"), 3);
	assert_null(find(&a, KERF_ACT_BIND, "g-0"));
	for (int i = 1; i < 4; i++) {
		const struct kerf_action *b = find(&a, KERF_ACT_BIND, p[i].name);

		assert_string_equal(b->node, plan[i].node);
		assert_string_equal(b->gpus, plan[i].gpus);
		assert_int_equal(b->group, find(&a, KERF_ACT_BIND, p[1].name)->group);
	}
	/* every GPU is the gang's: the other pod waits */
	assert_null(find(&a, KERF_ACT_BIND, "other"));
	assert_int_equal(kerf_world_stats(w2)->nr_plans_finished, 1);
	assert_int_equal(kerf_world_stats(w2)->nr_partial, 1);
	for (int k = 0; k < 2; k++)
		assert_memory_equal(kerf_world_state(w)->cluster.nodes[k].gpu_free_milli,
				    kerf_world_state(w2)->cluster.nodes[k].gpu_free_milli,
				    sizeof(kerf_world_state(w)->cluster.nodes[k].gpu_free_milli));
	/* the bindings land: nothing more to do */
	for (int i = 1; i < 4; i++) {
		snprintf(p[i].node, sizeof(p[i].node), "%s", plan[i].node);
		pod_set(w2, &p[i], T0 + 5000);
	}
	cycle(w2, T0 + 6000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 0);

	/* the planned node is gone: what was bound is evicted */
	w3 = world();
	node_set(w3, plan[0].node, 8, NULL, NULL, T0);
	tenant(w3, "team-a", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w3, "a", "team-a", &err), 0);
	for (int i = 0; i < 4; i++) {
		p[i].node[0] = 0;
		planned(&p[i], &plan[i], i == 0);
		pod_set(w3, &p[i], T0 + 7000);
	}
	cycle(w3, T0 + 8000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 1);
	assert_string_equal(find(&a, KERF_ACT_EVICT, "g-0")->reason, "GangPlanUndone");
	assert_non_null(strstr(find(&a, KERF_ACT_EVICT, "g-0")->message, "kerf does not know"));
	assert_int_equal(kerf_world_stats(w3)->nr_plans_undone, 1);
	kerf_actions_release(&a);
	kerf_world_free(w);
	kerf_world_free(w2);
	kerf_world_free(w3);
}

static void test_preempt(void **state)
{
	struct kerf_world *w = cluster(1, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps low = pod("a", "low", 8), high = pod("b", "high", 8);
	const struct kerf_action *x;

	(void)state;
	kerf_actions_init(&a);
	low.pclass = "preemptible";
	high.pclass = "production";
	pod_set(w, &low, T0);
	cycle(w, T0 + 1000, &a);
	bound(&low, find(&a, KERF_ACT_BIND, "low"));
	low.phase = "Running";
	pod_set(w, &low, T0 + 2000);
	pod_set(w, &high, T0 + 10000);
	cycle(w, T0 + 11000, &a);
	x = find(&a, KERF_ACT_PREEMPT, "low");
	assert_non_null(x);
	assert_int_equal(x->at_ms, T0 + 11000 + 30000);
	assert_null(find(&a, KERF_ACT_BIND, "high"));
	/* an old checkpoint does not count; one after the request does */
	snprintf(low.ann + strlen(low.ann), sizeof(low.ann) - strlen(low.ann),
		 ",\"kerf.io/checkpoint-done\":\"2026-01-01T00:00:05Z\"");
	pod_set(w, &low, T0 + 12000);
	cycle(w, T0 + 12500, &a);
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 0);
	snprintf(low.ann + strlen(low.ann), sizeof(low.ann) - strlen(low.ann),
		 ",\"kerf.io/checkpoint-done\":\"2026-01-01T00:00:13Z\"");
	pod_set(w, &low, T0 + 13000);
	cycle(w, T0 + 14000, &a);
	assert_int_equal(a.a[0].kind, KERF_ACT_EVICT);
	assert_string_equal(a.a[0].name, "low");
	assert_non_null(strstr(a.a[0].message, "preempted"));
	/* evicted but still there: its GPUs are not given to high yet */
	assert_null(find(&a, KERF_ACT_BIND, "high"));
	{
		struct kerf_actions told;
		struct kerf_err err = { 0 };

		/* a disruption budget refuses: high's pods are told, once */
		kerf_actions_init(&told);
		assert_int_equal(kerf_world_eviction_refused(w, "a", "low", "budget says no", 10,
							     &told, &err), 0);
		assert_int_equal(told.nr, 1);
		assert_string_equal(told.a[0].name, "high");
		assert_non_null(strstr(told.a[0].message, "refused for now (budget says no)"));
		kerf_actions_clear(&told);
		assert_int_equal(kerf_world_eviction_refused(w, "a", "low", "budget says no", 10,
							     &told, &err), 0);
		assert_int_equal(told.nr, 0);
		/* a pod kerf does not know: nothing to tell */
		assert_int_equal(kerf_world_eviction_refused(w, "a", "nobody", "x", 10,
							     &told, &err), 0);
		assert_int_equal(told.nr, 0);
		kerf_actions_release(&told);
	}
	/* terminating: still held; never placed again, its updates quiet */
	low.terminating = true;
	pod_set(w, &low, T0 + 15000);
	{
		/* a restart now: the terminating pod is adopted, leaving */
		struct kerf_world *w2 = cluster(1, 0, KERF_QTY_INF);
		struct kerf_actions b;

		kerf_actions_init(&b);
		pod_set(w2, &low, T0 + 15000);
		pod_set(w2, &high, T0 + 15000);
		cycle(w2, T0 + 16000, &b);
		assert_null(find(&b, KERF_ACT_BIND, "high"));
		assert_int_equal(count(&b, KERF_ACT_PREEMPT, NULL), 0);
		pod_del(w2, "a", "low", T0 + 17000);
		cycle(w2, T0 + 18000, &b);
		assert_non_null(find(&b, KERF_ACT_BIND, "high"));
		kerf_actions_release(&b);
		kerf_world_free(w2);
	}
	cycle(w, T0 + 16000, &a);
	assert_null(find(&a, KERF_ACT_BIND, "high"));
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 0);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	/* gone: high takes its GPUs */
	pod_del(w, "a", "low", T0 + 17000);
	cycle(w, T0 + 18000, &a);
	assert_non_null(find(&a, KERF_ACT_BIND, "high"));
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* Running pods a and b of 4 GPUs each (preemptible), a labelled app=db. */
static void two_running(struct kerf_world *w, struct kerf_actions *a,
			struct ps *db, struct ps *plain)
{
	*db = pod("a", "db", 4);
	*plain = pod("a", "plain", 4);
	db->labels = "\"app\":\"db\"";
	db->pclass = plain->pclass = "preemptible";
	pod_set(w, db, T0);
	pod_set(w, plain, T0);
	cycle(w, T0 + 1000, a);
	bound(db, find(a, KERF_ACT_BIND, "db"));
	bound(plain, find(a, KERF_ACT_BIND, "plain"));
	db->phase = plain->phase = "Running";
	pod_set(w, db, T0 + 2000);
	pod_set(w, plain, T0 + 2000);
}

/*
 * A PodDisruptionBudget allowing no disruption protects the workload of a
 * pod it selects: kerf asks the unprotected one to leave, not it (by id
 * it would have gone first), nor later when only it could make room.
 */
static void test_pdb_protects(void **state)
{
	struct kerf_world *w = cluster(1, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps db, plain, high = pod("b", "high", 4), high2 = pod("b", "high2", 4);
	struct kerf_kpdb pdb;
	const struct kerf_kpdb *pdbs[] = { &pdb };
	struct kerf_err err = { 0 };
	json_t *j;

	(void)state;
	kerf_actions_init(&a);
	two_running(w, &a, &db, &plain);
	j = parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"db\",\"generation\":1},"
		  "\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"db\"}}},"
		  "\"status\":{\"observedGeneration\":1,\"disruptionsAllowed\":0}}");
	assert_int_equal(kerf_kpdb_decode(j, &pdb, &err), 0);
	json_decref(j);
	assert_int_equal(kerf_world_protect(w, pdbs, 1, &err), 0);
	high.pclass = high2.pclass = "production";
	pod_set(w, &high, T0 + 10000);
	cycle(w, T0 + 11000, &a);
	assert_non_null(find(&a, KERF_ACT_PREEMPT, "plain"));
	assert_null(find(&a, KERF_ACT_PREEMPT, "db"));
	/* a second preemptor: only db is left, and it is protected */
	pod_set(w, &high2, T0 + 12000);
	cycle(w, T0 + 13000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	kerf_kpdb_release(&pdb);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* preemptionPolicy Never: a higher pod waits, asking nobody to leave */
static void test_never_preempts(void **state)
{
	struct kerf_world *w = cluster(1, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct ps db, plain, high = pod("b", "high", 4);

	(void)state;
	kerf_actions_init(&a);
	two_running(w, &a, &db, &plain);
	high.pclass = "production";
	high.spec = "\"preemptionPolicy\":\"Never\"";
	pod_set(w, &high, T0 + 10000);
	cycle(w, T0 + 11000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	assert_null(find(&a, KERF_ACT_BIND, "high"));
	cycle(w, T0 + 20000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_node_delete(void **state)
{
	struct kerf_world *w = cluster(2, 0, KERF_QTY_INF);
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	struct ps p[3];

	(void)state;
	kerf_actions_init(&a);
	for (int i = 0; i < 2; i++) {
		p[i] = gang_pod("a", "w", i, "g", 2, 8);
		pod_set(w, &p[i], T0);
	}
	cycle(w, T0 + 1000, &a);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 2);
	for (int i = 0; i < 2; i++) {
		bound(&p[i], find(&a, KERF_ACT_BIND, p[i].name));
		pod_set(w, &p[i], T0 + 1500);
	}
	assert_int_equal(kerf_world_node_delete(w, "n1", T0 + 2000, &err), 0);
	state_ok(w);
	assert_int_equal(kerf_world_node_delete(w, "n1", T0 + 2000, &err), -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'n1'"));
	cycle(w, T0 + 3000, &a);
	/* only the survivor on n0 is evicted; nothing placed again */
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 1);
	assert_string_equal(find(&a, KERF_ACT_EVICT, "w-0")->name, "w-0");
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 0);
	assert_int_equal(kerf_world_state(w)->nr_wl, 0);
	pod_del(w, "a", "w-0", T0 + 4000);
	pod_del(w, "a", "w-1", T0 + 4000);
	p[2] = pod("a", "after", 8);
	pod_set(w, &p[2], T0 + 5000);
	cycle(w, T0 + 6000, &a);
	assert_string_equal(find(&a, KERF_ACT_BIND, "after")->node, "n0");
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void test_terms(void **state)
{
	struct kerf_world *w = world();
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	struct ps p;
	const struct kerf_state *st = kerf_world_state(w);

	(void)state;
	kerf_actions_init(&a);
	node_set(w, "n0", 8, "\"zone\":\"a\"", NULL, T0);
	node_set(w, "n1", 8, "\"zone\":\"b\"", NULL, T0);
	tenant(w, "team-a", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	assert_int_equal(st->cluster.nr_labels, 0);
	p = pod("a", "in-b", 1);
	p.spec = "\"nodeSelector\":{\"zone\":\"b\"}";
	pod_set(w, &p, T0);
	assert_int_equal(st->cluster.nr_labels, 1);
	assert_int_equal(st->cluster.nodes[1].labels, 1);
	assert_int_equal(st->cluster.nodes[0].labels, 0);
	cycle(w, T0 + 1000, &a);
	assert_string_equal(find(&a, KERF_ACT_BIND, "in-b")->node, "n1");
	/* a pod that tolerates everything, waiting; a tainted node comes */
	p = pod("a", "tolerant", 8);
	p.spec = "\"nodeSelector\":{\"zone\":\"b\"},\"tolerations\":[{\"operator\":\"Exists\"}]";
	pod_set(w, &p, T0 + 2000);
	cycle(w, T0 + 3000, &a);
	assert_null(find(&a, KERF_ACT_BIND, "tolerant"));
	node_set(w, "n2", 8, "\"zone\":\"b\"",
		 "\"taints\":[{\"key\":\"gpu\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]", T0 + 4000);
	assert_int_equal(st->cluster.nr_taints, 1);
	assert_int_equal(kerf_world_stats(w)->nr_resubmitted, 1);
	p = pod("a", "intolerant", 8);
	p.spec = "\"nodeSelector\":{\"zone\":\"b\"}";
	pod_set(w, &p, T0 + 4500);
	cycle(w, T0 + 5000, &a);
	assert_string_equal(find(&a, KERF_ACT_BIND, "tolerant")->node, "n2");
	assert_null(find(&a, KERF_ACT_BIND, "intolerant"));
	/* a cordoned node takes nothing */
	node_set(w, "n3", 8, "\"zone\":\"b\"", "\"unschedulable\":true", T0 + 6000);
	cycle(w, T0 + 7000, &a);
	assert_null(find(&a, KERF_ACT_BIND, "intolerant"));
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* --- the property test ------------------------------------------------- */

enum { PMAX = 400, NODES = 5 };

/* what the seeds exercised, for the test's output */
static uint64_t nr_binds, nr_evicts, nr_preempts, nr_gang_binds;

struct model {
	struct kerf_world *w;
	struct ps p[PMAX];
	bool live[PMAX];
	bool kerf_bound[PMAX];     /* bound by a BIND action */
	bool ever_bound[PMAX];
	bool preempted[PMAX];
	char gpus[PMAX][64];
	bool node_up[NODES];
	int nr;
	int64_t now;
	struct kerf_rng rng;
	int gangs;
};

static int node_index(const char *name)
{
	return name[0] == 'n' && name[1] >= '0' && name[1] < '0' + NODES ? name[1] - '0' : -1;
}

static void m_node_up(struct model *m, int i)
{
	char name[16];

	snprintf(name, sizeof(name), "n%d", i);
	node_set(m->w, name, 4 + 2 * i % 6, NULL, NULL, m->now);
	m->node_up[i] = true;
}

static int m_new_pod(struct model *m)
{
	int i = m->nr < PMAX ? m->nr++ : -1;

	if (i < 0)
		return -1;
	memset(&m->p[i], 0, sizeof(m->p[i]));
	m->live[i] = true;
	snprintf(m->p[i].name, sizeof(m->p[i].name), "p%d", i);
	m->p[i].created_s = i % 3600;
	return i;
}

static void m_delete(struct model *m, int i)
{
	pod_del(m->w, m->p[i].ns, m->p[i].name, m->now);
	m->live[i] = false;
	m->kerf_bound[i] = false;
}

static uint32_t rnd(struct model *m, uint32_t n)
{
	return (uint32_t)(kerf_rng_next(&m->rng) % n);
}

/* Every live pod kerf bound holds its GPUs alone (fractions add up). */
static void m_check_gpus(const struct model *m)
{
	int32_t used[NODES][16] = { { 0 } };

	for (int i = 0; i < m->nr; i++) {
		const char *s = m->gpus[i];
		int n = node_index(m->p[i].node);

		if (!m->live[i] || !m->kerf_bound[i] || n < 0 ||
		    (m->p[i].phase && strcmp(m->p[i].phase, "Running")))
			continue;
		while (*s) {
			int g = (int)strtol(s, (char **)&s, 10);

			used[n][g] += m->p[i].milli ? m->p[i].milli : 1000;
			if (used[n][g] > 1000) {
				for (int k = 0; k < m->nr; k++)
					if (m->live[k] && m->kerf_bound[k] && node_index(m->p[k].node) == n)
						fprintf(stderr, "  %s/%s gpus %s milli %d phase %s gang %s\n",
							m->p[k].ns, m->p[k].name, m->gpus[k], m->p[k].milli,
							m->p[k].phase ? m->p[k].phase : "-", m->p[k].gang);
				fail_msg("GPU %d of n%d held twice", g, n);
			}
			if (*s == ',')
				s++;
		}
	}
}

static int m_find(const struct model *m, const char *name)
{
	for (int i = 0; i < m->nr; i++)
		if (m->live[i] && !strcmp(m->p[i].name, name))
			return i;
	return -1;
}

static void m_cycle(struct model *m, struct kerf_actions *a)
{
	char gang_seen[64][32];
	int gang_binds[64], gang_size[64], nr_gangs = 0;

	cycle(m->w, m->now, a);
	for (size_t k = 0; k < a->nr; k++) {
		const struct kerf_action *x = &a->a[k];
		int i = m_find(m, x->name);

		if (i < 0)
			fail_msg("action on pod '%s' that is gone", x->name);
		switch (x->kind) {
		case KERF_ACT_BIND:
			if (m->ever_bound[i] || m->p[i].node[0])
				fail_msg("pod '%s' bound twice", x->name);
			m->ever_bound[i] = m->kerf_bound[i] = true;
			nr_binds++;
			nr_gang_binds += m->p[i].gang[0] != 0;
			snprintf(m->gpus[i], sizeof(m->gpus[i]), "%s", x->gpus);
			bound(&m->p[i], x);
			pod_set(m->w, &m->p[i], m->now);
			if (m->p[i].gang[0]) {
				int g = 0;

				while (g < nr_gangs && strcmp(gang_seen[g], m->p[i].gang))
					g++;
				if (g == nr_gangs) {
					snprintf(gang_seen[g], sizeof(gang_seen[g]), "%s", m->p[i].gang);
					gang_binds[g] = 0;
					gang_size[g] = m->p[i].gang_size;
					nr_gangs++;
				}
				gang_binds[g]++;
			}
			break;
		case KERF_ACT_EVICT:
			nr_evicts++;
			m_delete(m, i);
			break;
		case KERF_ACT_PREEMPT:
			nr_preempts++;
			m->preempted[i] = true;
			break;
		case KERF_ACT_UNPREEMPT:
			m->preempted[i] = false;
			break;
		default:
			break;
		}
	}
	for (int g = 0; g < nr_gangs; g++)
		if (gang_binds[g] != gang_size[g])
			fail_msg("gang '%s': %d of %d pods bound in one cycle", gang_seen[g],
				 gang_binds[g], gang_size[g]);
	m_check_gpus(m);
}

static void m_restart(struct model *m, struct kerf_actions *a)
{
	struct kerf_world *w2 = world();
	struct kerf_err err = { 0 };

	for (int i = 0; i < NODES; i++)
		if (m->node_up[i]) {
			char name[16];

			snprintf(name, sizeof(name), "n%d", i);
			node_set(w2, name, 4 + 2 * i % 6, NULL, NULL, m->now);
		}
	tenant(w2, "team-a", NULL, 8000, KERF_QTY_INF);
	tenant(w2, "team-b", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w2, "a", "team-a", &err), 0);
	assert_int_equal(kerf_world_namespace_set(w2, "b", "team-b", &err), 0);
	for (int i = m->nr - 1; i >= 0; i--)
		if (m->live[i])
			pod_set(w2, &m->p[i], m->now);
	cycle(w2, m->now + 1000, a);
	for (size_t k = 0; k < a->nr; k++) {
		int i = m_find(m, a->a[k].name);

		if (a->a[k].kind == KERF_ACT_BIND && i >= 0 && m->p[i].node[0])
			fail_msg("restart: pod '%s' bound again", a->a[k].name);
	}
	kerf_world_free(w2);
}

static void prop_run(uint64_t seed)
{
	struct model *m = calloc(1, sizeof(*m));
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	static const char *const ns[] = { "a", "b", "c" };
	static const char *const cls[] = { "production", "normal", "preemptible", NULL };

	assert_non_null(m);
	kerf_actions_init(&a);
	kerf_rng_seed(&m->rng, seed);
	m->w = world();
	m->now = T0;
	for (int i = 0; i < NODES - 1; i++)
		m_node_up(m, i);
	tenant(m->w, "team-a", NULL, 8000, KERF_QTY_INF);
	tenant(m->w, "team-b", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(m->w, "a", "team-a", &err), 0);
	assert_int_equal(kerf_world_namespace_set(m->w, "b", "team-b", &err), 0);
	for (int step = 0; step < 300; step++) {
		uint32_t r = rnd(m, 100);
		int i;

		m->now += 1000 + rnd(m, 20000);
		if (r < 25) {                      /* a pod */
			if ((i = m_new_pod(m)) < 0)
				continue;
			snprintf(m->p[i].ns, sizeof(m->p[i].ns), "%s", ns[rnd(m, 3)]);
			m->p[i].gpus = (int)rnd(m, 4);
			if (m->p[i].gpus == 0 && rnd(m, 2)) {
				m->p[i].milli = 250 * (1 + (int)rnd(m, 3));
			}
			m->p[i].pclass = cls[rnd(m, 4)];
			if (rnd(m, 8) == 0) {      /* another scheduler's, bound */
				int n = (int)rnd(m, NODES);

				m->p[i].sched = "default-scheduler";
				m->p[i].gpus = 1;
				m->p[i].milli = 0;
				if (!m->node_up[n]) {
					m->live[i] = false;
					continue;
				}
				snprintf(m->p[i].node, sizeof(m->p[i].node), "n%d", n);
			}
			pod_set(m->w, &m->p[i], m->now);
		} else if (r < 37) {               /* a gang */
			int size = 2 + (int)rnd(m, 3), gpus = 1 + (int)rnd(m, 3);
			const char *c = cls[rnd(m, 4)];
			const char *n = ns[rnd(m, 2)];

			m->gangs++;
			for (int k = 0; k < size; k++) {
				if ((i = m_new_pod(m)) < 0)
					break;
				snprintf(m->p[i].ns, sizeof(m->p[i].ns), "%s", n);
				snprintf(m->p[i].gang, sizeof(m->p[i].gang), "g%d", m->gangs);
				m->p[i].gang_size = size;
				m->p[i].gpus = gpus;
				m->p[i].pclass = c;
				pod_set(m->w, &m->p[i], m->now);
			}
		} else if (r < 47) {               /* a deletion */
			i = (int)rnd(m, (uint32_t)(m->nr ? m->nr : 1));
			if (i < m->nr && m->live[i])
				m_delete(m, i);
		} else if (r < 57) {               /* a phase */
			i = (int)rnd(m, (uint32_t)(m->nr ? m->nr : 1));
			/* phases only go forward: Succeeded and Failed are final */
			if (i < m->nr && m->live[i] && m->p[i].node[0] &&
			    (!m->p[i].phase || !strcmp(m->p[i].phase, "Running"))) {
				static const char *const ph[] = { "Running", "Running", "Succeeded", "Failed" };

				m->p[i].phase = ph[rnd(m, 4)];
				pod_set(m->w, &m->p[i], m->now);
			}
		} else if (r < 62) {               /* a node goes or comes */
			int n = (int)rnd(m, NODES);
			char name[16];

			snprintf(name, sizeof(name), "n%d", n);
			if (!m->node_up[n]) {
				m_node_up(m, n);
				continue;
			}
			assert_int_equal(kerf_world_node_delete(m->w, name, m->now, &err), 0);
			state_ok(m->w);
			m->node_up[n] = false;
			/* the pod garbage collector deletes what was bound there */
			for (int k = 0; k < m->nr; k++)
				if (m->live[k] && !strcmp(m->p[k].node, name))
					m_delete(m, k);
		} else if (r < 70) {               /* victims answer */
			for (int k = 0; k < m->nr; k++) {
				int64_t s = (m->now - T0) / 1000;

				if (!m->live[k] || !m->preempted[k] || rnd(m, 2))
					continue;
				snprintf(m->p[k].ann + strlen(m->p[k].ann),
					 sizeof(m->p[k].ann) - strlen(m->p[k].ann),
					 ",\"kerf.io/checkpoint-done\":\"2026-01-%02dT%02d:%02d:%02dZ\"",
					 (int)(1 + s / 86400), (int)(s / 3600 % 24), (int)(s / 60 % 60),
					 (int)(s % 60));
				m->preempted[k] = false;
				pod_set(m->w, &m->p[k], m->now);
			}
		} else {
			m_cycle(m, &a);
		}
	}
	m_cycle(m, &a);
	m_restart(m, &a);
	kerf_actions_release(&a);
	kerf_world_free(m->w);
	free(m);
}

static void test_property(void **state)
{
	const char *env = getenv("KERF_PROP_RUNS");
	int runs = env ? atoi(env) : 12;

	(void)state;
	for (int s = 1; s <= runs; s++)
		prop_run((uint64_t)s);
	print_message("# %d seeds: %" PRIu64 " binds (%" PRIu64 " of gang pods), %" PRIu64 " preemption requests, %" PRIu64 " evictions\n",
		      runs, nr_binds, nr_gang_binds, nr_preempts, nr_evicts);
}

/* A cycle binds p to gpus; the binding comes back from the API server. */
static void bound_to(struct kerf_world *w, struct kerf_actions *a, struct ps *p,
		     const char *gpus, int64_t now)
{
	const struct kerf_action *b;

	cycle(w, now, a);
	b = find(a, KERF_ACT_BIND, p->name);
	assert_non_null(b);
	assert_string_equal(b->gpus, gpus);
	bound(p, b);
	pod_set(w, p, now + 500);
}

/*
 * GPUs the node agent marks out of service: nothing new lands there until
 * the mark goes; a mark that does not read takes every GPU out; a MIG mark
 * on a GPU not in MIG mode takes that GPU out; marks beyond the node's
 * GPUs take nothing.
 */
static void test_gpus_down(void **state)
{
	struct kerf_world *w = world();
	struct kerf_err err = { 0 };
	struct kerf_actions a;
	struct ps p1 = pod("a", "p1", 1), p2 = pod("a", "p2", 1);
	const struct kerf_node *n;

	(void)state;
	kerf_actions_init(&a);
	tenant(w, "team-a", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-gpus\":\"0\"", NULL, T0);
	n = &kerf_world_state(w)->cluster.nodes[0];
	assert_int_equal(n->gpus_down, 0x1);
	pod_set(w, &p1, T0);
	pod_set(w, &p2, T0);
	bound_to(w, &a, &p1, "1", T0 + 1000);
	assert_int_equal(count(&a, KERF_ACT_BIND, NULL), 1);
	/* the mark goes: GPU 0 is used again */
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-gpus\":\"\"", NULL, T0 + 2000);
	assert_int_equal(n->gpus_down, 0);
	bound_to(w, &a, &p2, "0", T0 + 3000);
	/* down while both run: taken at once, they stay */
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-gpus\":\"0,1\"", NULL, T0 + 4000);
	assert_int_equal(n->gpus_down, 0x3);
	assert_int_equal(n->nr_pods, 2);
	/* unreadable: every GPU out; beyond the count: nothing */
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-gpus\":\"1,0\"", NULL, T0 + 5000);
	assert_int_equal(n->gpus_down, 0x3);
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-gpus\":\"5\"", NULL, T0 + 6000);
	assert_int_equal(n->gpus_down, 0);
	/* a MIG mark where no GPU is in MIG mode: that GPU out */
	node_set_ann(w, "g", 2, NULL, "\"kerf.io/unhealthy-mig\":\"1:3g.40gb@4\"", NULL, T0 + 7000);
	assert_int_equal(n->gpus_down, 0x2);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* The core's record of the workload of pod ns/name. */
static const struct kerf_workload *wl_of(const struct kerf_world *w, const char *ns,
					 const char *name)
{
	const char *key = kerf_world_pod_workload(w, ns, name);

	assert_non_null(key);
	return kerf_state_find_key(kerf_world_state(w), key);
}

/*
 * Idle samples from the node agent's kerf.io/gpu-utilization: a pod that
 * starts on a node with values is sampled with the mean of its GPUs'; an
 * update samples what runs there; a value that does not read gives no
 * sample and ends the idle stretch; a fraction pod and a GPU without a
 * value give none; an idle pod of a tenant with CheckpointEvict is asked
 * to leave after the policy's time, the busy one is not.
 */
static void test_gpu_utilization(void **state)
{
	struct kerf_world *w = world();
	struct kerf_err err = { 0 };
	struct kerf_actions a;
	struct kerf_tenant_spec t = { .name = "team-a", .weight = 1 };
	struct ps idle = pod("a", "idle", 1), busy = pod("a", "busy", 1);
	struct ps two = pod("a", "two", 2), frac = pod("a", "frac", 0);
	const char *ann = "\"kerf.io/gpu-utilization\":\"0:0,1:90,2:10,3:31\"";
	const struct kerf_action *pre;

	(void)state;
	kerf_actions_init(&a);
	kerf_quota_default(&t.quota);
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		t.budget_model_weight_pct[m] = 100;
	t.idle = (struct kerf_idle_policy){ .action = KERF_IDLE_CHECKPOINT_EVICT,
					    .below_pct = 5, .after_ms = 60000 };
	assert_int_equal(kerf_world_tenant_set(w, &t, NULL, &err), 0);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	node_set_ann(w, "g", 4, NULL, ann, NULL, T0);
	/* GPU 0 has no value on h */
	node_set_ann(w, "h", 1, NULL, "\"kerf.io/gpu-utilization\":\"1:0\"", NULL, T0);
	pod_set(w, &idle, T0);
	bound_to(w, &a, &idle, "0", T0 + 1000);
	pod_set(w, &busy, T0);
	bound_to(w, &a, &busy, "1", T0 + 2000);
	pod_set(w, &two, T0);
	bound_to(w, &a, &two, "2,3", T0 + 3000);
	frac.milli = 500;
	pod_set(w, &frac, T0);
	bound_to(w, &a, &frac, "0", T0 + 4000);
	assert_string_equal(find(&a, KERF_ACT_BIND, "frac")->node, "h");
	/* bound, not started: no sample yet */
	assert_int_equal(wl_of(w, "a", "idle")->util_pct, 100);
	assert_int_equal(kerf_world_stats(w)->nr_util_samples, 0);
	idle.phase = busy.phase = two.phase = frac.phase = "Running";
	pod_set(w, &idle, T0 + 10000);
	pod_set(w, &busy, T0 + 10000);
	pod_set(w, &two, T0 + 10000);
	pod_set(w, &frac, T0 + 10000);
	assert_int_equal(wl_of(w, "a", "idle")->util_pct, 0);
	assert_int_equal(wl_of(w, "a", "idle")->idle_since_ms, T0 + 10000);
	assert_int_equal(wl_of(w, "a", "busy")->util_pct, 90);
	assert_int_equal(wl_of(w, "a", "busy")->idle_since_ms, -1);
	assert_int_equal(wl_of(w, "a", "two")->util_pct, 21);      /* (10 + 31) / 2 */
	assert_int_equal(wl_of(w, "a", "frac")->util_pct, 100);    /* a share: none */
	assert_int_equal(wl_of(w, "a", "frac")->idle_since_ms, -1);
	assert_int_equal(kerf_world_stats(w)->nr_util_samples, 3);
	/* a value that does not read: no sample, the idle stretch ends */
	node_set_ann(w, "g", 4, NULL, "\"kerf.io/gpu-utilization\":\"0:0,1:x\"", NULL,
		     T0 + 20000);
	assert_int_equal(kerf_world_stats(w)->nr_util_unreadable, 1);
	assert_int_equal(kerf_world_stats(w)->nr_util_samples, 3);
	assert_int_equal(wl_of(w, "a", "idle")->idle_since_ms, -1);
	cycle(w, T0 + 200000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	/* readable again: the stretch starts anew; GPU 2 and 3 without a
	   value: "two" keeps its last sample */
	node_set_ann(w, "g", 4, NULL, "\"kerf.io/gpu-utilization\":\"0:0,1:90\"", NULL,
		     T0 + 300000);
	assert_int_equal(wl_of(w, "a", "idle")->idle_since_ms, T0 + 300000);
	assert_int_equal(wl_of(w, "a", "two")->util_pct, 21);
	cycle(w, T0 + 330000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 0);
	/* the policy's time: the idle pod is asked to checkpoint, no other */
	cycle(w, T0 + 360000, &a);
	assert_int_equal(count(&a, KERF_ACT_PREEMPT, NULL), 1);
	pre = find(&a, KERF_ACT_PREEMPT, "idle");
	assert_non_null(pre);
	assert_true(pre->at_ms > T0 + 360000);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/* A tenant that takes an idle policy later judges what runs from then. */
static void test_gpu_utilization_policy_later(void **state)
{
	struct kerf_world *w = world();
	struct kerf_err err = { 0 };
	struct kerf_actions a;
	struct kerf_tenant_spec t = { .name = "team-a", .weight = 1 };
	struct ps p = pod("a", "p", 1);

	(void)state;
	kerf_actions_init(&a);
	kerf_quota_default(&t.quota);
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		t.budget_model_weight_pct[m] = 100;
	assert_int_equal(kerf_world_tenant_set(w, &t, NULL, &err), 0);
	assert_int_equal(kerf_world_namespace_set(w, "a", "team-a", &err), 0);
	node_set_ann(w, "g", 1, NULL, "\"kerf.io/gpu-utilization\":\"0:0\"", NULL, T0);
	pod_set(w, &p, T0);
	bound_to(w, &a, &p, "0", T0 + 1000);
	p.phase = "Running";
	pod_set(w, &p, T0 + 2000);
	assert_int_equal(wl_of(w, "a", "p")->util_pct, 0);
	assert_int_equal(wl_of(w, "a", "p")->idle_since_ms, -1);   /* no policy */
	t.idle = (struct kerf_idle_policy){ .action = KERF_IDLE_NOTIFY, .below_pct = 5,
					    .after_ms = 1000 };
	node_set_ann(w, "other", 0, NULL, NULL, NULL, T0 + 5000);  /* the world's clock */
	assert_int_equal(kerf_world_tenant_set(w, &t, NULL, &err), 0);
	assert_int_equal(wl_of(w, "a", "p")->idle_since_ms, T0 + 5000);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

static void pool(struct kerf_world *w, const char *name, const char *sel_key,
		 const char *sel_value, int64_t now)
{
	char text[512];
	struct kerf_kobj_gpupool p;
	struct kerf_err err = { 0 };
	json_t *j;

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"gpuModel\":\"H100-80GB\","
		 "\"nodeSelector\":{\"matchLabels\":{\"%s\":\"%s\"}}}}", name, sel_key, sel_value);
	j = parse(text);
	if (kerf_kobj_gpupool_decode(j, &p, &err) < 0)
		fail_msg("pool decode: %s", err.msg);
	json_decref(j);
	if (kerf_world_pool_set(w, &p, now, &err) < 0)
		fail_msg("pool set: %s", err.msg);
	state_ok(w);
}

static const char *flavor_of(const struct kerf_world *w, const char *node)
{
	const struct kerf_cluster *c = &kerf_world_state(w)->cluster;
	int slot = kerf_cluster_find_node(c, node);

	assert_true(slot >= 0);
	return c->models[c->nodes[slot].model].name;
}

/*
 * GPUPools: a node a pool selects is of the pool's flavor (the first pool
 * by name when several select it), with the MIG geometry of its gpuModel;
 * the others keep their product label's.  A busy node keeps its flavor
 * until idle (nothing running there is evicted for a pool), then takes
 * the new one at a cycle 10 s on.  A pool deleted gives its nodes back.
 */
static void test_gpupool_flavors(void **state)
{
	struct kerf_world *w = world();
	struct kerf_actions a;
	struct kerf_world_pool_usage u;
	struct kerf_err err = { 0 };
	struct ps p = { .ns = "team-a", .name = "run", .gpus = 2,
			.node = "b", .phase = "Running",
			.ann = "\"kerf.io/assigned-gpus\":\"0,1\"" };

	(void)state;
	kerf_actions_init(&a);
	tenant(w, "team-a", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "team-a", "team-a", &err), 0);
	node_set(w, "a", 8, "\"kerf.io/pool\":\"fast\"", NULL, T0);
	node_set(w, "b", 8, NULL, NULL, T0);
	assert_string_equal(flavor_of(w, "a"), "NVIDIA-H100-80GB-HBM3");
	pod_set(w, &p, T0);
	cycle(w, T0, &a);
	pool(w, "fast", "kerf.io/pool", "fast", T0 + 1000);
	assert_string_equal(flavor_of(w, "a"), "fast");
	assert_string_equal(flavor_of(w, "b"), "NVIDIA-H100-80GB-HBM3");
	assert_non_null(kerf_world_state(w)->cluster.models[kerf_cluster_find_model(
		&kerf_world_state(w)->cluster, "fast")].mig);
	kerf_world_pool_usage(w, "fast", &u);
	assert_int_equal(u.nodes, 1);
	assert_int_equal(u.gpus, 8);
	assert_int_equal(u.allocated_milli, 0);
	/* a pool of every H100: a stays fast (first by name), b is busy */
	pool(w, "rest", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", T0 + 2000);
	assert_string_equal(flavor_of(w, "a"), "fast");
	assert_string_equal(flavor_of(w, "b"), "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(count(&a, KERF_ACT_EVICT, NULL), 0);
	kerf_world_pool_usage(w, "rest", &u);
	assert_int_equal(u.nodes, 0);
	/* idle: it takes its pool's flavor at a cycle 10 s on */
	pod_del(w, "team-a", "run", T0 + 3000);
	cycle(w, T0 + 5000, &a);
	assert_string_equal(flavor_of(w, "b"), "NVIDIA-H100-80GB-HBM3");
	cycle(w, T0 + 13000, &a);
	assert_string_equal(flavor_of(w, "b"), "rest");
	kerf_world_pool_usage(w, "rest", &u);
	assert_int_equal(u.nodes, 1);
	/* fast deleted: a is of the other pool that selects it */
	assert_int_equal(kerf_world_pool_delete(w, "fast", T0 + 14000, &err), 0);
	state_ok(w);
	assert_string_equal(flavor_of(w, "a"), "rest");
	kerf_world_pool_usage(w, "rest", &u);
	assert_int_equal(u.nodes, 2);
	assert_int_equal(u.gpus, 16);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

/*
 * A GPUPool's sharing: a pool that allows only whole GPUs (the default)
 * keeps fractions and MIG pods off its nodes, whatever they tolerate;
 * whole-GPU pods go there.
 */
static void test_gpupool_sharing(void **state)
{
	struct kerf_world *w = world();
	struct kerf_actions a;
	struct kerf_err err = { 0 };
	struct ps frac = { .ns = "team-a", .name = "frac", .milli = 500,
			   .ann = "\"kerf.io/gpu-sharing\":\"mps\"",
			   .spec = "\"tolerations\":[{\"operator\":\"Exists\"}]" };
	struct ps whole = { .ns = "team-a", .name = "whole", .gpus = 8 };
	struct kerf_world_pool_usage u;

	(void)state;
	kerf_actions_init(&a);
	tenant(w, "team-a", NULL, 0, KERF_QTY_INF);
	assert_int_equal(kerf_world_namespace_set(w, "team-a", "team-a", &err), 0);
	/* a ranks first: without the pool the fraction would go there */
	node_set(w, "a", 8, "\"kerf.io/pool\":\"whole\"", NULL, T0);
	node_set(w, "b", 8, NULL, NULL, T0);
	pool(w, "whole", "kerf.io/pool", "whole", T0);
	pod_set(w, &frac, T0);
	pod_set(w, &whole, T0);
	cycle(w, T0, &a);
	assert_non_null(find(&a, KERF_ACT_BIND, "frac"));
	assert_string_equal(find(&a, KERF_ACT_BIND, "frac")->node, "b");
	assert_non_null(find(&a, KERF_ACT_BIND, "whole"));
	assert_string_equal(find(&a, KERF_ACT_BIND, "whole")->node, "a");
	/* the pool's usage: a GPU in MIG mode with nothing on it is not
	   allocated (it shows 0 free to whole-GPU pods) */
	node_set(w, "m", 8, "\"kerf.io/pool\":\"whole\",\"kerf.io/mig-gpus\":\"2\"", NULL, T0);
	kerf_world_pool_usage(w, "whole", &u);
	assert_int_equal(u.nodes, 2);
	assert_int_equal(u.gpus, 16);
	assert_int_equal(u.mig_gpus, 2);
	assert_int_equal(u.allocated_milli, 8000);
	kerf_actions_release(&a);
	kerf_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpupool_flavors),
		cmocka_unit_test(test_gpus_down),
		cmocka_unit_test(test_gpu_utilization),
		cmocka_unit_test(test_gpu_utilization_policy_later),
		cmocka_unit_test(test_gpupool_sharing),
		cmocka_unit_test(test_actions_clear),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_gang_whole),
		cmocka_unit_test(test_gang_quota_and_tenants),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_external),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_gang_plan),
		cmocka_unit_test(test_preempt),
		cmocka_unit_test(test_pdb_protects),
		cmocka_unit_test(test_never_preempts),
		cmocka_unit_test(test_node_delete),
		cmocka_unit_test(test_terms),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
