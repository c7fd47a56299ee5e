#include "sim/workload.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"

uint64_t kerf_workload_node_seed(uint64_t seed)
{
	return seed ^ 0x6e6f6465u; /* "node": an independent stream */
}

int kerf_workload_fgd(const struct kerf_pod *pods, size_t nr_pods,
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
	while (total > target && n > 0) {
		size_t k = (size_t)kerf_rng_below(&rng, n);

		total -= kerf_pod_gpu_milli_total(&pods[s[k]]);
		memmove(&s[k], &s[k + 1], (n - k - 1) * sizeof(*s));
		n--;
	}
	/* A trace with no GPU request cannot be inflated by GPU request. */
	while (has_gpu) {
		uint32_t k = (uint32_t)kerf_rng_below(&rng, nr_pods);
		int64_t g = kerf_pod_gpu_milli_total(&pods[k]);

		if (total >= target || total + g > target)
			break;
		if (n == alloc) {
			uint32_t *grown = realloc(s, alloc * 2 * sizeof(*s));

			if (!grown) {
				free(s);
				return kerf_err_set(err, -KERF_ENOMEM,
						    "out of memory");
			}
			s = grown;
			alloc *= 2;
		}
		s[n++] = k;
		total += g;
	}
	*seq = s;
	*nr_seq = n;
	return 0;
}
