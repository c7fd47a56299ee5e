#include "core/mig/planner.h"

#include <string.h>

int32_t kerf_mig_headroom(const struct kerf_mig_model *m,
			  const struct kerf_mig_layout *layout)
{
	int32_t h = 0;

	for (unsigned p = 0; p < m->nr_profiles; p++) {
		struct kerf_mig_layout t = *layout;
		int32_t n = 0;

		/* placements are aligned: lowest start first packs the most */
		for (unsigned s = 0; s < m->mem_slices; s++)
			if (kerf_mig_can_add(m, &t, p, s)) {
				t.inst[t.nr++] = (struct kerf_mig_instance){
					.profile = (uint8_t)p, .start = (uint8_t)s };
				n++;
			}
		h += n * m->profiles[p].compute_slices;
	}
	return h;
}

static bool same_instance(const struct kerf_mig_instance *a,
			  const struct kerf_mig_instance *b)
{
	return a->profile == b->profile && a->start == b->start;
}

static bool has_instance(const struct kerf_mig_layout *l,
			 const struct kerf_mig_instance *in)
{
	for (unsigned i = 0; i < l->nr; i++)
		if (same_instance(&l->inst[i], in))
			return true;
	return false;
}

/* How a GPU's layout would fare: better is larger served, then fewer
 * actions, then less headroom lost. */
struct score {
	int32_t served;              /* demand served, x compute slices */
	int32_t actions;
	int32_t lost;                /* headroom lost */
};

static int cmp_score(const struct score *a, const struct score *b)
{
	if (a->served != b->served)
		return a->served > b->served ? -1 : 1;
	if (a->actions != b->actions)
		return a->actions < b->actions ? -1 : 1;
	if (a->lost != b->lost)
		return a->lost < b->lost ? -1 : 1;
	return 0;
}

/* Free instances of each profile in l. */
static void count_free(const struct kerf_mig_layout *l, uint16_t *free_p)
{
	memset(free_p, 0, KERF_MIG_MAX_PROFILES * sizeof(*free_p));
	for (unsigned i = 0; i < l->nr; i++)
		if (!kerf_mig_inst_held(&l->inst[i]))
			free_p[l->inst[i].profile]++;
}

struct search {
	const struct kerf_mig_model *m;
	const struct kerf_mig_layout *cur;
	const uint16_t *want;
	int32_t headroom_cur;
	struct kerf_mig_layout trial;
	struct kerf_mig_layout best;
	struct score best_score;
	bool found;
};

static void evaluate(struct search *x)
{
	const struct kerf_mig_model *m = x->m;
	uint16_t free_p[KERF_MIG_MAX_PROFILES];
	struct score sc = { 0, 0, 0 };

	count_free(&x->trial, free_p);
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		int32_t n = free_p[p] < x->want[p] ? free_p[p] : x->want[p];

		sc.served += n * m->profiles[p].compute_slices;
	}
	for (unsigned i = 0; i < x->cur->nr; i++)
		if (!has_instance(&x->trial, &x->cur->inst[i]))
			sc.actions++;       /* destroyed */
	for (unsigned i = 0; i < x->trial.nr; i++)
		if (!has_instance(x->cur, &x->trial.inst[i]))
			sc.actions++;       /* created */
	/* the headroom only matters between equals: computed last */
	if (x->found && (sc.served != x->best_score.served ||
			 sc.actions != x->best_score.actions)) {
		if (cmp_score(&sc, &x->best_score) >= 0)
			return;
	}
	sc.lost = x->headroom_cur - kerf_mig_headroom(m, &x->trial);
	if (!x->found || cmp_score(&sc, &x->best_score) < 0) {
		x->best = x->trial;
		x->best_score = sc;
		x->found = true;
	}
}

/* Every legal layout that keeps the instances in use: at each memory slice
 * not yet covered, either nothing starts there or one profile does. */
