/*
 * e2e_serve: kerf serve end to end on an API server, through HTTP only, so
 * the same suite runs against kerf's test API server (the default: started
 * here over TLS with certificates made for the run) or any real cluster
 * (KERF_E2E_KUBECONFIG names its kubeconfig; the suite installs the CRD,
 * uses namespaces and nodes of its own named kerf-e2e-*, and removes them).
 * With no kubelet, the suite creates Node objects with GPU capacity and
 * removes the not-ready taint an API server puts on new nodes.  kerf serve
 * runs in this process, as out of a cluster, driven step by step.
 *
 * Scenarios: a 4-pod gang bound together (never part of it), a gang over
 * its tenant's quota pending with the reason in PodScheduled, pods of
 * another scheduler holding GPUs that kerf then leaves alone, a restarted
 * kerf serve that adopts what runs and binds nothing twice, a preemption
 * through the checkpoint handshake and the Eviction API held back by a
 * PodDisruptionBudget (the preemptor told why, the victim's GPUs never
 * given while it terminates), a budget allowing no disruption that keeps
 * its pods from being asked to leave, a Tenant's quota raised live, and
 * the Tenant's status with its restore.
 * E2E_DEBUG=1 prints the PodScheduled messages it waits on.
 * Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "e2e_lib.h"

struct podspec {
	const char *gang;            /* label kerf.io/gang; NULL */
	int size;                    /* annotation kerf.io/gang-size */
	int gpus;
	const char *scheduler;
	const char *pclass;          /* spec.priorityClassName; NULL */
	int grace_s;                 /* terminationGracePeriodSeconds */
	const char *role;            /* label kerf-e2e/role; NULL */
};

static long pod_with(const char *ns, const char *name, const struct podspec *ps)
{
	char path[256], labels[256] = "", ann[128] = "", spec[128] = "";

	if (ps->gang || ps->role)
		snprintf(labels, sizeof(labels), ",\"labels\":{%s%s%s%s%s%s%s}",
			 ps->gang ? "\"kerf.io/gang\":\"" : "", ps->gang ? ps->gang : "",
			 ps->gang ? "\"" : "", ps->gang && ps->role ? "," : "",
			 ps->role ? "\"kerf-e2e/role\":\"" : "", ps->role ? ps->role : "",
			 ps->role ? "\"" : "");
	if (ps->gang)
		snprintf(ann, sizeof(ann), ",\"annotations\":{\"kerf.io/gang-size\":\"%d\"}",
			 ps->size);
	if (ps->pclass)
		snprintf(spec, sizeof(spec), "\"priorityClassName\":\"%s\",", ps->pclass);
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods", ns);
	return e2e_post(path,
		    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s%s},"
		    "\"spec\":{%s\"schedulerName\":\"%s\",\"terminationGracePeriodSeconds\":%d,"
		    "\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\","
		    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
		    name, labels, ann, spec, ps->scheduler, ps->grace_s, ps->gpus);
}


/* Play the kubelet: the pod runs. */
static void pod_running(const char *ns, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ns, name);
	e2e_api("PATCH", path, "application/merge-patch+json",
	    "{\"status\":{\"phase\":\"Running\"}}", NULL);
}

/* Play the kubelet: a pod being deleted is gone (grace 0). */
static void pod_gone(const char *ns, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	e2e_api("DELETE", path, "application/json",
	    "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":0}", NULL);
}

/* The pod's annotation key ("" none, NULL when the pod is gone), into out. */
static const char *pod_annotation(const char *ns, const char *name, const char *key,
				  char *out, size_t size, bool *terminating)
{
	char path[256];
	json_t *p = NULL;
	const char *v;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	if (e2e_api("GET", path, NULL, NULL, &p) != 200) {
		json_decref(p);
		return NULL;
	}
	v = json_string_value(json_object_get(json_object_get(json_object_get(p, "metadata"),
								"annotations"), key));
	snprintf(out, size, "%s", v ? v : "");
	if (terminating)
		*terminating = json_object_get(json_object_get(p, "metadata"),
					       "deletionTimestamp") != NULL;
	json_decref(p);
	return out;
}

