/*
 * claim_validate: /validate/resourceclaims, DRA claims of tenant
 * namespaces (reliability.md §6.1 row 38).  A ResourceClaim or a
 * ResourceClaimTemplate (resource.k8s.io v1, v1beta2 and v1beta1 shapes)
 * is refused when a request
 *   - asks adminAccess (it reaches devices other pods hold), or
 *   - names a GPU device class (--gpu-device-class): a tenant's GPUs go
 *     through kerf's quota (nvidia.com/gpu, MIG resources, fractions),
 *     and a DRA claim for them would be allocated outside it.
 * Requests are read wherever they can be: requests[] itself (v1beta1),
 * requests[].exactly (v1, v1beta2) and requests[].firstAvailable[].
 */
#include "admission/decide.h"

#include <stdio.h>
#include <string.h>

#include "admission/pod_facts.h"
#include "base/buf.h"
#include "kobj/json_field.h"

static void check_request(const struct kerf_admission_policy *p,
			  const json_t *r, const char *path,
			  struct kerf_admission_decision *d)
{
	char field[KERF_ADMISSION_FIELD_MAX], shown[96];
	const char *cls = kerf_str(r, "deviceClassName");

	if (kerf_true(r, "adminAccess")) {
		kerf_admission_field(field, "%s.adminAccess", path);
		kerf_admission_deny(d, "dra-admin-access", field,
				    "admin access reaches devices other pods hold; tenants may not ask it");
	}
	if (*cls && kerf_admission_list_has(&p->cfg.gpu_device_classes, cls)) {
		kerf_admission_field(field, "%s.deviceClassName", path);
		kerf_admission_deny(d, "dra-gpu-class", field,
				    "'%s' gives GPUs outside the tenant's quota; ask nvidia.com/gpu, a MIG resource or kerf.io/gpu-fraction",
				    kerf_escape(shown, sizeof(shown), cls));
	}
}

void kerf_admission_validate_claim(const struct kerf_admission_policy *p,
				   const struct kerf_admission_request *req,
				   struct kerf_admission_decision *d)
{
	const json_t *spec, *reqs, *r;
	const struct kerf_admission_ns *ns;
	const char *base;
	char path[KERF_ADMISSION_FIELD_MAX];
	size_t i;

	if (strcmp(req->kind.group, "resource.k8s.io") ||
	    (strcmp(req->kind.kind, "ResourceClaim") &&
	     strcmp(req->kind.kind, "ResourceClaimTemplate")) ||
	    (req->op != KERF_ADMISSION_CREATE && req->op != KERF_ADMISSION_UPDATE) ||
	    *req->sub_resource || !req->object)
		return;
	ns = kerf_admission_policy_ns(p, req->namespace);
	if (kerf_admission_list_has(&p->cfg.excluded_namespaces, req->namespace) ||
	    (ns && !ns->tenant[0]))
		return;   /* not a tenant's (unknown: judged, as for pods) */
	spec = kerf_json_get(req->object, "spec");
	base = "spec.devices.requests";
	if (!strcmp(req->kind.kind, "ResourceClaimTemplate")) {
		spec = kerf_json_get(spec, "spec");
		base = "spec.spec.devices.requests";
	}
	reqs = kerf_json_get(kerf_json_get(spec, "devices"), "requests");
	json_array_foreach(reqs, i, r) {
		const json_t *sub, *s;
		size_t j;

		kerf_admission_field(path, "%s[%zu]", base, i);
		check_request(p, r, path, d);
		kerf_admission_field(path, "%s[%zu].exactly", base, i);
		check_request(p, kerf_json_get(r, "exactly"), path, d);
		sub = kerf_json_get(r, "firstAvailable");
		json_array_foreach(sub, j, s) {
			kerf_admission_field(path, "%s[%zu].firstAvailable[%zu]", base, i, j);
			check_request(p, s, path, d);
		}
	}
}
