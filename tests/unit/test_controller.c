/*
 * serve/controller: the loop against the scriptable fake API (kube/fake.h):
 * lists of nodes, namespaces, tenants and pods as a real API server sends
 * them, then one step places a 4-pod gang whole (its plan written on every
 * pod, then the first binding alone, then three more, all carrying the
 * pods' uids and GPU annotations), a pod of a namespace without a tenant
 * is told why (PodScheduled=False and an Event), a plan refused puts the
 * gang back in line, a binding found done where kerf binds counts as
 * done, nothing is decided before every cache synced, and with leader
 * election nothing is decided before the lease is held.  Bindings refused
 * with a 409 that did not land, or failed with a 500, are sent again while
 * the pod stays unbound (the fault suite found pods lost and gangs broken
 * without it).  A Tenant listed before its nodes keeps its quota.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kube/fake.h"
#include "serve_lists.h"
#include "serve/controller.h"
#include "serve/world.h"
#include "core/tenant.h"

static const char *nodes =
	"{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
	"{\"metadata\":{\"name\":\"gpu-1\",\"uid\":\"n1\",\"resourceVersion\":\"10\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\",\"nvidia.com/gpu.memory\":\"81920\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"metadata\":{\"name\":\"gpu-2\",\"uid\":\"n2\",\"resourceVersion\":\"11\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\",\"nvidia.com/gpu.memory\":\"81920\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}]}";

static const char *namespaces =
	"{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
	"{\"metadata\":{\"name\":\"team-a\",\"uid\":\"s1\",\"resourceVersion\":\"12\",\"labels\":{\"kerf.io/tenant\":\"team-a\"}}},"
	"{\"metadata\":{\"name\":\"loose\",\"uid\":\"s2\",\"resourceVersion\":\"13\"}}]}";

static const char *tenants =
	"{\"kind\":\"TenantList\",\"apiVersion\":\"kerf.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
	"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"team-a\",\"uid\":\"t1\",\"resourceVersion\":\"14\",\"generation\":1},"
	"\"spec\":{\"weight\":1}}]}";

static char pods[8192];

/* One pod of one GPU, unbound. */
static const char *solo =
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
	"{\"metadata\":{\"name\":\"solo\",\"namespace\":\"team-a\",\"uid\":\"uid-s\",\"resourceVersion\":\"20\","
	"\"creationTimestamp\":\"2026-12-02T18:31:53Z\"},"
	"\"spec\":{\"schedulerName\":\"kerf\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
	"\"status\":{\"phase\":\"Pending\"}}]}";

static void make_pods(void)
{
	char *p = pods;
	size_t left = sizeof(pods);
	int n = snprintf(p, left, "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[");

	p += n;
	left -= (size_t)n;
	for (int i = 0; i < 4; i++) {
		n = snprintf(p, left,
			     "{\"metadata\":{\"name\":\"g-%d\",\"namespace\":\"team-a\",\"uid\":\"uid-g%d\",\"resourceVersion\":\"2%d\","
			     "\"creationTimestamp\":\"2026-12-02T18:31:53Z\",\"labels\":{\"kerf.io/gang\":\"g\"},\"annotations\":{\"kerf.io/gang-size\":\"4\"}},"
			     "\"spec\":{\"schedulerName\":\"kerf\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]},"
			     "\"status\":{\"phase\":\"Pending\"}},", i, i, i);
		p += n;
		left -= (size_t)n;
	}
	snprintf(p, left,
		 "{\"metadata\":{\"name\":\"lost\",\"namespace\":\"loose\",\"uid\":\"uid-l\",\"resourceVersion\":\"30\","
		 "\"creationTimestamp\":\"2026-12-02T18:31:53Z\"},"
		 "\"spec\":{\"schedulerName\":\"kerf\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
		 "\"status\":{\"phase\":\"Pending\"}},"
		 "{\"metadata\":{\"name\":\"other\",\"namespace\":\"team-a\",\"uid\":\"uid-o\",\"resourceVersion\":\"31\"},"
		 "\"spec\":{\"schedulerName\":\"default-scheduler\",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\"}}]}");
}


/* The lists of nodes, namespaces, tenants, none, and the pods pod_list. */
static void script_lists_with(struct kerf_kube_fake *f, const char *pod_list)
{
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/nodes", 200, nodes), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/namespaces", 200, namespaces), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/kerf.io/v1alpha1/tenants", 200, tenants), 0);
	script_empty_lists(f);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/pods", 200, pod_list), 0);
}

