/*
 * deploy/webhook/: kerf's admission webhook configurations say what
 * docs/admission.md ("Deployment") promises, so that a kerf outage never
 * blocks the cluster's own pods and never lets a GPU pod of a tenant
 * through (reliability.md W-01):
 *  - every webhook: sideEffects None, admissionReviewVersions [v1],
 *    matchPolicy Equivalent, timeoutSeconds 1..5, a namespaceSelector that
 *    leaves out kube-system, kube-node-lease, kube-public and kerf-system
 *    by name, no objectSelector, the Service kerf-webhook on 443 at the
 *    path of its kind, a caBundle;
 *  - the mutating pods webhook: CREATE, failurePolicy Ignore,
 *    reinvocationPolicy IfNeeded, tenant namespaces only, mirror pods left
 *    alone;
 *  - the validating ones: failurePolicy Fail; pods and
 *    pods/ephemeralcontainers on CREATE and UPDATE, in tenant namespaces,
 *    not pods/status nor pods/binding, no matchConditions; namespaces
 *    called whenever kerf.io/tenant is on the new or the old object;
 *    tenants (not their status);
 *  - each CEL expression passes a lint for the mistakes the API server
 *    would refuse or that fail at run time (has() on anything but a field
 *    selection, a variable webhooks do not have, unbalanced brackets or
 *    quotes);
 *  - the Service selects the kerf serve pods, whose container serves
 *    8443 with the Secret kerf-webhook-tls mounted read-only (no subPath)
 *    where the --webhook-cert and --webhook-key flags point.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deploy_load.h"

static const char *const excluded_ns[] = {
	"kube-system", "kube-node-lease", "kube-public", "kerf-system",
};

static bool seq_is(const struct kerf_yaml_node *seq, const char *const *want, size_t nr)
{
	if (!seq || seq->kind != KERF_YAML_SEQ || seq->nr != nr)
		return false;
	for (size_t i = 0; i < nr; i++)
		if (!yseq_has(seq, want[i]))
			return false;
	return true;
}

/* The matchExpression on key, or NULL. */
static const struct kerf_yaml_node *expr_on(const struct kerf_yaml_node *sel,
					    const char *key)
{
	const struct kerf_yaml_node *exprs = yget(sel, "matchExpressions");

	for (size_t i = 0; exprs && i < exprs->nr; i++)
		if (yis(yget(exprs->items[i], "key"), key))
			return exprs->items[i];
	return NULL;
}

static void check_selector(const char *wh, const struct kerf_yaml_node *sel,
			   bool tenant_only)
{
	const struct kerf_yaml_node *name = expr_on(sel, "kubernetes.io/metadata.name");
	const struct kerf_yaml_node *tenant = expr_on(sel, "kerf.io/tenant");

	if (!sel)
		fail_msg("%s: no namespaceSelector", wh);
	if (yget(sel, "matchLabels"))
		fail_msg("%s: namespaceSelector.matchLabels (use matchExpressions)", wh);
	if (!name || !yis(yget(name, "operator"), "NotIn"))
		fail_msg("%s: namespaceSelector does not leave out namespaces by "
			 "kubernetes.io/metadata.name NotIn", wh);
	for (size_t i = 0; i < sizeof(excluded_ns) / sizeof(excluded_ns[0]); i++)
		if (!yseq_has(yget(name, "values"), excluded_ns[i]))
			fail_msg("%s: namespaceSelector does not leave out %s", wh,
				 excluded_ns[i]);
	if (tenant_only && !(tenant && yis(yget(tenant, "operator"), "Exists")))
		fail_msg("%s: namespaceSelector does not require kerf.io/tenant Exists", wh);
	if (!tenant_only && tenant)
		fail_msg("%s: namespaceSelector tests kerf.io/tenant (an UPDATE that "
			 "removes it would not be seen)", wh);
}

/* --- a CEL lint ------------------------------------------------------ */

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * What the API server's CEL environment for webhook matchConditions
 * refuses or fails on at run time, in the forms a hand-written
 * expression gets wrong: the variables are object, oldObject, request
 * and authorizer; has() takes a field selection (a.b.c), never an index
 * or a call; brackets and quotes balance.  Not a CEL parser.  Returns
 * NULL, or msg holding what is wrong.
 */
