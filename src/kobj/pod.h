/*
 * pod: a Pod object (JSON, as the API server sends it) cut down to what
 * kerf schedules and accounts by: the compact form an informer keeps for
 * each of tens of thousands of pods (every string in one allocation).
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

enum {
	KERF_POD_MAX_SELECTOR = 32,    /* nodeSelector terms */
	KERF_POD_MAX_TOLERATIONS = 32,
	KERF_POD_MAX_CONTAINERS = 64,  /* of each kind */
	KERF_GANG_MAX_SIZE = 4096,
	KERF_POD_MAX_LABELS = 4096,
};

struct kerf_kpod {
	char *strings;               /* owns every string below */
	size_t strings_len;
	const char *ns, *name, *uid;
	const char *node;            /* spec.nodeName; NULL: not bound */
	const char *scheduler;       /* spec.schedulerName ("default-scheduler") */
	const char *tenant;          /* label kerf.io/tenant; NULL */
	const char *gang;            /* label kerf.io/gang; NULL */
	const char *priority_class;  /* spec.priorityClassName; NULL */
	const char *mig_profile;     /* "3g.40gb" of nvidia.com/mig-3g.40gb; NULL */
	const char *assigned_gpus;   /* annotations kerf wrote; NULL when absent */
	const char *assigned_mig;
	const char *planned_node;    /* kerf.io/planned-node (a gang's plan) */
	/*
	 * Why kerf must not schedule the pod as it stands (a gang size that is
	 * not a number, a fraction with whole GPUs, two MIG profiles, an
	 * unreadable kerf.io/ annotation), naming the field; NULL when none.
	 * Such a pod is still decoded, so that what it holds is accounted.
	 */
	const char *invalid;
	int64_t created_ms;
	int64_t preempt_at_ms;       /* 0 when absent, and the two below */
	int64_t checkpoint_done_ms;
	int64_t last_checkpoint_ms;
	int64_t cpu_milli;           /* effective request */
	int64_t mem_mib;             /* rounded up */
	int32_t nr_gpus;             /* nvidia.com/gpu */
	int32_t nr_mig;              /* of mig_profile */
	int32_t gpu_milli;           /* fraction (annotation); 0 = none */
	int32_t gpu_mem_mib;         /* per GPU (annotation); 0 = none */
	int32_t priority;            /* spec.priority (0 when absent) */
	uint32_t gang_size;          /* 0 = not given */
	uint8_t phase;               /* enum kerf_pod_phase */
	uint8_t share;               /* enum kerf_gpu_share (core/model.h) */
	bool has_priority;
	uint8_t preemption;          /* spec.preemptionPolicy: enum
					kerf_preemption_policy (0 absent) */
	bool terminating;            /* metadata.deletionTimestamp set */
	bool required_affinity;      /* required node affinity: kerf does not
					read it (yet), so it must not place
					the pod as if it were absent */
	uint16_t nr_selector;
	uint16_t nr_tolerations;
	uint32_t nr_labels;          /* of labels[] below (here: no hole) */
	struct kerf_label *selector; /* spec.nodeSelector, in its order */
	/*
	 * Owned, or kerf_default_tolerations (shared, never freed) when the
	 * list is exactly the two the API server's DefaultTolerationSeconds
	 * admission adds to every pod: not copied into each cached pod.
	 */
	const struct kerf_toleration *tolerations;
	/* metadata.labels as PodDisruptionBudgets match them (kobj/pdb.h):
	   nr_labels pairs (key hash, key=value hash), owned */
	uint64_t *labels;
};

/* not-ready and unreachable, Exists, NoExecute, in the admission's order. */
extern const struct kerf_toleration kerf_default_tolerations[2];

/* obj into *out (released by kerf_kpod_release); nothing on error. */
int kerf_kpod_decode(const json_t *obj, struct kerf_kpod *out,
		     struct kerf_err *err);
void kerf_kpod_release(struct kerf_kpod *p);

/* A deep copy of src into *dst: 0 or -KERF_ENOMEM (dst untouched). */
int kerf_kpod_clone(struct kerf_kpod *dst, const struct kerf_kpod *src);

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
