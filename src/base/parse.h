/*
 * parse: strict numbers from text, for command-line options and the like:
 * unsigned integers, fixed-point decimals (seconds with a fraction, say),
 * lists of integers and seed ranges.
 *
 * Integers: one or more decimal digits and nothing else.  Refused: an empty
 * string, a sign ('+' or '-'), leading or trailing spaces, "0x" and any
 * other trailing character, and a value that does not fit in 64 bits.
 * Leading zeros are fine ("007" is 7).
 *
 * Decimals: digits, then optionally a point and one or more digits, and
 * nothing else; never through floating point.  So "", "nan", "inf",
 * "1e400", "-1", "+1", ".5", "5.", " 5" and "5s" are refused.
 *
 * The _opt forms name the option and the value (escaped and shortened as
 * kerf_escape in base/buf.h does) and what was expected in their message.
 */
#ifndef KERF_BASE_PARSE_H
#define KERF_BASE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
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

/* The most decimals kerf_parse_fixed takes (10^18 fits in 64 bits). */
enum { KERF_PARSE_MAX_DECIMALS = 18 };

/*
 * s as a decimal number in units of 10^-decimals into *out: with 3
 * decimals (seconds into milliseconds) "2.5" is 2500, "7" is 7000 and
 * "0.250" is 250.  Returns 0; -KERF_EPARSE when s is not a decimal as
 * above (or decimals > KERF_PARSE_MAX_DECIMALS); -KERF_EINVAL when a digit
 * other than 0 comes after the decimals-th one past the point ("0.0005"
 * with 3: finer than the unit, never rounded away); -KERF_ERANGE when the
 * value exceeds UINT64_MAX units.  *out is untouched on error.
 */
int kerf_parse_fixed(const char *s, unsigned decimals, uint64_t *out);

/*
 * The value s of option opt as above, from min to max units, into *out.
 * Messages: "--arrival-s 'nan': not a decimal number (expected 0..3600, at
 * most 3 decimals)", "--arrival-s '0.0005': more than 3 decimals (expected
 * 0..3600)", "--arrival-s '4000': out of range (expected 0..3600)", with
 * min and max written as decimals.
 */
int kerf_parse_fixed_opt(const char *opt, const char *s, unsigned decimals,
			 uint64_t min, uint64_t max, uint64_t *out,
			 struct kerf_err *err);

/*
 * A comma-separated list of integers from min to max ("4,16,64") into
 * out[], at most max_items of them; *nr is their count.  Each item is read
 * as kerf_parse_u64.  Refused: an empty list, an empty item ("1,,2", "1,"),
 * an item out of range, more than max_items items (-KERF_ELIMIT) and, when
 * unique, an item given twice (-KERF_EEXIST, "--seeds '42,42': 42 is given
 * twice").  On error out[] may have changed, *nr has not.
 */
int kerf_parse_u64_list_opt(const char *opt, const char *s, uint64_t min,
			    uint64_t max, bool unique, uint64_t *out,
			    size_t max_items, size_t *nr, struct kerf_err *err);

/*
 * Seeds: a range "A-B" (A <= B, the B - A + 1 seeds from A to B, at most
 * max_items of them; B may be UINT64_MAX) or a list "A,B,..." of distinct
 * seeds as kerf_parse_u64_list_opt reads it, into out[] (max_items
 * entries); *nr is their count.
 */
int kerf_parse_seeds_opt(const char *opt, const char *s, uint64_t *out,
			 size_t max_items, size_t *nr, struct kerf_err *err);

#endif /* KERF_BASE_PARSE_H */
