/*
 * report: what a simulator run hands the report writers (report_html.c,
 * report_md.c), as plain data: samples of the allocation and of the
 * preemptions taken at fixed times through the run, per-tenant share and
 * entitlement by window, wait-time histograms per priority class, the GPU
 * map when allocation peaked, and for placement batches (kerf sim openb)
 * the allocation curve per policy.  Integers in ppm and milliseconds, so
 * the same run gives the same bytes.  Filled by sim/timesim_record.h (time
 * mode) or by the caller (curves); nothing here knows the simulator.
 */
#ifndef KERF_REPORT_REPORT_H
#define KERF_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum {
	KERF_REPORT_SAMPLES = 240,    /* intervals over the horizon */
	KERF_REPORT_WINDOWS = 24,     /* share / entitlement windows */
	KERF_REPORT_WAIT_BINS = 8,    /* see kerf_report_wait_bin */
	KERF_REPORT_NODE_GPUS = 16,
	KERF_REPORT_MIG_SLICES = 8,
	KERF_REPORT_NAME_MAX = 96,
};

/* Cell owners in the GPU map (else a tenant index). */
#define KERF_REPORT_FREE (-1)       /* nothing there */
#define KERF_REPORT_MIXED (-2)      /* fractions of several tenants */
#define KERF_REPORT_IDLE_SLICE (-3) /* a MIG instance nobody uses */

struct kerf_report_tenant {
	char name[KERF_REPORT_NAME_MAX];  /* org/team */
	int index;                  /* the simulator's tenant index: colour */
	bool leaf;
	uint32_t submitted;
	uint32_t started;
	uint32_t preempted;
	uint32_t pending;           /* still pending at the end */
	int64_t gpu_milli_hours;    /* GPU-hours x 1000 */
	int64_t lost_milli_hours;   /* GPU-hours lost to preemption x 1000 */
	int64_t share_ppm[KERF_REPORT_WINDOWS];  /* of the GPUs in use; -1: none */
	int64_t owed_ppm[KERF_REPORT_WINDOWS];   /* entitlement; -1: none */
};

struct kerf_report_class {
	char name[KERF_REPORT_NAME_MAX];
	bool preemptible;
	uint32_t submitted;
	uint32_t started;
	int64_t wait_p50_ms;        /* -1: no wait recorded */
	int64_t wait_p99_ms;
	uint32_t wait_bins[KERF_REPORT_WAIT_BINS];
};

struct kerf_report_gpu {
	int32_t owner;              /* tenant index or KERF_REPORT_FREE/MIXED */
	int16_t used_milli;         /* 0..1000 */
	bool mig;                   /* in MIG mode: see slices */
	int32_t slices[KERF_REPORT_MIG_SLICES]; /* owner per memory slice */
};

struct kerf_report_node {
	char name[KERF_REPORT_NAME_MAX];
	uint8_t nr_gpus;
	struct kerf_report_gpu gpu[KERF_REPORT_NODE_GPUS];
};

/* One policy's allocation against arrived work (kerf sim openb). */
struct kerf_report_curve {
	char name[KERF_REPORT_NAME_MAX];
	size_t nr;
	int64_t *arrived_ppm;       /* of GPU capacity, ascending; owned */
	int64_t *alloc_ppm;         /* GPU allocated, of capacity; owned */
};

struct kerf_report {
	char title[160];
	char subtitle[320];
	int64_t horizon_ms;         /* 0: not a time-mode run */
	/* at k * horizon_ms / KERF_REPORT_SAMPLES, k = 0..SAMPLES */
	int64_t alloc_ppm[KERF_REPORT_SAMPLES + 1];
	uint64_t preempted_cum[KERF_REPORT_SAMPLES + 1];
	int64_t lost_milli_ms_cum[KERF_REPORT_SAMPLES + 1]; /* GPU-milli x ms / 1000 */
	int64_t peak_ms;
	int64_t peak_alloc_ppm;
	int64_t gpu_capacity_milli;
	uint64_t nr_events;
	uint32_t submitted;
	uint32_t started;
	uint32_t pending;
	struct kerf_report_tenant *tenants;   /* owned */
	size_t nr_tenants;
	struct kerf_report_class *classes;    /* owned */
	size_t nr_classes;
	struct kerf_report_node *nodes;       /* at peak, rank order; owned */
	size_t nr_nodes;
	struct kerf_report_curve *curves;     /* owned */
	size_t nr_curves;
};

void kerf_report_init(struct kerf_report *r);
void kerf_report_release(struct kerf_report *r);

/* Add a curve of n points (copied); 0 or -KERF_ENOMEM. */
int kerf_report_add_curve(struct kerf_report *r, const char *name,
			  const int64_t *arrived_ppm, const int64_t *alloc_ppm,
			  size_t n);

/*
 * The histogram bin of a wait: <10 s, <1 min, <5 min, <15 min, <1 h,
 * <4 h, <12 h, longer; kerf_report_wait_bin_label names each.
 */
int kerf_report_wait_bin(int64_t wait_ms);
const char *kerf_report_wait_bin_label(int bin);

/* A headline figure of a time-mode run, as both writers print it. */
struct kerf_report_fact {
	const char *label;          /* "workloads started" */
	const char *key;            /* "started": the HTML's data-key */
	char value[32];
};

enum { KERF_REPORT_FACTS = 8 };

/* The headline figures into f[KERF_REPORT_FACTS]; returns how many. */
size_t kerf_report_facts(const struct kerf_report *r,
			 struct kerf_report_fact *f);

/* The format a report file name asks for. */
enum kerf_report_format {
	KERF_REPORT_NONE = 0,       /* an extension neither writer knows */
	KERF_REPORT_HTML,           /* .html */
	KERF_REPORT_MD,             /* .md */
};

enum kerf_report_format kerf_report_format_of(const char *path);

/*
 * The whole report in the format into out (appended).  0, or negative
 * (-KERF_ENOMEM, -KERF_ELIMIT from the buffer).
 */
int kerf_report_html(const struct kerf_report *r, struct kerf_buf *out);
int kerf_report_md(const struct kerf_report *r, struct kerf_buf *out);

#endif /* KERF_REPORT_REPORT_H */
