/*
 * e2e_whatif: kerf serve's state re-run by kerf what-if, end to end (the
 * same code against kerf's test API server or a real cluster named by
 * KERF_E2E_KUBECONFIG, as e2e_serve).  A tenant with 1 GPU of quota and
 * no borrowing has two 1-GPU pods on a 2-GPU node: one is bound, the
 * other waits for quota.  Then kerf serve's GET /api/v1/state, loaded as
 * kerf what-if loads it, must re-run to kerf serve's own decisions (as
 * it is, nothing new starts and the waiting pod still waits for quota),
 * and with the tenant's quota raised to 2 GPUs the waiting pod starts, on
 * that node.  Ends with "N passed, N failed"; exit 1 on any failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_lib.h"
#include "serve/api.h"
#include "sim/whatif.h"

#define NS "kerf-e2e-whatif"
#define NODE "kerf-e2e-whatif-node"
#define SEL "\"kerf.io/e2e-whatif\":\"1\""
#define FLAVOR "nvidia-h100-80gb-hbm3"

static bool one_bound_one_told(void *unused)
{
	char node[256], msg[512], other[16];

	(void)unused;
	if (e2e_count_bound(NS, "wi", 2) != 1)
		return false;
	e2e_pod_state(NS, "wi-0", node, sizeof(node), msg, sizeof(msg));
	strcpy(other, node[0] ? "wi-1" : "wi-0");
	e2e_pod_state(NS, other, node, sizeof(node), msg, sizeof(msg));
	return msg[0] != '\0';
}

/* kerf serve's state document, through its API's own answer. */
static json_t *state_doc(void)
{
	char *body = NULL;
	int code = kerf_api_answer(kerf_controller_world(e2e.ctl), "GET", "/api/v1/state",
				   e2e_wall_ms(), &body);
	json_t *doc = code == 200 && body ? json_loads(body, 0, NULL) : NULL;

	free(body);
	return doc;
}

/* The result's entry for the workload whose key ends in "/name". */
static const struct kerf_whatif_wl *find(const struct kerf_whatif_result *r, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < r->nr_wl; i++) {
		size_t k = strlen(r->wl[i].key);

		if (k > n && r->wl[i].key[k - n - 1] == '/' && !strcmp(r->wl[i].key + k - n, name))
			return &r->wl[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct kerf_whatif_result r;
	struct kerf_whatif_change c;
	struct kerf_err err = { 0 };
	char node[256], msg[512], waiting[16];
	const struct kerf_whatif_wl *w;
	bool nothing_new = true;
	json_t *doc;
	int rc = e2e_setup(argc > 1 ? argv[1] : NULL, "e2e_whatif");

	if (rc != 0)
		return rc < 0 ? 1 : 0;
	e2e_check(e2e_crd(), "kerf's CRDs installed (Tenant, GPUPool)");
	e2e_post("/apis/kerf.io/v1alpha1/tenants",
		 "{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"" NS "\"},"
		 "\"spec\":{\"weight\":1,\"quotas\":[{\"flavor\":\"" FLAVOR "\",\"nominal\":\"1\","
		 "\"borrowingLimit\":\"0\"}]}}");
	e2e_post("/api/v1/namespaces",
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" NS "\","
		 "\"labels\":{\"kerf.io/tenant\":\"" NS "\"}}}");
	e2e_node(NODE, 2, SEL);
	e2e_check(e2e_controller_start(NULL), "kerf serve started");
	e2e_pod(NS, "wi-0", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_pod(NS, "wi-1", NULL, 0, 1, "kerf", NULL, SEL);
	e2e_run_until(one_bound_one_told, NULL, 15000);
	e2e_check(e2e_count_bound(NS, "wi", 2) == 1, "quota 1 GPU: one of two 1-GPU pods bound");
	e2e_pod_state(NS, "wi-0", node, sizeof(node), msg, sizeof(msg));
	strcpy(waiting, node[0] ? "wi-1" : "wi-0");
	e2e_pod_state(NS, waiting, node, sizeof(node), msg, sizeof(msg));
	printf("# %s waits: %s\n", waiting, msg);

	doc = state_doc();
	e2e_check(doc != NULL, "GET /api/v1/state answers a JSON document");
	/* as it is: kerf serve's decisions again, nothing new */
	rc = doc ? kerf_whatif_run(doc, NULL, 0, 0, 0, &r, &err) : -1;
	e2e_check(rc == 0, "the state document loads and re-runs");
	if (rc < 0)
		printf("# %s\n", err.msg);
	if (rc == 0) {
		for (size_t i = 0; i < r.nr_wl; i++)
			if (r.wl[i].before.state != r.wl[i].as_is.state) {
				nothing_new = false;
				printf("# %s changes state as it is\n", r.wl[i].key);
			}
		e2e_check(nothing_new, "as it is, the re-run starts and stops nothing (kerf serve did all it could)");
		w = find(&r, waiting);
		e2e_check(w && w->as_is.state == KERF_WL_PENDING && w->as_is.code == KERF_PENDING_QUOTA,
			  "as it is, the waiting pod still waits for quota");
		kerf_whatif_result_release(&r);
	}
	/* the tenant's quota raised to 2 GPUs: the waiting pod starts there */
	kerf_err_clear(&err);
	rc = kerf_whatif_change_parse("--set-quota", NS ":" FLAVOR "=2", &c, &err);
	if (rc == 0 && doc)
		rc = kerf_whatif_run(doc, &c, 1, 0, 0, &r, &err);
	e2e_check(rc == 0, "what-if --set-quota " NS ":" FLAVOR "=2 runs");
	if (rc < 0)
		printf("# %s\n", err.msg);
	if (rc == 0 && doc) {
		w = find(&r, waiting);
		e2e_check(w && !strcmp(kerf_whatif_effect(w), "Starts"),
			  "with 2 GPUs of quota the waiting pod starts");
		e2e_check(w && w->what_if.nodes && !strcmp(w->what_if.nodes, NODE),
			  "... on the node with the free GPU");
		kerf_whatif_result_release(&r);
	}
	/* an unknown tenant is refused, naming the option */
	kerf_err_clear(&err);
	rc = kerf_whatif_change_parse("--set-weight", "kerf-e2e-nobody=2", &c, &err);
	if (rc == 0 && doc)
		rc = kerf_whatif_run(doc, &c, 1, 0, 0, &r, &err);
	e2e_check(rc == -KERF_EINVAL && strstr(err.msg, "--set-weight: unknown tenant"),
		  "an unknown tenant is refused");
	json_decref(doc);
	return e2e_finish(NS, NODE, NS);
}
