/*
 * Unit tests for sim/fgd_seq (kerf_fgd_seq_build): the sequence is a pure
 * function of the seed; below the target it is a permutation of the trace
 * followed by draws from the trace, whose total GPU request stays within
 * the target while the next draw would pass it (checked by replaying the
 * seeded stream); above the target pods are removed until it is met; a
 * trace without GPU pods is not inflated; bad arguments are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/rng.h"
#include "sim/fgd_seq.h"

static struct kerf_pod gpu_pod(uint8_t nr, int32_t milli)
{
	return (struct kerf_pod){ .cpu_milli = 1000, .nr_gpus = nr,
				  .gpu_milli = milli };
}

/* A mixed trace of 8 pods: CPU-only, fractions, 1, 2 and 4 GPUs. */
static void mixed_trace(struct kerf_pod *pods)
{
	pods[0] = (struct kerf_pod){ .cpu_milli = 4000 };
	pods[1] = gpu_pod(1, 250);
	pods[2] = gpu_pod(1, 1000);
	pods[3] = gpu_pod(2, 1000);
	pods[4] = gpu_pod(1, 500);
	pods[5] = (struct kerf_pod){ .cpu_milli = 8000 };
	pods[6] = gpu_pod(4, 1000);
	pods[7] = gpu_pod(1, 730);
}

static int64_t total_of(const struct kerf_pod *pods, const uint32_t *seq,
			size_t n)
{
	int64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += kerf_pod_gpu_milli_total(&pods[seq[i]]);
	return sum;
}

static void run(const struct kerf_pod *pods, size_t nr, int64_t capacity,
		int pct, uint64_t seed, uint32_t **seq, size_t *n)
{
	struct kerf_err err = { 0 };

	if (kerf_fgd_seq_build(pods, nr, capacity, pct, seed, seq, n, &err) < 0)
		fail_msg("kerf_fgd_seq_build: %s", err.msg);
	assert_non_null(*seq);
}

static void test_deterministic_per_seed(void **state)
{
	struct kerf_pod pods[8];
	uint32_t *a, *b, *c;
	size_t na, nb, nc;

	(void)state;
	mixed_trace(pods);
	run(pods, 8, 64000, 100, 7, &a, &na);
	run(pods, 8, 64000, 100, 7, &b, &nb);
	run(pods, 8, 64000, 100, 8, &c, &nc);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na * sizeof(*a));
	assert_true(na != nc || memcmp(a, c, na * sizeof(*a)) != 0);
	free(a);
	free(b);
	free(c);
}

static void test_permutation_then_draws(void **state)
{
	struct kerf_pod pods[8];
	int seen[8] = { 0 };
	uint32_t *seq;
	size_t n;

	(void)state;
	mixed_trace(pods);
	/* The trace asks 9480 milli; the target is 64000. */
	run(pods, 8, 64000, 100, 3, &seq, &n);
	assert_true(n > 8);
	for (size_t i = 0; i < 8; i++)
		seen[seq[i]]++;
	for (int i = 0; i < 8; i++)
		assert_int_equal(seen[i], 1);
	for (size_t i = 8; i < n; i++)
		assert_true(seq[i] < 8);
	free(seq);
}

/*
 * Replay the generator's stream: the shuffle, then one draw per appended
 * pod, then the draw that stopped it, which must pass the target.
 */
static void check_against_stream(const struct kerf_pod *pods, size_t nr,
				 int64_t capacity, int pct, uint64_t seed)
{
	int64_t target = capacity * pct / 100, total;
	uint32_t *seq, *perm = malloc(nr * sizeof(*perm));
	struct kerf_rng rng;
	size_t n;
	uint64_t k;

	assert_non_null(perm);
	run(pods, nr, capacity, pct, seed, &seq, &n);
	kerf_rng_seed(&rng, seed);
	kerf_rng_perm(&rng, perm, nr);
	assert_true(n >= nr);
	assert_memory_equal(seq, perm, nr * sizeof(*perm));
	for (size_t i = nr; i < n; i++)
		assert_int_equal(seq[i], kerf_rng_below(&rng, nr));
	total = total_of(pods, seq, n);
	assert_true(total <= target);
	k = kerf_rng_below(&rng, nr);
	assert_true(total + kerf_pod_gpu_milli_total(&pods[k]) > target ||
		    total >= target);
	free(perm);
	free(seq);
}

