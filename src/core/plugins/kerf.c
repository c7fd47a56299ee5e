/*
 * kerf: the default placement policy.  See docs/placement.md for the
 * measurements behind each choice.
 *
 * Like FGD it places a pod where the expected fragmentation of the node grows
 * least, scores the change as FGD does (floor(100 * sigmoid(-dF / 1000)),
 * whose coarse steps let the fixed node rank pack within a step), and lets a
 * fraction try each GPU that fits.  It differs in four ways:
 *
 * 1. It knows nothing of pods that have not arrived.  The typical pods are
 *    learned online from arrivals (core/workload_model.h); FGD is handed
 *    them from the whole trace in advance.
 * 2. Memory counts.  Each typical pod carries the mean memory of its kind,
 *    and a node without that memory free cannot host it (FGD is blind to
 *    memory, so it strands GPUs on nodes whose memory is gone).
 * 3. A second measure, C (kerf_frag_capacity), counts the idle GPU capacity
 *    that CPU or memory would strand before the GPUs run out: F asks whether
 *    one more typical pod fits, C how much of the node's GPU such pods could
 *    still reach.  The score uses dF + cap% * dC.
 * 4. Model constraints count.  When typical pods name GPU models (gpu_spec),
 *    each weighs in F and C by how much it depends on the idle capacity of
 *    its models (core/spec_weight.h): a T4-only pod whose T4s will run out
 *    weighs as much more as T4s are scarcer than GPUs at large, so pods that
 *    may go anywhere leave the T4s to it.  The weights follow the idle
 *    capacity: they are taken again whenever GPU worth 1 % of the capacity
 *    has been bound or unbound (and the scores cached against the old ones
 *    dropped).  Without model constraints nothing changes.
 *
 * Options (key=value, for ablations; defaults are the policy):
 *   online=1   0 = use the trace's typical pods, as FGD (an oracle)
 *   mem=1      0 = ignore memory, as FGD
 *   cap=10     weight of C in percent; 0 = F alone
 *   spec=1     0 = typical pods weigh by arrivals alone, as FGD
 *   coverage=95, rebuild=1024, adopt=10 (per mille): see workload_model.h
 */
#include "core/plugins/plugins.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "base/parse.h"
#include "core/spec_weight.h"
#include "core/workload_model.h"

struct kerf_opts {
	int online;
	int mem;
	int cap;
	int coverage;
	int rebuild;
	int adopt;
	int spec;
};

/* The measure of a node as it stands, kept until the node changes. */
struct node_measure {
	uint32_t stamp;          /* node stamp; 0 = empty */
	uint32_t generation;     /* distribution it was taken against */
	int64_t value;
};

struct kerf_priv {
	struct kerf_opts o;
	struct kerf_workload_model model;
	const struct kerf_pod_dist *given;   /* online=0 only */
	struct node_measure *nodes;          /* by node slot */
	size_t nr_nodes;                     /* allocated entries */
	const struct kerf_cluster *cluster;  /* the nodes[] belong to */
	uint32_t gen;                        /* changes of the measured dist */
	/*
	 * spec=1 and typical pods naming models: the distribution weighted by
	 * the idle capacity of their models (empty: the distribution itself),
	 * and the weights taken after the last bind, waiting for the next
	 * observe to replace it (so cached scores never mix the two).
	 */
	struct kerf_pod_dist weighted;
	struct kerf_pod_dist pending;
	bool has_pending;
	struct kerf_model_idle idle;         /* as of the last refresh */
	struct kerf_model_idle idle_weighted;/* the one weighted came from */
	int64_t moved_milli;                 /* bound + unbound since then */
};

static const struct {
	const char *key;
	size_t off;
	long min, max;
} kerf_opt_table[] = {
	{ "online", offsetof(struct kerf_opts, online), 0, 1 },
	{ "mem", offsetof(struct kerf_opts, mem), 0, 1 },
	{ "cap", offsetof(struct kerf_opts, cap), 0, 1000 },
	{ "coverage", offsetof(struct kerf_opts, coverage), 1, 100 },
	{ "rebuild", offsetof(struct kerf_opts, rebuild), 1, 1 << 30 },
	{ "adopt", offsetof(struct kerf_opts, adopt), 0, 1000 },
	{ "spec", offsetof(struct kerf_opts, spec), 0, 1 },
};

