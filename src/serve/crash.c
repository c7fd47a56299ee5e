/*
 * crash: see crash.h.  The only file of kerf serve that ends the process
 * from inside it, on purpose, and only when the environment asked.
 */
#include "serve/crash.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"

static const char *const names[] = {
	[KERF_CRASH_AFTER_FIRST_BIND] = "after-first-bind",
	[KERF_CRASH_MID_PREEMPTION] = "mid-preemption",
	[KERF_CRASH_DURING_RELIST] = "during-relist",
};

int kerf_crash_parse(const char *text, struct kerf_crash *out,
		     struct kerf_err *err)
{
	const char *colon;
	size_t len;
	uint64_t n = 1;
	char shown[80];

	memset(out, 0, sizeof(*out));
	if (!text || !*text)
		return 0;
	colon = strchr(text, ':');
	len = colon ? (size_t)(colon - text) : strlen(text);
	if (colon && (kerf_parse_u64(colon + 1, &n) < 0 || n < 1 || n > 1000000))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s '%s': the count after ':' must be 1 to 1000000",
				    KERF_CRASH_ENV, kerf_escape(shown, sizeof(shown), text));
	for (size_t p = 1; p < sizeof(names) / sizeof(names[0]); p++) {
		if (strlen(names[p]) == len && !strncmp(names[p], text, len)) {
			out->point = (uint8_t)p;
			out->left = (uint32_t)n;
			return 0;
		}
	}
	return kerf_err_set(err, -KERF_EINVAL,
			    "%s '%s': expected after-first-bind, mid-preemption or during-relist, optionally ':N'",
			    KERF_CRASH_ENV, kerf_escape(shown, sizeof(shown), text));
}

void kerf_crash_reached(struct kerf_crash *c)
{
	if (c->left > 1) {
		c->left--;
		return;
	}
	fprintf(stderr, "kerf serve: %s=%s: killed here\n", KERF_CRASH_ENV,
		names[c->point]);
	raise(SIGKILL);
}
