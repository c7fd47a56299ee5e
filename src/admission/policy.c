#include "admission/policy.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kobj/json_field.h"
#include "kobj/names.h"

static void list_set(struct kerf_admission_list *l, const char *const *v)
{
	l->nr = 0;
	for (; *v; v++)
		(void)kerf_admission_list_add(l, *v);
}

void kerf_admission_config_default(struct kerf_admission_config *c)
{
	static const char *const kerf_users[] = {
		"system:serviceaccount:kerf-system:kerf", NULL };
	static const char *const label_groups[] = { "system:masters", NULL };
	static const char *const excluded[] = {
		"kube-system", "kube-public", "kube-node-lease", "kerf-system",
		NULL };
	static const char *const runtimes[] = { "nvidia", "nvidia-cdi",
						"nvidia-legacy", NULL };
	static const char *const taints[] = { "nvidia.com/gpu:NoSchedule", NULL };
	static const char *const device_classes[] = { "gpu.nvidia.com",
						       "mig.nvidia.com",
						       "gpu.amd.com", NULL };
	static const char *const none[] = { NULL };

	memset(c, 0, sizeof(*c));
	snprintf(c->scheduler_name, sizeof(c->scheduler_name), "kerf");
	list_set(&c->kerf_users, kerf_users);
	list_set(&c->label_users, kerf_users);
	list_set(&c->label_groups, label_groups);
	list_set(&c->excluded_namespaces, excluded);
	list_set(&c->gpu_runtime_classes, runtimes);
	list_set(&c->host_path_allowed, none);
	list_set(&c->gpu_taints, taints);
	list_set(&c->gpu_device_classes, device_classes);
}

int kerf_admission_list_add(struct kerf_admission_list *l, const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= KERF_ADMISSION_ENTRY_MAX)
		return -KERF_EINVAL;
	if (kerf_admission_list_has(l, s))
		return 0;
	if (l->nr == KERF_ADMISSION_LIST_MAX)
		return -KERF_ELIMIT;
	memcpy(l->v[l->nr++], s, n + 1);
	return 0;
}

