#include "core/tenant.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

void kerf_quota_default(struct kerf_quota *q)
{
	kerf_res_zero(&q->nominal);
	kerf_res_fill(&q->borrow_limit, KERF_QTY_INF);
	kerf_res_fill(&q->lend_limit, KERF_QTY_INF);
}

int kerf_tenants_init(struct kerf_tenants *tt, int nr_res)
{
	memset(tt, 0, sizeof(*tt));
	tt->nr_res = nr_res;
	tt->t = calloc(16, sizeof(*tt->t));
	if (!tt->t)
		return -KERF_ENOMEM;
	tt->alloc = 16;
	tt->nr = 1;
	strcpy(tt->t[0].name, "cluster");
	tt->t[0].parent = -1;
	tt->t[0].weight = 1;
	kerf_quota_default(&tt->t[0].quota);
	kerf_res_zero(&tt->t[0].quota.borrow_limit);
	return 0;
}

void kerf_tenants_release(struct kerf_tenants *tt)
{
	free(tt->t);
	memset(tt, 0, sizeof(*tt));
}

int kerf_tenants_copy(struct kerf_tenants *dst, const struct kerf_tenants *src)
{
	*dst = *src;
	dst->t = malloc(src->alloc * sizeof(*dst->t));
	if (!dst->t)
		return -KERF_ENOMEM;
	memcpy(dst->t, src->t, src->nr * sizeof(*dst->t));
	return 0;
}

void kerf_tenants_set_capacity(struct kerf_tenants *tt,
			       const struct kerf_res *cap)
{
	tt->t[KERF_TENANT_ROOT].quota.nominal = *cap;
}

int kerf_tenants_find(const struct kerf_tenants *tt, const char *name)
{
	for (size_t i = 0; i < tt->nr; i++)
		if (!tt->t[i].removed && strcmp(tt->t[i].name, name) == 0)
			return (int)i;
	return -KERF_ENOTFOUND;
}

static int64_t claim_of(const struct kerf_tenant *t, int i, int64_t base);

/*
 * Claims and child-claim sums from the leaves up, into out (NULL: into the
 * tenants themselves).  Parents come before children, so a reverse walk
 * sees every child before its parent.
 */
static void recompute_claims(struct kerf_tenants *tt, struct kerf_tenant *src,
			     struct kerf_res *out_claims)
{
	size_t n = tt->nr;

	/* First zero every child sum, then add claims upwards. */
	for (size_t k = 0; k < n; k++)
		kerf_res_zero(&src[k].child_claims);
	for (size_t k = n; k-- > 0;) {
		struct kerf_tenant *x = &src[k];
		struct kerf_res *claim = out_claims ? &out_claims[k] : &x->claim;

		for (int i = 0; i < KERF_MAX_RES; i++) {
			int64_t base = x->nr_children ? x->child_claims.v[i]
						       : x->usage.v[i];

			claim->v[i] = claim_of(x, i, base);
			if (x->parent >= 0)
				src[x->parent].child_claims.v[i] = kerf_qty_add(
					src[x->parent].child_claims.v[i],
					claim->v[i]);
		}
	}
}

int kerf_tenants_add(struct kerf_tenants *tt, const char *name, int parent,
		     const struct kerf_quota *quota, uint32_t weight,
		     struct kerf_err *err)
{
	struct kerf_tenant *t;
	size_t len = strlen(name);

