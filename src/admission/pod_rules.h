/*
 * pod_rules: what the pod rule files share (pod_validate.c, pod_env.c,
 * pod_security.c, pod_gpu.c): the check in progress.
 */
#ifndef KERF_ADMISSION_POD_RULES_H
#define KERF_ADMISSION_POD_RULES_H

#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "admission/decide.h"
#include "admission/pod_facts.h"

struct kerf_pod_check {
	const struct kerf_admission_policy *p;
	const struct kerf_admission_request *req;
	const struct kerf_pod_facts *f;
	struct kerf_admission_decision *d;
	const json_t *pod;
	const json_t *old;                  /* oldObject on UPDATE, or NULL */
};

/* Is s one of set[0..n)? */
static inline bool kerf_in_set(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, set[i]))
			return true;
	return false;
}

#define IN(s, set) kerf_in_set((s), (set), sizeof(set) / sizeof((set)[0]))

/* Every rule of one container (a kerf_container_fn; ctx the check). */
void kerf_pod_check_container(void *ctx, enum kerf_container_kind kind,
			      const json_t *c, const char *path);
/* env and envFrom of one container (pod_env.c). */
void kerf_pod_check_env(struct kerf_pod_check *ck, const json_t *c,
			const char *cpath);
/* securityContext, ports and mounts of one container (pod_security.c). */
void kerf_pod_check_container_security(struct kerf_pod_check *ck,
				       const json_t *c, const char *cpath);
/* host namespaces, pod securityContext, volumes (pod_security.c). */
void kerf_pod_check_pod_security(struct kerf_pod_check *ck);
/* GPU requests, fractions, gangs, priority, pools (pod_gpu.c). */
void kerf_pod_check_gpu(struct kerf_pod_check *ck);
/* kerf.io/ labels and annotations, device annotations (pod_meta.c). */
void kerf_pod_check_meta(struct kerf_pod_check *ck);

/* A host path made canonical lexically (pod_security.c). */
bool kerf_host_path_clean(const char *path, char *out, size_t size);

/* The largest GPU memory the pod's tenant can get, bytes; 0 unknown. */
int64_t kerf_pod_max_gpu_mem(const struct kerf_admission_policy *p,
			     const struct kerf_pod_facts *f);

#endif
