#include "core/framework.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "core/gpu_pick.h"

/* Rows of the score cache: distinct pod shapes remembered at once. */
enum { SCHED_CACHE_SHAPES = 512 };

static int policy_add(struct kerf_policy_slot *slots, int *nr,
		      const struct kerf_plugin *plugin, int32_t weight,
		      const struct kerf_policy_args *args,
		      struct kerf_err *err)
{
	struct kerf_policy_slot *slot;

	if (*nr >= KERF_POLICY_MAX_PLUGINS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "plug-in '%s': more than %d in one stage",
				    plugin->name, KERF_POLICY_MAX_PLUGINS);
	slot = &slots[*nr];
	slot->plugin = plugin;
	slot->priv = NULL;
	slot->weight = weight;
	if (plugin->create) {
		int rc = plugin->create(&slot->priv, args, err);

		if (rc < 0)
			return rc;
	}
	(*nr)++;
	return 0;
}

int kerf_policy_add_filter(struct kerf_policy *pol,
			   const struct kerf_plugin *plugin,
			   const struct kerf_policy_args *args,
			   struct kerf_err *err)
{
	if (!plugin->filter)
		return kerf_err_set(err, -KERF_EINVAL,
				    "plug-in '%s' has no filter", plugin->name);
	return policy_add(pol->filters, &pol->nr_filters, plugin, 0, args,
			  err);
}

int kerf_policy_add_scorer(struct kerf_policy *pol,
			   const struct kerf_plugin *plugin, int32_t weight,
			   const struct kerf_policy_args *args,
			   struct kerf_err *err)
{
	if (!plugin->score)
		return kerf_err_set(err, -KERF_EINVAL,
				    "plug-in '%s' has no score", plugin->name);
	return policy_add(pol->scorers, &pol->nr_scorers, plugin, weight,
			  args, err);
}

static void release_slots(struct kerf_policy_slot *slots, int nr)
{
	for (int i = 0; i < nr; i++)
		if (slots[i].plugin->destroy)
			slots[i].plugin->destroy(slots[i].priv);
}

void kerf_policy_release(struct kerf_policy *pol)
{
	release_slots(pol->filters, pol->nr_filters);
	release_slots(pol->scorers, pol->nr_scorers);
	memset(pol, 0, sizeof(*pol));
}

static bool slot_is_pure(const struct kerf_policy_slot *slot)
{
	return slot->plugin->flags & KERF_PLUGIN_PURE;
}

int kerf_sched_init(struct kerf_sched *s, struct kerf_policy *pol)
{
	memset(s, 0, sizeof(*s));
	s->policy = pol;
	s->cacheable = true;
	for (int i = 0; i < pol->nr_filters; i++)
		if (!slot_is_pure(&pol->filters[i]))
			s->cacheable = false;
	for (int i = 0; i < pol->nr_scorers; i++)
		if (!slot_is_pure(&pol->scorers[i]))
			s->cacheable = false;
	kerf_score_cache_init(&s->cache, s->cacheable ? SCHED_CACHE_SHAPES : 0);
	return 0;
}

void kerf_sched_release(struct kerf_sched *s)
{
	kerf_score_cache_release(&s->cache);
	memset(s, 0, sizeof(*s));
}

static void observe_slots(struct kerf_sched *s, struct kerf_policy_slot *slots,
			  int nr, const struct kerf_pod *p)
{
	for (int i = 0; i < nr; i++)
		if (slots[i].plugin->observe &&
		    slots[i].plugin->observe(slots[i].priv, p))
			kerf_score_cache_invalidate(&s->cache);
}

void kerf_sched_observe(struct kerf_sched *s, const struct kerf_pod *p)
{
	/* MIG pods are placed by the MIG picker: policies do not learn them */
	if (kerf_pod_is_mig(p))
		return;
	observe_slots(s, s->policy->filters, s->policy->nr_filters, p);
	observe_slots(s, s->policy->scorers, s->policy->nr_scorers, p);
}

/*
 * The cache entry's reason byte: bit 7 = unresolvable, bits 0..6 = index +
 * 1 of a constant reason in s->reasons (0: none or not constant).
 */
static uint8_t reason_byte(struct kerf_sched *s, const struct kerf_status *st)
{
	uint8_t b = st->code == KERF_UNRESOLVABLE ? 0x80 : 0;
	int i;

	if (!st->fixed)
		return b;
	for (i = 0; i < s->nr_reasons; i++)
		if (s->reasons[i] == st->fixed)
			return (uint8_t)(b | (i + 1));
	if (s->nr_reasons == KERF_SCHED_REASONS)
		return b;
	s->reasons[s->nr_reasons++] = st->fixed;
	return (uint8_t)(b | s->nr_reasons);
}