	if (len == 0 || len >= KERF_TENANT_NAME_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant name '%s': must be 1 to %d bytes",
				    name, KERF_TENANT_NAME_MAX - 1);
	if (kerf_tenants_find(tt, name) >= 0)
		return kerf_err_set(err, -KERF_EEXIST,
				    "tenant '%s': defined twice", name);
	if (parent < 0 || (size_t)parent >= tt->nr || tt->t[parent].removed)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': parent %d does not exist",
				    name, parent);
	if (weight < 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "tenant '%s': weight must be at least 1", name);
	if (tt->nr >= KERF_MAX_TENANTS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "tenant '%s': more than %d tenants", name,
				    KERF_MAX_TENANTS);
	if (KERF_GROW(tt->t, tt->alloc, tt->nr + 1) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	t = &tt->t[tt->nr];
	memset(t, 0, sizeof(*t));
	memcpy(t->name, name, len + 1);
	t->parent = parent;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		t->budget.model_weight_pct[m] = 100;
	t->depth = tt->t[parent].depth + 1;
	t->weight = weight;
	if (quota)
		t->quota = *quota;
	else
		kerf_quota_default(&t->quota);
	tt->t[parent].nr_children++;
	tt->nr++;
	/* The new tenant's protected quota is a claim on its ancestors. */
	recompute_claims(tt, tt->t, NULL);
	return (int)tt->nr - 1;
}

void kerf_tenants_pop(struct kerf_tenants *tt)
{
	struct kerf_tenant *t = &tt->t[tt->nr - 1];

	tt->t[t->parent].nr_children--;
	tt->nr--;
	recompute_claims(tt, tt->t, NULL);
}

void kerf_tenants_remove(struct kerf_tenants *tt, int t)
{
	struct kerf_tenant *x = &tt->t[t];

	tt->t[x->parent].nr_children--;
	kerf_res_zero(&x->quota.nominal);
	kerf_res_zero(&x->quota.borrow_limit);
	kerf_res_zero(&x->quota.lend_limit);
	x->budget.limit_milli_ms = 0;
	x->idle.action = KERF_IDLE_NONE;
	x->removed = true;
	recompute_claims(tt, tt->t, NULL);
}

static int64_t protected_of(const struct kerf_tenant *t, int i)
{
	int64_t nom = t->quota.nominal.v[i], lend = t->quota.lend_limit.v[i];

	return nom - (lend < nom ? lend : nom);
}

bool kerf_tenant_governs(const struct kerf_tenants *tt, int tenant, int i)
{
	const struct kerf_quota *q = &tt->t[tenant].quota;

	return q->nominal.v[i] > 0 || q->borrow_limit.v[i] != KERF_QTY_INF;
}

