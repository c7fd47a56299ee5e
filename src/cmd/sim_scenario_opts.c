#include "cmd/sim_scenario_opts.h"

#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/parse.h"
#include "core/policy.h"
#include "sim/scenario.h"

static int opt_policy(const char *prog, const char *arg,
		      struct kerf_sim_overrides *o)
{
	const struct kerf_policy_info *info = kerf_policy_lookup(arg);
	char shown[80];

	if (info) {
		o->policy = info->name;
		return 0;
	}
	fprintf(stderr, "%s: --policy: unknown policy '%s' (known: ", prog,
		kerf_escape(shown, sizeof(shown), arg));
	for (size_t i = 0; i < kerf_policy_count(); i++)
		fprintf(stderr, "%s%s", i ? ", " : "", kerf_policy_at(i)->name);
	fprintf(stderr, ")\n");
	return -1;
}

static int opt_seed(const char *prog, const char *arg,
		    struct kerf_sim_overrides *o)
{
	struct kerf_err err = { 0 };

	if (kerf_parse_u64_opt("--seed", arg, 0, KERF_SIM_SEED_MAX, &o->seed,
			       &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	o->has_seed = true;
	return 0;
}

int kerf_sim_overrides_opt(const char *prog, int c, const char *arg,
			   struct kerf_sim_overrides *o)
{
	if (c == 'P')
		return opt_policy(prog, arg, o) < 0 ? -1 : 1;
	if (c == 's')
		return opt_seed(prog, arg, o) < 0 ? -1 : 1;
	return 0;
}

void kerf_sim_overrides_apply(const struct kerf_sim_overrides *o,
			      struct kerf_scenario *sc)
{
	if (o->policy)
		snprintf(sc->policy, sizeof(sc->policy), "%s", o->policy);
	if (o->has_seed)
		sc->seed = o->seed;
}