struct want { const char *ns, *prefix; int n, bound; };

static bool bound_is(void *arg)
{
	struct want *w = arg;

	return e2e_count_bound(w->ns, w->prefix, w->n) == w->bound;
}

struct says_arg { const char *ns, *name, *text; };

/* The pod's PodScheduled=False message holds text. */
static bool says(void *arg)
{
	struct says_arg *a = arg;
	char node[256], msg[512];

	e2e_pod_state(a->ns, a->name, node, sizeof(node), msg, sizeof(msg));
	if (getenv("E2E_DEBUG"))
		fprintf(stderr, "%lld %s: %s\n", (long long)e2e_wall_ms(), a->name, msg);
	return strstr(msg, a->text) != NULL;
}

/* Dimensions in a Tenant's status.history.usageAverage. */
static size_t history_size(const json_t *t)
{
	return json_object_size(json_object_get(json_object_get(json_object_get(t, "status"),
								 "history"), "usageAverage"));
}

static bool synced(void *arg)
{
	(void)arg;
	return kerf_controller_synced(e2e.ctl);
}

int main(int argc, char **argv)
{
	char node_name[256], msg[512];
	const char *ns = "kerf-e2e-a", *ns_b = "kerf-e2e-b";
	int rc;

	rc = e2e_setup(argc > 1 ? argv[1] : NULL, "e2e_serve");
	if (rc != 0)
		return rc < 0 ? 1 : 0;

	/* the cluster: the CRD, two tenants' namespaces, two 8-GPU nodes */
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
	     "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-a\"},\"spec\":{\"weight\":1}}");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
	     "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-b\"},"
	     "\"spec\":{\"weight\":1,\"quotas\":[{\"flavor\":\"nvidia-h100-80gb-hbm3\",\"nominal\":\"2\",\"borrowingLimit\":\"0\"}]}}");
	e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-a\"}}}", ns);
	e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-b\"}}}", ns_b);
	e2e_node("kerf-e2e-node-1", 8, NULL);
	e2e_node("kerf-e2e-node-2", 8, NULL);

	/* 1. a 4-pod gang of 4 GPUs each: all four bound, or none */
	for (int i = 0; i < 3; i++) {
		char name[32];

		snprintf(name, sizeof(name), "gang-%d", i);
		e2e_pod(ns, name, "gang", 4, 4, "kerf", NULL, NULL);
	}
	e2e_check(e2e_controller_start(NULL), "kerf serve started");
	{
		struct want w = { ns, "gang", 4, 1 };

		/* three of four: nothing may be bound, however long it runs */
		e2e_check(!e2e_run_until(bound_is, &w, 1500) && e2e_count_bound(ns, "gang", 3) == 0,
		      "3 of a 4-pod gang: none bound");
		e2e_pod_state(ns, "gang-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(strstr(msg, "3 of 4") != NULL, "the incomplete gang's pods say why");
		e2e_pod(ns, "gang-3", "gang", 4, 4, "kerf", NULL, NULL);
		w.bound = 4;
		e2e_check(e2e_run_until(bound_is, &w, 10000), "the 4th pod: all four bound");
		/* the kubelet's part: they run (work that a preemption would lose) */
		for (int i = 0; i < 4; i++) {
			char name[32];

			snprintf(name, sizeof(name), "gang-%d", i);
			pod_running(ns, name);
		}
	}

	/* 2. a gang over its tenant's quota: pending, the reason in the condition */
	e2e_pod(ns_b, "big-0", "big", 2, 2, "kerf", NULL, NULL);
	e2e_pod(ns_b, "big-1", "big", 2, 2, "kerf", NULL, NULL);
	e2e_run_until(says, &(struct says_arg){ ns_b, "big-0", "over its limit" }, 10000);
	e2e_pod_state(ns_b, "big-0", node_name, sizeof(node_name), msg, sizeof(msg));
	e2e_check(!node_name[0] && strstr(msg, "over its limit"), "a gang over quota stays pending, the reason in PodScheduled");
	if (kerf_controller_stats(e2e.ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(e2e.ctl)->last_error);
	if (msg[0])
		printf("# reason: %s\n", msg);

	/* 3. another scheduler's pods hold GPUs: kerf does not give them again */
	e2e_controller_stop();
	{
		char path[256];

		/* both nodes are full with the gang: free nothing; use a third node */
		e2e_node("kerf-e2e-node-3", 8, NULL);
		e2e_pod(ns, "other-0", NULL, 0, 6, "default-scheduler", NULL, NULL);
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/other-0/binding", ns);
		e2e_post(path, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"other-0\"},"
			   "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"kerf-e2e-node-3\"}}");
	}
	e2e_check(e2e_controller_start(NULL), "kerf serve restarted");
	e2e_pod(ns, "solo-0", NULL, 0, 4, "kerf", NULL, NULL);
	e2e_run_until(bound_is, &(struct want){ ns, "solo", 1, 1 }, 3000);
	e2e_pod_state(ns, "solo-0", node_name, sizeof(node_name), msg, sizeof(msg));
	e2e_check(!node_name[0], "6 of 8 GPUs held by another scheduler: a 4-GPU pod waits");
	/* 4. the restarted kerf serve adopted the gang: it bound nothing twice */
	e2e_check(kerf_controller_stats(e2e.ctl)->binds_sent == 0 &&
	      kerf_controller_stats(e2e.ctl)->binds_conflict == 0,
	      "after a restart, nothing bound twice");
	e2e_check(e2e_count_bound(ns, "gang", 4) == 4, "the gang is still whole");
	/* solo-0 waits for node 3 (a head-of-line reservation); withdraw it */
	{
		char path[256];

		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/solo-0", ns);
		e2e_api("DELETE", path, NULL, NULL, NULL);
		/* gone for the API server first (an unbound pod goes at once) */
		for (int i = 0; i < 100 && e2e_api("GET", path, NULL, NULL, NULL) != 404; i++)
			e2e_turn(50);
	}
	e2e_pod(ns, "solo-1", NULL, 0, 2, "kerf", NULL, NULL);
	e2e_run_until(bound_is, &(struct want){ ns, "solo", 2, 1 }, 15000);
	e2e_pod_state(ns, "solo-1", node_name, sizeof(node_name), msg, sizeof(msg));
	e2e_check(!strcmp(node_name, "kerf-e2e-node-3"), "2 GPUs fit beside the other scheduler's 6");
	if (msg[0])
		printf("# solo-1: %s\n", msg);
	if (kerf_controller_stats(e2e.ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(e2e.ctl)->last_error);

	/*
	 * 5. preemption through the checkpoint handshake and the Eviction
	 * API, held back by a PodDisruptionBudget.  The victim: 2 GPUs of
	 * priority 0 (kerf's preemptible class) with a 30 s grace, so that it
	 * stays Terminating after its eviction until the kubelet (this suite)
	 * says it is gone; its GPUs must not be given before.
	 */
	{
		char path[256], ann[128];
		bool terminating = false;
		time_t seen;

		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/solo-1", ns);
		e2e_api("DELETE", path, NULL, NULL, NULL);
		for (int i = 0; i < 100 && e2e_api("GET", path, NULL, NULL, NULL) != 404; i++)
			e2e_turn(50);
		pod_with(ns, "victim-0", &(struct podspec){ .gpus = 2, .scheduler = "kerf",
							    .grace_s = 30, .role = "victim" });
		e2e_run_until(bound_is, &(struct want){ ns, "victim", 1, 1 }, 15000);
		e2e_pod_state(ns, "victim-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(!strcmp(node_name, "kerf-e2e-node-3"), "the victim-to-be runs beside the other scheduler's pod");
		pod_running(ns, "victim-0");
		e2e_post("/apis/scheduling.k8s.io/v1/priorityclasses",
		     "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
		     "\"metadata\":{\"name\":\"kerf-e2e-normal\"},\"value\":100,"
		     "\"description\":\"kerf e2e: kerf's normal class\"}");
		/* let the informers see both before the preemptor comes */
		for (int i = 0; i < 20; i++)
			e2e_turn(20);
		pod_with(ns, "urgent-0", &(struct podspec){ .gpus = 2, .scheduler = "kerf",
							    .pclass = "kerf-e2e-normal" });
		for (int i = 0; i < 100 && pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann,
							 sizeof(ann), NULL) && !ann[0]; i++)
			e2e_turn(100);
		seen = time(NULL);
		e2e_check(ann[0] != '\0', "a higher class asks the victim to checkpoint (kerf.io/preempt-at)");
		printf("# preempt-at: %s\n", ann);
		/*
		 * The budget comes after the request (kerf does not ask a
		 * victim a budget already protects): the eviction is refused.
		 */
		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets", ns);
		e2e_post(path, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
			   "\"metadata\":{\"name\":\"victim\"},\"spec\":{\"minAvailable\":1,"
			   "\"selector\":{\"matchLabels\":{\"kerf-e2e/role\":\"victim\"}}}}");
		/* the workload checkpointed: it says so */
		{
			char now[32], body[256];
			time_t t;

			/* RFC 3339 has whole seconds: the next one after the request */
			while (time(NULL) <= seen)
				e2e_turn(50);
			t = time(NULL);

			strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
			snprintf(body, sizeof(body),
				 "{\"metadata\":{\"annotations\":{\"kerf.io/checkpoint-done\":\"%s\"}}}", now);
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/victim-0", ns);
			e2e_api("PATCH", path, "application/merge-patch+json", body, NULL);
		}
		e2e_run_until(says, &(struct says_arg){ ns, "urgent-0", "refused for now" }, 15000);
		e2e_pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann, sizeof(ann), &terminating);
		e2e_check(!node_name[0] && !terminating && strstr(msg, "refused for now"),
		      "a PodDisruptionBudget refuses the eviction: the preemptor waits, told why");
		if (msg[0])
			printf("# urgent-0: %s\n", msg);
		printf("# evictions sent %llu, refused %llu; last error: %s\n",
		       (unsigned long long)kerf_controller_stats(e2e.ctl)->evictions_sent,
		       (unsigned long long)kerf_controller_stats(e2e.ctl)->evictions_blocked,
		       kerf_controller_stats(e2e.ctl)->last_error);
		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets/victim", ns);
		e2e_api("DELETE", path, NULL, NULL, NULL);
		/* asked again after the refusal's Retry-After (10 s without one) */
		for (int i = 0; i < 250 && pod_annotation(ns, "victim-0", "kerf.io/preempt-at", ann,
							 sizeof(ann), &terminating) && !terminating; i++)
			e2e_turn(100);
		e2e_pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(terminating && !node_name[0],
		      "the budget gone, the victim is evicted; its GPUs are not given while it terminates");
		for (int i = 0; i < 20; i++)
			e2e_turn(50);
		e2e_pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(!node_name[0], "still not given a second later");
		pod_gone(ns, "victim-0");
		e2e_run_until(bound_is, &(struct want){ ns, "urgent", 1, 1 }, 10000);
		e2e_pod_state(ns, "urgent-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(!strcmp(node_name, "kerf-e2e-node-3"), "the victim gone, the preemptor is bound in its place");
		e2e_check(e2e_count_bound(ns, "gang", 4) == 4, "the gang was not touched");
	}

	/* 6. a Tenant edited live: its gang over quota is admitted */
	{
		e2e_node("kerf-e2e-node-4", 8, NULL);
		for (int i = 0; i < 30; i++)
			e2e_turn(50);
		e2e_check(e2e_count_bound(ns_b, "big", 2) == 0, "room alone does not admit a gang over its quota");
		e2e_api("PATCH", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", "application/merge-patch+json",
		    "{\"spec\":{\"quotas\":[{\"flavor\":\"nvidia-h100-80gb-hbm3\",\"nominal\":\"4\",\"borrowingLimit\":\"0\"}]}}",
		    NULL);
		e2e_check(e2e_run_until(bound_is, &(struct want){ ns_b, "big", 2, 2 }, 10000),
		      "the Tenant's quota raised live: the gang is bound whole");
	}
	/*
	 * 6b. a PodDisruptionBudget that allows no disruption keeps kerf
	 * from asking: an 8-GPU pod of a higher class would ask the other
	 * tenant's 2-pod gang (not started: no work lost), but a budget
	 * covers it, so the running 4-pod gang is asked instead.  Then the
	 * preemptor is withdrawn and the gang told it may stay.
	 */
	{
		char path[256], big[128] = "", ann[128] = "";
		bool asked = false;

		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets", ns_b);
		e2e_post(path, "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
			       "\"metadata\":{\"name\":\"guard\"},\"spec\":{\"minAvailable\":2,"
			       "\"selector\":{\"matchLabels\":{\"kerf.io/gang\":\"big\"}}}}");
		for (int i = 0; i < 20; i++)
			e2e_turn(20);
		pod_with(ns, "urgent-1", &(struct podspec){ .gpus = 8, .scheduler = "kerf",
							    .pclass = "kerf-e2e-normal" });
		for (int i = 0; i < 100 && !asked; i++) {
			e2e_turn(100);
			pod_annotation(ns, "gang-0", "kerf.io/preempt-at", ann, sizeof(ann), NULL);
			asked = ann[0] != '\0';
		}
		pod_annotation(ns_b, "big-0", "kerf.io/preempt-at", big, sizeof(big), NULL);
		e2e_check(asked && !big[0],
			  "a PodDisruptionBudget allowing no disruption: its gang is not asked to leave, another is");
		/* withdrawn: the gang is told it may stay */
		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/urgent-1", ns);
		e2e_api("DELETE", path, NULL, NULL, NULL);
		for (int i = 0; i < 100 && asked; i++) {
			e2e_turn(100);
			pod_annotation(ns, "gang-0", "kerf.io/preempt-at", ann, sizeof(ann), NULL);
			asked = ann[0] != '\0';
		}
		e2e_check(!asked, "the preemptor withdrawn, its victim is told it may stay");
		snprintf(path, sizeof(path), "/apis/policy/v1/namespaces/%s/poddisruptionbudgets/guard", ns_b);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}

	/* 7. what kerf holds per tenant is in its status, history included */
	{
		char used[32] = "";
		json_t *t = NULL;

		/* used at once; the history once a cycle has aged it in */
		for (int i = 0; i < 50 && (strcmp(used, "4") || !history_size(t)); i++) {
			json_decref(t);
			t = NULL;
			for (int k = 0; k < 5; k++)
				e2e_turn(20);
			if (e2e_api("GET", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", NULL, NULL, &t) == 200)
				snprintf(used, sizeof(used), "%s",
					 json_string_value(json_object_get(json_object_get(json_object_get(t, "status"),
								"gpus"), "used")) ?: "");
		}
		e2e_check(!strcmp(used, "4") && history_size(t) > 0,
		      "the Tenant's status says the 4 GPUs it uses, with its usage history");
		if (getenv("E2E_DEBUG")) {
			char *d = json_dumps(json_object_get(t, "status"), JSON_COMPACT);

			fprintf(stderr, "status: %s\n", d ? d : "");
			free(d);
		}
		json_decref(t);
	}
	if (kerf_controller_stats(e2e.ctl)->last_error[0])
		printf("# last error: %s\n", kerf_controller_stats(e2e.ctl)->last_error);
	e2e_controller_stop();
	/* a new leader restores every tenant's history before it decides */
	e2e_check(e2e_controller_start(NULL), "kerf serve restarted once more");
	e2e_run_until(synced, NULL, 10000);
	printf("# tenants restored: %llu; %s\n",
	       (unsigned long long)kerf_controller_stats(e2e.ctl)->tenants_restored,
	       kerf_controller_stats(e2e.ctl)->last_error);
	e2e_check(kerf_controller_stats(e2e.ctl)->tenants_restored >= 2,
	      "the restarted kerf serve restored the tenants' history from their status");

	/*
	 * 8. a GPUPool is a flavor: the node it selects is of it, and a
	 * Tenant's quota for it holds there (a gang of 2 x 2 GPUs over a
	 * nominal of 2 waits, a pod of 2 runs).
	 */
	{
		const char *ns_c = "kerf-e2e-c", *sel = "\"kerf.io/e2e-pool\":\"p5\"";

		e2e_node("kerf-e2e-node-5", 8, sel);
		e2e_post("/apis/kerf.io/v1alpha1/gpupools",
			 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"GPUPool\",\"metadata\":{\"name\":\"kerf-e2e-pool\"},"
			 "\"spec\":{\"gpuModel\":\"H100-80GB\",\"nodeSelector\":{\"matchLabels\":{%s}}}}", sel);
		e2e_post("/apis/kerf.io/v1alpha1/tenants",
			 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"kerf-e2e-c\"},"
			 "\"spec\":{\"weight\":1,\"quotas\":[{\"flavor\":\"kerf-e2e-pool\",\"nominal\":\"2\",\"borrowingLimit\":\"0\"},"
			 "{\"flavor\":\"nvidia-h100-80gb-hbm3\",\"nominal\":\"0\",\"borrowingLimit\":\"0\"}]}}");
		e2e_post("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"kerf.io/tenant\":\"kerf-e2e-c\"}}}", ns_c);
		e2e_pod(ns_c, "c-small", NULL, 0, 2, "kerf", NULL, sel);
		e2e_pod(ns_c, "c-big-0", "c-big", 2, 2, "kerf", NULL, sel);
		e2e_pod(ns_c, "c-big-1", "c-big", 2, 2, "kerf", NULL, sel);
		e2e_run_until(bound_is, &(struct want){ ns_c, "c-small", 1, 1 }, 10000);
		e2e_pod_state(ns_c, "c-small", node_name, sizeof(node_name), msg, sizeof(msg));
		/* no quota on the product label's flavor: only the pool's lets it run */
		e2e_check(!strcmp(node_name, "kerf-e2e-node-5"), "a pod of a GPUPool's flavor within its tenant's quota for it: bound");
		e2e_run_until(says, &(struct says_arg){ ns_c, "c-big-0", "over its limit" }, 5000);
		e2e_pod_state(ns_c, "c-big-0", node_name, sizeof(node_name), msg, sizeof(msg));
		e2e_check(!node_name[0] && strstr(msg, "over its limit"),
			  "4 more GPUs of the GPUPool's flavor over a nominal of 2: pending, said why");
		if (msg[0])
			printf("# c-big: %s\n", msg);
		/* the pool's status: its node, its GPUs, the 2 held */
		{
			json_t *p = NULL, *st;
			bool shown = false;

			for (int i = 0; i < 100 && !shown; i++) {
				json_decref(p);
				p = NULL;
				e2e_turn(50);
				if (e2e_api("GET", "/apis/kerf.io/v1alpha1/gpupools/kerf-e2e-pool", NULL, NULL, &p) != 200)
					continue;
				st = json_object_get(p, "status");
				shown = json_integer_value(json_object_get(st, "nodes")) == 1 &&
					json_integer_value(json_object_get(st, "gpus")) == 8 &&
					!strcmp(json_string_value(json_object_get(st, "allocated")) ?: "", "2") &&
					!strcmp(json_string_value(json_object_get(json_array_get(
						json_object_get(st, "conditions"), 0), "status")) ?: "", "True");
			}
			e2e_check(shown, "the GPUPool's status: Accepted, 1 node, 8 GPUs, 2 allocated");
			json_decref(p);
		}
	}
	e2e_controller_stop();

	/* clean up what the suite made (a real cluster keeps it otherwise) */
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-a", NULL, NULL, NULL);
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-b", NULL, NULL, NULL);
	e2e_api("DELETE", "/api/v1/namespaces/kerf-e2e-c", NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/gpupools/kerf-e2e-pool", NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/kerf-e2e-normal", NULL, NULL, NULL);
	for (int i = 1; i <= 5; i++) {
		char path[128];

		snprintf(path, sizeof(path), "/api/v1/nodes/kerf-e2e-node-%d", i);
		e2e_api("DELETE", path, NULL, NULL, NULL);
	}
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-a", NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-b", NULL, NULL, NULL);
	e2e_api("DELETE", "/apis/kerf.io/v1alpha1/tenants/kerf-e2e-c", NULL, NULL, NULL);
	e2e_teardown();
	return e2e_done();
}
