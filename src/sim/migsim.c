#include "sim/migsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "base/rng.h"
#include "core/mig/planner.h"
#include "sim/event_queue.h"

enum { MIN_MS = 60 * 1000, HOUR_MS = 3600 * 1000 };

/* Instance shapes a request may ask for, by compute and memory slices. */
enum shape { S1G, S1G2M, S2G, S3G, S4G, S7G, NR_SHAPES };

static const struct {
	uint8_t compute, mem;
} shape_dims[NR_SHAPES] = {
	{ 1, 1 }, { 1, 2 }, { 2, 2 }, { 3, 4 }, { 4, 4 }, { 7, 8 },
};

/* The demand mix: per kind, its share of requests, mean duration and the
 * share of each shape. */
static const struct {
	double share;
	int64_t mean_ms;
	double shape[NR_SHAPES];
} mix[KERF_MIGSIM_NR_KINDS] = {
	[KERF_MIGSIM_INFERENCE] = { 0.55, 90 * MIN_MS,
				    { 0.30, 0.10, 0.25, 0.25, 0.05, 0.05 } },
	[KERF_MIGSIM_NOTEBOOK] = { 0.25, 180 * MIN_MS, { 0.70, 0, 0.30, 0, 0, 0 } },
	[KERF_MIGSIM_TRAINING] = { 0.20, 240 * MIN_MS, { 0, 0, 0, 0, 0.30, 0.70 } },
};

static const char *const policy_names[KERF_MIGSIM_NR_POLICIES] = {
	"static all-1g", "static all-2g", "static all-3g", "static all-7g",
	"static balanced", "static matched", "kerf dynamic",
};

static const char *const kind_names[KERF_MIGSIM_NR_KINDS] = {
	"inference", "notebook", "training",
};

const char *kerf_migsim_policy_name(enum kerf_migsim_policy p)
{
	return p < KERF_MIGSIM_NR_POLICIES ? policy_names[p] : "?";
}

const char *kerf_migsim_kind_name(enum kerf_migsim_kind k)
{
	return k < KERF_MIGSIM_NR_KINDS ? kind_names[k] : "?";
}

void kerf_migsim_defaults(struct kerf_migsim_opts *o)
{
	*o = (struct kerf_migsim_opts){ .model = "H100-80GB", .nodes = 4,
					.gpus_per_node = 8, .hours = 24,
					.load_pct = 90, .seed = 1 };
}

struct request {
	int64_t arrive_ms;
	int64_t dur_ms;
	uint8_t profile;
	uint8_t kind;
	bool started;
	int64_t start_ms;
	uint32_t node;
	uint8_t gpu, start;
};

struct run {
	const struct kerf_mig_model *m;
	int prof_of[NR_SHAPES];     /* the model's profile for a shape (remapped up) */
	struct kerf_mig_node *nodes;
	uint32_t nr_nodes;
	struct request *req;
	uint32_t nr_req;
	uint32_t *pending;          /* request ids, arrival order */
	uint32_t nr_pending;
	struct kerf_migsim_result *out;
};

/* The model's profile (no media extension) with these slices, or -1. */
static int profile_with(const struct kerf_mig_model *m, unsigned compute, unsigned mem)
{
	for (unsigned p = 0; p < m->nr_profiles; p++)
		if (!m->profiles[p].media_ext && m->profiles[p].compute_slices == compute &&
		    m->profiles[p].mem_slices == mem)
			return (int)p;
	return -1;
}

static void map_shapes(struct run *r)
{
	for (int s = NR_SHAPES - 1; s >= 0; s--) {
		r->prof_of[s] = profile_with(r->m, shape_dims[s].compute, shape_dims[s].mem);
		/* a shape the model lacks asks for the next larger one */
		if (r->prof_of[s] < 0 && s + 1 < NR_SHAPES)
			r->prof_of[s] = r->prof_of[s + 1];
	}
	if (r->prof_of[S7G] < 0) /* A30: the whole GPU is a 4g */
		for (int s = NR_SHAPES - 1; s >= 0; s--)
			if (r->prof_of[s] < 0)
				r->prof_of[s] = profile_with(r->m, r->m->compute_slices,
							     r->m->mem_slices);
}

static double expo(struct kerf_rng *g, double mean)
{
	double u = ((double)(kerf_rng_next(g) >> 11) + 0.5) / 9007199254740992.0;

	return -log(u) * mean;
}

static double unit(struct kerf_rng *g)
{
	return (double)(kerf_rng_next(g) >> 11) / 9007199254740992.0;
}

/* Expected compute slices of the shapes of kind k, and its share of slice time. */
static double kind_slices(const struct run *r, unsigned k)
{
	double e = 0;

	for (unsigned s = 0; s < NR_SHAPES; s++)
		e += mix[k].shape[s] * r->m->profiles[r->prof_of[s]].compute_slices;
	return e;
}

