/*
 * openb_floor: how low can unallocated GPU at 100 % arrival go on an openb
 * trace, for any policy, with any number of moves?
 *
 * The pods are the benchmark's own: the same sample (kerf_fgd_seq_build,
 * same seeds) up to 100 % arrival, as `kerf sim openb` draws them.  Only
 * the fractional pods (one GPU, less than 1000 milli) are looked at, and
 * everything else is relaxed away (CPU, memory, GPU model, which pods may
 * move, the order of arrival), so both figures are generous to a policy:
 *
 *   bound    a proof.  A fraction over 500 milli needs a GPU of its own;
 *            the gap beside it (1000 - size) can only hold fractions no
 *            larger than the gap.  Even if the small fractions could be
 *            cut into pieces (each piece into a gap the whole fraction
 *            would fit), the gaps cannot all be filled.  The figure is
 *            unallocated GPU as the benchmark measures it (100 % - GPU in
 *            use), so while every fraction that arrived is placed it is at
 *            least the empty gaps over capacity.  (A policy gets under it
 *            only by failing big fractions that would fit, which trades
 *            810 milli of use for 190 of gap.)
 *   packer   what a strong offline bin packer reaches on the same fractions
 *            when it knows them all in advance and may put any anywhere:
 *            minimum bin slack (open a GPU with the largest fraction left,
 *            fill it with the subset of the rest that leaves least room,
 *            exactly, by a knapsack over the sizes).  Not a bound, a figure
 *            for the best a repacking defragmenter could hope for.
 *
 * usage: openb_floor --nodes F --pods F [--seeds A-B|A,B,...] [--inflate PCT]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/parse.h"
#include "cmd/opt.h"
#include "core/model.h"
#include "sim/fgd_seq.h"
#include "sim/openb.h"

enum { MILLI = 1000 };

struct floor_fig {
	size_t nr_frac;
	int64_t arrived;        /* GPU milli arrived up to 100 % */
	int64_t gap_empty;      /* milli of gaps beside big fractions never filled */
	int64_t packed_waste;   /* milli left empty by the offline packer */
	size_t packed_gpus;
};

/* Fractions by size: count[s] for s in 1..999. */
struct by_size {
	uint32_t count[MILLI];
};

/*
 * The bound: the most volume of small fractions (<= 500) that fits into
 * the gaps beside big ones (> 500), pieces allowed, larger sizes served
 * first (they have fewer gaps to go to, and every gap a larger one may use
 * a smaller one may too).
 */
static int64_t empty_gaps(const struct by_size *f)
{
	int64_t gap_ge[MILLI + 1] = { 0 };  /* milli of gaps of size >= g */
	int64_t used = 0, total;

	for (int s = 501; s < MILLI; s++)
		gap_ge[MILLI - s] += (int64_t)f->count[s] * (MILLI - s);
	for (int g = MILLI - 1; g >= 0; g--)
		gap_ge[g] += gap_ge[g + 1];
	total = gap_ge[0];
	for (int s = 500; s >= 1; s--) {
		int64_t room = gap_ge[s] - used, vol = (int64_t)f->count[s] * s;

		if (room > 0)
			used += vol < room ? vol : room;
	}
	return total - used;
}

/* Minimum bin slack: exact best fill of each GPU, largest fraction first. */
static void pack(struct by_size f, struct floor_fig *out)
{
	static int16_t from[MILLI];     /* size added to reach a value, 0: none */
	static bool reach[MILLI];

	for (int big = MILLI - 1; big >= 1;) {
		int room, best = 0;

		if (!f.count[big]) {
			big--;
			continue;
		}
		f.count[big]--;
		room = MILLI - big;
		memset(reach, 0, sizeof(reach));
		memset(from, 0, sizeof(from));
		reach[0] = true;
		for (int s = 1; s <= room && s <= big; s++) {
			uint32_t copies = f.count[s];

			if ((uint32_t)(room / s) < copies)
				copies = (uint32_t)(room / s);
			for (uint32_t k = 0; k < copies; k++)
				for (int v = room; v >= s; v--)
					if (!reach[v] && reach[v - s]) {
						reach[v] = true;
						from[v] = (int16_t)s;
					}
		}
		for (int v = room; v >= 0; v--)
			if (reach[v]) {
				best = v;
				break;
			}
		for (int v = best; v > 0; v -= from[v])
			f.count[from[v]]--;
		out->packed_waste += room - best;
		out->packed_gpus++;
	}
}

static int one_seed(const struct kerf_openb *trace, const struct kerf_pod *reqs,
		    int64_t cap, int inflate, uint64_t seed, struct floor_fig *out,
		    struct kerf_err *err)
{
	uint32_t *seq = NULL;
	size_t nr_seq = 0;
	struct by_size f = { { 0 } };
	int rc = kerf_fgd_seq_build(reqs, trace->nr_pods, cap, inflate, seed, &seq,
				   &nr_seq, err);

