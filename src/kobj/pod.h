/*
 * pod: a Pod object (JSON, as the API server sends it) cut down to what
 * kerf schedules and accounts by: the compact form an informer keeps for
 * each of tens of thousands of pods (the struct and one block).
 *
 * Resources are the pod's effective request, as kube-scheduler counts it:
 * the larger of the app containers (plus native sidecars) and each init
 * container (plus the sidecars started before it), plus spec.overhead.  A
 * request missing where a limit is given takes the limit (the API server
 * defaults it so; a decoder must not depend on it).
 *
 * Decoding is strict about every field kerf uses and blind to the rest.
 * What makes the pod impossible to account (no name, namespace or uid, a
 * resource quantity that does not parse) is an error naming the JSON path
 * and the value (escaped), and nothing is returned.  What only makes it
 * impossible to schedule (a bad kerf.io/ annotation, say) is kept in
 * invalid, so that a bound pod's GPUs are still counted.
 */
#ifndef KERF_KOBJ_POD_H
#define KERF_KOBJ_POD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "base/err.h"

enum kerf_pod_phase {
	KERF_PHASE_PENDING = 0,
	KERF_PHASE_RUNNING,
	KERF_PHASE_SUCCEEDED,
	KERF_PHASE_FAILED,
	KERF_PHASE_UNKNOWN,
};

enum kerf_toleration_op {
	KERF_TOL_EQUAL = 0,
	KERF_TOL_EXISTS,
};

/* Taint effects; KERF_EFFECT_ANY only in tolerations (effect omitted). */
enum kerf_taint_effect {
	KERF_EFFECT_ANY = 0,
	KERF_EFFECT_NO_SCHEDULE,
	KERF_EFFECT_PREFER_NO_SCHEDULE,
	KERF_EFFECT_NO_EXECUTE,
};

struct kerf_toleration {
	const char *key;     /* "" with KERF_TOL_EXISTS: every taint */
	const char *value;   /* "" for EXISTS */
	uint8_t op;          /* enum kerf_toleration_op */
	uint8_t effect;      /* enum kerf_taint_effect */
};

struct kerf_label {
	const char *key;
	const char *value;
};

/* not-ready and unreachable, Exists, NoExecute, in the admission's order. */
extern const struct kerf_toleration kerf_default_tolerations[2];

enum {
	KERF_POD_MAX_SELECTOR = 32,    /* nodeSelector terms */
	KERF_POD_MAX_TOLERATIONS = 32,
	KERF_POD_MAX_CONTAINERS = 64,  /* of each kind */
	KERF_GANG_MAX_SIZE = 4096,
	KERF_POD_MAX_LABELS = 4096,
	KERF_POD_MAX_STRING_BYTES = 1 << 20, /* every string of one pod */
};

/*
 * The strings of a kpod, in its block: kerf_kpod_ns(p) and the others
 * below read them.  ns, name, uid and scheduler are never NULL in a
 * decoded pod; the rest are NULL when absent.
 */
enum kerf_kpod_str {
	KERF_KPOD_NAME = 0,
	KERF_KPOD_UID,
	KERF_KPOD_NODE,            /* spec.nodeName; NULL: not bound */
	KERF_KPOD_SCHEDULER,       /* spec.schedulerName ("default-scheduler") */
	KERF_KPOD_TENANT,          /* label kerf.io/tenant */
	KERF_KPOD_GANG,            /* label kerf.io/gang */
	KERF_KPOD_PRIORITY_CLASS,  /* spec.priorityClassName */
	KERF_KPOD_MIG_PROFILE,     /* "3g.40gb" of nvidia.com/mig-3g.40gb */
	KERF_KPOD_ASSIGNED_GPUS,   /* annotations kerf wrote */
	KERF_KPOD_ASSIGNED_MIG,
	KERF_KPOD_PLANNED_NODE,    /* kerf.io/planned-node (a gang's plan) */
	/*
	 * Why kerf must not schedule the pod as it stands (a gang size that is
	 * not a number, a fraction with whole GPUs, two MIG profiles, an
	 * unreadable kerf.io/ annotation), naming the field; NULL when none.
	 * Such a pod is still decoded, so that what it holds is accounted.
	 */
	KERF_KPOD_INVALID,
	KERF_KPOD_NR_OFF,          /* those with an offset in str_off[] */
	KERF_KPOD_NS = KERF_KPOD_NR_OFF, /* always the block's first string */
	KERF_KPOD_NR_STR,
};

