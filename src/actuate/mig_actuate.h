/*
 * mig_actuate: the node agent carries out MIG plans on NVML, step by step.
 *
 * The core plans in GPU instances (core/mig/planner.h: destroy profile@start,
 * create profile@start).  NVML works in GPU instances (GI) and compute
 * instances (CI), and a GI is usable only with a CI in it.  So each action
 * of a plan becomes NVML steps:
 *
 *   destroy profile@start   destroy-ci for each CI of the GI, then destroy-gi
 *   create profile@start    create-gi at that placement, then create-ci (the
 *                           CI profile that takes the whole GI)
 *
 * plus create-ci for a GI left without a CI (an earlier run stopped between
 * the two steps of a create), unless the plan destroys that GI.  Destroys
 * come first, then those completions, then creates, as the planner orders
 * its actions: a legal layout only shrinks, then grows.
 *
 * Every step is
 *   1. checked on the model first: kerf_mig_apply for a GI step (so an
 *      instance in use is never destroyed and a create must be legal where
 *      it lands); a CI step of an instance in use is refused the same way.
 *      In use means named by a pod's kerf.io/assigned-mig on this node (the
 *      caller passes them) or has a process on it per NVML
 *      (nvmlDeviceGetComputeRunningProcesses_v3);
 *   2. done through NVML;
 *   3. followed by reading the layout back from NVML and comparing it with
 *      the model's: the same instances (profile, start) on every GPU, each
 *      with the CIs expected.
 * The run stops at the first step that fails any of these and reports it:
 * the steps done, the failing step with NVML's error, the steps left
 * undone, and the layout now, checked legal by the core's checker
 * (kerf_mig_layout_check).  Running again from the layout now completes it.
 *
 * Only GPUs in MIG mode of one model kerf has a table for are acted on
 * (the first such model on the node); the others are listed in `skipped`
 * with the reason.  GPUs are named by their NVML index everywhere.
 */
#ifndef KERF_ACTUATE_MIG_ACTUATE_H
#define KERF_ACTUATE_MIG_ACTUATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/mig/planner.h"
#include "nvml/nvml_load.h"

enum {
	KERF_MIG_MAX_STEPS = 512,
	KERF_MIG_MAX_REFS = 64,
	KERF_MIG_SKIPPED_MAX = 512,
};

/* One MIG instance by name: "GPU:PROFILE@START" ("0:3g.40gb@4"). */
struct kerf_mig_ref {
	uint32_t gpu;                /* NVML index */
	char profile[24];            /* kerf's profile name */
	uint8_t start;               /* first memory slice */
};

/*
 * Parse "0:3g.40gb@4,2:1g.10gb@6" (the form of kerf.io/unhealthy-mig; ""
 * is none) into out (max entries).  field names the input in messages:
 * "--in-use: '0:3g.40gb': missing '@START'".  0 and *nr, or -KERF_EINVAL.
 */
int kerf_mig_refs_parse(const char *text, const char *field, struct kerf_mig_ref *out,
			size_t max, size_t *nr, struct kerf_err *err);

/* The MIG GPUs of a node as read from NVML, in the core's terms. */
struct kerf_mig_gpus {
	struct kerf_mig_node node;   /* model and layouts; in_use set */
	uint32_t nvml_index[KERF_MIG_MAX_GPUS];   /* node GPU -> NVML index */
	/* per node GPU and instance (the order of node.gpus[g].inst) */
	uint32_t gi_id[KERF_MIG_MAX_GPUS][KERF_MIG_MAX_INSTANCES];
	uint8_t nr_cis[KERF_MIG_MAX_GPUS][KERF_MIG_MAX_INSTANCES];
	uint32_t ci_id[KERF_MIG_MAX_GPUS][KERF_MIG_MAX_INSTANCES][KERF_MIG_MAX_INSTANCES];
	char skipped[KERF_MIG_SKIPPED_MAX];   /* "gpu 1: MIG off; ..." */
};

/*
 * Read the MIG GPUs through nv and mark in use the instances named in
 * in_use (nr_in_use) and those with processes.  When the processes of a
 * GPU cannot be read, all its instances count as in use (said in
 * skipped).  0, or -KERF_EIO / -KERF_ENOTFOUND (no MIG GPU kerf can act
 * on; the reasons in err), or -KERF_EINVAL (an in-use name that is not an
 * instance's profile on that GPU's model).
 */
int kerf_mig_gpus_read(struct kerf_mig_gpus *out, const struct kerf_nvml *nv,
		       const struct kerf_mig_ref *in_use, size_t nr_in_use,
		       struct kerf_err *err);

/* Node GPU index of NVML index gpu in g, or -1. */
int kerf_mig_gpus_find(const struct kerf_mig_gpus *g, uint32_t gpu);

