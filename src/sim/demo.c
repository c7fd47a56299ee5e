#include "sim/demo.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/rng.h"

static const struct demo_pool {
	const char *prefix;
	const char *model;
	int nr_nodes;
	int nr_gpus;
	int64_t cpu_milli;
	int64_t mem_mib;
} demo_pools[] = {
	{ "h100", "H100-80GB", 16, 8, 192000, 2097152 },
	{ "a100", "A100-80GB", 24, 8, 128000, 1048576 },
	{ "l4", "L4", 32, 4, 64000, 262144 },
	{ "t4", "T4", 24, 2, 32000, 131072 },
};

static int64_t between(struct kerf_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)kerf_rng_below(r, (uint64_t)(hi - lo + 1));
}

static int add_nodes(struct kerf_openb *o, struct kerf_err *err)
{
	const size_t nr_pools = sizeof(demo_pools) / sizeof(demo_pools[0]);
	char *csv = malloc(64 * 1024), *w;
	int rc;

	/* Through the real reader, so the demo exercises the same checks. */
	if (!csv)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	w = csv + sprintf(csv, "sn,cpu_milli,memory_mib,gpu,model\n");
	for (size_t p = 0; p < nr_pools; p++) {
		const struct demo_pool *dp = &demo_pools[p];

		for (int i = 0; i < dp->nr_nodes; i++)
			w += sprintf(w, "%s-%02d,%lld,%lld,%d,%s\n", dp->prefix, i,
				     (long long)dp->cpu_milli,
				     (long long)dp->mem_mib, dp->nr_gpus,
				     dp->model);
	}
	rc = kerf_openb_parse_nodes(o, "demo-nodes", csv, (size_t)(w - csv), err);
	free(csv);
	return rc;
}

static int write_pod(char *w, struct kerf_rng *r, int i)
{
	static const int32_t fractions[] = { 100, 200, 250, 300, 500, 700 };
	int64_t roll = between(r, 0, 99), cpu, mem;
	int gpus = 0;
	int32_t milli = 0;
	const char *spec = "";

	if (roll < 12) {                 /* CPU-only */
		cpu = between(r, 4, 32) * 1000;
		mem = between(r, 8, 128) * 1024;
	} else if (roll < 52) {          /* a fraction of one GPU */
		gpus = 1;
		milli = fractions[kerf_rng_below(r, 6)];
		cpu = between(r, 2, 8) * 1000;
		mem = between(r, 8, 64) * 1024;
	} else if (roll < 90) {          /* one GPU */
		gpus = 1;
		milli = 1000;
		cpu = between(r, 4, 16) * 1000;
		mem = between(r, 16, 128) * 1024;
	} else if (roll < 95) {
		gpus = 2;
		milli = 1000;
		cpu = between(r, 8, 32) * 1000;
		mem = between(r, 32, 256) * 1024;
	} else if (roll < 98) {
		gpus = 4;
		milli = 1000;
		cpu = between(r, 16, 64) * 1000;
		mem = between(r, 64, 512) * 1024;
	} else {
		gpus = 8;
		milli = 1000;
		cpu = between(r, 48, 112) * 1000;
		mem = between(r, 256, 768) * 1024;
	}
	if (gpus > 0) {
		int64_t pin = between(r, 0, 99);

		if (pin < 10)
			spec = "H100-80GB|A100-80GB";
		else if (pin < 15 && gpus <= 2)
			spec = "L4|T4";
	}
	return sprintf(w, "demo-pod-%05d,%lld,%lld,%d,%d,%s\n", i,
		       (long long)cpu, (long long)mem, gpus, milli, spec);
}

int kerf_demo_trace(struct kerf_openb *o, uint64_t seed, struct kerf_err *err)
{
	struct kerf_rng r;
	char *csv, *w;
	int rc = add_nodes(o, err);

	if (rc < 0)
		return rc;
	csv = malloc((size_t)KERF_DEMO_PODS * 128 + 128);
	if (!csv)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_rng_seed(&r, seed);
	w = csv + sprintf(csv, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
	for (int i = 0; i < KERF_DEMO_PODS; i++)
		w += write_pod(w, &r, i);
	rc = kerf_openb_parse_pods(o, "demo-pods", csv, (size_t)(w - csv), err);
	free(csv);
	return rc;
}
