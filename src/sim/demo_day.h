/*
 * demo_day: the built-in scenario of `kerf sim`: a day on a mixed cluster
 * (H100 in NVLink domains, A100, L4) shared by a product organisation
 * serving production inference and a research organisation with two teams
 * of different weights running training gangs, sweeps and notebooks, with a
 * GPU-hour budget and idle reclamation.  It is the scenario file
 * examples/scenario/builtin-day.yaml (docs/scenario.md), compiled in at
 * build time and parsed by the same reader as any scenario file.
 */
#ifndef KERF_SIM_DEMO_DAY_H
#define KERF_SIM_DEMO_DAY_H

#include <stddef.h>

#include "sim/scenario.h"

/* The bytes of examples/scenario/builtin-day.yaml, NUL-terminated. */
extern const char kerf_demo_day_yaml[];
extern const size_t kerf_demo_day_yaml_len;

/* Parse the built-in scenario into sc. */
int kerf_demo_day(struct kerf_scenario *sc, struct kerf_err *err);

#endif /* KERF_SIM_DEMO_DAY_H */
