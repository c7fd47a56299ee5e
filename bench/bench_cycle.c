/*
 * bench_cycle: wall time of one scheduling cycle (kerf_cycle_run) on a
 * loaded cluster with a large backlog.  The figure to show: a cycle with
 * 10,000 pending workloads on 5,000 nodes takes at most 50 ms.
 *
 * Scenario (deterministic for a seed; default 5000 nodes, 10000 pending):
 *   cluster   N nodes of 8 GPUs, 128 cores, 1 TiB; 50 % H100-80GB,
 *             30 % A100-80GB, 20 % L40S-48GB, in contiguous blocks of
 *             rank; the H100 nodes form NVLink domains of 18 nodes.
 *   tenants   4 organisations (40/30/20/10 % of every GPU flavor) x 5 teams
 *             (30/25/20/15/10 % of their organisation), so nominal quotas
 *             nest and add up to the cluster.  Organisations 0-2 may
 *             borrow 25 % beyond nominal, organisation 3 without limit;
 *             organisation 0 lends at most half its nominal; the first team
 *             of each organisation lends at most half, the last may not
 *             borrow.  CPU and memory carry no quota.
 *   classes   production (1000, non-preemptible), batch (100, preemptible,
 *             5 min checkpoint grace, 15 min minimum runtime), scavenger
 *             (0, preemptible, 1 min grace).
 *   policy    kerf (kerf_policy_build "kerf"), one sched for the run.
 *   shapes    every team has --shapes templates (default 12), drawn once;
 *             a workload takes one of its team's templates, the first ones
 *             more often (weight 1/(k+1)).  --shapes 0 draws every workload
 *             afresh, so nearly all shapes differ.  A template is:
 *               20 % a fraction of one GPU (250 or 500 milli, GPU memory),
 *               30 % one 1-GPU pod, 10 % 2-GPU, 10 % 4-GPU, 10 % 8-GPU,
 *               20 % a gang of 2/4/8/16 pods (40/30/20/10 %) of 8 GPUs
 *                    (70 %) or 4 GPUs, 70 % anywhere, 10 % packed, 10 %
 *                    in one NVLink domain, 10 % on one node when the gang
 *                    fits one; 10 % elastic (min_count half the pods);
 *             6 to 16 cores and 48 to 128 GiB per GPU; 20 % of templates
 *             pinned to one GPU model, 10 % to H100|A100.  Small single
 *             pods are production 30 %, batch 50 %, scavenger 20 %; the
 *             rest batch 75 %, scavenger 25 %.
 *
 * Each repetition builds the scenario from scratch (same seed, so the same
 * state), then:
 *   1. fill: workloads of the teams in proportion to their nominal quota
 *      are submitted and admitted by up to 8 cycles, one a minute from
 *      t = 0, until --fill percent (default 90) of the GPUs are in use; what
 *      a fill cycle could not admit stays pending and is counted among the
 *      pending of the timed cycles (the line under the rows says how many);
 *   2. at t = 2 h, when every running workload is past its minimum
 *      runtime, P pending workloads are submitted (spread over the last P
 *      ms, from random teams);
 *   3. timed, CLOCK_MONOTONIC around kerf_cycle_run only:
 *        first   the first cycle after (every workload new: observation,
 *                quota pre-checks, placements, preemption searches);
 *        steady  10 s later, nothing submitted, finished or expired (the
 *                victims' grace has not run out);
 *        freed   10 s later still, after --finish running workloads
 *                (default 25, chosen at random, victims excluded) finished;
 *        churn   then, every 10 s, 1 % of the nodes (at random) are
 *                removed, their work requeued, and as many new nodes of
 *                the same shape added under new names (kerf_state_node_
 *                remove / _upsert); the fourth such cycle is timed: a
 *                steady cycle while the cluster changes under it.
 * A row shows the median and the largest wall time of the repetitions, the
 * median CPU time of the process over the cycle (wall > cpu: the machine is
 * busy with something else), the cycle's own statistics (struct
 * kerf_cycle_stats) and the sched's selects and node evaluations in the
 * cycle.  "goal" compares the median wall time with 50 ms.
 * The statistics of every repetition must be identical (the core is
 * deterministic); a row whose are not says "stats vary".
 * kerf_state_check runs after every repetition, outside the timing.
 *
 * Peak RSS is the process's high-water mark (getrusage ru_maxrss) after the
 * size's repetitions: it never goes down, so a row shows the largest
 * footprint of that size and of every size before it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/parse.h"
#include "base/rng.h"
#include "cmd/opt.h"
#include "core/cycle.h"
#include "core/framework.h"
#include "core/model.h"
#include "core/policy.h"
#include "core/priority.h"
#include "core/state.h"
#include "core/tenant.h"
#include "core/workload.h"

enum {
	MAX_SIZES = 16,
	MAX_NODES = 200000,
	MAX_PENDING = 10000000,
	MAX_REPEAT = 101,
	MAX_SHAPES = 1000,
	NODE_GPUS = 8,
	NR_MODELS = 3,
	NR_ORGS = 4,
	NR_TEAMS = 5,                 /* per organisation */
	NR_LEAVES = NR_ORGS * NR_TEAMS,
	NVLINK_DOMAIN_NODES = 18,
	FILL_ROUNDS = 8,
	GOAL_MS = 50,
};