/* Index of instance (profile, start) in node GPU n of g, or -1. */
int kerf_mig_gpus_instance(const struct kerf_mig_gpus *g, unsigned n, unsigned profile,
			   unsigned start);

enum kerf_mig_step_kind {
	KERF_MIG_STEP_DESTROY_CI = 0,
	KERF_MIG_STEP_DESTROY_GI,
	KERF_MIG_STEP_CREATE_GI,
	KERF_MIG_STEP_CREATE_CI,
};

enum kerf_mig_step_state {
	KERF_MIG_STEP_NOT_DONE = 0,
	KERF_MIG_STEP_DONE,
	KERF_MIG_STEP_FAILED,
};

struct kerf_mig_step {
	enum kerf_mig_step_kind kind;
	enum kerf_mig_step_state state;
	uint32_t gpu;                /* NVML index */
	uint8_t profile;             /* index into the model's profiles */
	uint8_t start;               /* of the GPU instance */
	uint32_t ci_id;              /* destroy-ci: the CI; create-ci: the one made */
};

/* "destroy-ci", "destroy-gi", "create-gi", "create-ci" */
const char *kerf_mig_step_kind_name(enum kerf_mig_step_kind kind);

struct kerf_mig_steps {
	const struct kerf_mig_model *model;
	struct kerf_mig_step steps[KERF_MIG_MAX_STEPS];
	size_t nr;
};

/*
 * The NVML steps of plan (made by kerf_mig_plan_node on g->node) from the
 * layout g.  -KERF_ELIMIT past KERF_MIG_MAX_STEPS.
 */
int kerf_mig_steps_of(const struct kerf_mig_gpus *g, const struct kerf_mig_plan *plan,
		      struct kerf_mig_steps *out, struct kerf_err *err);

/*
 * The plan that makes every instance of assigned (nr) exist: free
 * instances overlapping a missing one destroyed, then the missing ones
 * created, checked action by action with kerf_mig_apply.  -KERF_EINVAL
 * when it cannot be done (an assigned instance on a GPU kerf does not act
 * on, overlapping one in use or another assigned one), the reason in err.
 */
int kerf_mig_plan_assigned(const struct kerf_mig_gpus *g, const struct kerf_mig_ref *assigned,
			   size_t nr, struct kerf_mig_plan *plan, struct kerf_err *err);

struct kerf_mig_report {
	size_t nr_done;
	long failed;                 /* index of the failing step, -1: none */
	int nvml_rc;                 /* NVML's code of the failure; 0: kerf refused */
	char error[KERF_ERR_MSG_MAX];
	struct kerf_mig_gpus now;    /* the layout read last */
	bool legal;                  /* now passes kerf_mig_layout_check */
	char legal_error[KERF_ERR_MSG_MAX];
};

/*
 * Carry out steps (their states are updated) on the GPUs through nv; the
 * in-use names are as for kerf_mig_gpus_read.  Stops at the first step
 * refused, failed or not matched by the layout read after it.  0 when
 * every step was done, -KERF_EIO when one failed (*rep says which and
 * why), -KERF_ENOTFOUND when MIG actuation is off in nv or no layout
 * could be read.
 */
int kerf_mig_run(const struct kerf_nvml *nv, struct kerf_mig_steps *steps,
		 const struct kerf_mig_ref *in_use, size_t nr_in_use,
		 struct kerf_mig_report *rep, struct kerf_err *err);

/*
 * Reconcile to assignments, what the agent loop calls with the
 * assigned-mig instances of its node's pods (assigned, nr): read the GPUs
 * (the assigned instances in use), plan with kerf_mig_plan_assigned, and
 * carry the steps out with kerf_mig_run.  *steps and *rep as there; the
 * return value of the first of them that fails.
 */
int kerf_mig_reconcile(const struct kerf_nvml *nv, const struct kerf_mig_ref *assigned,
		       size_t nr, struct kerf_mig_steps *steps, struct kerf_mig_report *rep,
		       struct kerf_err *err);

struct kerf_mig_mode {
	unsigned current;            /* NVML_DEVICE_MIG_* after the call */
	unsigned pending;
	int activation_rc;           /* nvmlReturn_t: SUCCESS, IN_USE, RESET_REQUIRED */
};

/*
 * Set MIG mode (NVML_DEVICE_MIG_ENABLE/DISABLE) of GPU gpu and read the
 * mode back.  0 when it is current now; 1 when it is only pending (the
 * GPU is busy or must be reset: out->activation_rc says which, and err
 * says it in words); negative on an NVML error.
 */
int kerf_mig_set_mode(const struct kerf_nvml *nv, uint32_t gpu, unsigned mode,
		      struct kerf_mig_mode *out, struct kerf_err *err);

#endif /* KERF_ACTUATE_MIG_ACTUATE_H */
