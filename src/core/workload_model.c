#include "core/workload_model.h"

#include <stdlib.h>
#include <string.h>

int kerf_workload_model_init(struct kerf_workload_model *m, int coverage_pct,
			     unsigned dist_flags, int64_t rebuild_max,
			     size_t max_keys)
{
	size_t slots = 64;

	memset(m, 0, sizeof(*m));
	if (coverage_pct < 1 || coverage_pct > 100 || rebuild_max < 1 ||
	    max_keys < 1 || max_keys > (1u << 24))
		return -KERF_EINVAL;
	while (slots < max_keys * 2)
		slots *= 2;
	m->slots = calloc(slots, sizeof(*m->slots));
	if (!m->slots)
		return -KERF_ENOMEM;
	m->nr_slots = slots;
	m->max_keys = max_keys;
	m->coverage_pct = coverage_pct;
	m->dist_flags = dist_flags;
	m->rebuild_max = rebuild_max;
	m->next_rebuild = 1;
	kerf_pod_dist_init(&m->dist);
	return 0;
}

void kerf_workload_model_release(struct kerf_workload_model *m)
{
	free(m->keys);
	free(m->slots);
	kerf_pod_dist_release(&m->dist);
	memset(m, 0, sizeof(*m));
}

static uint64_t key_hash(const struct kerf_pod *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const uint64_t v[] = {
		(uint64_t)k->cpu_milli,  (uint64_t)k->mem_mib,
		(uint64_t)k->gpu_milli,  (uint64_t)(uint32_t)k->gpu_mem_mib,
		(uint64_t)k->nr_gpus,    k->model_mask,
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h ^= v[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h;
}

static struct kerf_pod model_key(const struct kerf_workload_model *m,
				 const struct kerf_pod *p)
{
	struct kerf_pod k = {
		.cpu_milli = p->cpu_milli,
		.gpu_milli = p->gpu_milli,
		.nr_gpus = p->nr_gpus,
		.model_mask = p->model_mask,
	};

	if (m->dist_flags & (KERF_DIST_KEEP_MEM | KERF_DIST_MEAN_MEM)) {
		k.mem_mib = p->mem_mib;
		k.gpu_mem_mib = p->gpu_mem_mib;
	}
	return k;
}

static bool same_key(const struct kerf_pod *a, const struct kerf_pod *b)
{
	return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->gpu_milli == b->gpu_milli &&
	       a->gpu_mem_mib == b->gpu_mem_mib && a->nr_gpus == b->nr_gpus &&
	       a->model_mask == b->model_mask;
}

/* Count k; false when the key is new and there is no room for it. */
static bool count_key(struct kerf_workload_model *m, const struct kerf_pod *k,
		      int64_t w)
{
	size_t i = key_hash(k) & (m->nr_slots - 1);

	for (; m->slots[i]; i = (i + 1) & (m->nr_slots - 1)) {
		struct kerf_dist_entry *e = &m->keys[m->slots[i] - 1];

		if (same_key(&e->pod, k)) {
			e->weight += w;
			return true;
		}
	}
	if (m->nr_keys >= m->max_keys)
		return false;
	if (m->nr_keys == m->alloc_keys) {
		size_t want = m->alloc_keys ? m->alloc_keys * 2 : 64;
		struct kerf_dist_entry *grown =
			realloc(m->keys, want * sizeof(*grown));

		if (!grown)
			return false;
		m->keys = grown;
		m->alloc_keys = want;
	}
	m->keys[m->nr_keys] = (struct kerf_dist_entry){ .pod = *k, .weight = w };
	m->slots[i] = (uint32_t)++m->nr_keys;
	return true;
}

/* Halve every count, dropping none (a count of 1 stays 1). */
static void fade(struct kerf_workload_model *m)
{
	m->weight_sum = 0;
	for (size_t i = 0; i < m->nr_keys; i++) {
		m->keys[i].weight = (m->keys[i].weight + 1) / 2;
		m->weight_sum += m->keys[i].weight;
	}
}

bool kerf_workload_model_observe(struct kerf_workload_model *m,
				 const struct kerf_pod *p)
{
	struct kerf_pod k = model_key(m, p);

	int64_t w = 1;

	if (m->weigh_gpu == 1)
		w = KERF_GPU_MILLI + kerf_pod_gpu_milli_total(p);
	else if (m->weigh_gpu == 2)
		w = kerf_pod_gpu_milli_total(p) > 100 ? kerf_pod_gpu_milli_total(p) : 100;
	m->nr_seen++;
	if (count_key(m, &k, w))
		m->weight_sum += w;
	if (m->weight_sum >= KERF_DIST_MAX_WEIGHT / 4)
		fade(m);
	if (m->nr_seen < m->next_rebuild || m->nr_keys == 0)
		return false;
	m->next_rebuild = m->nr_seen +
			  (m->nr_seen < m->rebuild_max ? m->nr_seen : m->rebuild_max);
	/* On failure (OOM) the previous distribution stays in use. */
	return kerf_pod_dist_typical_weighted(&m->dist, m->keys, m->nr_keys,
					      m->coverage_pct, m->dist_flags,
					      NULL) == 0;
}
