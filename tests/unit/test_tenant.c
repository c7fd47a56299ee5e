/*
 * test_tenant: the quota accounting of the tenant tree, on hand-built trees
 * (cluster -> org -> team-a, team-b).  Claims follow the rule of tenant.h
 * (leaf: max(usage, protected); internal: max(sum of children's claims,
 * protected)); borrowing is bounded by siblings' lend limits and by the
 * borrower's own borrow limit; the root is no limit; non-preemptible work
 * must fit nominal where the tenant has a quota; charge and release undo
 * each other exactly and release never goes negative; validation names
 * tenant, dimension and numbers; a quota lowered below usage stops new
 * admissions there (RS-21); the invariant walker sees corruption; and an
 * overflowing request never fits a finite limit (RS-02).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/tenant.h"

#define CPU KERF_RES_CPU
#define MEM KERF_RES_MEM
#define GPU KERF_RES_GPU0
#define INF KERF_QTY_INF

enum { NR_RES = KERF_RES_GPU0 + 1 };   /* cpu, memory, one GPU model */

struct tree {
	struct kerf_tenants tt;
	int org, a, b;
};

/* A quota on GPUs only: cpu and memory are left ungoverned. */
static struct kerf_quota gpu_quota(int64_t nominal, int64_t borrow,
				   int64_t lend)
{
	struct kerf_quota q;

	kerf_quota_default(&q);
	q.nominal.v[GPU] = nominal;
	q.borrow_limit.v[GPU] = borrow;
	q.lend_limit.v[GPU] = lend;
	return q;
}

static struct kerf_res gpu(int64_t milli)
{
	struct kerf_res r;

	kerf_res_zero(&r);
	r.v[GPU] = milli;
	return r;
}

/* cluster (capacity 32 GPUs) -> org -> team-a, team-b. */
static void build(struct tree *x, const struct kerf_quota *org,
		  const struct kerf_quota *a, const struct kerf_quota *b)
{
	struct kerf_res cap;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_tenants_init(&x->tt, NR_RES), 0);
	kerf_res_zero(&cap);
	cap.v[CPU] = 1000000;
	cap.v[MEM] = 1000000;
	cap.v[GPU] = 32000;
	kerf_tenants_set_capacity(&x->tt, &cap);
	x->org = kerf_tenants_add(&x->tt, "org", KERF_TENANT_ROOT, org, 1, &err);
	x->a = kerf_tenants_add(&x->tt, "team-a", x->org, a, 1, &err);
	x->b = kerf_tenants_add(&x->tt, "team-b", x->org, b, 1, &err);
	assert_string_equal(err.msg, "");
	assert_int_equal(x->org, 1);
	assert_int_equal(x->a, 2);
	assert_int_equal(x->b, 3);
}

static void check_ok(const struct tree *x)
{
	struct kerf_err err = { 0 };

	if (kerf_tenants_check(&x->tt, &err) < 0)
		fail_msg("%s", err.msg);
}

static int64_t claim(const struct tree *x, int t)
{
	return x->tt.t[t].claim.v[GPU];
}

static void charge(struct tree *x, int t, int64_t milli, bool np)
{
	struct kerf_res r = gpu(milli);

	kerf_quota_charge(&x->tt, t, &r, np);
}

static bool fits(const struct tree *x, int t, int64_t milli, bool np,
		 struct kerf_quota_verdict *v)
{
	struct kerf_res r = gpu(milli);

	return kerf_quota_fits(&x->tt, t, &r, np, v);
}

static void assert_verdict(const struct kerf_quota_verdict *v, int tenant,
			   int res, int64_t need, int64_t limit,
			   bool nominal_only)
{
	assert_false(v->fits);
	assert_int_equal(v->tenant, tenant);
	assert_int_equal(v->res, res);
	assert_int_equal(v->need, need);
	assert_int_equal(v->limit, limit);
	assert_int_equal(v->nominal_only, nominal_only);
}