#define NODE_CPU_MILLI ((int64_t)128000)
#define NODE_MEM_MIB ((int64_t)1048576)
#define MINUTE_MS ((int64_t)60 * 1000)
#define PENDING_AT_MS ((int64_t)2 * 3600 * 1000)

enum cycle_kind {
	CYCLE_FIRST = 0,
	CYCLE_STEADY,
	CYCLE_FREED,
	CYCLE_CHURN,
	NR_CYCLE_KINDS,
};

static const char *const cycle_names[NR_CYCLE_KINDS] = {
	[CYCLE_FIRST] = "first",
	[CYCLE_STEADY] = "steady",
	[CYCLE_FREED] = "freed",
	[CYCLE_CHURN] = "churn",
};

static const struct {
	const char *name;
	int32_t mem_mib;
	int share_pct;                /* of the nodes */
} models[NR_MODELS] = {
	{ "H100-80GB", 81920, 50 },
	{ "A100-80GB", 81920, 30 },
	{ "L40S-48GB", 49152, 20 },
};

static const int org_share_pct[NR_ORGS] = { 40, 30, 20, 10 };
static const int team_share_pct[NR_TEAMS] = { 30, 25, 20, 15, 10 };

struct bench_opts {
	size_t nodes[MAX_SIZES];
	size_t nr_nodes;
	size_t pending[MAX_SIZES];
	size_t nr_pending;
	unsigned repeat;
	unsigned finish;
	unsigned shapes;             /* templates per team; 0 = all distinct */
	int fill_pct;
	uint64_t seed;
	bool json;
};

/* Everything one repetition builds; heap-allocated (sched points into it). */
struct scenario {
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched sched;
	struct kerf_decisions dec;        /* what the last cycle decided */
	bool have_state, have_policy;
	int leaves[NR_LEAVES];
	int64_t leaf_nominal[NR_LEAVES];  /* GPU milli, all flavors */
	int cls_prod, cls_batch, cls_low;
	struct kerf_workload *templates;  /* NR_LEAVES x shapes */
	unsigned shapes;
	struct kerf_rng rng;
	size_t fill_left;                 /* fill workloads still pending */
	double fill_gpu_pct;              /* GPUs in use after the fill */
	size_t nr_running;                /* after the fill */
};

/* What one repetition measured of one cycle kind. */
struct sample {
	double wall_ms;
	double cpu_ms;
	struct kerf_cycle_stats stats;
	struct kerf_sched_stats sched;   /* delta over the cycle */
};

struct bench_row {
	size_t nr_nodes;
	size_t nr_pending;
	enum cycle_kind kind;
	double median_ms;
	double max_ms;
	double min_ms;
	double cpu_median_ms;
	unsigned nr_samples;
	bool stats_vary;
	struct kerf_cycle_stats stats;   /* of the first repetition */
	struct kerf_sched_stats sched;
	size_t fill_left;
	double fill_gpu_pct;
	size_t nr_running;
	long peak_rss_kib;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_cycle [options]\n"
		"  --nodes LIST     cluster sizes, comma-separated (default 5000)\n"
		"  --pending LIST   pending workloads, comma-separated (default 10000);\n"
		"                   paired with --nodes by position, a single value\n"
		"                   applies to every size\n"
		"  --repeat N       repetitions of each cycle (default 5)\n"
		"  --finish N       running workloads finished before the 'freed'\n"
		"                   cycle (default 25)\n"
		"  --shapes N       workload templates per team (default 12; 0 = every\n"
		"                   workload drawn afresh)\n"
		"  --fill PCT       GPUs in use before the backlog (default 90)\n"
		"  --seed N         scenario seed (default 42)\n"
		"  --json           one JSON object per row instead of the table\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss; /* KiB on Linux */
}

/*
 * Option opt, "N[,N...]" with lo <= N <= hi, into v[]; returns the count,
 * or -1 with the message in err.
 */