static void script_lists(struct kerf_kube_fake *f)
{
	make_pods();
	script_lists_with(f, pods);
}

static size_t count_calls(struct kerf_kube_fake *f, const char *method,
			  const char *needle)
{
	size_t n = 0;

	for (size_t i = 0; i < kerf_kube_fake_nr_calls(f); i++) {
		const struct kerf_kube_fake_call *c = kerf_kube_fake_call(f, i);

		if (!strcmp(c->method, method) && strstr(c->path, needle))
			n++;
	}
	return n;
}

/* A fake API and the options of a controller on it (kerf, seed 1). */
static struct kerf_kube_fake *fake(struct kerf_kube_ops *ops,
				   struct kerf_controller_opts *o)
{
	struct kerf_kube_fake *f = kerf_kube_fake_new();

	assert_non_null(f);
	kerf_kube_fake_ops(f, ops);
	*o = (struct kerf_controller_opts){ .scheduler_name = "kerf", .policy = "kerf",
					    .seed = 1, .ops = ops };
	return f;
}

/* A controller on o, started (its informers list at the next poll). */
static struct kerf_controller *started(const struct kerf_controller_opts *o)
{
	struct kerf_controller *c = NULL;
	struct kerf_err err = { 0 };

	if (kerf_controller_new(o, &c, &err) < 0)
		fail_msg("new: %s", err.msg);
	assert_int_equal(kerf_controller_start(c, &err), 0);
	return c;
}

/*
 * Steps of a second, the fake answering between them, until every cache
 * has synced (at most 40); then one more step, which decides.  Returns the
 * time reached.
 */
static int64_t step_until_synced(struct kerf_kube_fake *f, struct kerf_controller *c,
				 int64_t now)
{
	for (int i = 0; i < 40 && !kerf_controller_synced(c); i++) {
		now += 1000;
		kerf_kube_fake_set_now(f, (uint64_t)now);
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	kerf_controller_step(c, now);
	assert_true(kerf_controller_synced(c));
	return now;
}

/* n plan patches and n bindings of the gang's pods g-0.., answered 2xx. */
static void script_gang(struct kerf_kube_fake *f, int n)
{
	for (int i = 0; i < n; i++) {
		char path[128];

		snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/g-%d", i);
		assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", path, 200, "{}"), 0);
		snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/g-%d/binding", i);
		assert_int_equal(kerf_kube_fake_push_answer(f, "POST", path, 201,
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}"), 0);
	}
}

static void test_gang_bound_whole(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists(f);
	script_gang(f, 4);
	assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", "/api/v1/namespaces/loose/pods/lost/status", 200, "{}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/loose/events", 201, "{}"), 0);
	c = started(&o);
	/* nothing decided before the caches synced */
	kerf_controller_step(c, now);
	assert_false(kerf_controller_synced(c));
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	kerf_kube_fake_poll(f);     /* nodes, namespaces, tenants listed */
	kerf_controller_step(c, now); /* ... then the pods' informer starts */
	assert_false(kerf_controller_synced(c));
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	kerf_kube_fake_poll(f);     /* the pods listed */
	kerf_controller_step(c, now);
	assert_true(kerf_controller_synced(c));
	if (kerf_controller_stats(c)->world_errors)
		fail_msg("world: %s", kerf_controller_stats(c)->last_error);
	/* the gang whole: its plan on every pod first, no binding yet */
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 4);
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	assert_int_equal(kerf_controller_stats(c)->plans_sent, 4);
	/* the pod without a tenant is told why */
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/loose/pods/lost/status"), 1);
	assert_int_equal(count_calls(f, "POST", "/namespaces/loose/events"), 1);
	assert_int_equal(count_calls(f, "POST", "/pods/other"), 0);
	/* the plan written: the first binding alone, then the rest */
	kerf_kube_fake_poll(f);
	assert_int_equal(count_calls(f, "POST", "/binding"), 1);
	kerf_kube_fake_poll(f);
	assert_int_equal(count_calls(f, "POST", "/binding"), 4);
	assert_int_equal(kerf_controller_stats(c)->binds_sent, 4);
	kerf_kube_fake_poll(f);
	assert_int_equal(kerf_controller_stats(c)->binds_ok, 4);
	assert_int_equal(kerf_controller_in_flight(c), 0);
	/* the next step decides nothing new */
	kerf_controller_step(c, now + 10);
	assert_int_equal(count_calls(f, "POST", "/binding"), 4);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A plan patch refused (the pod gone): nothing of the gang is bound, and
 * it is placed again; a binding refused because the pod is bound where
 * kerf binds it counts as done.
 */
static void test_gang_plan_refused(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	const struct kerf_world_stats *ws;
	int64_t now = 1796236400000LL;
	char bound[512];

	(void)state;
	f = fake(&ops, &o);
	script_lists(f);
	for (int i = 0; i < 4; i++) {
		char path[128];

		snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/g-%d", i);
		assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", path, i == 2 ? 404 : 200,
			i == 2 ? "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}"
			       : "{}"), 0);
	}
	c = started(&o);
	for (int i = 0; i < 2; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	kerf_controller_step(c, now);
	assert_true(kerf_controller_synced(c));
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 4);
	kerf_kube_fake_poll(f);
	/* one patch failed: no binding, the gang is pending again */
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	assert_int_equal(kerf_controller_stats(c)->plans_failed, 1);
	ws = kerf_world_stats(kerf_controller_world(c));
	assert_int_equal(ws->nr_unplaced, 1);
	/* the next cycle places it again: the plan, then the bindings; the
	   first is found bound already, where kerf binds it */
	kerf_kube_fake_poll(f);
	snprintf(bound, sizeof(bound),
		 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		 "\"message\":\"Operation cannot be fulfilled on pods/binding \\\"g-0\\\": pod g-0 is already assigned to node \\\"%s\\\"\","
		 "\"reason\":\"Conflict\",\"details\":{\"name\":\"g-0\",\"kind\":\"pods/binding\"},\"code\":409}", "gpu-1");
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/g-0/binding",
						    409, bound), 0);
	script_gang(f, 4);
	kerf_controller_step(c, now + 1000);
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 8);
	kerf_kube_fake_poll(f);
	assert_int_equal(count_calls(f, "POST", "/binding"), 1);
	kerf_kube_fake_poll(f);
	kerf_kube_fake_poll(f);
	assert_int_equal(count_calls(f, "POST", "/binding"), 4);
	assert_int_equal(kerf_controller_stats(c)->binds_already, 1);
	assert_int_equal(kerf_controller_stats(c)->binds_ok, 3);
	assert_int_equal(kerf_controller_stats(c)->plans_failed, 1);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A gang's first binding fails with a 504 that landed all the same: the
 * plan waits on it and is not given back (before, the gang was placed
 * anew and its plan written again while a pod of it was bound, and under
 * faults the rest of it was never bound).  Sent again, the binding is
 * found done where kerf binds it, and the rest go out.
 */