static const char *cel_lint(const char *e, char *msg, size_t size)
{
	static const char *const vars[] = { "object", "oldObject", "request", "authorizer" };
	static const char *const words[] = { "null", "true", "false", "in" };
	char stack[64];
	size_t depth = 0;

	for (const char *p = e; *p;) {
		if (*p == '\'' || *p == '"') {
			const char *q = p + 1;

			while (*q && *q != *p)
				q += q[0] == '\\' && q[1] ? 2 : 1;
			if (!*q)
				return snprintf(msg, size, "a string not closed: %s", p), msg;
			p = q + 1;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			if (depth == sizeof(stack))
				return snprintf(msg, size, "nested too deep"), msg;
			stack[depth++] = *p == '(' ? ')' : *p == '[' ? ']' : '}';
			p++;
		} else if (*p == ')' || *p == ']' || *p == '}') {
			if (!depth || stack[--depth] != *p)
				return snprintf(msg, size, "unbalanced '%c'", *p), msg;
			p++;
		} else if (ident_char(*p) && !isdigit((unsigned char)*p)) {
			const char *s = p;
			int len;
			bool known = false;

			while (ident_char(*p))
				p++;
			len = (int)(p - s);
			if (len == 3 && !strncmp(s, "has", 3) && *p == '(') {
				const char *a = p + 1, *b = strchr(a, ')');

				if (!b)
					return snprintf(msg, size, "has( not closed"), msg;
				for (const char *c = a; c < b; c++)
					if (!ident_char(*c) && *c != '.')
						return snprintf(msg, size, "has() takes a field selection "
								"(a.b.c), not '%.*s'", (int)(b - a), a), msg;
				if (!memchr(a, '.', (size_t)(b - a)))
					return snprintf(msg, size, "has(%.*s) selects no field",
							(int)(b - a), a), msg;
				continue;
			}
			if ((s > e && s[-1] == '.') || (s > e + 1 && s[-1] == '?' && s[-2] == '.') ||
			    *p == '(')
				continue;      /* a field (.f, .?f), or a function or method */
			for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
				known = known || ((int)strlen(vars[i]) == len && !strncmp(s, vars[i], (size_t)len));
			for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
				known = known || ((int)strlen(words[i]) == len && !strncmp(s, words[i], (size_t)len));
			if (!known)
				return snprintf(msg, size, "'%.*s' is no variable of a webhook's "
						"matchConditions (object, oldObject, request, authorizer)",
						len, s), msg;
		} else {
			p++;
		}
	}
	if (depth)
		return snprintf(msg, size, "'%c' missing at the end", stack[depth - 1]), msg;
	return NULL;
}

static void test_cel_lint(void **state)
{
	/* the lint itself: each of these is refused, the last one passes */
	static const char *const bad[] = {
		"has(object.metadata.annotations['kubernetes.io/config.mirror'])",
		"has(object)",
		"params.x == 1",
		"(object.metadata.name == 'a'",
		"object.metadata.name == 'a",
		"object.metadata.labels['a')",
		"namespaceObject.metadata.name == 'kube-system'",
	};
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!cel_lint(bad[i], msg, sizeof(msg)))
			fail_msg("the CEL lint passed: %s", bad[i]);
	assert_null(cel_lint("!has(object.metadata.labels) || "
			     "!('kerf.io/tenant' in object.metadata.labels) || "
			     "oldObject != null && request.operation == \"UPDATE\" && "
			     "object.metadata.?labels[?'a'].orValue('') == 'b'", msg, sizeof(msg)));
}

/* --- the webhooks ---------------------------------------------------- */

/* What every kerf webhook has; returns its rules. */
static const struct kerf_yaml_node *check_common(const struct kerf_yaml_node *w,
						 const char *path)
{
	const char *wh = ytext(yget(w, "name"));
	const struct kerf_yaml_node *cc = yget(w, "clientConfig");
	const struct kerf_yaml_node *svc = yget(cc, "service");
	const struct kerf_yaml_node *to = yget(w, "timeoutSeconds");
	const struct kerf_yaml_node *conds = yget(w, "matchConditions");
	static const char *const v1[] = { "v1" };
	long t;

	assert_non_null(wh);
	if (!yis(yget(w, "sideEffects"), "None"))
		fail_msg("%s: sideEffects is not None", wh);
	if (!seq_is(yget(w, "admissionReviewVersions"), v1, 1))
		fail_msg("%s: admissionReviewVersions is not [v1] (the codec serves v1 only)", wh);
	if (!yis(yget(w, "matchPolicy"), "Equivalent"))
		fail_msg("%s: matchPolicy is not Equivalent", wh);
	if (!ytext(to) || (t = strtol(ytext(to), NULL, 10)) < 1 || t > 5)
		fail_msg("%s: timeoutSeconds %s, not 1 ... 5", wh, ytext(to) ? ytext(to) : "absent");
	if (yget(w, "objectSelector"))
		fail_msg("%s: an objectSelector (a label that skips the webhook)", wh);
	if (yget(cc, "url"))
		fail_msg("%s: clientConfig.url (the Service, not a URL)", wh);
	if (!yis(yget(svc, "name"), "kerf-webhook") ||
	    !yis(yget(svc, "namespace"), "kerf-system") || !yis(yget(svc, "port"), "443"))
		fail_msg("%s: clientConfig.service is not kerf-webhook.kerf-system:443", wh);
	if (!yis(yget(svc, "path"), path))
		fail_msg("%s: path %s, not %s", wh, ytext(yget(svc, "path")), path);
	if (!ytext(yget(cc, "caBundle")) || !*ytext(yget(cc, "caBundle")))
		fail_msg("%s: no caBundle (the patch of scripts/webhook-cert.sh replaces it)", wh);
	for (size_t i = 0; conds && i < conds->nr; i++) {
		const char *e = ytext(yget(conds->items[i], "expression"));
		char msg[256];

		assert_non_null(e);
		if (cel_lint(e, msg, sizeof(msg)))
			fail_msg("%s: matchConditions[%zu]: CEL: %s in: %s", wh, i, msg, e);
		if (!ytext(yget(conds->items[i], "name")))
			fail_msg("%s: matchConditions[%zu] without a name", wh, i);
	}
	assert_non_null(yget(w, "rules"));
	assert_int_equal(yget(w, "rules")->nr, 1);
	return yget(w, "rules")->items[0];
}

