/*
 * kerf: the default placement policy.  EXPERIMENTAL v0 — see docs/placement.md.
 *
 * Fragmentation-aware like FGD, but against a workload distribution learned
 * online from the pods that have arrived (nothing about future pods).
 */
#include "core/plugins/plugins.h"

#include <stdlib.h>
#include <string.h>

#include "core/gpu_pick.h"
#include "core/workload_model.h"

struct kerf_opts {
	int mem;        /* memory-aware fragment measure */
	int exact;      /* untruncated fragment delta */
	int online;     /* learn the distribution (else use args->dist) */
	int coverage;   /* percent of pods the typical set covers */
	int rebuild;    /* longest gap between rebuilds, pods */
	int ss;         /* sum-of-squares gap balancing for fractions */
	int quant;      /* with exact: milli-GPU per score step */
	int tie;        /* secondary order: 0 rank, 1 least free GPU, 2 least free cpu */
	int warm;       /* pods seen before the learned distribution is used */
	int multi;      /* multi-copy fragment measure */
	int gw;         /* weigh typical pods by GPU request */
	int mw;         /* weight of the multi-copy term, percent */
	int scarce;     /* weigh typical pods by how few nodes can host them */
};

struct kerf_priv {
	struct kerf_opts o;
	struct kerf_workload_model model;
	const struct kerf_pod_dist *given;
	int32_t gaps[KERF_GPU_MILLI + 1];   /* GPUs by free milli */
	const struct kerf_cluster *cluster;
};

static int parse_opts(struct kerf_opts *o, const char *s, struct kerf_err *err)
{
	*o = (struct kerf_opts){ .mem = 0, .exact = 0, .online = 1,
				 .coverage = 95, .rebuild = 1024,
				 .mw = 100 };
	while (s && *s) {
		char key[32];
		const char *eq = strchr(s, '='), *comma;
		long v;
		char *end;

		if (!eq || (size_t)(eq - s) >= sizeof(key))
			return kerf_err_set(err, -KERF_EINVAL,
					    "kerf options: expected key=value in '%s'", s);
		memcpy(key, s, (size_t)(eq - s));
		key[eq - s] = '\0';
		v = strtol(eq + 1, &end, 10);
		comma = strchr(eq, ',');
		if (end == eq + 1 || (*end && *end != ','))
			return kerf_err_set(err, -KERF_EINVAL,
					    "kerf option '%s': value is not an integer", key);
		if (!strcmp(key, "mem"))
			o->mem = (int)v;
		else if (!strcmp(key, "exact"))
			o->exact = (int)v;
		else if (!strcmp(key, "online"))
			o->online = (int)v;
		else if (!strcmp(key, "coverage") && v >= 1 && v <= 100)
			o->coverage = (int)v;
		else if (!strcmp(key, "rebuild") && v >= 1)
			o->rebuild = (int)v;
		else if (!strcmp(key, "ss"))
			o->ss = (int)v;
		else if (!strcmp(key, "quant") && v >= 1)
			o->quant = (int)v;
		else if (!strcmp(key, "tie"))
			o->tie = (int)v;
		else if (!strcmp(key, "warm") && v >= 0)
			o->warm = (int)v;
		else if (!strcmp(key, "multi"))
			o->multi = (int)v;
		else if (!strcmp(key, "gw"))
			o->gw = (int)v;
		else if (!strcmp(key, "mw"))
			o->mw = (int)v;
		else if (!strcmp(key, "scarce"))
			o->scarce = (int)v;
		else
			return kerf_err_set(err, -KERF_EINVAL,
					    "kerf option '%s': unknown or out of range", key);
		s = comma ? comma + 1 : "";
	}
	return 0;
}

static int kerf_create(void **priv, const struct kerf_policy_args *args,
		       struct kerf_err *err)
{
	struct kerf_priv *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	rc = parse_opts(&k->o, args->options, err);
	if (rc == 0 && !k->o.online) {
		if (!args->dist || args->dist->nr == 0)
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "kerf: online=0 needs the typical pods");
		k->given = args->dist;
	}
	if (rc == 0)
		rc = kerf_workload_model_init(&k->model, k->o.coverage,
					      k->o.mem == 1 ? KERF_DIST_KEEP_MEM :
					      k->o.mem == 2 ? KERF_DIST_MEAN_MEM : 0,
					      k->o.rebuild, 1u << 16);
	if (rc < 0) {
		kerf_workload_model_release(&k->model);
		free(k);
		return kerf_err_set(err, rc, "kerf: %s", kerf_strerror(rc));
	}
	k->model.weigh_gpu = k->o.gw;
	k->cluster = args->cluster;
	for (size_t i = 0; i < args->cluster->nr_nodes; i++) {
		const struct kerf_node *n = &args->cluster->nodes[i];

		for (int g = 0; g < n->nr_gpus; g++)
			k->gaps[n->gpu_free_milli[g]]++;
	}
	*priv = k;
	return 0;
}

