/*
 * prop_placement: seeded property test of placement against a naive ledger.
 *
 * For each seed a random cluster (1..64 nodes, 0..8 GPUs of 1..4 models,
 * some with GPU memory) and a random script of pod arrivals (CPU-only,
 * fractions, whole GPUs, model masks, GPU memory requests) and departures
 * are drawn with kerf_rng.  Every registered policy plays the script one pod
 * at a time through kerf_sched_place; a departure unbinds a live pod with
 * kerf_cluster_unbind; a down/up event takes a GPU out of service or puts
 * it back (kerf_cluster_upsert_node with gpus_down, drawn from a second
 * stream so the pods and arrivals of a seed stay as they were).  After
 * every event the cluster is compared with a
 * ledger kept here, recomputed from scratch from the live bindings: nothing
 * over capacity, free values equal capacity minus the ledger, model
 * constraints hold, bindings have exactly nr_gpus GPUs, kerf_cluster_check
 * agrees, and a pod the scheduler rejected fits nowhere by a naive fit.
 * A GPU out of service shows nothing free, keeps what its pods leave
 * aside (free again only once it is up), and no pod is placed on it.
 * Each script is played three times per policy: twice with the score cache
 * (the bindings must be identical) and once with caching turned off (the
 * bindings must be identical to the cached ones).
 *
 * Usage: prop_placement [seed [policy]].  Without a seed, seeds 1..N with
 * N = $KERF_PROP_RUNS (default 300); with one, only that seed.  Output is
 * TAP, one case per policy; a failure names the seed to replay.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/parse.h"
#include "base/rng.h"
#include "core/frag.h"
#include "core/framework.h"
#include "core/model.h"
#include "core/policy.h"
#include "core/status.h"

enum {
	PROP_RUNS_DEFAULT = 300,
	PROP_MAX_NODES = 64,
	PROP_MAX_NODE_GPUS = 8,
	PROP_MAX_MODELS = 5,        /* 1..4 with nodes, maybe one without */
	PROP_MAX_PODS = 160,
	PROP_MAX_EVENTS = 3 * PROP_MAX_PODS,
	PROP_MAX_SHAPES = 12,
	PROP_MSG_MAX = 768,
};

struct spec_node {
	char name[16];
	int64_t cpu_milli;
	int64_t mem_mib;
	int model;                  /* model index, -1 without GPUs */
	int nr_gpus;
	int32_t gpu_mem_mib;        /* per GPU; 0 = not tracked */
};

enum event_kind {
	EV_ARRIVE,
	EV_DEPART,
	EV_DOWN,                    /* a GPU out of service, or back up */
};

struct event {
	enum event_kind kind;
	int pod;                    /* EV_ARRIVE: index in world->pods */
	uint64_t pick;              /* EV_DEPART: live[pick % nr_live] leaves;
				       EV_DOWN: node, GPU and whether all
				       GPUs of the node come up */
};

/* Everything one seed generates; shared by every policy and run. */
struct world {
	uint64_t seed;
	int nr_models;              /* models registered in the cluster */
	int32_t model_mem_mib[PROP_MAX_MODELS];
	struct spec_node nodes[PROP_MAX_NODES];
	int nr_nodes;
	struct kerf_pod pods[PROP_MAX_PODS];
	int nr_pods;
	struct event events[PROP_MAX_EVENTS];
	int nr_events;
	struct kerf_pod_dist dist;  /* typical pods, for fgd */
};

/* What one event did: compared between the runs of a script. */
struct outcome {
	enum event_kind kind;
	int pod;                    /* -1: a departure with nothing live */
	enum kerf_code code;        /* arrivals */
	struct kerf_binding b;      /* arrivals that fit, and departures */
};

struct live {
	int pod;
	struct kerf_binding b;
};