static void search_from(struct search *x, unsigned s)
{
	const struct kerf_mig_model *m = x->m;

	while (s < m->mem_slices && (kerf_mig_layout_used(m, &x->trial) >> s & 1))
		s++;
	if (s >= m->mem_slices) {
		evaluate(x);
		return;
	}
	search_from(x, s + 1);
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		if (!kerf_mig_can_add(m, &x->trial, p, s))
			continue;
		x->trial.inst[x->trial.nr++] = (struct kerf_mig_instance){
			.profile = (uint8_t)p, .start = (uint8_t)s };
		search_from(x, s + 1);
		x->trial.nr--;
	}
}

/* The best layout for one GPU given the demand left. */
static void plan_gpu(const struct kerf_mig_model *m, const struct kerf_mig_layout *cur,
		     const uint16_t *want, struct kerf_mig_layout *best,
		     struct score *sc)
{
	struct search x = { .m = m, .cur = cur, .want = want };

	x.headroom_cur = kerf_mig_headroom(m, cur);
	for (unsigned i = 0; i < cur->nr; i++)
		if (kerf_mig_inst_held(&cur->inst[i]))
			x.trial.inst[x.trial.nr++] = cur->inst[i];
	search_from(&x, 0);
	/* the current layout is always among the candidates: found is true */
	*best = x.best;
	*sc = x.best_score;
}

int kerf_mig_plan_node(const struct kerf_mig_node *node, const uint16_t *want,
		       struct kerf_mig_plan *plan, struct kerf_err *err)
{
	const struct kerf_mig_model *m = node->model;
	uint16_t left[KERF_MIG_MAX_PROFILES] = { 0 }, free_p[KERF_MIG_MAX_PROFILES];
	bool fixed[KERF_MIG_MAX_GPUS] = { false };

	memset(plan, 0, sizeof(*plan));
	if (!m)
		return kerf_err_set(err, -KERF_EINVAL, "node: no GPU model");
	if (node->nr_gpus > KERF_MIG_MAX_GPUS)
		return kerf_err_set(err, -KERF_EINVAL, "node: %u GPUs, at most %d",
				    node->nr_gpus, KERF_MIG_MAX_GPUS);
	for (unsigned g = 0; g < node->nr_gpus; g++) {
		int rc = kerf_mig_layout_check(m, &node->gpus[g], err);

		if (rc < 0) {
			char msg[sizeof(err->msg)];

			if (!err)
				return rc;
			memcpy(msg, err->msg, sizeof(msg));
			kerf_err_clear(err);
			return kerf_err_set(err, rc, "gpu %u: %s", g, msg);
		}
	}
	for (unsigned p = 0; p < m->nr_profiles; p++)
		left[p] = want[p];
	{
		uint16_t all[KERF_MIG_MAX_PROFILES] = { 0 };

		for (unsigned g = 0; g < node->nr_gpus; g++) {
			count_free(&node->gpus[g], free_p);
			for (unsigned p = 0; p < m->nr_profiles; p++)
				all[p] = (uint16_t)(all[p] + free_p[p]);
		}
		for (unsigned p = 0; p < m->nr_profiles; p++)
			plan->served_before[p] = all[p] < want[p] ? all[p] : want[p];
	}
	/* greedy: fix the GPU whose best layout scores best, then the rest */
	for (unsigned round = 0; round < node->nr_gpus; round++) {
		struct kerf_mig_layout best = { .nr = 0 }, l;
		struct score bs = { 0, 0, 0 }, sc;
		int pick = -1;

		for (unsigned g = 0; g < node->nr_gpus; g++) {
			uint16_t resid[KERF_MIG_MAX_PROFILES];

			if (fixed[g])
				continue;
			/*
			 * free instances on the other GPUs not yet fixed serve
			 * what they can where they are: g plans for the rest
			 */
			memcpy(resid, left, sizeof(resid));
			for (unsigned h = 0; h < node->nr_gpus; h++) {
				if (h == g || fixed[h])
					continue;
				count_free(&node->gpus[h], free_p);
				for (unsigned p = 0; p < m->nr_profiles; p++)
					resid[p] = (uint16_t)(resid[p] > free_p[p] ? resid[p] - free_p[p] : 0);
			}
			plan_gpu(m, &node->gpus[g], resid, &l, &sc);
			if (pick < 0 || cmp_score(&sc, &bs) < 0) {
				pick = (int)g;
				best = l;
				bs = sc;
			}
		}
		fixed[pick] = true;
		plan->after[pick] = best;
		plan->headroom_lost += bs.lost;
		count_free(&best, free_p);
		for (unsigned p = 0; p < m->nr_profiles; p++) {
			uint16_t n = free_p[p] < left[p] ? free_p[p] : left[p];

			plan->served[p] = (uint16_t)(plan->served[p] + n);
			left[p] = (uint16_t)(left[p] - n);
		}
	}
	for (unsigned p = 0; p < m->nr_profiles; p++)
		plan->unserved[p] = left[p];
	/* destroys first, then creates: every step stays legal */
	for (unsigned g = 0; g < node->nr_gpus; g++)
		for (unsigned i = 0; i < node->gpus[g].nr; i++) {
			const struct kerf_mig_instance *in = &node->gpus[g].inst[i];

			if (!has_instance(&plan->after[g], in))
				plan->actions[plan->nr_actions++] = (struct kerf_mig_action){
					.kind = KERF_MIG_DESTROY, .gpu = (uint8_t)g,
					.profile = in->profile, .start = in->start };
		}
	for (unsigned g = 0; g < node->nr_gpus; g++)
		for (unsigned i = 0; i < plan->after[g].nr; i++) {
			const struct kerf_mig_instance *in = &plan->after[g].inst[i];

			if (!has_instance(&node->gpus[g], in))
				plan->actions[plan->nr_actions++] = (struct kerf_mig_action){
					.kind = KERF_MIG_CREATE, .gpu = (uint8_t)g,
					.profile = in->profile, .start = in->start };
		}
	return 0;
}

