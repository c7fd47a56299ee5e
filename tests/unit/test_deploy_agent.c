/*
 * deploy/agent/: the node agent's manifests say what docs/agent.md
 * ("Deployment") promises:
 *  - agent/kustomization.yaml lists every file under agent/ (and nothing
 *    else), and deploy/kustomization.yaml includes the directory;
 *  - the namespace kerf-agent allows privileged pods (the agent needs host
 *    paths and namespaces), and every namespaced object is in it;
 *  - RBAC grants exactly get/list/watch pods, get/patch nodes, patch
 *    nodes/status and create events: no wildcard, no secrets;
 *  - the DaemonSet runs `kerf agent run --node-name=$(NODE_NAME)` from the
 *    downward API's spec.nodeName, on GPU nodes, tolerating every
 *    NoSchedule taint and kerf's taints, system-node-critical, in the
 *    host's network and PID namespaces, devices from the NVIDIA runtime,
 *    root with only NET_ADMIN, SETUID and SETGID, a read-only root
 *    filesystem, probes on loopback at the --health-addr port, no Secret;
 *  - each hostPath is one of the known ones, mounted read-only where it
 *    must be, with a comment in the manifest and a row in docs/agent.md;
 *  - the ValidatingAdmissionPolicy and its binding: admissionregistration
 *    v1, fail closed, Deny, UPDATE of nodes and nodes/status by the
 *    agent's ServiceAccount only, and CEL expressions that hold the node
 *    name claim, the kerf.io/ and nvidia.com/gpu. prefixes, labels,
 *    annotations, taints, unschedulable and conditions, each compared
 *    between object and oldObject.  No CEL implementation is packaged in
 *    Debian, so the expressions are checked as text: balanced brackets and
 *    quotes, every variables.X declared, only the variables a policy has.
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
#include "format/file.h"

#define AGENT_USER "system:serviceaccount:kerf-agent:kerf-agent"

static const struct kerf_yaml_node *agent_root(const char *file)
{
	char rel[DEPLOY_PATH_LEN];
	const struct kerf_yaml_node *r;

	snprintf(rel, sizeof(rel), "agent/%s", file);
	r = deploy_file(rel);
	if (!r)
		fail_msg("no deploy/%s", rel);
	return r;
}

static void test_kustomization(void **state)
{
	const struct kerf_yaml_node *res = yget(agent_root("kustomization.yaml"), "resources");
	size_t nr_agent = 0;

	(void)state;
	assert_true(yseq_has(yget(deploy_file("kustomization.yaml"), "resources"), "agent"));
	assert_non_null(res);
	for (size_t i = 0; i < deploy_nr_files; i++) {
		const char *rel = deploy_files[i].rel;

		if (strncmp(rel, "agent/", 6) || !strcmp(rel, "agent/kustomization.yaml"))
			continue;
		nr_agent++;
		if (!yseq_has(res, rel + 6))
			fail_msg("deploy/%s is not in agent/kustomization.yaml", rel);
	}
	assert_int_equal(res->nr, nr_agent);
	assert_true(nr_agent >= 7);
}

static void test_namespace(void **state)
{
	const struct kerf_yaml_node *ns = find_kind("Namespace", "kerf-agent");
	const struct kerf_yaml_node *labels = yget(yget(ns, "metadata"), "labels");

	(void)state;
	assert_true(yis(yget(labels, "pod-security.kubernetes.io/enforce"), "privileged"));
	for (size_t i = 0; i < deploy_nr_files; i++) {
		const struct kerf_yaml_node *r = deploy_files[i].doc.root;
		const struct kerf_yaml_node *n = yget(yget(r, "metadata"), "namespace");

		if (n && !strncmp(deploy_files[i].rel, "agent/", 6) && !yis(n, "kerf-agent"))
			fail_msg("deploy/%s: namespace %s, not kerf-agent", deploy_files[i].rel,
				 ytext(n));
	}
}

static void test_rbac(void **state)
{
	static const char want[] =
		"events.k8s.io|events||create\n"
		"|events||create\n"
		"|nodes/status||patch\n"
		"|nodes||get\n|nodes||list\n|nodes||patch\n|nodes||watch\n"
		"|pods/eviction||create\n"
		"|pods||get\n|pods||list\n|pods||patch\n|pods||watch\n";
	const struct kerf_yaml_node *crb = find_kind("ClusterRoleBinding", "kerf-agent");
	const struct kerf_yaml_node *s = yget(crb, "subjects");
	char got[1024];

	(void)state;
	deploy_grants(find_kind("ClusterRole", "kerf-agent"), got, sizeof(got));
	assert_null(strstr(got, "secrets"));
	assert_string_equal(got, want);
	assert_true(yis(yget(yget(crb, "roleRef"), "name"), "kerf-agent"));
	assert_true(yis(yget(yget(crb, "roleRef"), "kind"), "ClusterRole"));
	assert_true(s && s->nr == 1);
	assert_true(yis(yget(s->items[0], "kind"), "ServiceAccount"));
	assert_true(yis(yget(s->items[0], "name"), "kerf-agent"));
	assert_true(yis(yget(s->items[0], "namespace"), "kerf-agent"));
	assert_non_null(find_kind("ServiceAccount", "kerf-agent"));
}

/* --- the DaemonSet ---------------------------------------------------- */