static void test_fills_to_target(void **state)
{
	struct kerf_pod pods[8];

	(void)state;
	mixed_trace(pods);
	for (uint64_t seed = 0; seed < 20; seed++) {
		check_against_stream(pods, 8, 64000, 100, seed);
		check_against_stream(pods, 8, 16000, 300, seed);
		check_against_stream(pods, 8, 10000, 95, seed);
	}
}

static void test_equal_pods_hit_target_exactly(void **state)
{
	struct kerf_pod pods[5];
	uint32_t *seq;
	size_t n;

	(void)state;
	for (int i = 0; i < 5; i++)
		pods[i] = gpu_pod(1, 1000);
	run(pods, 5, 16000, 100, 1, &seq, &n);
	assert_int_equal(n, 16);
	assert_int_equal(total_of(pods, seq, n), 16000);
	free(seq);
	/* 150% of 4000 */
	run(pods, 5, 4000, 150, 1, &seq, &n);
	assert_int_equal(n, 6);
	free(seq);
}

static void test_tune_down(void **state)
{
	struct kerf_pod pods[10], mixed[8];
	int seen[10] = { 0 };
	uint32_t *seq;
	size_t n;

	(void)state;
	for (int i = 0; i < 10; i++)
		pods[i] = gpu_pod(1, 1000);
	/* 10000 asked, target 4000: exactly four distinct pods stay. */
	run(pods, 10, 4000, 100, 5, &seq, &n);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		assert_true(seq[i] < 10);
		seen[seq[i]]++;
	}
	for (int i = 0; i < 10; i++)
		assert_true(seen[i] <= 1);
	assert_int_equal(total_of(pods, seq, n), 4000);
	free(seq);
	/* Mixed sizes: at or below the target afterwards. */
	mixed_trace(mixed);
	for (uint64_t seed = 0; seed < 20; seed++) {
		run(mixed, 8, 4000, 100, seed, &seq, &n);
		assert_true(total_of(mixed, seq, n) <= 4000);
		free(seq);
	}
	/* Target 0: no GPU request is left at all. */
	run(mixed, 8, 0, 100, 1, &seq, &n);
	assert_int_equal(total_of(mixed, seq, n), 0);
	free(seq);
}

/*
 * The sequence as first written, shifting the array after every removal
 * (the published tuneDownPods), then topping up as the generator does: the
 * reference the Fenwick-tree removal must match draw for draw.  s holds
 * room for max pods.
 */
static size_t naive_seq(const struct kerf_pod *pods, size_t nr,
			int64_t target, uint64_t seed, uint32_t *s, size_t max)
{
	int64_t total = 0;
	struct kerf_rng rng;
	size_t n = nr;

	for (size_t i = 0; i < nr; i++) {
		s[i] = (uint32_t)i;
		total += kerf_pod_gpu_milli_total(&pods[i]);
	}
	kerf_rng_seed(&rng, seed);
	kerf_rng_shuffle(&rng, s, n, sizeof(*s));
	while (total > target && n > 0) {
		size_t k = (size_t)kerf_rng_below(&rng, n);

		total -= kerf_pod_gpu_milli_total(&pods[s[k]]);
		memmove(&s[k], &s[k + 1], (n - k - 1) * sizeof(*s));
		n--;
	}
	for (;;) {
		uint32_t k = (uint32_t)kerf_rng_below(&rng, nr);
		int64_t g = kerf_pod_gpu_milli_total(&pods[k]);

		if (total >= target || total + g > target)
			break;
		assert_true(n < max);
		s[n++] = k;
		total += g;
	}
	return n;
}

