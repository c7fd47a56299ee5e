#include "admission/pod_facts.h"

#include <stdio.h>
#include <string.h>

#include "base/quantity.h"
#include "kobj/json_field.h"
#include "kobj/names.h"

const char *kerf_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(kerf_json_get(o, key));

	return s ? s : "";
}

bool kerf_true(const json_t *o, const char *key)
{
	return json_is_true(kerf_json_get(o, key));
}

bool kerf_pod_gpu_resource(const char *name)
{
	return !strcmp(name, KERF_RES_GPU) ||
	       !strncmp(name, KERF_RES_MIG_PREFIX, strlen(KERF_RES_MIG_PREFIX));
}

static bool has_gpu_key(const json_t *m)
{
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)m, k, v)
		if (kerf_pod_gpu_resource(k))
			return true;
	return false;
}

bool kerf_container_has_gpu(const json_t *c)
{
	const json_t *r = kerf_json_get(c, "resources");

	return has_gpu_key(kerf_json_get(r, "limits")) ||
	       has_gpu_key(kerf_json_get(r, "requests"));
}

void kerf_pod_each_container(const json_t *spec, kerf_container_fn fn,
			     void *ctx)
{
	static const struct { const char *key; enum kerf_container_kind kind; } kinds[] = {
		{ "initContainers", KERF_CONTAINER_INIT },
		{ "containers", KERF_CONTAINER_APP },
		{ "ephemeralContainers", KERF_CONTAINER_EPHEMERAL },
	};
	char path[64];

	for (size_t k = 0; k < 3; k++) {
		const json_t *a = kerf_json_get(spec, kinds[k].key);
		size_t i;
		const json_t *c;

		if (!json_is_array(a))
			continue;
		json_array_foreach(a, i, c) {
			if (!json_is_object(c))
				continue;
			snprintf(path, sizeof(path), "spec.%s[%zu]",
				 kinds[k].key, i);
			fn(ctx, kinds[k].kind, c, path);
		}
	}
}

struct scan {
	struct kerf_pod_facts *f;
};

static void scan_container(void *ctx, enum kerf_container_kind kind,
			   const json_t *c, const char *path)
{
	struct kerf_pod_facts *f = ctx;
	const json_t *r = kerf_json_get(c, "resources");
	const json_t *lims[2] = { kerf_json_get(r, "limits"),
				  kerf_json_get(r, "requests") };

	(void)path;
	(void)kind;
	for (int l = 0; l < 2; l++) {
		const char *k;
		const json_t *v;

		json_object_foreach((json_t *)lims[l], k, v) {
			int64_t n = 0;

			if (!kerf_pod_gpu_resource(k))
				continue;
			if (json_is_string(v) &&
			    kerf_quantity_parse_whole(json_string_value(v), &n) == 0 &&
			    n == 0)
				continue;         /* asks for none */
			f->requests_gpu = true;
			if (!strcmp(k, KERF_RES_GPU)) {
				/* more than a node has is refused (pod_gpu.c);
				 * kept bounded here so sums cannot overflow */
				if (n > KERF_POD_GPUS_MAX)
					n = KERF_POD_GPUS_MAX;
				if (n > f->whole_gpus)
					f->whole_gpus = n;
			} else if (!f->mig_profile) {
				f->mig_profile = k + strlen(KERF_RES_MIG_PREFIX);
			}
		}
	}
}

void kerf_pod_facts(const struct kerf_admission_policy *p,
		    const struct kerf_admission_request *req,
		    const json_t *pod, struct kerf_pod_facts *f)
{
	const char *rc, *s;
	int64_t x;

	memset(f, 0, sizeof(*f));
	f->meta = kerf_json_get(pod, "metadata");
	f->spec = kerf_json_get(pod, "spec");
	f->labels = kerf_json_get(f->meta, "labels");
	f->annotations = kerf_json_get(f->meta, "annotations");
	f->ns = kerf_admission_policy_ns(p, req->namespace);
	if (f->ns && f->ns->tenant[0]) {
		f->tenant_ns = true;
		f->tenant = kerf_admission_policy_tenant(p, f->ns->tenant);
	}
	f->excluded = kerf_admission_list_has(&p->cfg.excluded_namespaces,
					      req->namespace);
	f->mirror = kerf_json_get(f->annotations, "kubernetes.io/config.mirror") != NULL;
	kerf_pod_each_container(f->spec, scan_container, f);
	s = json_string_value(kerf_json_get(f->annotations, KERF_ANN_GPU_FRACTION));
	if (s) {
		f->requests_gpu = true;
		if (kerf_quantity_parse_milli(s, &x) == 0 && x > 0 && x < 1000)
			f->fraction_milli = x;
	}
	s = json_string_value(kerf_json_get(f->annotations, KERF_ANN_GPU_MEMORY));
	if (s && kerf_quantity_parse(s, &x) == 0 && x > 0)
		f->gpu_mem_bytes = x;
	s = json_string_value(kerf_json_get(f->annotations, KERF_ANN_GPU_SHARING));
	if (s && (!strcmp(s, "mps") || !strcmp(s, "timeslice")))
		f->sharing = s;
	rc = kerf_str(f->spec, "runtimeClassName");
	f->gpu_runtime = *rc && kerf_admission_list_has(&p->cfg.gpu_runtime_classes, rc);
	f->gpu_pod = f->requests_gpu || f->gpu_runtime || f->tenant_ns;
}

size_t kerf_tenant_pools(const struct kerf_admission_policy *p,
			 const struct kerf_kobj_tenant *t,
			 const struct kerf_admission_pool **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_pools && n < max; i++) {
		const struct kerf_kobj_quota *q = kerf_tenant_quota(t, p->pools[i].p.name);

		/* no entry: nominal 0 and borrowing without limit (the core's
		 * default); an entry of 0 and 0 keeps the tenant off the pool */
		if (!q || q->nominal > 0 || q->borrow_limit != 0)
			out[n++] = &p->pools[i];
	}
	return n;
}

const struct kerf_kobj_quota *kerf_tenant_quota(const struct kerf_kobj_tenant *t,
						const char *flavor)
{
	for (size_t q = 0; t && q < t->nr_quotas; q++)
		if (!strcmp(t->quotas[q].flavor, flavor))
			return &t->quotas[q];
	return NULL;
}
