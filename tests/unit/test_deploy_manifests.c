/*
 * deploy/: every manifest loads, and says what kerf needs it to say.
 *  - each file is one YAML document, and kustomization.yaml lists every
 *    file under deploy/ (and nothing else), a directory with a
 *    kustomization.yaml of its own (agent/) standing for its files;
 *  - each CRD's schema is structural: every node has a type (but the
 *    int-or-string ones, which have none and anyOf integer/string), no
 *    node has both properties and additionalProperties, arrays have items,
 *    list maps name required keys, CEL rules have messages;
 *  - every printer column's jsonPath names a field of the schema of the
 *    column's type;
 *  - every field the C decoders (src/kobj) read is in the schema, and the
 *    enums are the decoders' words;
 *  - RBAC grants exactly the rules kerf serve needs, no wildcard;
 *  - the Deployment runs two non-root, read-only, unprivileged replicas
 *    with the flags docs/api.md lists and the probes kerf serve answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "deploy_load.h"

static void test_kustomization_lists_every_file(void **state)
{
	const struct kerf_yaml_node *k = deploy_file("kustomization.yaml");
	const struct kerf_yaml_node *res = yget(k, "resources");

	(void)state;
	assert_true(deploy_nr_files >= 12);
	assert_non_null(res);
	assert_int_equal(res->kind, KERF_YAML_SEQ);
	for (size_t i = 0; i < deploy_nr_files; i++) {
		bool listed = !strcmp(deploy_files[i].rel, "kustomization.yaml");

		for (size_t j = 0; j < res->nr && !listed; j++)
			listed = yis(res->items[j], deploy_files[i].rel) ||
				 deploy_in_kustomized_dir(deploy_files[i].rel, ytext(res->items[j]));
		if (!listed)
			fail_msg("deploy/%s is not in kustomization.yaml", deploy_files[i].rel);
	}
	for (size_t j = 0; j < res->nr; j++) {
		bool found = false;

		for (size_t i = 0; i < deploy_nr_files && !found; i++)
			found = yis(res->items[j], deploy_files[i].rel) ||
				deploy_in_kustomized_dir(deploy_files[i].rel, ytext(res->items[j]));
		if (!found)
			fail_msg("kustomization.yaml lists %s, not a file under deploy/",
				 ytext(res->items[j]));
	}
}

/* --- CRDs ------------------------------------------------------------ */

static void structural(const struct kerf_yaml_node *s, const char *path)
{
	const struct kerf_yaml_node *type = yget(s, "type"), *v;
	char sub[DEPLOY_PATH_LEN];

	if (!s || s->kind != KERF_YAML_MAP)
		fail_msg("%s: a schema must be a mapping", path);
	if (yis(yget(s, "x-kubernetes-int-or-string"), "true")) {
		const struct kerf_yaml_node *any = yget(s, "anyOf");

		if (type || !any || any->nr != 2 || !yis(yget(any->items[0], "type"), "integer") ||
		    !yis(yget(any->items[1], "type"), "string"))
			fail_msg("%s: int-or-string needs no type and anyOf [integer, string]", path);
	} else if (!ytext(type)) {
		fail_msg("%s: no type", path);
	}
	if (yget(s, "properties") && yget(s, "additionalProperties"))
		fail_msg("%s: both properties and additionalProperties", path);
	if ((v = yget(s, "properties"))) {
		if (!yis(type, "object"))
			fail_msg("%s: properties on a non-object", path);
		for (size_t i = 0; i < v->nr; i++) {
			snprintf(sub, sizeof(sub), "%s.%s", path, v->pairs[i].key->text);
			structural(v->pairs[i].value, sub);
		}
	}
	if ((v = yget(s, "additionalProperties"))) {
		snprintf(sub, sizeof(sub), "%s.*", path);
		structural(v, sub);
	}
	if (yis(type, "array")) {
		const struct kerf_yaml_node *keys = yget(s, "x-kubernetes-list-map-keys");

		if (!yget(s, "items"))
			fail_msg("%s: an array without items", path);
		snprintf(sub, sizeof(sub), "%s[]", path);
		structural(yget(s, "items"), sub);
		if (yis(yget(s, "x-kubernetes-list-type"), "map")) {
			const struct kerf_yaml_node *req = yget(yget(s, "items"), "required");

			if (!keys || !req)
				fail_msg("%s: a list map needs keys its items require", path);
			for (size_t i = 0; i < keys->nr; i++) {
				bool found = false;

				for (size_t j = 0; j < req->nr; j++)
					found = found || !strcmp(ytext(req->items[j]), ytext(keys->items[i]));
				if (!found)
					fail_msg("%s: list map key %s is not required", path,
						 ytext(keys->items[i]));
			}
		}
	}
	if ((v = yget(s, "x-kubernetes-validations")))
		for (size_t i = 0; i < v->nr; i++)
			if (!ytext(yget(v->items[i], "rule")) || !ytext(yget(v->items[i], "message")))
				fail_msg("%s: a CEL rule without a message", path);
}