static int parse_opts(struct kerf_opts *o, const char *s, struct kerf_err *err)
{
	const size_t nr_keys = sizeof(kerf_opt_table) / sizeof(kerf_opt_table[0]);

	*o = (struct kerf_opts){ .online = 1, .mem = 1, .cap = 10,
				 .coverage = 95, .rebuild = 1024, .adopt = 10,
				 .spec = 1 };
	while (s && *s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s), klen, i;
		const char *eq = memchr(s, '=', len);
		char value[32], name[48], shown[96];
		uint64_t v;
		int rc;

		klen = eq ? (size_t)(eq - s) : len;
		for (i = 0; i < nr_keys; i++)
			if (strlen(kerf_opt_table[i].key) == klen &&
			    !strncmp(kerf_opt_table[i].key, s, klen))
				break;
		if (i == nr_keys || !eq)
			return kerf_err_set(err, -KERF_EINVAL,
					    "kerf policy option '%s': %s (online, mem, cap, coverage, rebuild, adopt, spec)",
					    kerf_escape_n(shown, sizeof(shown), s, klen),
					    i == nr_keys ? "unknown" : "needs =VALUE");
		len -= klen + 1;
		if (len >= sizeof(value))
			len = sizeof(value) - 1; /* too long: refused below */
		memcpy(value, eq + 1, len);
		value[len] = '\0';
		snprintf(name, sizeof(name), "kerf policy option '%s'",
			 kerf_opt_table[i].key);
		rc = kerf_parse_u64_opt(name, value, (uint64_t)kerf_opt_table[i].min,
					(uint64_t)kerf_opt_table[i].max, &v, err);
		if (rc < 0) { /* an option the policy refuses, whatever the cause */
			if (err)
				err->code = -KERF_EINVAL;
			return -KERF_EINVAL;
		}
		*(int *)((char *)o + kerf_opt_table[i].off) = (int)v;
		s = comma ? comma + 1 : "";
	}
	return 0;
}

static const char *kerf_option_key(size_t i)
{
	return i < sizeof(kerf_opt_table) / sizeof(kerf_opt_table[0]) ?
		       kerf_opt_table[i].key : NULL;
}

static int kerf_check_options(const char *s, struct kerf_err *err)
{
	struct kerf_opts o;

	return parse_opts(&o, s, err);
}

/* The typical pods the workload model (or the caller) gives. */
static const struct kerf_pod_dist *base_dist(const struct kerf_priv *k)
{
	return k->o.online ? &k->model.dist : k->given;
}

/* The distribution the measures are taken against. */
static const struct kerf_pod_dist *measured_dist(const struct kerf_priv *k)
{
	return k->weighted.nr ? &k->weighted : base_dist(k);
}

/*
 * Weights of the base distribution for idle into *out; false when they do
 * not apply (spec=0, no typical pod names a model, out of memory), and
 * then out is empty.
 */
static bool weigh(const struct kerf_priv *k, const struct kerf_model_idle *idle,
		  struct kerf_pod_dist *out)
{
	const struct kerf_pod_dist *d = base_dist(k);

	kerf_pod_dist_release(out);
	if (!k->o.spec || !d || !kerf_pod_dist_has_models(d))
		return false;
	return kerf_pod_dist_weigh_by_models(out, d, idle, NULL) == 0;
}

/* The base distribution changed: weigh it now, drop what was pending. */
static void reweigh(struct kerf_priv *k)
{
	kerf_pod_dist_release(&k->pending);
	k->has_pending = false;
	k->idle_weighted = k->idle;
	weigh(k, &k->idle, &k->weighted);
}

static bool same_weights(const struct kerf_pod_dist *a,
			 const struct kerf_pod_dist *b)
{
	if (a->nr != b->nr)
		return false;
	for (size_t i = 0; i < a->nr; i++)
		if (a->entries[i].weight != b->entries[i].weight)
			return false;
	return true;
}

/*
 * After GPU worth 1 % of the capacity was bound or unbound, take the idle
 * capacity again; new weights (or weights starting or stopping to apply)
 * wait for the next observe.
 */
static void refresh(struct kerf_priv *k, const struct kerf_cluster *c,
		    const struct kerf_pod *p)
{
	struct kerf_pod_dist cand;
	bool apply;

	if (!k->o.spec)
		return;
	k->moved_milli += kerf_pod_gpu_milli_total(p);
	if (k->moved_milli * 100 < k->idle.capacity_milli)
		return;
	k->moved_milli = 0;
	kerf_model_idle_of(&k->idle, c);
	kerf_pod_dist_init(&cand);
	apply = weigh(k, &k->idle, &cand);
	/* what waits is always of the latest idle capacity, or nothing */
	kerf_pod_dist_release(&k->pending);
	k->has_pending = apply != (k->weighted.nr > 0) ||
			 (apply && !same_weights(&k->weighted, &cand));
	if (k->has_pending)
		k->pending = cand;
	else
		kerf_pod_dist_release(&cand);
}

