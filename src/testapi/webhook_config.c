/*
 * webhook_config: MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration (admissionregistration.k8s.io/v1,
 * cluster-scoped) as the real server stores them: each webhook defaulted
 * (failurePolicy Fail, matchPolicy Equivalent, empty selectors,
 * timeoutSeconds 10, rules' scope "*", reinvocationPolicy Never for
 * mutating ones) and written in the order of the Go struct; refused with
 * 422 where the real server refuses (name, sideEffects,
 * admissionReviewVersions, clientConfig, timeoutSeconds, the enums).
 * clientConfig.service is refused too: testapi has no cluster network to
 * reach a Service (docs/testapi.md).
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdio.h>
#include <string.h>

static const char *const hook_keys[] = {
	"name", "clientConfig", "rules", "failurePolicy", "matchPolicy",
	"namespaceSelector", "objectSelector", "sideEffects", "timeoutSeconds",
	"admissionReviewVersions", "reinvocationPolicy", "matchConditions",
};

static const char *const rule_keys[] = {
	"operations", "apiGroups", "apiVersions", "resources", "scope",
};

static bool one_of(const char *v, const char *const *set, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v, set[i]))
			return true;
	return false;
}

/* An enum field: defaulted when absent, a cause when not one of set. */
static void check_enum(json_t *hook, const char *key, const char *def,
		       const char *const *set, size_t n, const char *field,
		       json_t *causes)
{
	json_t *v = json_object_get(hook, key);
	const char *s = json_string_value(v);
	char f[160], allowed[256] = "";
	size_t i;

	snprintf(f, sizeof(f), "%s.%s", field, key);
	if (!v && def) {
		json_object_set_new(hook, key, json_string(def));
		return;
	}
	if (!v) {
		kerf_ta_cause_add(causes, "FieldValueRequired", f,
				  "Required value");
		return;
	}
	if (s && one_of(s, set, n))
		return;
	for (i = 0; i < n; i++) {
		size_t l = strlen(allowed);

		snprintf(allowed + l, sizeof(allowed) - l, "%s\"%s\"",
			 i ? ", " : "", set[i]);
	}
	kerf_ta_cause_add(causes, "FieldValueNotSupported", f,
			  "Unsupported value: \"%s\": supported values: %s",
			  s ? s : "", allowed);
}

static void check_client(json_t *hook, const char *field, json_t *causes)
{
	json_t *cc = json_object_get(hook, "clientConfig");
	const char *url = json_string_value(json_object_get(cc, "url"));
	bool svc = json_object_get(cc, "service") != NULL;
	char f[160];

	snprintf(f, sizeof(f), "%s.clientConfig", field);
	if (!!url == svc) {
		kerf_ta_cause_add(causes, "FieldValueRequired", f,
				  "Required value: exactly one of url or service is required");
		return;
	}
	if (svc) {
		snprintf(f, sizeof(f), "%s.clientConfig.service", field);
		kerf_ta_cause_add(causes, "FieldValueForbidden", f,
				  "Forbidden: testapi cannot reach a Service (no cluster network): give clientConfig.url");
		return;
	}
	snprintf(f, sizeof(f), "%s.clientConfig.url", field);
	if (strncmp(url, "https://", 8))
		kerf_ta_cause_add(causes, "FieldValueInvalid", f,
				  "Invalid value: \"%s\": 'https' is the only allowed URL scheme",
				  url);
	else if (strchr(url, '#'))
		kerf_ta_cause_add(causes, "FieldValueInvalid", f,
				  "Invalid value: \"%s\": fragments are not permitted in the URL",
				  url);
}

static void default_rules(json_t *hook)
{
	json_t *rules = json_object_get(hook, "rules"), *r, *n;
	size_t i, k;

	json_array_foreach(rules, i, r) {
		if (!json_is_object(r))
			continue;
		if (!json_object_get(r, "scope"))
			json_object_set_new(r, "scope", json_string("*"));
		n = json_object();
		for (k = 0; k < sizeof(rule_keys) / sizeof(*rule_keys); k++)
			if (json_object_get(r, rule_keys[k]))
				json_object_set(n, rule_keys[k],
						json_object_get(r, rule_keys[k]));
		json_array_set_new(rules, i, n);
	}
}

