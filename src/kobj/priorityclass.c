#include "kobj/priorityclass.h"

#include <string.h>

#include "base/buf.h"
#include "kobj/json_field.h"

int kerf_preemption_policy_parse(const char *s)
{
	if (!strcmp(s, "PreemptLowerPriority"))
		return KERF_PREEMPT_LOWER_PRIORITY;
	if (!strcmp(s, "Never"))
		return KERF_PREEMPT_NEVER;
	return -KERF_EPARSE;
}

int kerf_kpc_decode(const json_t *obj, struct kerf_kpc *out,
		    struct kerf_err *err)
{
	struct kerf_kpc c = { .preemption = KERF_PREEMPT_LOWER_PRIORITY };
	const json_t *meta, *gd;
	const char *name, *policy;
	char shown[80];
	long long value;
	int rc;

	if (!json_is_object(obj))
		return kerf_err_set(err, -KERF_EPARSE,
				    "PriorityClass: expected an object, got %s",
				    kerf_json_type_name(obj));
	if ((rc = kerf_json_object(obj, "metadata", "", &meta, err)) < 0 ||
	    (rc = kerf_json_string(meta, "name", "metadata", &name, err)) < 0)
		return rc;
	if (rc == 1 || !*name)
		return kerf_err_set(err, -KERF_EPARSE, "metadata.name: missing");
	if (strlen(name) >= sizeof(c.name))
		return kerf_err_set(err, -KERF_EPARSE, "metadata.name: longer than %zu bytes",
				    sizeof(c.name) - 1);
	memcpy(c.name, name, strlen(name) + 1);
	if ((rc = kerf_json_int(obj, "value", "", INT32_MIN, INT32_MAX, &value, err)) < 0)
		return rc;
	if (rc == 1)
		return kerf_err_set(err, -KERF_EPARSE, "value: missing");
	c.value = (int32_t)value;
	if ((rc = kerf_json_string(obj, "preemptionPolicy", "", &policy, err)) < 0)
		return rc;
	if (policy) {
		rc = kerf_preemption_policy_parse(policy);
		if (rc < 0)
			return kerf_err_set(err, rc,
					    "preemptionPolicy '%s': expected PreemptLowerPriority or Never",
					    kerf_escape(shown, sizeof(shown), policy));
		c.preemption = (uint8_t)rc;
	}
	gd = kerf_json_get(obj, "globalDefault");
	if (gd && !json_is_boolean(gd) && !json_is_null(gd))
		return kerf_err_set(err, -KERF_EPARSE, "globalDefault: expected a boolean, got %s",
				    kerf_json_type_name(gd));
	c.global_default = json_is_true(gd);
	*out = c;
	return 0;
}