static int generate(struct run *r, const struct kerf_migsim_opts *o, struct kerf_err *err)
{
	struct kerf_rng g;
	double slice_ms = 0, rate_per_ms, t = 0;
	int64_t horizon = (int64_t)o->hours * HOUR_MS;
	double capacity = (double)r->nr_nodes * o->gpus_per_node * r->m->compute_slices;
	size_t alloc = 1024;

	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++)
		slice_ms += mix[k].share * (double)mix[k].mean_ms * kind_slices(r, k);
	rate_per_ms = (double)o->load_pct / 100.0 * capacity / slice_ms;
	kerf_rng_seed(&g, o->seed);
	r->req = malloc(alloc * sizeof(*r->req));
	if (!r->req)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (;;) {
		struct request q = { 0 };
		double u;
		unsigned k = 0, s = 0;

		t += expo(&g, 1.0 / rate_per_ms);
		if (t >= (double)horizon)
			break;
		u = unit(&g);
		while (k + 1 < KERF_MIGSIM_NR_KINDS && u >= mix[k].share) {
			u -= mix[k].share;
			k++;
		}
		u = unit(&g);
		while (s + 1 < NR_SHAPES && u >= mix[k].shape[s]) {
			u -= mix[k].shape[s];
			s++;
		}
		q.arrive_ms = (int64_t)t;
		q.dur_ms = (int64_t)expo(&g, (double)mix[k].mean_ms);
		if (q.dur_ms < MIN_MS)
			q.dur_ms = MIN_MS;
		q.kind = (uint8_t)k;
		q.profile = (uint8_t)r->prof_of[s];
		if (KERF_GROW(r->req, alloc, r->nr_req + 1) < 0)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		r->req[r->nr_req++] = q;
	}
	return 0;
}

/* Carve instances of profile p on GPU l wherever they fit, up to n. */
static unsigned carve(const struct kerf_mig_model *m, struct kerf_mig_layout *l,
		      int p, unsigned n)
{
	unsigned done = 0;

	for (unsigned s = 0; s < m->mem_slices && done < n; s++)
		if (p >= 0 && kerf_mig_can_add(m, l, (unsigned)p, s)) {
			l->inst[l->nr++] = (struct kerf_mig_instance){
				.profile = (uint8_t)p, .start = (uint8_t)s };
			done++;
		}
	return done;
}

static void static_layout(struct run *r, const struct kerf_migsim_opts *o,
			  enum kerf_migsim_policy pol)
{
	const struct kerf_mig_model *m = r->m;
	uint32_t nr_gpus = r->nr_nodes * o->gpus_per_node;
	double want[NR_SHAPES] = { 0 };
	int target[NR_SHAPES] = { 0 };

	if (pol == KERF_MIGSIM_MATCHED) {
		/* instances per shape in proportion to the expected slice time */
		double total = 0, cap = (double)nr_gpus * m->compute_slices;

		for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS; k++)
			for (unsigned s = 0; s < NR_SHAPES; s++)
				want[s] += mix[k].share * (double)mix[k].mean_ms *
					   mix[k].shape[s] *
					   m->profiles[r->prof_of[s]].compute_slices;
		for (unsigned s = 0; s < NR_SHAPES; s++)
			total += want[s];
		for (unsigned s = 0; s < NR_SHAPES; s++)
			target[s] = (int)floor(want[s] / total * cap /
					       m->profiles[r->prof_of[s]].compute_slices + 0.5);
	}
	for (uint32_t i = 0; i < nr_gpus; i++) {
		struct kerf_mig_layout *l =
			&r->nodes[i / o->gpus_per_node].gpus[i % o->gpus_per_node];

		switch (pol) {
		case KERF_MIGSIM_ALL_1G: carve(m, l, r->prof_of[S1G], 8); break;
		case KERF_MIGSIM_ALL_2G: carve(m, l, r->prof_of[S2G], 8); break;
		case KERF_MIGSIM_ALL_3G: carve(m, l, r->prof_of[S3G], 8); break;
		case KERF_MIGSIM_ALL_7G: carve(m, l, r->prof_of[S7G], 1); break;
		case KERF_MIGSIM_BALANCED:
			carve(m, l, r->prof_of[S3G], 1);
			carve(m, l, r->prof_of[S2G], 1);
			carve(m, l, r->prof_of[S1G], 2);
			break;
		default:
			break;
		}
	}
	if (pol != KERF_MIGSIM_MATCHED)
		return;
	/* largest first, first fit over the GPUs; holes left take 1g */
	for (int s = NR_SHAPES - 1; s >= 0; s--)
		for (uint32_t i = 0; i < nr_gpus && target[s] > 0; i++)
			target[s] -= (int)carve(m, &r->nodes[i / o->gpus_per_node]
							.gpus[i % o->gpus_per_node],
						r->prof_of[s], (unsigned)target[s]);
	for (uint32_t i = 0; i < nr_gpus; i++)
		carve(m, &r->nodes[i / o->gpus_per_node].gpus[i % o->gpus_per_node],
		      r->prof_of[S1G], 8);
}

