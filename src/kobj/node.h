/*
 * node: a Node object cut down to what kerf places by, kept by the
 * informer for each of thousands of nodes (strings in one allocation).
 *
 * GPUs: the count from status.allocatable (else capacity) nvidia.com/gpu;
 * the model from the GPU feature discovery label nvidia.com/gpu.product and
 * its memory from nvidia.com/gpu.memory (MiB); the NVLink domain from
 * kerf.io/nvlink-domain (any string: nodes with the same value share one);
 * GPUs in MIG mode from kerf.io/mig-gpus (the node agent writes it).
 * GPUs and MIG instances out of service from the annotations
 * kerf.io/unhealthy-gpus and kerf.io/unhealthy-mig (kobj/gpu_marks.h); a
 * value that does not read counts every GPU of the node out of service
 * and says why in marks_error (the node still takes pods without GPUs).
 * Each GPU's mean utilisation from kerf.io/gpu-utilization
 * (kobj/gpu_util.h), for idle reclamation; a value that does not read
 * gives none and says why in util_error.  A
 * node that is cordoned (spec.unschedulable) or being deleted takes no new
 * pods; one that is not ready carries the node.kubernetes.io/not-ready
 * taint, which keeps pods that do not tolerate it away (as kube-scheduler
 * does: it reads the taint, not the Ready condition).
 */
#ifndef KERF_KOBJ_NODE_H
#define KERF_KOBJ_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "kobj/gpu_marks.h"
#include "kobj/gpu_util.h"
#include "kobj/pod.h"

enum {
	KERF_KNODE_MAX_LABELS = 256,
	KERF_KNODE_MAX_TAINTS = 64,
};

struct kerf_taint {
	const char *key;
	const char *value;
	uint8_t effect;        /* enum kerf_taint_effect */
};

struct kerf_knode {
	char *strings;         /* owns every string below */
	size_t strings_len;
	const char *name, *uid;
	const char *gpu_model; /* NULL: no label */
	const char *nvlink_domain; /* NULL: none */
	int64_t cpu_milli;     /* allocatable */
	int64_t mem_mib;       /* allocatable, rounded down */
	int32_t nr_gpus;       /* nvidia.com/gpu allocatable */
	int32_t gpu_mem_mib;   /* per GPU; 0 = unknown */
	int32_t mig_gpus;      /* GPUs in MIG mode */
	bool unschedulable;    /* spec.unschedulable (cordoned) */
	bool ready;            /* condition Ready is True */
	bool terminating;
	uint16_t nr_labels;
	uint16_t nr_taints;
	struct kerf_label *labels;
	struct kerf_taint *taints;
	uint16_t gpus_down;    /* unhealthy-gpus; UINT16_MAX when unreadable */
	uint16_t nr_mig_down;
	struct kerf_mig_mark *mig_down; /* unhealthy-mig, owned */
	const char *marks_error; /* why a mark did not read; NULL: fine */
	uint64_t util_gpus;    /* bit g: GPU g has a value in util_pct */
	uint8_t util_pct[KERF_GPU_UTIL_MAX_GPUS]; /* gpu-utilization, percent */
	const char *util_error; /* why gpu-utilization did not read; NULL: fine */
	const char *invalid;   /* why kerf places nothing there; NULL: fine */
};

int kerf_knode_decode(const json_t *obj, struct kerf_knode *out,
		      struct kerf_err *err);
void kerf_knode_release(struct kerf_knode *n);

/* A deep copy of src into *dst: 0 or -KERF_ENOMEM (dst untouched). */
int kerf_knode_clone(struct kerf_knode *dst, const struct kerf_knode *src);

/* The value of label key, or NULL. */
const char *kerf_knode_label(const struct kerf_knode *n, const char *key);

/* Would the node take a new pod at all (cordon, deletion, invalid)? */
bool kerf_knode_is_usable(const struct kerf_knode *n);

/* Does pod p tolerate every NoSchedule/NoExecute taint of n? */
bool kerf_knode_tolerated(const struct kerf_knode *n,
			  const struct kerf_kpod *p);

/* Does n carry every label of p's nodeSelector? */
bool kerf_knode_selected(const struct kerf_knode *n,
			 const struct kerf_kpod *p);

#endif
