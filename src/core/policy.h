/*
 * policy: the registry of placement policies by name.  Each is a profile of
 * the fit filter plus one score plug-in.  Names are checked here, once, when
 * a policy is built; nothing else looks plug-ins up by string.
 */
#ifndef KERF_CORE_POLICY_H
#define KERF_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/framework.h"

struct kerf_policy_info {
	const char *name;
	const char *summary;               /* one line for --help */
	const struct kerf_plugin *scorer;
};

size_t kerf_policy_count(void);
const struct kerf_policy_info *kerf_policy_at(size_t i);
const struct kerf_policy_info *kerf_policy_lookup(const char *name);

/* The policy kerf uses when none is named. */
#define KERF_POLICY_DEFAULT "kerf"

/*
 * Check "key=value,..." (items split by commas, each KEY=VALUE) against
 * the policies names[0..nr) before any is built: each key must be one
 * that a named policy takes (a key of another policy is refused naming
 * that policy, an unknown key naming the keys there are), and each
 * policy's own keys must pass its check.  NULL or "" is fine.
 */
int kerf_policy_check_options(const char *const *names, size_t nr,
			      const char *options, struct kerf_err *err);

/* Build the named policy into pol (released with kerf_policy_release). */
int kerf_policy_build(struct kerf_policy *pol, const char *name,
		      const struct kerf_policy_args *args,
		      struct kerf_err *err);

#endif /* KERF_CORE_POLICY_H */