bool kerf_admission_list_has(const struct kerf_admission_list *l,
			     const char *s)
{
	for (size_t i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

int kerf_admission_policy_new(const struct kerf_admission_config *cfg,
			      struct kerf_admission_policy **out)
{
	struct kerf_admission_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return -KERF_ENOMEM;
	p->cfg = *cfg;
	p->refs = 1;
	*out = p;
	return 0;
}

/* Room for one more of an array; the slot, zeroed, or NULL. */
static void *slot(void **arr, size_t *nr, size_t *cap, size_t size)
{
	char *a = *arr;

	if (*nr == *cap) {
		size_t c = *cap ? *cap * 2 : 8;

		a = realloc(a, c * size);
		if (!a)
			return NULL;
		*arr = a;
		*cap = c;
	}
	memset(a + *nr * size, 0, size);
	return a + (*nr)++ * size;
}

/* The element of arr named name (each element starts with its name). */
static void *find_linear(void *arr, size_t nr, size_t size, const char *name)
{
	for (size_t i = 0; i < nr; i++) {
		char *e = (char *)arr + i * size;

		if (!strcmp(e, name))
			return e;
	}
	return NULL;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void *find(const void *arr, size_t nr, size_t size, const char *name,
		  bool sealed)
{
	if (!name || !nr)
		return NULL;
	if (!sealed)
		return find_linear((void *)arr, nr, size, name);
	return bsearch(name, arr, nr, size, name_cmp);
}

/* The element named name to fill: the one there is, or a new one. */
static void *put(void **arr, size_t *nr, size_t *cap, size_t size,
		 const char *name)
{
	void *e = find_linear(*arr, *nr, size, name);

	return e ? e : slot(arr, nr, cap, size);
}

#define PUT(p, arr, nr, cap, name) \
	((__typeof__(p->arr))put((void **)&p->arr, &p->nr, &p->cap, sizeof(*p->arr), name))

int kerf_admission_policy_add_ns(struct kerf_admission_policy *p,
				 const char *name, const char *tenant)
{
	struct kerf_admission_ns *ns;

	if (p->sealed || strlen(name) >= KERF_KOBJ_NAME_MAX ||
	    strlen(tenant) >= KERF_KOBJ_NAME_MAX)
		return -KERF_EINVAL;
	ns = PUT(p, ns, nr_ns, cap_ns, name);
	if (!ns)
		return -KERF_ENOMEM;
	snprintf(ns->name, sizeof(ns->name), "%s", name);
	snprintf(ns->tenant, sizeof(ns->tenant), "%s", tenant);
	return 0;
}

int kerf_admission_policy_add_tenant(struct kerf_admission_policy *p,
				     const struct kerf_kobj_tenant *t)
{
	struct kerf_kobj_tenant *slot_t;

	if (p->sealed)
		return -KERF_EINVAL;
	slot_t = PUT(p, tenants, nr_tenants, cap_tenants, t->name);
	if (!slot_t)
		return -KERF_ENOMEM;
	*slot_t = *t;
	return 0;
}

int kerf_admission_policy_add_class(struct kerf_admission_policy *p,
				    const struct kerf_kpc *c)
{
	struct kerf_kpc *slot_c;

	if (p->sealed)
		return -KERF_EINVAL;
	slot_c = PUT(p, classes, nr_classes, cap_classes, c->name);
	if (!slot_c)
		return -KERF_ENOMEM;
	*slot_c = *c;
	return 0;
}

static int add_namespace(struct kerf_admission_policy *p, const json_t *obj,
			 struct kerf_err *err)
{
	const json_t *meta = kerf_json_get(obj, "metadata");
	const json_t *labels = kerf_json_get(meta, "labels");
	const json_t *v = kerf_json_get(labels, KERF_LABEL_TENANT);
	char name[KERF_KOBJ_NAME_MAX], tenant[KERF_KOBJ_NAME_MAX] = "";
	int rc;

	rc = kerf_kobj_get_name(kerf_json_get(meta, "name"), "metadata.name",
				true, name, err);
	if (rc == 0 && v)
		rc = kerf_kobj_get_name(v, "metadata.labels.kerf.io/tenant",
					false, tenant, err);
	return rc < 0 ? rc : kerf_admission_policy_add_ns(p, name, tenant);
}

/* One GPU's memory: the MIG table's, else the model name's "-80GB". */
static int32_t model_mem_mib(const struct kerf_kobj_gpupool *pool)
{
	const char *dash = strrchr(pool->gpu_model, '-');
	char *end;
	long gb;

	if (pool->mig && pool->mig->mem_mib)
		return (int32_t)pool->mig->mem_mib;
	if (!dash)
		return 0;
	gb = strtol(dash + 1, &end, 10);
	if (gb <= 0 || gb > 100000 || strcmp(end, "GB"))
		return 0;
	return (int32_t)(gb * 1024);
}

int kerf_admission_policy_add_pool(struct kerf_admission_policy *p,
				   const struct kerf_kobj_gpupool *gp,
				   int32_t gpus)
{
	struct kerf_admission_pool *ap;

	if (p->sealed)
		return -KERF_EINVAL;
	ap = PUT(p, pools, nr_pools, cap_pools, gp->name);
	if (!ap)
		return -KERF_ENOMEM;
	ap->p = *gp;
	ap->gpu_mem_mib = model_mem_mib(gp);
	ap->gpus = gpus;
	return 0;
}

static int add_pool(struct kerf_admission_policy *p, const json_t *obj,
		    struct kerf_err *err)
{
	struct kerf_kobj_gpupool gp;
	const json_t *gpus = kerf_json_get(kerf_json_get(obj, "status"), "gpus");
	int rc;

	memset(&gp, 0, sizeof(gp));
	rc = kerf_kobj_gpupool_decode(obj, &gp, err);
	if (rc < 0)
		return rc;
	return kerf_admission_policy_add_pool(p, &gp,
		json_is_integer(gpus) && json_integer_value(gpus) >= 0 &&
		json_integer_value(gpus) <= INT32_MAX
		? (int32_t)json_integer_value(gpus) : -1);
}

static int gang_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kerf_admission_gang *)a)->key,
		      ((const struct kerf_admission_gang *)b)->key);
}

