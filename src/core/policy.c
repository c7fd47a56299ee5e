#include "core/policy.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
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

enum { OPTION_KEY_SHOWN = 80, OPTIONS_MAX = 256 };

static bool takes_key(const struct kerf_policy_info *info, const char *key,
		      size_t len)
{
	const struct kerf_plugin *pl = info->scorer;
	const char *k;

	for (size_t i = 0; pl->option_key && (k = pl->option_key(i)); i++)
		if (strlen(k) == len && !strncmp(k, key, len))
			return true;
	return false;
}

/* Append "sep" and s to out (size bytes), cut short when full. */
static void append(char *out, size_t size, const char *sep, const char *s)
{
	size_t used = strlen(out);

	snprintf(out + used, size - used, "%s%s", sep, s);
}

/* The key of one item: who takes it, or why none of names[] may. */
static int check_key(const char *const *names, size_t nr, const char *key,
		     size_t len, struct kerf_err *err)
{
	char shown[OPTION_KEY_SHOWN], list[OPTIONS_MAX], keys[OPTIONS_MAX];

	for (size_t i = 0; i < nr; i++) {
		const struct kerf_policy_info *info = kerf_policy_lookup(names[i]);

		if (info && takes_key(info, key, len))
			return 0;
	}
	kerf_escape_n(shown, sizeof(shown), key, len);
	list[0] = '\0';
	for (size_t i = 0; i < nr; i++)
		append(list, sizeof(list), i ? ", " : "", names[i]);
	for (size_t i = 0; i < kerf_policy_count(); i++)
		if (takes_key(&policies[i], key, len))
			return kerf_err_set(err, -KERF_EINVAL,
					    "key '%s' is an option of policy %s, which is not selected (policies: %s)",
					    shown, policies[i].name, list);
	keys[0] = '\0';
	for (size_t i = 0; i < kerf_policy_count(); i++) {
		const struct kerf_plugin *pl = policies[i].scorer;
		const char *k;

		for (size_t j = 0; pl->option_key && (k = pl->option_key(j)); j++) {
			if (j == 0) {
				append(keys, sizeof(keys), keys[0] ? "; " : "",
				       policies[i].name);
				append(keys, sizeof(keys), ": ", k);
			} else {
				append(keys, sizeof(keys), ", ", k);
			}
		}
	}
	return kerf_err_set(err, -KERF_EINVAL,
			    "unknown key '%s' (policy options: %s)", shown, keys);
}

int kerf_policy_check_options(const char *const *names, size_t nr,
			      const char *options, struct kerf_err *err)
{
	char own[OPTIONS_MAX];
	const char *p;
	int rc;

	if (!options || !*options)
		return 0;
	if (strlen(options) >= sizeof(own))
		return kerf_err_set(err, -KERF_ELIMIT,
				    "longer than %d bytes", OPTIONS_MAX - 1);
	for (p = options; p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);

		rc = check_key(names, nr, p, eq ? (size_t)(eq - p) : len, err);
		if (rc < 0)
			return rc;
		p = comma ? comma + 1 : NULL;
	}
	/* each selected policy checks the items of its own keys */
	for (size_t i = 0; i < nr; i++) {
		const struct kerf_policy_info *info = kerf_policy_lookup(names[i]);
		size_t used = 0;

		if (!info || !info->scorer->check_options)
			continue;
		own[0] = '\0';
		for (p = options; p;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			const char *eq = memchr(p, '=', len);

			if (takes_key(info, p, eq ? (size_t)(eq - p) : len)) {
				if (used)
					own[used++] = ',';
				memcpy(own + used, p, len);
				used += len;
				own[used] = '\0';
			}
			p = comma ? comma + 1 : NULL;
		}
		rc = info->scorer->check_options(own, err);
		if (rc < 0)
			return rc;
	}
	return 0;
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
