/*
 * policy: what an admission decision depends on besides the request, as
 * one immutable snapshot: kerf's settings (its scheduler name and service
 * accounts, who may label namespaces, the excluded namespaces, the GPU
 * runtime classes) and the cluster objects the rules read (Namespaces,
 * Tenants, PriorityClasses, GPUPools).
 *
 * kerf serve builds a new snapshot whenever one of those objects changes
 * and publishes it; the webhook's workers each take a reference for one
 * request (kerf_admission_policy_get/_put), so a decision never sees half
 * an update and never waits for the controller.  `kerf admission review`
 * builds one from a YAML file.  Pure: no I/O.
 */
#ifndef KERF_ADMISSION_POLICY_H
#define KERF_ADMISSION_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "kobj/gpupool.h"
#include "kobj/priorityclass.h"
#include "kobj/tenant.h"

enum {
	KERF_ADMISSION_LIST_MAX = 16,      /* entries of each settings list */
	KERF_ADMISSION_ENTRY_MAX = 254,    /* bytes of one, with the NUL */
};

/* A list of names in the settings. */
struct kerf_admission_list {
	char v[KERF_ADMISSION_LIST_MAX][KERF_ADMISSION_ENTRY_MAX];
	size_t nr;
};

/* kerf's settings (kerf_admission_config_default gives the defaults). */
struct kerf_admission_config {
	char scheduler_name[KERF_ADMISSION_ENTRY_MAX];  /* "kerf" */
	/* kerf's own identities: may write the kerf.io/ allocation annotations */
	struct kerf_admission_list kerf_users;
	/* who may set, change or remove a namespace's kerf.io/tenant label */
	struct kerf_admission_list label_users;
	struct kerf_admission_list label_groups;
	/* namespaces the webhook never judges (kube-system, kerf-system, ...) */
	struct kerf_admission_list excluded_namespaces;
	/* runtime classes that inject GPUs (nvidia) */
	struct kerf_admission_list gpu_runtime_classes;
	/* hostPath prefixes tenants may mount (none by default); the device,
	 * MPS, kubelet and runtime paths stay refused under any of them */
	struct kerf_admission_list host_path_allowed;
	/* DRA device classes that give GPUs (refused in tenants' claims) */
	struct kerf_admission_list gpu_device_classes;
	/* the taints of GPU nodes that kerf's pods tolerate (key:Effect) */
	struct kerf_admission_list gpu_taints;
	/* NCCL_IB_HCA given to GPU containers of tenants with a network
	 * class ("" none) */
	char nccl_ib_hca[KERF_ADMISSION_ENTRY_MAX];
	/* the GPU priority class given to pods without one ("": the lowest
	 * class the tenant may use) */
	char default_priority_class[KERF_ADMISSION_ENTRY_MAX];
	/* limits are enforced by an LD_PRELOAD interposer: refuse
	 * LD_LIBRARY_PATH too (LD_PRELOAD and LD_AUDIT always are) */
	bool interposer;
};

void kerf_admission_config_default(struct kerf_admission_config *c);

/* Add s to l: -KERF_ELIMIT when full, -KERF_EINVAL when empty or too long. */
int kerf_admission_list_add(struct kerf_admission_list *l, const char *s);
bool kerf_admission_list_has(const struct kerf_admission_list *l,
			     const char *s);

struct kerf_admission_ns {
	char name[KERF_KOBJ_NAME_MAX];
	char tenant[KERF_KOBJ_NAME_MAX];  /* label kerf.io/tenant; "" none */
};

struct kerf_admission_pool {
	struct kerf_kobj_gpupool p;
	int32_t gpu_mem_mib;              /* one GPU's memory; 0 unknown */
	int32_t gpus;                     /* in the cluster; -1 unknown */
};

/* A gang kerf holds: "ns/gang" and its members' priority class. */
struct kerf_admission_gang {
	char *key;                        /* "ns/gang", owned */
	char *priority_class;             /* "" none; owned */
};

struct kerf_admission_policy {
	struct kerf_admission_config cfg;
	struct kerf_admission_ns *ns;
	size_t nr_ns, cap_ns;
	struct kerf_kobj_tenant *tenants;
	size_t nr_tenants, cap_tenants;
	struct kerf_kpc *classes;
	size_t nr_classes, cap_classes;
	struct kerf_admission_pool *pools;
	size_t nr_pools, cap_pools;
	struct kerf_admission_gang *gangs;
	size_t nr_gangs, cap_gangs;
	bool sealed;
	int refs;                         /* atomic */
};

/* A new, empty snapshot with these settings (one reference). */
int kerf_admission_policy_new(const struct kerf_admission_config *cfg,
			      struct kerf_admission_policy **out);

/*
 * Add one object (a Namespace, Tenant, PriorityClass or GPUPool as the
 * API server returns it).  A second object of the same kind and name
 * replaces the first.  -KERF_EINVAL naming the field when it does not
 * decode, or when its kind is none of those.
 */
int kerf_admission_policy_add(struct kerf_admission_policy *p,
			      const json_t *obj, struct kerf_err *err);

/*
 * Each document of text (YAML, documents separated by ---, as `kubectl
 * apply -f` takes them) added as kerf_admission_policy_add does.  Errors
 * name the file and the document: "NAME: document 2: metadata.name: ...".
 */
int kerf_admission_policy_add_yaml(struct kerf_admission_policy *p,
				   const char *name, const char *text,
				   size_t len, struct kerf_err *err);

/* The same from decoded objects (kerf serve's caches). */
int kerf_admission_policy_add_ns(struct kerf_admission_policy *p,
				 const char *name, const char *tenant);
int kerf_admission_policy_add_tenant(struct kerf_admission_policy *p,
				     const struct kerf_kobj_tenant *t);
int kerf_admission_policy_add_class(struct kerf_admission_policy *p,
				    const struct kerf_kpc *c);
int kerf_admission_policy_add_pool(struct kerf_admission_policy *p,
				   const struct kerf_kobj_gpupool *gp,
				   int32_t gpus);

/* A gang and its members' priority class ("" none). */
int kerf_admission_policy_add_gang(struct kerf_admission_policy *p,
				   const char *ns, const char *gang,
				   const char *priority_class);
/* The priority class of gang ns/gang, or NULL when kerf holds no such gang. */
const char *kerf_admission_policy_gang_class(const struct kerf_admission_policy *p,
					     const char *ns, const char *gang);

/* Done adding: sorted for lookups.  Decisions take sealed snapshots. */
void kerf_admission_policy_seal(struct kerf_admission_policy *p);

struct kerf_admission_policy *kerf_admission_policy_get(struct kerf_admission_policy *p);
void kerf_admission_policy_put(struct kerf_admission_policy *p);

const struct kerf_admission_ns *
kerf_admission_policy_ns(const struct kerf_admission_policy *p, const char *name);
const struct kerf_kobj_tenant *
kerf_admission_policy_tenant(const struct kerf_admission_policy *p, const char *name);
const struct kerf_kpc *
kerf_admission_policy_class(const struct kerf_admission_policy *p, const char *name);
const struct kerf_admission_pool *
kerf_admission_policy_pool(const struct kerf_admission_policy *p, const char *name);
/* Does some tenant name t as its parent? */
bool kerf_admission_policy_has_children(const struct kerf_admission_policy *p,
					const char *t);

#endif /* KERF_ADMISSION_POLICY_H */
