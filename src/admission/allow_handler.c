/* allow_handler: the decode and encode path of a review, without rules. */
#include "admission/allow_handler.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "admission/review.h"
#include "base/buf.h"

/* 400 with a metav1.Status naming what is wrong with the body. */
static int bad_request(const char *msg, struct kerf_webhook_answer *ans)
{
	json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind",
			       "Status", "apiVersion", "v1", "metadata",
			       "status", "Failure", "message", msg, "reason",
			       "BadRequest", "code", 400);

	if (!st)
		return -KERF_ENOMEM;
	ans->body = json_dumps(st, JSON_COMPACT);
	json_decref(st);
	if (!ans->body)
		return -KERF_ENOMEM;
	ans->len = strlen(ans->body);
	ans->http_status = 400;
	ans->verdict = "error";
	return 0;
}

int kerf_webhook_allow_review(void *ctx, const char *path, const char *body,
			      size_t len, int64_t deadline_ms,
			      struct kerf_webhook_answer *ans)
{
	const struct kerf_webhook_allow_cfg *cfg = ctx;
	struct kerf_admission_request req;
	struct kerf_admission_response resp;
	struct kerf_err err = { 0 };
	const json_t *labels;
	char msg[320];
	int rc;

	(void)path;
	(void)deadline_ms;
	rc = kerf_admission_request_decode(body, len, &req, &err);
	if (rc == -KERF_ENOMEM)
		return rc;
	if (rc < 0)
		return bad_request(err.msg, ans);
	memset(&resp, 0, sizeof(resp));
	resp.uid = req.uid;
	resp.allowed = true;
	ans->verdict = "allowed";
	labels = req.object ?
		json_object_get(json_object_get(req.object, "metadata"),
				"labels") : NULL;
	if (cfg && cfg->deny_label && json_object_get(labels, cfg->deny_label)) {
		snprintf(msg, sizeof(msg),
			 "metadata.labels[%.200s]: denied by the test handler",
			 cfg->deny_label);
		resp.allowed = false;
		resp.status_code = 403;
		resp.status_reason = "Forbidden";
		resp.status_message = msg;
		ans->verdict = "denied";
		ans->rule = KERF_WEBHOOK_ALLOW_RULE;
	}
	rc = kerf_admission_response_encode(&resp, &ans->body, &ans->len, &err);
	kerf_admission_request_release(&req);
	if (rc < 0)
		return rc;
	ans->http_status = 200;
	return 0;
}
