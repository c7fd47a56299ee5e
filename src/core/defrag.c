#include "core/defrag.h"

#include <stdlib.h>
#include <string.h>

enum { HOUR_MS = 3600 * 1000, MAX_CANDIDATES = 4096 };

int kerf_defrag_init(struct kerf_defrag *d, size_t nr_pods, size_t nr_nodes,
		     const struct kerf_defrag_budget *budget)
{
	memset(d, 0, sizeof(*d));
	d->budget = *budget;
	if (d->budget.max_moves_per_pod > KERF_DEFRAG_MAX_MOVES ||
	    d->budget.max_moves_per_pod == 0)
		d->budget.max_moves_per_pod = KERF_DEFRAG_MAX_MOVES;
	d->pods = calloc(nr_pods ? nr_pods : 1, sizeof(*d->pods));
	d->head = malloc((nr_nodes ? nr_nodes : 1) * sizeof(*d->head));
	d->only = malloc(nr_nodes ? nr_nodes : 1);
	d->others = malloc(nr_nodes ? nr_nodes : 1);
	if (!d->pods || !d->head || !d->only || !d->others) {
		kerf_defrag_release(d);
		return -KERF_ENOMEM;
	}
	d->nr_pods = nr_pods;
	d->nr_nodes = nr_nodes;
	for (size_t n = 0; n < nr_nodes; n++)
		d->head[n] = KERF_DEFRAG_NONE;
	return 0;
}

void kerf_defrag_release(struct kerf_defrag *d)
{
	free(d->pods);
	free(d->head);
	free(d->only);
	free(d->others);
	memset(d, 0, sizeof(*d));
}

static void link_pod(struct kerf_defrag *d, uint32_t i)
{
	struct kerf_defrag_pod *p = &d->pods[i];

	p->next = d->head[p->b.node];
	d->head[p->b.node] = i;
}

static void unlink_pod(struct kerf_defrag *d, uint32_t i)
{
	uint32_t *at = &d->head[d->pods[i].b.node];

	while (*at != KERF_DEFRAG_NONE && *at != i)
		at = &d->pods[*at].next;
	if (*at == i)
		*at = d->pods[i].next;
}

void kerf_defrag_placed(struct kerf_defrag *d, uint32_t i,
			const struct kerf_pod *req, struct kerf_binding b,
			bool movable, int64_t started_ms)
{
	struct kerf_defrag_pod *p;

	if (i >= d->nr_pods || b.node >= d->nr_nodes)
		return;
	p = &d->pods[i];
	p->req = *req;
	p->b = b;
	p->movable = movable;
	p->placed = true;
	p->started_ms = started_ms;
	link_pod(d, i);
}

/* GPU time a pod loses if it leaves now (since its last checkpoint). */
static int64_t lost_if_moved(const struct kerf_defrag_pod *p, int64_t now_ms,
			     int64_t every_ms)
{
	int64_t ran = now_ms - p->started_ms, since;

	if (ran <= 0)
		return 0;
	since = every_ms > 0 ? ran % every_ms : ran;
	return since * kerf_pod_gpu_milli_total(&p->req);
}

/*
 * Where a movable pod would go if it left now (its best node but the one
 * room is made on is checked when the plan runs); memo per rescue.
 */
struct elsewhere {
	struct kerf_sched *s;
	const struct kerf_cluster *c;
	uint32_t *node;             /* per pod: best node, NONE, or UNKNOWN */
};

#define ELSEWHERE_UNKNOWN (UINT32_MAX - 1)

static uint32_t goes_to(struct elsewhere *e, const struct kerf_defrag *d,
			uint32_t i)
{
	struct kerf_binding b;

	if (e->node[i] == ELSEWHERE_UNKNOWN)
		e->node[i] = kerf_sched_select(e->s, e->c, &d->pods[i].req, &b,
					       NULL) == KERF_FIT
				     ? b.node
				     : KERF_DEFRAG_NONE;
	return e->node[i];
}