/* Start every waiting request that a free instance of its profile takes. */
static int start_waiting(struct run *r, int64_t now, struct kerf_event_queue *q)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < r->nr_pending; i++) {
		struct request *rq = &r->req[r->pending[i]];
		bool placed = false;

		for (uint32_t n = 0; n < r->nr_nodes && !placed; n++)
			for (unsigned g = 0; g < r->nodes[n].nr_gpus && !placed; g++) {
				struct kerf_mig_layout *l = &r->nodes[n].gpus[g];

				for (unsigned k = 0; k < l->nr && !placed; k++) {
					if (l->inst[k].in_use || l->inst[k].profile != rq->profile)
						continue;
					l->inst[k].in_use = true;
					rq->started = true;
					rq->start_ms = now;
					rq->node = n;
					rq->gpu = (uint8_t)g;
					rq->start = l->inst[k].start;
					placed = true;
				}
			}
		if (!placed) {
			r->pending[kept++] = r->pending[i];
			continue;
		}
		if (kerf_evq_push(q, (struct kerf_event){ .at_ms = now + rq->dur_ms,
							  .kind = KERF_EV_FINISH,
							  .a = r->pending[i] }) < 0)
			return -KERF_ENOMEM;
	}
	r->nr_pending = kept;
	return 0;
}

static void plan_all(struct run *r, struct kerf_err *err)
{
	uint16_t want[KERF_MIG_MAX_PROFILES] = { 0 };
	bool any = false;

	for (uint32_t i = 0; i < r->nr_pending; i++) {
		uint8_t p = r->req[r->pending[i]].profile;

		if (want[p] < UINT16_MAX)
			want[p]++;
		any = true;
	}
	for (uint32_t n = 0; n < r->nr_nodes && any; n++) {
		struct kerf_mig_plan pl;

		if (kerf_mig_plan_node(&r->nodes[n], want, &pl, err) < 0) {
			r->out->apply_refused++;
			continue;
		}
		for (size_t a = 0; a < pl.nr_actions; a++) {
			if (kerf_mig_apply(&r->nodes[n], &pl.actions[a], err) < 0) {
				r->out->apply_refused++;
				break;
			}
			r->out->reconfig_actions++;
		}
		any = false;
		for (unsigned p = 0; p < r->m->nr_profiles; p++) {
			want[p] = pl.unserved[p];
			any |= want[p] > 0;
		}
	}
}

/* Is every running request still on an instance in use? */
static void check_running(struct run *r, int64_t now)
{
	for (uint32_t i = 0; i < r->nr_req; i++) {
		const struct request *rq = &r->req[i];
		const struct kerf_mig_layout *l;
		bool ok = false;

		if (!rq->started || rq->start_ms + rq->dur_ms <= now)
			continue;
		l = &r->nodes[rq->node].gpus[rq->gpu];
		for (unsigned k = 0; k < l->nr && !ok; k++)
			ok = l->inst[k].start == rq->start && l->inst[k].profile == rq->profile &&
			     l->inst[k].in_use;
		if (!ok)
			r->out->disturbed++;
	}
}

static uint32_t used_slices(const struct run *r)
{
	uint32_t u = 0;

	for (uint32_t n = 0; n < r->nr_nodes; n++)
		for (unsigned g = 0; g < r->nodes[n].nr_gpus; g++)
			for (unsigned k = 0; k < r->nodes[n].gpus[g].nr; k++)
				if (r->nodes[n].gpus[g].inst[k].in_use)
					u += r->m->profiles[r->nodes[n].gpus[g].inst[k].profile]
						     .compute_slices;
	return u;
}

static void finish(struct run *r, uint32_t id)
{
	const struct request *rq = &r->req[id];
	struct kerf_mig_layout *l = &r->nodes[rq->node].gpus[rq->gpu];

	for (unsigned k = 0; k < l->nr; k++)
		if (l->inst[k].start == rq->start && l->inst[k].profile == rq->profile)
			l->inst[k].in_use = false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pctl(double *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)ceil(q * (double)n);
	return v[i ? i - 1 : 0];
}