/* Run every filter, then every scorer, on one node; fills e. */
static void eval_node(struct kerf_sched *s, const struct kerf_cluster *c,
		      const struct kerf_node *n, const struct kerf_pod *p,
		      struct kerf_cache_entry *e)
{
	const struct kerf_policy *pol = s->policy;
	int64_t total = 0;
	uint16_t gpus = 0;

	e->stamp = n->stamp;
	e->fit = 0;
	e->score = 0;
	e->gpus = 0;
	e->pad = 0;
	for (int i = 0; i < pol->nr_filters; i++) {
		const struct kerf_policy_slot *f = &pol->filters[i];
		struct kerf_status fst = { .code = KERF_FIT };

		if (f->plugin->filter(f->priv, c, n, p, &fst) != KERF_FIT) {
			e->pad = reason_byte(s, &fst);
			return;
		}
	}
	if (kerf_pod_is_mig(p)) {
		/* every policy places MIG pods the same way (gpu_pick.h) */
		uint8_t start;
		int32_t v = kerf_mig_node_pick(c, n, p, &gpus, &start);

		if (!gpus)
			return;
		e->fit = 1;
		e->score = v;
		e->gpus = gpus;
		return;
	}
	for (int i = 0; i < pol->nr_scorers; i++) {
		const struct kerf_policy_slot *sc = &pol->scorers[i];
		uint16_t pick = 0;
		int32_t v = sc->plugin->score(sc->priv, c, n, p, &pick);

		total += (int64_t)sc->weight * v;
		if (i == 0)
			gpus = pick;
	}
	if (p->nr_gpus > 0 && gpus == 0)
		gpus = kerf_gpus_best_fit(n, p);
	if (p->nr_gpus > 0 && gpus == 0)
		return; /* filters passed but no GPU set: treat as no fit */
	if (total > INT32_MAX)
		total = INT32_MAX;
	if (total < INT32_MIN + 1)
		total = INT32_MIN + 1;
	e->fit = 1;
	e->score = (int32_t)total;
	e->gpus = gpus;
}

enum { REASON_KINDS = 8 };

struct reason_count {
	char text[KERF_REASON_MAX];
	uint32_t count;
};

/* Count n nodes with reason why (up to REASON_KINDS kinds). */
static void count_reason(struct reason_count *reasons, int *nr, const char *why,
			 uint32_t n)
{
	int k;

	for (k = 0; k < *nr; k++)
		if (strcmp(reasons[k].text, why) == 0)
			break;
	if (k == *nr && *nr < REASON_KINDS) {
		snprintf(reasons[k].text, sizeof(reasons[k].text), "%s", why);
		(*nr)++;
	}
	if (k < *nr)
		reasons[k].count += n;
}

/* Say why no node fits, kube-scheduler style. */
static void explain(struct kerf_sched *s, const struct kerf_cluster *c,
		    const struct kerf_pod *p, const uint8_t *allowed,
		    struct kerf_cache_entry *row, struct kerf_status *st)
{
	const struct kerf_policy *pol = s->policy;
	struct reason_count reasons[REASON_KINDS];
	int nr_reasons = 0;
	bool resolvable = false;
	size_t nr_seen = 0;
	char buf[KERF_REASON_MAX];
	size_t off;

	if (!st)
		return;
	memset(reasons, 0, sizeof(reasons));
	/* fast path: every verdict is in the cache row with a constant reason */
	if (row) {
		uint32_t counts[KERF_SCHED_REASONS + 1] = { 0 };
		uint8_t order[KERF_SCHED_REASONS];
		int nr_order = 0;
		bool complete = true;

		for (size_t k = 0; k < c->nr_nodes && complete; k++) {
			size_t i = c->order[k];
			uint8_t r;

			if (allowed && !allowed[i])
				continue;
			nr_seen++;
			/* a node the selection skipped: see why now */
			if (row[i].stamp != c->stamps[i]) {
				s->stats.nr_explain_evals++;
				eval_node(s, c, &c->nodes[i], p, &row[i]);
			}
			r = row[i].pad & 0x7f;
			if (row[i].fit || !r) {
				complete = false;
				break;
			}
			if (counts[r]++ == 0)
				order[nr_order++] = r;   /* first-seen order */
			if (!(row[i].pad & 0x80))
				resolvable = true;
		}
		if (complete) {
			for (int k = 0; k < nr_order; k++)
				count_reason(reasons, &nr_reasons,
					     s->reasons[order[k] - 1],
					     counts[order[k]]);
			goto write;
		}
		nr_seen = 0;
		resolvable = false;
	}
	for (size_t k = 0; k < c->nr_nodes; k++) {
		size_t i = c->order[k];
		struct kerf_status fst = { .code = KERF_FIT };
		const char *why = "no GPU choice";

		if (allowed && !allowed[i])
			continue;
		nr_seen++;
		for (int f = 0; f < pol->nr_filters; f++) {
			const struct kerf_policy_slot *fs = &pol->filters[f];

			if (fs->plugin->filter(fs->priv, c, &c->nodes[i], p,
					       &fst) != KERF_FIT)
				break;
		}
		if (fst.code != KERF_FIT)
			why = fst.reason;
		if (fst.code != KERF_UNRESOLVABLE)
			resolvable = true;
		count_reason(reasons, &nr_reasons, why, 1);
	}
write:
	off = (size_t)snprintf(buf, sizeof(buf), "0/%zu nodes are available",
			       nr_seen);
	for (int k = 0; k < nr_reasons && off < sizeof(buf); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"%s %u %s", k ? "," : ":",
					reasons[k].count, reasons[k].text);
	kerf_status_set(st,
			resolvable ? KERF_UNSCHEDULABLE : KERF_UNRESOLVABLE,
			pol->name, "%s", buf);
}

