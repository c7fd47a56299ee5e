#include "core/policy.h"

#include <string.h>

#include "core/plugins/plugins.h"

static const struct kerf_policy_info policies[] = {
	{ "random", "a random feasible node",
	  &kerf_plugin_random },
	{ "dotprod", "Tetris dot product of free and requested resources",
	  &kerf_plugin_dotprod },
	{ "gpu-packing", "fill shared GPUs, then used nodes, then idle nodes",
	  &kerf_plugin_gpu_packing },
	{ "gpu-clustering", "keep pods of the same GPU class together",
	  &kerf_plugin_gpu_clustering },
	{ "best-fit", "least free CPU and GPU left after the pod",
	  &kerf_plugin_best_fit },
	{ "first-fit", "the first feasible node in rank order",
	  &kerf_plugin_first_fit },
	{ "fgd", "fragmentation gradient descent (ATC'23), as published",
	  &kerf_plugin_fgd },
	{ "kerf", "kerf's default: fragmentation-aware, learns the workload online",
	  &kerf_plugin_kerf },
};

size_t kerf_policy_count(void)
{
	return sizeof(policies) / sizeof(policies[0]);
}

const struct kerf_policy_info *kerf_policy_at(size_t i)
{
	return i < kerf_policy_count() ? &policies[i] : NULL;
}

const struct kerf_policy_info *kerf_policy_lookup(const char *name)
{
	for (size_t i = 0; i < kerf_policy_count(); i++)
		if (strcmp(policies[i].name, name) == 0)
			return &policies[i];
	return NULL;
}

int kerf_policy_build(struct kerf_policy *pol, const char *name,
		      const struct kerf_policy_args *args,
		      struct kerf_err *err)
{
	const struct kerf_policy_info *info = kerf_policy_lookup(name);
	int rc;

	memset(pol, 0, sizeof(*pol));
	if (!info)
		return kerf_err_set(err, -KERF_ENOTFOUND,
				    "policy '%s': unknown (try 'kerf sim --help')",
				    name);
	pol->name = info->name;
	rc = kerf_policy_add_filter(pol, &kerf_plugin_fit, args, err);
	if (rc == 0)
		rc = kerf_policy_add_scorer(pol, info->scorer, 1, args, err);
	if (rc < 0)
		kerf_policy_release(pol);
	return rc;
}
