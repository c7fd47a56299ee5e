/*
 * e2e_idle: idle reclamation fed by the node agent's utilisation, end to
 * end through HTTP only (the same code against kerf's test API server or
 * a real cluster named by KERF_E2E_KUBECONFIG, as e2e_serve).  A Tenant
 * with an idle policy (below 5 % for 1ms, the shortest grace the CRD
 * allows, CheckpointEvict); a 2-GPU node whose agent wrote
 * kerf.io/gpu-utilization "0:0,1:90" (written here with a merge patch, as
 * the agent would).  Two 1-GPU pods of the tenant are bound, one to each
 * GPU, and run (this suite plays the kubelet): the pod on the idle GPU 0
 * is asked to checkpoint and leave (kerf.io/preempt-at), the one on the
 * busy GPU 1 is not.  The pods select the node by a label of their own,
 * so other nodes of a real cluster play no part.
 * Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_lib.h"

#define NS "kerf-e2e-idle"
#define NODE "kerf-e2e-idle-node"
#define SEL "\"kerf.io/e2e-idle\":\"1\""

static bool all_bound(void *arg)
{
	(void)arg;
	return e2e_count_bound(NS, "idle", 2) == 2;
}

/* Annotation key of pod name into out ("" when none or gone). */
static void pod_ann(const char *name, const char *key, char *out, size_t size)
{
	e2e_pod_annotation(NS, name, key, out, size);
}

static bool asked(void *arg)
{
	char v[64];

	pod_ann(arg, "kerf.io/preempt-at", v, sizeof(v));
	return v[0] != '\0';
}

/* Play the kubelet: the pod runs. */
static void running(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/api/v1/namespaces/" NS "/pods/%s/status", name);
	e2e_api("PATCH", path, "application/merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}",
		NULL);
}

int main(int argc, char **argv)
{
	char gpus0[64], gpus1[64], ann[64];
	const char *idle, *busy;
	int rc = e2e_setup(argc > 1 ? argv[1] : NULL, "e2e_idle");

	if (rc != 0)
		return rc < 0 ? 1 : 0;
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_check(e2e_post("/apis/kerf.io/v1alpha1/tenants",
			   "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"" NS "\"},"
			   "\"spec\":{\"weight\":1,\"idlePolicy\":{\"thresholdPercent\":5,\"grace\":\"1ms\","
			   "\"action\":\"CheckpointEvict\"}}}") == 201,
		  "a Tenant with an idle policy (below 5 % for 1ms: CheckpointEvict)");
	e2e_post("/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\","
		 "\"labels\":{\"kerf.io/tenant\":\"" NS "\"}}}");
	e2e_node(NODE, 2, SEL);
	e2e_check(e2e_api("PATCH", "/api/v1/nodes/" NODE, "application/merge-patch+json",
			  "{\"metadata\":{\"annotations\":{\"kerf.io/gpu-utilization\":\"0:0,1:90\"}}}",
			  NULL) == 200,
		  "the node's agent reports GPU 0 idle, GPU 1 busy (kerf.io/gpu-utilization)");
	e2e_check(e2e_controller_start(NULL), "kerf serve started");
	e2e_pod(NS, "idle-0", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_pod(NS, "idle-1", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_run_until(all_bound, NULL, 15000);
	e2e_check(e2e_count_bound(NS, "idle", 2) == 2, "both 1-GPU pods bound");
	pod_ann("idle-0", "kerf.io/assigned-gpus", gpus0, sizeof(gpus0));
	pod_ann("idle-1", "kerf.io/assigned-gpus", gpus1, sizeof(gpus1));
	idle = !strcmp(gpus0, "0") ? "idle-0" : "idle-1";
	busy = !strcmp(gpus0, "0") ? "idle-1" : "idle-0";
	e2e_check((!strcmp(gpus0, "0") && !strcmp(gpus1, "1")) ||
		  (!strcmp(gpus0, "1") && !strcmp(gpus1, "0")), "one pod on each GPU");
	printf("# %s on GPU 0 (idle), %s on GPU 1 (busy)\n", idle, busy);
	running("idle-0");
	running("idle-1");
	e2e_run_until(asked, (void *)idle, 15000);
	pod_ann(idle, "kerf.io/preempt-at", ann, sizeof(ann));
	e2e_check(ann[0] != '\0', "the pod on the idle GPU is asked to checkpoint and leave (kerf.io/preempt-at)");
	printf("# %s preempt-at: %s\n", idle, ann);
	/* a while longer: the busy one must not follow */
	e2e_run_until(asked, (void *)busy, 2000);
	pod_ann(busy, "kerf.io/preempt-at", ann, sizeof(ann));
	e2e_check(ann[0] == '\0', "the pod on the busy GPU is left alone");
	e2e_check(kerf_controller_world(e2e.ctl) &&
		  kerf_world_stats(kerf_controller_world(e2e.ctl))->nr_util_samples >= 2,
		  "kerf serve took samples of both");
	return e2e_finish(NS, NODE, NS);
}