enum kerf_code kerf_sched_select(struct kerf_sched *s,
				 const struct kerf_cluster *c,
				 const struct kerf_pod *p,
				 struct kerf_binding *b,
				 struct kerf_status *st)
{
	return kerf_sched_select_in(s, c, p, NULL, b, st);
}

enum kerf_code kerf_sched_select_in(struct kerf_sched *s,
				    const struct kerf_cluster *c,
				    const struct kerf_pod *p,
				    const uint8_t *allowed,
				    struct kerf_binding *b,
				    struct kerf_status *st)
{
	struct kerf_cache_entry *row = NULL;
	struct kerf_cache_entry tmp;
	int32_t best_score = INT32_MIN;
	size_t best = SIZE_MAX;
	uint16_t best_gpus = 0;

	s->stats.nr_selects++;
	if (s->cacheable)
		row = kerf_score_cache_row(&s->cache, c, p);
	/*
	 * Only the nodes of the fit index are visited (GPU pods: those with
	 * room of the right kind; others: every node that is up).
	 */
	for (size_t w = 0; w * 64 < c->nr_slots; w++) {
		uint64_t bits = kerf_fit_index_word(&c->fit, p, w);

		while (bits) {
			size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
			const struct kerf_node *n = &c->nodes[i];
			struct kerf_cache_entry *e = row ? &row[i] : &tmp;

			bits &= bits - 1;
			if (i >= c->nr_slots)
				break;
			if (allowed && !allowed[i])
				continue;
			if (row && e->stamp == c->stamps[i]) {
				s->stats.nr_cache_hits++;
			} else {
				s->stats.nr_node_evals++;
				eval_node(s, c, n, p, e);
			}
			/* equal scores: the node ranked first */
			if (e->fit && (e->score > best_score ||
				       (e->score == best_score && best != SIZE_MAX &&
					kerf_cluster_before(c, i, best)))) {
				best_score = e->score;
				best = i;
				best_gpus = e->gpus;
			}
		}
	}
	if (best == SIZE_MAX) {
		explain(s, c, p, allowed, row, st);
		return st ? st->code : KERF_UNSCHEDULABLE;
	}
	b->node = (uint32_t)best;
	b->gpus = best_gpus;
	b->mig_start = 0;
	if (kerf_pod_is_mig(p))
		kerf_mig_node_pick(c, &c->nodes[best], p, &b->gpus, &b->mig_start);
	kerf_status_set(st, KERF_FIT, s->policy->name, "node '%s'",
			c->nodes[best].name);
	return KERF_FIT;
}

void kerf_sched_forget(struct kerf_sched *s)
{
	size_t max_rows = s->cache.max_rows;

	kerf_score_cache_release(&s->cache);
	kerf_score_cache_init(&s->cache, max_rows);
}

static void reserve_slots(struct kerf_policy_slot *slots, int nr,
			  const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t gpus)
{
	for (int i = 0; i < nr; i++)
		if (slots[i].plugin->reserve)
			slots[i].plugin->reserve(slots[i].priv, c, n, p, gpus);
}

int kerf_sched_reserve(struct kerf_sched *s, struct kerf_cluster *c,
		       const struct kerf_pod *p, struct kerf_binding b,
		       struct kerf_err *err)
{
	int rc = kerf_cluster_bind(c, p, b, err);

