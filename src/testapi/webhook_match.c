/*
 * webhook_match: whether a webhook is called for a request, as
 * kube-apiserver's rules.Matcher and its namespace and object matchers
 * decide: a rule matches when its operations, apiGroups, apiVersions,
 * resources and scope all do; namespaceSelector is evaluated against the
 * labels of the request's namespace (a Namespace against its own labels,
 * cluster-scoped objects always match); objectSelector against the new
 * or the old object's labels.  An absent selector matches everything.
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <string.h>

static bool list_has(const json_t *arr, const char *want)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v);

		if (s && (!strcmp(s, "*") || !strcmp(s, want)))
			return true;
	}
	return false;
}

/* "pods", "pods/status", "*"; with a slash, "*" on either side is any */
static bool resource_match(const json_t *resources,
			   const struct kerf_ta_wh_attrs *a)
{
	const json_t *v;
	size_t i;

	json_array_foreach(resources, i, v) {
		const char *s = json_string_value(v);
		const char *slash;
		size_t n;

		if (!s)
			continue;
		if (!strcmp(s, "*/*"))
			return true;
		slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		if (!(n == 1 && s[0] == '*') &&
		    !(strlen(a->resource) == n && !strncmp(s, a->resource, n)))
			continue;
		if (!slash) {
			if (!*a->sub)
				return true;
			continue;
		}
		if (!strcmp(slash + 1, "*") || !strcmp(slash + 1, a->sub))
			return true;
	}
	return false;
}

static bool is_namespace_res(const struct kerf_ta_wh_attrs *a)
{
	return !*a->group && !strcmp(a->resource, "namespaces");
}

static bool scope_match(const json_t *rule, const struct kerf_ta_wh_attrs *a)
{
	const char *scope = json_string_value(json_object_get(rule, "scope"));

	if (!scope || !strcmp(scope, "*"))
		return true;
	if (!strcmp(scope, "Namespaced"))
		return !is_namespace_res(a) && *a->ns;
	if (!strcmp(scope, "Cluster"))
		return is_namespace_res(a) || !*a->ns;
	return false;
}

bool kerf_ta_wh_rules_match(const json_t *hook,
			    const struct kerf_ta_wh_attrs *a)
{
	const json_t *rule;
	size_t i;

	json_array_foreach(json_object_get(hook, "rules"), i, rule) {
		if (list_has(json_object_get(rule, "operations"), a->op) &&
		    list_has(json_object_get(rule, "apiGroups"), a->group) &&
		    list_has(json_object_get(rule, "apiVersions"), a->version) &&
		    resource_match(json_object_get(rule, "resources"), a) &&
		    scope_match(rule, a))
			return true;
	}
	return false;
}

bool kerf_ta_wh_selector_match(const json_t *selector, const json_t *labels)
{
	if (!selector || json_is_null(selector))
		return true;
	return kerf_ta_labels_match(selector, labels);
}

static const json_t *labels_of(const json_t *obj)
{
	return kerf_ta_path(obj, "metadata.labels");
}

bool kerf_ta_wh_matches(const json_t *hook, const struct kerf_ta_wh_attrs *a,
			const json_t *ns_labels, const json_t *obj,
			const json_t *old)
{
	const json_t *nsel = json_object_get(hook, "namespaceSelector");
	const json_t *osel = json_object_get(hook, "objectSelector");

	if (!kerf_ta_wh_rules_match(hook, a))
		return false;
	if (is_namespace_res(a) && !*a->sub) {
		if (!kerf_ta_wh_selector_match(nsel,
					       labels_of(obj ? obj : old)))
			return false;
	} else if (*a->ns && !kerf_ta_wh_selector_match(nsel, ns_labels)) {
		return false;
	}
	if (!osel || !json_object_size(osel))
		return true;
	return (obj && kerf_ta_wh_selector_match(osel, labels_of(obj))) ||
	       (old && kerf_ta_wh_selector_match(osel, labels_of(old)));
}
