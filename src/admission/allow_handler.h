/*
 * allow_handler: a review handler (admission/server.h) with no policy,
 * for the server's tests and its load benchmark until the rule engine is
 * plugged in: it decodes the AdmissionReview as the real path does,
 * allows it, or denies an object carrying a given label, and encodes the
 * answer.  Thread-safe (the config is read only).
 */
#ifndef KERF_ADMISSION_ALLOW_HANDLER_H
#define KERF_ADMISSION_ALLOW_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#include "admission/server.h"

struct kerf_webhook_allow_cfg {
	const char *deny_label;      /* a label key; NULL: allow everything */
};

#define KERF_WEBHOOK_ALLOW_RULE "deny-label"

/*
 * kerf_webhook_fn with ctx a struct kerf_webhook_allow_cfg: 200 with the
 * response ("allowed", or "denied" by rule KERF_WEBHOOK_ALLOW_RULE with
 * 403 Forbidden naming the label), or 400 with a metav1.Status for a
 * body that is not an AdmissionReview (verdict "error").
 */
int kerf_webhook_allow_review(void *ctx, const char *path, const char *body,
			      size_t len, int64_t deadline_ms,
			      struct kerf_webhook_answer *ans);

#endif /* KERF_ADMISSION_ALLOW_HANDLER_H */
