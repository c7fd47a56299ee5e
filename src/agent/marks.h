/*
 * marks: the health marks of a node's GPUs, as the agent keeps them in
 * the API (docs/agent.md "The agent loop").  Pure: no I/O.
 *
 * A mark takes a GPU, or one MIG instance, out of allocation; a node mark
 * (a GPU fell off the bus) cordons the node and asks for remediation.
 * Marks live on the Node, never only in the agent's memory:
 *   kerf.io/unhealthy-gpus   "1,3": GPU indexes, ascending
 *   kerf.io/unhealthy-mig    "0:3g.40gb@4,2:1g.10gb@6": GPU:PROFILE@START
 *   kerf.io/gpu-health       JSON: the reason and time of each mark
 *   the taint kerf.io/gpu-failed=node:NoSchedule for a node mark
 * The agent only ever adds marks.  A mark goes only by an explicit
 * verification (`kerf agent verify`), which removes it from the Node;
 * the agent then adopts what the Node says.
 */
#ifndef KERF_AGENT_MARKS_H
#define KERF_AGENT_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "kobj/gpu_marks.h"
#include "kobj/names.h"
#include "nvml/health.h"
#include "nvml/inventory.h"

#define KERF_ANN_GPU_HEALTH     "kerf.io/gpu-health"
#define KERF_TAINT_GPU_FAILED   "kerf.io/gpu-failed"

enum {
	KERF_MARKS_MAX_GPUS = 64,
	KERF_MARKS_MAX_MIG = 64,
	KERF_MARK_REASON_MAX = 160,
	KERF_MARK_TIME_MAX = 32,
};

struct kerf_mark_text {
	char reason[KERF_MARK_REASON_MAX];
	char since[KERF_MARK_TIME_MAX];     /* RFC 3339 */
};

/* A MIG instance out of service (kobj/gpu_marks.h) and why. */
struct kerf_agent_mig_mark {
	uint8_t gpu;
	uint8_t start;                      /* first memory slice */
	char profile[KERF_MIG_MARK_PROFILE_MAX];  /* "3g.40gb" */
	struct kerf_mark_text text;
};

struct kerf_agent_marks {
	uint64_t gpus_down;                 /* bit i: GPU index i */
	struct kerf_mark_text gpu[KERF_MARKS_MAX_GPUS];
	struct kerf_agent_mig_mark mig[KERF_MARKS_MAX_MIG];
	uint32_t nr_mig;
	bool node_failed;                   /* cordon, remediation asked */
	struct kerf_mark_text node;
};

/*
 * The marks a Node carries (its annotations and taints).  0, or
 * -KERF_EPARSE naming the annotation and why: an unreadable mark must not
 * put a GPU back in service, so the caller treats that as every GPU down.
 */
int kerf_agent_marks_from_node(const json_t *node, struct kerf_agent_marks *m,
			       struct kerf_err *err);

/* The two annotations (NULL or "" = none), read by kobj/gpu_marks.h as
   kerf serve reads them. */
int kerf_agent_marks_parse(const char *gpus, const char *mig,
			   struct kerf_agent_marks *m, struct kerf_err *err);

/*
 * Add what verdict v about GPU gpu (index; -1: no GPU named) asks for.
 * An instance mark names the GPU instance by its placement, read from inv;
 * an instance inv does not know marks the whole GPU (fail safe).
 * Returns true when a mark was added.
 */
bool kerf_agent_marks_apply(struct kerf_agent_marks *m,
			    const struct kerf_health_verdict *v, int gpu,
			    const struct kerf_gpu_inventory *inv, const char *now);

/* Every mark of src added to dst (dst's text kept where both have one). */
void kerf_agent_marks_union(struct kerf_agent_marks *dst,
			    const struct kerf_agent_marks *src);

bool kerf_agent_marks_equal(const struct kerf_agent_marks *a,
			    const struct kerf_agent_marks *b);

/* Is GPU gpu, or its instance profile@start, out of allocation? */
bool kerf_agent_marks_instance_down(const struct kerf_agent_marks *m, int gpu,
				    const char *profile, unsigned start);

/*
 * The three annotations as a merge patch's values (a string, or JSON null
 * to remove one that is empty): a new object, NULL on OOM.
 */
json_t *kerf_agent_marks_annotations(const struct kerf_agent_marks *m);

/* "1,3" of the GPU mask into buf. */
void kerf_agent_marks_gpus_text(uint64_t mask, char *buf, size_t size);

#endif /* KERF_AGENT_MARKS_H */
