#include "golden_openb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim/openb_batch.h"

enum { NR_SEEDS = 10 };

const char *golden_openb_dir(void)
{
	const char *d = getenv("KERF_OPENB_DIR");

	return d && *d ? d : "../shared/data/openb";
}

bool golden_openb_present(const char *trace)
{
	char pods[4096];
	FILE *f;

	snprintf(pods, sizeof(pods), "%s/openb_pod_list_%s.csv",
		 golden_openb_dir(), trace);
	f = fopen(pods, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

void golden_openb_load(struct kerf_openb *t, const char *trace)
{
	char nodes[4096], pods[4096];
	struct kerf_err err = { 0 };

	snprintf(nodes, sizeof(nodes), "%s/openb_node_list_gpu_node.csv",
		 golden_openb_dir());
	snprintf(pods, sizeof(pods), "%s/openb_pod_list_%s.csv",
		 golden_openb_dir(), trace);
	kerf_openb_init(t);
	assert_int_equal(kerf_openb_load(t, nodes, pods, &err), 0);
}

double golden_openb_unalloc(const struct kerf_openb *t, const char *policy)
{
	uint64_t seeds[NR_SEEDS];
	struct kerf_run runs[NR_SEEDS];
	struct kerf_batch_summary *sum = malloc(sizeof(*sum));
	struct kerf_run_opts opts = { .policy = policy, .inflate_pct = 130 };
	struct kerf_err err = { 0 };
	double v;

	assert_non_null(sum);
	for (int i = 0; i < NR_SEEDS; i++)
		seeds[i] = (uint64_t)(42 + i);
	assert_int_equal(kerf_batch_run(t, &opts, seeds, NR_SEEDS, 2, runs,
					NULL, NULL, sum, &err), 0);
	v = sum->unalloc_pct_100_mean;
	free(sum);
	return v;
}