static void test_leaf_claim_is_max_of_usage_and_protected(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);  /* protects 6000 */
	struct kerf_quota qb = gpu_quota(8000, INF, INF);   /* protects 0 */
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	/* the protected part is claimed before anything runs */
	assert_int_equal(claim(&x, x.a), 6000);
	assert_int_equal(claim(&x, x.b), 0);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 6000);
	assert_int_equal(claim(&x, x.org), 6000);
	assert_int_equal(x.tt.t[KERF_TENANT_ROOT].child_claims.v[GPU], 6000);
	assert_int_equal(claim(&x, KERF_TENANT_ROOT), 6000);
	assert_int_equal(x.tt.t[x.a].claim.v[CPU], 0);
	check_ok(&x);
	/* usage under the protected part does not raise the claim */
	charge(&x, x.a, 3000, false);
	assert_int_equal(x.tt.t[x.a].usage.v[GPU], 3000);
	assert_int_equal(claim(&x, x.a), 6000);
	assert_int_equal(claim(&x, x.org), 6000);
	/* usage over it does */
	charge(&x, x.a, 4000, false);
	assert_int_equal(claim(&x, x.a), 7000);
	assert_int_equal(claim(&x, x.org), 7000);
	assert_int_equal(claim(&x, KERF_TENANT_ROOT), 7000);
	charge(&x, x.b, 5000, false);
	assert_int_equal(claim(&x, x.b), 5000);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 12000);
	assert_int_equal(claim(&x, x.org), 12000);
	assert_int_equal(x.tt.t[x.org].usage.v[GPU], 12000);
	assert_int_equal(x.tt.t[KERF_TENANT_ROOT].usage.v[GPU], 12000);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_internal_claim_is_max_of_children_and_protected(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, 4000);   /* protects 12000 */
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);  /* protects 6000 */
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 6000);
	assert_int_equal(claim(&x, x.org), 12000);
	assert_int_equal(x.tt.t[KERF_TENANT_ROOT].child_claims.v[GPU], 12000);
	charge(&x, x.b, 5000, false);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 11000);
	assert_int_equal(claim(&x, x.org), 12000);
	charge(&x, x.b, 2000, false);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 13000);
	assert_int_equal(claim(&x, x.org), 13000);
	assert_int_equal(claim(&x, KERF_TENANT_ROOT), 13000);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_borrow_from_idle_sibling(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota_verdict v;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	/* b is idle and lends all: a may take the whole org */
	assert_true(fits(&x, x.a, 16000, false, &v));
	assert_true(v.fits);
	assert_int_equal(v.tenant, -1);
	assert_int_equal(v.res, -1);
	assert_false(fits(&x, x.a, 16001, false, &v));
	assert_verdict(&v, x.org, GPU, 16001, 16000, false);
	/* once b uses 7000, a may borrow only the other 1000 */
	charge(&x, x.b, 7000, false);
	assert_true(fits(&x, x.a, 9000, false, NULL));
	assert_false(fits(&x, x.a, 9001, false, &v));
	assert_verdict(&v, x.org, GPU, 16001, 16000, false);
	/* fits changes nothing */
	assert_int_equal(x.tt.t[x.a].usage.v[GPU], 0);
	assert_int_equal(claim(&x, x.a), 0);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_lending_limit_blocks_borrowing(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, 2000);  /* protects 6000 */
	struct kerf_quota_verdict v;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_true(fits(&x, x.a, 10000, false, &v));
	assert_false(fits(&x, x.a, 10001, false, &v));
	assert_verdict(&v, x.org, GPU, 16001, 16000, false);
	/* b itself may use its protected part and the rest */
	assert_true(fits(&x, x.b, 8000, false, NULL));
	kerf_tenants_release(&x.tt);
}