static int parse_list(const char *opt, const char *arg, size_t *v,
		      uint64_t lo, uint64_t hi, struct kerf_err *err)
{
	uint64_t x[MAX_SIZES];
	size_t n;

	if (kerf_parse_u64_list_opt(opt, arg, lo, hi, false, x, MAX_SIZES, &n,
				    err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (size_t)x[i];
	return (int)n;
}

/* Index drawn with the given integer weights. */
static size_t pick(struct kerf_rng *r, const unsigned *weights, size_t n)
{
	uint64_t total = 0, x;

	for (size_t i = 0; i < n; i++)
		total += weights[i];
	x = kerf_rng_below(r, total);
	for (size_t i = 0; i < n; i++) {
		if (x < weights[i])
			return i;
		x -= weights[i];
	}
	return n - 1;
}

static bool chance(struct kerf_rng *r, unsigned pct)
{
	return kerf_rng_below(r, 100) < pct;
}

static int build_cluster(struct kerf_cluster *c, size_t nr_nodes,
			 struct kerf_err *err)
{
	size_t first = 0;
	int rc;

	kerf_cluster_init(c);
	for (int m = 0; m < NR_MODELS; m++) {
		rc = kerf_cluster_model(c, models[m].name, models[m].mem_mib,
					err);
		if (rc < 0)
			goto fail;
	}
	for (int m = 0; m < NR_MODELS; m++) {
		size_t end = m == NR_MODELS - 1
				     ? nr_nodes
				     : first + nr_nodes * (size_t)models[m].share_pct / 100;

		for (size_t i = first; i < end; i++) {
			char name[24];

			snprintf(name, sizeof(name), "n%06zu", i + 1);
			rc = kerf_cluster_add_node(c, name, NODE_CPU_MILLI,
						   NODE_MEM_MIB, m, NODE_GPUS,
						   err);
			if (rc < 0)
				goto fail;
			if (m == 0)
				kerf_cluster_set_domain(c, i,
							(uint32_t)(i / NVLINK_DOMAIN_NODES + 1));
		}
		first = end;
	}
	return 0;
fail:
	kerf_cluster_release(c);
	return rc;
}

/* GPU capacity per flavor of cluster c, in milli. */
static void gpu_capacity(const struct kerf_cluster *c, int64_t *cap)
{
	for (int m = 0; m < NR_MODELS; m++)
		cap[m] = 0;
	for (size_t i = 0; i < c->nr_nodes; i++)
		cap[c->nodes[i].model] += (int64_t)c->nodes[i].nr_gpus *
					  KERF_GPU_MILLI;
}

static int build_tenants(struct scenario *sc, const struct kerf_cluster *c,
			 struct kerf_tenants *tt, struct kerf_err *err)
{
	int64_t cap[NR_MODELS];
	int rc;

	gpu_capacity(c, cap);
	rc = kerf_tenants_init(tt, kerf_res_count(c));
	if (rc < 0)
		return kerf_err_set(err, rc, "out of memory");
	for (int o = 0; o < NR_ORGS; o++) {
		struct kerf_quota q;
		char name[32];
		int org;

		kerf_quota_default(&q);
		for (int m = 0; m < NR_MODELS; m++) {
			int i = kerf_res_gpu(m);

			q.nominal.v[i] = cap[m] * org_share_pct[o] / 100;
			if (o < NR_ORGS - 1)
				q.borrow_limit.v[i] = q.nominal.v[i] / 4;
			if (o == 0)
				q.lend_limit.v[i] = q.nominal.v[i] / 2;
		}
		snprintf(name, sizeof(name), "org%d", o);
		org = kerf_tenants_add(tt, name, KERF_TENANT_ROOT, &q,
				       (uint32_t)org_share_pct[o] / 10, err);
		if (org < 0)
			return org;
		for (int t = 0; t < NR_TEAMS; t++) {
			struct kerf_quota tq;
			int leaf = o * NR_TEAMS + t, idx;

			kerf_quota_default(&tq);
			sc->leaf_nominal[leaf] = 0;
			for (int m = 0; m < NR_MODELS; m++) {
				int i = kerf_res_gpu(m);

				tq.nominal.v[i] = q.nominal.v[i] *
						  team_share_pct[t] / 100;
				if (t == 0)
					tq.lend_limit.v[i] = tq.nominal.v[i] / 2;
				if (t == NR_TEAMS - 1)
					tq.borrow_limit.v[i] = 0;
				sc->leaf_nominal[leaf] += tq.nominal.v[i];
			}
			snprintf(name, sizeof(name), "org%d-team%d", o, t);
			idx = kerf_tenants_add(tt, name, org, &tq, 1, err);
			if (idx < 0)
				return idx;
			sc->leaves[leaf] = idx;
		}
	}
	return 0;
}

static int build_classes(struct scenario *sc, struct kerf_classes *cl,
			 struct kerf_err *err)
{
	struct kerf_priority_class prod = {
		.name = "production", .value = 1000, .preemptible = false,
	};
	struct kerf_priority_class batch = {
		.name = "batch", .value = 100, .preemptible = true,
		.checkpoint_grace_ms = 5 * MINUTE_MS,
		.min_runtime_ms = 15 * MINUTE_MS,
	};
	struct kerf_priority_class low = {
		.name = "scavenger", .value = 0, .preemptible = true,
		.checkpoint_grace_ms = MINUTE_MS,
	};

	kerf_classes_init(cl);
	sc->cls_prod = kerf_classes_add(cl, &prod, err);
	if (sc->cls_prod < 0)
		return sc->cls_prod;
	sc->cls_batch = kerf_classes_add(cl, &batch, err);
	if (sc->cls_batch < 0)
		return sc->cls_batch;
	sc->cls_low = kerf_classes_add(cl, &low, err);
	return sc->cls_low < 0 ? sc->cls_low : 0;
}

enum shape_kind {
	SHAPE_FRACTION = 0,
	SHAPE_GPU1,
	SHAPE_GPU2,
	SHAPE_GPU4,
	SHAPE_GPU8,
	SHAPE_GANG,
	NR_SHAPE_KINDS,
};

/* One workload shape (sets, gang, topology, class); see the file header. */
static void draw_shape(struct scenario *sc, struct kerf_workload *w)
{
	static const unsigned kind_w[NR_SHAPE_KINDS] = { 20, 30, 10, 10, 10, 20 };
	static const unsigned gang_w[] = { 40, 30, 20, 10 };
	static const uint32_t gang_pods[] = { 2, 4, 8, 16 };
	static const unsigned model_w[NR_MODELS] = { 50, 30, 20 };
	static const int64_t cpu_per_gpu[] = { 6000, 8000, 12000, 16000 };
	static const int64_t mem_per_gpu[] = { 49152, 65536, 98304, 131072 };
	static const unsigned prod_w[] = { 30, 50, 20 }, train_w[] = { 0, 75, 25 };
	struct kerf_rng *r = &sc->rng;
	enum shape_kind kind = (enum shape_kind)pick(r, kind_w, NR_SHAPE_KINDS);
	struct kerf_pod p = { 0 };
	uint32_t count = 1, min_count;
	enum kerf_topology topo = KERF_TOPO_ANY;
	int cls[3] = { sc->cls_prod, sc->cls_batch, sc->cls_low };
	int64_t cpu = cpu_per_gpu[kerf_rng_below(r, 4)];
	int64_t mem = mem_per_gpu[kerf_rng_below(r, 4)];

	if (kind == SHAPE_FRACTION) {
		p.nr_gpus = 1;
		p.gpu_milli = chance(r, 50) ? 250 : 500;
		p.gpu_mem_mib = p.gpu_milli == 250 ? 10240 : 20480 << kerf_rng_below(r, 2);
		p.cpu_milli = 2000 + 1000 * (int64_t)kerf_rng_below(r, 3);
		p.mem_mib = (int64_t)16384 << kerf_rng_below(r, 2);
	} else {
		static const uint8_t gpus_of[NR_SHAPE_KINDS] = {
			[SHAPE_GPU1] = 1, [SHAPE_GPU2] = 2, [SHAPE_GPU4] = 4,
			[SHAPE_GPU8] = 8,
		};

		p.nr_gpus = kind == SHAPE_GANG ? (chance(r, 70) ? 8 : 4)
					       : gpus_of[kind];
		p.gpu_milli = KERF_GPU_MILLI;
		p.cpu_milli = cpu * p.nr_gpus;
		p.mem_mib = mem * p.nr_gpus;
	}
	if (kind == SHAPE_GANG) {
		unsigned t = (unsigned)kerf_rng_below(r, 100);

		count = gang_pods[pick(r, gang_w, 4)];
		if (t < 70)
			topo = KERF_TOPO_ANY;
		else if (t < 80)
			topo = KERF_TOPO_PACK;
		else if (t < 90)
			topo = KERF_TOPO_NVLINK;
		else
			topo = count * p.nr_gpus <= NODE_GPUS ? KERF_TOPO_NODE
							      : KERF_TOPO_ANY;
	}
	min_count = kind == SHAPE_GANG && chance(r, 10) ? count / 2 : count;
	if (chance(r, 20))
		p.model_mask = (uint64_t)1 << pick(r, model_w, NR_MODELS);
	else if (chance(r, 12))
		p.model_mask = 0x3; /* H100 | A100 */
	memset(w, 0, sizeof(*w));
	w->sets[0] = (struct kerf_podset){ .req = p, .count = count };
	w->nr_sets = 1;
	w->min_count = min_count;
	w->topology = topo;
	w->class_idx = cls[pick(r, kind <= SHAPE_GPU2 ? prod_w : train_w, 3)];
}

static int draw_templates(struct scenario *sc, unsigned shapes,
			  struct kerf_err *err)
{
	sc->shapes = shapes;
	if (!shapes)
		return 0;
	sc->templates = calloc((size_t)NR_LEAVES * shapes, sizeof(*sc->templates));
	if (!sc->templates)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < (size_t)NR_LEAVES * shapes; i++)
		draw_shape(sc, &sc->templates[i]);
	return 0;
}

/* A workload of the team with leaf index leaf, from its templates. */
static void draw_workload(struct scenario *sc, int leaf,
			  struct kerf_workload *w)
{
	if (sc->shapes) {
		unsigned weights[MAX_SHAPES];

		for (unsigned k = 0; k < sc->shapes; k++)
			weights[k] = 1000000u / (k + 1);
		*w = sc->templates[(size_t)leaf * sc->shapes +
				   pick(&sc->rng, weights, sc->shapes)];
	} else {
		draw_shape(sc, w);
	}
	w->tenant = sc->leaves[leaf];
}

/* Submit w under key "w<id>". */
static int submit(struct scenario *sc, const struct kerf_workload *w,
		  int64_t at_ms, struct kerf_err *err)
{
	char key[32];

	snprintf(key, sizeof(key), "w%u", sc->st.next_id);
	return kerf_state_submit(&sc->st, key, w, at_ms, err);
}

static void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	if (sc->have_policy) {
		kerf_sched_release(&sc->sched);
		kerf_policy_release(&sc->pol);
	}
	if (sc->have_state)
		kerf_state_release(&sc->st);
	kerf_decisions_release(&sc->dec);
	free(sc->templates);
	free(sc);
}