/* By key, then class: the same entries always sort the same way. */
static int gang_order(const void *a, const void *b)
{
	int c = gang_cmp(a, b);

	return c ? c : strcmp(((const struct kerf_admission_gang *)a)->priority_class,
			      ((const struct kerf_admission_gang *)b)->priority_class);
}

int kerf_admission_policy_add_gang(struct kerf_admission_policy *p,
				   const char *ns, const char *gang,
				   const char *priority_class)
{
	struct kerf_admission_gang *g;
	size_t n = strlen(ns) + strlen(gang) + 2;
	char *key;

	if (p->sealed)
		return -KERF_EINVAL;
	key = malloc(n);
	if (!key)
		return -KERF_ENOMEM;
	snprintf(key, n, "%s/%s", ns, gang);
	g = slot((void **)&p->gangs, &p->nr_gangs, &p->cap_gangs, sizeof(*g));
	if (!g || !(g->priority_class = strdup(priority_class))) {
		if (g)
			p->nr_gangs--;
		free(key);
		return -KERF_ENOMEM;
	}
	g->key = key;
	return 0;
}

const char *kerf_admission_policy_gang_class(const struct kerf_admission_policy *p,
					     const char *ns, const char *gang)
{
	char key[512];
	struct kerf_admission_gang k = { key, NULL };
	const struct kerf_admission_gang *g;

	if (!p->sealed || !p->nr_gangs ||
	    snprintf(key, sizeof(key), "%s/%s", ns, gang) >= (int)sizeof(key))
		return NULL;
	g = bsearch(&k, p->gangs, p->nr_gangs, sizeof(*p->gangs), gang_cmp);
	return g ? g->priority_class : NULL;
}

/* A Pod of a gang in an objects file: the gang and its class. */
static int add_pod(struct kerf_admission_policy *p, const json_t *obj)
{
	const json_t *meta = kerf_json_get(obj, "metadata");
	const char *ns = json_string_value(kerf_json_get(meta, "namespace"));
	const char *gang = json_string_value(kerf_json_get(kerf_json_get(meta, "labels"),
							   KERF_LABEL_GANG));
	const char *pc = json_string_value(kerf_json_get(kerf_json_get(obj, "spec"),
							 "priorityClassName"));

	if (!ns || !gang)
		return 0;
	return kerf_admission_policy_add_gang(p, ns, gang, pc ? pc : "");
}

int kerf_admission_policy_add(struct kerf_admission_policy *p,
			      const json_t *obj, struct kerf_err *err)
{
	const char *kind = json_string_value(kerf_json_get(obj, "kind"));
	const char *api = json_string_value(kerf_json_get(obj, "apiVersion"));
	char shown[80];

	if (p->sealed)
		return kerf_err_set(err, -KERF_EINVAL, "the snapshot is sealed");
	if (!kind || !api)
		return kerf_err_set(err, -KERF_EINVAL,
				    "apiVersion and kind: required");
	if (!strcmp(kind, "Namespace") && !strcmp(api, "v1"))
		return add_namespace(p, obj, err);
	if (!strcmp(kind, "Tenant") && !strcmp(api, "kerf.io/v1alpha1")) {
		struct kerf_kobj_tenant t;
		int rc = kerf_kobj_tenant_decode(obj, &t, err);

		return rc < 0 ? rc : kerf_admission_policy_add_tenant(p, &t);
	}
	if (!strcmp(kind, "PriorityClass") &&
	    !strcmp(api, "scheduling.k8s.io/v1")) {
		struct kerf_kpc c;
		int rc = kerf_kpc_decode(obj, &c, err);

		return rc < 0 ? rc : kerf_admission_policy_add_class(p, &c);
	}
	if (!strcmp(kind, "GPUPool") && !strcmp(api, "kerf.io/v1alpha1"))
		return add_pool(p, obj, err);
	if (!strcmp(kind, "Pod") && !strcmp(api, "v1"))
		return add_pod(p, obj);
	return kerf_err_set(err, -KERF_EINVAL,
			    "kind: '%s' is not one of v1 Namespace and Pod, kerf.io/v1alpha1 Tenant and GPUPool, scheduling.k8s.io/v1 PriorityClass",
			    kerf_escape(shown, sizeof(shown), kind));
}

