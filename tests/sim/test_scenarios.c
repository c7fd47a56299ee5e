/*
 * test_scenarios: the scenario tests named after the failure modes in the
 * product brief, each a YAML scenario in tests/sim/ run through the time
 * simulator (the real core), with the invariants of `kerf sim check`
 * verified after every event and the scenario's own claim asserted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/scenario.h"
#include "sim/timesim.h"
#include "sim/timesim_report.h"

static void load(struct kerf_scenario *sc, const char *file)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char path[4096];
	struct kerf_err err = { 0 };

	snprintf(path, sizeof(path), "%s/tests/sim/%s", root ? root : ".", file);
	if (kerf_scenario_load(sc, path, &err) < 0)
		fail_msg("%s", err.msg);
}

static int check_state(void *ctx, struct kerf_timesim *ts,
		       const struct kerf_event *ev)
{
	struct kerf_err err = { 0 };

	(void)ctx;
	(void)ev;
	if (kerf_state_check(&ts->st, &err) < 0)
		fail_msg("t=%lld ms: %s", (long long)ts->now_ms, err.msg);
	return 0;
}

static void run(struct kerf_timesim *ts, const struct kerf_scenario *sc)
{
	struct kerf_err err = { 0 };

	if (kerf_timesim_init(ts, sc, &err) < 0)
		fail_msg("%s", err.msg);
	ts->hook = check_state;
	if (kerf_timesim_run(ts, &err) < 0)
		fail_msg("%s", err.msg);
}

/* 6. Weights 2:1 under sustained contention converge to a 2:1 share. */
static void test_fair_share_2_to_1(void **state)
{
	struct kerf_scenario sc;
	struct kerf_timesim ts;

	(void)state;
	load(&sc, "fair_share.yaml");
	run(&ts, &sc);
	for (size_t t = 1; t < ts.st.tenants.nr; t++) {
		int64_t e = kerf_ts_entitlement_ppm(&ts.st.tenants, (int)t);
		int64_t s = kerf_ts_share_ppm(&ts, (int)t);

		printf("# %s: entitled %.1f%%, share %.1f%%\n",
		       ts.st.tenants.t[t].name, (double)e / 1e4, (double)s / 1e4);
		/* within 5 % of the entitlement */
		assert_true(s * 100 >= e * 95 && s * 100 <= e * 105);
	}
	kerf_timesim_release(&ts);
	kerf_scenario_release(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fair_share_2_to_1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
