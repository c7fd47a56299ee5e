/*
 * mig_actuate: a MIG plan carried out on NVML step by step, each step
 * checked on the model first and the layout read back after it
 * (mig_actuate.h).
 */
#include "actuate/mig_actuate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kerf_mig_step_kind_name(enum kerf_mig_step_kind kind)
{
	switch (kind) {
	case KERF_MIG_STEP_DESTROY_CI:
		return "destroy-ci";
	case KERF_MIG_STEP_DESTROY_GI:
		return "destroy-gi";
	case KERF_MIG_STEP_CREATE_GI:
		return "create-gi";
	case KERF_MIG_STEP_CREATE_CI:
		return "create-ci";
	}
	return "?";
}

static int add_step(struct kerf_mig_steps *out, enum kerf_mig_step_kind kind, uint32_t gpu,
		    unsigned profile, unsigned start, uint32_t ci_id, struct kerf_err *err)
{
	if (out->nr == KERF_MIG_MAX_STEPS)
		return kerf_err_set(err, -KERF_ELIMIT, "the plan needs more than %d NVML steps",
				    KERF_MIG_MAX_STEPS);
	out->steps[out->nr++] = (struct kerf_mig_step){
		.kind = kind, .gpu = gpu, .profile = (uint8_t)profile,
		.start = (uint8_t)start, .ci_id = ci_id,
	};
	return 0;
}

static bool destroyed_by(const struct kerf_mig_plan *plan, unsigned n, unsigned profile,
			 unsigned start)
{
	for (size_t k = 0; k < plan->nr_actions; k++) {
		const struct kerf_mig_action *a = &plan->actions[k];
		if (a->kind == KERF_MIG_DESTROY && a->gpu == n && a->profile == profile &&
		    a->start == start)
			return true;
	}
	return false;
}

int kerf_mig_steps_of(const struct kerf_mig_gpus *g, const struct kerf_mig_plan *plan,
		      struct kerf_mig_steps *out, struct kerf_err *err)
{
	const struct kerf_mig_model *m = g->node.model;
	int rc = 0;

	out->model = m;
	out->nr = 0;
	for (size_t k = 0; rc == 0 && k < plan->nr_actions; k++) {
		const struct kerf_mig_action *a = &plan->actions[k];
		if (a->kind != KERF_MIG_DESTROY)
			continue;
		int i = a->gpu < g->node.nr_gpus ? kerf_mig_gpus_instance(g, a->gpu, a->profile, a->start)
						  : -1;
		if (i < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "action %zu of the plan: destroy %s@%u on node GPU %u: no such instance",
					    k + 1, a->profile < m->nr_profiles ? m->profiles[a->profile].name : "?",
					    a->start, a->gpu);
		uint32_t gpu = g->nvml_index[a->gpu];
		for (unsigned c = 0; rc == 0 && c < g->nr_cis[a->gpu][i]; c++)
			rc = add_step(out, KERF_MIG_STEP_DESTROY_CI, gpu, a->profile, a->start,
				      g->ci_id[a->gpu][i][c], err);
		if (rc == 0)
			rc = add_step(out, KERF_MIG_STEP_DESTROY_GI, gpu, a->profile, a->start, 0,
				      err);
	}
	/* GPU instances an earlier run left without their compute instance */
	for (unsigned n = 0; rc == 0 && n < g->node.nr_gpus; n++)
		for (unsigned i = 0; rc == 0 && i < g->node.gpus[n].nr; i++) {
			const struct kerf_mig_instance *in = &g->node.gpus[n].inst[i];
			if (g->nr_cis[n][i] == 0 && !destroyed_by(plan, n, in->profile, in->start))
				rc = add_step(out, KERF_MIG_STEP_CREATE_CI, g->nvml_index[n],
					      in->profile, in->start, 0, err);
		}
	for (size_t k = 0; rc == 0 && k < plan->nr_actions; k++) {
		const struct kerf_mig_action *a = &plan->actions[k];
		if (a->kind != KERF_MIG_CREATE)
			continue;
		if (a->gpu >= g->node.nr_gpus)
			return kerf_err_set(err, -KERF_EINVAL,
					    "action %zu of the plan: node GPU %u does not exist", k + 1,
					    a->gpu);
		rc = add_step(out, KERF_MIG_STEP_CREATE_GI, g->nvml_index[a->gpu], a->profile,
			      a->start, 0, err);
		if (rc == 0)
			rc = add_step(out, KERF_MIG_STEP_CREATE_CI, g->nvml_index[a->gpu],
				      a->profile, a->start, 0, err);
	}
	return rc;
}

/* ---- the plan that makes the assigned instances exist ------------------ */

/* A sentence naming the instances in use on l that overlap profile p at start. */
static void in_use_overlapping(const struct kerf_mig_model *m, const struct kerf_mig_layout *l,
			       unsigned p, unsigned start, char *buf, size_t size)
{
	uint32_t span = kerf_mig_span(&m->profiles[p], start);
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < l->nr && used < size; i++) {
		const struct kerf_mig_instance *in = &l->inst[i];
		if (in->in_use && (kerf_mig_span(&m->profiles[in->profile], in->start) & span))
			used += (size_t)snprintf(buf + used, size - used, "%s%s@%u",
						 used ? ", " : ": it overlaps ",
						 m->profiles[in->profile].name, in->start);
	}
	if (used && used < size)
		snprintf(buf + used, size - used, " in use");
}

