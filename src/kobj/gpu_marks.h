/*
 * gpu_marks: the node agent's marks of GPUs and MIG instances out of
 * service, as node annotations (docs/kubernetes.md, "GPUs out of service").
 *
 *   kerf.io/unhealthy-gpus  GPU indexes, ascending, comma separated: "1,3";
 *                           "" = none
 *   kerf.io/mps-failed-gpus the GPUs whose MPS daemon is not running, the
 *                           same form: out of service until it runs again
 *   kerf.io/unhealthy-mig   MIG instances, comma separated, each
 *                           GPU:PROFILE@START: "0:3g.40gb@4,2:1g.10gb@6";
 *                           "" = none
 *
 * Strict: no spaces, no leading zeros, indexes below KERF_NODE_MAX_GPUS,
 * GPUs ascending without repeats, a start slice below 8.  A value that
 * does not read is an error naming the annotation, the part and why; the
 * caller then counts every GPU of the node as out of service (a mark that
 * cannot be read must never put a bad GPU back in service).
 */
#ifndef KERF_KOBJ_GPU_MARKS_H
#define KERF_KOBJ_GPU_MARKS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum {
	KERF_MIG_MARKS_MAX = 64,        /* instances in one annotation */
	KERF_MIG_MARK_PROFILE_MAX = 16, /* bytes of a profile name, with NUL */
};

/* One MIG instance out of service. */
struct kerf_mig_mark {
	uint8_t gpu;
	uint8_t start;                  /* first memory slice */
	char profile[KERF_MIG_MARK_PROFILE_MAX];  /* "3g.40gb" */
};

/* kerf.io/unhealthy-gpus as a mask (bit g = GPU g). */
int kerf_gpu_marks_parse_gpus(const char *s, uint16_t *mask,
			      struct kerf_err *err);

/* The same grammar in another annotation (kerf.io/mps-failed-gpus), named
   in messages. */
int kerf_gpu_marks_parse_gpus_of(const char *annotation, const char *s, uint16_t *mask,
				 struct kerf_err *err);

/*
 * kerf.io/unhealthy-mig into out[0 .. *nr) (at most max entries, in the
 * order written).
 */
int kerf_gpu_marks_parse_mig(const char *s, struct kerf_mig_mark *out,
			     size_t max, size_t *nr, struct kerf_err *err);

#endif /* KERF_KOBJ_GPU_MARKS_H */
