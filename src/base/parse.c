/*
 * parse: strict unsigned integers (see parse.h).  A loop over the digits
 * rather than strtoull, which skips spaces, takes a sign and wraps "-1"
 * around to UINT64_MAX.
 */
#include "base/parse.h"

#include <inttypes.h>

#include "base/buf.h"

/* The value quoted back in a message: escaped, at most this with its NUL. */
enum { PARSE_SHOWN_SIZE = 64 };

int kerf_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -KERF_EPARSE;
	for (const char *p = s; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return -KERF_EPARSE;
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -KERF_ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int kerf_parse_u64_opt(const char *opt, const char *s, uint64_t min,
		       uint64_t max, uint64_t *out, struct kerf_err *err)
{
	char shown[PARSE_SHOWN_SIZE];
	uint64_t v;
	int rc = kerf_parse_u64(s, &v);

	if (rc == 0 && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	kerf_escape(shown, sizeof(shown), s);
	if (rc == -KERF_EPARSE)
		return kerf_err_set(err, rc, "%s '%s': not a decimal integer (expected %" PRIu64 "..%" PRIu64 ")",
				    opt, shown, min, max);
	return kerf_err_set(err, -KERF_ERANGE, "%s '%s': out of range (expected %" PRIu64 "..%" PRIu64 ")",
			    opt, shown, min, max);
}
