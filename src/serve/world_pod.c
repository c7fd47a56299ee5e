/*
 * world_pod: a pod as the core sees it: its request (whole GPUs, a
 * fraction, one MIG instance), the label and taint terms it selects and
 * tolerates, and where a bound pod runs (its devices).
 */
#include "serve/world_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/mig/geometry.h"

/*
 * A MIG profile by name: its compute slices and the smallest memory it
 * has on any model (a pod asks "3g.40gb", and any model's 3g.40gb serves).
 */
static bool mig_by_name(const char *name, uint8_t *slices, int32_t *mem_mib)
{
	size_t nr;
	const struct kerf_mig_model *m = kerf_mig_models(&nr);
	bool found = false;

	for (size_t i = 0; i < nr; i++) {
		int p = kerf_mig_profile_find(&m[i], name);
		uint32_t mem;

		if (p < 0)
			continue;
		mem = kerf_mig_profile_mem_mib(&m[i], (unsigned)p);
		if (!found || (int32_t)mem < *mem_mib) {
			*slices = m[i].profiles[p].compute_slices;
			*mem_mib = (int32_t)mem;
		}
		found = true;
	}
	return found;
}

uint64_t kerf_world_tolerates(const struct kerf_world *w,
			      const struct kerf_kpod *p)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < w->st.cluster.nr_taints; i++) {
		const struct wterm *t = &w->taints[i];

		/* a GPUPool's sharing: no toleration lifts it */
		if (!strcmp(t->key, KERF_POOL_SHARING_TERM)) {
			if (!kerf_pool_sharing_used(p, t->value))
				mask |= 1ull << i;
			continue;
		}
		for (uint16_t k = 0; k < p->nr_tolerations; k++)
			if (kerf_toleration_matches(&kerf_kpod_tolerations(p)[k], t->key,
						    t->value, t->effect)) {
				mask |= 1ull << i;
				break;
			}
	}
	return mask;
}

/* The shape alone: resources, no terms. */
static int shape(const struct kerf_kpod *p, struct kerf_pod *req, char *why,
		 size_t size)
{
	const char *profile = kerf_kpod_mig_profile(p);
	struct kerf_err err = { 0 };

	memset(req, 0, sizeof(*req));
	req->cpu_milli = p->cpu_milli;
	req->mem_mib = p->mem_mib;
	if (profile) {
		uint8_t slices = 0;
		int32_t mem = 0;

		if (p->nr_mig != 1) {
			snprintf(why, size, "asks %" PRId32 " MIG instances of %s: kerf places one per pod",
				 p->nr_mig, profile);
			return -KERF_EINVAL;
		}
		if (!mig_by_name(profile, &slices, &mem)) {
			snprintf(why, size, "MIG profile '%s' is not one kerf knows", profile);
			return -KERF_EINVAL;
		}
		req->nr_gpus = 1;
		req->mig_slices = slices;
		req->gpu_mem_mib = mem;
		req->gpu_milli = slices * KERF_GPU_MILLI / 7 > 0 ? slices * KERF_GPU_MILLI / 7 : 1;
		if (req->gpu_milli > KERF_GPU_MILLI)
			req->gpu_milli = KERF_GPU_MILLI;
	} else if (p->gpu_milli > 0) {
		req->nr_gpus = 1;
		req->gpu_milli = p->gpu_milli;
		req->gpu_mem_mib = p->gpu_mem_mib;
		req->share = p->share;
	} else if (p->nr_gpus > 0) {
		if (p->nr_gpus > KERF_NODE_MAX_GPUS) {
			snprintf(why, size, "asks %" PRId32 " GPUs: kerf places at most %d on one node",
				 p->nr_gpus, KERF_NODE_MAX_GPUS);
			return -KERF_EINVAL;
		}
		req->nr_gpus = (uint8_t)p->nr_gpus;
		req->gpu_milli = KERF_GPU_MILLI;
		req->gpu_mem_mib = p->gpu_mem_mib;
	}
	if (kerf_pod_validate(req, &err) < 0) {
		snprintf(why, size, "%s", err.msg);
		return -KERF_EINVAL;
	}
	return 0;
}

int kerf_world_pod_req(const struct kerf_world *w, const struct wpod *x,
		       struct kerf_pod *req, char *why, size_t size)
{
	int rc = shape(x->p, req, why, size);

	if (rc < 0)
		return rc;
	req->need_labels = x->need_labels;
	req->tolerates = kerf_world_tolerates(w, x->p);
	return 0;
}

/* GPUs of "0,1,3" as a mask, all below nr; false when malformed. */
static bool parse_gpus(const char *s, int nr, uint16_t *mask)
{
	*mask = 0;
	while (*s) {
		int g = 0, digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 3) {
			g = g * 10 + (*s++ - '0');
			digits++;
		}
		if (!digits || g >= nr || (*mask >> g & 1))
			return false;
		*mask = (uint16_t)(*mask | 1u << g);
		if (*s == ',')
			s++;
		else if (*s)
			return false;
	}
	return *mask != 0;
}