/*
 * Tens of thousands of these live in an informer's cache: the struct is
 * packed to 112 bytes (a kerf_slab record in kerf serve) and everything of
 * variable size is in one block, strings:
 *
 *   [0] NUL (offset 0 means NULL)  [1] ns  ... the other strings ...
 *   then, at the next multiple of 8: times[KERF_KPOD_NR_TIMES] (only
 *   when has_times), the uid's 16 bytes (when uid_bin), labels[2 * nr_labels],
 *   selector[nr_selector], tolerations[nr_tolerations] (when owned)
 *
 * Read the strings and the arrays through the accessors below.
 */
struct kerf_kpod {
	char *strings;               /* the block, owned */
	int64_t created_ms;
	int64_t cpu_milli;           /* effective request */
	int64_t mem_mib;             /* rounded up */
	uint32_t str_off[KERF_KPOD_NR_OFF]; /* into strings; 0: NULL */
	uint32_t strings_len;        /* bytes of the strings (the first NUL
					and ns among them): the arrays start
					at the next multiple of 8 */
	int32_t nr_gpus;             /* nvidia.com/gpu */
	int32_t nr_mig;              /* of mig_profile */
	int32_t gpu_mem_mib;         /* per GPU (annotation); 0 = none */
	int32_t priority;            /* spec.priority (0 when absent) */
	int16_t gpu_milli;           /* fraction (annotation) 1..999; 0 = none */
	uint16_t gang_size;          /* 1..KERF_GANG_MAX_SIZE; 0 = not given */
	uint16_t nr_labels;          /* ..KERF_POD_MAX_LABELS */
	uint8_t nr_selector;         /* ..KERF_POD_MAX_SELECTOR */
	uint8_t nr_tolerations;      /* ..KERF_POD_MAX_TOLERATIONS */
	uint8_t phase;               /* enum kerf_pod_phase */
	uint8_t share;               /* enum kerf_gpu_share (core/model.h) */
	uint8_t preemption;          /* spec.preemptionPolicy: enum
					kerf_preemption_policy (0 absent) */
	bool has_priority : 1;
	bool terminating : 1;        /* metadata.deletionTimestamp set */
	bool required_affinity : 1;  /* required node affinity: kerf does not
					read it (yet), so it must not place
					the pod as if it were absent */
	/*
	 * The tolerations are kerf_default_tolerations (shared, never freed):
	 * the list is exactly the two the API server's DefaultTolerationSeconds
	 * admission adds to every pod, not copied into each cached pod.
	 */
	bool default_tolerations : 1;
	/* the kerf.io/ time annotations (kerf_kpod_time_ms): in the block,
	   only when one is set (most pods have none) */
	bool has_times : 1;
	/* metadata.uid as 16 bytes in the block (kerf_kpod_uid) */
	bool uid_bin : 1;
};

static inline const char *kerf_kpod_at(const struct kerf_kpod *p,
					enum kerf_kpod_str i)
{
	if (i == KERF_KPOD_NS)
		return p->strings ? p->strings + 1 : NULL;
	return p->str_off[i] ? p->strings + p->str_off[i] : NULL;
}

static inline const char *kerf_kpod_ns(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_NS);
}
static inline const char *kerf_kpod_name(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_NAME);
}
/*
 * metadata.uid: kept as its 16 bytes when written the canonical way (36
 * lowercase hex digits and hyphens, as the API server makes them), so
 * it is read through a buffer (kerf_kpod_at gives NULL for it then).
 */
enum { KERF_KPOD_UID_BUF = 37 };
const char *kerf_kpod_uid(const struct kerf_kpod *p, char buf[KERF_KPOD_UID_BUF]);
static inline const char *kerf_kpod_node(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_NODE);
}
static inline const char *kerf_kpod_scheduler(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_SCHEDULER);
}
static inline const char *kerf_kpod_tenant(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_TENANT);
}
static inline const char *kerf_kpod_gang(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_GANG);
}
static inline const char *kerf_kpod_priority_class(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_PRIORITY_CLASS);
}
static inline const char *kerf_kpod_mig_profile(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_MIG_PROFILE);
}
static inline const char *kerf_kpod_assigned_gpus(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_ASSIGNED_GPUS);
}
static inline const char *kerf_kpod_assigned_mig(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_ASSIGNED_MIG);
}
static inline const char *kerf_kpod_planned_node(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_PLANNED_NODE);
}
static inline const char *kerf_kpod_invalid(const struct kerf_kpod *p)
{
	return kerf_kpod_at(p, KERF_KPOD_INVALID);
}

/* The arrays after the strings, at the first multiple of 8 past them. */
static inline const char *kerf_kpod_arrays(const struct kerf_kpod *p)
{
	return p->strings + (((size_t)p->strings_len + 7) & ~(size_t)7);
}