int kerf_mig_plan_assigned(const struct kerf_mig_gpus *g, const struct kerf_mig_ref *assigned,
			   size_t nr, struct kerf_mig_plan *plan, struct kerf_err *err)
{
	const struct kerf_mig_model *m = g->node.model;
	struct kerf_mig_action creates[KERF_MIG_MAX_ACTIONS];
	size_t nr_creates = 0;
	struct kerf_mig_node node = g->node;
	int n[KERF_MIG_MAX_REFS], p[KERF_MIG_MAX_REFS];

	memset(plan, 0, sizeof(*plan));
	if (nr > KERF_MIG_MAX_REFS)
		return kerf_err_set(err, -KERF_EINVAL, "more than %d assigned instances",
				    KERF_MIG_MAX_REFS);
	/* the assigned instances that exist are in use: never destroyed */
	for (size_t r = 0; r < nr; r++) {
		const struct kerf_mig_ref *a = &assigned[r];
		n[r] = kerf_mig_gpus_find(g, a->gpu);
		p[r] = kerf_mig_profile_find(m, a->profile);
		if (n[r] < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "assigned '%u:%s@%u': gpu %u is not a MIG GPU kerf changes (%s)",
					    a->gpu, a->profile, a->start, a->gpu,
					    g->skipped[0] ? g->skipped : "not on this node");
		if (p[r] < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "assigned '%u:%s@%u': %s has no profile '%s'", a->gpu,
					    a->profile, a->start, m->name, a->profile);
		int i = kerf_mig_gpus_instance(g, (unsigned)n[r], (unsigned)p[r], a->start);
		if (i >= 0)
			node.gpus[n[r]].inst[i].in_use = true;
	}
	for (size_t r = 0; r < nr; r++) {
		struct kerf_mig_layout *l = &node.gpus[n[r]];
		struct kerf_mig_action c = { .kind = KERF_MIG_CREATE, .gpu = (uint8_t)n[r],
					     .profile = (uint8_t)p[r], .start = assigned[r].start };
		bool exists = false;
		for (unsigned i = 0; i < l->nr; i++)
			exists |= l->inst[i].profile == c.profile && l->inst[i].start == c.start;
		if (exists)
			continue;
		uint32_t span = kerf_mig_span(&m->profiles[c.profile], c.start);
		for (unsigned i = l->nr; i-- > 0;) {
			const struct kerf_mig_instance *in = &l->inst[i];
			if (in->in_use || !(kerf_mig_span(&m->profiles[in->profile], in->start) & span))
				continue;
			struct kerf_mig_action d = { .kind = KERF_MIG_DESTROY, .gpu = c.gpu,
						     .profile = in->profile, .start = in->start };
			if (kerf_mig_apply(&node, &d, err) < 0)
				return -KERF_EINVAL;
			plan->actions[plan->nr_actions++] = d;
		}
		struct kerf_err why = { 0 };
		if (kerf_mig_apply(&node, &c, &why) < 0) {
			char overlap[128];
			in_use_overlapping(m, l, c.profile, c.start, overlap, sizeof(overlap));
			return kerf_err_set(err, -KERF_EINVAL, "assigned '%u:%s@%u' cannot be made%s (%s)",
					    assigned[r].gpu, assigned[r].profile, c.start, overlap,
					    why.msg);
		}
		l->inst[l->nr - 1].in_use = true;
		creates[nr_creates++] = c;
	}
	for (size_t k = 0; k < nr_creates; k++)
		plan->actions[plan->nr_actions++] = creates[k];
	for (unsigned i = 0; i < node.nr_gpus; i++)
		plan->after[i] = node.gpus[i];
	return 0;
}

int kerf_mig_reconcile(const struct kerf_nvml *nv, const struct kerf_mig_ref *assigned,
		       size_t nr, struct kerf_mig_steps *steps, struct kerf_mig_report *rep,
		       struct kerf_err *err)
{
	struct kerf_mig_gpus *g = malloc(sizeof(*g));
	struct kerf_mig_plan *plan = malloc(sizeof(*plan));
	int rc = -KERF_ENOMEM;

	memset(rep, 0, sizeof(*rep));
	rep->failed = -1;
	steps->nr = 0;
	if (!g || !plan) {
		kerf_err_set(err, rc, "out of memory");
		goto out;
	}
	rc = kerf_mig_gpus_read(g, nv, assigned, nr, err);
	if (rc == 0)
		rc = kerf_mig_plan_assigned(g, assigned, nr, plan, err);
	if (rc == 0)
		rc = kerf_mig_steps_of(g, plan, steps, err);
	if (rc == 0)
		rc = kerf_mig_run(nv, steps, assigned, nr, rep, err);
out:
	free(g);
	free(plan);
	return rc;
}
