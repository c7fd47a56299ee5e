#include "core/workload_model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

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
	if (KERF_GROW(m->keys, m->alloc_keys, m->nr_keys + 1) < 0)
		return NULL;
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

/*
 * Saved as words: a header, then each key (in the model's order), then
 * the distribution in use (heaviest first).  __int128 sums are two words.
 */
enum {
	MODEL_MAGIC = 0x4b574d31,  /* "KWM1" */
	HEADER_WORDS = 9,
	KEY_WORDS = 9,
	ENTRY_WORDS = 7,
};

int kerf_workload_model_save(const struct kerf_workload_model *m,
			     int64_t **words, size_t *nr)
{
	size_t n = HEADER_WORDS + m->nr_keys * KEY_WORDS + m->dist.nr * ENTRY_WORDS;
	int64_t *w = malloc(n * sizeof(*w)), *p = w;

	if (!w)
		return -KERF_ENOMEM;
	*p++ = MODEL_MAGIC;
	*p++ = m->nr_seen;
	*p++ = m->weight_sum;
	*p++ = m->next_rebuild;
	*p++ = m->nr_adopted;
	*p++ = (int64_t)m->nr_keys;
	*p++ = (int64_t)m->dist.nr;
	*p++ = m->dist.total_weight;
	*p++ = m->dist.class_level;   /* 0: exact keys (was reserved, 0) */
	for (size_t i = 0; i < m->nr_keys; i++) {
		const struct kerf_workload_key *k = &m->keys[i];

		*p++ = k->key.cpu_milli;
		*p++ = k->key.gpu_milli;
		*p++ = k->key.nr_gpus;
		*p++ = (int64_t)k->key.model_mask;
		*p++ = k->weight;
		*p++ = (int64_t)(k->mem_sum >> 64);
		*p++ = (int64_t)(uint64_t)k->mem_sum;
		*p++ = (int64_t)(k->gpu_mem_sum >> 64);
		*p++ = (int64_t)(uint64_t)k->gpu_mem_sum;
	}
	for (size_t i = 0; i < m->dist.nr; i++) {
		const struct kerf_dist_entry *e = &m->dist.entries[i];

		*p++ = e->pod.cpu_milli;
		*p++ = e->pod.mem_mib;
		*p++ = e->pod.gpu_milli;
		*p++ = e->pod.gpu_mem_mib;
		*p++ = e->pod.nr_gpus;
		*p++ = (int64_t)e->pod.model_mask;
		*p++ = e->weight;
	}
	*words = w;
	*nr = n;
	return 0;
}

static __int128 join128(int64_t hi, int64_t lo)
{
	return (__int128)((unsigned __int128)(uint64_t)hi << 64 | (uint64_t)lo);
}

/* A request as the model keeps it: its fields in range. */
static bool pod_words_ok(int64_t cpu, int64_t gpu, int64_t nr_gpus)
{
	return cpu >= 0 && cpu <= KERF_MAX_CPU_MILLI && gpu >= 0 &&
	       gpu <= KERF_GPU_MILLI && nr_gpus >= 0 && nr_gpus <= KERF_NODE_MAX_GPUS;
}