int64_t kerf_tenant_limit(const struct kerf_tenants *tt, int tenant, int i)
{
	const struct kerf_tenant *t = &tt->t[tenant];

	if (tenant == KERF_TENANT_ROOT)
		return KERF_QTY_INF;
	return kerf_qty_add(t->quota.nominal.v[i], t->quota.borrow_limit.v[i]);
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* The claim of t in dimension i given its base (usage or child claims). */
static int64_t claim_of(const struct kerf_tenant *t, int i, int64_t base)
{
	return max64(base, protected_of(t, i));
}

bool kerf_quota_fits(const struct kerf_tenants *tt, int leaf,
		     const struct kerf_res *req, bool nonpreemptible,
		     struct kerf_quota_verdict *why)
{
	struct kerf_quota_verdict v = { .fits = true, .tenant = -1, .res = -1 };

	for (int i = 0; i < tt->nr_res && v.fits; i++) {
		int64_t q = req->v[i], old_claim, new_claim;
		int t = leaf;

		if (q == 0)
			continue;
		old_claim = tt->t[t].claim.v[i];
		new_claim = claim_of(&tt->t[t], i, kerf_qty_add(tt->t[t].usage.v[i], q));
		for (;;) {
			const struct kerf_tenant *x = &tt->t[t];
			int64_t limit = kerf_tenant_limit(tt, t, i);

			if (nonpreemptible && t != KERF_TENANT_ROOT &&
			    kerf_tenant_governs(tt, t, i) &&
			    kerf_qty_add(x->usage_np.v[i], q) > x->quota.nominal.v[i]) {
				v = (struct kerf_quota_verdict){
					.fits = false, .tenant = t, .res = i,
					.need = kerf_qty_add(x->usage_np.v[i], q),
					.limit = x->quota.nominal.v[i],
					.nominal_only = true,
				};
				break;
			}
			if (new_claim > limit) {
				v = (struct kerf_quota_verdict){
					.fits = false, .tenant = t, .res = i,
					.need = new_claim, .limit = limit,
				};
				break;
			}
			if (x->parent < 0)
				break;
			{
				const struct kerf_tenant *p = &tt->t[x->parent];
				int64_t sum = p->child_claims.v[i] - old_claim;

				old_claim = p->claim.v[i];
				new_claim = claim_of(p, i, kerf_qty_add(sum, new_claim));
			}
			t = x->parent;
		}
	}
	if (why)
		*why = v;
	return v.fits;
}

/* Recompute the claims on the path of leaf in dimension i. */
/*
 * Parent p's sum of child claims after one child's claim went from old to
 * new.  Exact while nothing saturates; once a term or the sum is at
 * KERF_QTY_INF the sum is taken again, saturating, from the children.
 */
static int64_t child_sum_after(const struct kerf_tenants *tt, int p, int i,
			       int64_t old, int64_t new)
{
	int64_t sum = tt->t[p].child_claims.v[i];

	if (sum != KERF_QTY_INF && old != KERF_QTY_INF && new != KERF_QTY_INF)
		return kerf_qty_add(sum - old, new);
	sum = 0;
	for (size_t j = (size_t)p + 1; j < tt->nr; j++)
		if (tt->t[j].parent == p)
			sum = kerf_qty_add(sum, tt->t[j].claim.v[i]);
	return sum;
}

static void update_claims(struct kerf_tenants *tt, int leaf, int i)
{
	int t = leaf;
	int64_t base = tt->t[t].usage.v[i];

	for (;;) {
		struct kerf_tenant *x = &tt->t[t];
		int64_t old = x->claim.v[i];

		x->claim.v[i] = claim_of(x, i, base);
		if (x->parent < 0 || x->claim.v[i] == old)
			return;
		base = child_sum_after(tt, x->parent, i, old, x->claim.v[i]);
		tt->t[x->parent].child_claims.v[i] = base;
		t = x->parent;
	}
}

void kerf_quota_charge(struct kerf_tenants *tt, int leaf,
		       const struct kerf_res *req, bool nonpreemptible)
{
	for (int t = leaf; t >= 0; t = tt->t[t].parent) {
		kerf_res_add(&tt->t[t].usage, req);
		if (nonpreemptible)
			kerf_res_add(&tt->t[t].usage_np, req);
	}
	for (int i = 0; i < tt->nr_res; i++)
		if (req->v[i])
			update_claims(tt, leaf, i);
}

void kerf_quota_charge_own(struct kerf_tenants *tt, int leaf,
			   const struct kerf_res *req)
{
	for (int t = leaf; t >= 0; t = tt->t[t].parent)
		kerf_res_add(&tt->t[t].usage_own, req);
}

void kerf_quota_release_own(struct kerf_tenants *tt, int leaf,
			    const struct kerf_res *req)
{
	for (int t = leaf; t >= 0; t = tt->t[t].parent)
		for (int i = 0; i < KERF_MAX_RES; i++)
			tt->t[t].usage_own.v[i] -= req->v[i] < tt->t[t].usage_own.v[i]
							   ? req->v[i]
							   : tt->t[t].usage_own.v[i];
}

int kerf_quota_release(struct kerf_tenants *tt, int leaf,
		       const struct kerf_res *req, bool nonpreemptible,
		       struct kerf_err *err)
{
	for (int t = leaf; t >= 0; t = tt->t[t].parent) {
		for (int i = 0; i < tt->nr_res; i++)
			if (tt->t[t].usage.v[i] < req->v[i] ||
			    (nonpreemptible && tt->t[t].usage_np.v[i] < req->v[i]))
				return kerf_err_set(err, -KERF_ERANGE,
						    "tenant '%s': releasing more than it uses",
						    tt->t[t].name);
	}
	for (int t = leaf; t >= 0; t = tt->t[t].parent) {
		kerf_res_sub(&tt->t[t].usage, req);
		if (nonpreemptible)
			kerf_res_sub(&tt->t[t].usage_np, req);
	}
	for (int i = 0; i < tt->nr_res; i++)
		if (req->v[i])
			update_claims(tt, leaf, i);
	return 0;
}

int kerf_tenants_set_quota(struct kerf_tenants *tt, int tenant,
			   const struct kerf_quota *quota)
{
	if (tenant <= KERF_TENANT_ROOT || (size_t)tenant >= tt->nr)
		return -KERF_EINVAL;
	tt->t[tenant].quota = *quota;
	recompute_claims(tt, tt->t, NULL);
	return 0;
}

/* Do the nominals of p's children fit in p's? */
static int check_children(const struct kerf_tenants *tt, size_t k,
			  const struct kerf_cluster *c, struct kerf_err *err)
{
	const struct kerf_tenant *p = &tt->t[k];

	for (int i = 0; i < tt->nr_res; i++) {
		int64_t sum = 0;
		char dim[48];

		for (size_t j = k + 1; j < tt->nr; j++)
			if (tt->t[j].parent == (int)k && !tt->t[j].removed)
				sum = kerf_qty_add(sum, tt->t[j].quota.nominal.v[i]);
		if (sum <= p->quota.nominal.v[i])
			continue;
		kerf_res_name(c, i, dim, sizeof(dim));
		return kerf_err_set(err, -KERF_EINVAL,
				    k == KERF_TENANT_ROOT
					    ? "tenants under '%s' %s: nominal quotas sum to %" PRId64 ", the cluster has %" PRId64
					    : "tenants under '%s' %s: nominal quotas sum to %" PRId64 ", more than its nominal %" PRId64,
				    p->name, dim, sum, p->quota.nominal.v[i]);
	}
	return 0;
}

/* t's own quota: nothing negative, lending within nominal. */
static int check_own(const struct kerf_tenants *tt, size_t k,
		     const struct kerf_cluster *c, struct kerf_err *err)
{
	const struct kerf_tenant *x = &tt->t[k];

	for (int i = 0; i < tt->nr_res; i++) {
		char dim[48];
		int64_t nom = x->quota.nominal.v[i];

		kerf_res_name(c, i, dim, sizeof(dim));
		if (nom < 0 || x->quota.borrow_limit.v[i] < 0 ||
		    x->quota.lend_limit.v[i] < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "tenant '%s' %s: quota values must not be negative",
					    x->name, dim);
		if (x->quota.lend_limit.v[i] != KERF_QTY_INF &&
		    x->quota.lend_limit.v[i] > nom)
			return kerf_err_set(err, -KERF_EINVAL,
					    "tenant '%s' %s: lending_limit %" PRId64 " is more than nominal %" PRId64,
					    x->name, dim, x->quota.lend_limit.v[i], nom);
	}
	return 0;
}

int kerf_tenants_validate_one(const struct kerf_tenants *tt, int t,
			      const struct kerf_cluster *c, struct kerf_err *err)
{
	int rc = check_own(tt, (size_t)t, c, err);

	if (rc == 0)
		rc = check_children(tt, (size_t)t, c, err);
	/* under the root: what the cluster has may shrink, guarantees stay */
	if (rc == 0 && tt->t[t].parent > KERF_TENANT_ROOT)
		rc = check_children(tt, (size_t)tt->t[t].parent, c, err);
	return rc;
}

int kerf_tenants_validate(const struct kerf_tenants *tt,
			  const struct kerf_cluster *c, struct kerf_err *err)
{
	int rc = 0;

	for (size_t k = 1; k < tt->nr && rc == 0; k++)
		rc = check_own(tt, k, c, err);
	for (size_t k = 0; k < tt->nr && rc == 0; k++)
		rc = check_children(tt, k, c, err);
	return rc;
}

int kerf_tenants_check(const struct kerf_tenants *tt, struct kerf_err *err)
{
	struct kerf_tenant *copy = malloc(tt->nr * sizeof(*copy));
	struct kerf_res *claims = malloc(tt->nr * sizeof(*claims));
	int rc = 0;

	if (!copy || !claims) {
		free(copy);
		free(claims);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	memcpy(copy, tt->t, tt->nr * sizeof(*copy));
	/* counters in range first: the sums below need them >= 0 */
	for (size_t k = 0; k < tt->nr && rc == 0; k++) {
		const struct kerf_tenant *x = &tt->t[k];

		for (int i = 0; i < KERF_MAX_RES && rc == 0; i++)
			if (x->usage.v[i] < 0 || x->usage_np.v[i] < 0 ||
			    x->usage_np.v[i] > x->usage.v[i] ||
			    x->usage_own.v[i] < 0 || x->usage_own.v[i] > x->usage.v[i] ||
			    x->claim.v[i] < 0 || x->child_claims.v[i] < 0)
				rc = kerf_err_set(err, -KERF_ERANGE,
						  "tenant '%s': usage counter out of range",
						  x->name);
	}
	/* usage of an internal tenant is the sum of its children's */
	for (size_t k = tt->nr; k-- > 0 && rc == 0;) {
		const struct kerf_tenant *x = &tt->t[k];
		struct kerf_res sum, sum_np, sum_own;

		if (x->nr_children == 0)
			continue;
		kerf_res_zero(&sum);
		kerf_res_zero(&sum_np);
		kerf_res_zero(&sum_own);
		for (size_t j = k + 1; j < tt->nr; j++) {
			if (tt->t[j].parent != (int)k)
				continue;
			kerf_res_add(&sum, &tt->t[j].usage);
			kerf_res_add(&sum_np, &tt->t[j].usage_np);
			kerf_res_add(&sum_own, &tt->t[j].usage_own);
		}
		if (memcmp(&sum, &x->usage, sizeof(sum)) ||
		    memcmp(&sum_np, &x->usage_np, sizeof(sum_np)) ||
		    memcmp(&sum_own, &x->usage_own, sizeof(sum_own)))
			rc = kerf_err_set(err, -KERF_ERANGE,
					  "tenant '%s': usage is not the sum of its children's",
					  x->name);
	}
	if (rc == 0)
		recompute_claims((struct kerf_tenants *)tt, copy, claims);
	for (size_t k = 0; k < tt->nr && rc == 0; k++) {
		const struct kerf_tenant *x = &tt->t[k];

		for (int i = 0; i < tt->nr_res && rc == 0; i++) {
			if (claims[k].v[i] != x->claim.v[i])
				rc = kerf_err_set(err, -KERF_ERANGE,
						  "tenant '%s': claim %" PRId64 " kept, %" PRId64 " recomputed",
						  x->name, x->claim.v[i], claims[k].v[i]);
			else if (copy[k].child_claims.v[i] != x->child_claims.v[i])
				rc = kerf_err_set(err, -KERF_ERANGE,
						  "tenant '%s': children's claims %" PRId64 " kept, %" PRId64 " recomputed",
						  x->name, x->child_claims.v[i],
						  copy[k].child_claims.v[i]);
		}
	}
	free(copy);
	free(claims);
	return rc;
}

bool kerf_tenants_over_limit(const struct kerf_tenants *tt, int tenant,
			     int *res)
{
	for (int t = tenant; t > KERF_TENANT_ROOT; t = tt->t[t].parent)
		for (int i = 0; i < tt->nr_res; i++)
			if (tt->t[t].claim.v[i] > kerf_tenant_limit(tt, t, i)) {
				if (res)
					*res = i;
				return true;
			}
	return false;
}