static int run_cycle(struct scenario *sc, int64_t now_ms,
		     struct kerf_cycle_stats *stats, struct kerf_err *err)
{
	kerf_decisions_clear(&sc->dec);
	return kerf_cycle_run(&sc->sched, &sc->st, now_ms, &sc->dec, stats, err);
}

static size_t count_state(const struct kerf_state *st, enum kerf_wl_state s)
{
	size_t n = 0;

	for (size_t i = 0; i < st->nr_wl; i++)
		n += st->wl[i]->state == s;
	return n;
}

/* Submit work by nominal share and admit it until fill_pct of GPUs run. */
static int fill(struct scenario *sc, int fill_pct, struct kerf_err *err)
{
	struct kerf_cluster *c = &sc->st.cluster;
	int64_t cap = kerf_cluster_gpu_milli_capacity(c);
	int64_t target = cap * fill_pct / 100;
	unsigned weights[NR_LEAVES];
	int64_t total_nominal = 0;

	for (int l = 0; l < NR_LEAVES; l++)
		total_nominal += sc->leaf_nominal[l];
	for (int l = 0; l < NR_LEAVES; l++)
		weights[l] = (unsigned)(sc->leaf_nominal[l] * 100000 /
					(total_nominal ? total_nominal : 1));
	for (int round = 0; round < FILL_ROUNDS; round++) {
		int64_t now = round * MINUTE_MS;
		int64_t gap = target - kerf_cluster_gpu_milli_used(c);
		struct kerf_cycle_stats stats;
		int rc;

		if (gap <= cap / 200)
			break;
		for (int misses = 0; gap > 0 && misses < 1000;) {
			struct kerf_workload w;
			int leaf = (int)pick(&sc->rng, weights, NR_LEAVES);

			draw_workload(sc, leaf, &w);
			/* near the target: only what could close the gap */
			if (kerf_workload_gpu_milli(&w) > gap + 8 * KERF_GPU_MILLI) {
				misses++;
				continue;
			}
			misses = 0;
			rc = submit(sc, &w, now, err);
			if (rc < 0)
				return rc;
			gap -= kerf_workload_gpu_milli(&w);
		}
		rc = run_cycle(sc, now, &stats, err);
		if (rc < 0)
			return rc;
	}
	sc->fill_left = count_state(&sc->st, KERF_WL_PENDING);
	sc->nr_running = count_state(&sc->st, KERF_WL_RUNNING);
	sc->fill_gpu_pct = 100.0 * (double)kerf_cluster_gpu_milli_used(c) /
			   (double)cap;
	return 0;
}

