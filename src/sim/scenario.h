/*
 * scenario: a simulated multi-tenant cluster and its workload, as read from
 * a YAML file (docs/scenario.md) and turned into the core's state.
 * scenario_parse.c reads (kerf_scenario_parse, kerf_scenario_load);
 * scenario_build.c builds (kerf_scenario_build).
 *
 * Loading validates everything and names file:line, the field and the
 * reason on error; a scenario that failed to load is never used (the
 * struct is left empty).  Units in the struct are the core's: cpu_milli,
 * mem_mib, gpu_milli, milliseconds.
 */
#ifndef KERF_SIM_SCENARIO_H
#define KERF_SIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/model.h"
#include "core/priority.h"
#include "core/state.h"
#include "core/tenant.h"
#include "core/workload.h"

enum {
	KERF_SCN_NAME_MAX = 64,
	KERF_SCN_MAX_QUOTAS = KERF_MAX_MODELS + 2,
};

struct kerf_scn_nodes {
	char prefix[KERF_SCN_NAME_MAX];   /* node i is "<prefix><i>" */
	uint32_t count;
	int64_t cpu_milli;
	int64_t mem_mib;
	int gpus;
	char model[KERF_MODEL_NAME_MAX];  /* "" when gpus == 0 */
	int32_t gpu_mem_mib;              /* per GPU; 0 = not tracked */
	uint32_t domain_nodes;            /* nodes per NVLink domain; 0 = none */
	int mig_gpus;                     /* GPUs of each node in MIG mode */
};

/* One quota line: resource is "cpu", "memory" or a GPU model name. */
struct kerf_scn_quota {
	char resource[KERF_MODEL_NAME_MAX];
	int64_t nominal;                  /* cpu_milli, mem_mib or gpu_milli */
	int64_t borrowing_limit;          /* KERF_QTY_INF: unlimited */
	int64_t lending_limit;            /* KERF_QTY_INF: all of nominal */
};

struct kerf_scn_tenant {
	char name[KERF_SCN_NAME_MAX];
	char parent[KERF_SCN_NAME_MAX];   /* "" = directly under the cluster */
	uint32_t weight;                  /* default 1 */
	struct kerf_scn_quota quotas[KERF_SCN_MAX_QUOTAS];
	int nr_quotas;
	char allowed_classes[KERF_MAX_CLASSES][KERF_CLASS_NAME_MAX];
	int nr_allowed_classes;           /* 0 = every class */
	enum kerf_isolation isolation;    /* default shared */
	char network_class[KERF_SCN_NAME_MAX];
	/* GPU-hour budget; gpu_hours_milli 0 = none */
	int64_t budget_gpu_milli_hours;   /* GPU-hours x 1000 per window */
	int64_t budget_window_ms;
	enum kerf_budget_action budget_action;
	int32_t budget_weight_pct[KERF_MAX_MODELS]; /* per model, default 100 */
	/* idle reclamation; idle_action NONE = off */
	enum kerf_idle_action idle_action;
	int32_t idle_threshold_pct;       /* utilisation below this is idle */
	int64_t idle_after_ms;            /* for this long */
	char idle_exempt_classes[KERF_MAX_CLASSES][KERF_CLASS_NAME_MAX];
	int nr_idle_exempt_classes;
};

enum kerf_scn_dist {
	KERF_DIST_FIXED = 0,
	KERF_DIST_EXP,                    /* exponential with the given mean */
};

/* A stream of similar workloads. */
struct kerf_scn_generator {
	char name[KERF_SCN_NAME_MAX];     /* workloads are "<name>-<i>" */
	char tenant[KERF_SCN_NAME_MAX];
	char class_name[KERF_CLASS_NAME_MAX];
	uint32_t count;                   /* workloads generated */
	int64_t start_ms;                 /* first arrival */
	int64_t interarrival_ms;          /* mean gap; 0 = all at start_ms */
	enum kerf_scn_dist arrival;
	int64_t duration_ms;              /* mean run time at full speed */
	enum kerf_scn_dist duration;
	struct kerf_podset set;           /* pods of each workload */
	uint32_t min_count;               /* 0 = the whole gang */
	enum kerf_topology topology;
	int64_t checkpoint_every_ms;      /* 0 = never checkpoints */
	int32_t utilisation_pct;          /* mean GPU utilisation, 0..100 */
};

/*
 * One workload of a replayed trace: it arrives at at_ms and runs for
 * duration_ms.  Tenant and class are indexes into the built state (a trace
 * replay builds its state itself, see kerf_timesim_init_state).
 */
struct kerf_scn_arrival {
	char name[KERF_SCN_NAME_MAX];
	int tenant;
	int class_idx;
	int64_t at_ms;
	int64_t duration_ms;
	struct kerf_podset set;
};

struct kerf_scenario {
	char name[KERF_SCN_NAME_MAX];
	uint64_t seed;
	int64_t horizon_ms;               /* simulated time */
	int64_t cycle_ms;                 /* scheduling cycle period */
	char policy[32];                  /* placement policy, default "kerf" */
	struct kerf_scn_nodes *nodes;
	size_t nr_nodes;
	struct kerf_classes classes;
	struct kerf_scn_tenant *tenants;  /* parents before children */
	size_t nr_tenants;
	struct kerf_scn_generator *generators;
	size_t nr_generators;
	struct kerf_scn_arrival *arrivals;  /* a replayed trace, by time */
	size_t nr_arrivals;
};

void kerf_scenario_init(struct kerf_scenario *sc);
void kerf_scenario_release(struct kerf_scenario *sc);

/* Parse YAML text (path is for messages).  On error sc stays empty. */
int kerf_scenario_parse(struct kerf_scenario *sc, const char *path,
			const char *yaml, size_t len, struct kerf_err *err);

/* Read and parse a file. */
int kerf_scenario_load(struct kerf_scenario *sc, const char *path,
		       struct kerf_err *err);

/*
 * Build the core state: the nodes (NVLink domains numbered from 1), the
 * priority classes, and the tenant tree with quotas resolved to dimensions
 * and validated against the cluster.  st must be uninitialised.
 */
int kerf_scenario_build(const struct kerf_scenario *sc, struct kerf_state *st,
			struct kerf_err *err);

#endif /* KERF_SIM_SCENARIO_H */
