#include "core/fit_index.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "core/model.h"

/*
 * map k in 1..16: idle_ge[k]; 0: partial; 17: has GPUs in MIG mode;
 * 18: up (live, not cordoned)
 */
enum {
	MAPS = KERF_NODE_MAX_GPUS + 3,
	PARTIAL = 0,
	MIG = KERF_NODE_MAX_GPUS + 1,
	UP = KERF_NODE_MAX_GPUS + 2,
};

static uint64_t *map(const struct kerf_fit_index *x, int k)
{
	return x->bits + (size_t)k * x->cap_words;
}

static bool has_partial(const struct kerf_node *n)
{
	for (int g = 0; g < n->nr_gpus; g++)
		if (n->gpu_free_milli[g] > 0 && n->gpu_free_milli[g] < KERF_GPU_MILLI)
			return true;
	return false;
}

/* Should node n be in map k? */
static bool in_map(const struct kerf_node *n, int k)
{
	if (n->cordoned || !n->live)
		return false;
	if (k == UP)
		return true;
	if (k == MIG)
		return n->mig_gpus != 0;
	return k == PARTIAL ? has_partial(n) : n->nr_gpus_idle >= k;
}

void kerf_fit_index_release(struct kerf_fit_index *x)
{
	free(x->bits);
	x->bits = NULL;
	x->cap_words = 0;
}

int kerf_fit_index_build(struct kerf_fit_index *x, const struct kerf_node *nodes,
			 size_t nr)
{
	size_t words = nr / 64 + 1;

	if (words > x->cap_words) {
		size_t cap = x->cap_words ? x->cap_words : 1;
		uint64_t *grown;

		while (cap < words)
			cap *= 2;
		if (cap > SIZE_MAX / MAPS / sizeof(*grown))
			return -KERF_ELIMIT;
		grown = realloc(x->bits, (size_t)MAPS * cap * sizeof(*grown));
		if (!grown)
			return -KERF_ENOMEM;
		x->bits = grown;
		x->cap_words = cap;
	}
	memset(x->bits, 0, (size_t)MAPS * x->cap_words * sizeof(*x->bits));
	for (size_t i = 0; i < nr; i++)
		kerf_fit_index_update(x, &nodes[i], i);
	return 0;
}

void kerf_fit_index_update(struct kerf_fit_index *x, const struct kerf_node *n,
			   size_t i)
{
	uint64_t bit = (uint64_t)1 << (i % 64);

	for (int k = 0; k < MAPS; k++) {
		uint64_t *w = &map(x, k)[i / 64];

		*w = in_map(n, k) ? *w | bit : *w & ~bit;
	}
}

uint64_t kerf_fit_index_word(const struct kerf_fit_index *x,
			     const struct kerf_pod *p, size_t w)
{
	if (p->nr_gpus == 0)
		return map(x, UP)[w];
	if (kerf_pod_is_mig(p))
		return map(x, MIG)[w];
	if (kerf_pod_is_fraction(p))
		return map(x, 1)[w] | map(x, PARTIAL)[w];
	return map(x, p->nr_gpus)[w];
}

int kerf_fit_index_check_node(const struct kerf_fit_index *x,
			      const struct kerf_node *n, size_t i)
{
	if (!kerf_fit_index_has_room(x, i))
		return -KERF_ERANGE;
	for (int k = 0; k < MAPS; k++)
		if (!(map(x, k)[i / 64] >> (i % 64) & 1) != !in_map(n, k))
			return -KERF_ERANGE;
	return 0;
}