static void test_first_binding_waited_on(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	static const char *timeout =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"Timeout: request did not complete within requested timeout - context deadline exceeded\","
		"\"reason\":\"Timeout\",\"details\":{},\"code\":504}";
	static const char *bound =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"Operation cannot be fulfilled on pods/binding \\\"g-0\\\": pod g-0 is already assigned to node \\\"gpu-1\\\"\","
		"\"reason\":\"Conflict\",\"details\":{\"name\":\"g-0\",\"kind\":\"pods/binding\"},\"code\":409}";
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists(f);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/g-0/binding",
						    504, timeout), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/g-0/binding",
						    409, bound), 0);
	script_gang(f, 4);
	c = started(&o);
	for (int i = 0; i < 4; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	/* the plan written, the first binding failed: nothing else yet */
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 4);
	assert_int_equal(count_calls(f, "POST", "/binding"), 1);
	assert_int_equal(kerf_controller_stats(c)->binds_failed, 1);
	assert_int_equal(kerf_controller_stats(c)->plans_failed, 0);
	assert_int_equal(kerf_world_stats(kerf_controller_world(c))->nr_unplaced, 0);
	/* sent again after its backoff: done already, the rest follow */
	kerf_controller_step(c, now + 1000);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/binding"), 2);
	kerf_kube_fake_poll(f);
	assert_int_equal(count_calls(f, "POST", "/binding"), 5);
	kerf_kube_fake_poll(f);
	assert_int_equal(kerf_controller_stats(c)->binds_already, 1);
	assert_int_equal(kerf_controller_stats(c)->binds_ok, 3);
	assert_int_equal(kerf_controller_stats(c)->plans_failed, 0);
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 4);
	assert_int_equal(kerf_world_stats(kerf_controller_world(c))->nr_unplaced, 0);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

