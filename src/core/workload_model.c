#include "core/workload_model.h"

#include <stdlib.h>
#include <string.h>

struct kerf_workload_key {
	struct kerf_pod key;     /* memory fields 0 */
	int64_t weight;
	__int128 mem_sum;        /* sum of mem_mib over the counted pods */
	__int128 gpu_mem_sum;
};

int kerf_workload_model_init(struct kerf_workload_model *m, int coverage_pct,
			     int64_t rebuild_max, int64_t adopt_permille,
			     size_t max_keys)
{
	size_t slots = 64;

	memset(m, 0, sizeof(*m));
	kerf_pod_dist_init(&m->dist);
	if (coverage_pct < 1 || coverage_pct > 100 || rebuild_max < 1 ||
	    adopt_permille < 0 || adopt_permille > 1000 || max_keys < 1 ||
	    max_keys > (1u << 24))
		return -KERF_EINVAL;
	while (slots < max_keys * 2)
		slots *= 2;
	m->slots = calloc(slots, sizeof(*m->slots));
	if (!m->slots)
		return -KERF_ENOMEM;
	m->nr_slots = slots;
	m->max_keys = max_keys;
	m->coverage_pct = coverage_pct;
	m->rebuild_max = rebuild_max;
	m->adopt_permille = adopt_permille;
	m->next_rebuild = 1;
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
		(uint64_t)k->cpu_milli, (uint64_t)(uint32_t)k->gpu_milli,
		(uint64_t)k->nr_gpus, k->model_mask,
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h ^= v[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 31;
	}
	return h;
}

static bool same_key(const struct kerf_pod *a, const struct kerf_pod *b)
{
	return a->cpu_milli == b->cpu_milli && a->gpu_milli == b->gpu_milli &&
	       a->nr_gpus == b->nr_gpus && a->model_mask == b->model_mask;
}

/* The key entry of p, created if new; NULL when there is no room. */
static struct kerf_workload_key *find_key(struct kerf_workload_model *m,
					  const struct kerf_pod *k)
{
	size_t i = key_hash(k) & (m->nr_slots - 1);

	for (; m->slots[i]; i = (i + 1) & (m->nr_slots - 1))
		if (same_key(&m->keys[m->slots[i] - 1].key, k))
			return &m->keys[m->slots[i] - 1];
	if (m->nr_keys >= m->max_keys)
		return NULL;
	if (m->nr_keys == m->alloc_keys) {
		size_t want = m->alloc_keys ? m->alloc_keys * 2 : 64;
		struct kerf_workload_key *grown =
			realloc(m->keys, want * sizeof(*grown));

		if (!grown)
			return NULL;
		m->keys = grown;
		m->alloc_keys = want;
	}
	memset(&m->keys[m->nr_keys], 0, sizeof(m->keys[m->nr_keys]));
	m->keys[m->nr_keys].key = *k;
	m->slots[i] = (uint32_t)++m->nr_keys;
	return &m->keys[m->nr_keys - 1];
}

/* Halve every count (a count of 1 stays 1), keeping the mean memory. */
static void fade(struct kerf_workload_model *m)
{
	m->weight_sum = 0;
	for (size_t i = 0; i < m->nr_keys; i++) {
		struct kerf_workload_key *e = &m->keys[i];
		int64_t w = (e->weight + 1) / 2;

		e->mem_sum = e->mem_sum * w / e->weight;
		e->gpu_mem_sum = e->gpu_mem_sum * w / e->weight;
		e->weight = w;
		m->weight_sum += w;
	}
}

/* Derive a candidate distribution and adopt it if it moved enough. */
static bool rebuild(struct kerf_workload_model *m)
{
	struct kerf_dist_entry *e = calloc(m->nr_keys, sizeof(*e));
	struct kerf_pod_dist cand;
	bool adopted = false;

	if (!e)
		return false;
	for (size_t i = 0; i < m->nr_keys; i++) {
		const struct kerf_workload_key *k = &m->keys[i];

		e[i].pod = k->key;
		e[i].pod.mem_mib = (int64_t)(k->mem_sum / k->weight);
		e[i].pod.gpu_mem_mib = (int32_t)(k->gpu_mem_sum / k->weight);
		e[i].weight = k->weight;
	}
	kerf_pod_dist_init(&cand);
	/* On failure (OOM) the previous distribution stays in use. */
	if (kerf_pod_dist_typical_weighted(&cand, e, m->nr_keys,
					   m->coverage_pct, KERF_DIST_MEAN_MEM,
					   NULL) == 0 &&
	    (m->dist.nr == 0 ||
	     kerf_pod_dist_distance(&m->dist, &cand) >= m->adopt_permille)) {
		kerf_pod_dist_release(&m->dist);
		m->dist = cand;
		m->nr_adopted++;
		adopted = true;
	} else {
		kerf_pod_dist_release(&cand);
	}
	free(e);
	return adopted;
}

bool kerf_workload_model_observe(struct kerf_workload_model *m,
				 const struct kerf_pod *p)
{
	struct kerf_pod k = {
		.cpu_milli = p->cpu_milli,
		.gpu_milli = p->gpu_milli,
		.nr_gpus = p->nr_gpus,
		.model_mask = p->model_mask,
	};
	struct kerf_workload_key *e = find_key(m, &k);

	m->nr_seen++;
	if (e) {
		e->weight++;
		e->mem_sum += p->mem_mib;
		e->gpu_mem_sum += p->gpu_mem_mib;
		m->weight_sum++;
	}
	if (m->weight_sum >= KERF_DIST_MAX_WEIGHT / 4)
		fade(m);
	if (m->nr_seen < m->next_rebuild || m->nr_keys == 0)
		return false;
	m->next_rebuild = m->nr_seen +
			  (m->nr_seen < m->rebuild_max ? m->nr_seen : m->rebuild_max);
	return rebuild(m);
}
