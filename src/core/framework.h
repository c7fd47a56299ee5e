/*
 * framework: placement in the shape of the kube-scheduler framework.
 *
 * A policy is a profile: filter plug-ins (any may say no, with a reason) and
 * weighted score plug-ins (higher is better).  The first score plug-in may
 * also choose the GPUs on the node; otherwise the best-fit GPU picker does.
 * The node with the highest total score wins; ties go to the lowest node
 * index, which is the node's fixed rank.  Nothing is ever broken by hash
 * order or by unseeded randomness.
 *
 * Plug-ins flagged KERF_PLUGIN_PURE score a node from (node state, pod
 * request, plug-in generation) alone, so the scheduler caches their verdicts
 * per pod shape and node stamp: a decision re-evaluates only the nodes that
 * changed since the last pod of the same shape.  A plug-in whose learned
 * state changes says so from observe(), which drops the cache.
 */
#ifndef KERF_CORE_FRAMEWORK_H
#define KERF_CORE_FRAMEWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "core/frag.h"
#include "core/model.h"
#include "core/score_cache.h"
#include "core/status.h"

struct kerf_policy_args {
	const struct kerf_cluster *cluster; /* models and size at creation */
	const struct kerf_pod_dist *dist;   /* known workload; may be NULL */
	uint64_t seed;                      /* for plug-ins that draw */
	const char *options;                /* "key=value,..."; may be NULL */
};

enum kerf_plugin_flags {
	KERF_PLUGIN_PURE = 1u << 0,
};

struct kerf_plugin {
	const char *name;
	unsigned flags;
	int (*create)(void **priv, const struct kerf_policy_args *args,
		      struct kerf_err *err);
	void (*destroy)(void *priv);
	/* A pod arrived (before it is placed); true = earlier scores stale. */
	bool (*observe)(void *priv, const struct kerf_pod *p);
	/* KERF_FIT or a status with the reason (st may be NULL). */
	enum kerf_code (*filter)(void *priv, const struct kerf_cluster *c,
				 const struct kerf_node *n,
				 const struct kerf_pod *p, struct kerf_status *st);
	/* Score of a node that passed every filter; may set *gpus. */
	int32_t (*score)(void *priv, const struct kerf_cluster *c,
			 const struct kerf_node *n, const struct kerf_pod *p,
			 uint16_t *gpus);
	/* The pod was bound to n on gpus. */
	void (*reserve)(void *priv, const struct kerf_cluster *c,
			const struct kerf_node *n, const struct kerf_pod *p,
			uint16_t gpus);
	/* A reserve was rolled back (the pod is unbound again). */
	void (*unreserve)(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t gpus);
	/*
	 * What the plug-in has learned, as words it alone reads (malloc'd;
	 * core/persist.h), and back: load checks the words whole and
	 * changes nothing when they are wrong (untrusted input).
	 */
	int (*save)(const void *priv, int64_t **words, size_t *nr);
	int (*load)(void *priv, const int64_t *words, size_t nr,
		    struct kerf_err *err);
	/*
	 * The option keys the plug-in takes (kerf_policy_args.options), by
	 * index, NULL past the last; and a check of "key=value,..." of those
	 * keys alone, with the message create would give, building nothing.
	 * Both NULL for a plug-in that takes no options.
	 */
	const char *(*option_key)(size_t i);
	int (*check_options)(const char *options, struct kerf_err *err);
};

enum { KERF_POLICY_MAX_PLUGINS = 8 };

struct kerf_policy_slot {
	const struct kerf_plugin *plugin;
	void *priv;
	int32_t weight;       /* score plug-ins only */
};

struct kerf_policy {
	const char *name;
	struct kerf_policy_slot filters[KERF_POLICY_MAX_PLUGINS];
	int nr_filters;
	struct kerf_policy_slot scorers[KERF_POLICY_MAX_PLUGINS];
	int nr_scorers;
};

