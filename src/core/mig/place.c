#include "core/mig/place.h"

#include <string.h>

#include "core/mig/planner.h"

void kerf_mig_in_use(const struct kerf_mig_layout *l,
		     struct kerf_mig_layout *out)
{
	out->nr = 0;
	for (unsigned i = 0; i < l->nr; i++)
		if (kerf_mig_inst_held(&l->inst[i]))
			out->inst[out->nr++] = l->inst[i];
}

static void drop(struct kerf_mig_layout *l, unsigned i)
{
	memmove(&l->inst[i], &l->inst[i + 1],
		(size_t)(l->nr - i - 1) * sizeof(l->inst[0]));
	l->nr--;
}

/* Index of the free instance (pi, start) in l, or -1. */
static int find_free(const struct kerf_mig_layout *l, unsigned pi,
		     unsigned start)
{
	for (unsigned i = 0; i < l->nr; i++)
		if (!kerf_mig_inst_held(&l->inst[i]) && l->inst[i].profile == pi &&
		    l->inst[i].start == start)
			return (int)i;
	return -1;
}

/*
 * Index of the instance (pi, start) of l out of service with no pod on it,
 * or -1: only a pod already running there is bound to it (adopted), since
 * placement never picks a held instance's place.
 */
static int find_down_idle(const struct kerf_mig_layout *l, unsigned pi,
			  unsigned start)
{
	for (unsigned i = 0; i < l->nr; i++)
		if (l->inst[i].down && !l->inst[i].in_use &&
		    l->inst[i].profile == pi && l->inst[i].start == start)
			return (int)i;
	return -1;
}

/*
 * Destroy free instances of l until (pi, start) can be added: first those
 * overlapping it, then, while an instance count or the compute slices
 * still forbid it, the free one with the most compute slices (lowest
 * index on ties).  The number destroyed, or -1 when even with every free
 * instance gone it cannot be added.
 */
static int clear_way(const struct kerf_mig_model *m, struct kerf_mig_layout *l,
		     unsigned pi, unsigned start)
{
	uint32_t span = kerf_mig_span(&m->profiles[pi], start);
	int nr = 0;

	for (unsigned i = l->nr; i-- > 0;) {
		const struct kerf_mig_instance *in = &l->inst[i];

		if (!kerf_mig_inst_held(in) &&
		    (kerf_mig_span(&m->profiles[in->profile], in->start) & span)) {
			drop(l, i);
			nr++;
		}
	}
	while (!kerf_mig_can_add(m, l, pi, start)) {
		int big = -1;

		for (unsigned i = 0; i < l->nr; i++)
			if (!kerf_mig_inst_held(&l->inst[i]) &&
			    (big < 0 || m->profiles[l->inst[i].profile].compute_slices >
						m->profiles[l->inst[big].profile].compute_slices))
				big = (int)i;
		if (big < 0)
			return -1;
		drop(l, (unsigned)big);
		nr++;
	}
	return nr;
}

/* The score orders compute left, headroom lost, actions; then GPU, start. */
static bool better(const struct kerf_mig_pick *a, const struct kerf_mig_pick *b)
{
	int32_t sa, sb;

	if (b->gpu < 0)
		return true;
	sa = kerf_mig_pick_score(a);
	sb = kerf_mig_pick_score(b);
	if (sa != sb)
		return sa > sb;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu;
	return a->start < b->start;
}

bool kerf_mig_pick_place(const struct kerf_mig_model *m,
			 const struct kerf_node_mig *nm, uint16_t mask,
			 unsigned pi, int32_t milli, struct kerf_mig_pick *out)
{
	const struct kerf_mig_profile *pr;

	*out = (struct kerf_mig_pick){ .gpu = -1 };
	if (!m || pi >= m->nr_profiles)
		return false;
	pr = &m->profiles[pi];
	for (int g = 0; g < KERF_MIG_NODE_GPUS; g++) {
		const struct kerf_mig_layout *l = &nm->gpu[g];
		struct kerf_mig_layout used;
		int32_t h0 = -1;
		int left;

		if (!(mask >> g & 1) || nm->free_milli[g] < milli)
			continue;
		kerf_mig_in_use(l, &used);
		left = m->compute_slices - pr->compute_slices;
		for (unsigned k = 0; k < used.nr; k++)
			left -= m->profiles[used.inst[k].profile].compute_slices;
		for (unsigned s = 0; s < m->mem_slices; s++) {
			struct kerf_mig_pick c = { .gpu = (int8_t)g,
						   .start = (uint8_t)s,
						   .profile = (uint8_t)pi,
						   .compute_left = (uint8_t)(left < 0 ? 0 : left) };

			if (!kerf_mig_can_add(m, &used, pi, s))
				continue;
			if (find_free(l, pi, s) >= 0) {
				c.reuse = true;
			} else {
				struct kerf_mig_layout t = *l;
				int d = clear_way(m, &t, pi, s);

				if (d < 0)
					continue;   /* cannot happen: used leaves room */
				c.nr_destroys = (uint8_t)d;
			}
			if (h0 < 0)
				h0 = kerf_mig_headroom(m, &used);
			used.inst[used.nr] = (struct kerf_mig_instance){
				.profile = (uint8_t)pi, .start = (uint8_t)s };
			used.nr++;
			c.headroom_lost = h0 - kerf_mig_headroom(m, &used);
			used.nr--;
			if (better(&c, out))
				*out = c;
		}
	}
	return out->gpu >= 0;
}

