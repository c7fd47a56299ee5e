/*
 * e2e_gpu_down: GPUs out of service end to end, through HTTP only (the
 * same code against kerf's test API server or a real cluster named by
 * KERF_E2E_KUBECONFIG, as e2e_serve).  A 2-GPU node whose agent marked
 * GPU 0 unhealthy (annotation kerf.io/unhealthy-gpus: "0", written here
 * with a merge patch as the agent would): of two 1-GPU pods, one is bound
 * to GPU 1 and the other waits, told "GPU out of service"; the mark
 * removed, the waiting pod is bound to GPU 0.  The pods select the node by
 * a label of their own, so other nodes of a real cluster play no part.
 * Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_lib.h"

#define NS "kerf-e2e-down"
#define NODE "kerf-e2e-down-node"
#define SEL "\"kerf.io/e2e-down\":\"1\""

struct bound_arg { int n; };

static bool nr_bound(void *arg)
{
	return e2e_count_bound(NS, "down", 2) == ((struct bound_arg *)arg)->n;
}

static bool told_down(void *arg)
{
	char node[256], msg[512];

	e2e_pod_state(NS, arg, node, sizeof(node), msg, sizeof(msg));
	return strstr(msg, "GPU out of service") != NULL;
}

/* kerf.io/assigned-gpus of pod name into out ("" when none). */
static void assigned(const char *name, char *out, size_t size)
{
	e2e_pod_annotation(NS, name, "kerf.io/assigned-gpus", out, size);
}

/* The pod of down-0, down-1 bound (and its GPUs) and the other. */
static void which(char *bound, char *gpus, char *other)
{
	char node[256], msg[512];

	e2e_pod_state(NS, "down-0", node, sizeof(node), msg, sizeof(msg));
	strcpy(bound, node[0] ? "down-0" : "down-1");
	strcpy(other, node[0] ? "down-1" : "down-0");
	assigned(bound, gpus, 64);
}

static void mark(const char *value)
{
	char body[256];

	if (value)
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"annotations\":{\"kerf.io/unhealthy-gpus\":\"%s\"}}}", value);
	else
		snprintf(body, sizeof(body),
			 "{\"metadata\":{\"annotations\":{\"kerf.io/unhealthy-gpus\":null}}}");
	e2e_api("PATCH", "/api/v1/nodes/" NODE, "application/merge-patch+json", body, NULL);
}

int main(int argc, char **argv)
{
	char bound[16], other[16], gpus[64], node[256], msg[512];
	int rc = e2e_setup(argc > 1 ? argv[1] : NULL, "e2e_gpu_down");

	if (rc != 0)
		return rc < 0 ? 1 : 0;
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
		 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"" NS "\"},"
		 "\"spec\":{\"weight\":1}}");
	e2e_post("/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\","
		 "\"labels\":{\"kerf.io/tenant\":\"" NS "\"}}}");
	e2e_node(NODE, 2, SEL);
	mark("0");
	e2e_check(e2e_controller_start(NULL), "kerf serve started");
	e2e_pod(NS, "down-0", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_pod(NS, "down-1", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_run_until(nr_bound, &(struct bound_arg){ 1 }, 15000);
	/* a while longer: the second must not follow */
	e2e_run_until(nr_bound, &(struct bound_arg){ 2 }, 1500);
	e2e_check(e2e_count_bound(NS, "down", 2) == 1, "GPU 0 marked unhealthy: one of two 1-GPU pods bound");
	which(bound, gpus, other);
	e2e_check(!strcmp(gpus, "1"), "the pod bound is on GPU 1, not the one out of service");
	printf("# %s on GPUs '%s'\n", bound, gpus);
	e2e_run_until(told_down, other, 5000);
	e2e_pod_state(NS, other, node, sizeof(node), msg, sizeof(msg));
	e2e_check(!node[0] && strstr(msg, "GPU out of service"), "the other waits, told a GPU is out of service");
	if (msg[0])
		printf("# %s: %s\n", other, msg);
	/* the agent takes the mark away: GPU 0 is used again */
	mark(NULL);
	e2e_run_until(nr_bound, &(struct bound_arg){ 2 }, 15000);
	e2e_pod_state(NS, other, node, sizeof(node), msg, sizeof(msg));
	assigned(other, gpus, sizeof(gpus));
	e2e_check(!strcmp(node, NODE) && !strcmp(gpus, "0"), "the mark removed: the waiting pod is bound to GPU 0");
	printf("# %s on GPUs '%s'\n", other, gpus);
	return e2e_finish(NS, NODE, NS);
}
