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
 *    uid echoed, allowed, the patch's base64 decoding to the patch.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_admission_review"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "admission/review.h"
#include "base/base64.h"

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
	kerf_admission_request_release(&req);
	return 0;
}
