/*
 * pod_validate: /validate/pods.  Which pods are judged, then every rule
 * file over them (pod_env.c, pod_security.c, pod_gpu.c, pod_meta.c).
 *
 * Judged: a Pod CREATE or UPDATE (the pod itself or its ephemeral
 * containers) outside the excluded namespaces that is a GPU pod.  Mirror
 * pods are judged too: the annotation that marks them is one any pod can
 * carry (only the mutation leaves them alone).  The rules read the final object, after every mutating
 * webhook, so kerf's own defaults are checked like anything else.
 */
#include "admission/pod_rules.h"

#include <string.h>

void kerf_admission_validate_pod(const struct kerf_admission_policy *p,
				 const struct kerf_admission_request *req,
				 struct kerf_admission_decision *d)
{
	struct kerf_pod_facts f;
	struct kerf_pod_check ck = { .p = p, .req = req, .f = &f, .d = d };

	if (strcmp(req->kind.kind, "Pod") || *req->kind.group ||
	    (req->op != KERF_ADMISSION_CREATE && req->op != KERF_ADMISSION_UPDATE) ||
	    (*req->sub_resource && strcmp(req->sub_resource, "ephemeralcontainers")) ||
	    !req->object)
		return;
	kerf_pod_facts(p, req, req->object, &f);
	if (f.excluded)
		return;
	if (!f.ns && f.requests_gpu) {
		/* the API server only calls for tenant namespaces: one kerf has
		 * not seen yet is judged when it has, not waved through */
		kerf_admission_deny(d, "namespace-unknown", "metadata.namespace",
				    "namespace '%s' is not known to kerf yet; retry in a few seconds",
				    req->namespace);
		return;
	}
	if (!f.gpu_pod)
		return;
	ck.pod = req->object;
	ck.old = req->op == KERF_ADMISSION_UPDATE ? req->old_object : NULL;
	kerf_pod_each_container(f.spec, kerf_pod_check_container, &ck);
	kerf_pod_check_pod_security(&ck);
	kerf_pod_check_gpu(&ck);
	kerf_pod_check_meta(&ck);
}

void kerf_pod_check_container(void *ctx, enum kerf_container_kind kind,
			      const json_t *c, const char *path)
{
	struct kerf_pod_check *ck = ctx;

	(void)kind;
	kerf_pod_check_env(ck, c, path);
	kerf_pod_check_container_security(ck, c, path);
}
