/*
 * gen_pods: a synthetic pod list with a chosen number of distinct shapes, in
 * the openb pod format (name,cpu_milli,memory_mib,num_gpu,gpu_milli), for
 * timing the placement policies against what a live cluster sends: many
 * distinct requests instead of the trace's 151.
 *
 * usage: gen_pods --shapes N [--rows R] [--seed S] > pods.csv
 *
 * Every one of the first N rows has its own shape, i.e. its own FGD key
 * (cpu_milli, gpu_milli, num_gpu; no gpu_spec), drawn from a fixed mix of
 * pod classes loosely like a GPU-sharing cluster's.  The mix and the ranges
 * are this tool's own, not taken from any trace:
 *
 *   class          share   cpu_milli       gpu_milli
 *   CPU only        12 %   500..32000      0
 *   GPU fraction    38 %   500..8000       50..990 of one GPU
 *   1 GPU           42 %   1000..16000     1000
 *   2 GPUs           3 %   2000..24000     1000 each
 *   4 GPUs           2 %   4000..40000     1000 each
 *   8 GPUs           3 %   8000..88000     1000 each
 *
 * Memory is 2..8 GiB per core asked (not part of the shape).  Rows beyond
 * the first N (--rows R > N) repeat shapes drawn uniformly from them.  The
 * same arguments give the same file, byte for byte.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/rng.h"

struct shape {
	int64_t cpu_milli;
	int64_t mem_mib;
	int32_t gpu_milli;
	int nr_gpus;
};

struct pod_class {
	int share_pct;
	int nr_gpus;
	int64_t cpu_lo, cpu_hi;
	bool fraction;
};

static const struct pod_class classes[] = {
	{ 12, 0, 500, 32000, false },
	{ 38, 1, 500, 8000, true },
	{ 42, 1, 1000, 16000, false },
	{ 3, 2, 2000, 24000, false },
	{ 2, 4, 4000, 40000, false },
	{ 3, 8, 8000, 88000, false },
};

enum { NR_CLASSES = sizeof(classes) / sizeof(classes[0]) };

static int64_t below(struct kerf_rng *rng, int64_t n)
{
	return (int64_t)kerf_rng_below(rng, (uint64_t)n);
}

static void draw(struct kerf_rng *rng, struct shape *s)
{
	int64_t r = below(rng, 100);
	size_t c = 0;

	while (c + 1 < NR_CLASSES && r >= classes[c].share_pct)
		r -= classes[c++].share_pct;
	s->nr_gpus = classes[c].nr_gpus;
	s->cpu_milli = classes[c].cpu_lo +
		       below(rng, classes[c].cpu_hi - classes[c].cpu_lo + 1);
	if (s->nr_gpus == 0)
		s->gpu_milli = 0;
	else if (classes[c].fraction)
		s->gpu_milli = (int32_t)(50 + below(rng, 941));
	else
		s->gpu_milli = 1000;
	s->mem_mib = (s->cpu_milli * (2048 + below(rng, 6145)) + 999) / 1000;
}

static uint64_t shape_hash(const struct shape *s)
{
	uint64_t h = (uint64_t)s->cpu_milli * 0x9e3779b97f4a7c15ULL;

	h ^= ((uint64_t)(uint32_t)s->gpu_milli << 8 | (uint64_t)s->nr_gpus) *
	     0xff51afd7ed558ccdULL;
	return h ^ (h >> 29);
}

static bool same_key(const struct shape *a, const struct shape *b)
{
	return a->cpu_milli == b->cpu_milli && a->gpu_milli == b->gpu_milli &&
	       a->nr_gpus == b->nr_gpus;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gen_pods --shapes N [--rows R] [--seed S] > pods.csv\n"
		   "  N distinct shapes (1..1000000); R rows >= N (default N);\n"
		   "  S seed (default 1)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "shapes", required_argument, NULL, 'n' },
		{ "rows", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t nr_shapes = 0, nr_rows = 0, seed = 1;
	size_t nr_slots = 1;
	struct kerf_err err = { 0 };
	struct shape *shapes;
	uint32_t *slots;
	struct kerf_rng rng;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (kerf_parse_u64_opt("--shapes", optarg, 1, 1000000,
					       &nr_shapes, &err) < 0)
				goto bad;
			break;
		case 'r':
			if (kerf_parse_u64_opt("--rows", optarg, 1, 100000000,
					       &nr_rows, &err) < 0)
				goto bad;
			break;
		case 's':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					       &seed, &err) < 0)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || nr_shapes == 0)
		goto bad;
	if (nr_rows == 0)
		nr_rows = nr_shapes;
	if (nr_rows < nr_shapes)
		goto bad;
	while (nr_slots < nr_shapes * 2)
		nr_slots *= 2;
	shapes = calloc(nr_shapes, sizeof(*shapes));
	slots = calloc(nr_slots, sizeof(*slots));
	if (!shapes || !slots) {
		fprintf(stderr, "gen_pods: out of memory\n");
		return 1;
	}
	kerf_rng_seed(&rng, seed);
	/* Draw until the key is new: the key space is far larger than N. */
	for (size_t i = 0; i < nr_shapes;) {
		struct shape s;
		size_t j;

		draw(&rng, &s);
		for (j = shape_hash(&s) & (nr_slots - 1); slots[j];
		     j = (j + 1) & (nr_slots - 1))
			if (same_key(&shapes[slots[j] - 1], &s))
				break;
		if (slots[j])
			continue;
		shapes[i] = s;
		slots[j] = (uint32_t)++i;
	}
	printf("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n");
	for (size_t i = 0; i < nr_rows; i++) {
		const struct shape *s =
			&shapes[i < nr_shapes ? i
					      : (size_t)below(&rng,
							      (int64_t)nr_shapes)];

		printf("gen-pod-%07zu,%" PRId64 ",%" PRId64 ",%d,%" PRId32 "\n",
		       i, s->cpu_milli, s->mem_mib, s->nr_gpus, s->gpu_milli);
	}
	free(slots);
	free(shapes);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "gen_pods: cannot write: %s\n", strerror(errno));
		return 1;
	}
	return 0;
bad:
	if (err.msg[0])
		fprintf(stderr, "gen_pods: %s\n", err.msg);
	usage(stderr);
	return 2;
}
