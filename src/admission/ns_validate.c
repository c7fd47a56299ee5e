/*
 * ns_validate: /validate/namespaces.  A namespace's kerf.io/tenant label
 * puts its GPU pods on a tenant's quota, so setting, changing or removing
 * it is an escape route (reliability.md §6, item 7): only the principals
 * of the settings (label_users, label_groups, kerf's own) may, and never
 * on an excluded namespace.  Everything else about namespaces passes.
 */
#include "admission/decide.h"

#include <string.h>

#include "admission/pod_facts.h"
#include "base/buf.h"
#include "kobj/json_field.h"
#include "kobj/names.h"

static const char *tenant_of(const json_t *ns)
{
	return json_string_value(kerf_json_get(kerf_json_get(kerf_json_get(ns,
		"metadata"), "labels"), KERF_LABEL_TENANT));
}

static bool may_label(const struct kerf_admission_policy *p,
		      const struct kerf_admission_user *u)
{
	if (kerf_admission_list_has(&p->cfg.label_users, u->username) ||
	    kerf_admission_list_has(&p->cfg.kerf_users, u->username))
		return true;
	for (size_t i = 0; i < u->nr_groups; i++)
		if (kerf_admission_list_has(&p->cfg.label_groups,
					    kerf_admission_user_group(u, i)))
			return true;
	return false;
}

void kerf_admission_validate_namespace(const struct kerf_admission_policy *p,
				       const struct kerf_admission_request *req,
				       struct kerf_admission_decision *d)
{
	const char *field = "metadata.labels.kerf.io/tenant";
	const char *now, *before;
	const char *name;
	const struct kerf_kobj_tenant *t;
	char shown[96], user[96];

	if (strcmp(req->kind.kind, "Namespace") || *req->kind.group ||
	    (req->op != KERF_ADMISSION_CREATE && req->op != KERF_ADMISSION_UPDATE) ||
	    *req->sub_resource || !req->object)
		return;
	now = tenant_of(req->object);
	before = req->op == KERF_ADMISSION_UPDATE ? tenant_of(req->old_object) : NULL;
	if (kerf_json_get(kerf_json_get(kerf_json_get(req->object, "metadata"), "labels"),
			  KERF_LABEL_TENANT) && !now) {
		kerf_admission_deny(d, "namespace-tenant", field, "expected a string");
		return;
	}
	if ((!now && !before) || (now && before && !strcmp(now, before)))
		return;
	name = *req->name ? req->name
		: kerf_str(kerf_json_get(req->object, "metadata"), "name");
	kerf_escape(user, sizeof(user), req->user.username);
	if (!may_label(p, &req->user)) {
		kerf_admission_deny(d, "namespace-tenant", field,
				    "'%s' may not %s a namespace's tenant: it moves the namespace's GPU pods onto another quota (ask a cluster administrator)",
				    user, !before ? "set" : !now ? "remove" : "change");
		return;
	}
	if (!now)
		return;
	if (kerf_admission_list_has(&p->cfg.excluded_namespaces, name)) {
		kerf_admission_deny(d, "namespace-tenant", field,
				    "namespace '%s' is excluded from kerf's admission and cannot join a tenant",
				    kerf_escape(shown, sizeof(shown), name));
		return;
	}
	t = kerf_admission_policy_tenant(p, now);
	if (!t)
		kerf_admission_warn(d, "tenant '%s' does not exist yet: GPU pods of this namespace are refused until it does",
				    kerf_escape(shown, sizeof(shown), now));
	else if (kerf_admission_policy_has_children(p, now))
		kerf_admission_deny(d, "namespace-tenant", field,
				    "tenant '%s' has child tenants; namespaces join leaf tenants",
				    kerf_escape(shown, sizeof(shown), now));
}
