/*
 * whatif_change: the changes of `kerf what-if`, parsed and checked
 * (sim/whatif.h).  Every message names the option, the value as given
 * (escaped) and the reason.
 */
#include "sim/whatif.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/parse.h"
#include "core/policy.h"

static const char *const options[] = {
	[KERF_WHATIF_QUOTA] = "--set-quota",
	[KERF_WHATIF_BORROW] = "--set-borrowing-limit",
	[KERF_WHATIF_WEIGHT] = "--set-weight",
	[KERF_WHATIF_BUDGET] = "--set-budget",
	[KERF_WHATIF_POLICY] = "--policy",
};

/* The most GPUs a quota change may name, and GPU-hours of a budget. */
enum { MAX_GPUS = 1000000 };
#define MAX_GPU_HOURS 1000000000ULL

const char *kerf_whatif_option(enum kerf_whatif_kind kind)
{
	return options[kind];
}

int kerf_whatif_kind_of(const char *opt)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (!strcmp(opt, options[i]))
			return (int)i;
	return -KERF_ENOTFOUND;
}

static int bad(struct kerf_err *err, const char *opt, const char *arg, const char *why)
{
	char shown[200];

	return kerf_err_set(err, -KERF_EINVAL, "%s '%s': %s", opt,
			    kerf_escape(shown, sizeof(shown), arg), why);
}

/* A non-negative decimal with at most 3 decimals, in thousandths. */
static int milli(const char *opt, const char *arg, const char *num, uint64_t max,
		 const char *what, int64_t *out, struct kerf_err *err)
{
	char why[160];
	uint64_t v;
	int rc;

	if (num[0] == '-')
		return snprintf(why, sizeof(why), "%s must not be negative", what),
		       bad(err, opt, arg, why);
	rc = kerf_parse_fixed(num, 3, &v);
	if (rc == -KERF_EINVAL)
		return snprintf(why, sizeof(why), "%s has more than 3 decimals", what),
		       bad(err, opt, arg, why);
	if (rc < 0 || v > max * 1000)
		return snprintf(why, sizeof(why), "%s must be a decimal number from 0 to %llu",
				what, (unsigned long long)max),
		       bad(err, opt, arg, why);
	*out = (int64_t)v;
	return 0;
}

/* "NAME=VALUE" or "NAME:FLAVOR=VALUE" (flavor only where allowed). */
static int split(const char *opt, const char *arg, bool flavor_ok,
		 struct kerf_whatif_change *c, const char **value,
		 struct kerf_err *err)
{
	const char *eq = strchr(arg, '='), *colon;
	size_t n;

	if (!eq)
		return bad(err, opt, arg, flavor_ok ? "expected TENANT[:FLAVOR]=VALUE"
						    : "expected TENANT=VALUE");
	colon = memchr(arg, ':', (size_t)(eq - arg));
	if (colon && !flavor_ok)
		return bad(err, opt, arg, "expected TENANT=VALUE (this change is not per flavor)");
	n = (size_t)((colon ? colon : eq) - arg);
	if (n == 0)
		return bad(err, opt, arg, "the tenant's name is empty");
	if (n >= sizeof(c->tenant))
		return bad(err, opt, arg, "the tenant's name is longer than 63 bytes");
	memcpy(c->tenant, arg, n);
	c->tenant[n] = '\0';
	if (colon) {
		n = (size_t)(eq - colon - 1);
		if (n == 0)
			return bad(err, opt, arg, "the flavor after ':' is empty");
		if (n >= sizeof(c->flavor))
			return bad(err, opt, arg, "the flavor is longer than 31 bytes");
		memcpy(c->flavor, colon + 1, n);
		c->flavor[n] = '\0';
	}
	if (!eq[1])
		return bad(err, opt, arg, "the value after '=' is empty");
	*value = eq + 1;
	return 0;
}

int kerf_whatif_change_parse(const char *opt, const char *arg,
			     struct kerf_whatif_change *c, struct kerf_err *err)
{
	int kind = kerf_whatif_kind_of(opt);
	const char *value = NULL;
	uint64_t w;
	int rc;