/* The kerf.io/ annotations that hold a time, in Unix ms (0 when absent). */
enum kerf_kpod_time {
	KERF_KPOD_PREEMPT_AT = 0,      /* kerf.io/preempt-at */
	KERF_KPOD_CHECKPOINT_DONE,     /* kerf.io/checkpoint-done */
	KERF_KPOD_LAST_CHECKPOINT,     /* kerf.io/last-checkpoint */
	KERF_KPOD_NR_TIMES,
};

/* The times are the first array when has_times. */
static inline int64_t kerf_kpod_time_ms(const struct kerf_kpod *p,
					enum kerf_kpod_time t)
{
	int64_t ms;

	if (!p->has_times)
		return 0;
	memcpy(&ms, kerf_kpod_arrays(p) + sizeof(ms) * (size_t)t, sizeof(ms));
	return ms;
}

/* The uid's bytes (when uid_bin), after the times. */
enum { KERF_KPOD_UID_BYTES = 16 };
static inline const char *kerf_kpod_uid_bytes(const struct kerf_kpod *p)
{
	return kerf_kpod_arrays(p) +
	       (p->has_times ? sizeof(int64_t) * KERF_KPOD_NR_TIMES : 0);
}

/* The lists after the times and the uid. */
static inline const char *kerf_kpod_lists(const struct kerf_kpod *p)
{
	return kerf_kpod_uid_bytes(p) + (p->uid_bin ? KERF_KPOD_UID_BYTES : 0);
}

/* metadata.labels as PodDisruptionBudgets match them (kobj/pdb.h):
   nr_labels pairs (key hash, key=value hash); NULL when none */
static inline const uint64_t *kerf_kpod_labels(const struct kerf_kpod *p)
{
	if (!p->nr_labels)
		return NULL;
	return (const uint64_t *)(const void *)kerf_kpod_lists(p);
}

/* spec.nodeSelector, in its order; NULL when none */
static inline const struct kerf_label *
kerf_kpod_selector(const struct kerf_kpod *p)
{
	if (!p->nr_selector)
		return NULL;
	return (const struct kerf_label *)(const void *)
		(kerf_kpod_lists(p) + 2 * sizeof(uint64_t) * p->nr_labels);
}

/* spec.tolerations (kerf_default_tolerations, see above); NULL when none */
static inline const struct kerf_toleration *
kerf_kpod_tolerations(const struct kerf_kpod *p)
{
	if (!p->nr_tolerations)
		return NULL;
	if (p->default_tolerations)
		return kerf_default_tolerations;
	return (const struct kerf_toleration *)(const void *)
		(kerf_kpod_lists(p) + 2 * sizeof(uint64_t) * p->nr_labels +
		 sizeof(struct kerf_label) * p->nr_selector);
}

/* obj into *out (released by kerf_kpod_release); nothing on error. */
int kerf_kpod_decode(const json_t *obj, struct kerf_kpod *out,
		     struct kerf_err *err);
void kerf_kpod_release(struct kerf_kpod *p);

/* A deep copy of src into *dst: 0 or -KERF_ENOMEM (dst untouched). */
int kerf_kpod_clone(struct kerf_kpod *dst, const struct kerf_kpod *src);

/*
 * Give p the strings vals[] (indexed by enum kerf_kpod_str; NULL: absent),
 * its labels, selector and tolerations kept: a new block replaces the old
 * one.  For pods made by hand (tests); ns, name, uid and scheduler are
 * required.  0, -KERF_EINVAL (one of those NULL), -KERF_ELIMIT (longer
 * than KERF_POD_MAX_STRING_BYTES in all) or -KERF_ENOMEM; p is unchanged
 * on error.
 */
int kerf_kpod_set_strings(struct kerf_kpod *p,
			  const char *const vals[KERF_KPOD_NR_STR]);

/* Does the pod ask for any GPU (whole, MIG or a fraction)? */
bool kerf_kpod_wants_gpu(const struct kerf_kpod *p);

/* Has it finished (Succeeded or Failed)? */
bool kerf_kpod_is_done(const struct kerf_kpod *p);

/* Does toleration t tolerate taint key=value:effect? */
bool kerf_toleration_matches(const struct kerf_toleration *t, const char *key,
			     const char *value, uint8_t effect);

/* The effect called s ("NoSchedule", ...), or -KERF_EPARSE. */
int kerf_taint_effect_parse(const char *s);
const char *kerf_taint_effect_name(uint8_t effect);

#endif
