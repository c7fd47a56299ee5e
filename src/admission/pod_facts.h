/*
 * pod_facts: what the pod rules and the mutation both need to know about
 * a pod under review: its namespace and tenant, whether it is a GPU pod
 * and what it asks for, and a walk over every container of the three
 * kinds with its field path.
 *
 * A "GPU pod" (reliability.md §6.1) requests kerf's GPU resources or
 * annotations, or uses a GPU runtime class, or runs in a tenant
 * namespace.  A pod that *requests* GPUs is the narrower set kerf
 * schedules.
 */
#ifndef KERF_ADMISSION_POD_FACTS_H
#define KERF_ADMISSION_POD_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "admission/policy.h"
#include "admission/review.h"
#include "core/model.h"

/* Whole GPUs a container may ask: one node's (core/model.h). */
#define KERF_POD_GPUS_MAX KERF_NODE_MAX_GPUS

enum kerf_container_kind {
	KERF_CONTAINER_INIT = 0,
	KERF_CONTAINER_APP,
	KERF_CONTAINER_EPHEMERAL,
};

struct kerf_pod_facts {
	const json_t *meta, *spec, *labels, *annotations;
	const struct kerf_admission_ns *ns;        /* NULL: not known */
	const struct kerf_kobj_tenant *tenant;     /* the ns's, NULL none */
	bool tenant_ns;                            /* the ns has kerf.io/tenant */
	bool excluded;                             /* an excluded namespace */
	bool mirror;                               /* kubernetes.io/config.mirror:
						      never mutated, still judged
						      (any pod can carry it) */
	bool requests_gpu;                         /* resources or fraction */
	bool gpu_runtime;                          /* a GPU runtime class */
	bool gpu_pod;                              /* any of the three */
	int64_t whole_gpus;                        /* nvidia.com/gpu, max of a
						      container (init or app) */
	const char *mig_profile;                   /* of nvidia.com/mig-X */
	int64_t fraction_milli;                    /* 0 none or unreadable */
	int64_t gpu_mem_bytes;                     /* 0 none or unreadable */
	const char *sharing;                       /* "mps", "timeslice", NULL */
};

void kerf_pod_facts(const struct kerf_admission_policy *p,
		    const struct kerf_admission_request *req,
		    const json_t *pod, struct kerf_pod_facts *f);

/* Is the resource name one of kerf's GPU resources? */
bool kerf_pod_gpu_resource(const char *name);

/* Each container of spec: fn(ctx, kind, container, "spec.containers[2]"). */
typedef void (*kerf_container_fn)(void *ctx, enum kerf_container_kind kind,
				  const json_t *c, const char *path);
void kerf_pod_each_container(const json_t *spec, kerf_container_fn fn,
			     void *ctx);

/* Does the container request (or limit) any GPU resource? */
bool kerf_container_has_gpu(const json_t *c);

/* A string field of an object, "" when absent or not a string. */
const char *kerf_str(const json_t *o, const char *key);

/* A JSON boolean field that is true. */
bool kerf_true(const json_t *o, const char *key);

/* Bytes in MiB, rounded up, without overflow. */
static inline int64_t kerf_mib_up(int64_t bytes)
{
	return bytes / (1 << 20) + (bytes % (1 << 20) > 0);
}

/* t's quota entry for flavor, or NULL (t NULL: none). */
const struct kerf_kobj_quota *kerf_tenant_quota(const struct kerf_kobj_tenant *t,
						const char *flavor);

/*
 * Pools the tenant may use (t NULL: every pool): those it has no quota
 * entry for (nominal 0, borrowing unlimited: the core's default) or an
 * entry with nominal or borrowing above 0; n of max.
 */
size_t kerf_tenant_pools(const struct kerf_admission_policy *p,
			 const struct kerf_kobj_tenant *t,
			 const struct kerf_admission_pool **out, size_t max);

#endif