/* "3g.40gb@4": the profile and the start slice. */
static bool parse_mig(const char *s, char *profile, size_t size, unsigned *start)
{
	const char *at = strrchr(s, '@');
	size_t len;

	if (!at || at == s || at[1] < '0' || at[1] > '9' || at[2])
		return false;
	len = (size_t)(at - s);
	if (len >= size)
		return false;
	memcpy(profile, s, len);
	profile[len] = 0;
	*start = (unsigned)(at[1] - '0');
	return *start < KERF_MIG_MAX_SLICES;
}

int kerf_world_pod_binding(const struct kerf_world *w, const struct wpod *x,
			   int16_t held[KERF_NODE_MAX_GPUS], struct kerf_pod *req,
			   struct kerf_binding *b, char *why, size_t size)
{
	const struct kerf_cluster *c = &w->st.cluster;
	const struct kerf_kpod *p = x->p;
	const char *gpus = kerf_kpod_assigned_gpus(p);
	const struct kerf_node *n;
	const char *node;
	int slot, rc;

	/* a gang's member not bound yet runs where its plan says */
	node = kerf_kpod_node(p) ? kerf_kpod_node(p) : kerf_kpod_planned_node(p);
	slot = node ? kerf_cluster_find_node(c, node) : -KERF_ENOTFOUND;
	if (slot < 0) {
		snprintf(why, size, "%s node '%s', which kerf does not know",
			 kerf_kpod_node(p) ? "bound to" : "planned on", node ? node : "");
		return -KERF_ENOTFOUND;
	}
	n = &c->nodes[slot];
	rc = shape(p, req, why, size);
	if (rc < 0)
		return rc;
	memset(b, 0, sizeof(*b));
	b->node = (uint32_t)slot;
	if (req->nr_gpus == 0)
		return 0;
	if (req->mig_slices) {
		const struct kerf_mig_model *mm =
			n->model < c->nr_models ? c->models[n->model].mig : NULL;
		const char *profile = kerf_kpod_mig_profile(p);
		const char *mig = kerf_kpod_assigned_mig(p);
		char name[32];
		unsigned start = 0;
		uint16_t mask = 0;
		int prof;

		if (!mm || (prof = kerf_mig_profile_find(mm, profile)) < 0) {
			snprintf(why, size, "MIG profile '%s' is not one of node '%s''s GPUs",
				 profile, n->name);
			return -KERF_EINVAL;
		}
		if (!mig || !parse_mig(mig, name, sizeof(name), &start) ||
		    strcmp(name, profile) != 0 || !gpus ||
		    !parse_gpus(gpus, n->nr_gpus, &mask) ||
		    __builtin_popcount(mask) != 1) {
			/* which instance it holds is not known: no guess */
			snprintf(why, size, "MIG pod without a readable %s and %s: the instance it holds is not known",
				 "kerf.io/assigned-mig", "kerf.io/assigned-gpus");
			return -KERF_EINVAL;
		}
		req->mig_slices = mm->profiles[prof].compute_slices;
		req->gpu_mem_mib = (int32_t)kerf_mig_profile_mem_mib(mm, (unsigned)prof);
		req->gpu_milli = kerf_mig_gpu_milli(mm, (unsigned)prof);
		b->gpus = mask;
		b->mig_start = (uint8_t)start;
		return 0;
	}
	if (gpus) {
		if (!parse_gpus(gpus, n->nr_gpus, &b->gpus) ||
		    __builtin_popcount(b->gpus) != req->nr_gpus) {
			snprintf(why, size, "kerf.io/assigned-gpus '%.40s' does not name %u of node '%s''s %u GPUs",
				 gpus, req->nr_gpus, n->name, n->nr_gpus);
			return -KERF_EINVAL;
		}
	} else {
		/* the lowest GPUs with room, after what pods before it took */
		int want = req->nr_gpus;

		for (int g = 0; g < n->nr_gpus && want > 0; g++) {
			int32_t room = n->gpu_free_milli[g] - held[g];

			if (room >= req->gpu_milli && kerf_gpu_share_ok(n, g, req) &&
			    (n->mig_gpus >> g & 1) == 0) {
				b->gpus = (uint16_t)(b->gpus | 1u << g);
				want--;
			}
		}
		if (want > 0) {
			snprintf(why, size, "node '%s' has no %u GPUs with room for it",
				 n->name, req->nr_gpus);
			return -KERF_ERANGE;
		}
	}
	for (int g = 0; g < KERF_NODE_MAX_GPUS; g++)
		if (b->gpus >> g & 1)
			held[g] = (int16_t)(held[g] + req->gpu_milli);
	return 0;
}

void kerf_world_gpus_text(uint16_t mask, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (int g = 0; g < KERF_NODE_MAX_GPUS; g++) {
		if (!(mask >> g & 1))
			continue;
		int n = snprintf(buf + len, size - len, len ? ",%d" : "%d", g);

		if (n < 0 || (size_t)n >= size - len)
			return;
		len += (size_t)n;
	}
}

bool kerf_world_same_req(const struct kerf_pod *a, const struct kerf_pod *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->gpu_milli == b->gpu_milli && a->gpu_mem_mib == b->gpu_mem_mib &&
	       a->nr_gpus == b->nr_gpus && a->model_mask == b->model_mask &&
	       a->share == b->share && a->isolation == b->isolation &&
	       a->mig_slices == b->mig_slices && a->tenant == b->tenant &&
	       a->need_labels == b->need_labels && a->tolerates == b->tolerates;
}
