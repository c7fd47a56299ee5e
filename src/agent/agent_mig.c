/*
 * agent_mig: the MIG instances the node's pods were assigned made real
 * (actuate/mig_actuate.h) from the agent's loop.
 *
 * Each second (and after a failure, 30 s later) the agent collects
 * kerf.io/assigned-mig of the pods bound here that have not ended; when one
 * of those instances is not in the layout NVML reports, it reconciles:
 * free instances in the way destroyed, the missing ones created, step by
 * step, each checked on the core's model and the layout read back after
 * it; an instance a pod holds or a process uses is never touched.  The
 * outcome goes to the Node as kerf.io/mig-actuation ("ok: 2 steps",
 * or the failing step, NVML's error and the steps left) and to /metrics;
 * the inventory is read again so that kerf.io/mig-layout follows.
 */
#include "agent/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/mig_actuate.h"
#include "kobj/pod.h"

enum { MIG_EVERY_MS = 1000, MIG_RETRY_MS = 30000 };

struct mig_work {
	struct kerf_mig_steps steps;
	struct kerf_mig_report rep;
};

/* The assigned instances of the pods bound here; how many. */
static size_t assigned(struct kerf_agent *a, struct kerf_mig_ref *refs, size_t max)
{
	size_t n = kerf_informer_size(a->pods_inf), k = 0;

	for (size_t i = 0; i < n && k < max; i++) {
		const struct kerf_kpod *p = kerf_informer_at(a->pods_inf, i, NULL);
		const char *gpus = p ? kerf_kpod_assigned_gpus(p) : NULL;
		const char *mig = p ? kerf_kpod_assigned_mig(p) : NULL;
		char text[64];
		struct kerf_err err = { 0 };
		size_t got = 0;

		if (!gpus || !mig || p->phase == KERF_PHASE_SUCCEEDED ||
		    p->phase == KERF_PHASE_FAILED || strchr(gpus, ','))
			continue;
		snprintf(text, sizeof(text), "%s:%s", gpus, mig);
		if (kerf_mig_refs_parse(text, "kerf.io/assigned-mig", &refs[k], 1, &got, &err) == 0 &&
		    got == 1)
			k++;
	}
	return k;
}

/* Is every ref an instance of the inventory? */
static bool all_there(const struct kerf_gpu_inventory *inv, const struct kerf_mig_ref *refs,
		      size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		bool found = false;

		for (uint32_t g = 0; g < inv->nr_gpus && !found; g++) {
			const struct kerf_gpu *gpu = &inv->gpus[g];

			if (gpu->index != refs[i].gpu)
				continue;
			for (uint32_t k = 0; k < gpu->nr_gis && !found; k++)
				found = gpu->gis[k].start == refs[i].start &&
					!strcmp(gpu->gis[k].profile, refs[i].profile) &&
					gpu->gis[k].nr_cis > 0;
		}
		if (!found)
			return false;
	}
	return true;
}

static void report(struct kerf_agent *a, int rc, const struct mig_work *w,
		   const struct kerf_err *err)
{
	if (rc == 0) {
		snprintf(a->mig_result, sizeof(a->mig_result), "ok: %zu steps", w->rep.nr_done);
		a->c.mig_steps += w->rep.nr_done;
		return;
	}
	a->c.mig_failures++;
	a->c.mig_steps += w->rep.nr_done;
	if (w->rep.failed >= 0 && (size_t)w->rep.failed < w->steps.nr)
		snprintf(a->mig_result, sizeof(a->mig_result),
			 "failed: step %ld of %zu: %.300s; %zu done, %zu left; layout %s",
			 w->rep.failed + 1, w->steps.nr, w->rep.error, w->rep.nr_done,
			 w->steps.nr - w->rep.nr_done, w->rep.legal ? "legal" : "NOT legal");
	else
		snprintf(a->mig_result, sizeof(a->mig_result), "failed: %.400s", err->msg);
	fprintf(stderr, "kerf agent: MIG: %s\n", a->mig_result);
}

void kerf_agent_mig_step(struct kerf_agent *a, int64_t now_ms)
{
	struct kerf_mig_ref refs[KERF_MIG_MAX_REFS];
	struct kerf_err err = { 0 };
	struct mig_work *w;
	size_t nr;
	int rc;

	if (a->o.no_mig || now_ms < a->mig_next_ms || !a->o.nv || !a->o.nv->initialised ||
	    !kerf_nvml_has(a->o.nv, KERF_NVML_F_MIG_ACTUATE) ||
	    a->inv.state != KERF_GPU_INVENTORY_READ)
		return;
	a->mig_next_ms = now_ms + MIG_EVERY_MS;
	nr = assigned(a, refs, KERF_MIG_MAX_REFS);
	if (!nr || all_there(&a->inv, refs, nr))
		return;
	if (!(w = calloc(1, sizeof(*w))))
		return;
	rc = kerf_mig_reconcile(a->o.nv, refs, nr, &w->steps, &w->rep, &err);
	report(a, rc, w, &err);
	if (rc < 0)
		a->mig_next_ms = now_ms + MIG_RETRY_MS;
	free(w);
	a->next_inventory_ms = 0;   /* read the new layout at once */
}