static const struct kerf_yaml_node *crd_schema(const char *name)
{
	const struct kerf_yaml_node *crd = find_kind("CustomResourceDefinition", name);
	const struct kerf_yaml_node *vers = yget(yget(crd, "spec"), "versions");

	assert_non_null(vers);
	assert_int_equal(vers->nr, 1);
	return yget(yget(vers->items[0], "schema"), "openAPIV3Schema");
}

/*
 * The schema node at a path like ".spec.quotas[].nominal" (filters such as
 * [?(@.type=="Ready")] read as []); NULL when there is none.  *meta is
 * set for paths into metadata (ObjectMeta, not in the schema).
 */
static const struct kerf_yaml_node *schema_at(const struct kerf_yaml_node *s,
					      const char *path, bool *meta)
{
	char clean[DEPLOY_PATH_LEN];
	size_t o = 0;
	int depth = 0;
	char *tok, *save = NULL;

	for (const char *p = path; *p && o + 3 < sizeof(clean); p++) {
		if (*p == '[') {
			if (depth++ == 0) {
				clean[o++] = '[';
				clean[o++] = ']';
			}
		} else if (*p == ']') {
			depth--;
		} else if (depth == 0) {
			clean[o++] = *p;
		}
	}
	clean[o] = '\0';
	*meta = !strncmp(clean, ".metadata.", 10);
	for (tok = strtok_r(clean, ".", &save); tok && s; tok = strtok_r(NULL, ".", &save)) {
		size_t len = strlen(tok);
		bool items = len > 2 && !strcmp(tok + len - 2, "[]");

		if (items)
			tok[len - 2] = '\0';
		s = yget(yget(s, "properties"), tok);
		if (items)
			s = s && yis(yget(s, "type"), "array") ? yget(s, "items") : NULL;
	}
	return s;
}

static void printer_columns(const char *name)
{
	const struct kerf_yaml_node *crd = find_kind("CustomResourceDefinition", name);
	const struct kerf_yaml_node *v = yget(yget(crd, "spec"), "versions")->items[0];
	const struct kerf_yaml_node *cols = yget(v, "additionalPrinterColumns");
	const struct kerf_yaml_node *schema = crd_schema(name);

	assert_non_null(cols);
	for (size_t i = 0; i < cols->nr; i++) {
		const char *jp = ytext(yget(cols->items[i], "jsonPath"));
		const char *type = ytext(yget(cols->items[i], "type"));
		const struct kerf_yaml_node *f;
		bool meta;

		assert_non_null(jp);
		assert_non_null(type);
		f = schema_at(schema, jp, &meta);
		if (meta) {
			assert_string_equal(jp, ".metadata.creationTimestamp");
			assert_string_equal(type, "date");
			continue;
		}
		if (!f)
			fail_msg("%s: printer column %s: %s is not in the schema", name,
				 ytext(yget(cols->items[i], "name")), jp);
		if (!strcmp(type, "integer") ? !yis(yget(f, "type"), "integer") :
		    !strcmp(type, "string") ? !yis(yget(f, "type"), "string") &&
						  !yis(yget(f, "x-kubernetes-int-or-string"), "true") :
		    true)
			fail_msg("%s: printer column %s: type %s does not match %s", name,
				 ytext(yget(cols->items[i], "name")), type, jp);
	}
}