static void kerf_reserve(void *priv, const struct kerf_cluster *c,
			 const struct kerf_node *n, const struct kerf_pod *p,
			 uint16_t gpus)
{
	(void)n;
	(void)gpus;
	refresh(priv, c, p);
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
					  "kerf: online=0 needs the typical pods of the workload");
		k->given = args->dist;
	}
	if (rc == 0) {
		rc = kerf_workload_model_init(&k->model, k->o.coverage,
					      k->o.rebuild, k->o.adopt, 1u << 16);
		if (rc < 0)
			kerf_err_set(err, rc, "kerf: %s", kerf_strerror(rc));
	}
	if (rc < 0) {
		kerf_workload_model_release(&k->model);
		free(k);
		return rc;
	}
	if (args->cluster)
		kerf_model_idle_of(&k->idle, args->cluster);
	reweigh(k);
	*priv = k;
	return 0;
}

static void kerf_destroy(void *priv)
{
	struct kerf_priv *k = priv;

	kerf_workload_model_release(&k->model);
	kerf_pod_dist_release(&k->weighted);
	kerf_pod_dist_release(&k->pending);
	free(k->nodes);
	free(k);
}

static bool kerf_observe(void *priv, const struct kerf_pod *p)
{
	struct kerf_priv *k = priv;

	bool changed = k->o.online && kerf_workload_model_observe(&k->model, p);

	if (changed) {
		reweigh(k);
	} else if (k->has_pending) {
		/* pending is always of the latest idle capacity */
		kerf_pod_dist_release(&k->weighted);
		k->weighted = k->pending;
		k->idle_weighted = k->idle;
		kerf_pod_dist_init(&k->pending);
		k->has_pending = false;
		changed = true;
	}
	if (changed)
		k->gen++;
	return changed;
}

/* F + cap% * C of a view: kerf's fragment measure, times total weight. */
static int64_t measure(const void *ctx, const struct kerf_pod_dist *d,
		       const struct kerf_frag_view *v)
{
	const struct kerf_priv *k = ctx;
	unsigned flags = k->o.mem ? KERF_FRAG_MEM : 0;
	int64_t f, cap;

	if (k->o.cap == 0)
		return kerf_frag_amount(d, v, flags);
	kerf_frag_measures(d, v, flags, &f, &cap);
	return f + cap * k->o.cap / 100;
}

/*
 * The measure of n as it stands.  Every pod shape scored on an unchanged
 * node needs it, so it is kept per node until the node's stamp or the
 * distribution changes (memory permitting; otherwise recomputed).
 */
static int64_t node_measure(struct kerf_priv *k, const struct kerf_cluster *c,
			    const struct kerf_node *n,
			    const struct kerf_pod_dist *d,
			    const struct kerf_frag_view *v)
{
	size_t i = (size_t)(n - c->nodes);
	uint32_t gen = k->gen;
	struct node_measure *e;

	if (k->cluster != c) {
		free(k->nodes);
		k->nodes = NULL;
		k->nr_nodes = 0;
		k->cluster = c;
	}
	/* new slots: wider, keeping the rest (stamps tell nodes apart) */
	if (k->nr_nodes < c->nr_slots &&
	    KERF_GROW_ZERO(k->nodes, k->nr_nodes, c->nr_slots) < 0)
		return measure(k, d, v);
	if (i >= k->nr_nodes)
		return measure(k, d, v);
	e = &k->nodes[i];
	if (e->stamp != n->stamp || e->generation != gen) {
		e->stamp = n->stamp;
		e->generation = gen;
		e->value = measure(k, d, v);
	}
	return e->value;
}

static int32_t kerf_score(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t *gpus)
{
	struct kerf_priv *k = priv;
	const struct kerf_pod_dist *d = measured_dist(k);
	struct kerf_frag_view v;

	if (d->nr == 0)
		return 0;
	kerf_frag_view_of(&v, n);
	return kerf_frag_score_pod(n, p, &v, node_measure(k, c, n, d, &v), d,
				   measure, k, gpus);
}

/*
 * Saved words (core/persist.h).  With spec=1 they start with what the
 * model weights follow, so that a restarted controller decides as the one
 * it replaces:
 *
 *   SPEC_MAGIC, moved_milli, has_pending,
 *   the latest idle capacity and the one the weights in use were taken
 *   from, each as total_milli, capacity_milli, milli[KERF_MAX_MODELS]
 *
 * (the weights themselves follow from these and the typical pods).  Then,
 * learning online, the workload model's words.  Words that start with the
 * model's own magic are the model alone, as saved before spec existed.
 */