static bool kerf_is_pure(const void *priv)
{
	const struct kerf_priv *k = priv;

	return !k->o.ss;
}

static void kerf_reserve(void *priv, const struct kerf_cluster *c,
			 const struct kerf_node *n, const struct kerf_pod *p,
			 uint16_t gpus)
{
	struct kerf_priv *k = priv;

	(void)c;
	for (int g = 0; g < n->nr_gpus; g++) {
		if (!(gpus >> g & 1))
			continue;
		k->gaps[n->gpu_free_milli[g] + p->gpu_milli]--;
		k->gaps[n->gpu_free_milli[g]]++;
	}
}

/* Increase of sum over partial gaps of N(gap)^2 when s goes into gap. */
static int64_t ss_delta(const struct kerf_priv *k, int gap, int s)
{
	int64_t d = 0;

	if (gap < KERF_GPU_MILLI)
		d += 1 - 2 * (int64_t)k->gaps[gap];
	if (gap - s > 0)
		d += 2 * (int64_t)k->gaps[gap - s] + 1;
	return d;
}

static void kerf_destroy(void *priv)
{
	struct kerf_priv *k = priv;

	kerf_workload_model_release(&k->model);
	free(k);
}

/* Could an empty n host m? */
static bool can_host(const struct kerf_node *n, const struct kerf_pod *m)
{
	if (m->nr_gpus > 0 &&
	    (n->nr_gpus < m->nr_gpus ||
	     (m->model_mask && !(m->model_mask >> n->model & 1))))
		return false;
	return n->cpu_milli >= m->cpu_milli && n->mem_mib >= m->mem_mib;
}

/* Scale each typical pod by (nodes / nodes that could host it). */
static void weigh_scarcity(struct kerf_priv *k)
{
	const struct kerf_cluster *c = k->cluster;
	struct kerf_pod_dist *d = &k->model.dist;

	for (size_t i = 0; i < d->nr; i++) {
		int64_t hosts = 0, nodes = (int64_t)c->nr_nodes;

		for (size_t j = 0; j < c->nr_nodes; j++)
			hosts += can_host(&c->nodes[j], &d->entries[i].pod);
		if (hosts == 0)
			hosts = 1;
		if (k->o.scarce == 1)
			d->entries[i].weight = d->entries[i].weight * nodes / hosts;
		else
			d->entries[i].weight = d->entries[i].weight *
					       (nodes + hosts) / (2 * hosts);
	}
}

static bool kerf_observe(void *priv, const struct kerf_pod *p)
{
	struct kerf_priv *k = priv;
	bool rebuilt;

	if (!k->o.online)
		return false;
	rebuilt = kerf_workload_model_observe(&k->model, p);
	if (rebuilt && k->o.scarce)
		weigh_scarcity(k);
	return rebuilt || k->model.nr_seen == k->o.warm;
}

/* The fragment measure: FGD's, the multi-copy one, or their sum. */
static int64_t frag_of(const struct kerf_priv *k, const struct kerf_pod_dist *d,
		       const struct kerf_frag_view *v)
{
	unsigned base = k->o.mem ? KERF_FRAG_MEM : 0;

	if (k->o.multi == 2)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI);
	if (k->o.multi == 5)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_NO_CPU);
	if (k->o.multi == 6)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_NO_REM) * k->o.mw / 100;
	if (k->o.multi == 7 || k->o.multi == 8)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_NO_REM |
					      (k->o.multi == 7 ? KERF_FRAG_FRACTION_ONLY
							       : KERF_FRAG_SMALL_ONLY)) *
			       k->o.mw / 100;
	if (k->o.multi == 9)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_STRANDED) *
			       k->o.mw / 100;
	if (k->o.multi == 3)
		return kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_IDLE_USABLE);
	if (k->o.multi == 4)
		return kerf_frag_amount(d, v, base) +
		       kerf_frag_amount(d, v, base | KERF_FRAG_MULTI |
					      KERF_FRAG_IDLE_USABLE);
	return kerf_frag_amount(d, v, base | (k->o.multi ? KERF_FRAG_MULTI : 0));
}

static int64_t strand_of(const struct kerf_priv *k, const struct kerf_pod_dist *d,
			 const struct kerf_frag_view *v)
{
	unsigned base = k->o.mem ? KERF_FRAG_MEM : 0;

	return kerf_frag_amount(d, v, base | KERF_FRAG_MULTI | KERF_FRAG_STRANDED);
}