/*
 * Could pod i, evicted, land somewhere else?  Anywhere it fits now that is
 * not its own place: another node, or another GPU of the same node (the
 * pod being helped takes the GPUs cleared for it first).
 */
static bool can_move(struct elsewhere *e, const struct kerf_defrag *d,
		     uint32_t i, uint32_t node)
{
	(void)node;
	return goes_to(e, d, i) != KERF_DEFRAG_NONE;
}

struct plan {
	uint32_t node;
	uint32_t rank;              /* the node's place in rank order */
	uint32_t evict[KERF_DEFRAG_MAX_MOVES];
	uint32_t nr;
	int64_t lost;
};

static bool in_plan(const struct plan *pl, uint32_t i)
{
	for (uint32_t k = 0; k < pl->nr; k++)
		if (pl->evict[k] == i)
			return true;
	return false;
}

static bool add_evict(struct plan *pl, uint32_t i, uint32_t max)
{
	if (in_plan(pl, i))
		return true;
	if (pl->nr >= max)
		return false;
	pl->evict[pl->nr++] = i;
	return true;
}

/* Evictions on GPU g that free at least need milli: largest first. */
static bool free_on_gpu(const struct kerf_defrag *d, struct elsewhere *e,
			uint32_t node, int g, int32_t need, struct plan *pl,
			uint32_t max)
{
	while (need > 0) {
		uint32_t best = KERF_DEFRAG_NONE;

		for (uint32_t i = d->head[node]; i != KERF_DEFRAG_NONE; i = d->pods[i].next) {
			const struct kerf_defrag_pod *p = &d->pods[i];

			if (!p->movable || !(p->b.gpus >> g & 1) || in_plan(pl, i) ||
			    !can_move(e, d, i, node))
				continue;
			if (best == KERF_DEFRAG_NONE ||
			    p->req.gpu_milli > d->pods[best].req.gpu_milli)
				best = i;
		}
		if (best == KERF_DEFRAG_NONE || !add_evict(pl, best, max))
			return false;
		need -= d->pods[best].req.gpu_milli;
	}
	return true;
}

/* Can every pod on GPU g move elsewhere?  Count them (-1: no). */
static int gpu_movers(const struct kerf_defrag *d, struct elsewhere *e,
		      uint32_t node, int g)
{
	int n = 0;

	for (uint32_t i = d->head[node]; i != KERF_DEFRAG_NONE; i = d->pods[i].next) {
		if (!(d->pods[i].b.gpus >> g & 1))
			continue;
		if (!d->pods[i].movable || !can_move(e, d, i, node))
			return -1;
		n++;
	}
	return n;
}