enum {
	SPEC_MAGIC = 0x4b535731,  /* "KSW1" */
	IDLE_WORDS = 2 + KERF_MAX_MODELS,
	SPEC_WORDS = 3 + 2 * IDLE_WORDS,
};

/* Far above any cluster's GPU milli, so sums of them fit in int64. */
#define SPEC_MAX_MILLI ((int64_t)1 << 48)

static int64_t *put_idle(int64_t *p, const struct kerf_model_idle *idle)
{
	*p++ = idle->total_milli;
	*p++ = idle->capacity_milli;
	for (int b = 0; b < KERF_MAX_MODELS; b++)
		*p++ = idle->milli[b];
	return p;
}

/* An idle capacity as saved: each part in range and adding up. */
static bool get_idle(const int64_t *p, struct kerf_model_idle *idle)
{
	int64_t sum = 0;

	idle->total_milli = p[0];
	idle->capacity_milli = p[1];
	if (p[0] < 0 || p[1] < p[0] || p[1] > SPEC_MAX_MILLI)
		return false;
	for (int b = 0; b < KERF_MAX_MODELS; b++) {
		if (p[2 + b] < 0 || p[2 + b] > p[0])
			return false;
		idle->milli[b] = p[2 + b];
		sum += p[2 + b];
	}
	return sum == p[0];
}

static int kerf_save(const void *priv, int64_t **words, size_t *nr)
{
	const struct kerf_priv *k = priv;
	int64_t *model = NULL, *w, *p;
	size_t nr_model = 0, head = k->o.spec ? SPEC_WORDS : 0;
	int rc;

	*words = NULL;
	*nr = 0;
	/* learning online only: a given distribution is the caller's */
	if (k->o.online &&
	    (rc = kerf_workload_model_save(&k->model, &model, &nr_model)) < 0)
		return rc;
	if (head == 0) {
		*words = model;
		*nr = nr_model;
		return 0;
	}
	w = malloc((head + nr_model) * sizeof(*w));
	if (!w) {
		free(model);
		return -KERF_ENOMEM;
	}
	p = w;
	*p++ = SPEC_MAGIC;
	*p++ = k->moved_milli;
	*p++ = k->has_pending;
	p = put_idle(p, &k->idle);
	p = put_idle(p, &k->idle_weighted);
	if (nr_model)
		memcpy(p, model, nr_model * sizeof(*model));
	free(model);
	*words = w;
	*nr = head + nr_model;
	return 0;
}

static int kerf_load(void *priv, const int64_t *words, size_t nr,
		     struct kerf_err *err)
{
	struct kerf_priv *k = priv;
	struct kerf_model_idle idle, idle_weighted;
	bool spec = nr > 0 && words[0] == SPEC_MAGIC;
	int64_t moved = 0, pending = 0;
	int rc = 0;

	if (spec) {
		if (!k->o.spec)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: kerf does not weigh by models here (spec=0)");
		if (nr < SPEC_WORDS)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: kerf: the model weights are cut short");
		moved = words[1];
		pending = words[2];
		if (moved < 0 || moved > SPEC_MAX_MILLI || (pending != 0 && pending != 1) ||
		    !get_idle(words + 3, &idle) ||
		    !get_idle(words + 3 + IDLE_WORDS, &idle_weighted))
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: kerf: the model weights are out of range");
		words += SPEC_WORDS;
		nr -= SPEC_WORDS;
	}
	if (!k->o.online && nr)
		return kerf_err_set(err, -KERF_EINVAL,
				    "policy.state: kerf does not learn here (online=0)");
	if (k->o.online && (nr || !spec))
		rc = kerf_workload_model_load(&k->model, words, nr, err);
	if (rc < 0)
		return rc;
	/* measures were taken against another distribution */
	free(k->nodes);
	k->nodes = NULL;
	k->nr_nodes = 0;
	if (spec) {
		k->idle = idle_weighted;
		reweigh(k);
		k->idle = idle;
		k->moved_milli = moved;
		if (pending) {
			weigh(k, &k->idle, &k->pending);
			k->has_pending = true;
		}
	} else {
		reweigh(k);
	}
	k->gen++;
	return 0;
}

const struct kerf_plugin kerf_plugin_kerf = {
	.name = "kerf",
	.flags = KERF_PLUGIN_PURE,
	.create = kerf_create,
	.destroy = kerf_destroy,
	.observe = kerf_observe,
	.reserve = kerf_reserve,
	.unreserve = kerf_reserve,
	.save = kerf_save,
	.load = kerf_load,
	.score = kerf_score,
	.option_key = kerf_option_key,
	.check_options = kerf_check_options,
};
