/*
 * rules_handler: the rules (admission/decide.h) as the webhook server's
 * answer (admission/server.h): what kerf serve's webhook and the load
 * benchmark's server both hand the server for a review.
 */
#ifndef KERF_ADMISSION_RULES_HANDLER_H
#define KERF_ADMISSION_RULES_HANDLER_H

#include "admission/decide.h"
#include "admission/server.h"

/* body[0..len) decided on route r under p into *ans; 0 or -KERF_ENOMEM. */
int kerf_webhook_rules_answer(const struct kerf_admission_policy *p,
			      enum kerf_admission_route r, const char *body,
			      size_t len, struct kerf_webhook_answer *ans);

#endif
