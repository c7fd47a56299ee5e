#include "sim/demo_day.h"

/*
 * kerf_demo_day_yaml and its length are generated at build time from
 * examples/scenario/builtin-day.yaml (scripts/embed_text.py, meson.build).
 */
int kerf_demo_day(struct kerf_scenario *sc, struct kerf_err *err)
{
	return kerf_scenario_parse(sc, "built-in demo", kerf_demo_day_yaml,
				   kerf_demo_day_yaml_len, err);
}