struct run {
	const struct world *w;
	const char *label;          /* NULL for the first run */
	int event;                  /* -1 before the first event */
	struct live live[PROP_MAX_PODS];
	int nr_live;
	uint16_t down[PROP_MAX_NODES];  /* GPUs out of service */
	struct outcome out[PROP_MAX_EVENTS];
	/* The ledger: use recomputed from live[] after every event. */
	int64_t cpu_used[PROP_MAX_NODES];
	int64_t mem_used[PROP_MAX_NODES];
	int32_t gpu_milli_used[PROP_MAX_NODES][KERF_NODE_MAX_GPUS];
	int64_t gpu_mem_used[PROP_MAX_NODES][KERF_NODE_MAX_GPUS];
	int nr_pods_on[PROP_MAX_NODES];
	int nr_class_on[PROP_MAX_NODES][KERF_POD_CLASSES];
	/* Counters for the TAP line. */
	long nr_placed;
	long nr_rejected;
	long nr_departed;
	long nr_down_events;
	uint64_t nr_cache_hits;
	char msg[PROP_MSG_MAX];
};

static int rnd(struct kerf_rng *rng, int bound)
{
	return (int)kerf_rng_below(rng, (uint64_t)bound);
}

static bool chance(struct kerf_rng *rng, int pct)
{
	return rnd(rng, 100) < pct;
}

static int popcount16(uint16_t x)
{
	int n = 0;

	for (; x; x &= (uint16_t)(x - 1))
		n++;
	return n;
}

