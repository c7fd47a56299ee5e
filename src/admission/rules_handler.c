#include "admission/rules_handler.h"

int kerf_webhook_rules_answer(const struct kerf_admission_policy *p,
			      enum kerf_admission_route r, const char *body,
			      size_t len, struct kerf_webhook_answer *ans)
{
	struct kerf_admission_answer a;
	int rc = kerf_admission_answer(p, r, body, len, &a);

	if (rc < 0)
		return rc;
	ans->body = a.body;             /* the server frees it */
	ans->len = a.len;
	ans->http_status = a.http_status;
	ans->verdict = a.verdict;
	ans->rule = a.rule;
	return 0;
}