/* qsort of an empty array (which may be NULL: undefined for qsort). */
static void sort(void *arr, size_t nr, size_t size,
		 int (*cmp)(const void *, const void *))
{
	if (nr > 1)
		qsort(arr, nr, size, cmp);
}

void kerf_admission_policy_seal(struct kerf_admission_policy *p)
{
	sort(p->ns, p->nr_ns, sizeof(*p->ns), name_cmp);
	sort(p->tenants, p->nr_tenants, sizeof(*p->tenants), name_cmp);
	sort(p->classes, p->nr_classes, sizeof(*p->classes), name_cmp);
	sort(p->pools, p->nr_pools, sizeof(*p->pools), name_cmp);
	/* members of a gang agree (the rule refuses the odd one); where a
	 * file says otherwise, the order of classes decides, not the file's */
	sort(p->gangs, p->nr_gangs, sizeof(*p->gangs), gang_order);
	p->sealed = true;
}

struct kerf_admission_policy *kerf_admission_policy_get(struct kerf_admission_policy *p)
{
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void kerf_admission_policy_put(struct kerf_admission_policy *p)
{
	if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(p->ns);
	free(p->tenants);
	free(p->classes);
	free(p->pools);
	for (size_t i = 0; i < p->nr_gangs; i++) {
		free(p->gangs[i].key);
		free(p->gangs[i].priority_class);
	}
	free(p->gangs);
	free(p);
}

const struct kerf_admission_ns *
kerf_admission_policy_ns(const struct kerf_admission_policy *p, const char *name)
{
	return find(p->ns, p->nr_ns, sizeof(*p->ns), name, p->sealed);
}

const struct kerf_kobj_tenant *
kerf_admission_policy_tenant(const struct kerf_admission_policy *p, const char *name)
{
	return find(p->tenants, p->nr_tenants, sizeof(*p->tenants), name,
		    p->sealed);
}

const struct kerf_kpc *
kerf_admission_policy_class(const struct kerf_admission_policy *p, const char *name)
{
	return find(p->classes, p->nr_classes, sizeof(*p->classes), name,
		    p->sealed);
}

const struct kerf_admission_pool *
kerf_admission_policy_pool(const struct kerf_admission_policy *p, const char *name)
{
	return find(p->pools, p->nr_pools, sizeof(*p->pools), name, p->sealed);
}

bool kerf_admission_policy_has_children(const struct kerf_admission_policy *p,
					const char *t)
{
	for (size_t i = 0; i < p->nr_tenants; i++)
		if (!strcmp(p->tenants[i].parent, t))
			return true;
	return false;
}

/* Lookups compare the name each element starts with. */
_Static_assert(offsetof(struct kerf_admission_ns, name) == 0, "name first");
_Static_assert(offsetof(struct kerf_kobj_tenant, name) == 0, "name first");
_Static_assert(offsetof(struct kerf_kpc, name) == 0, "name first");
_Static_assert(offsetof(struct kerf_admission_pool, p.name) == 0, "name first");
