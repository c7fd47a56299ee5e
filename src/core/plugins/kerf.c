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
};

struct kerf_priv {
	struct kerf_opts o;
	struct kerf_workload_model model;
	const struct kerf_pod_dist *given;
};

static int parse_opts(struct kerf_opts *o, const char *s, struct kerf_err *err)
{
	*o = (struct kerf_opts){ .mem = 0, .exact = 0, .online = 1,
				 .coverage = 95, .rebuild = 1024 };
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
					      k->o.mem ? KERF_DIST_KEEP_MEM : 0,
					      k->o.rebuild, 1u << 16);
	if (rc < 0) {
		kerf_workload_model_release(&k->model);
		free(k);
		return kerf_err_set(err, rc, "kerf: %s", kerf_strerror(rc));
	}
	*priv = k;
	return 0;
}

static void kerf_destroy(void *priv)
{
	struct kerf_priv *k = priv;

	kerf_workload_model_release(&k->model);
	free(k);
}

static bool kerf_observe(void *priv, const struct kerf_pod *p)
{
	struct kerf_priv *k = priv;

	if (!k->o.online)
		return false;
	return kerf_workload_model_observe(&k->model, p);
}

static int32_t gain(const struct kerf_priv *k, const struct kerf_pod_dist *d,
		    int64_t delta)
{
	if (!k->o.exact)
		return kerf_fgd_score(delta, d->total_weight);
	return (int32_t)(delta * 1024 / d->total_weight);
}

static int32_t kerf_score(void *priv, const struct kerf_cluster *c,
			  const struct kerf_node *n, const struct kerf_pod *p,
			  uint16_t *gpus)
{
	struct kerf_priv *k = priv;
	const struct kerf_pod_dist *d = k->o.online ? &k->model.dist : k->given;
	unsigned flags = k->o.mem ? KERF_FRAG_MEM : 0;
	struct kerf_frag_view v, after;
	int32_t best = INT32_MIN;
	int64_t f0;

	(void)c;
	if (d->nr == 0)
		return 0;
	kerf_frag_view_of(&v, n);
	f0 = kerf_frag_amount(d, &v, flags);
	if (!kerf_pod_is_fraction(p)) {
		uint16_t mask = kerf_gpus_best_fit(n, p);

		after = v;
		kerf_frag_view_sub(&after, p, mask);
		*gpus = mask;
		return gain(k, d, f0 - kerf_frag_amount(d, &after, flags));
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
		s = gain(k, d, f0 - kerf_frag_amount(d, &after, flags));
		if (s > best) {
			best = s;
			*gpus = (uint16_t)(1u << g);
		}
	}
	return best == INT32_MIN ? 0 : best;
}

const struct kerf_plugin kerf_plugin_kerf = {
	.name = "kerf",
	.flags = KERF_PLUGIN_PURE,
	.create = kerf_create,
	.destroy = kerf_destroy,
	.observe = kerf_observe,
	.score = kerf_score,
};