	if (rc < 0)
		return rc;
	reserve_slots(s->policy->filters, s->policy->nr_filters, c,
		      &c->nodes[b.node], p, b.gpus);
	reserve_slots(s->policy->scorers, s->policy->nr_scorers, c,
		      &c->nodes[b.node], p, b.gpus);
	return 0;
}

int kerf_sched_unreserve(struct kerf_sched *s, struct kerf_cluster *c,
			 const struct kerf_pod *p, struct kerf_binding b,
			 struct kerf_err *err)
{
	const struct kerf_policy *pol = s->policy;
	int rc = kerf_cluster_unbind(c, p, b, err);

	if (rc < 0)
		return rc;
	/* reverse order of reserve */
	for (int i = pol->nr_scorers; i-- > 0;)
		if (pol->scorers[i].plugin->unreserve)
			pol->scorers[i].plugin->unreserve(pol->scorers[i].priv, c,
							  &c->nodes[b.node], p,
							  b.gpus);
	for (int i = pol->nr_filters; i-- > 0;)
		if (pol->filters[i].plugin->unreserve)
			pol->filters[i].plugin->unreserve(pol->filters[i].priv, c,
							  &c->nodes[b.node], p,
							  b.gpus);
	return 0;
}

enum kerf_code kerf_sched_place(struct kerf_sched *s, struct kerf_cluster *c,
				const struct kerf_pod *p,
				struct kerf_binding *b, struct kerf_status *st)
{
	struct kerf_err err = { 0 };
	enum kerf_code code;

	kerf_sched_observe(s, p);
	code = kerf_sched_select(s, c, p, b, st);
	if (code != KERF_FIT)
		return code;
	if (kerf_sched_reserve(s, c, p, *b, &err) < 0) {
		kerf_status_set(st, KERF_INTERNAL, s->policy->name, "%s",
				err.msg);
		return KERF_INTERNAL;
	}
	return KERF_FIT;
}

/*
 * The words of the plug-ins with state, in policy order: per plug-in its
 * slot (filters 0.., scorers 100..), its word count, its words.
 */
int kerf_sched_save(const struct kerf_sched *s, int64_t **words, size_t *nr)
{
	const struct kerf_policy *pol = s->policy;
	int64_t *all = NULL;
	size_t n = 0, alloc = 0;

	*words = NULL;
	*nr = 0;
	for (int k = 0; k < pol->nr_filters + pol->nr_scorers; k++) {
		const struct kerf_policy_slot *sl = k < pol->nr_filters
			? &pol->filters[k] : &pol->scorers[k - pol->nr_filters];
		int64_t *mine = NULL;
		size_t m = 0;
		int rc;

		if (!sl->plugin->save)
			continue;
		rc = sl->plugin->save(sl->priv, &mine, &m);
		if (rc == 0 && KERF_GROW(all, alloc, n + 2 + m) < 0)
			rc = -KERF_ENOMEM;
		if (rc < 0) {
			free(mine);
			free(all);
			return rc;
		}
		all[n++] = k < pol->nr_filters ? k : 100 + (k - pol->nr_filters);
		all[n++] = (int64_t)m;
		if (m)
			memcpy(all + n, mine, m * sizeof(*mine));
		n += m;
		free(mine);
	}
	*words = all;
	*nr = n;
	return 0;
}

int kerf_sched_load(struct kerf_sched *s, const int64_t *words, size_t nr,
		    struct kerf_err *err)
{
	const struct kerf_policy *pol = s->policy;
	size_t i = 0;

	/* the framing first, whole */
	while (i < nr) {
		int64_t slot, m;

		if (nr - i < 2)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: word %zu: a plug-in header is cut short", i);
		slot = words[i];
		m = words[i + 1];
		if (!((slot >= 0 && slot < pol->nr_filters) ||
		      (slot >= 100 && slot < 100 + pol->nr_scorers)))
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: word %zu: no plug-in %" PRId64 " in policy '%s'",
					    i, slot, pol->name);
		if (m < 0 || (uint64_t)m > nr - i - 2)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: word %zu: %" PRId64 " words do not fit",
					    i + 1, m);
		i += 2 + (size_t)m;
	}
	for (i = 0; i < nr;) {
		int64_t slot = words[i];
		size_t m = (size_t)words[i + 1];
		const struct kerf_policy_slot *sl = slot < 100 ? &pol->filters[slot]
							       : &pol->scorers[slot - 100];
		int rc;

		if (!sl->plugin->load)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: plug-in '%s' keeps no state",
					    sl->plugin->name);
		rc = sl->plugin->load(sl->priv, words + i + 2, m, err);
		if (rc < 0)
			return rc;
		i += 2 + m;
	}
	/* what it learned changed: cached scores are stale */
	kerf_score_cache_invalidate(&s->cache);
	return 0;
}