static void test_borrow_limit_enforced(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, 3000, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota_verdict v;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_int_equal(kerf_tenant_limit(&x.tt, x.a, GPU), 11000);
	assert_true(fits(&x, x.a, 11000, false, &v));
	assert_false(fits(&x, x.a, 11001, false, &v));
	assert_verdict(&v, x.a, GPU, 11001, 11000, false);
	charge(&x, x.a, 11000, false);
	assert_false(fits(&x, x.a, 1, false, &v));
	assert_verdict(&v, x.a, GPU, 11001, 11000, false);
	/* b's unlimited borrowing is bounded by org */
	assert_true(fits(&x, x.b, 5000, false, NULL));
	assert_false(fits(&x, x.b, 5001, false, &v));
	assert_verdict(&v, x.org, GPU, 16001, 16000, false);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_root_is_not_a_limit(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, INF, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota_verdict v;
	struct kerf_res none;
	struct tree x;
	int res = -7;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_int_equal(kerf_tenant_limit(&x.tt, KERF_TENANT_ROOT, GPU), INF);
	assert_int_equal(kerf_tenant_limit(&x.tt, KERF_TENANT_ROOT, CPU), INF);
	assert_int_equal(kerf_tenant_limit(&x.tt, x.org, GPU), INF);
	/* far beyond the cluster's 32 GPUs: placement, not quota, says no */
	assert_true(fits(&x, x.a, 1000000, false, &v));
	assert_true(v.fits);
	/* a cluster that lost every node still admits by quota */
	kerf_res_zero(&none);
	kerf_tenants_set_capacity(&x.tt, &none);
	assert_true(fits(&x, x.a, 1000, false, NULL));
	charge(&x, x.a, 1000000, false);
	assert_int_equal(claim(&x, KERF_TENANT_ROOT), 1000000);
	assert_false(kerf_tenants_over_limit(&x.tt, x.a, &res));
	assert_int_equal(res, -7);
	kerf_tenants_release(&x.tt);
}

static void test_governs(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(0, 0, INF);
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_true(kerf_tenant_governs(&x.tt, x.a, GPU));     /* nominal */
	assert_false(kerf_tenant_governs(&x.tt, x.a, CPU));    /* 0, no limit */
	assert_true(kerf_tenant_governs(&x.tt, x.b, GPU));     /* limit 0 */
	assert_true(kerf_tenant_governs(&x.tt, x.org, GPU));
	assert_false(kerf_tenant_governs(&x.tt, x.org, MEM));
	kerf_tenants_release(&x.tt);
}

static void test_nonpreemptible_within_nominal(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota_verdict v;
	struct kerf_res r;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	/* cpu is not governed: any amount of it, with nominal GPUs, fits */
	r = gpu(8000);
	r.v[CPU] = 500000;
	assert_true(kerf_quota_fits(&x.tt, x.a, &r, true, &v));
	assert_false(fits(&x, x.a, 8001, true, &v));
	assert_verdict(&v, x.a, GPU, 8001, 8000, true);
	/* the same request, preemptible, may borrow */
	assert_true(fits(&x, x.a, 8001, false, NULL));
	/* preemptible usage does not count against the non-preemptible rule */
	charge(&x, x.a, 6000, false);
	assert_true(fits(&x, x.a, 8000, true, NULL));
	charge(&x, x.a, 1000, true);
	assert_int_equal(x.tt.t[x.a].usage_np.v[GPU], 1000);
	assert_int_equal(x.tt.t[x.org].usage_np.v[GPU], 1000);
	assert_true(fits(&x, x.a, 7000, true, NULL));
	assert_false(fits(&x, x.a, 7001, true, &v));
	assert_verdict(&v, x.a, GPU, 8001, 8000, true);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_nonpreemptible_nominal_of_ancestor(void **state)
{
	struct kerf_quota qo = gpu_quota(4000, INF, INF);
	struct kerf_quota qa = gpu_quota(0, INF, INF);     /* not governed */
	struct kerf_quota qb = gpu_quota(0, INF, INF);
	struct kerf_quota_verdict v;
	struct kerf_res r;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	assert_true(fits(&x, x.a, 4000, true, NULL));
	assert_false(fits(&x, x.a, 4001, true, &v));
	assert_verdict(&v, x.org, GPU, 4001, 4000, true);
	assert_true(fits(&x, x.a, 4001, false, NULL));
	/* a governed cpu dimension is named in the verdict */
	x.tt.t[x.a].quota.nominal.v[CPU] = 1000;
	x.tt.t[x.a].quota.borrow_limit.v[CPU] = 0;
	kerf_res_zero(&r);
	r.v[CPU] = 1001;
	assert_false(kerf_quota_fits(&x.tt, x.a, &r, true, &v));
	assert_verdict(&v, x.a, CPU, 1001, 1000, true);
	kerf_tenants_release(&x.tt);
}

/* charge, charge_own and release in any order leave the tree as it was */
static void test_charge_release_round_trip(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, 4000);
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_tenant before[4];
	struct kerf_res r1 = gpu(3000), r2 = gpu(9000), r3 = gpu(2500);
	struct kerf_err err = { 0 };
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	r1.v[CPU] = 4000;
	r3.v[MEM] = 777;
	charge(&x, x.b, 1000, false);
	memcpy(before, x.tt.t, sizeof(before));
	kerf_quota_charge(&x.tt, x.a, &r1, true);
	kerf_quota_charge_own(&x.tt, x.a, &r1);
	kerf_quota_charge(&x.tt, x.a, &r2, false);
	kerf_quota_charge(&x.tt, x.b, &r3, false);
	kerf_quota_charge_own(&x.tt, x.b, &r3);
	assert_int_equal(claim(&x, x.a), 12000);
	assert_int_equal(claim(&x, x.b), 3500);
	assert_int_equal(claim(&x, x.org), 15500);
	assert_int_equal(x.tt.t[x.org].usage_own.v[GPU], 5500);
	assert_int_equal(x.tt.t[x.org].usage.v[CPU], 4000);
	check_ok(&x);
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &r2, false, &err), 0);
	assert_int_equal(kerf_quota_release(&x.tt, x.b, &r3, false, &err), 0);
	kerf_quota_release_own(&x.tt, x.b, &r3);
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &r1, true, &err), 0);
	kerf_quota_release_own(&x.tt, x.a, &r1);
	assert_string_equal(err.msg, "");
	for (int t = 0; t < 4; t++) {
		assert_memory_equal(&x.tt.t[t].usage, &before[t].usage,
				    sizeof(struct kerf_res));
		assert_memory_equal(&x.tt.t[t].usage_np, &before[t].usage_np,
				    sizeof(struct kerf_res));
		assert_memory_equal(&x.tt.t[t].usage_own, &before[t].usage_own,
				    sizeof(struct kerf_res));
		assert_memory_equal(&x.tt.t[t].claim, &before[t].claim,
				    sizeof(struct kerf_res));
		assert_memory_equal(&x.tt.t[t].child_claims,
				    &before[t].child_claims,
				    sizeof(struct kerf_res));
	}
	assert_int_equal(claim(&x, x.a), 6000);
	assert_int_equal(claim(&x, x.org), 12000);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_release_more_than_used_refused(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_tenant before[4];
	struct kerf_err err = { 0 };
	struct kerf_res r;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	r = gpu(3000);
	r.v[CPU] = 100;
	kerf_quota_charge(&x.tt, x.a, &r, false);
	memcpy(before, x.tt.t, sizeof(before));

	/* one dimension over, another fine: nothing changes in either */
	r.v[GPU] = 3001;
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &r, false, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "tenant 'team-a': releasing more than it uses");
	assert_memory_equal(x.tt.t, before, sizeof(before));

	/* preemptible usage is no non-preemptible usage */
	kerf_err_clear(&err);
	r.v[GPU] = 1000;
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &r, true, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "tenant 'team-a': releasing more than it uses");
	assert_memory_equal(x.tt.t, before, sizeof(before));

	kerf_err_clear(&err);
	r = gpu(1);
	assert_int_equal(kerf_quota_release(&x.tt, x.b, &r, false, &err),
			 -KERF_ERANGE);
	assert_string_equal(err.msg, "tenant 'team-b': releasing more than it uses");
	assert_memory_equal(x.tt.t, before, sizeof(before));
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void test_validate_messages(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, 8000);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct tree x;

	(void)state;
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "h100", 81920, NULL), 0);
	build(&x, &qo, &qa, &qb);
	/* lend limit equal to nominal, nominals summing to the parent's */
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), 0);
	assert_string_equal(err.msg, "");

	x.tt.t[x.b].quota.nominal.v[GPU] = 9000;
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "tenants under 'org' gpu:h100: nominal quotas sum to 17000, more than its nominal 16000");
	x.tt.t[x.b].quota.nominal.v[GPU] = 8000;

	kerf_err_clear(&err);
	x.tt.t[x.org].quota.nominal.v[GPU] = 40000;
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "tenants under 'cluster' gpu:h100: nominal quotas sum to 40000, the cluster has 32000");
	x.tt.t[x.org].quota.nominal.v[GPU] = 16000;

	kerf_err_clear(&err);
	x.tt.t[x.a].quota.lend_limit.v[GPU] = 8001;
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "tenant 'team-a' gpu:h100: lending_limit 8001 is more than nominal 8000");
	x.tt.t[x.a].quota.lend_limit.v[GPU] = INF;

	kerf_err_clear(&err);
	x.tt.t[x.b].quota.borrow_limit.v[CPU] = -1;
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "tenant 'team-b' cpu: quota values must not be negative");
	x.tt.t[x.b].quota.borrow_limit.v[CPU] = INF;

	kerf_err_clear(&err);
	x.tt.t[x.a].quota.nominal.v[MEM] = 5;
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), -KERF_EINVAL);
	assert_string_equal(err.msg,
			    "tenants under 'org' memory: nominal quotas sum to 5, more than its nominal 0");
	x.tt.t[x.a].quota.nominal.v[MEM] = 0;

	kerf_err_clear(&err);
	assert_int_equal(kerf_tenants_validate(&x.tt, &c, &err), 0);
	kerf_tenants_release(&x.tt);
	kerf_cluster_release(&c);
}