int kerf_mig_apply(struct kerf_mig_node *node, const struct kerf_mig_action *a,
		   struct kerf_err *err)
{
	const struct kerf_mig_model *m = node->model;
	struct kerf_mig_layout *l;
	const char *name;

	if (!m || a->gpu >= node->nr_gpus || a->profile >= m->nr_profiles)
		return kerf_err_set(err, -KERF_EINVAL,
				    "action on gpu %u, profile %u: no such GPU or profile",
				    a->gpu, a->profile);
	l = &node->gpus[a->gpu];
	name = m->profiles[a->profile].name;
	if (a->kind == KERF_MIG_DESTROY) {
		for (unsigned i = 0; i < l->nr; i++) {
			if (l->inst[i].profile != a->profile || l->inst[i].start != a->start)
				continue;
			if (kerf_mig_inst_held(&l->inst[i]))
				return kerf_err_set(err, -KERF_EINVAL,
						    "gpu %u: destroy %s at %u: the instance is in use or out of service",
						    a->gpu, name, a->start);
			memmove(&l->inst[i], &l->inst[i + 1],
				(l->nr - i - 1) * sizeof(l->inst[0]));
			l->nr--;
			return 0;
		}
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu %u: destroy %s at %u: no such instance", a->gpu,
				    name, a->start);
	}
	if (a->kind != KERF_MIG_CREATE)
		return kerf_err_set(err, -KERF_EINVAL, "gpu %u: unknown action %d",
				    a->gpu, (int)a->kind);
	if (!kerf_mig_can_add(m, l, a->profile, a->start))
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu %u: create %s at %u: not legal beside the instances there",
				    a->gpu, name, a->start);
	l->inst[l->nr++] = (struct kerf_mig_instance){ .profile = a->profile,
						       .start = a->start };
	return 0;
}