static const struct kerf_yaml_node *webhook(const struct kerf_yaml_node *cfg,
					    const char *name)
{
	const struct kerf_yaml_node *ws = yget(cfg, "webhooks");

	for (size_t i = 0; ws && i < ws->nr; i++)
		if (yis(yget(ws->items[i], "name"), name))
			return ws->items[i];
	fail_msg("no webhook %s", name);
	return NULL;
}

static void test_mutating(void **state)
{
	const struct kerf_yaml_node *cfg = find_kind("MutatingWebhookConfiguration", "kerf");
	const struct kerf_yaml_node *w = webhook(cfg, "pods.mutate.kerf.io");
	const struct kerf_yaml_node *r = check_common(w, "/mutate/pods");
	const struct kerf_yaml_node *conds = yget(w, "matchConditions");
	static const char *const create[] = { "CREATE" }, *const pods[] = { "pods" };
	bool mirror = false;

	(void)state;
	assert_int_equal(yget(cfg, "webhooks")->nr, 1);
	assert_true(yis(yget(w, "failurePolicy"), "Ignore"));
	assert_true(yis(yget(w, "reinvocationPolicy"), "IfNeeded"));
	assert_true(seq_is(yget(r, "operations"), create, 1));
	assert_true(seq_is(yget(r, "resources"), pods, 1));
	assert_true(yseq_has(yget(r, "apiGroups"), "") && yseq_has(yget(r, "apiVersions"), "v1"));
	check_selector("pods.mutate.kerf.io", yget(w, "namespaceSelector"), true);
	for (size_t i = 0; conds && i < conds->nr; i++)
		mirror = mirror || strstr(ytext(yget(conds->items[i], "expression")),
					  "'kubernetes.io/config.mirror' in object.metadata.annotations");
	assert_true(mirror);
}

static void test_validating(void **state)
{
	const struct kerf_yaml_node *cfg = find_kind("ValidatingWebhookConfiguration", "kerf");
	const struct kerf_yaml_node *ws = yget(cfg, "webhooks");
	const struct kerf_yaml_node *pw = webhook(cfg, "pods.validate.kerf.io");
	const struct kerf_yaml_node *nw = webhook(cfg, "namespaces.validate.kerf.io");
	const struct kerf_yaml_node *tw = webhook(cfg, "tenants.validate.kerf.io");
	const struct kerf_yaml_node *cw = webhook(cfg, "resourceclaims.validate.kerf.io");
	const struct kerf_yaml_node *r, *c;
	static const char *const cu[] = { "CREATE", "UPDATE" };
	static const char *const pods[] = { "pods", "pods/ephemeralcontainers" };
	static const char *const ns[] = { "namespaces" }, *const tenants[] = { "tenants" };
	static const char *const claims[] = { "resourceclaims", "resourceclaimtemplates" };

	(void)state;
	assert_int_equal(ws->nr, 4);
	for (size_t i = 0; i < ws->nr; i++)
		if (!yis(yget(ws->items[i], "failurePolicy"), "Fail"))
			fail_msg("%s: failurePolicy is not Fail", ytext(yget(ws->items[i], "name")));

	r = check_common(pw, "/validate/pods");
	assert_true(seq_is(yget(r, "operations"), cu, 2));
	/* exactly these: no pods/status, no pods/binding, no wildcard */
	assert_true(seq_is(yget(r, "resources"), pods, 2));
	assert_true(yis(yget(r, "scope"), "Namespaced"));
	assert_null(yget(pw, "matchConditions"));
	check_selector("pods.validate.kerf.io", yget(pw, "namespaceSelector"), true);

	r = check_common(nw, "/validate/namespaces");
	assert_true(seq_is(yget(r, "operations"), cu, 2));
	assert_true(seq_is(yget(r, "resources"), ns, 1));
	check_selector("namespaces.validate.kerf.io", yget(nw, "namespaceSelector"), false);
	c = yget(nw, "matchConditions");
	assert_true(c && c->nr == 1);
	assert_non_null(strstr(ytext(yget(c->items[0], "expression")),
			       "'kerf.io/tenant' in object.metadata.labels"));
	assert_non_null(strstr(ytext(yget(c->items[0], "expression")),
			       "'kerf.io/tenant' in oldObject.metadata.labels"));

	r = check_common(tw, "/validate/tenants");
	assert_true(seq_is(yget(r, "operations"), cu, 2));
	assert_true(seq_is(yget(r, "resources"), tenants, 1));
	assert_true(yseq_has(yget(r, "apiGroups"), "kerf.io"));
	assert_true(yseq_has(yget(r, "apiVersions"), "v1alpha1"));
	check_selector("tenants.validate.kerf.io", yget(tw, "namespaceSelector"), false);

	r = check_common(cw, "/validate/resourceclaims");
	assert_true(seq_is(yget(r, "operations"), cu, 2));
	assert_true(seq_is(yget(r, "resources"), claims, 2));
	assert_true(yseq_has(yget(r, "apiGroups"), "resource.k8s.io"));
	check_selector("resourceclaims.validate.kerf.io", yget(cw, "namespaceSelector"), true);
}