/* The fewest evictions on node that would let req fit there. */
static bool plan_node(const struct kerf_defrag *d, struct elsewhere *e,
		      const struct kerf_cluster *c, uint32_t node,
		      const struct kerf_pod *req, struct plan *pl)
{
	const struct kerf_node *n = &c->nodes[node];
	uint32_t max = d->budget.max_moves_per_pod;
	int64_t cpu, mem;

	pl->node = node;
	pl->nr = 0;
	if (n->cordoned)
		return false;
	if (req->nr_gpus > 0) {
		if (n->nr_gpus < req->nr_gpus ||
		    (req->model_mask && !(req->model_mask >> n->model & 1)))
			return false;
		if (kerf_pod_is_fraction(req)) {
			struct plan best = { .nr = UINT32_MAX };

			for (int g = 0; g < n->nr_gpus; g++) {
				struct plan t = { .node = node };

				/* out of service: what moves away stays unusable */
				if (n->gpus_down >> g & 1)
					continue;
				if (!free_on_gpu(d, e, node, g,
						 req->gpu_milli - n->gpu_free_milli[g],
						 &t, max))
					continue;
				if (t.nr < best.nr)
					best = t;
			}
			if (best.nr == UINT32_MAX)
				return false;
			*pl = best;
		} else {
			/* the k GPUs cheapest to clear */
			int cost[KERF_NODE_MAX_GPUS], taken = 0;
			bool used[KERF_NODE_MAX_GPUS] = { false };

			/* out of service: clearing it frees nothing usable */
			for (int g = 0; g < n->nr_gpus; g++)
				cost[g] = n->gpus_down >> g & 1 ? -1
							       : gpu_movers(d, e, node, g);
			while (taken < req->nr_gpus) {
				int pick = -1;

				for (int g = 0; g < n->nr_gpus; g++)
					if (!used[g] && cost[g] >= 0 &&
					    (pick < 0 || cost[g] < cost[pick]))
						pick = g;
				if (pick < 0)
					return false;
				used[pick] = true;
				taken++;
				for (uint32_t i = d->head[node]; i != KERF_DEFRAG_NONE;
				     i = d->pods[i].next)
					if ((d->pods[i].b.gpus >> pick & 1) &&
					    !add_evict(pl, i, max))
						return false;
			}
		}
	}
	/* CPU and memory: evict more movable pods, largest CPU first */
	cpu = n->cpu_free_milli;
	mem = n->mem_free_mib;
	for (uint32_t k = 0; k < pl->nr; k++) {
		cpu += d->pods[pl->evict[k]].req.cpu_milli;
		mem += d->pods[pl->evict[k]].req.mem_mib;
	}
	while (cpu < req->cpu_milli || mem < req->mem_mib) {
		uint32_t best = KERF_DEFRAG_NONE;

		for (uint32_t i = d->head[node]; i != KERF_DEFRAG_NONE; i = d->pods[i].next)
			if (d->pods[i].movable && !in_plan(pl, i) &&
			    can_move(e, d, i, node) &&
			    (best == KERF_DEFRAG_NONE ||
			     d->pods[i].req.cpu_milli > d->pods[best].req.cpu_milli))
				best = i;
		if (best == KERF_DEFRAG_NONE || !add_evict(pl, best, max))
			return false;
		cpu += d->pods[best].req.cpu_milli;
		mem += d->pods[best].req.mem_mib;
	}
	return pl->nr > 0;
}

