/*
 * fuzz_admission_review: libFuzzer target for the AdmissionReview decoder
 * (admission/review.c), the first code a webhook runs on a body that
 * anyone who can reach its port may send.  The input is the body.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on refusal: the code recorded, a message of printable ASCII only
 *    (what it quotes of the input escaped) that starts with the field:
 *    "AdmissionReview:", "apiVersion:", "kind:" or "request";
 *  - on success: the fields the decoder promises (a uid, an operation
 *    named, an object on CREATE and UPDATE, every group a string), the
 *    same result from a second decode, and an allow response with a
 *    patch, then a denial, encoded and read back: apiVersion, kind, the
 *    uid echoed, allowed, the patch's base64 decoding to the patch;
 *  - the rule engine (admission/decide.h) on every route, under a policy
 *    of two tenants, pools and classes: a 200 AdmissionReview echoing the
 *    uid, every denial naming a field and a rule, and a mutation that
 *    applies to the object it was made for and is idempotent (the
 *    patched object mutated again gives no patch).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_admission_review"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "admission/decide.h"
#include "admission/review.h"
#include "base/base64.h"
#include "format/json_patch.h"

static void check_refusal(int rc, const struct kerf_err *err)
{
	static const char *const fields[] = { "AdmissionReview:", "apiVersion:",
					      "kind:", "request" };
	bool named = false;

	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		named |= !strncmp(err->msg, fields[i], strlen(fields[i]));
	CHECK_MSG(named, err->msg);
	CHECK(rc == -KERF_EPARSE || rc == -KERF_EINVAL || rc == -KERF_ELIMIT ||
	      rc == -KERF_ENOMEM);
}

/* The encoded response read back: the envelope, the uid, the verdict. */
static json_t *read_back(const struct kerf_admission_response *r)
{
	struct kerf_err err = { 0 };
	json_t *root, *resp;
	char *body;
	size_t len = 0;

	CHECK_MSG(kerf_admission_response_encode(r, &body, &len, &err) == 0,
		  err.msg);
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	free(body);
	CHECK(root != NULL);
	CHECK(!strcmp(json_string_value(json_object_get(root, "apiVersion")),
		      KERF_ADMISSION_API_VERSION));
	CHECK(!strcmp(json_string_value(json_object_get(root, "kind")),
		      "AdmissionReview"));
	resp = json_object_get(root, "response");
	CHECK(!strcmp(json_string_value(json_object_get(resp, "uid")), r->uid));
	CHECK(json_is_boolean(json_object_get(resp, "allowed")));
	CHECK(json_is_true(json_object_get(resp, "allowed")) == r->allowed);
	return root;
}

static void check_responses(const struct kerf_admission_request *req)
{
	const json_t *labels = json_object_get(json_object_get(req->object,
							       "metadata"),
					       "labels");
	json_t *patch = json_pack("[{s:s,s:s,s:O}]", "op", "add", "path",
				  "/metadata/labels", "value",
				  labels ? (json_t *)labels : json_null());
	struct kerf_admission_response r = { .uid = req->uid, .allowed = true,
					     .patch = patch };
	json_t *root, *resp, *back;
	const char *b64;
	char *text = NULL;
	size_t len = 0;

	CHECK(patch != NULL);
	root = read_back(&r);
	resp = json_object_get(root, "response");
	CHECK(!strcmp(json_string_value(json_object_get(resp, "patchType")),
		      "JSONPatch"));
	b64 = json_string_value(json_object_get(resp, "patch"));
	CHECK(b64 && kerf_base64_decode(b64, strlen(b64), &text, &len) == 0);
	back = json_loadb(text, len, 0, NULL);
	free(text);
	CHECK(back && json_equal(back, patch));
	json_decref(back);
	json_decref(root);
	json_decref(patch);

	/* a denial quoting what the request named */
	r = (struct kerf_admission_response){
		.uid = req->uid, .status_code = 403,
		.status_message = req->name, .status_reason = req->namespace,
	};
	root = read_back(&r);
	CHECK(json_integer_value(json_object_get(json_object_get(
		      json_object_get(root, "response"), "status"), "code")) == 403);
	json_decref(root);
}

static const char objects[] =
	"apiVersion: v1\nkind: Namespace\nmetadata: {name: webhook-test, labels: {kerf.io/tenant: team-a}}\n"
	"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ml-team-a, labels: {kerf.io/tenant: team-a}}\n"
	"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n"
	"---\napiVersion: kerf.io/v1alpha1\nkind: Tenant\nmetadata: {name: research}\n"
	"spec: {quotas: [{flavor: h100, nominal: 64}]}\n"
	"---\napiVersion: kerf.io/v1alpha1\nkind: Tenant\nmetadata: {name: team-a}\n"
	"spec: {parent: research, quotas: [{flavor: h100, nominal: 32, borrowingLimit: 16}],"
	" allowedPriorityClasses: [batch, training], priorityCeiling: {priorityClassName: training},"
	" networkClass: rdma-latency}\n"
	"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 100\n"
	"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: training}\nvalue: 1000\n"
	"---\napiVersion: kerf.io/v1alpha1\nkind: GPUPool\nmetadata: {name: h100}\n"
	"spec: {gpuModel: H100-80GB, nodeSelector: {matchLabels: {kerf.io/pool: h100}},"
	" mig: {policy: Dynamic}, sharing: [Whole, MIG, MPS, TimeSlice]}\nstatus: {gpus: 64}\n";