/* Check the words whole; 0 or -KERF_EINVAL naming the word. */
static int check_words(const struct kerf_workload_model *m, const int64_t *w,
		       size_t nr, struct kerf_err *err)
{
	int64_t nr_keys, nr_entries, sum = 0, total = 0;

	if (nr < HEADER_WORDS || w[0] != MODEL_MAGIC)
		return kerf_err_set(err, -KERF_EINVAL,
				    "policy.state: not a workload model (version 1)");
	nr_keys = w[5];
	nr_entries = w[6];
	if (w[1] < 0 || w[2] < 0 || w[2] > KERF_DIST_MAX_WEIGHT || w[3] < 1 ||
	    w[4] < 0 || w[4] > UINT32_MAX || nr_keys < 0 ||
	    (uint64_t)nr_keys > m->max_keys || nr_entries < 0 ||
	    nr_entries > nr_keys || w[7] < 0 || w[7] > KERF_DIST_MAX_WEIGHT ||
	    w[8] < 0 || w[8] >= KERF_DIST_LEVELS ||
	    (uint64_t)nr != HEADER_WORDS + (uint64_t)nr_keys * KEY_WORDS +
				     (uint64_t)nr_entries * ENTRY_WORDS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "policy.state: workload model header out of range or length wrong");
	for (int64_t i = 0; i < nr_keys; i++) {
		const int64_t *k = w + HEADER_WORDS + i * KEY_WORDS;
		__int128 mem = join128(k[5], k[6]), gmem = join128(k[7], k[8]);

		if (!pod_words_ok(k[0], k[1], k[2]) || k[4] < 1 ||
		    k[4] > KERF_DIST_MAX_WEIGHT || mem < 0 || gmem < 0 ||
		    mem / k[4] > KERF_MAX_MEM_MIB || gmem / k[4] > INT32_MAX)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: workload model key %" PRId64 " out of range", i);
		sum += k[4];
		for (int64_t j = 0; j < i; j++) {
			const int64_t *o = w + HEADER_WORDS + j * KEY_WORDS;

			if (o[0] == k[0] && o[1] == k[1] && o[2] == k[2] && o[3] == k[3])
				return kerf_err_set(err, -KERF_EINVAL,
						    "policy.state: workload model key %" PRId64 " twice", i);
		}
	}
	if (sum != w[2])
		return kerf_err_set(err, -KERF_EINVAL,
				    "policy.state: key weights sum to %" PRId64 ", not %" PRId64,
				    sum, w[2]);
	for (int64_t i = 0; i < nr_entries; i++) {
		const int64_t *e = w + HEADER_WORDS + nr_keys * KEY_WORDS + i * ENTRY_WORDS;

		if (!pod_words_ok(e[0], e[2], e[4]) || e[1] < 0 || e[1] > KERF_MAX_MEM_MIB ||
		    e[3] < 0 || e[3] > INT32_MAX || e[6] < 1 || e[6] > KERF_DIST_MAX_WEIGHT)
			return kerf_err_set(err, -KERF_EINVAL,
					    "policy.state: distribution entry %" PRId64 " out of range", i);
		total += e[6];
	}
	if (total != w[7])
		return kerf_err_set(err, -KERF_EINVAL,
				    "policy.state: distribution weights sum to %" PRId64 ", not %" PRId64,
				    total, w[7]);
	return 0;
}

int kerf_workload_model_load(struct kerf_workload_model *m, const int64_t *w,
			     size_t nr, struct kerf_err *err)
{
	struct kerf_workload_key *keys;
	struct kerf_dist_entry *entries;
	int64_t nr_keys, nr_entries;
	int rc = check_words(m, w, nr, err);

	if (rc < 0)
		return rc;
	nr_keys = w[5];
	nr_entries = w[6];
	keys = calloc((size_t)(nr_keys ? nr_keys : 1), sizeof(*keys));
	entries = calloc((size_t)(nr_entries ? nr_entries : 1), sizeof(*entries));
	if (!keys || !entries) {
		free(keys);
		free(entries);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < nr_keys; i++) {
		const int64_t *k = w + HEADER_WORDS + i * KEY_WORDS;

		keys[i].key = (struct kerf_pod){
			.cpu_milli = k[0], .gpu_milli = (int32_t)k[1],
			.nr_gpus = (uint8_t)k[2], .model_mask = (uint64_t)k[3],
		};
		keys[i].weight = k[4];
		keys[i].mem_sum = join128(k[5], k[6]);
		keys[i].gpu_mem_sum = join128(k[7], k[8]);
	}
	for (int64_t i = 0; i < nr_entries; i++) {
		const int64_t *e = w + HEADER_WORDS + nr_keys * KEY_WORDS + i * ENTRY_WORDS;

		entries[i].pod = (struct kerf_pod){
			.cpu_milli = e[0], .mem_mib = e[1], .gpu_milli = (int32_t)e[2],
			.gpu_mem_mib = (int32_t)e[3], .nr_gpus = (uint8_t)e[4],
			.model_mask = (uint64_t)e[5],
		};
		entries[i].weight = e[6];
	}
	/* everything checked and allocated: replace */
	free(m->keys);
	m->keys = keys;
	m->nr_keys = m->alloc_keys = (size_t)(nr_keys ? nr_keys : 1);
	m->nr_keys = (size_t)nr_keys;
	memset(m->slots, 0, m->nr_slots * sizeof(*m->slots));
	for (size_t i = 0; i < m->nr_keys; i++) {
		size_t s = key_hash(&keys[i].key) & (m->nr_slots - 1);

		while (m->slots[s])
			s = (s + 1) & (m->nr_slots - 1);
		m->slots[s] = (uint32_t)(i + 1);
	}
	kerf_pod_dist_release(&m->dist);
	m->dist.entries = entries;
	m->dist.nr = m->dist.alloc = (size_t)nr_entries;
	m->dist.total_weight = w[7];
	m->dist.class_level = (int)w[8];
	m->nr_seen = w[1];
	m->weight_sum = w[2];
	m->next_rebuild = w[3];
	m->nr_adopted = (uint32_t)w[4];
	return 0;
}