	memset(c, 0, sizeof(*c));
	if (kind < 0)
		return kerf_err_set(err, -KERF_EINVAL, "%s: not a change", opt);
	c->kind = (enum kerf_whatif_kind)kind;
	c->option = options[kind];
	switch (c->kind) {
	case KERF_WHATIF_POLICY:
		if (!kerf_policy_lookup(arg)) {
			char why[400];
			size_t at = (size_t)snprintf(why, sizeof(why), "not a placement policy (one of:");

			for (size_t i = 0; i < kerf_policy_count() && at < sizeof(why); i++)
				if (strcmp(kerf_policy_at(i)->name, "fgd"))
					at += (size_t)snprintf(why + at, sizeof(why) - at, " %s",
							       kerf_policy_at(i)->name);
			if (at < sizeof(why))
				snprintf(why + at, sizeof(why) - at, ")");
			return bad(err, opt, arg, why);
		}
		/* fgd is handed the whole trace in advance: a state has none */
		if (!strcmp(arg, "fgd"))
			return bad(err, opt, arg, "fgd needs the workload in advance (a trace); "
				   "what-if has only the state");
		snprintf(c->policy, sizeof(c->policy), "%s", arg);
		return 0;
	case KERF_WHATIF_QUOTA:
	case KERF_WHATIF_BORROW:
		if ((rc = split(opt, arg, true, c, &value, err)) < 0)
			return rc;
		return milli(opt, arg, value, MAX_GPUS, "GPUS", &c->value, err);
	case KERF_WHATIF_BUDGET:
		if ((rc = split(opt, arg, false, c, &value, err)) < 0)
			return rc;
		return milli(opt, arg, value, MAX_GPU_HOURS, "GPU_HOURS", &c->value, err);
	case KERF_WHATIF_WEIGHT:
		if ((rc = split(opt, arg, false, c, &value, err)) < 0)
			return rc;
		if (value[0] == '-')
			return bad(err, opt, arg, "the weight must not be negative");
		if (kerf_parse_u64(value, &w) < 0 || w < 1 || w > 1000000)
			return bad(err, opt, arg, "the weight must be a whole number from 1 to 1000000");
		c->value = (int64_t)w;
		return 0;
	}
	return kerf_err_set(err, -KERF_EINVAL, "%s: not a change", opt);
}

int kerf_whatif_flavor(const struct kerf_state *st, const char *name)
{
	for (size_t m = 0; m < st->cluster.nr_models; m++)
		if (!strcasecmp(st->cluster.models[m].name, name))
			return (int)m;
	return -KERF_ENOTFOUND;
}

int kerf_whatif_change_check(const struct kerf_state *st,
			     const struct kerf_whatif_change *c,
			     struct kerf_err *err)
{
	const struct kerf_cluster *cl = &st->cluster;
	char shown[200], models[400];
	size_t at = 0;
	int t;

	if (c->kind == KERF_WHATIF_POLICY)
		return 0;
	t = kerf_tenants_find(&st->tenants, c->tenant);
	if (t <= 0) {
		at = (size_t)snprintf(models, sizeof(models), "tenants:");
		for (size_t i = 1; i < st->tenants.nr && at < sizeof(models); i++)
			if (!st->tenants.t[i].removed)
				at += (size_t)snprintf(models + at, sizeof(models) - at, " %s",
						       st->tenants.t[i].name);
		return kerf_err_set(err, -KERF_EINVAL, "%s: unknown tenant '%s' (%s)",
				    c->option, kerf_escape(shown, sizeof(shown), c->tenant),
				    models);
	}
	if (c->kind != KERF_WHATIF_QUOTA && c->kind != KERF_WHATIF_BORROW)
		return 0;
	models[0] = '\0';
	for (size_t m = 0; m < cl->nr_models && at < sizeof(models); m++)
		at += (size_t)snprintf(models + at, sizeof(models) - at, "%s%s",
				       m ? ", " : "", cl->models[m].name);
	if (!c->flavor[0] && cl->nr_models != 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s %s: the cluster has %zu GPU flavors: name one as %s:FLAVOR (%s)",
				    c->option, kerf_escape(shown, sizeof(shown), c->tenant),
				    cl->nr_models, c->tenant, cl->nr_models ? models : "none");
	if (c->flavor[0] && kerf_whatif_flavor(st, c->flavor) < 0)
		return kerf_err_set(err, -KERF_EINVAL, "%s: unknown flavor '%s' (flavors: %s)",
				    c->option, kerf_escape(shown, sizeof(shown), c->flavor),
				    cl->nr_models ? models : "none");
	return 0;
}
