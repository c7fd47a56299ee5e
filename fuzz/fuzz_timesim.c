/*
 * fuzz_timesim: libFuzzer target for the simulator's event loop, driven by
 * a scenario read from the input (the YAML text, as fuzz_scenario).  A
 * scenario that parses is clamped to a small amount of work, then run
 * through kerf_timesim_init, kerf_timesim_run and kerf_timesim_release,
 * and the state is checked with kerf_state_check at the end.  Only those
 * public calls are used: the simulator's internals may change under it.
 *
 * The clamp keeps every scenario valid: at most CLAMP_NODES nodes (a larger
 * cluster is skipped, since shrinking it could break the quota sums), a
 * horizon of at most CLAMP_HORIZON_MS, at most CLAMP_CYCLES cycles (a
 * longer cycle), at most CLAMP_WORKLOADS workloads per generator and
 * CLAMP_PODS pods per workload (min_count with them).
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - a refusal (of the reader, init or run) has a negative, recorded code
 *    and a message of printable ASCII;
 *  - after a run the state passes kerf_state_check (counters re-derived,
 *    no GPU held twice, quotas as charged, gangs whole).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_timesim"
#include "check.h"

#include <stdint.h>
#include <string.h>

#include "core/state.h"
#include "sim/scenario.h"
#include "sim/timesim.h"

enum {
	CLAMP_NODES = 64,
	CLAMP_WORKLOADS = 24,
	CLAMP_PODS = 16,
	CLAMP_CYCLES = 400,
};

#define CLAMP_HORIZON_MS ((int64_t)6 * 3600 * 1000)

static const char input_path[] = "fuzz-input.yaml";

static void check_refusal(int rc, const struct kerf_err *err)
{
	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
}

/* Shrink the work; false when the scenario is too large to shrink safely. */
static bool clamp(struct kerf_scenario *sc)
{
	uint64_t nodes = 0;

	for (size_t i = 0; i < sc->nr_nodes; i++)
		nodes += sc->nodes[i].count;
	if (nodes > CLAMP_NODES)
		return false;
	if (sc->horizon_ms > CLAMP_HORIZON_MS)
		sc->horizon_ms = CLAMP_HORIZON_MS;
	if (sc->horizon_ms / sc->cycle_ms > CLAMP_CYCLES)
		sc->cycle_ms = sc->horizon_ms / CLAMP_CYCLES + 1;
	for (size_t i = 0; i < sc->nr_generators; i++) {
		struct kerf_scn_generator *g = &sc->generators[i];

		if (g->count > CLAMP_WORKLOADS)
			g->count = CLAMP_WORKLOADS;
		if (g->set.count > CLAMP_PODS)
			g->set.count = CLAMP_PODS;
		if (g->min_count > g->set.count)
			g->min_count = g->set.count;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	int rc = kerf_scenario_parse(&sc, input_path, (const char *)data, size,
				     &err);

	if (rc < 0) {
		check_refusal(rc, &err);
		return 0;
	}
	if (!clamp(&sc)) {
		kerf_scenario_release(&sc);
		return 0;
	}
	rc = kerf_timesim_init(&ts, &sc, &err);
	if (rc < 0) {
		/* a policy may refuse the workload it is given (fgd); init
		 * cleans up after itself */
		check_refusal(rc, &err);
		kerf_scenario_release(&sc);
		return 0;
	}
	rc = kerf_timesim_run(&ts, &err);
	if (rc < 0) {
		check_refusal(rc, &err);
	} else {
		kerf_err_clear(&err);
		CHECK_MSG(kerf_state_check(&ts.st, &err) == 0, err.msg);
	}
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
	return 0;
}