/* Add a plug-in to a policy being built (create() is called here). */
int kerf_policy_add_filter(struct kerf_policy *pol,
			   const struct kerf_plugin *plugin,
			   const struct kerf_policy_args *args,
			   struct kerf_err *err);
int kerf_policy_add_scorer(struct kerf_policy *pol,
			   const struct kerf_plugin *plugin, int32_t weight,
			   const struct kerf_policy_args *args,
			   struct kerf_err *err);
void kerf_policy_release(struct kerf_policy *pol);

struct kerf_sched_stats {
	uint64_t nr_selects;
	uint64_t nr_node_evals;   /* filter + score runs to select */
	uint64_t nr_cache_hits;
	uint64_t nr_explain_evals;/* runs to say why nothing fits */
};

enum { KERF_SCHED_REASONS = 127 };

struct kerf_sched {
	struct kerf_policy *policy;  /* borrowed */
	bool cacheable;              /* every plug-in is pure */
	/* constant reasons seen from filters, by index + 1 in cache entries */
	const char *reasons[KERF_SCHED_REASONS];
	int nr_reasons;
	struct kerf_score_cache cache;
	struct kerf_sched_stats stats;
};

int kerf_sched_init(struct kerf_sched *s, struct kerf_policy *pol);
void kerf_sched_release(struct kerf_sched *s);

/* A pod arrived: plug-ins that learn the workload see it. */
void kerf_sched_observe(struct kerf_sched *s, const struct kerf_pod *p);

/*
 * Choose a node and GPUs for p without changing c.  KERF_FIT fills *b;
 * otherwise st says why no node fits ("0/N nodes are available: ...").
 *
 * The cache is tied to one cluster for that cluster's lifetime: passing
 * another cluster drops it, but a cluster released and initialised again in
 * the same storage cannot be told apart (stamps restart), so call
 * kerf_sched_forget first -- or, simpler, give each cluster its own sched.
 */
enum kerf_code kerf_sched_select(struct kerf_sched *s,
				 const struct kerf_cluster *c,
				 const struct kerf_pod *p,
				 struct kerf_binding *b,
				 struct kerf_status *st);

/*
 * kerf_sched_select over the nodes i with allowed[i] != 0 only (allowed may
 * be NULL: every node).  The cache is shared with the unrestricted select.
 */
enum kerf_code kerf_sched_select_in(struct kerf_sched *s,
				    const struct kerf_cluster *c,
				    const struct kerf_pod *p,
				    const uint8_t *allowed,
				    struct kerf_binding *b,
				    struct kerf_status *st);

/* Drop every cached verdict (see kerf_sched_select). */
void kerf_sched_forget(struct kerf_sched *s);

/* Bind p at b in c and run the reserve hooks; nothing changes on error. */
int kerf_sched_reserve(struct kerf_sched *s, struct kerf_cluster *c,
		       const struct kerf_pod *p, struct kerf_binding b,
		       struct kerf_err *err);

/* Undo a kerf_sched_reserve of the same pod and binding. */
int kerf_sched_unreserve(struct kerf_sched *s, struct kerf_cluster *c,
			 const struct kerf_pod *p, struct kerf_binding b,
			 struct kerf_err *err);

/*
 * The learned state of the policy's plug-ins as one run of words
 * (malloc'd; none: NULL, 0), and back.  Load checks the framing and each
 * plug-in's words; a plug-in with nothing saved keeps what it has.
 */
int kerf_sched_save(const struct kerf_sched *s, int64_t **words, size_t *nr);
int kerf_sched_load(struct kerf_sched *s, const int64_t *words, size_t nr,
		    struct kerf_err *err);

/* observe + select + reserve: the one-pod cycle of the simulator. */
enum kerf_code kerf_sched_place(struct kerf_sched *s, struct kerf_cluster *c,
				const struct kerf_pod *p,
				struct kerf_binding *b, struct kerf_status *st);

#endif /* KERF_CORE_FRAMEWORK_H */
