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

/* Build the named policy into pol (released with kerf_policy_release). */
int kerf_policy_build(struct kerf_policy *pol, const char *name,
		      const struct kerf_policy_args *args,
		      struct kerf_err *err);

#endif /* KERF_CORE_POLICY_H */
