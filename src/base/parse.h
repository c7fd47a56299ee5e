/*
 * parse: strict unsigned integers from text, for command-line options and
 * the like.
 *
 * Accepted: one or more decimal digits and nothing else.  Refused: an empty
 * string, a sign ('+' or '-'), leading or trailing spaces, "0x" and any
 * other trailing character, and a value that does not fit in 64 bits.
 * Leading zeros are fine ("007" is 7).
 */
#ifndef KERF_BASE_PARSE_H
#define KERF_BASE_PARSE_H

#include <stdint.h>

#include "base/err.h"

/*
 * s as a decimal integer into *out.  Returns 0, -KERF_EPARSE when s is not
 * digits only, or -KERF_ERANGE when it exceeds UINT64_MAX; *out is
 * untouched on error.  No message: for callers that say themselves what
 * they expected (an item of a list, say).
 */
int kerf_parse_u64(const char *s, uint64_t *out);

/*
 * The value s of option opt (for messages, e.g. "--runs") as a decimal
 * integer from min to max into *out.  On error *out is untouched and err
 * says "--runs '12x': not a decimal integer (expected 1..100000000)" or
 * "... out of range (expected 1..100000000)", the value escaped and
 * shortened as kerf_escape (base/buf.h) does.
 */
int kerf_parse_u64_opt(const char *opt, const char *s, uint64_t min,
		       uint64_t max, uint64_t *out, struct kerf_err *err);

#endif /* KERF_BASE_PARSE_H */