static void test_crds_structural(void **state)
{
	static const char *const crds[] = { "tenants.kerf.io", "gpupools.kerf.io" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		const struct kerf_yaml_node *crd = find_kind("CustomResourceDefinition", crds[i]);
		const struct kerf_yaml_node *spec = yget(crd, "spec");
		const struct kerf_yaml_node *v = yget(spec, "versions")->items[0];
		const struct kerf_yaml_node *cats = yget(yget(spec, "names"), "categories");

		assert_true(yis(yget(spec, "group"), "kerf.io"));
		assert_true(yis(yget(spec, "scope"), "Cluster"));
		assert_true(yis(yget(v, "name"), "v1alpha1"));
		assert_true(yis(yget(v, "served"), "true") && yis(yget(v, "storage"), "true"));
		assert_non_null(yget(yget(v, "subresources"), "status"));
		assert_true(cats && cats->nr == 1 && yis(cats->items[0], "kerf"));
		assert_non_null(yget(yget(spec, "names"), "shortNames"));
		structural(crd_schema(crds[i]), crds[i]);
		printer_columns(crds[i]);
	}
}

/* What src/kobj reads (kobj/tenant.c, kobj/gpupool.c): keep in step. */
static const char *const tenant_fields[] = {
	".spec.parent", ".spec.weight", ".spec.quotas[].flavor",
	".spec.quotas[].nominal", ".spec.quotas[].borrowingLimit",
	".spec.quotas[].lendingLimit", ".spec.allowedPriorityClasses",
	".spec.priorityCeiling.priorityClassName", ".spec.priorityCeiling.value",
	".spec.isolation", ".spec.gpuHourBudget.gpuHours",
	".spec.gpuHourBudget.window", ".spec.gpuHourBudget.onExhaustion",
	".spec.gpuHourBudget.flavorWeights[].flavor",
	".spec.gpuHourBudget.flavorWeights[].weight",
	".spec.idlePolicy.thresholdPercent", ".spec.idlePolicy.grace",
	".spec.idlePolicy.action", ".spec.idlePolicy.exemptPriorityClasses",
	".spec.networkClass",
	".status.observedGeneration", ".status.conditions[].type",
	".status.conditions[].status", ".status.conditions[].reason",
	".status.conditions[].message", ".status.conditions[].lastTransitionTime",
	".status.conditions[].observedGeneration", ".status.gpus.nominal",
	".status.gpus.used", ".status.gpus.borrowed", ".status.gpus.pending",
	".status.pendingWorkloads", ".status.usage[].flavor", ".status.usage[].used",
	".status.usage[].borrowed", ".status.budgetUsed.gpuHours",
	".status.budgetUsed.percent", ".status.history.averagedAtMs",
	".status.history.usageAverage", ".status.history.budgetUsedMilliMs",
	".status.history.budgetWindowStartMs", ".status.history.budgetWarnedPercent",
};
static const char *const gpupool_fields[] = {
	".spec.gpuModel", ".spec.nodeSelector.matchLabels", ".spec.mig.policy",
	".spec.mig.gpusPerNode", ".spec.mig.layout", ".spec.sharing",
	".status.observedGeneration", ".status.conditions[].type",
	".status.conditions[].status", ".status.conditions[].reason",
	".status.conditions[].message", ".status.conditions[].lastTransitionTime",
	".status.conditions[].observedGeneration", ".status.nodes", ".status.gpus",
	".status.migGPUs", ".status.allocated",
};
/* The decoders' words, as the schema's enums must list them. */
static const struct {
	const char *crd, *path, *words;
} enums[] = {
	{ "tenants.kerf.io", ".spec.isolation", "Shared,Tenant,Hardware" },
	{ "tenants.kerf.io", ".spec.gpuHourBudget.onExhaustion", "Hold,PreemptibleOnly" },
	{ "tenants.kerf.io", ".spec.idlePolicy.action", "Notify,CheckpointEvict" },
	{ "tenants.kerf.io", ".status.conditions[].status", "True,False,Unknown" },
	{ "gpupools.kerf.io", ".spec.mig.policy", "None,Fixed,Dynamic" },
	{ "gpupools.kerf.io", ".spec.sharing[]", "Whole,MIG,MPS,TimeSlice" },
};