bool kerf_mig_can_host(const struct kerf_mig_model *m,
		       const struct kerf_node_mig *nm, uint16_t mask,
		       unsigned pi, int32_t milli)
{
	if (!m || pi >= m->nr_profiles)
		return false;
	for (int g = 0; g < KERF_MIG_NODE_GPUS; g++) {
		struct kerf_mig_layout used;

		if (!(mask >> g & 1) || nm->free_milli[g] < milli)
			continue;
		kerf_mig_in_use(&nm->gpu[g], &used);
		for (unsigned s = 0; s < m->mem_slices; s++)
			if (kerf_mig_can_add(m, &used, pi, s))
				return true;
	}
	return false;
}

int32_t kerf_mig_pick_score(const struct kerf_mig_pick *pk)
{
	int32_t actions = pk->reuse ? 0 : 1 + pk->nr_destroys;

	/*
	 * Lexicographic in one integer: compute left is at most 7, headroom
	 * lost under 64 in magnitude, actions at most 9.
	 */
	return -(pk->compute_left * 1024 + pk->headroom_lost * 16 + actions);
}

int kerf_mig_take(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		  int g, unsigned pi, unsigned start, int32_t milli,
		  struct kerf_err *err)
{
	struct kerf_mig_layout t;
	int i, d = 0;

	if (!m || pi >= m->nr_profiles || g < 0 || g >= KERF_MIG_NODE_GPUS)
		return kerf_err_set(err, -KERF_ERANGE, "MIG: no such profile or GPU");
	if (nm->free_milli[g] < milli)
		return kerf_err_set(err, -KERF_ERANGE,
				    "MIG GPU %d: %d milli free, the instance is charged %d",
				    g, nm->free_milli[g], milli);
	t = nm->gpu[g];
	i = find_free(&t, pi, start);
	if (i < 0)
		i = find_down_idle(&t, pi, start);
	if (i >= 0) {
		t.inst[i].in_use = true;
	} else {
		d = clear_way(m, &t, pi, start);
		if (d < 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "MIG GPU %d: no room for %s at slice %u beside the instances in use",
					    g, m->profiles[pi].name, start);
		t.inst[t.nr++] = (struct kerf_mig_instance){
			.profile = (uint8_t)pi, .start = (uint8_t)start, .in_use = true };
		nm->nr_created++;
		nm->nr_destroyed += (uint32_t)d;
	}
	nm->gpu[g] = t;
	nm->free_milli[g] = (int16_t)(nm->free_milli[g] - milli);
	return 0;
}

int kerf_mig_give(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		  int g, unsigned pi, unsigned start, int32_t milli,
		  struct kerf_err *err)
{
	struct kerf_mig_layout *l;

	if (!m || g < 0 || g >= KERF_MIG_NODE_GPUS)
		return kerf_err_set(err, -KERF_ERANGE, "MIG: no such GPU");
	l = &nm->gpu[g];
	for (unsigned i = 0; i < l->nr; i++)
		if (l->inst[i].in_use && l->inst[i].profile == pi &&
		    l->inst[i].start == start) {
			if (nm->free_milli[g] + milli > 1000)
				break;
			l->inst[i].in_use = false;
			nm->free_milli[g] = (int16_t)(nm->free_milli[g] + milli);
			return 0;
		}
	return kerf_err_set(err, -KERF_ERANGE,
			    "MIG GPU %d: no %s at slice %u in use", g,
			    pi < m->nr_profiles ? m->profiles[pi].name : "?", start);
}

/* Drop the free instances of l overlapping (pi, start) and add it, down. */
static int add_down(const struct kerf_mig_model *m, struct kerf_mig_layout *l,
		    unsigned pi, unsigned start)
{
	struct kerf_mig_layout t = *l;

	if (clear_way(m, &t, pi, start) < 0)
		return -KERF_EBUSY;
	t.inst[t.nr++] = (struct kerf_mig_instance){
		.profile = (uint8_t)pi, .start = (uint8_t)start, .down = true };
	*l = t;
	return 0;
}

int kerf_mig_mark_down(const struct kerf_mig_model *m, struct kerf_node_mig *nm,
		       int g, const struct kerf_mig_layout *down)
{
	struct kerf_mig_layout l = nm->gpu[g], told = nm->told[g];

	for (unsigned k = 0; k < l.nr; k++)
		l.inst[k].down = false;
	for (unsigned d = 0; down && d < down->nr; d++) {
		unsigned pi = down->inst[d].profile, start = down->inst[d].start;
		bool found = false;

		if (!m || pi >= m->nr_profiles)
			return -KERF_EINVAL;
		for (unsigned k = 0; k < l.nr; k++)
			if (l.inst[k].profile == pi && l.inst[k].start == start) {
				l.inst[k].down = true;
				found = true;
			}
		if (found)
			continue;
		/* the node has it: the core's free instances in its way are gone */
		if (add_down(m, &l, pi, start) < 0)
			return -KERF_EBUSY;
		for (unsigned k = 0; k < told.nr; k++)
			told.inst[k].in_use = false;
		if (add_down(m, &told, pi, start) < 0)
			return -KERF_EBUSY;
	}
	for (unsigned k = 0; k < told.nr; k++)
		told.inst[k].down = false;
	nm->gpu[g] = l;
	nm->told[g] = told;
	return 0;
}
