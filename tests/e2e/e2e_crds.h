/*
 * e2e_crds: the CRDs kerf serve reads (Tenant, GPUPool), with an open
 * schema, as the suites install them on the API server (a real cluster
 * may have deploy/crds/ applied already: 409 is fine), and the list each
 * serves once established.
 */
#ifndef KERF_E2E_CRDS_H
#define KERF_E2E_CRDS_H

#define E2E_CRD(plural, singular, kind)                                                        \
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","  \
	"\"metadata\":{\"name\":\"" plural ".kerf.io\"},\"spec\":{\"group\":\"kerf.io\",\"scope\":\"Cluster\"," \
	"\"names\":{\"plural\":\"" plural "\",\"singular\":\"" singular "\",\"kind\":\"" kind "\","  \
	"\"listKind\":\"" kind "List\"},"                                                        \
	"\"versions\":[{\"name\":\"v1alpha1\",\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}}," \
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}"

static const struct {
	const char *json;
	const char *list_path;
} e2e_crds[] = {
	{ E2E_CRD("tenants", "tenant", "Tenant"), "/apis/kerf.io/v1alpha1/tenants" },
	{ E2E_CRD("gpupools", "gpupool", "GPUPool"), "/apis/kerf.io/v1alpha1/gpupools" },
};

#endif