/* RS-21: a quota lowered below usage */
static void test_set_quota_below_usage(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, 0, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota lower = gpu_quota(4000, 0, INF);
	struct kerf_quota_verdict v;
	struct kerf_err err = { 0 };
	struct kerf_res r;
	struct tree x;
	int res = -1;

	(void)state;
	build(&x, &qo, &qa, &qb);
	charge(&x, x.a, 6000, false);
	assert_false(kerf_tenants_over_limit(&x.tt, x.a, NULL));
	assert_int_equal(kerf_tenants_set_quota(&x.tt, x.a, &lower), 0);
	assert_int_equal(x.tt.t[x.a].quota.nominal.v[GPU], 4000);
	/* usage is kept, and so is the claim it makes */
	assert_int_equal(x.tt.t[x.a].usage.v[GPU], 6000);
	assert_int_equal(claim(&x, x.a), 6000);
	assert_true(kerf_tenants_over_limit(&x.tt, x.a, &res));
	assert_int_equal(res, GPU);
	assert_false(kerf_tenants_over_limit(&x.tt, x.b, NULL));
	/* nothing new in that dimension; other dimensions are not held */
	assert_false(fits(&x, x.a, 1, false, &v));
	assert_verdict(&v, x.a, GPU, 6001, 4000, false);
	kerf_res_zero(&r);
	r.v[CPU] = 1000;
	assert_true(kerf_quota_fits(&x.tt, x.a, &r, false, NULL));
	check_ok(&x);
	/* back at the limit: not over, but still nothing more fits */
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &(struct kerf_res){
		.v = { [GPU] = 2000 } }, false, &err), 0);
	assert_false(kerf_tenants_over_limit(&x.tt, x.a, NULL));
	assert_false(fits(&x, x.a, 1, false, &v));
	assert_verdict(&v, x.a, GPU, 4001, 4000, false);
	/* all of it released: every counter at zero, none negative */
	assert_int_equal(kerf_quota_release(&x.tt, x.a, &(struct kerf_res){
		.v = { [GPU] = 4000 } }, false, &err), 0);
	for (int t = 0; t < 4; t++)
		for (int i = 0; i < NR_RES; i++) {
			assert_int_equal(x.tt.t[t].usage.v[i], 0);
			assert_int_equal(x.tt.t[t].usage_np.v[i], 0);
			assert_int_equal(x.tt.t[t].usage_own.v[i], 0);
			assert_true(x.tt.t[t].claim.v[i] >= 0);
		}
	assert_true(fits(&x, x.a, 4000, false, NULL));
	check_ok(&x);

	/* lowering a parent puts every tenant under it over the limit */
	charge(&x, x.b, 6000, false);
	lower = gpu_quota(4000, 0, INF);
	assert_int_equal(kerf_tenants_set_quota(&x.tt, x.org, &lower), 0);
	assert_true(kerf_tenants_over_limit(&x.tt, x.a, &res));
	assert_true(kerf_tenants_over_limit(&x.tt, x.b, &res));
	assert_int_equal(res, GPU);
	/* the root and unknown tenants cannot be edited */
	assert_int_equal(kerf_tenants_set_quota(&x.tt, KERF_TENANT_ROOT, &lower),
			 -KERF_EINVAL);
	assert_int_equal(kerf_tenants_set_quota(&x.tt, 4, &lower), -KERF_EINVAL);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

