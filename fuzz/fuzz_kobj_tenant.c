/*
 * fuzz_kobj_tenant: libFuzzer target for the Tenant codec (kobj/tenant.c),
 * what kerf serve reads from the API server and must treat as untrusted
 * (a CRD without its CEL rules, objects older than a rule, writers with
 * RBAC).  The input is the object's JSON text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on refusal: -KERF_EINVAL, a message of printable ASCII only that
 *    starts with the path of a field ("spec.", "metadata", "Tenant");
 *  - on success: decoding again gives the same struct; the spec resolves
 *    against a small cluster or is refused with a reason; every quota's
 *    lending limit is within its nominal;
 *  - the status: when it decodes, encoding it and decoding that gives the
 *    same struct (nothing lost, nothing invented).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_kobj_tenant"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kobj/tenant.h"

static void check_message(int rc, const struct kerf_err *err)
{
	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	CHECK(err->msg[0] != '\0');
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
}

static int dims(void *ctx, const char *flavor)
{
	(void)ctx;
	return !strcmp(flavor, "h100") ? KERF_RES_GPU0 :
	       !strcmp(flavor, "l4") ? KERF_RES_GPU0 + 1 : -1;
}

static void check_spec(const struct kerf_kobj_tenant *t)
{
	struct kerf_classes cl;
	struct kerf_priority_class pcs[] = {
		{ .name = "production", .value = 1000 },
		{ .name = "batch", .value = 100, .preemptible = true },
	};
	struct kerf_kobj_resolver r = {
		.flavor_dim = dims, .classes = &cl, .nr_res = KERF_RES_GPU0 + 2,
	};
	struct kerf_tenant_spec spec;
	struct kerf_err err = { 0 };
	size_t unresolved;
	int rc;

	kerf_classes_init(&cl);
	for (size_t i = 0; i < 2; i++)
		CHECK(kerf_classes_add(&cl, &pcs[i], NULL) >= 0);
	rc = kerf_kobj_tenant_spec(t, 0, &r, &spec, &unresolved, &err);
	if (rc < 0) {
		check_message(rc, &err);
		CHECK(rc == -KERF_EINVAL || rc == -KERF_ENOTFOUND);
		return;
	}
	CHECK(spec.weight >= 1 && spec.weight <= 1000000);
	CHECK(unresolved <= t->nr_quotas + t->nr_flavor_weights);
	CHECK(spec.allowed_classes < 4u);
	for (int i = 0; i < KERF_MAX_RES; i++)
		CHECK(spec.quota.lend_limit.v[i] == KERF_QTY_INF ||
		      spec.quota.lend_limit.v[i] <= spec.quota.nominal.v[i]);
}

static void check_status(const json_t *status)
{
	struct kerf_kobj_tenant_status *a = malloc(sizeof(*a));
	struct kerf_kobj_tenant_status *b = malloc(sizeof(*b));
	struct kerf_err err = { 0 };
	json_t *o;
	int rc;

	CHECK(a && b);
	rc = kerf_kobj_tenant_status_decode(status, a, &err);
	if (rc < 0) {
		check_message(rc, &err);
		CHECK_MSG(strncmp(err.msg, "status", 6) == 0, err.msg);
		goto out;
	}
	o = kerf_kobj_tenant_status_encode(a);
	CHECK(o != NULL);
	CHECK_MSG(kerf_kobj_tenant_status_decode(o, b, &err) == 0, err.msg);
	json_decref(o);
	CHECK(memcmp(a, b, sizeof(*a)) == 0);
out:
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_kobj_tenant *t = malloc(sizeof(*t)), *u = malloc(sizeof(*u));
	struct kerf_err err = { 0 };
	json_t *root = json_loadb((const char *)data, size,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
					  JSON_ALLOW_NUL, NULL);
	int rc;

	CHECK(t && u);
	if (!root)
		goto out;
	rc = kerf_kobj_tenant_decode(root, t, &err);
	if (rc < 0) {
		check_message(rc, &err);
		CHECK(rc == -KERF_EINVAL);
		CHECK_MSG(!strncmp(err.msg, "spec", 4) || !strncmp(err.msg, "metadata", 8) ||
			  !strncmp(err.msg, "Tenant", 6), err.msg);
	} else {
		CHECK(kerf_kobj_tenant_decode(root, u, NULL) == 0);
		CHECK(memcmp(t, u, sizeof(*t)) == 0);
		for (size_t i = 0; i < t->nr_quotas; i++)
			CHECK(t->quotas[i].lend_limit == KERF_QTY_INF ||
			      t->quotas[i].lend_limit <= t->quotas[i].nominal);
		check_spec(t);
	}
	if (json_is_object(root))
		check_status(json_object_get(root, "status"));
	json_decref(root);
out:
	free(t);
	free(u);
	return 0;
}