/* One webhook defaulted and checked; a new object in the Go order. */
static json_t *webhook(json_t *hook, size_t idx, bool mutating,
		       json_t *causes)
{
	static const char *const fail[] = { "Ignore", "Fail" };
	static const char *const match[] = { "Exact", "Equivalent" };
	static const char *const side[] = { "None", "NoneOnDryRun" };
	static const char *const reinv[] = { "Never", "IfNeeded" };
	const char *name = json_string_value(json_object_get(hook, "name"));
	json_t *t = json_object_get(hook, "timeoutSeconds"), *v, *n;
	char field[64], f[160];
	bool v1 = false;
	size_t i;

	snprintf(field, sizeof(field), "webhooks[%zu]", idx);
	snprintf(f, sizeof(f), "%s.name", field);
	if (!name || !*name)
		kerf_ta_cause_add(causes, "FieldValueRequired", f,
				  "Required value");
	else if (!strchr(name, '.') || strchr(name, '.') == strrchr(name, '.'))
		kerf_ta_cause_add(causes, "FieldValueInvalid", f,
				  "Invalid value: \"%s\": should be a domain with at least three segments separated by dots",
				  name);
	check_client(hook, field, causes);
	check_enum(hook, "failurePolicy", "Fail", fail, 2, field, causes);
	check_enum(hook, "matchPolicy", "Equivalent", match, 2, field, causes);
	check_enum(hook, "sideEffects", NULL, side, 2, field, causes);
	if (mutating)
		check_enum(hook, "reinvocationPolicy", "Never", reinv, 2,
			   field, causes);
	if (!json_object_get(hook, "namespaceSelector"))
		json_object_set_new(hook, "namespaceSelector", json_object());
	if (!json_object_get(hook, "objectSelector"))
		json_object_set_new(hook, "objectSelector", json_object());
	if (!t) {
		json_object_set_new(hook, "timeoutSeconds", json_integer(10));
	} else if (!json_is_integer(t) || json_integer_value(t) < 1 ||
		   json_integer_value(t) > 30) {
		snprintf(f, sizeof(f), "%s.timeoutSeconds", field);
		kerf_ta_cause_add(causes, "FieldValueInvalid", f,
				  "Invalid value: %lld: the timeout value must be between 1 and 30 seconds",
				  (long long)json_integer_value(t));
	}
	json_array_foreach(json_object_get(hook, "admissionReviewVersions"), i, v)
		v1 |= json_is_string(v) && !strcmp(json_string_value(v), "v1");
	snprintf(f, sizeof(f), "%s.admissionReviewVersions", field);
	if (!json_array_size(json_object_get(hook, "admissionReviewVersions")))
		kerf_ta_cause_add(causes, "FieldValueRequired", f,
				  "Required value: must specify one of v1, v1beta1");
	else if (!v1)
		kerf_ta_cause_add(causes, "FieldValueNotSupported", f,
				  "Unsupported value: testapi sends only admission.k8s.io/v1 reviews: list \"v1\"");
	default_rules(hook);
	n = json_object();
	for (i = 0; i < sizeof(hook_keys) / sizeof(*hook_keys); i++)
		if (json_object_get(hook, hook_keys[i]))
			json_object_set(n, hook_keys[i],
					json_object_get(hook, hook_keys[i]));
	return n;
}

static int check(struct kerf_ta_ctx *c, json_t *obj, bool mutating)
{
	json_t *hooks = json_object_get(obj, "webhooks"), *h, *causes, *names;
	size_t i;

	if (hooks && !json_is_array(hooks) && !json_is_null(hooks))
		return kerf_ta_statusf(c->rs, 400, "BadRequest", NULL,
				       "%s in version \"v1\" cannot be handled as a %s: webhooks: expected an array",
				       c->k->kind, c->k->kind);
	causes = json_array();
	names = json_object();
	json_array_foreach(hooks, i, h) {
		const char *name = json_string_value(json_object_get(h, "name"));

		if (!json_is_object(h))
			continue;
		if (name && json_object_get(names, name)) {
			char f[64];

			snprintf(f, sizeof(f), "webhooks[%zu].name", i);
			kerf_ta_cause_add(causes, "FieldValueDuplicate", f,
					  "Duplicate value: \"%s\"", name);
		}
		if (name)
			json_object_set_new(names, name, json_true());
		json_array_set_new(hooks, i, webhook(h, i, mutating, causes));
	}
	json_decref(names);
	if (json_array_size(causes))
		return kerf_ta_invalid(c->rs, c->k, kerf_ta_str(obj, "metadata.name"),
				       causes);
	json_decref(causes);
	return 0;
}

static int mwc_create(struct kerf_ta_ctx *c, json_t *obj)
{
	return check(c, obj, true);
}

static int mwc_update(struct kerf_ta_ctx *c, const json_t *old, json_t *obj)
{
	(void)old;
	return check(c, obj, true);
}

static int vwc_create(struct kerf_ta_ctx *c, json_t *obj)
{
	return check(c, obj, false);
}

static int vwc_update(struct kerf_ta_ctx *c, const json_t *old, json_t *obj)
{
	(void)old;
	return check(c, obj, false);
}

const struct kerf_ta_hooks kerf_ta_mwc_hooks = {
	.create = mwc_create,
	.update = mwc_update,
};

const struct kerf_ta_hooks kerf_ta_vwc_hooks = {
	.create = vwc_create,
	.update = vwc_update,
};