/* a quota edit that changes the protected part moves the claims at once */
static void test_set_quota_recomputes_claims(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, INF);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct kerf_quota_verdict v;
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	charge(&x, x.a, 1000, false);
	assert_int_equal(claim(&x, x.b), 0);
	assert_true(fits(&x, x.a, 15000, false, NULL));
	qb = gpu_quota(8000, INF, 2000);
	assert_int_equal(kerf_tenants_set_quota(&x.tt, x.b, &qb), 0);
	assert_int_equal(claim(&x, x.b), 6000);
	assert_int_equal(x.tt.t[x.org].child_claims.v[GPU], 7000);
	assert_int_equal(claim(&x, x.org), 7000);
	assert_false(fits(&x, x.a, 15000, false, &v));
	assert_verdict(&v, x.org, GPU, 22000, 16000, false);
	assert_true(fits(&x, x.a, 9000, false, NULL));
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

static void expect_corrupt(const struct tree *x, const char *msg)
{
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_tenants_check(&x->tt, &err), -KERF_ERANGE);
	assert_string_equal(err.msg, msg);
}

static void test_check_detects_corruption(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	charge(&x, x.a, 7000, false);
	charge(&x, x.b, 1000, true);
	check_ok(&x);

	x.tt.t[x.a].usage.v[GPU]++;
	expect_corrupt(&x, "tenant 'org': usage is not the sum of its children's");
	x.tt.t[x.a].usage.v[GPU]--;

	x.tt.t[KERF_TENANT_ROOT].usage.v[CPU] = 5;
	expect_corrupt(&x, "tenant 'cluster': usage is not the sum of its children's");
	x.tt.t[KERF_TENANT_ROOT].usage.v[CPU] = 0;

	x.tt.t[x.b].usage_own.v[GPU] = 1;
	expect_corrupt(&x, "tenant 'org': usage is not the sum of its children's");
	x.tt.t[x.b].usage_own.v[GPU] = 0;

	x.tt.t[x.a].claim.v[GPU] = 7001;
	expect_corrupt(&x, "tenant 'team-a': claim 7001 kept, 7000 recomputed");
	x.tt.t[x.a].claim.v[GPU] = 7000;

	x.tt.t[x.org].claim.v[GPU] = 1;
	expect_corrupt(&x, "tenant 'org': claim 1 kept, 8000 recomputed");
	x.tt.t[x.org].claim.v[GPU] = 8000;

	x.tt.t[x.org].child_claims.v[GPU] = 8;
	expect_corrupt(&x, "tenant 'org': children's claims 8 kept, 8000 recomputed");
	x.tt.t[x.org].child_claims.v[GPU] = 8000;

	/* consistent along the path, but more non-preemptible than in all */
	for (int t = x.b; t >= 0; t = x.tt.t[t].parent)
		x.tt.t[t].usage_np.v[GPU] += 100000;
	expect_corrupt(&x, "tenant 'cluster': usage counter out of range");
	for (int t = x.b; t >= 0; t = x.tt.t[t].parent)
		x.tt.t[t].usage_np.v[GPU] -= 100000;

	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

/*
 * Regression (was a bug): the sums are
 * taken with kerf_res_add, whose kerf_qty_add requires operands >= 0, so a
 * negative counter -- the corruption the walker exists to find -- is a
 * signed overflow (UBSan aborts; without it the sum reads KERF_QTY_INF and
 * the message blames the parent).
 */
static void test_check_detects_negative_usage(void **state)
{
	struct kerf_quota qo = gpu_quota(16000, 0, INF);
	struct kerf_quota qa = gpu_quota(8000, INF, 2000);
	struct kerf_quota qb = gpu_quota(8000, INF, INF);
	struct tree x;

	(void)state;
	build(&x, &qo, &qa, &qb);
	/* consistent along the path: only the range check can see it */
	for (int t = x.b; t >= 0; t = x.tt.t[t].parent)
		x.tt.t[t].usage.v[MEM] = -1;
	expect_corrupt(&x, "tenant 'cluster': usage counter out of range");
	kerf_tenants_release(&x.tt);
}

/*
 * Regression (was a bug): the children's
 * claims are summed with a plain +=, so two siblings' claims whose sum
 * passes INT64_MAX overflow (UBSan aborts) instead of saturating at
 * KERF_QTY_INF as recompute_claims does.
 */
static void test_child_claims_saturate(void **state)
{
	struct kerf_tenants tt;
	struct kerf_res r;
	int org, a, b;

	(void)state;
	assert_int_equal(kerf_tenants_init(&tt, NR_RES), 0);
	org = kerf_tenants_add(&tt, "org", KERF_TENANT_ROOT, NULL, 1, NULL);
	a = kerf_tenants_add(&tt, "team-a", org, NULL, 1, NULL);
	b = kerf_tenants_add(&tt, "team-b", org, NULL, 1, NULL);
	kerf_res_zero(&r);
	r.v[CPU] = 5000000000000000000;
	assert_true(kerf_quota_fits(&tt, a, &r, false, NULL));
	kerf_quota_charge(&tt, a, &r, false);
	assert_true(kerf_quota_fits(&tt, b, &r, false, NULL));
	kerf_quota_charge(&tt, b, &r, false);
	assert_int_equal(tt.t[org].usage.v[CPU], INF);
	assert_int_equal(tt.t[org].child_claims.v[CPU], INF);
	assert_int_equal(tt.t[org].claim.v[CPU], INF);
	assert_int_equal(kerf_tenants_check(&tt, NULL), 0);
	kerf_tenants_release(&tt);
}

/* RS-02: 7 pods x 1.4e18 must not saturate into something that fits */
static void test_overflow_never_fits(void **state)
{
	const int64_t big = 1400000000000000000;
	const int64_t limit = 7000000000000000000;
	struct kerf_pod p = { .cpu_milli = big };
	struct kerf_pod g = { .nr_gpus = 8, .gpu_milli = 1000 };
	struct kerf_quota q;
	struct kerf_quota_verdict v;
	struct kerf_res r;
	struct tree x;

	(void)state;
	assert_int_equal(kerf_qty_mul(big, 7), INF);
	assert_int_equal(kerf_qty_mul(big, 6), 8400000000000000000);
	assert_int_equal(kerf_qty_add(kerf_qty_mul(big, 6), big), INF);
	assert_int_equal(kerf_qty_add(INF, 0), INF);
	assert_int_equal(kerf_qty_add(INF - 1, 1), INF);
	assert_int_equal(kerf_qty_mul(INF / 7, 7), INF);
	assert_int_equal(kerf_qty_mul(0, INF), 0);
	kerf_res_of_pod(&r, &p, -1, 7);
	assert_int_equal(r.v[CPU], INF);
	assert_int_equal(r.v[GPU], 0);
	kerf_res_of_pod(&r, &g, 0, INF / 1000);
	assert_int_equal(r.v[GPU], INF);

	/* cpu limits: team-a exactly 7e18, org the largest finite quota */
	kerf_quota_default(&q);
	q.nominal.v[CPU] = INF - 1;
	q.borrow_limit.v[CPU] = 0;
	build(&x, &q, &q, &q);
	q.nominal.v[CPU] = limit;
	assert_int_equal(kerf_tenants_set_quota(&x.tt, x.a, &q), 0);
	assert_int_equal(kerf_tenant_limit(&x.tt, x.a, CPU), limit);

	kerf_res_of_pod(&r, &p, -1, 7);
	assert_false(kerf_quota_fits(&x.tt, x.a, &r, false, &v));
	assert_verdict(&v, x.a, CPU, INF, limit, false);
	assert_false(kerf_quota_fits(&x.tt, x.b, &r, false, &v));
	assert_verdict(&v, x.b, CPU, INF, INF - 1, false);
	assert_false(kerf_quota_fits(&x.tt, x.b, &r, true, &v));
	assert_verdict(&v, x.b, CPU, INF, INF - 1, true);

	/* exactly a limit's worth fits; one more milli per pod does not */
	p.cpu_milli = limit / 7;
	kerf_res_of_pod(&r, &p, -1, 7);
	assert_int_equal(r.v[CPU], limit);
	assert_true(kerf_quota_fits(&x.tt, x.a, &r, false, &v));
	p.cpu_milli++;
	kerf_res_of_pod(&r, &p, -1, 7);
	assert_false(kerf_quota_fits(&x.tt, x.a, &r, false, &v));
	assert_verdict(&v, x.a, CPU, limit + 7, limit, false);

	/* usage near the top: the sum saturates, it never wraps negative */
	kerf_res_zero(&r);
	r.v[CPU] = 6000000000000000000;
	kerf_quota_charge(&x.tt, x.a, &r, false);
	r.v[CPU] = 5000000000000000000;
	assert_false(kerf_quota_fits(&x.tt, x.a, &r, false, &v));
	assert_verdict(&v, x.a, CPU, INF, limit, false);
	check_ok(&x);
	kerf_tenants_release(&x.tt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_claim_is_max_of_usage_and_protected),
		cmocka_unit_test(test_internal_claim_is_max_of_children_and_protected),
		cmocka_unit_test(test_borrow_from_idle_sibling),
		cmocka_unit_test(test_lending_limit_blocks_borrowing),
		cmocka_unit_test(test_borrow_limit_enforced),
		cmocka_unit_test(test_root_is_not_a_limit),
		cmocka_unit_test(test_governs),
		cmocka_unit_test(test_nonpreemptible_within_nominal),
		cmocka_unit_test(test_nonpreemptible_nominal_of_ancestor),
		cmocka_unit_test(test_charge_release_round_trip),
		cmocka_unit_test(test_release_more_than_used_refused),
		cmocka_unit_test(test_validate_messages),
		cmocka_unit_test(test_set_quota_below_usage),
		cmocka_unit_test(test_set_quota_recomputes_claims),
		cmocka_unit_test(test_check_detects_corruption),
		cmocka_unit_test(test_check_detects_negative_usage),
		cmocka_unit_test(test_child_claims_saturate),
		cmocka_unit_test(test_overflow_never_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
