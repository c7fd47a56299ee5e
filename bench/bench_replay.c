/*
 * bench_replay: a long run through the time simulator, to show that the
 * core forgets finished work: memory and the cost of a cycle stay flat
 * while a million workloads arrive and finish.
 *
 * Scenario (deterministic): 100 nodes of 8 GPUs, 64 cores, 512 GiB; one
 * tenant; --workloads workloads (default 1,000,000) of one pod asking a
 * whole GPU (70 %) or a quarter of one (30 %, two generators), arriving
 * every 150 ms on average (exponential) and running 90 s on average
 * (exponential), so about 600 GPUs' worth is live at any time; a cycle
 * every 10 s; policy kerf.
 *
 * Printed per tenth of the arrivals: workloads submitted so far, held by
 * the state (pending and running) and by the simulator, the process's
 * resident memory, simulated cycles and the wall time per cycle in that
 * tenth (the events between cycles included: arrivals, finishes).  Flat
 * rows are the figure: the state holds what is live, not what ever was.
 * (The simulator's exact wait percentiles would keep 16 bytes per start;
 * they are off here.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parse.h"
#include "sim/scenario.h"
#include "sim/timesim.h"

struct watch {
	uint64_t every;              /* submitted per row */
	uint64_t next;
	uint64_t last_cycles;
	double last_s;
	long rss_first_kib;
	long rss_max_kib;
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Resident memory now, KiB (/proc/self/statm; 0 when unreadable). */
static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * 4;
}

static int row(void *ctx, struct kerf_timesim *ts, const struct kerf_event *ev)
{
	struct watch *w = ctx;
	uint64_t submitted = kerf_timesim_submitted(ts);
	double t;
	long rss;

	(void)ev;
	if (submitted < w->next)
		return 0;
	t = now_s();
	rss = rss_kib();
	if (!w->rss_first_kib)
		w->rss_first_kib = rss;
	if (rss > w->rss_max_kib)
		w->rss_max_kib = rss;
	printf("%10" PRIu64 " %9zu %9zu %9.1f %8" PRIu64 " %10.3f\n", submitted,
	       ts->st.nr_wl, ts->live_wl, (double)rss / 1024,
	       ts->nr_cycles - w->last_cycles,
	       ts->nr_cycles > w->last_cycles
		       ? (t - w->last_s) * 1e3 / (double)(ts->nr_cycles - w->last_cycles)
		       : 0.0);
	fflush(stdout);
	w->last_cycles = ts->nr_cycles;
	w->last_s = t;
	w->next += w->every;
	return 0;
}

static void generator(struct kerf_scn_generator *g, const char *name,
		      uint32_t count, int64_t every_ms, int32_t milli)
{
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->tenant, sizeof(g->tenant), "team");
	snprintf(g->class_name, sizeof(g->class_name), "batch");
	g->count = count;
	g->interarrival_ms = every_ms;
	g->arrival = KERF_DIST_EXP;
	g->duration_ms = 90 * 1000;
	g->duration = KERF_DIST_EXP;
	g->set = (struct kerf_podset){
		.req = { .cpu_milli = 4000, .mem_mib = 16384, .nr_gpus = 1,
			 .gpu_milli = milli },
		.count = 1,
	};
	g->utilisation_pct = 100;
}

int main(int argc, char **argv)
{
	struct kerf_priority_class batch = { .name = "batch", .value = 100,
					     .preemptible = true };
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	struct watch w = { 0 };
	uint64_t total = 1000000;
	double t0;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "--workloads")) {
		if (kerf_parse_u64_opt("--workloads", argv[2], 10, 100000000, &total,
				       &err) < 0) {
			fprintf(stderr, "bench_replay: %s\n", err.msg);
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench_replay [--workloads N]\n");
		return 2;
	}
	kerf_scenario_init(&sc);
	sc.nodes = calloc(1, sizeof(*sc.nodes));
	sc.tenants = calloc(1, sizeof(*sc.tenants));
	sc.generators = calloc(2, sizeof(*sc.generators));
	if (!sc.nodes || !sc.tenants || !sc.generators)
		return 1;
	snprintf(sc.name, sizeof(sc.name), "replay");
	sc.seed = 7;
	/* 150 ms between arrivals on average, both generators together */
	sc.horizon_ms = (int64_t)total * 150 + 3600 * 1000;
	sc.cycle_ms = 10 * 1000;
	snprintf(sc.policy, sizeof(sc.policy), "kerf");
	sc.nodes[0] = (struct kerf_scn_nodes){
		.prefix = "gpu-", .count = 100, .cpu_milli = 64000,
		.mem_mib = 524288, .gpus = 8, .model = "H100-80GB",
		.gpu_mem_mib = 81920,
	};
	sc.nr_nodes = 1;
	kerf_classes_init(&sc.classes);
	kerf_classes_add(&sc.classes, &batch, NULL);
	snprintf(sc.tenants[0].name, sizeof(sc.tenants[0].name), "team");
	sc.tenants[0].weight = 1;
	sc.nr_tenants = 1;
	generator(&sc.generators[0], "whole", (uint32_t)(total * 7 / 10), 150 * 10 / 7, 1000);
	generator(&sc.generators[1], "quarter", (uint32_t)(total - total * 7 / 10),
		  150 * 10 / 3, 250);
	sc.nr_generators = 2;
	rc = kerf_timesim_init(&ts, &sc, &err);
	if (rc < 0) {
		fprintf(stderr, "bench_replay: %s\n", err.msg);
		return 1;
	}
	w.every = total / 10;
	w.next = w.every;
	w.last_s = t0 = now_s();
	ts.hook = row;
	ts.hook_ctx = &w;
	/* exact wait percentiles keep every wait: not what is measured here */
	ts.no_waits = true;
	printf("bench_replay: %" PRIu64 " workloads through the time simulator, 100 nodes x 8 GPUs\n",
	       total);
	printf(" submitted  in state  sim recs   RSS MiB   cycles   ms/cycle\n");
	rc = kerf_timesim_run(&ts, &err);
	if (rc < 0) {
		fprintf(stderr, "bench_replay: %s\n", err.msg);
		return 1;
	}
	printf("%" PRIu64 " workloads, %" PRIu64 " finished work forgotten, %" PRIu64 " events, %" PRIu64 " cycles in %.1f s; RSS %.1f MiB at the first row, %.1f MiB at most\n",
	       kerf_timesim_submitted(&ts), ts.nr_forgotten, ts.nr_events, ts.nr_cycles,
	       now_s() - t0, (double)w.rss_first_kib / 1024,
	       (double)w.rss_max_kib / 1024);
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
	return 0;
}
