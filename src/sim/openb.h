/*
 * openb: readers for Alibaba's GPU-sharing trace (cluster-trace-gpu-v2023,
 * "openb"): the node list (sn,cpu_milli,memory_mib,gpu,model) and the pod
 * lists (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,...]).
 * Columns are found by header name (a column named twice is an error, and
 * a leading UTF-8 byte order mark is skipped); every malformed row is
 * rejected with "file:line: column: reason" and nothing of a file that
 * failed is kept.  creation_time and deletion_time, when present, are
 * seconds from 0 to KERF_OPENB_MAX_TIME_S, deletion not before creation;
 * an empty deletion_time is a pod still running at the end of the trace.
 */
#ifndef KERF_SIM_OPENB_H
#define KERF_SIM_OPENB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"
#include "core/model.h"

struct kerf_openb_node {
	const char *name;      /* owned by the trace's arena */
	const char *model;     /* "" for a node without GPUs */
	int64_t cpu_milli;
	int64_t mem_mib;
	int nr_gpus;
};

struct kerf_openb_pod {
	const char *name;
	const char *gpu_spec;  /* allowed models, '|'-separated; "" = any */
	const char *qos;       /* "" when the file has no qos column */
	int64_t cpu_milli;
	int64_t mem_mib;
	int32_t gpu_milli;     /* per GPU */
	int nr_gpus;
	int64_t creation_s;    /* -1 when absent */
	int64_t deletion_s;    /* -1 when absent (or empty: still running) */
};

/*
 * Trace times are seconds, at most this (about 31 700 years): in
 * milliseconds, and summed, they stay far inside 64 bits.  A time beyond
 * it is refused with file:line: column: reason.
 */
#define KERF_OPENB_MAX_TIME_S ((int64_t)1000000000000)

struct kerf_openb {
	struct kerf_arena arena;
	struct kerf_openb_node *nodes;
	size_t nr_nodes;
	size_t alloc_nodes;
	struct kerf_openb_pod *pods;
	size_t nr_pods;
	size_t alloc_pods;
	/* a pod list read had no creation_time or no deletion_time column */
	bool untimed;
};

void kerf_openb_init(struct kerf_openb *o);
void kerf_openb_release(struct kerf_openb *o);

/* Parse a node list from memory (appends; on error o is unchanged). */
int kerf_openb_parse_nodes(struct kerf_openb *o, const char *path,
			   const char *data, size_t len, struct kerf_err *err);

/*
 * "PATH: no WHAT after the header; a trace needs at least one", for a
 * list read with a header and no rows (kerf_openb_load refuses both
 * lists so), so that a run of it is an error, not a table of zeros.
 */
int kerf_openb_no_rows(const char *path, const char *what,
		       struct kerf_err *err);

/* Parse a pod list from memory (appends; on error o is unchanged). */
int kerf_openb_parse_pods(struct kerf_openb *o, const char *path,
			  const char *data, size_t len, struct kerf_err *err);

/* Read and parse files; either list without rows is refused. */
int kerf_openb_load(struct kerf_openb *o, const char *nodes_path,
		    const char *pods_path, struct kerf_err *err);

/* GPU memory of a known model in MiB, 0 when not published. */
int32_t kerf_openb_model_mem_mib(const char *model);

/*
 * Build a cluster holding the nodes in the order given by order[] (order[i]
 * is the trace index of the node of rank i; NULL = file order).
 */
int kerf_openb_cluster(const struct kerf_openb *o, const uint32_t *order,
		       struct kerf_cluster *c, struct kerf_err *err);

/*
 * The request of pod i in cluster c.  Models named in gpu_spec that no node
 * has are added to c's model table, so the pod fits nowhere rather than
 * anywhere.
 */
int kerf_openb_pod_request(const struct kerf_openb *o, size_t i,
			   struct kerf_cluster *c, struct kerf_pod *p,
			   struct kerf_err *err);

#endif /* KERF_SIM_OPENB_H */
