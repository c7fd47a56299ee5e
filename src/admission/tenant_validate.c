/*
 * tenant_validate: /validate/tenants.  A Tenant is decoded as kerf serve
 * decodes it (every field checked, the error naming it), then checked
 * against the other tenants the way the API server cannot, one object at
 * a time: the parent exists and is no descendant, the children's nominal
 * quotas fit in their parent's (this tenant's new quotas counted, as
 * parent and as child), the priority ceiling names a class that exists
 * and the network class is one kerf knows.
 */
#include "admission/decide.h"

#include <string.h>

#include "admission/netclass.h"
#include "base/buf.h"
#include "kobj/tenant.h"

static int64_t nominal(const struct kerf_kobj_tenant *t, const char *flavor)
{
	for (size_t q = 0; q < t->nr_quotas; q++)
		if (!strcmp(t->quotas[q].flavor, flavor))
			return t->quotas[q].nominal;
	return 0;
}

/* The children of parent sum (t in place of its stored self) within it. */
static void check_fit(const struct kerf_admission_policy *p,
		      const struct kerf_kobj_tenant *parent,
		      const struct kerf_kobj_tenant *t,
		      struct kerf_admission_decision *d, const char *field)
{
	/* every flavor any child names */
	for (size_t i = 0; i <= p->nr_tenants; i++) {
		const struct kerf_kobj_tenant *c = i < p->nr_tenants ? &p->tenants[i] : t;

		if (i < p->nr_tenants && (!strcmp(c->name, t->name) ||
					  strcmp(c->parent, parent->name)))
			continue;
		if (i == p->nr_tenants && strcmp(t->parent, parent->name))
			continue;
		for (size_t q = 0; q < c->nr_quotas; q++) {
			const char *fl = c->quotas[q].flavor;
			int64_t sum = 0, have = nominal(parent, fl);

			for (size_t j = 0; j <= p->nr_tenants; j++) {
				const struct kerf_kobj_tenant *s = j < p->nr_tenants ? &p->tenants[j] : t;

				if (j < p->nr_tenants && !strcmp(s->name, t->name))
					continue;
				if (strcmp(s->parent, parent->name))
					continue;
				sum += nominal(s, fl);
			}
			if (sum > have) {
				char a[24], b[24];

				kerf_admission_deny(d, "quota-tree", field,
						    "the nominal quotas of '%s''s children sum to %s %s, more than its nominal %s",
						    parent->name,
						    kerf_kobj_format_milli(a, sizeof(a), sum), fl,
						    kerf_kobj_format_milli(b, sizeof(b), have));
				return;
			}
		}
	}
}

void kerf_admission_validate_tenant(const struct kerf_admission_policy *p,
				    const struct kerf_admission_request *req,
				    struct kerf_admission_decision *d)
{
	struct kerf_kobj_tenant t;
	struct kerf_err err = { 0 };
	const struct kerf_kobj_tenant *parent = NULL, *old;
	char shown[96];

	if (strcmp(req->kind.kind, "Tenant") || strcmp(req->kind.group, "kerf.io") ||
	    (req->op != KERF_ADMISSION_CREATE && req->op != KERF_ADMISSION_UPDATE) ||
	    *req->sub_resource || !req->object)
		return;
	if (kerf_kobj_tenant_decode(req->object, &t, &err) < 0) {
		const char *colon = strstr(err.msg, ": ");
		char field[KERF_ADMISSION_FIELD_MAX];
		size_t n = colon ? (size_t)(colon - err.msg) : 0;

		if (n >= sizeof(field))
			n = 0;
		memcpy(field, err.msg, n);
		field[n] = 0;
		kerf_admission_deny(d, "tenant-spec", n ? field : "spec", "%s",
				    n ? colon + 2 : err.msg);
		return;
	}
	old = kerf_admission_policy_tenant(p, t.name);
	if (req->op == KERF_ADMISSION_UPDATE && old && strcmp(old->parent, t.parent))
		kerf_admission_deny(d, "tenant-spec", "spec.parent",
				    "is immutable ('%s' before): delete and re-create the tenant to move it",
				    old->parent);
	if (t.parent[0]) {
		const struct kerf_kobj_tenant *up;
		int depth = 0;

		parent = kerf_admission_policy_tenant(p, t.parent);
		if (!parent)
			kerf_admission_deny(d, "tenant-spec", "spec.parent",
					    "tenant '%s' does not exist", t.parent);
		for (up = parent; up && up->parent[0] && depth < 64; depth++) {
			if (!strcmp(up->parent, t.name)) {
				kerf_admission_deny(d, "tenant-spec", "spec.parent",
						    "'%s' is below '%s': the parents would form a cycle",
						    t.parent, t.name);
				break;
			}
			up = kerf_admission_policy_tenant(p, up->parent);
		}
		if (parent)
			check_fit(p, parent, &t, d, "spec.quotas");
	}
	if (kerf_admission_policy_has_children(p, t.name))
		check_fit(p, &t, &t, d, "spec.quotas");
	if (t.has_ceiling && t.ceiling_class[0] &&
	    !kerf_admission_policy_class(p, t.ceiling_class))
		kerf_admission_deny(d, "tenant-spec", "spec.priorityCeiling.priorityClassName",
				    "no PriorityClass '%s'",
				    kerf_escape(shown, sizeof(shown), t.ceiling_class));
	if (t.network_class[0] && !kerf_netclass_find(t.network_class))
		kerf_admission_deny(d, "tenant-spec", "spec.networkClass",
				    "'%s' is not one of %s",
				    kerf_escape(shown, sizeof(shown), t.network_class),
				    kerf_netclass_names());
	for (size_t q = 0; q < t.nr_quotas; q++) {
		const char *fl = t.quotas[q].flavor;

		if (strcmp(fl, "cpu") && strcmp(fl, "memory") &&
		    !kerf_admission_policy_pool(p, fl))
			kerf_admission_warn(d, "spec.quotas[%zu].flavor: no GPUPool '%s' yet; the quota applies once it exists",
					    q, fl);
	}
}