static struct kerf_admission_policy *policy(void)
{
	static struct kerf_admission_policy *p;
	struct kerf_admission_config cfg;
	struct kerf_err err = { 0 };

	if (p)
		return p;
	kerf_admission_config_default(&cfg);
	CHECK(kerf_admission_policy_new(&cfg, &p) == 0);
	CHECK_MSG(kerf_admission_policy_add_yaml(p, "objects", objects,
						 sizeof(objects) - 1, &err) == 0,
		  err.msg);
	kerf_admission_policy_seal(p);
	return p;
}

/* An answer of the engine: a 200 review for req, or a 400 for no review. */
static json_t *answer(enum kerf_admission_route r, const char *body, size_t len,
		      const struct kerf_admission_request *req, const char **verdict)
{
	struct kerf_admission_answer a;
	json_t *root, *resp, *st;

	CHECK(kerf_admission_answer(policy(), r, body, len, &a) == 0);
	*verdict = a.verdict;
	CHECK(a.http_status == 200);
	root = json_loadb(a.body, a.len, JSON_REJECT_DUPLICATES, NULL);
	kerf_admission_answer_release(&a);
	CHECK(root != NULL);
	resp = json_object_get(root, "response");
	CHECK(!strcmp(json_string_value(json_object_get(resp, "uid")), req->uid));
	st = json_object_get(resp, "status");
	if (!strcmp(*verdict, "denied")) {
		const char *msg = json_string_value(json_object_get(st, "message"));

		CHECK(json_is_false(json_object_get(resp, "allowed")));
		CHECK(msg && strstr(msg, " (rule ") && strstr(msg, ": "));
	} else {
		CHECK(json_is_true(json_object_get(resp, "allowed")) && !st);
		CHECK((json_object_get(resp, "patch") != NULL) ==
		      !strcmp(*verdict, "patched"));
	}
	return root;
}

/* The rule engine on every route; the mutation applies and is idempotent. */
static void check_rules(const struct kerf_admission_request *req,
			const uint8_t *data, size_t size)
{
	const char *verdict;
	json_t *root, *ops, *review, *obj;
	const char *b64;
	char *text = NULL, *body, msg[256];
	size_t len = 0;

	for (int r = 0; r < KERF_ROUTE_NR; r++) {
		if (r == KERF_ROUTE_MUTATE_PODS)
			continue;
		json_decref(answer(r, (const char *)data, size, req, &verdict));
	}
	root = answer(KERF_ROUTE_MUTATE_PODS, (const char *)data, size, req, &verdict);
	b64 = json_string_value(json_object_get(json_object_get(root, "response"), "patch"));
	if (!b64) {
		json_decref(root);
		return;
	}
	CHECK(kerf_base64_decode(b64, strlen(b64), &text, &len) == 0);
	ops = json_loadb(text, len, 0, NULL);
	free(text);
	json_decref(root);
	CHECK(ops != NULL);
	review = json_deep_copy(req->doc);
	obj = json_object_get(json_object_get(review, "request"), "object");
	CHECK_MSG(kerf_json_patch_apply(obj, ops, msg, sizeof(msg)) == 0, msg);
	json_decref(ops);
	body = json_dumps(review, JSON_COMPACT);
	json_decref(review);
	CHECK(body != NULL);
	/* the patched object may be too deep or large to decode: then skip */
	{
		struct kerf_admission_request again;
		struct kerf_err err = { 0 };

		if (kerf_admission_request_decode(body, strlen(body), &again, &err) == 0) {
			json_decref(answer(KERF_ROUTE_MUTATE_PODS, body, strlen(body),
					   &again, &verdict));
			CHECK_MSG(strcmp(verdict, "patched"), "the mutation is not idempotent");
			kerf_admission_request_release(&again);
		}
	}
	free(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_admission_request req, again;
	struct kerf_err err = { 0 };
	int rc = kerf_admission_request_decode((const char *)data, size, &req,
					       &err);

	if (rc < 0) {
		check_refusal(rc, &err);
		CHECK(req.doc == NULL);
		return 0;
	}
	CHECK(req.doc && req.uid && req.uid[0]);
	CHECK(strcmp(kerf_admission_op_name(req.op), "?") != 0);
	CHECK(req.object || (req.op != KERF_ADMISSION_CREATE &&
			     req.op != KERF_ADMISSION_UPDATE));
	CHECK(req.kind.version[0] && req.kind.kind[0] &&
	      req.resource.version[0] && req.resource.resource[0]);
	for (size_t i = 0; i < req.user.nr_groups; i++)
		CHECK(kerf_admission_user_group(&req.user, i) != NULL);
	CHECK_MSG(kerf_admission_request_decode((const char *)data, size,
						&again, &err) == 0, err.msg);
	CHECK(!strcmp(req.uid, again.uid) && req.op == again.op &&
	      req.dry_run == again.dry_run &&
	      !strcmp(req.sub_resource, again.sub_resource));
	kerf_admission_request_release(&again);
	check_responses(&req);
	check_rules(&req, data, size);
	kerf_admission_request_release(&req);
	return 0;
}