static void test_waits_for_the_lease(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	const char *lease_path = "/apis/coordination.k8s.io/v1/namespaces/kerf-system/leases/kerf-scheduler";
	char held[1024];
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	o.leader_elect = true;
	snprintf(o.lease.ns, sizeof(o.lease.ns), "kerf-system");
	snprintf(o.lease.name, sizeof(o.lease.name), "kerf-scheduler");
	snprintf(o.lease.identity, sizeof(o.lease.identity), "me");
	o.lease.duration_ms = 15000;
	o.lease.renew_deadline_ms = 10000;
	o.lease.retry_ms = 2000;
	script_lists(f);
	/* another replica holds the lease, renewed just now */
	snprintf(held, sizeof(held),
		 "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":\"kerf-scheduler\","
		 "\"namespace\":\"kerf-system\",\"resourceVersion\":\"7\"},\"spec\":{\"holderIdentity\":\"other\","
		 "\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-12-02T18:32:07.653009Z\",\"renewTime\":\"2026-12-02T18:33:19.000000Z\",\"leaseTransitions\":0}}");
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", lease_path, 200, held), 0);
	c = started(&o);
	for (int i = 0; i < 3; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	kerf_controller_step(c, now);
	assert_true(kerf_controller_synced(c));
	assert_false(kerf_controller_leading(c, now));
	/* synced, but a standby: no binding, no status */
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	assert_int_equal(count_calls(f, "PATCH", "/status"), 0);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A Tenant's quota names a GPU model no node has shown yet (its nodes are
 * listed after it): the quota must hold once they come, not be lost.
 */
static void test_tenant_before_its_nodes(void **state)
{
	static const char *quota =
		"{\"kind\":\"TenantList\",\"apiVersion\":\"kerf.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
		"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"team-a\",\"uid\":\"t1\",\"resourceVersion\":\"14\",\"generation\":1},"
		"\"spec\":{\"weight\":1,\"quotas\":[{\"flavor\":\"h100\",\"nominal\":\"8\",\"borrowingLimit\":\"0\"}]}}]}";
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	make_pods();
	/* the first nodes list fails: the tenants come first */
	kerf_kube_fake_fail_nth(f, 1, 500, 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/nodes", 200, nodes), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/namespaces", 200, namespaces), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/kerf.io/v1alpha1/tenants", 200, quota), 0);
	script_empty_lists(f);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/pods", 200, pods), 0);
	c = started(&o);
	now = step_until_synced(f, c, now);
	/* 16 GPUs over a quota of 8 on h100: nothing bound, told why */
	assert_int_equal(count_calls(f, "POST", "/binding"), 0);
	assert_true(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-0/status") >= 1);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A child Tenant listed before its parent (the list's order is the API
 * server's, by name): refused at first for a parent not known, then set
 * once the parent joins, its pods placed; a chain of three listed leaf
 * first settles too.
 */
static void test_child_before_parent(void **state)
{
	static const char *chain =
		"{\"kind\":\"TenantList\",\"apiVersion\":\"kerf.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
		"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"team-a\",\"uid\":\"t1\",\"resourceVersion\":\"14\",\"generation\":1},"
		"\"spec\":{\"weight\":1,\"parent\":\"research\"}},"
		"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"research\",\"uid\":\"t2\",\"resourceVersion\":\"15\",\"generation\":1},"
		"\"spec\":{\"weight\":1,\"parent\":\"org\"}},"
		"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"org\",\"uid\":\"t3\",\"resourceVersion\":\"16\",\"generation\":1},"
		"\"spec\":{\"weight\":1}}]}";
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	const struct kerf_tenants *tt;
	int a, r, g;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	make_pods();
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/nodes", 200, nodes), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/namespaces", 200, namespaces), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/kerf.io/v1alpha1/tenants", 200, chain), 0);
	script_empty_lists(f);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/api/v1/pods", 200, pods), 0);
	script_gang(f, 4);
	assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", "/api/v1/namespaces/loose/pods/lost/status", 200, "{}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/loose/events", 201, "{}"), 0);
	c = started(&o);
	now = step_until_synced(f, c, now);
	if (kerf_controller_stats(c)->world_errors)
		fail_msg("world: %s", kerf_controller_stats(c)->last_error);
	tt = &kerf_world_state(kerf_controller_world(c))->tenants;
	a = kerf_tenants_find(tt, "team-a");
	r = kerf_tenants_find(tt, "research");
	g = kerf_tenants_find(tt, "org");
	assert_true(a > 0 && r > 0 && g > 0);
	assert_int_equal(tt->t[a].parent, r);
	assert_int_equal(tt->t[r].parent, g);
	/* team-a's gang is planned: its tenant is known */
	assert_int_equal(count_calls(f, "PATCH", "/namespaces/team-a/pods/g-"), 4);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

static void test_failed_binding_sent_again(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	static const char *ok =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}";
	static const char *conflict =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"Operation cannot be fulfilled on pods/binding \\\"g-1\\\": pod g-1 is already assigned to node \\\"gpu-9\\\"\","
		"\"reason\":\"Conflict\",\"details\":{\"name\":\"g-1\",\"kind\":\"pods/binding\"},\"code\":409}";
	static const char *internal =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"Internal error occurred: etcd\",\"reason\":\"InternalError\",\"code\":500}";
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists(f);
	for (int i = 0; i < 4; i++) {
		char path[128];

		/* the gang's plan lands; its first binding too, then one of
		   the rest is refused (bound elsewhere, says the 409, yet the
		   watch never shows it) and one fails */
		snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/g-%d", i);
		assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", path, 200, "{}"), 0);
		snprintf(path, sizeof(path), "/api/v1/namespaces/team-a/pods/g-%d/binding", i);
		assert_int_equal(kerf_kube_fake_push_answer(f, "POST", path,
			i == 1 ? 409 : i == 2 ? 500 : 201,
			i == 1 ? conflict : i == 2 ? internal : ok), 0);
	}
	assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", "/api/v1/namespaces/loose/pods/lost/status", 200, "{}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/loose/events", 201, "{}"), 0);
	c = started(&o);
	for (int i = 0; i < 6; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	assert_int_equal(count_calls(f, "POST", "/binding"), 4);
	assert_int_equal(kerf_controller_stats(c)->binds_ok, 2);
	assert_int_equal(kerf_controller_stats(c)->binds_conflict, 1);
	assert_int_equal(kerf_controller_stats(c)->binds_failed, 1);
	/* not at once: the watch may yet say the pods are bound */
	kerf_controller_step(c, now + 100);
	assert_int_equal(count_calls(f, "POST", "/binding"), 4);
	/* still unbound a while later: both go again, to the same GPUs */
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/g-1/binding", 201, ok), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/g-2/binding", 201, ok), 0);
	kerf_controller_step(c, now + 10000);
	assert_int_equal(count_calls(f, "POST", "/pods/g-1/binding"), 2);
	assert_int_equal(count_calls(f, "POST", "/pods/g-2/binding"), 2);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/binding"), 1);
	assert_int_equal(count_calls(f, "POST", "/pods/g-3/binding"), 1);
	assert_int_equal(kerf_controller_stats(c)->binds_retried, 2);
	kerf_kube_fake_poll(f);
	assert_int_equal(kerf_controller_stats(c)->binds_ok, 4);
	/* answered 201: nothing more is sent */
	kerf_controller_step(c, now + 60000);
	assert_int_equal(count_calls(f, "POST", "/binding"), 6);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A single pod whose binding keeps failing (no answer: a transport error
 * each time) is sent again with backoff, then given back to the world
 * and placed anew, not retried for ever.
 */
static void test_binding_given_up(void **state)
{
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists_with(f, solo);
	c = started(&o);
	for (int i = 0; i < 200 && !kerf_controller_stats(c)->binds_given_up; i++) {
		now += 500;
		kerf_kube_fake_set_now(f, (uint64_t)now);
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	assert_int_equal(kerf_controller_stats(c)->binds_given_up, 1);
	assert_int_equal(kerf_controller_stats(c)->binds_retried, 7);
	assert_int_equal(kerf_world_stats(kerf_controller_world(c))->nr_unplaced, 1);
	/* placed anew: a fresh binding goes out at the next cycle */
	kerf_controller_step(c, now + 10);
	assert_int_equal(count_calls(f, "POST", "/pods/solo/binding"), 9);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * An eviction that fails (503, then no answer) is asked again after a
 * pause, not dropped (a gang left part-bound without its plan is undone:
 * its bound pod must go); once answered 201 it is not sent again.
 */
static void test_failed_eviction_sent_again(void **state)
{
	static const char *partial =
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":["
		"{\"metadata\":{\"name\":\"g-0\",\"namespace\":\"team-a\",\"uid\":\"uid-g0\",\"resourceVersion\":\"20\","
		"\"creationTimestamp\":\"2026-12-02T18:31:53Z\",\"labels\":{\"kerf.io/gang\":\"g\"},"
		"\"annotations\":{\"kerf.io/gang-size\":\"2\",\"kerf.io/assigned-gpus\":\"0,1,2,3\"}},"
		"\"spec\":{\"schedulerName\":\"kerf\",\"nodeName\":\"gpu-1\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]},"
		"\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"name\":\"g-1\",\"namespace\":\"team-a\",\"uid\":\"uid-g1\",\"resourceVersion\":\"21\","
		"\"creationTimestamp\":\"2026-12-02T18:31:53Z\",\"labels\":{\"kerf.io/gang\":\"g\"},\"annotations\":{\"kerf.io/gang-size\":\"2\"}},"
		"\"spec\":{\"schedulerName\":\"kerf\",\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]},"
		"\"status\":{\"phase\":\"Pending\"}}]}";
	static const char *unavailable =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"the server is currently unable to handle the request\",\"reason\":\"ServiceUnavailable\",\"code\":503}";
	static const char *evicted =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}";
	static const char *path = "/api/v1/namespaces/team-a/pods/g-0/eviction";
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists_with(f, partial);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", path, 503, unavailable), 0);
	/* the second attempt: no answer at all (nothing scripted for it) */
	c = started(&o);
	for (int i = 0; i < 4; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/eviction"), 1);
	assert_int_equal(kerf_world_stats(kerf_controller_world(c))->nr_plans_undone, 1);
	/* not at once */
	kerf_controller_step(c, now + 500);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/eviction"), 1);
	/* asked again after its pause (503: 2 s), then again (no answer) */
	kerf_controller_step(c, now + 2500);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/eviction"), 2);
	kerf_kube_fake_poll(f);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", path, 201, evicted), 0);
	kerf_controller_step(c, now + 5000);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/eviction"), 3);
	kerf_kube_fake_poll(f);
	/* answered: nothing more is sent */
	kerf_controller_step(c, now + 60000);
	assert_int_equal(count_calls(f, "POST", "/pods/g-0/eviction"), 3);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

/*
 * A binding the API server refuses (403) tells its pod why, once
 * (PodScheduled with reason BindingRejected, and an Event), and is sent
 * again no sooner than a minute later.
 */
static void test_refused_binding_told(void **state)
{
	static const char *forbidden =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
		"\"message\":\"pods \\\"solo\\\" is forbidden: binding refused by policy\",\"reason\":\"Forbidden\",\"code\":403}";
	struct kerf_kube_fake *f;
	struct kerf_controller_opts o;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
	int64_t now = 1796236400000LL;

	(void)state;
	f = fake(&ops, &o);
	script_lists_with(f, solo);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/pods/solo/binding",
						    403, forbidden), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "PATCH", "/api/v1/namespaces/team-a/pods/solo/status", 200, "{}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "POST", "/api/v1/namespaces/team-a/events", 201, "{}"), 0);
	c = started(&o);
	for (int i = 0; i < 5; i++) {
		kerf_controller_step(c, now);
		kerf_kube_fake_poll(f);
	}
	assert_int_equal(count_calls(f, "POST", "/pods/solo/binding"), 1);
	assert_int_equal(count_calls(f, "PATCH", "/pods/solo/status"), 1);
	assert_int_equal(count_calls(f, "POST", "/namespaces/team-a/events"), 1);
	/* not again within the minute */
	kerf_controller_step(c, now + 30000);
	assert_int_equal(count_calls(f, "POST", "/pods/solo/binding"), 1);
	kerf_controller_step(c, now + 100000);
	assert_int_equal(count_calls(f, "POST", "/pods/solo/binding"), 2);
	kerf_controller_free(c);
	kerf_kube_fake_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gang_bound_whole),
		cmocka_unit_test(test_gang_plan_refused),
		cmocka_unit_test(test_first_binding_waited_on),
		cmocka_unit_test(test_tenant_before_its_nodes),
		cmocka_unit_test(test_child_before_parent),
		cmocka_unit_test(test_failed_binding_sent_again),
		cmocka_unit_test(test_binding_given_up),
		cmocka_unit_test(test_failed_eviction_sent_again),
		cmocka_unit_test(test_refused_binding_told),
		cmocka_unit_test(test_waits_for_the_lease),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