static int cmp_plans(const struct plan *a, const struct plan *b)
{
	if (a->nr != b->nr)
		return a->nr < b->nr ? -1 : 1;
	if (a->lost != b->lost)
		return a->lost < b->lost ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Carry out pl: true with req bound at *b and the evicted pods moved. */
static bool execute(struct kerf_defrag *d, struct kerf_sched *s,
		    struct kerf_cluster *c, const struct plan *pl,
		    const struct kerf_pod *req, struct kerf_binding *b,
		    struct kerf_binding *moved_to)
{
	uint32_t k, placed = 0;
	bool ok = true;

	for (k = 0; k < pl->nr; k++) {
		const struct kerf_defrag_pod *p = &d->pods[pl->evict[k]];

		kerf_sched_unreserve(s, c, &p->req, p->b, NULL);
	}
	memset(d->only, 0, c->nr_slots);
	d->only[pl->node] = 1;
	if (kerf_sched_select_in(s, c, req, d->only, b, NULL) != KERF_FIT ||
	    kerf_sched_reserve(s, c, req, *b, NULL) < 0) {
		ok = false;
		goto undo_evictions;
	}
	for (placed = 0; placed < pl->nr; placed++) {
		const struct kerf_defrag_pod *p = &d->pods[pl->evict[placed]];

		if (kerf_sched_select(s, c, &p->req, &moved_to[placed], NULL) !=
			    KERF_FIT ||
		    kerf_sched_reserve(s, c, &p->req, moved_to[placed], NULL) < 0)
			break;
	}
	if (placed == pl->nr)
		return true;
	/* some evicted pod fits nowhere: put everything back as it was */
	while (placed-- > 0)
		kerf_sched_unreserve(s, c, &d->pods[pl->evict[placed]].req,
				     moved_to[placed], NULL);
	kerf_sched_unreserve(s, c, req, *b, NULL);
	ok = false;
undo_evictions:
	for (k = 0; k < pl->nr; k++) {
		const struct kerf_defrag_pod *p = &d->pods[pl->evict[k]];

		kerf_sched_reserve(s, c, &p->req, p->b, NULL);
	}
	return ok;
}

/* The only pod on GPU g of node, or NONE (no pod, or several). */
static uint32_t lone_pod(const struct kerf_defrag *d, uint32_t node, int g)
{
	uint32_t found = KERF_DEFRAG_NONE;

	for (uint32_t i = d->head[node]; i != KERF_DEFRAG_NONE; i = d->pods[i].next) {
		if (!(d->pods[i].b.gpus >> g & 1))
			continue;
		if (found != KERF_DEFRAG_NONE)
			return KERF_DEFRAG_NONE;
		found = i;
	}
	return found;
}

/* The partly used GPU (not node/g) where p fits with least room left. */
static bool best_partial(const struct kerf_cluster *c, const struct kerf_pod *p,
			 uint32_t node, int g, struct kerf_binding *to)
{
	int32_t best_left = KERF_GPU_MILLI;
	bool found = false;

	for (size_t r = 0; r < c->nr_nodes; r++) {
		uint32_t m = c->order[r];
		const struct kerf_node *n = &c->nodes[m];

		if (n->cordoned || (p->model_mask && !(p->model_mask >> n->model & 1)) ||
		    n->cpu_free_milli < p->cpu_milli || n->mem_free_mib < p->mem_mib ||
		    n->gpu_free_milli_sum == n->nr_gpus * KERF_GPU_MILLI)
			continue;
		for (int h = 0; h < n->nr_gpus; h++) {
			int32_t f = n->gpu_free_milli[h];

			if ((m == node && h == g) || f == KERF_GPU_MILLI ||
			    !kerf_gpu_fits(n, h, p) || f - p->gpu_milli >= best_left)
				continue;
			best_left = f - p->gpu_milli;
			*to = (struct kerf_binding){ .node = m, .gpus = (uint16_t)(1u << h) };
			found = true;
		}
	}
	return found;
}

uint32_t kerf_defrag_consolidate(struct kerf_defrag *d, struct kerf_sched *s,
				 struct kerf_cluster *c, int64_t now_ms,
				 int64_t checkpoint_every_ms, uint32_t max_moves)
{
	uint32_t moves = 0;

	if (c->nr_slots != d->nr_nodes)
		return 0;
	if (now_ms - d->window_start_ms >= HOUR_MS) {
		d->window_start_ms = now_ms - (now_ms - d->window_start_ms) % HOUR_MS;
		d->window_moves = 0;
		d->window_lost = 0;
	}
	for (size_t r = 0; r < c->nr_nodes && moves < max_moves; r++) {
		uint32_t node = c->order[r];
		const struct kerf_node *n = &c->nodes[node];

		for (int g = 0; g < n->nr_gpus && moves < max_moves; g++) {
			uint32_t i = lone_pod(d, node, g);
			struct kerf_defrag_pod *p;
			struct kerf_binding to;
			int64_t lost;

			/* out of service: emptying it frees nothing usable */
			if (i == KERF_DEFRAG_NONE || (n->gpus_down >> g & 1))
				continue;
			p = &d->pods[i];
			if (!p->movable || !kerf_pod_is_fraction(&p->req) ||
			    !best_partial(c, &p->req, node, g, &to))
				continue;
			lost = lost_if_moved(p, now_ms, checkpoint_every_ms);
			if (d->window_moves + 1 > d->budget.max_moves_per_hour ||
			    d->window_lost + lost > d->budget.max_lost_milli_ms_per_hour)
				return moves;
			if (kerf_sched_unreserve(s, c, &p->req, p->b, NULL) < 0)
				continue;
			if (kerf_sched_reserve(s, c, &p->req, to, NULL) < 0) {
				kerf_sched_reserve(s, c, &p->req, p->b, NULL);
				continue;
			}
			unlink_pod(d, i);
			p->b = to;
			p->started_ms = now_ms;
			link_pod(d, i);
			d->window_moves++;
			d->window_lost += lost;
			d->stats.moves++;
			d->stats.lost_milli_ms += lost;
			moves++;
		}
	}
	return moves;
}

bool kerf_defrag_rescue(struct kerf_defrag *d, struct kerf_sched *s,
			struct kerf_cluster *c, uint32_t i,
			const struct kerf_pod *req, int64_t now_ms,
			int64_t checkpoint_every_ms, struct kerf_binding *b)
{
	struct elsewhere where = { .s = s, .c = c };
	struct plan *cand;
	size_t nr = 0;
	bool ok = false;

	if (i >= d->nr_pods || c->nr_slots != d->nr_nodes)
		return false;
	d->stats.attempts++;
	if (now_ms - d->window_start_ms >= HOUR_MS) {
		d->window_start_ms = now_ms - (now_ms - d->window_start_ms) % HOUR_MS;
		d->window_moves = 0;
		d->window_lost = 0;
	}
	cand = malloc(MAX_CANDIDATES * sizeof(*cand));
	where.node = malloc(d->nr_pods * sizeof(*where.node));
	if (!cand || !where.node) {
		free(cand);
		free(where.node);
		return false;
	}
	for (size_t k = 0; k < d->nr_pods; k++)
		where.node[k] = ELSEWHERE_UNKNOWN;
	for (size_t r = 0; r < c->nr_nodes && nr < MAX_CANDIDATES; r++) {
		uint32_t node = c->order[r];
		struct plan *pl = &cand[nr];

		if (!plan_node(d, &where, c, node, req, pl))
			continue;
		pl->rank = (uint32_t)r;
		pl->lost = 0;
		for (uint32_t k = 0; k < pl->nr; k++)
			pl->lost += lost_if_moved(&d->pods[pl->evict[k]], now_ms,
						  checkpoint_every_ms);
		nr++;
	}
	if (nr == 0)
		d->stats.no_candidate++;
	/* cheapest first: a partial selection sort over the few tried */
	for (size_t t = 0; t < nr && t < d->budget.max_nodes && !ok; t++) {
		struct kerf_binding moved_to[KERF_DEFRAG_MAX_MOVES];
		size_t best = t;

		for (size_t j = t + 1; j < nr; j++)
			if (cmp_plans(&cand[j], &cand[best]) < 0)
				best = j;
		if (best != t) {
			struct plan tmp = cand[t];

			cand[t] = cand[best];
			cand[best] = tmp;
		}
		if (d->window_moves + cand[t].nr > d->budget.max_moves_per_hour ||
		    d->window_lost + cand[t].lost > d->budget.max_lost_milli_ms_per_hour) {
			d->stats.over_budget++;
			break;  /* the rest cost more */
		}
		if (!execute(d, s, c, &cand[t], req, b, moved_to)) {
			d->stats.tries_failed++;
			continue;
		}
		/* record the moves: each restarts where it landed */
		for (uint32_t k = 0; k < cand[t].nr; k++) {
			uint32_t e = cand[t].evict[k];

			unlink_pod(d, e);
			d->pods[e].b = moved_to[k];
			d->pods[e].started_ms = now_ms;
			link_pod(d, e);
		}
		d->window_moves += cand[t].nr;
		d->window_lost += cand[t].lost;
		d->stats.rescued++;
		d->stats.moves += cand[t].nr;
		d->stats.lost_milli_ms += cand[t].lost;
		ok = true;
	}
	free(cand);
	free(where.node);
	return ok;
}
