#include "sim/fgd_seq.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/grow.h"
#include "base/rng.h"

uint64_t kerf_fgd_seq_node_seed(uint64_t seed)
{
	return seed ^ 0x6e6f6465u; /* "node": an independent stream */
}

/*
 * Remove pods at random until the GPU request is at most target: each step
 * drops the k-th remaining pod, k uniform below the number remaining, as the
 * published tuneDownPods does.  A Fenwick tree over the positions still
 * present finds the k-th in O(log n), so a trace of a million pods is cut in
 * milliseconds where shifting the array after every removal took minutes;
 * the draws, and so the sequence, are the same.
 */
static int tune_down(const struct kerf_pod *pods, uint32_t *s, size_t *nr,
		     int64_t *total, int64_t target, struct kerf_rng *rng)
{
	size_t n = *nr, left = n, top = 1, out = 0;
	uint32_t *tree = malloc((n + 1) * sizeof(*tree)); /* 1-based */

	if (!tree)
		return -KERF_ENOMEM;
	/* every position present: tree[i] counts (i - lowbit(i), i] */
	for (size_t i = 1; i <= n; i++)
		tree[i] = (uint32_t)(i & (~i + 1));
	while (top * 2 <= n)
		top *= 2;
	while (*total > target && left > 0) {
		uint64_t k = kerf_rng_below(rng, left);
		size_t pos = 0;

		/* the largest pos with k present at or before it: s[pos] */
		for (size_t step = top; step; step /= 2)
			if (pos + step <= n && tree[pos + step] <= k) {
				pos += step;
				k -= tree[pos];
			}
		*total -= kerf_pod_gpu_milli_total(&pods[s[pos]]);
		s[pos] = UINT32_MAX;
		for (size_t i = pos + 1; i <= n; i += i & (~i + 1))
			tree[i]--;
		left--;
	}
	free(tree);
	for (size_t i = 0; i < n; i++)
		if (s[i] != UINT32_MAX)
			s[out++] = s[i];
	*nr = out;
	return 0;
}

int kerf_fgd_seq_build(const struct kerf_pod *pods, size_t nr_pods,
		      int64_t capacity_gpu_milli, int inflate_pct,
		      uint64_t seed, uint32_t **seq, size_t *nr_seq,
		      struct kerf_err *err)
{
	struct kerf_rng rng;
	int64_t total = 0, target;
	bool has_gpu = false;
	size_t n = nr_pods, alloc = nr_pods ? nr_pods : 1;
	uint32_t *s;

	*seq = NULL;
	*nr_seq = 0;
	if (inflate_pct < 1 || inflate_pct > 1000)
		return kerf_err_set(err, -KERF_EINVAL,
				    "inflate %d%%: must be 1..1000", inflate_pct);
	if (nr_pods == 0 || nr_pods >= UINT32_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload: %zu pods in the trace", nr_pods);
	target = capacity_gpu_milli * inflate_pct / 100;
	s = malloc(alloc * sizeof(*s));
	if (!s)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr_pods; i++) {
		s[i] = (uint32_t)i;
		total += kerf_pod_gpu_milli_total(&pods[i]);
		has_gpu |= pods[i].nr_gpus > 0;
	}
	kerf_rng_seed(&rng, seed);
	kerf_rng_shuffle(&rng, s, n, sizeof(*s));
	if (total > target && tune_down(pods, s, &n, &total, target, &rng) < 0) {
		free(s);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	/* A trace with no GPU request cannot be inflated by GPU request. */
	while (has_gpu) {
		uint32_t k = (uint32_t)kerf_rng_below(&rng, nr_pods);
		int64_t g = kerf_pod_gpu_milli_total(&pods[k]);

		if (total >= target || total + g > target)
			break;
		if (KERF_GROW(s, alloc, n + 1) < 0) {
			free(s);
			return kerf_err_set(err, -KERF_ENOMEM,
						    "out of memory");
		}
		s[n++] = k;
		total += g;
	}
	*seq = s;
	*nr_seq = n;
	return 0;
}