static void test_decoder_fields_in_schema(void **state)
{
	const struct kerf_yaml_node *ts = crd_schema("tenants.kerf.io");
	const struct kerf_yaml_node *gs = crd_schema("gpupools.kerf.io");
	bool meta;

	(void)state;
	for (size_t i = 0; i < sizeof(tenant_fields) / sizeof(tenant_fields[0]); i++)
		if (!schema_at(ts, tenant_fields[i], &meta))
			fail_msg("Tenant: the decoder reads %s, not in the schema", tenant_fields[i]);
	for (size_t i = 0; i < sizeof(gpupool_fields) / sizeof(gpupool_fields[0]); i++)
		if (!schema_at(gs, gpupool_fields[i], &meta))
			fail_msg("GPUPool: the decoder reads %s, not in the schema", gpupool_fields[i]);
	for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
		const struct kerf_yaml_node *e =
			yget(schema_at(crd_schema(enums[i].crd), enums[i].path, &meta), "enum");
		char got[256] = "";
		size_t len = 0;

		assert_non_null(e);
		for (size_t j = 0; j < e->nr; j++)
			len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s",
						j ? "," : "", ytext(e->items[j]));
		if (strcmp(got, enums[i].words))
			fail_msg("%s %s: enum %s, the decoder reads %s", enums[i].crd,
				 enums[i].path, got, enums[i].words);
	}
}

/* --- RBAC ------------------------------------------------------------ */

static void test_rbac(void **state)
{
	static const char want_cluster[] =
		"events.k8s.io|events||create\n"
		"kerf.io|gpupools/status||patch\nkerf.io|gpupools/status||update\n"
		"kerf.io|gpupools||get\nkerf.io|gpupools||list\nkerf.io|gpupools||watch\n"
		"kerf.io|tenants/status||patch\nkerf.io|tenants/status||update\n"
		"kerf.io|tenants||get\nkerf.io|tenants||list\nkerf.io|tenants||watch\n"
		"policy|poddisruptionbudgets||get\npolicy|poddisruptionbudgets||list\n"
		"policy|poddisruptionbudgets||watch\n"
		"scheduling.k8s.io|priorityclasses||get\nscheduling.k8s.io|priorityclasses||list\n"
		"scheduling.k8s.io|priorityclasses||watch\n"
		"|events||create\n"
		"|namespaces||get\n|namespaces||list\n|namespaces||watch\n"
		"|nodes||get\n|nodes||list\n|nodes||watch\n"
		"|pods/binding||create\n|pods/eviction||create\n|pods/status||patch\n"
		"|pods||get\n|pods||list\n|pods||patch\n|pods||watch\n";
	static const char want_role[] =
		"coordination.k8s.io|leases|kerf-scheduler|get\n"
		"coordination.k8s.io|leases|kerf-scheduler|update\n"
		"coordination.k8s.io|leases||create\n";
	const struct kerf_yaml_node *crb = find_kind("ClusterRoleBinding", "kerf-serve");
	const struct kerf_yaml_node *rb = find_kind("RoleBinding", "kerf-serve-leader-election");
	const struct kerf_yaml_node *role = find_kind("Role", "kerf-serve-leader-election");
	char got[4096];

	(void)state;
	deploy_grants(find_kind("ClusterRole", "kerf-serve"), got, sizeof(got));
	assert_string_equal(got, want_cluster);
	deploy_grants(role, got, sizeof(got));
	assert_string_equal(got, want_role);
	assert_true(yis(yget(yget(role, "metadata"), "namespace"), "kerf-system"));
	for (size_t i = 0; i < 2; i++) {
		const struct kerf_yaml_node *b = i ? rb : crb;
		const struct kerf_yaml_node *s = yget(b, "subjects");

		assert_true(s && s->nr == 1);
		assert_true(yis(yget(s->items[0], "kind"), "ServiceAccount"));
		assert_true(yis(yget(s->items[0], "name"), "kerf"));
		assert_true(yis(yget(s->items[0], "namespace"), "kerf-system"));
	}
	/* every namespaced object of ours is in kerf-system (the agent's,
	 * under agent/, in kerf-agent: test_deploy_agent) */
	for (size_t i = 0; i < deploy_nr_files; i++) {
		const struct kerf_yaml_node *r = deploy_files[i].doc.root;
		const struct kerf_yaml_node *ns = yget(yget(r, "metadata"), "namespace");

		if (ns && strncmp(deploy_files[i].rel, "agent/", 6))
			assert_true(yis(ns, "kerf-system"));
	}
}