/* Secondary key: less stranding is better, 0..65535. */
static int32_t strand_key(const struct kerf_pod_dist *d, int64_t delta)
{
	int64_t v = 32768 + delta / d->total_weight;

	return (int32_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
}

static int32_t gain(const struct kerf_priv *k, const struct kerf_pod_dist *d,
		    int64_t delta)
{
	if (!k->o.exact)
		return kerf_fgd_score(delta, d->total_weight);
	if (k->o.quant) {
		int64_t q = (int64_t)k->o.quant * d->total_weight;
		int64_t v = delta >= 0 ? delta / q : -((-delta + q - 1) / q);

		return (int32_t)v;
	}
	return (int32_t)(delta * 1024 / d->total_weight);
}

static int32_t frag_score(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t *gpus)
{
	struct kerf_priv *k = priv;
	const struct kerf_pod_dist *d = k->o.online ? &k->model.dist : k->given;
	struct kerf_frag_view v, after;
	int32_t best = INT32_MIN;
	int64_t f0, s0;

	(void)c;
	if (d->nr == 0 || (k->o.online && k->model.nr_seen < k->o.warm))
		return 0;
	kerf_frag_view_of(&v, n);
	f0 = frag_of(k, d, &v);
	s0 = k->o.multi == 10 ? strand_of(k, d, &v) : 0;
	if (!kerf_pod_is_fraction(p)) {
		uint16_t mask = kerf_gpus_best_fit(n, p);

		after = v;
		kerf_frag_view_sub(&after, p, mask);
		*gpus = mask;
		if (k->o.multi == 10)
			return gain(k, d, f0 - frag_of(k, d, &after)) * 65536 +
			       strand_key(d, s0 - strand_of(k, d, &after));
		return gain(k, d, f0 - frag_of(k, d, &after));
	}
	for (int g = 0; g < n->nr_gpus; g++) {
		int32_t s;
		int seen = 0;

		if (!kerf_gpu_fits(n, g, p))
			continue;
		for (int h = 0; h < g && !seen; h++)
			seen = kerf_gpu_fits(n, h, p) &&
			       n->gpu_free_milli[h] == n->gpu_free_milli[g];
		if (seen)
			continue;
		after = v;
		kerf_frag_view_sub(&after, p, (uint16_t)(1u << g));
		s = gain(k, d, f0 - frag_of(k, d, &after));
		if (k->o.multi == 10)
			s = s * 65536 + strand_key(d, s0 - strand_of(k, d, &after));
		if (k->o.ss) {
			int64_t ssd = ss_delta(k, n->gpu_free_milli[g], p->gpu_milli);

			s = (int32_t)(-ssd * k->o.ss * 4096 + s);
		}
		if (s > best) {
			best = s;
			*gpus = (uint16_t)(1u << g);
		}
	}
	return best == INT32_MIN ? 0 : best;
}

static int32_t kerf_score(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t *gpus)
{
	struct kerf_priv *k = priv;
	int32_t s = frag_score(priv, c, n, p, gpus);
	int64_t sec = 0;

	if (!k->o.tie)
		return s;
	if (k->o.tie == 1)
		sec = 16000 - (n->gpu_free_milli_sum - kerf_pod_gpu_milli_total(p));
	else if (k->o.tie == 2)
		sec = (128000 - (n->cpu_free_milli - p->cpu_milli)) / 4;
	else if (k->o.tie == 3)
		sec = 16 - n->nr_gpus_idle;
	else if (k->o.tie == 5 || k->o.tie == 6) {
		const struct kerf_pod_dist *d = &k->model.dist;
		int64_t cap = 0;

		for (size_t i = 0; i < d->nr; i++)
			if (can_host(n, &d->entries[i].pod))
				cap += d->entries[i].weight *
				       (k->o.tie == 5 ? kerf_pod_gpu_milli_total(&d->entries[i].pod) : 1000);
		sec = d->total_weight ? 65535 - cap * 8 / d->total_weight : 0;
	}
	if (sec < 0)
		sec = 0;
	if (sec > 65535)
		sec = 65535;
	return (int32_t)(s * 65536 + sec);
}

const struct kerf_plugin kerf_plugin_kerf = {
	.name = "kerf",
	.flags = KERF_PLUGIN_PURE,
	.create = kerf_create,
	.destroy = kerf_destroy,
	.is_pure = kerf_is_pure,
	.observe = kerf_observe,
	.score = kerf_score,
	.reserve = kerf_reserve,
};
