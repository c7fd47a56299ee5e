/*
 * bench_mig_place: MIG placement decisions per second in the scheduling
 * core (core/mig/place.h through kerf_sched_place).
 *
 * For each cluster size N (default 100, 1000, 5000 nodes) of 8 H100-80GB
 * each, every GPU in MIG mode (128 cores, 1 TiB), seed 1:
 *   fill   MIG pods of 1 to 7 compute slices (1g most often: weights
 *          8,4,2,2,1,0,1 for 1g..7g) are placed one at a time until 2N
 *          pods in a row fit nowhere;
 *   churn  then 20 N steps: a random pod leaves, a new random pod is placed
 *          (reusing free instances or carving new ones).
 * Only kerf_sched_place / kerf_sched_unreserve are timed (CLOCK_MONOTONIC,
 * and process CPU time beside it).  Reported: decisions per second, the
 * compute slices in use at the end of the fill, instances created and
 * destroyed, and peak RSS (getrusage, a high-water mark).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/parse.h"
#include "base/rng.h"
#include "cmd/opt.h"
#include "core/framework.h"
#include "core/mig/place.h"
#include "core/policy.h"

enum { MAX_NODES = 100000 };

struct held {
	struct kerf_pod p;
	struct kerf_binding b;
};

static double now_s(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct kerf_pod draw(struct kerf_rng *r)
{
	static const unsigned weights[7] = { 8, 4, 2, 2, 1, 0, 1 };
	unsigned total = 18, x = (unsigned)kerf_rng_below(r, total), s = 0;
	struct kerf_pod p = { .cpu_milli = 2000, .mem_mib = 8192, .nr_gpus = 1 };

	while (x >= weights[s])
		x -= weights[s++];
	p.mig_slices = (uint8_t)(s + 1);
	p.gpu_milli = (int32_t)(p.mig_slices * 1000 / 7);
	return p;
}

static int run(size_t nodes)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_policy_args args = { 0 };
	struct kerf_rng r;
	struct held *h;
	size_t nr = 0, cap = nodes * 8 * 7;
	uint64_t decisions = 0, fill_decisions, slices = 0, created = 0, destroyed = 0;
	double w0, c0, fill_w, fill_c, churn_w, churn_c;
	struct rusage ru;
	int miss = 0;

	kerf_cluster_init(&c);
	if (kerf_cluster_model(&c, "H100-80GB", 81920, NULL) != 0)
		return 1;
	for (size_t i = 0; i < nodes; i++) {
		char name[32];

		snprintf(name, sizeof(name), "n%zu", i);
		if (kerf_cluster_add_node(&c, name, 128000, 1 << 20, 0, 8, NULL) < 0 ||
		    kerf_cluster_set_mig(&c, i, 0xff, NULL) < 0)
			return 1;
	}
	h = calloc(cap, sizeof(*h));
	if (!h)
		return 1;
	args.cluster = &c;
	if (kerf_policy_build(&pol, "kerf", &args, NULL) < 0)
		return 1;
	kerf_sched_init(&s, &pol);
	kerf_rng_seed(&r, 1);

	w0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	while (miss < (int)(2 * nodes) && nr < cap) {
		struct kerf_pod p = draw(&r);
		struct kerf_binding b;

		decisions++;
		if (kerf_sched_place(&s, &c, &p, &b, NULL) != KERF_FIT) {
			miss++;
			continue;
		}
		miss = 0;
		h[nr++] = (struct held){ p, b };
	}
	fill_w = now_s(CLOCK_MONOTONIC) - w0;
	fill_c = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	fill_decisions = decisions;
	for (size_t k = 0; k < nr; k++)
		slices += h[k].p.mig_slices;

	w0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	for (size_t step = 0; step < 20 * nodes && nr > 0; step++) {
		size_t k = kerf_rng_below(&r, nr);
		struct kerf_pod p = draw(&r);
		struct kerf_binding b;

		if (kerf_sched_unreserve(&s, &c, &h[k].p, h[k].b, NULL) < 0)
			return 1;
		h[k] = h[--nr];
		if (kerf_sched_place(&s, &c, &p, &b, NULL) == KERF_FIT)
			h[nr++] = (struct held){ p, b };
	}
	churn_w = now_s(CLOCK_MONOTONIC) - w0;
	churn_c = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	for (size_t i = 0; i < nodes; i++) {
		created += c.nodes[i].mig->nr_created;
		destroyed += c.nodes[i].mig->nr_destroyed;
	}
	if (kerf_cluster_check(&c, NULL) < 0) {
		fprintf(stderr, "bench_mig_place: cluster check failed\n");
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("%6zu nodes  fill %7" PRIu64 " decisions %9.0f/s (cpu %.2fs wall %.2fs), "
	       "%.1f%% of slices in use  churn %7zu steps %9.0f/s (cpu %.2fs wall %.2fs)  "
	       "instances created %" PRIu64 " destroyed %" PRIu64 "  peak RSS %ld MiB\n",
	       nodes, fill_decisions, (double)fill_decisions / fill_w, fill_c, fill_w,
	       100.0 * (double)slices / (double)(nodes * 8 * 7), 20 * nodes,
	       (double)(20 * nodes) / churn_w, churn_c, churn_w, created, destroyed,
	       ru.ru_maxrss / 1024);
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_cluster_release(&c);
	free(h);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 100, 1000, 5000 };
	struct kerf_err err = { 0 };
	int opt;
	size_t sizes[8], nr = 0;

	opterr = 0;
	while ((opt = getopt(argc, argv, ":n:h")) != -1) {
		uint64_t v;

		if (opt == 'h') {
			printf("usage: bench_mig_place [-n NODES]...  (NODES 1..%d, at most 8 sizes)\n",
			       MAX_NODES);
			return 0;
		}
		if (opt != 'n') {
			kerf_opt_error("bench_mig_place", opt, argv);
			fprintf(stderr, "usage: bench_mig_place [-n NODES]...\n");
			return 2;
		}
		if (nr == 8) {
			fprintf(stderr, "bench_mig_place: -n: at most 8 sizes\n");
			return 2;
		}
		if (kerf_parse_u64_opt("-n", optarg, 1, MAX_NODES, &v, &err) < 0) {
			fprintf(stderr, "bench_mig_place: %s\n", err.msg);
			return 2;
		}
		sizes[nr++] = (size_t)v;
	}
	if (optind < argc) {
		kerf_opt_unexpected("bench_mig_place", argv[optind], NULL);
		return 2;
	}
	if (nr == 0) {
		memcpy(sizes, defaults, sizeof(defaults));
		nr = 3;
	}
	for (size_t i = 0; i < nr; i++)
		if (sizes[i] == 0 || run(sizes[i]) != 0)
			return 1;
	return 0;
}