/* --- the Deployment -------------------------------------------------- */

/* The flags of kerf serve (docs/api.md lists them), in the order given. */
static const char *const serve_flags[] = {
	"--leader-elect", "--lease-namespace=kerf-system",
	"--lease-name=kerf-scheduler", "--lease-duration=15s",
	"--renew-deadline=10s", "--retry-period=2s", "--identity=$(POD_NAME)",
	"--scheduler-name=kerf", "--metrics-addr=:8080",
	"--qps=50", "--burst=100", "--policy=kerf",
	"--webhook-addr=:8443", "--webhook-cert=/etc/kerf/webhook/tls.crt",
	"--webhook-key=/etc/kerf/webhook/tls.key",
};

static void test_deployment(void **state)
{
	const struct kerf_yaml_node *d = find_kind("Deployment", "kerf-serve");
	const struct kerf_yaml_node *pod = yget(yget(yget(d, "spec"), "template"), "spec");
	const struct kerf_yaml_node *c, *sc, *args, *drop, *res;
	const struct kerf_yaml_node *pdb = find_kind("PodDisruptionBudget", "kerf-serve");

	(void)state;
	assert_true(yis(yget(yget(d, "spec"), "replicas"), "2"));
	assert_true(yis(yget(pod, "serviceAccountName"), "kerf"));
	assert_true(yis(yget(yget(pod, "securityContext"), "runAsNonRoot"), "true"));
	assert_true(yget(pod, "containers")->nr == 1);
	c = yget(pod, "containers")->items[0];
	sc = yget(c, "securityContext");
	assert_true(yis(yget(sc, "readOnlyRootFilesystem"), "true"));
	assert_true(yis(yget(sc, "allowPrivilegeEscalation"), "false"));
	assert_true(yis(yget(sc, "privileged"), "false"));
	drop = yget(yget(sc, "capabilities"), "drop");
	assert_true(drop && drop->nr == 1 && yis(drop->items[0], "ALL"));
	assert_true(yis(yget(yget(yget(c, "livenessProbe"), "httpGet"), "path"), "/healthz"));
	assert_true(yis(yget(yget(yget(c, "readinessProbe"), "httpGet"), "path"), "/readyz"));
	res = yget(c, "resources");
	assert_non_null(yget(yget(res, "requests"), "cpu"));
	assert_non_null(yget(yget(res, "requests"), "memory"));
	assert_non_null(yget(yget(res, "limits"), "memory"));
	args = yget(c, "args");
	assert_non_null(args);
	assert_int_equal(args->nr, sizeof(serve_flags) / sizeof(serve_flags[0]));
	for (size_t i = 0; i < args->nr; i++)
		assert_string_equal(ytext(args->items[i]), serve_flags[i]);
	assert_true(yis(yget(yget(pdb, "spec"), "minAvailable"), "1"));
	assert_non_null(find_kind("Service", "kerf-serve"));
	assert_non_null(find_kind("Namespace", "kerf-system"));
	assert_non_null(find_kind("ServiceAccount", "kerf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kustomization_lists_every_file),
		cmocka_unit_test(test_crds_structural),
		cmocka_unit_test(test_decoder_fields_in_schema),
		cmocka_unit_test(test_rbac),
		cmocka_unit_test(test_deployment),
	};

	return cmocka_run_group_tests(tests, deploy_load, deploy_release);
}
