/*
 * sim_scenario_opts: --policy NAME and --seed N of the commands that run a
 * scenario (`kerf sim`, `kerf sim run`): checked when the option is read,
 * before any file is loaded, and applied over what the scenario says.
 */
#ifndef KERF_CMD_SIM_SCENARIO_OPTS_H
#define KERF_CMD_SIM_SCENARIO_OPTS_H

#include <stdbool.h>
#include <stdint.h>

struct kerf_scenario;

/* The scenario's seed key takes 0 .. 2^62; --seed takes the same. */
#define KERF_SIM_SEED_MAX ((uint64_t)1 << 62)

struct kerf_sim_overrides {
	const char *policy;     /* a name from the policy table, or NULL */
	bool has_seed;
	uint64_t seed;
};

/* The two options' entries of a getopt_long table. */
#define KERF_SIM_OVERRIDE_LONGOPTS \
	{ "policy", required_argument, NULL, 'P' }, \
	{ "seed", required_argument, NULL, 's' }

/*
 * In a getopt loop: option c of KERF_SIM_OVERRIDE_LONGOPTS with its
 * argument.  --policy must name a policy of the table, else "prog:
 * --policy: unknown policy 'X' (known: ...)"; --seed is a decimal
 * integer 0 .. 2^62.  Returns 1 when c was one of them, 0 when not, -1
 * after a message on stderr (a usage error).
 */
int kerf_sim_overrides_opt(const char *prog, int c, const char *arg,
			   struct kerf_sim_overrides *o);

/* What the options set, over the scenario's own policy and seed. */
void kerf_sim_overrides_apply(const struct kerf_sim_overrides *o,
			      struct kerf_scenario *sc);

#endif /* KERF_CMD_SIM_SCENARIO_OPTS_H */