static int submit_pending(struct scenario *sc, size_t nr, struct kerf_err *err)
{
	for (size_t i = 0; i < nr; i++) {
		struct kerf_workload w;
		int leaf = (int)kerf_rng_below(&sc->rng, NR_LEAVES);
		int rc;

		draw_workload(sc, leaf, &w);
		rc = submit(sc, &w, PENDING_AT_MS - (int64_t)(nr - i), err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Finish nr running workloads at random (not victims on their way out). */
static int finish_some(struct scenario *sc, unsigned nr, int64_t now_ms,
		       struct kerf_err *err)
{
	struct kerf_state *st = &sc->st;
	uint32_t *ids = malloc((st->nr_wl ? st->nr_wl : 1) * sizeof(*ids));
	size_t n = 0;
	int rc = 0;

	if (!ids)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < st->nr_wl; i++)
		if (st->wl[i]->state == KERF_WL_RUNNING &&
		    kerf_wl_pre(st->wl[i])->preempt_deadline_ms == 0)
			ids[n++] = st->wl[i]->id;
	kerf_rng_shuffle(&sc->rng, ids, n, sizeof(*ids));
	for (size_t i = 0; i < n && i < nr && rc == 0; i++)
		rc = kerf_state_finish(st, ids[i], now_ms, err);
	free(ids);
	return rc;
}

static int scenario_new(const struct bench_opts *o, size_t nr_nodes,
			size_t nr_pending, struct scenario **out,
			struct kerf_err *err)
{
	struct scenario *sc = calloc(1, sizeof(*sc));
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	int rc;

	if (!sc)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_rng_seed(&sc->rng, o->seed);
	rc = build_cluster(&c, nr_nodes, err);
	if (rc < 0)
		goto fail;
	rc = build_tenants(sc, &c, &tt, err);
	if (rc == 0)
		rc = build_classes(sc, &cl, err);
	if (rc == 0)
		rc = kerf_state_init(&sc->st, &c, &tt, &cl, err);
	if (rc < 0) {
		kerf_cluster_release(&c);
		kerf_tenants_release(&tt);
		goto fail;
	}
	sc->have_state = true;
	rc = kerf_tenants_validate(&sc->st.tenants, &sc->st.cluster, err);
	if (rc < 0)
		goto fail;
	rc = kerf_policy_build(&sc->pol, "kerf",
			       &(struct kerf_policy_args){
				       .cluster = &sc->st.cluster,
				       .seed = o->seed,
			       },
			       err);
	if (rc < 0)
		goto fail;
	kerf_sched_init(&sc->sched, &sc->pol);
	sc->have_policy = true;
	rc = draw_templates(sc, o->shapes, err);
	if (rc == 0)
		rc = fill(sc, o->fill_pct, err);
	if (rc == 0)
		rc = submit_pending(sc, nr_pending, err);
	if (rc < 0)
		goto fail;
	*out = sc;
	return 0;
fail:
	scenario_free(sc);
	return rc;
}

static int timed_cycle(struct scenario *sc, int64_t now_ms, struct sample *out,
		       struct kerf_err *err)
{
	struct kerf_sched_stats before = sc->sched.stats;
	double t0, t1, c0, c1;
	int rc;

	c0 = cpu_now_s();
	t0 = now_s();
	rc = run_cycle(sc, now_ms, &out->stats, err);
	t1 = now_s();
	c1 = cpu_now_s();
	out->wall_ms = (t1 - t0) * 1e3;
	out->cpu_ms = (c1 - c0) * 1e3;
	out->sched = (struct kerf_sched_stats){
		.nr_selects = sc->sched.stats.nr_selects - before.nr_selects,
		.nr_node_evals = sc->sched.stats.nr_node_evals - before.nr_node_evals,
		.nr_cache_hits = sc->sched.stats.nr_cache_hits - before.nr_cache_hits,
	};
	return rc;
}

/*
 * 1 % of the nodes churn: each is removed (its work requeued) and a new
 * node of the same shape, under a new name, is added in its place.
 */
static int churn(struct scenario *sc, int64_t now_ms, uint64_t *seq,
		 struct kerf_err *err)
{
	struct kerf_cluster *c = &sc->st.cluster;
	size_t n = c->nr_nodes / 100 ? c->nr_nodes / 100 : 1;

	for (size_t k = 0; k < n; k++) {
		uint32_t slot = c->order[kerf_rng_below(&sc->rng, c->nr_nodes)];
		struct kerf_node_spec spec;
		char name[32];
		int rc;

		kerf_cluster_node_spec(c, slot, &spec);
		spec.mig_layout = NULL;
		snprintf(name, sizeof(name), "churn%08" PRIu64, ++*seq);
		spec.name = name;
		spec.rank = c->next_rank + *seq;
		kerf_decisions_clear(&sc->dec);
		rc = kerf_state_node_remove(&sc->st, slot, now_ms, &sc->dec, err);
		if (rc == 0)
			rc = kerf_state_node_upsert(&sc->st, &spec, now_ms, &sc->dec, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One repetition: build, then the timed cycles into s[kind]. */
static int run_once(const struct bench_opts *o, size_t nr_nodes,
		    size_t nr_pending, struct sample *s, struct scenario **keep,
		    struct kerf_err *err)
{
	struct scenario *sc = NULL;
	int64_t now = PENDING_AT_MS + 1000;
	uint64_t churned = 0;
	int rc = scenario_new(o, nr_nodes, nr_pending, &sc, err);

	if (rc < 0)
		return rc;
	rc = timed_cycle(sc, now, &s[CYCLE_FIRST], err);
	if (rc < 0)
		goto out;
	now += 10000;
	rc = timed_cycle(sc, now, &s[CYCLE_STEADY], err);
	if (rc < 0)
		goto out;
	now += 10000;
	rc = finish_some(sc, o->finish, now, err);
	if (rc < 0)
		goto out;
	rc = timed_cycle(sc, now, &s[CYCLE_FREED], err);
	if (rc < 0)
		goto out;
	/* a steady state with churn: three rounds, the fourth is timed */
	for (int round = 0; round < 4 && rc == 0; round++) {
		now += 10000;
		rc = churn(sc, now, &churned, err);
		if (rc == 0)
			rc = round < 3 ? run_cycle(sc, now, &s[CYCLE_CHURN].stats, err)
				       : timed_cycle(sc, now, &s[CYCLE_CHURN], err);
	}
	if (rc < 0)
		goto out;
	rc = kerf_state_check(&sc->st, err);
out:
	if (rc == 0 && keep) {
		*keep = sc;
		return 0;
	}
	scenario_free(sc);
	return rc;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool same_stats(const struct kerf_cycle_stats *a,
		       const struct kerf_cycle_stats *b)
{
	return a->nr_pending == b->nr_pending &&
	       a->nr_admitted == b->nr_admitted && a->nr_quota == b->nr_quota &&
	       a->nr_capacity == b->nr_capacity && a->nr_other == b->nr_other &&
	       a->nr_placements == b->nr_placements &&
	       a->nr_preempted == b->nr_preempted;
}

static double cache_hit_pct(const struct kerf_sched_stats *st)
{
	uint64_t visits = st->nr_cache_hits + st->nr_node_evals;

	return visits ? 100.0 * (double)st->nr_cache_hits / (double)visits : 0.0;
}

static void print_head(void)
{
	printf("%6s %7s %-6s %8s %8s %8s %4s | %7s %5s %5s %5s %5s %5s %5s | %7s %9s %6s | %8s\n",
	       "nodes", "pending", "cycle", "med ms", "max ms", "cpu ms", "goal",
	       "pend", "admit", "quota", "capac", "other", "place", "preem",
	       "selects", "node eval", "cache", "peak RSS");
}

static void print_row(const struct bench_row *r)
{
	printf("%6zu %7zu %-6s %8.2f %8.2f %8.2f %4s | %7u %5u %5u %5u %5u %5u %5u | %7" PRIu64 " %9" PRIu64 " %5.1f%% | %4ld MiB%s\n",
	       r->nr_nodes, r->nr_pending, cycle_names[r->kind], r->median_ms,
	       r->max_ms, r->cpu_median_ms,
	       r->median_ms <= GOAL_MS ? "ok" : "OVER", r->stats.nr_pending,
	       r->stats.nr_admitted, r->stats.nr_quota, r->stats.nr_capacity,
	       r->stats.nr_other, r->stats.nr_placements, r->stats.nr_preempted,
	       r->sched.nr_selects, r->sched.nr_node_evals,
	       cache_hit_pct(&r->sched), r->peak_rss_kib / 1024,
	       r->stats_vary ? "  (stats vary)" : "");
	fflush(stdout);
}

static int print_json(const struct bench_row *r, const struct bench_opts *o)
{
	json_t *j = json_object();
	int rc;

	if (!j)
		return -1;
	json_object_set_new(j, "nodes", json_integer((json_int_t)r->nr_nodes));
	json_object_set_new(j, "gpus_per_node", json_integer(NODE_GPUS));
	json_object_set_new(j, "pending_submitted",
			    json_integer((json_int_t)r->nr_pending));
	json_object_set_new(j, "cycle", json_string(cycle_names[r->kind]));
	json_object_set_new(j, "policy", json_string("kerf"));
	json_object_set_new(j, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(j, "shapes_per_team", json_integer(o->shapes));
	json_object_set_new(j, "repeat", json_integer(r->nr_samples));
	json_object_set_new(j, "median_ms", json_real(r->median_ms));
	json_object_set_new(j, "min_ms", json_real(r->min_ms));
	json_object_set_new(j, "max_ms", json_real(r->max_ms));
	json_object_set_new(j, "cpu_median_ms", json_real(r->cpu_median_ms));
	json_object_set_new(j, "goal_ms", json_integer(GOAL_MS));
	json_object_set_new(j, "within_goal", json_boolean(r->median_ms <= GOAL_MS));
	json_object_set_new(j, "fill_gpu_pct", json_real(r->fill_gpu_pct));
	json_object_set_new(j, "fill_left_pending",
			    json_integer((json_int_t)r->fill_left));
	json_object_set_new(j, "running_after_fill",
			    json_integer((json_int_t)r->nr_running));
	json_object_set_new(j, "finished_before_freed", json_integer(o->finish));
	json_object_set_new(j, "nr_pending", json_integer(r->stats.nr_pending));
	json_object_set_new(j, "nr_admitted", json_integer(r->stats.nr_admitted));
	json_object_set_new(j, "nr_quota", json_integer(r->stats.nr_quota));
	json_object_set_new(j, "nr_capacity", json_integer(r->stats.nr_capacity));
	json_object_set_new(j, "nr_other", json_integer(r->stats.nr_other));
	json_object_set_new(j, "nr_placements",
			    json_integer(r->stats.nr_placements));
	json_object_set_new(j, "nr_preempted", json_integer(r->stats.nr_preempted));
	json_object_set_new(j, "stats_vary", json_boolean(r->stats_vary));
	json_object_set_new(j, "selects",
			    json_integer((json_int_t)r->sched.nr_selects));
	json_object_set_new(j, "node_evals",
			    json_integer((json_int_t)r->sched.nr_node_evals));
	json_object_set_new(j, "cache_hits",
			    json_integer((json_int_t)r->sched.nr_cache_hits));
	json_object_set_new(j, "peak_rss_kib",
			    json_integer((json_int_t)r->peak_rss_kib));
	rc = json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(j);
	return rc;
}

/* Every repetition of one size, then its rows. */
static int bench_size(const struct bench_opts *o, size_t nr_nodes,
		      size_t nr_pending, struct kerf_err *err)
{
	struct sample (*s)[NR_CYCLE_KINDS] = calloc(o->repeat, sizeof(*s));
	struct scenario *last = NULL;
	double wall[MAX_REPEAT], cpu[MAX_REPEAT];
	int rc = 0;

	if (!s)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (unsigned k = 0; k < o->repeat && rc == 0; k++) {
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r%zu nodes, %zu pending: run %u/%u ...",
				nr_nodes, nr_pending, k + 1, o->repeat);
		rc = run_once(o, nr_nodes, nr_pending, s[k],
			      k + 1 == o->repeat ? &last : NULL, err);
	}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	if (rc < 0)
		goto out;
	for (int kind = 0; kind < NR_CYCLE_KINDS; kind++) {
		struct bench_row row = {
			.nr_nodes = nr_nodes, .nr_pending = nr_pending,
			.kind = (enum cycle_kind)kind, .nr_samples = o->repeat,
			.stats = s[0][kind].stats, .sched = s[0][kind].sched,
			.fill_left = last->fill_left,
			.fill_gpu_pct = last->fill_gpu_pct,
			.nr_running = last->nr_running,
			.peak_rss_kib = peak_rss_kib(),
		};

		for (unsigned k = 0; k < o->repeat; k++) {
			wall[k] = s[k][kind].wall_ms;
			cpu[k] = s[k][kind].cpu_ms;
			row.stats_vary |= !same_stats(&s[k][kind].stats,
						      &row.stats);
		}
		row.median_ms = median(wall, o->repeat);
		row.min_ms = wall[0];
		row.max_ms = wall[o->repeat - 1];
		row.cpu_median_ms = median(cpu, o->repeat);
		if (o->json)
			print_json(&row, o);
		else
			print_row(&row);
	}
	if (!o->json)
		printf("%6zu nodes: %.1f %% of GPUs in use after the fill, %zu running, %zu fill workloads left pending\n",
		       nr_nodes, last->fill_gpu_pct, last->nr_running,
		       last->fill_left);
out:
	scenario_free(last);
	free(s);
	return rc;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pending", required_argument, NULL, 'p' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "finish", required_argument, NULL, 'f' },
		{ "shapes", required_argument, NULL, 'S' },
		{ "fill", required_argument, NULL, 'F' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kerf_err err = { 0 };
	uint64_t v;
	int c, n;

	o->nodes[0] = 5000;
	o->nr_nodes = 1;
	o->pending[0] = 10000;
	o->nr_pending = 1;
	o->repeat = 5;
	o->finish = 25;
	o->shapes = 12;
	o->fill_pct = 90;
	o->seed = 42;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = parse_list("--nodes", optarg, o->nodes, 1, MAX_NODES,
				       &err);
			if (n < 0)
				goto bad_option;
			o->nr_nodes = (size_t)n;
			break;
		case 'p':
			n = parse_list("--pending", optarg, o->pending, 0,
				       MAX_PENDING, &err);
			if (n < 0)
				goto bad_option;
			o->nr_pending = (size_t)n;
			break;
		case 'r':
			if (kerf_parse_u64_opt("--repeat", optarg, 1, MAX_REPEAT,
					       &v, &err) < 0)
				goto bad_option;
			o->repeat = (unsigned)v;
			break;
		case 'f':
			if (kerf_parse_u64_opt("--finish", optarg, 0, UINT32_MAX,
					       &v, &err) < 0)
				goto bad_option;
			o->finish = (unsigned)v;
			break;
		case 'S':
			if (kerf_parse_u64_opt("--shapes", optarg, 0, MAX_SHAPES,
					       &v, &err) < 0)
				goto bad_option;
			o->shapes = (unsigned)v;
			break;
		case 'F':
			if (kerf_parse_u64_opt("--fill", optarg, 0, 100, &v,
					       &err) < 0)
				goto bad_option;
			o->fill_pct = (int)v;
			break;
		case 's':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					       &o->seed, &err) < 0)
				goto bad_option;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			kerf_opt_error("bench_cycle", c, argv);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("bench_cycle", argv[optind], NULL);
		return 2;
	}
	if (o->nr_pending != 1 && o->nr_pending != o->nr_nodes) {
		fprintf(stderr, "bench_cycle: --pending: give one value or one per --nodes size (%zu)\n",
			o->nr_nodes);
		return 2;
	}
	return 0;
bad_option:
	fprintf(stderr, "bench_cycle: %s\n", err.msg);
	return 2;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	struct kerf_err err = { 0 };
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	fprintf(o.json ? stderr : stdout,
		"bench_cycle: nodes of %d GPUs (%s %d %%, %s %d %%, %s %d %%), %" PRId64 " cpu_milli, %" PRId64 " MiB; %d %% of GPUs filled first\n"
		"bench_cycle: %d tenants (%d orgs x %d teams), 3 classes, policy kerf, %u templates per team%s, seed %" PRIu64 "\n"
		"bench_cycle: timed: kerf_cycle_run only, %u repetitions (median, max); goal %d ms\n",
		NODE_GPUS, models[0].name, models[0].share_pct, models[1].name,
		models[1].share_pct, models[2].name, models[2].share_pct,
		NODE_CPU_MILLI, NODE_MEM_MIB, o.fill_pct, NR_LEAVES, NR_ORGS,
		NR_TEAMS, o.shapes, o.shapes ? "" : " (all drawn afresh)",
		o.seed, o.repeat, GOAL_MS);
	if (!o.json)
		print_head();
	for (size_t i = 0; i < o.nr_nodes && rc == 0; i++)
		rc = bench_size(&o, o.nodes[i],
				o.pending[o.nr_pending == 1 ? 0 : i], &err);
	if (rc < 0)
		fprintf(stderr, "bench_cycle: %s\n", err.msg);
	else if (!o.json)
		printf("(pend..preem: struct kerf_cycle_stats of the cycle; selects, node eval, cache: the sched's, in the cycle; peak RSS: process high-water mark)\n");
	return rc < 0 ? 1 : 0;
}