static void summarise(struct run *r, int64_t horizon)
{
	struct kerf_migsim_result *out = r->out;
	double *w = malloc((r->nr_req ? r->nr_req : 1) * sizeof(*w));

	for (unsigned k = 0; k < KERF_MIGSIM_NR_KINDS && w; k++) {
		size_t n = 0;

		for (uint32_t i = 0; i < r->nr_req; i++) {
			const struct request *rq = &r->req[i];

			if (rq->kind != k)
				continue;
			out->requests_by_kind[k]++;
			out->started_by_kind[k] += rq->started;
			w[n++] = (double)((rq->started ? rq->start_ms : horizon) - rq->arrive_ms) /
				 1000.0;
		}
		out->wait_p50_s[k] = pctl(w, n, 0.50);
		out->wait_p99_s[k] = pctl(w, n, 0.99);
	}
	free(w);
	out->requests = r->nr_req;
	for (uint32_t i = 0; i < r->nr_req; i++) {
		const struct request *rq = &r->req[i];
		int64_t end = rq->start_ms + rq->dur_ms;

		if (!rq->started)
			continue;
		out->started++;
		if (end > horizon)
			end = horizon;
		out->gpu_hours_by_kind[rq->kind] += (double)kerf_mig_gpu_milli(r->m, rq->profile) *
						    (double)(end - rq->start_ms) /
						    (1000.0 * HOUR_MS);
	}
	out->waiting_end = r->nr_pending;
}

int kerf_migsim_run(const struct kerf_migsim_opts *o, enum kerf_migsim_policy policy,
		    struct kerf_migsim_result *out, struct kerf_err *err)
{
	struct run r = { .out = out };
	struct kerf_event_queue q;
	int64_t horizon, now = 0;
	uint32_t next = 0;
	double slice_ms = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->policy = kerf_migsim_policy_name(policy);
	r.m = kerf_mig_model_find(o->model);
	if (!r.m) {
		char shown[64];

		return kerf_err_set(err, -KERF_EINVAL, "model '%s': no MIG table",
				    kerf_escape(shown, sizeof(shown), o->model));
	}
	if (policy >= KERF_MIGSIM_NR_POLICIES)
		return kerf_err_set(err, -KERF_EINVAL, "policy %d: unknown", (int)policy);
	if (o->nodes == 0 || o->nodes > 4096 || o->gpus_per_node == 0 ||
	    o->gpus_per_node > KERF_MIG_MAX_GPUS || o->hours == 0 || o->hours > 24 * 365 ||
	    o->load_pct == 0 || o->load_pct > 1000)
		return kerf_err_set(err, -KERF_EINVAL,
				    "nodes 1..4096, gpus per node 1..%d, hours 1..8760, load 1..1000%%",
				    KERF_MIG_MAX_GPUS);
	map_shapes(&r);
	r.nr_nodes = o->nodes;
	r.nodes = calloc(o->nodes, sizeof(*r.nodes));
	if (!r.nodes)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (uint32_t n = 0; n < o->nodes; n++) {
		r.nodes[n].model = r.m;
		r.nodes[n].nr_gpus = (uint8_t)o->gpus_per_node;
	}
	kerf_evq_init(&q);
	rc = generate(&r, o, err);
	if (rc < 0)
		goto out;
	r.pending = malloc((r.nr_req ? r.nr_req : 1) * sizeof(*r.pending));
	if (!r.pending) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	if (policy != KERF_MIGSIM_DYNAMIC)
		static_layout(&r, o, policy);
	horizon = (int64_t)o->hours * HOUR_MS;
	for (;;) {
		struct kerf_event e;
		int64_t t = next < r.nr_req ? r.req[next].arrive_ms : horizon;

		if (q.nr && q.ev[0].at_ms < t)
			t = q.ev[0].at_ms;
		if (t >= horizon)
			t = horizon;
		slice_ms += (double)used_slices(&r) * (double)(t - now);
		now = t;
		if (now >= horizon)
			break;
		while (q.nr && q.ev[0].at_ms == now && kerf_evq_pop(&q, &e) > 0)
			finish(&r, e.a);
		while (next < r.nr_req && r.req[next].arrive_ms == now)
			r.pending[r.nr_pending++] = next++;
		if (policy == KERF_MIGSIM_DYNAMIC)
			plan_all(&r, err);
		if (start_waiting(&r, now, &q) < 0) {
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			goto out;
		}
		check_running(&r, now);
	}
	out->slice_ratio = slice_ms / ((double)horizon * (double)o->nodes *
				       o->gpus_per_node * r.m->compute_slices);
	out->slice_hours = slice_ms / HOUR_MS;
	summarise(&r, horizon);
out:
	kerf_evq_release(&q);
	free(r.pending);
	free(r.req);
	free(r.nodes);
	return rc;
}