static const struct kerf_yaml_node *agent_pod(void)
{
	const struct kerf_yaml_node *ds = find_kind("DaemonSet", "kerf-agent");

	return yget(yget(yget(ds, "spec"), "template"), "spec");
}

static const struct kerf_yaml_node *agent_container(void)
{
	const struct kerf_yaml_node *cs = yget(agent_pod(), "containers");

	assert_true(cs && cs->nr == 1);
	return cs->items[0];
}

/* The item of seq whose key is value, or NULL. */
static const struct kerf_yaml_node *item_by(const struct kerf_yaml_node *seq,
					    const char *key, const char *value)
{
	for (size_t i = 0; seq && i < seq->nr; i++)
		if (yis(yget(seq->items[i], key), value))
			return seq->items[i];
	return NULL;
}

/* The arg beginning with prefix, or NULL. */
static const char *arg(const struct kerf_yaml_node *args, const char *prefix)
{
	for (size_t i = 0; args && i < args->nr; i++)
		if (ytext(args->items[i]) && !strncmp(ytext(args->items[i]), prefix, strlen(prefix)))
			return ytext(args->items[i]);
	return NULL;
}

static void test_daemonset_identity(void **state)
{
	const struct kerf_yaml_node *pod = agent_pod(), *c = agent_container();
	const struct kerf_yaml_node *cmd = yget(c, "command");
	const struct kerf_yaml_node *env = yget(c, "env");
	const struct kerf_yaml_node *node = item_by(env, "name", "NODE_NAME");
	const struct kerf_yaml_node *terms;

	(void)state;
	assert_true(cmd && cmd->nr == 3 && yis(cmd->items[0], "kerf") &&
		    yis(cmd->items[1], "agent") && yis(cmd->items[2], "run"));
	assert_string_equal(arg(yget(c, "args"), "--node-name="), "--node-name=$(NODE_NAME)");
	assert_true(yis(yget(yget(yget(node, "valueFrom"), "fieldRef"), "fieldPath"),
			"spec.nodeName"));
	assert_true(yis(yget(pod, "serviceAccountName"), "kerf-agent"));
	assert_true(yis(yget(pod, "priorityClassName"), "system-node-critical"));
	/* GPU nodes only: every term of the required affinity names a GPU label */
	terms = yget(yget(yget(yget(pod, "affinity"), "nodeAffinity"),
			  "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	assert_true(terms && terms->nr >= 1);
	for (size_t i = 0; i < terms->nr; i++) {
		const struct kerf_yaml_node *x = yget(terms->items[i], "matchExpressions");
		const char *key = x && x->nr == 1 ? ytext(yget(x->items[0], "key")) : NULL;

		if (!key || (!strstr(key, "pci-10de") && !strstr(key, "gpu")))
			fail_msg("node affinity term %zu does not select GPU nodes", i);
	}
	/* the image is kerf's, tagged by the kustomization */
	assert_true(yis(yget(c, "image"), "kerf"));
}

static void test_daemonset_tolerations(void **state)
{
	const struct kerf_yaml_node *tol = yget(agent_pod(), "tolerations");
	bool any_noschedule = false, kerf_any_effect = false;

	(void)state;
	assert_non_null(tol);
	for (size_t i = 0; i < tol->nr; i++) {
		const struct kerf_yaml_node *t = tol->items[i];

		if (!yget(t, "key") && yis(yget(t, "operator"), "Exists") &&
		    yis(yget(t, "effect"), "NoSchedule"))
			any_noschedule = true;
		if (yis(yget(t, "key"), "kerf.io/gpu-failed") &&
		    yis(yget(t, "operator"), "Exists") && !yget(t, "effect"))
			kerf_any_effect = true;
		/* tolerating every taint of every effect would keep it on a node
		 * being drained for NoExecute reasons kerf does not own */
		if (!yget(t, "key") && !yget(t, "effect"))
			fail_msg("toleration %zu tolerates everything", i);
	}
	assert_true(any_noschedule);
	assert_true(kerf_any_effect);
}

static void test_daemonset_security(void **state)
{
	const struct kerf_yaml_node *pod = agent_pod(), *c = agent_container();
	const struct kerf_yaml_node *sc = yget(c, "securityContext");
	const struct kerf_yaml_node *add = yget(yget(sc, "capabilities"), "add");
	const struct kerf_yaml_node *drop = yget(yget(sc, "capabilities"), "drop");
	const struct kerf_yaml_node *env = yget(c, "env");

	(void)state;
	assert_true(yis(yget(pod, "hostNetwork"), "true"));
	assert_true(yis(yget(pod, "hostPID"), "true"));
	assert_null(yget(pod, "hostIPC"));
	assert_true(yis(yget(pod, "runtimeClassName"), "nvidia"));
	assert_true(yis(yget(item_by(env, "name", "NVIDIA_VISIBLE_DEVICES"), "value"), "all"));
	assert_true(yis(yget(sc, "readOnlyRootFilesystem"), "true"));
	assert_true(yis(yget(sc, "privileged"), "false"));
	assert_true(yis(yget(sc, "allowPrivilegeEscalation"), "false"));
	assert_true(drop && drop->nr == 1 && yis(drop->items[0], "ALL"));
	assert_true(add && add->nr == 3);
	assert_true(yseq_has(add, "NET_ADMIN") && yseq_has(add, "SETUID") &&
		    yseq_has(add, "SETGID"));
	/* nothing from a Secret: no env, no volume */
	for (size_t i = 0; env && i < env->nr; i++)
		assert_null(yget(yget(env->items[i], "valueFrom"), "secretKeyRef"));
	assert_null(yget(c, "envFrom"));
	for (size_t i = 0; i < yget(pod, "volumes")->nr; i++)
		assert_null(yget(yget(pod, "volumes")->items[i], "secret"));
	assert_non_null(yget(yget(c, "resources"), "requests"));
	assert_non_null(yget(yget(yget(c, "resources"), "limits"), "memory"));
}

static void test_daemonset_probes(void **state)
{
	const struct kerf_yaml_node *c = agent_container();
	const char *health = arg(yget(c, "args"), "--health-addr=");
	const char *port;

	(void)state;
	assert_non_null(health);
	/* loopback: the probes need not be reachable from anywhere else */
	assert_true(!strncmp(health, "--health-addr=127.0.0.1:", 24));
	port = health + 24;
	for (int i = 0; i < 2; i++) {
		const struct kerf_yaml_node *g =
			yget(yget(c, i ? "readinessProbe" : "livenessProbe"), "httpGet");

		assert_true(yis(yget(g, "path"), i ? "/readyz" : "/healthz"));
		assert_true(yis(yget(g, "host"), "127.0.0.1"));
		assert_true(yis(yget(g, "port"), port));
	}
}

/* The host paths the agent may have, and whether read-only. */
static const struct {
	const char *path;
	bool read_only;
} host_paths[] = {
	{ "/var/lib/kubelet/device-plugins", false },
	{ "/var/lib/kubelet/pod-resources", true },
	{ "/run/kerf/mps", false },
	{ "/sys/fs/cgroup", true },
	{ "/usr/lib/x86_64-linux-gnu", true },
};

static char *read_text(const char *rel, struct kerf_file *f)
{
	const char *src = getenv("KERF_SOURCE_ROOT");
	char path[DEPLOY_PATH_LEN * 2];
	struct kerf_err err = { 0 };

	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	if (kerf_file_read(f, path, 1 << 20, &err) < 0)
		fail_msg("%s", err.msg);
	return (char *)f->data;
}

/* The volume vol of the manifest text has a comment line just above it. */
static bool commented(const char *text, const char *vol)
{
	char item[128];
	const char *v = strstr(text, "\n      volumes:\n"), *p;

	snprintf(item, sizeof(item), "\n        - name: %s\n", vol);
	if (!v || !(p = strstr(v, item)))
		return false;
	/* p is the newline ending the line before the item */
	while (p > text && p[-1] != '\n')
		p--;
	while (*p == ' ')
		p++;
	return *p == '#';
}

static void test_daemonset_host_paths(void **state)
{
	const struct kerf_yaml_node *pod = agent_pod(), *c = agent_container();
	const struct kerf_yaml_node *vols = yget(pod, "volumes");
	const struct kerf_yaml_node *mounts = yget(c, "volumeMounts");
	struct kerf_file manifest, doc;
	const char *text = read_text("deploy/agent/daemonset.yaml", &manifest);
	const char *docs = read_text("docs/agent.md", &doc);
	const char *deployment = strstr(docs, "\n## Deployment");
	size_t seen = 0;

	(void)state;
	assert_non_null(deployment);
	for (size_t i = 0; i < vols->nr; i++) {
		const struct kerf_yaml_node *v = vols->items[i];
		const char *name = ytext(yget(v, "name"));
		const char *path = ytext(yget(yget(v, "hostPath"), "path"));
		const struct kerf_yaml_node *m = item_by(mounts, "name", name);
		char row[DEPLOY_PATH_LEN];
		size_t k = 0;

		if (!yget(v, "hostPath"))
			continue;
		while (k < sizeof(host_paths) / sizeof(host_paths[0]) &&
		       strcmp(host_paths[k].path, path))
			k++;
		if (k == sizeof(host_paths) / sizeof(host_paths[0]))
			fail_msg("hostPath %s is not one the agent needs", path);
		seen++;
		if (!m)
			fail_msg("hostPath volume %s is not mounted", name);
		if (host_paths[k].read_only != yis(yget(m, "readOnly"), "true"))
			fail_msg("hostPath %s must be mounted %s", path,
				 host_paths[k].read_only ? "read-only" : "read-write");
		if (!commented(text, name))
			fail_msg("hostPath volume %s has no comment saying why", name);
		snprintf(row, sizeof(row), "\n| `%s` |", path);
		if (!strstr(deployment, row))
			fail_msg("hostPath %s has no row in docs/agent.md (Deployment)", path);
	}
	assert_int_equal(seen, sizeof(host_paths) / sizeof(host_paths[0]));
	/* the comment check can fail: an item without one */
	assert_false(commented("      volumes:\n        - name: x\n", "x"));
	kerf_file_release(&manifest);
	kerf_file_release(&doc);
}

/* --- the admission policy --------------------------------------------- */

/*
 * A text check of a CEL expression (no CEL library in Debian): brackets
 * and quotes balance, and each identifier that starts a selection is one
 * of a ValidatingAdmissionPolicy's variables (object, oldObject, request,
 * variables, params, namespaceObject, authorizer), a macro's loop
 * variable bound before it (all(k, ...), filter(t, ...)), a literal or a
 * function; each variables.X is declared.  Returns NULL or the problem.
 */
static const char *vap_cel_check(const char *e, const struct kerf_yaml_node *decl,
				 char *msg, size_t size)
{
	static const char *const roots[] = {
		"object", "oldObject", "request", "variables", "params",
		"namespaceObject", "authorizer", "true", "false", "null", "in",
	};
	char open[64], bound[16][32];
	size_t depth = 0, nr_bound = 0, bound_depth[16];

	for (const char *p = e; *p;) {
		if (*p == '\'' || *p == '"') {
			const char *q = strchr(p + 1, *p);

			if (!q)
				return snprintf(msg, size, "a string not closed: %s", p), msg;
			p = q + 1;
			continue;
		}
		if (strchr("([{", *p)) {
			if (depth == sizeof(open))
				return snprintf(msg, size, "nested too deep"), msg;
			open[depth++] = *p == '(' ? ')' : *p == '[' ? ']' : '}';
			p++;
			continue;
		}
		if (strchr(")]}", *p)) {
			if (!depth || open[--depth] != *p)
				return snprintf(msg, size, "unbalanced '%c'", *p), msg;
			while (nr_bound && bound_depth[nr_bound - 1] > depth)
				nr_bound--;      /* the macro's call is closed */
			p++;
			continue;
		}
		if (!isalpha((unsigned char)*p) && *p != '_') {
			p++;
			continue;
		}
		const char *s = p;
		size_t len;
		bool ok = false;

		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		len = (size_t)(p - s);
		if ((s > e && s[-1] == '.') || *p == '(')
			ok = true;               /* a field, a function or a method */
		if (!ok && s > e + 1 && (s[-1] == '(' || s[-2] == '(') && p[0] == ',' &&
		    nr_bound < 16 && len < 32) {
			memcpy(bound[nr_bound], s, len);
			bound[nr_bound][len] = '\0';
			bound_depth[nr_bound++] = depth;
			ok = true;               /* a macro's loop variable */
		}
		for (size_t i = 0; !ok && i < nr_bound; i++)
			ok = strlen(bound[i]) == len && !strncmp(bound[i], s, len);
		for (size_t i = 0; !ok && i < sizeof(roots) / sizeof(roots[0]); i++)
			ok = strlen(roots[i]) == len && !strncmp(roots[i], s, len);
		if (!ok)
			return snprintf(msg, size, "'%.*s' is no variable of a policy", (int)len, s),
			       msg;
		if (len == 9 && !strncmp(s, "variables", 9)) {
			const char *n = p + 1, *q = n;

			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			ok = false;
			for (size_t i = 0; decl && i < decl->nr; i++) {
				const char *d = ytext(yget(decl->items[i], "name"));

				ok = ok || (d && strlen(d) == (size_t)(q - n) && !strncmp(d, n, (size_t)(q - n)));
			}
			if (*p != '.' || !ok)
				return snprintf(msg, size, "variables.%.*s is not declared",
						(int)(q - n), n), msg;
			p = q;
		}
	}
	if (depth)
		return snprintf(msg, size, "'%c' missing at the end", open[depth - 1]), msg;
	return NULL;
}

static void test_cel_check(void **state)
{
	static const char *const bad[] = {
		"object.metadata.name == 'a",
		"(object.metadata.name == 'a'",
		"object.metadata.labels['a')",
		"variables.nope == 1",
		"self.spec == oldSelf.spec",
		"labels.all(k, k == 'a') && k == 'b'",
	};
	const struct kerf_yaml_node *decl =
		yget(yget(find_kind("ValidatingAdmissionPolicy", "kerf-agent-own-node"), "spec"),
		     "variables");
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!vap_cel_check(bad[i], decl, msg, sizeof(msg)))
			fail_msg("the CEL check passed: %s", bad[i]);
	assert_null(vap_cel_check("variables.newLabels.all(k, k.startsWith('kerf.io/') || "
				  "k in oldObject.metadata.labels)", decl, msg, sizeof(msg)));
}

/* The expression of the validation or variable whose text holds needle. */
static const char *expr_with(const struct kerf_yaml_node *seq, const char *needle)
{
	for (size_t i = 0; seq && i < seq->nr; i++) {
		const char *e = ytext(yget(seq->items[i], "expression"));

		if (e && strstr(e, needle))
			return e;
	}
	return NULL;
}

/*
 * What the policy's CEL must say: the variable (or validation) holding
 * find, and what else that expression holds.
 */
static const struct {
	bool variable;
	const char *find;
	const char *also[3];
} want_cel[] = {
	/* its own Node: the token's node-name claim against the object's name */
	{ true, "'authentication.kubernetes.io/node-name'", { "request.userInfo.extra[" } },
	{ false, "object.metadata.name",
	  { "variables.nodeNames[0] == object.metadata.name", "variables.nodeNames.size() == 1" } },
	/* labels and annotations: both ways (added or changed, removed) */
	{ false, "variables.oldLabels.all(k",
	  { "variables.newLabels.all(k", "k.startsWith('kerf.io/')", "k.startsWith('nvidia.com/gpu.')" } },
	{ false, "variables.oldAnnotations.all(k",
	  { "variables.newAnnotations.all(k", "k.startsWith('kerf.io/')",
	    "k.startsWith('nvidia.com/gpu.')" } },
	{ true, "oldObject.metadata.labels", { NULL } },
	{ true, "oldObject.metadata.annotations", { NULL } },
	/* taints and conditions: all but kerf.io/ ones unchanged */
	{ true, "object.spec.taints", { "!t.key.startsWith('kerf.io/')" } },
	{ true, "oldObject.spec.taints", { "!t.key.startsWith('kerf.io/')" } },
	{ false, "variables.otherNewTaints == variables.otherOldTaints", { NULL } },
	{ true, "object.status.conditions", { "!c.type.startsWith('kerf.io/')" } },
	{ true, "oldObject.status.conditions", { "!c.type.startsWith('kerf.io/')" } },
	{ false, "variables.otherNewConditions == variables.otherOldConditions", { NULL } },
	/* no cordon, no capacity */
	{ false, "object.spec.unschedulable", { "oldObject.spec.unschedulable" } },
	{ false, "object.status.capacity", { "oldObject.status.allocatable" } },
};

static void test_admission_policy(void **state)
{
	const struct kerf_yaml_node *vap = find_kind("ValidatingAdmissionPolicy",
						     "kerf-agent-own-node");
	const struct kerf_yaml_node *spec = yget(vap, "spec");
	const struct kerf_yaml_node *rules = yget(yget(spec, "matchConstraints"), "resourceRules");
	const struct kerf_yaml_node *vars = yget(spec, "variables");
	const struct kerf_yaml_node *vals = yget(spec, "validations");
	const struct kerf_yaml_node *mc = yget(spec, "matchConditions");
	const struct kerf_yaml_node *bind = find_kind("ValidatingAdmissionPolicyBinding",
						      "kerf-agent-own-node");
	const char *e;
	char msg[256];

	(void)state;
	assert_true(yis(yget(vap, "apiVersion"), "admissionregistration.k8s.io/v1"));
	assert_true(yis(yget(bind, "apiVersion"), "admissionregistration.k8s.io/v1"));
	assert_true(yis(yget(spec, "failurePolicy"), "Fail"));
	assert_true(rules && rules->nr == 1);
	assert_true(yseq_has(yget(rules->items[0], "resources"), "nodes"));
	assert_true(yseq_has(yget(rules->items[0], "resources"), "nodes/status"));
	assert_true(yseq_has(yget(rules->items[0], "operations"), "UPDATE"));
	assert_true(yseq_has(yget(rules->items[0], "apiGroups"), ""));
	/* the agent's requests only, and all of them */
	assert_true(mc && mc->nr == 1);
	assert_string_equal(ytext(yget(mc->items[0], "expression")),
			    "request.userInfo.username == '" AGENT_USER "'");
	assert_true(yis(yget(yget(bind, "spec"), "policyName"), "kerf-agent-own-node"));
	assert_true(yget(yget(bind, "spec"), "validationActions")->nr == 1);
	assert_true(yseq_has(yget(yget(bind, "spec"), "validationActions"), "Deny"));
	assert_null(yget(yget(bind, "spec"), "paramRef"));

	/* every expression passes the text check; every validation says why */
	for (size_t s = 0; s < 3; s++) {
		const struct kerf_yaml_node *seq = s == 0 ? vars : s == 1 ? vals : mc;

		for (size_t i = 0; seq && i < seq->nr; i++) {
			const char *x = ytext(yget(seq->items[i], "expression"));

			assert_non_null(x);
			if (vap_cel_check(x, vars, msg, sizeof(msg)))
				fail_msg("%s: %s", x, msg);
			if (s == 1 && !ytext(yget(seq->items[i], "message")) &&
			    !ytext(yget(seq->items[i], "messageExpression")))
				fail_msg("a validation without a message: %s", x);
			if (s == 1 && (e = ytext(yget(seq->items[i], "messageExpression"))) &&
			    vap_cel_check(e, vars, msg, sizeof(msg)))
				fail_msg("%s: %s", e, msg);
		}
	}
	for (size_t i = 0; i < sizeof(want_cel) / sizeof(want_cel[0]); i++) {
		e = expr_with(want_cel[i].variable ? vars : vals, want_cel[i].find);
		if (!e)
			fail_msg("no %s holds %s", want_cel[i].variable ? "variable" : "validation",
				 want_cel[i].find);
		for (size_t k = 0; k < 3 && want_cel[i].also[k]; k++)
			if (!strstr(e, want_cel[i].also[k]))
				fail_msg("%s lacks %s", e, want_cel[i].also[k]);
	}
	/* the username matched is the ServiceAccount's */
	assert_non_null(find_kind("ServiceAccount", "kerf-agent"));
	assert_true(yis(yget(yget(find_kind("ServiceAccount", "kerf-agent"), "metadata"),
			     "namespace"), "kerf-agent"));
}

/* The pods policy: the agent's pod writes only to pods on its Node, only
   kerf.io/results-untrusted. */
static void test_admission_policy_pods(void **state)
{
	const struct kerf_yaml_node *vap = find_kind("ValidatingAdmissionPolicy",
						     "kerf-agent-own-pods");
	const struct kerf_yaml_node *spec = yget(vap, "spec");
	const struct kerf_yaml_node *rules = yget(yget(spec, "matchConstraints"), "resourceRules");
	const struct kerf_yaml_node *vars = yget(spec, "variables");
	const struct kerf_yaml_node *vals = yget(spec, "validations");
	const struct kerf_yaml_node *mc = yget(spec, "matchConditions");
	const struct kerf_yaml_node *bind = find_kind("ValidatingAdmissionPolicyBinding",
						      "kerf-agent-own-pods");
	char msg[256];
	const char *e;

	(void)state;
	assert_true(yis(yget(spec, "failurePolicy"), "Fail"));
	assert_true(rules && rules->nr == 1);
	assert_true(yseq_has(yget(rules->items[0], "resources"), "pods"));
	assert_true(yseq_has(yget(rules->items[0], "operations"), "UPDATE"));
	assert_true(mc && mc->nr == 1);
	assert_string_equal(ytext(yget(mc->items[0], "expression")),
			    "request.userInfo.username == '" AGENT_USER "'");
	assert_true(yis(yget(yget(bind, "spec"), "policyName"), "kerf-agent-own-pods"));
	assert_true(yseq_has(yget(yget(bind, "spec"), "validationActions"), "Deny"));
	for (size_t i = 0; vals && i < vals->nr; i++) {
		const char *x = ytext(yget(vals->items[i], "expression"));

		assert_non_null(x);
		if (vap_cel_check(x, vars, msg, sizeof(msg)))
			fail_msg("%s: %s", x, msg);
	}
	e = expr_with(vals, "object.spec.nodeName == variables.nodeNames[0]");
	assert_non_null(e);
	e = expr_with(vals, "k == 'kerf.io/results-untrusted'");
	assert_non_null(e);
	assert_non_null(strstr(e, "variables.oldAnnotations.all("));
	e = expr_with(vals, "object.spec == oldObject.spec");
	assert_non_null(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admission_policy_pods),
		cmocka_unit_test(test_kustomization),
		cmocka_unit_test(test_namespace),
		cmocka_unit_test(test_rbac),
		cmocka_unit_test(test_daemonset_identity),
		cmocka_unit_test(test_daemonset_tolerations),
		cmocka_unit_test(test_daemonset_security),
		cmocka_unit_test(test_daemonset_probes),
		cmocka_unit_test(test_daemonset_host_paths),
		cmocka_unit_test(test_cel_check),
		cmocka_unit_test(test_admission_policy),
	};

	return cmocka_run_group_tests(tests, deploy_load, deploy_release);
}