static void test_tune_down_matches_reference(void **state)
{
	enum { NR = 300, MAX = 4 * NR };
	struct kerf_pod pods[NR];
	uint32_t want[MAX], *seq;
	size_t n, nr_want;

	(void)state;
	for (size_t i = 0; i < NR; i++)
		pods[i] = i % 7 == 0   ? (struct kerf_pod){ .cpu_milli = 1000 }
			  : i % 3 == 0 ? gpu_pod((uint8_t)(1u << (i % 4)), 1000)
				       : gpu_pod(1, (int32_t)(50 + i * 37 % 950));
	for (uint64_t seed = 0; seed < 40; seed++) {
		int64_t cap = 1000 + (int64_t)seed * 4000;

		nr_want = naive_seq(pods, NR, cap, seed, want, MAX);
		run(pods, NR, cap, 100, seed, &seq, &n);
		assert_int_equal(n, nr_want);
		assert_memory_equal(seq, want, n * sizeof(*seq));
		free(seq);
	}
}

/*
 * A million pods cut to a tenth: linear-logarithmic, so it takes a fraction
 * of a second even under the sanitizers (the array shifting it replaced
 * took about 40 s without them and times this test out).
 */
static void test_tune_down_million(void **state)
{
	enum { NR = 1000000 };
	struct kerf_pod *pods = calloc(NR, sizeof(*pods));
	uint8_t *seen = calloc(NR, 1);
	uint32_t *seq;
	size_t n;

	(void)state;
	assert_non_null(pods);
	assert_non_null(seen);
	for (size_t i = 0; i < NR; i++)
		pods[i] = gpu_pod(1, 1000);
	run(pods, NR, (int64_t)NR * 100, 100, 9, &seq, &n);
	assert_int_equal(n, NR / 10);
	for (size_t i = 0; i < n; i++) {
		assert_true(seq[i] < NR);
		assert_int_equal(seen[seq[i]]++, 0);
	}
	free(seq);
	free(seen);
	free(pods);
}

static void test_no_gpu_pods_terminates(void **state)
{
	struct kerf_pod pods[3] = {
		{ .cpu_milli = 1000 }, { .cpu_milli = 2000 }, { .cpu_milli = 3000 },
	};
	int seen[3] = { 0 };
	uint32_t *seq;
	size_t n;

	(void)state;
	run(pods, 3, 1000000, 1000, 1, &seq, &n);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		seen[seq[i]]++;
	for (int i = 0; i < 3; i++)
		assert_int_equal(seen[i], 1);
	free(seq);
}

static void test_bad_arguments(void **state)
{
	struct kerf_pod pods[1] = { { .cpu_milli = 1 } };
	struct kerf_err err = { 0 };
	uint32_t *seq = (uint32_t *)pods;
	size_t n = 99;

	(void)state;
	assert_int_equal(kerf_fgd_seq_build(pods, 1, 1000, 0, 1, &seq, &n, &err),
			 -KERF_EINVAL);
	assert_string_equal(err.msg, "inflate 0%: must be 1..1000");
	assert_null(seq);
	assert_int_equal(n, 0);
	kerf_err_clear(&err);
	assert_int_equal(kerf_fgd_seq_build(pods, 1, 1000, 1001, 1, &seq, &n,
					   &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "inflate 1001%: must be 1..1000");
	kerf_err_clear(&err);
	assert_int_equal(kerf_fgd_seq_build(pods, 0, 1000, 100, 1, &seq, &n,
					   &err), -KERF_EINVAL);
	assert_string_equal(err.msg, "workload: 0 pods in the trace");
	assert_null(seq);
}

static void test_node_seed(void **state)
{
	(void)state;
	assert_int_equal(kerf_fgd_seq_node_seed(0), 0x6e6f6465u);
	assert_int_equal(kerf_fgd_seq_node_seed(0x6e6f6465u), 0);
	assert_int_not_equal(kerf_fgd_seq_node_seed(42), 42);
	assert_int_equal(kerf_fgd_seq_node_seed(kerf_fgd_seq_node_seed(42)), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic_per_seed),
		cmocka_unit_test(test_permutation_then_draws),
		cmocka_unit_test(test_fills_to_target),
		cmocka_unit_test(test_equal_pods_hit_target_exactly),
		cmocka_unit_test(test_tune_down),
		cmocka_unit_test(test_tune_down_matches_reference),
		cmocka_unit_test(test_tune_down_million),
		cmocka_unit_test(test_no_gpu_pods_terminates),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_node_seed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