static int fail(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record the first violated invariant of a run; always returns -1. */
static int fail(struct run *r, const char *fmt, ...)
{
	va_list ap;
	size_t off = 0;

	if (r->label)
		off = (size_t)snprintf(r->msg, sizeof(r->msg), "[%s] ",
				       r->label);
	va_start(ap, fmt);
	vsnprintf(r->msg + off, sizeof(r->msg) - off, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- generation ---------------------------------------------------- */

static const int32_t model_mems[] = { 8192, 16384, 24576, 32768, 81920 };

static void gen_cluster(struct world *w, struct kerf_rng *rng)
{
	int with_nodes = 1 + rnd(rng, 4);
	const int gpu_counts[] = { 0, 1, 2, 4, 8 };

	w->nr_models = with_nodes + (chance(rng, 25) ? 1 : 0);
	for (int m = 0; m < w->nr_models; m++) {
		if (chance(rng, 35))
			w->model_mem_mib[m] = 0;
		else if (chance(rng, 50))
			w->model_mem_mib[m] = model_mems[rnd(rng, 5)];
		else
			w->model_mem_mib[m] = 1 + rnd(rng, 81920);
	}
	w->nr_nodes = 1 + rnd(rng, PROP_MAX_NODES);
	for (int i = 0; i < w->nr_nodes; i++) {
		struct spec_node *n = &w->nodes[i];

		snprintf(n->name, sizeof(n->name), "n%d", i);
		n->nr_gpus = chance(rng, 50) ? gpu_counts[rnd(rng, 5)]
					     : rnd(rng, PROP_MAX_NODE_GPUS + 1);
		n->model = n->nr_gpus ? rnd(rng, with_nodes) : -1;
		n->gpu_mem_mib = n->nr_gpus ? w->model_mem_mib[n->model] : 0;
		if (chance(rng, 5))
			n->cpu_milli = 0;
		else if (chance(rng, 50))
			n->cpu_milli = 8000 * (1 + rnd(rng, 16));
		else
			n->cpu_milli = 1 + rnd(rng, 128000);
		if (chance(rng, 5))
			n->mem_mib = 0;
		else if (chance(rng, 50))
			n->mem_mib = 65536 * (int64_t)(1 + rnd(rng, 16));
		else
			n->mem_mib = 1 + rnd(rng, 1 << 20);
	}
}

static void gen_pod(struct world *w, struct kerf_rng *rng, struct kerf_pod *p)
{
	int kind = rnd(rng, 10);

	memset(p, 0, sizeof(*p));
	p->cpu_milli = chance(rng, 20) ? 0 : 1 + rnd(rng, 32000);
	if (chance(rng, 5))
		p->cpu_milli = rnd(rng, 130000);
	p->mem_mib = chance(rng, 20) ? 0 : 1 + rnd(rng, 131072);
	if (chance(rng, 5))
		p->mem_mib = rnd(rng, 1 << 20);
	if (kind < 3)
		return; /* CPU only */
	if (kind < 7) {
		p->nr_gpus = 1;
		p->gpu_milli = chance(rng, 50) ? 100 * (1 + rnd(rng, 9))
					       : 1 + rnd(rng, 999);
	} else {
		p->nr_gpus = (uint8_t)(chance(rng, 50) ? 1 : 1 + rnd(rng, 8));
		p->gpu_milli = KERF_GPU_MILLI;
	}
	if (chance(rng, 25)) {
		while (p->model_mask == 0)
			p->model_mask = kerf_rng_next(rng) &
					(((uint64_t)1 << w->nr_models) - 1);
	}
	if (chance(rng, 25))
		p->gpu_mem_mib = chance(rng, 10) ? 1 + rnd(rng, 100000)
						 : 1 + rnd(rng, 24576);
}

static int gen_world(struct world *w, uint64_t seed, struct kerf_err *err)
{
	struct kerf_rng rng, down_rng;
	struct kerf_pod shapes[PROP_MAX_SHAPES];
	int nr_shapes, depart_pct, down_pct;

	memset(w, 0, sizeof(*w));
	kerf_pod_dist_init(&w->dist);
	w->seed = seed;
	kerf_rng_seed(&rng, seed);
	gen_cluster(w, &rng);
	/* A few shapes recur, as in real traces; that also exercises the cache. */
	nr_shapes = 1 + rnd(&rng, PROP_MAX_SHAPES);
	for (int i = 0; i < nr_shapes; i++)
		gen_pod(w, &rng, &shapes[i]);
	w->nr_pods = 1 + rnd(&rng, PROP_MAX_PODS);
	for (int i = 0; i < w->nr_pods; i++) {
		if (chance(&rng, 75))
			w->pods[i] = shapes[rnd(&rng, nr_shapes)];
		else
			gen_pod(w, &rng, &w->pods[i]);
	}
	depart_pct = rnd(&rng, 60);
	/* down/up events from their own stream: the rest of a seed is kept */
	kerf_rng_seed(&down_rng, seed ^ 0x9e3779b97f4a7c15ull);
	down_pct = rnd(&down_rng, 4) ? rnd(&down_rng, 30) : 0;
	for (int i = 0; i < w->nr_pods; i++) {
		w->events[w->nr_events++] = (struct event){
			.kind = EV_ARRIVE,
			.pod = i,
		};
		if (chance(&rng, depart_pct))
			w->events[w->nr_events++] = (struct event){
				.kind = EV_DEPART,
				.pick = kerf_rng_next(&rng),
			};
		if (chance(&down_rng, down_pct))
			w->events[w->nr_events++] = (struct event){
				.kind = EV_DOWN,
				.pick = kerf_rng_next(&down_rng),
			};
	}
	return kerf_pod_dist_typical(&w->dist, w->pods, (size_t)w->nr_pods,
				     50 + rnd(&rng, 51), 0, err);
}

static int build_cluster(const struct world *w, struct kerf_cluster *c,
			 struct kerf_err *err)
{
	kerf_cluster_init(c);
	for (int m = 0; m < w->nr_models; m++) {
		char name[16];
		int rc;

		snprintf(name, sizeof(name), "m%d", m);
		rc = kerf_cluster_model(c, name, w->model_mem_mib[m], err);
		if (rc != m)
			return rc < 0 ? rc : -KERF_EINVAL;
	}
	for (int i = 0; i < w->nr_nodes; i++) {
		const struct spec_node *n = &w->nodes[i];
		int rc = kerf_cluster_add_node(c, n->name, n->cpu_milli,
					       n->mem_mib,
					       n->nr_gpus ? n->model
							  : KERF_MODEL_NONE,
					       n->nr_gpus, err);

		if (rc != i)
			return rc < 0 ? rc : -KERF_EINVAL;
	}
	return 0;
}

/* ---- the naive ledger ---------------------------------------------- */

static bool model_allowed(const struct spec_node *n, const struct kerf_pod *p)
{
	if (p->nr_gpus == 0)
		return true;
	if (n->nr_gpus == 0)
		return false;
	return p->model_mask == 0 || (p->model_mask >> n->model & 1);
}

/* Recompute the use of every node and GPU from the live bindings. */
static int ledger_compute(struct run *r)
{
	const struct world *w = r->w;

	memset(r->cpu_used, 0, sizeof(r->cpu_used));
	memset(r->mem_used, 0, sizeof(r->mem_used));
	memset(r->gpu_milli_used, 0, sizeof(r->gpu_milli_used));
	memset(r->gpu_mem_used, 0, sizeof(r->gpu_mem_used));
	memset(r->nr_pods_on, 0, sizeof(r->nr_pods_on));
	memset(r->nr_class_on, 0, sizeof(r->nr_class_on));
	for (int k = 0; k < r->nr_live; k++) {
		const struct kerf_pod *p = &w->pods[r->live[k].pod];
		struct kerf_binding b = r->live[k].b;
		const struct spec_node *n;

		if (b.node >= (uint32_t)w->nr_nodes)
			return fail(r, "pod %d bound to node %" PRIu32 " of %d",
				    r->live[k].pod, b.node, w->nr_nodes);
		n = &w->nodes[b.node];
		if (popcount16(b.gpus) != p->nr_gpus)
			return fail(r, "pod %d on node %s holds %d GPUs (mask 0x%x), asked %u",
				    r->live[k].pod, n->name, popcount16(b.gpus),
				    b.gpus, p->nr_gpus);
		if (b.gpus >> n->nr_gpus)
			return fail(r, "pod %d on node %s holds GPU mask 0x%x, node has %d GPUs",
				    r->live[k].pod, n->name, b.gpus,
				    n->nr_gpus);
		if (!model_allowed(n, p))
			return fail(r, "pod %d (model mask 0x%" PRIx64 ") on node %s of model %d",
				    r->live[k].pod, p->model_mask, n->name,
				    n->model);
		r->cpu_used[b.node] += p->cpu_milli;
		r->mem_used[b.node] += p->mem_mib;
		r->nr_pods_on[b.node]++;
		if (p->nr_gpus > 0)
			r->nr_class_on[b.node][kerf_pod_is_fraction(p) ? 0 : p->nr_gpus]++;
		for (int g = 0; g < n->nr_gpus; g++) {
			if (!(b.gpus >> g & 1))
				continue;
			r->gpu_milli_used[b.node][g] += p->gpu_milli;
			r->gpu_mem_used[b.node][g] += p->gpu_mem_mib;
		}
	}
	return 0;
}

/* Does p fit node i now, by the ledger alone? */
static bool naive_fits(const struct run *r, int i, const struct kerf_pod *p)
{
	const struct spec_node *n = &r->w->nodes[i];
	int fit = 0;

	if (!model_allowed(n, p) || n->nr_gpus < p->nr_gpus)
		return false;
	if (n->cpu_milli - r->cpu_used[i] < p->cpu_milli ||
	    n->mem_mib - r->mem_used[i] < p->mem_mib)
		return false;
	for (int g = 0; g < n->nr_gpus; g++) {
		if (r->down[i] >> g & 1)
			continue;
		if (KERF_GPU_MILLI - r->gpu_milli_used[i][g] < p->gpu_milli)
			continue;
		/* A GPU memory request needs a GPU whose memory is known. */
		if (p->gpu_mem_mib > 0 &&
		    (n->gpu_mem_mib == 0 ||
		     n->gpu_mem_mib - r->gpu_mem_used[i][g] < p->gpu_mem_mib))
			continue;
		fit++;
	}
	return fit >= p->nr_gpus;
}

static int check_node(struct run *r, const struct kerf_cluster *c, int i)
{
	const struct spec_node *s = &r->w->nodes[i];
	const struct kerf_node *n = &c->nodes[i];
	int32_t sum = 0;
	int idle = 0;

	if (strcmp(n->name, s->name) != 0 || n->cpu_milli != s->cpu_milli ||
	    n->mem_mib != s->mem_mib || n->nr_gpus != s->nr_gpus ||
	    n->model != (s->nr_gpus ? s->model : KERF_MODEL_NONE))
		return fail(r, "node %s: capacity or model changed", s->name);
	if (r->cpu_used[i] > s->cpu_milli)
		return fail(r, "node %s over cpu: %" PRId64 " of %" PRId64 " milli",
			    s->name, r->cpu_used[i], s->cpu_milli);
	if (r->mem_used[i] > s->mem_mib)
		return fail(r, "node %s over memory: %" PRId64 " of %" PRId64 " MiB",
			    s->name, r->mem_used[i], s->mem_mib);
	if (n->cpu_free_milli != s->cpu_milli - r->cpu_used[i])
		return fail(r, "node %s: cpu free %" PRId64 ", ledger says %" PRId64,
			    s->name, n->cpu_free_milli,
			    s->cpu_milli - r->cpu_used[i]);
	if (n->mem_free_mib != s->mem_mib - r->mem_used[i])
		return fail(r, "node %s: memory free %" PRId64 ", ledger says %" PRId64,
			    s->name, n->mem_free_mib, s->mem_mib - r->mem_used[i]);
	for (int g = 0; g < s->nr_gpus; g++) {
		int32_t used = r->gpu_milli_used[i][g];
		int64_t mem_used = r->gpu_mem_used[i][g];

		if (used > KERF_GPU_MILLI)
			return fail(r, "GPU %d of node %s over 1000 milli (%" PRId32 ")",
				    g, s->name, used);
		if (mem_used > s->gpu_mem_mib)
			return fail(r, "GPU %d of node %s over its memory: %" PRId64 " of %" PRId32 " MiB",
				    g, s->name, mem_used, s->gpu_mem_mib);
		if (r->down[i] >> g & 1) {
			if (n->gpu_free_milli[g] != 0 || n->gpu_mem_free_mib[g] != 0 ||
			    !(n->gpus_down >> g & 1))
				return fail(r, "GPU %d of node %s: out of service but shows %d milli and %" PRId32 " MiB free",
					    g, s->name, n->gpu_free_milli[g],
					    n->gpu_mem_free_mib[g]);
			if (n->gpu_down_free_milli[g] != KERF_GPU_MILLI - used ||
			    n->gpu_down_mem_free_mib[g] != s->gpu_mem_mib - mem_used)
				return fail(r, "GPU %d of node %s: out of service, keeps %d milli and %" PRId32 " MiB aside, ledger says %" PRId32 " and %" PRId64,
					    g, s->name, n->gpu_down_free_milli[g],
					    n->gpu_down_mem_free_mib[g],
					    KERF_GPU_MILLI - used,
					    s->gpu_mem_mib - mem_used);
			continue;
		}
		if (n->gpus_down >> g & 1)
			return fail(r, "GPU %d of node %s: out of service, ledger says up",
				    g, s->name);
		if (n->gpu_free_milli[g] != KERF_GPU_MILLI - used)
			return fail(r, "GPU %d of node %s: free %d milli, ledger says %" PRId32,
				    g, s->name, n->gpu_free_milli[g],
				    KERF_GPU_MILLI - used);
		if (n->gpu_mem_mib[g] != s->gpu_mem_mib ||
		    n->gpu_mem_free_mib[g] != s->gpu_mem_mib - mem_used)
			return fail(r, "GPU %d of node %s: memory free %" PRId32 " of %" PRId32 " MiB, ledger says %" PRId64 " of %" PRId32,
				    g, s->name, n->gpu_mem_free_mib[g],
				    n->gpu_mem_mib[g], s->gpu_mem_mib - mem_used,
				    s->gpu_mem_mib);
		sum += KERF_GPU_MILLI - used;
		idle += used == 0;
	}
	if (n->gpu_free_milli_sum != sum || n->nr_gpus_idle != idle)
		return fail(r, "node %s: %" PRId32 " GPU milli free in %u idle GPUs, ledger says %" PRId32 " in %d",
			    s->name, n->gpu_free_milli_sum, n->nr_gpus_idle,
			    sum, idle);
	if (n->nr_pods != (uint32_t)r->nr_pods_on[i])
		return fail(r, "node %s: %u pods, ledger says %d", s->name,
			    n->nr_pods, r->nr_pods_on[i]);
	for (int k = 0; k < KERF_POD_CLASSES; k++)
		if (n->nr_pods_by_class[k] != r->nr_class_on[i][k])
			return fail(r, "node %s: %u pods of GPU class %d, ledger says %d",
				    s->name, n->nr_pods_by_class[k], k,
				    r->nr_class_on[i][k]);
	return 0;
}

/* Every invariant of the cluster against the ledger. */
static int check_cluster(struct run *r, const struct kerf_cluster *c)
{
	struct kerf_err err = { 0 };
	int64_t used = 0;

	if (ledger_compute(r) < 0)
		return -1;
	if (c->nr_nodes != (size_t)r->w->nr_nodes)
		return fail(r, "cluster has %zu nodes, expected %d",
			    c->nr_nodes, r->w->nr_nodes);
	for (int i = 0; i < r->w->nr_nodes; i++)
		if (check_node(r, c, i) < 0)
			return -1;
	if (kerf_cluster_check(c, &err) < 0)
		return fail(r, "kerf_cluster_check: %s", err.msg);
	for (int i = 0; i < r->w->nr_nodes; i++)
		for (int g = 0; g < r->w->nodes[i].nr_gpus; g++)
			used += r->gpu_milli_used[i][g];
	if (kerf_cluster_gpu_milli_used(c) != used)
		return fail(r, "cluster: %" PRId64 " GPU milli used, ledger says %" PRId64,
			    kerf_cluster_gpu_milli_used(c), used);
	return 0;
}

/* ---- playing a script ---------------------------------------------- */

static int first_naive_fit(const struct run *r, const struct kerf_pod *p)
{
	for (int i = 0; i < r->w->nr_nodes; i++)
		if (naive_fits(r, i, p))
			return i;
	return -1;
}

/* One arrival; the ledger describes the cluster before it. */
static int arrive(struct run *r, struct kerf_sched *s, struct kerf_cluster *c,
		  const char *policy, int pod, struct outcome *o)
{
	const struct world *w = r->w;
	const struct kerf_pod *p = &w->pods[pod];
	struct kerf_status st = { .code = KERF_FIT };
	struct kerf_binding b = { 0 };
	int first = first_naive_fit(r, p);

	o->code = kerf_sched_place(s, c, p, &b, &st);
	if (o->code != KERF_FIT) {
		r->nr_rejected++;
		if (o->code != KERF_UNSCHEDULABLE &&
		    o->code != KERF_UNRESOLVABLE)
			return fail(r, "pod %d rejected with code %s: %s", pod,
				    kerf_code_name(o->code), st.reason);
		if (first >= 0)
			return fail(r, "pod %d rejected (%s) but fits node %s",
				    pod, st.reason, w->nodes[first].name);
		if (strncmp(st.reason, "0/", 2) != 0)
			return fail(r, "pod %d rejected with reason '%s'", pod,
				    st.reason);
		return 0;
	}
	r->nr_placed++;
	o->b = b;
	if (b.node >= (uint32_t)w->nr_nodes)
		return fail(r, "pod %d placed on node %" PRIu32 " of %d", pod,
			    b.node, w->nr_nodes);
	if (b.gpus & r->down[b.node])
		return fail(r, "pod %d placed on node %s GPUs 0x%x, out of service 0x%x",
			    pod, w->nodes[b.node].name, b.gpus, r->down[b.node]);
	if (!naive_fits(r, (int)b.node, p))
		return fail(r, "pod %d placed on node %s (GPUs 0x%x) where it does not fit",
			    pod, w->nodes[b.node].name, b.gpus);
	if (strcmp(policy, "first-fit") == 0 && (int)b.node != first)
		return fail(r, "first-fit put pod %d on node %s, first fit is %s",
			    pod, w->nodes[b.node].name, w->nodes[first].name);
	r->live[r->nr_live++] = (struct live){ .pod = pod, .b = b };
	return 0;
}

static int depart(struct run *r, struct kerf_cluster *c, uint64_t pick,
		  struct outcome *o)
{
	struct kerf_err err = { 0 };
	int k;

	if (r->nr_live == 0) {
		o->pod = -1;
		return 0;
	}
	k = (int)(pick % (uint64_t)r->nr_live);
	o->pod = r->live[k].pod;
	o->b = r->live[k].b;
	if (kerf_cluster_unbind(c, &r->w->pods[o->pod], o->b, &err) < 0)
		return fail(r, "unbind of pod %d from node %s failed: %s",
			    o->pod, r->w->nodes[o->b.node].name, err.msg);
	memmove(&r->live[k], &r->live[k + 1],
		(size_t)(r->nr_live - k - 1) * sizeof(r->live[0]));
	r->nr_live--;
	r->nr_departed++;
	return 0;
}

/*
 * A GPU of a node out of service, or back up (every GPU of the node, one
 * time in eight): through kerf_cluster_upsert_node, as kerf serve does,
 * which must take it whatever runs there.
 */
static int down_up(struct run *r, struct kerf_cluster *c, uint64_t pick,
		   struct outcome *o)
{
	int i = (int)(pick % (uint64_t)r->w->nr_nodes);
	const struct spec_node *n = &r->w->nodes[i];
	struct kerf_node_spec spec;
	struct kerf_err err = { 0 };
	int rc;

	o->pod = i;
	if (n->nr_gpus == 0)
		return 0;
	if ((pick >> 32) % 8 == 0)
		r->down[i] = 0;
	else
		r->down[i] ^= (uint16_t)(1u << ((pick >> 16) % (uint64_t)n->nr_gpus));
	kerf_cluster_node_spec(c, (size_t)i, &spec);
	spec.gpus_down = r->down[i];
	rc = kerf_cluster_upsert_node(c, &spec, &err);
	if (rc != i)
		return fail(r, "node %s: GPUs 0x%x out of service refused: %s",
			    n->name, r->down[i], err.msg);
	o->b.gpus = r->down[i];
	r->nr_down_events++;
	return 0;
}

/* Play the world's script with one policy; 0 or -1 with r->msg set. */
static int play(struct run *r, const struct world *w,
		const struct kerf_policy_info *info, bool cached,
		const char *label)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_err err = { 0 };
	struct kerf_policy_args args;
	int rc = 0;

	r->w = w;
	r->label = label;
	r->event = -1;
	r->nr_live = 0;
	memset(r->down, 0, sizeof(r->down));
	if (build_cluster(w, &c, &err) < 0) {
		kerf_cluster_release(&c);
		return fail(r, "cannot build cluster: %s", err.msg);
	}
	args = (struct kerf_policy_args){
		.cluster = &c,
		.dist = &w->dist,
		.seed = w->seed,
	};
	if (kerf_policy_build(&pol, info->name, &args, &err) < 0) {
		kerf_cluster_release(&c);
		return fail(r, "cannot build policy: %s", err.msg);
	}
	kerf_sched_init(&s, &pol);
	if (!cached)
		s.cacheable = false;
	rc = check_cluster(r, &c);
	for (int e = 0; e < w->nr_events && rc == 0; e++) {
		const struct event *ev = &w->events[e];
		struct outcome *o = &r->out[e];

		r->event = e;
		memset(o, 0, sizeof(*o));
		o->kind = ev->kind;
		o->pod = ev->pod;
		if (ev->kind == EV_ARRIVE)
			rc = arrive(r, &s, &c, info->name, ev->pod, o);
		else if (ev->kind == EV_DEPART)
			rc = depart(r, &c, ev->pick, o);
		else
			rc = down_up(r, &c, ev->pick, o);
		if (rc == 0)
			rc = check_cluster(r, &c);
	}
	r->nr_cache_hits += s.stats.nr_cache_hits;
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
	return rc;
}

static void describe(char *buf, size_t size, const struct world *w,
		     const struct outcome *o)
{
	if (o->kind == EV_DOWN)
		snprintf(buf, size, "node %s GPUs 0x%x out of service",
			 w->nodes[o->pod].name, o->b.gpus);
	else if (o->kind == EV_DEPART && o->pod < 0)
		snprintf(buf, size, "no departure");
	else if (o->kind == EV_DEPART)
		snprintf(buf, size, "pod %d left node %s", o->pod,
			 w->nodes[o->b.node].name);
	else if (o->code != KERF_FIT)
		snprintf(buf, size, "pod %d rejected (%s)", o->pod,
			 kerf_code_name(o->code));
	else
		snprintf(buf, size, "pod %d on node %s GPUs 0x%x", o->pod,
			 w->nodes[o->b.node].name, o->b.gpus);
}

static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->kind == b->kind && a->pod == b->pod && a->code == b->code &&
	       a->b.node == b->b.node && a->b.gpus == b->b.gpus;
}

/* Compare run b's outcomes with the first run a's. */
static int compare(struct run *b, const struct run *a)
{
	for (int e = 0; e < b->w->nr_events; e++) {
		char x[128], y[128];

		if (same_outcome(&a->out[e], &b->out[e]))
			continue;
		b->event = e;
		describe(x, sizeof(x), a->w, &a->out[e]);
		describe(y, sizeof(y), b->w, &b->out[e]);
		return fail(b, "bindings differ from the first run: %s, here %s",
			    x, y);
	}
	return 0;
}

/* All three runs of one seed and one policy. */
static int check_seed(struct run runs[3], const struct world *w,
		      const struct kerf_policy_info *info, struct run **failed)
{
	*failed = &runs[0];
	if (play(&runs[0], w, info, true, NULL) < 0)
		return -1;
	*failed = &runs[1];
	if (play(&runs[1], w, info, true, "rerun") < 0 ||
	    compare(&runs[1], &runs[0]) < 0)
		return -1;
	*failed = &runs[2];
	if (play(&runs[2], w, info, false, "uncached") < 0 ||
	    compare(&runs[2], &runs[0]) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t first = 1, nr_seeds = PROP_RUNS_DEFAULT;
	const char *only_policy = argc > 2 ? argv[2] : NULL;
	const char *env = getenv("KERF_PROP_RUNS");
	struct world *w = calloc(1, sizeof(*w));
	struct run *runs = calloc(3, sizeof(*runs));
	size_t nr_policies = kerf_policy_count();
	int nr_failed = 0, tap = 0;

	if (!w || !runs) {
		fprintf(stderr, "prop_placement: out of memory\n");
		return 1;
	}
	if (argc > 1) {
		if (kerf_parse_u64(argv[1], &first) < 0) {
			fprintf(stderr, "usage: prop_placement [seed [policy]]\n");
			return 2;
		}
		nr_seeds = 1;
	} else if (env && *env && (kerf_parse_u64(env, &nr_seeds) < 0 || !nr_seeds)) {
		fprintf(stderr, "prop_placement: KERF_PROP_RUNS='%s' is not a positive count\n",
			env);
		return 2;
	}
	if (only_policy && !kerf_policy_lookup(only_policy)) {
		fprintf(stderr, "prop_placement: unknown policy '%s'\n",
			only_policy);
		return 2;
	}
	printf("1..%zu\n", only_policy ? (size_t)1 : nr_policies);
	for (size_t pi = 0; pi < nr_policies; pi++) {
		const struct kerf_policy_info *info = kerf_policy_at(pi);
		long events = 0;
		struct run *bad = NULL;
		uint64_t seed;

		if (only_policy && strcmp(only_policy, info->name) != 0)
			continue;
		memset(runs, 0, 3 * sizeof(*runs));
		for (seed = first; seed < first + nr_seeds; seed++) {
			struct kerf_err err = { 0 };
			int rc = gen_world(w, seed, &err);

			if (rc < 0) {
				bad = &runs[0];
				bad->event = -1;
				snprintf(bad->msg, sizeof(bad->msg),
					 "cannot build the typical pods: %s",
					 err.msg);
			} else {
				struct run *culprit;

				rc = check_seed(runs, w, info, &culprit);
				if (rc < 0)
					bad = culprit;
			}
			kerf_pod_dist_release(&w->dist);
			if (rc < 0)
				break;
			events += w->nr_events;
		}
		tap++;
		if (bad) {
			char where[32] = "setup";

			if (bad->event >= 0)
				snprintf(where, sizeof(where), "event %d",
					 bad->event);
			fprintf(stderr,
				"prop_placement: seed %" PRIu64 " policy %s %s: %s (replay: prop_placement %" PRIu64 ")\n",
				seed, info->name, where, bad->msg, seed);
			printf("not ok %d - %s: seed %" PRIu64 " %s: %s\n", tap,
			       info->name, seed, where, bad->msg);
			nr_failed++;
			continue;
		}
		printf("ok %d - %s: %" PRIu64 " seeds, %ld events, %ld placed, %ld rejected, %ld departed, %ld GPU down/up, %" PRIu64 " cache hits\n",
		       tap, info->name, nr_seeds, events, runs[0].nr_placed,
		       runs[0].nr_rejected, runs[0].nr_departed,
		       runs[0].nr_down_events, runs[0].nr_cache_hits);
	}
	free(runs);
	free(w);
	return nr_failed ? 1 : 0;
}
