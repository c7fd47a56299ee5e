/*
 * timeout: the ?timeout= the API server appends to a webhook's URL, the
 * webhook's timeoutSeconds written as a Go duration ("10s").
 */
#ifndef KERF_ADMISSION_TIMEOUT_H
#define KERF_ADMISSION_TIMEOUT_H

#include <stdint.h>

#include "base/err.h"

/*
 * A Go duration ("10s", "1.5s", "500ms", "1m30s"; units ns, us, µs, ms,
 * s, m, h; an optional leading +) in milliseconds, rounded down.  Returns
 * 0, or -KERF_EINVAL for anything else, a duration under 1 ms and one
 * over 24 h.
 */
int kerf_webhook_timeout_parse(const char *s, int64_t *ms)
	__attribute__((warn_unused_result));

#endif /* KERF_ADMISSION_TIMEOUT_H */