/* --- the Service and the pods behind it ------------------------------ */

static void test_service_and_pods(void **state)
{
	const struct kerf_yaml_node *svc = find_kind("Service", "kerf-webhook");
	const struct kerf_yaml_node *d = find_kind("Deployment", "kerf-serve");
	const struct kerf_yaml_node *tmpl = yget(yget(d, "spec"), "template");
	const struct kerf_yaml_node *labels = yget(yget(tmpl, "metadata"), "labels");
	const struct kerf_yaml_node *sel = yget(yget(svc, "spec"), "selector");
	const struct kerf_yaml_node *port = yget(yget(svc, "spec"), "ports")->items[0];
	const struct kerf_yaml_node *pod = yget(tmpl, "spec");
	const struct kerf_yaml_node *c = yget(pod, "containers")->items[0];
	const struct kerf_yaml_node *vols = yget(pod, "volumes"), *mounts = yget(c, "volumeMounts");
	const struct kerf_yaml_node *ports = yget(c, "ports"), *args = yget(c, "args");
	const char *vol = NULL, *mount = NULL;
	bool served = false;
	char want[600];

	(void)state;
	assert_true(yis(yget(yget(svc, "metadata"), "namespace"), "kerf-system"));
	assert_true(sel && sel->nr > 0);
	for (size_t i = 0; i < sel->nr; i++)
		if (!yis(yget(labels, sel->pairs[i].key->text), ytext(sel->pairs[i].value)))
			fail_msg("Service kerf-webhook selects %s=%s, not a label of the kerf "
				 "serve pods", sel->pairs[i].key->text, ytext(sel->pairs[i].value));
	assert_true(yis(yget(port, "port"), "443"));
	for (size_t i = 0; ports && i < ports->nr; i++)
		served = served || (yis(yget(ports->items[i], "name"), ytext(yget(port, "targetPort"))) &&
				    yis(yget(ports->items[i], "containerPort"), "8443"));
	if (!served)
		fail_msg("Service kerf-webhook: targetPort %s is no container port 8443 of kerf serve",
			 ytext(yget(port, "targetPort")));

	for (size_t i = 0; vols && i < vols->nr; i++)
		if (yis(yget(yget(vols->items[i], "secret"), "secretName"), "kerf-webhook-tls"))
			vol = ytext(yget(vols->items[i], "name"));
	assert_non_null(vol);
	for (size_t i = 0; mounts && i < mounts->nr; i++)
		if (yis(yget(mounts->items[i], "name"), vol)) {
			assert_true(yis(yget(mounts->items[i], "readOnly"), "true"));
			/* kubelet never updates a subPath mount: no hot reload */
			assert_null(yget(mounts->items[i], "subPath"));
			mount = ytext(yget(mounts->items[i], "mountPath"));
		}
	assert_non_null(mount);
	assert_true(yseq_has(args, "--webhook-addr=:8443"));
	snprintf(want, sizeof(want), "--webhook-cert=%s/tls.crt", mount);
	assert_true(yseq_has(args, want));
	snprintf(want, sizeof(want), "--webhook-key=%s/tls.key", mount);
	assert_true(yseq_has(args, want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cel_lint),
		cmocka_unit_test(test_mutating),
		cmocka_unit_test(test_validating),
		cmocka_unit_test(test_service_and_pods),
	};

	return cmocka_run_group_tests(tests, deploy_load, deploy_release);
}
