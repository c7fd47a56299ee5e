/*
 * kerf sim placement: the placement demo.  Generates a mixed cluster and a
 * workload, replays it with the FGD method under four policies, and says in
 * a few lines what kerf did better and why a pod it dropped was dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "core/policy.h"
#include "sim/demo.h"
#include "sim/openb_batch.h"
#include "sim/openb_report.h"

enum { DEMO_SEEDS = 5, DEMO_TRACE_SEED = 2026 };

static void describe_cluster(const struct kerf_openb *t)
{
	size_t gpus = 0;

	for (size_t i = 0; i < t->nr_nodes; i++)
		gpus += (size_t)t->nodes[i].nr_gpus;
	printf("cluster:  %zu nodes, %zu GPUs: 16 x 8 H100-80GB, 24 x 8 A100-80GB, 32 x 4 L4, 24 x 2 T4\n",
	       t->nr_nodes, gpus);
}

static void describe_workload(const struct kerf_openb *t)
{
	size_t cpu = 0, frac = 0, one = 0, multi = 0, pinned = 0;

	for (size_t i = 0; i < t->nr_pods; i++) {
		const struct kerf_openb_pod *p = &t->pods[i];

		if (p->nr_gpus == 0)
			cpu++;
		else if (p->gpu_milli < 1000)
			frac++;
		else if (p->nr_gpus == 1)
			one++;
		else
			multi++;
		pinned += p->gpu_spec[0] != '\0';
	}
	printf("workload: %zu pods: %zu CPU-only, %zu GPU fractions, %zu one-GPU, %zu multi-GPU; %zu pinned to GPU models\n",
	       t->nr_pods, cpu, frac, one, multi, pinned);
	printf("method:   shuffled and resampled to 130%% of GPU capacity, one pod at a time, a pod that fits nowhere is dropped; %d seeds\n\n",
	       DEMO_SEEDS);
}

int kerf_cmd_sim_demo(int argc, char **argv)
{
	static const char *const policies[] = { "first-fit", "best-fit", "fgd",
						KERF_POLICY_DEFAULT };
	const size_t nr_policies = sizeof(policies) / sizeof(policies[0]);
	uint64_t seeds[DEMO_SEEDS];
	struct kerf_run runs[DEMO_SEEDS];
	double unalloc[4] = { 0 };
	char why[KERF_REASON_MAX] = "";
	size_t why_pod = 0;
	struct kerf_openb trace;
	struct kerf_err err = { 0 };
	struct kerf_batch_summary *sum;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	int status = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: kerf sim placement\n\n"
		       "first-fit, best-fit, fgd and %s placing the same pods on the same\n"
		       "cluster (a built-in openb-like trace, %d seeds): unallocated GPU\n"
		       "per policy, and why the first pod that did not fit waited.\n",
		       KERF_POLICY_DEFAULT, DEMO_SEEDS);
		return 0;
	}
	if (argc > 1) {
		kerf_opt_unexpected("kerf sim placement", argv[1],
				    "(try 'kerf sim placement --help')");
		return 2;
	}
	for (int i = 0; i < DEMO_SEEDS; i++)
		seeds[i] = (uint64_t)(i + 1);
	kerf_openb_init(&trace);
	sum = malloc(sizeof(*sum));
	if (!sum || kerf_demo_trace(&trace, DEMO_TRACE_SEED, &err) < 0) {
		fprintf(stderr, "kerf sim: %s\n", sum ? err.msg : "out of memory");
		free(sum);
		kerf_openb_release(&trace);
		return 1;
	}
	printf("kerf sim placement: kerf against FGD on a generated GPU-sharing workload\n");
	describe_cluster(&trace);
	describe_workload(&trace);
	kerf_report_table_head(stdout);
	for (size_t i = 0; i < nr_policies; i++) {
		struct kerf_run_opts opts = { .policy = policies[i],
					      .inflate_pct = 130 };

		if (kerf_batch_run(&trace, &opts, seeds, DEMO_SEEDS, (int)jobs, runs,
				   NULL, NULL, sum, &err) < 0) {
			fprintf(stderr, "kerf sim: %s: %s\n", policies[i], err.msg);
			status = 1;
			break;
		}
		kerf_report_table_row(stdout, sum);
		unalloc[i] = sum->unalloc_pct_100_mean;
		if (i == nr_policies - 1 && runs[0].first_failure[0]) {
			memcpy(why, runs[0].first_failure, sizeof(why));
			why_pod = runs[0].first_failure_pod;
		}
	}
	if (status == 0) {
		printf("\nkerf leaves %.2f%% of the GPUs unallocated when the arrived work equals the cluster, fgd %.2f%%, best-fit %.2f%%.\n",
		       unalloc[3], unalloc[2], unalloc[1]);
		if (why[0]) {
			const struct kerf_openb_pod *p = &trace.pods[why_pod];

			printf("the first pod kerf dropped (seed 1): %s asking %d GPU x %d milli, %lld mCPU, %lld MiB:\n  %s\n",
			       p->name, p->nr_gpus, p->gpu_milli,
			       (long long)p->cpu_milli, (long long)p->mem_mib, why);
		}
		printf("\nreplay the published trace: kerf sim openb --nodes FILE --pods FILE --policy all\n");
	}
	free(sum);
	kerf_openb_release(&trace);
	return status;
}