	if (rc < 0)
		return rc;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < nr_seq; i++) {
		const struct kerf_pod *p = &reqs[seq[i]];
		int64_t g = kerf_pod_gpu_milli_total(p);

		/* the same cut as the figure at 100 % arrival */
		if ((out->arrived + g) * 100 > cap * 100 + cap / 2)
			break;
		out->arrived += g;
		if (kerf_pod_is_fraction(p) && p->gpu_milli > 0) {
			f.count[p->gpu_milli]++;
			out->nr_frac++;
		}
	}
	free(seq);
	out->gap_empty = empty_gaps(&f);
	pack(f, out);
	return 0;
}

static double pct(int64_t milli, int64_t cap)
{
	return 100.0 * (double)milli / (double)cap;
}

enum { MAX_SEEDS = 1000 };

static const char usage_line[] =
	"usage: openb_floor --nodes F --pods F [--seeds A-B|A,B,...] [--inflate PCT]\n"
	"  seeds: at most 1000, each once (default 42-51); PCT: 100..1000 (default 130)\n";

int main(int argc, char **argv)
{
	const char *nodes = NULL, *pods = NULL;
	uint64_t seeds[MAX_SEEDS], v;
	size_t nr_seeds = 0;
	int inflate = 130;
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "pods", required_argument, NULL, 'p' },
		{ "seeds", required_argument, NULL, 's' },
		{ "inflate", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kerf_openb trace;
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	struct kerf_pod *reqs;
	double sum_bound = 0, sum_packed = 0;
	int64_t cap;
	int opt;

	kerf_parse_seeds_opt("--seeds", "42-51", seeds, MAX_SEEDS, &nr_seeds, NULL);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n': nodes = optarg; break;
		case 'p': pods = optarg; break;
		case 's':
			if (kerf_parse_seeds_opt("--seeds", optarg, seeds, MAX_SEEDS,
						 &nr_seeds, &err) < 0) {
				fprintf(stderr, "openb_floor: %s\n", err.msg);
				return 2;
			}
			break;
		case 'i':
			if (kerf_parse_u64_opt("--inflate", optarg, 100, 1000, &v,
					       &err) < 0) {
				fprintf(stderr, "openb_floor: %s\n", err.msg);
				return 2;
			}
			inflate = (int)v;
			break;
		case 'h':
			printf("%s", usage_line);
			return 0;
		default:
			kerf_opt_error("openb_floor", opt, argv);
			fprintf(stderr, "%s", usage_line);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("openb_floor", argv[optind], NULL);
		return 2;
	}
	if (!nodes || !pods) {
		fprintf(stderr, "openb_floor: --nodes and --pods are required\n");
		return 2;
	}
	kerf_openb_init(&trace);
	if (kerf_openb_load(&trace, nodes, pods, &err) < 0 ||
	    kerf_openb_cluster(&trace, NULL, &c, &err) < 0) {
		fprintf(stderr, "openb_floor: %s\n", err.msg);
		kerf_openb_release(&trace);
		return 1;
	}
	cap = kerf_cluster_gpu_milli_capacity(&c);
	reqs = calloc(trace.nr_pods ? trace.nr_pods : 1, sizeof(*reqs));
	for (size_t i = 0; reqs && i < trace.nr_pods; i++)
		if (kerf_openb_pod_request(&trace, i, &c, &reqs[i], &err) < 0) {
			fprintf(stderr, "openb_floor: %s\n", err.msg);
			return 1;
		}
	if (!reqs) {
		fprintf(stderr, "openb_floor: out of memory\n");
		return 1;
	}
	printf("capacity %.0f GPUs; fractional pods only, every other limit relaxed\n",
	       (double)cap / MILLI);
	printf("seed  fractions  arrived %%  empty gaps GPU  bound %%  packer's GPUs  packer empty %%\n");
	for (size_t i = 0; i < nr_seeds; i++) {
		uint64_t sd = seeds[i];
		struct floor_fig f;

		if (one_seed(&trace, reqs, cap, inflate, sd, &f, &err) < 0) {
			fprintf(stderr, "openb_floor: %s\n", err.msg);
			return 1;
		}
		printf("%4" PRIu64 "  %9zu  %9.2f  %14.1f  %7.2f  %13zu  %14.2f\n", sd, f.nr_frac,
		       pct(f.arrived, cap), (double)f.gap_empty / MILLI,
		       pct(f.gap_empty, cap), f.packed_gpus, pct(f.packed_waste, cap));
		sum_bound += pct(f.gap_empty, cap);
		sum_packed += pct(f.packed_waste, cap);
	}
	printf("mean: with every fraction placed, unallocated GPU at 100 %% arrival >= %.2f %% "
	       "(proof); a clairvoyant offline packer of the fractions alone leaves %.2f %% empty\n",
	       sum_bound / (double)nr_seeds, sum_packed / (double)nr_seeds);
	free(reqs);
	kerf_cluster_release(&c);
	kerf_openb_release(&trace);
	return 0;
}
