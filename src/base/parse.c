/*
 * parse: strict unsigned integers, fixed-point decimals, lists and seed
 * ranges (see parse.h).  Loops over the digits rather than strtoull or
 * strtod, which skip spaces, take a sign, wrap "-1" around to UINT64_MAX,
 * read "nan", "inf" and "1e400" and round through binary floating point.
 */
#include "base/parse.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"

/* The value quoted back in a message: escaped, at most this with its NUL. */
enum {
	PARSE_SHOWN_SIZE = 64,
	PARSE_ITEM_SIZE = 32,      /* one item of a list, with its NUL */
};

int kerf_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -KERF_EPARSE;
	/* the syntax first: "99999999999999999999x" is not a number at all */
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -KERF_EPARSE;
	for (const char *p = s; *p; p++) {
		unsigned d;

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

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* v in units of 10^-decimals, written as a decimal: 1500, 3 -> "1.5". */
static void fmt_fixed(char *out, size_t size, uint64_t v, unsigned decimals)
{
	uint64_t unit = 1;
	char frac[24];
	size_t n;

	for (unsigned i = 0; i < decimals; i++)
		unit *= 10;
	if (v % unit == 0) {
		snprintf(out, size, "%" PRIu64, v / unit);
		return;
	}
	snprintf(frac, sizeof(frac), "%0*" PRIu64, (int)decimals, v % unit);
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(out, size, "%" PRIu64 ".%s", v / unit, frac);
}

/* Append digit d to v; -KERF_ERANGE past UINT64_MAX. */
static int add_digit(uint64_t *v, unsigned d)
{
	if (*v > (UINT64_MAX - d) / 10)
		return -KERF_ERANGE;
	*v = *v * 10 + d;
	return 0;
}

int kerf_parse_fixed(const char *s, unsigned decimals, uint64_t *out)
{
	const char *p = s, *frac = NULL;
	uint64_t v = 0;
	unsigned taken = 0;
	bool finer = false;

	if (!s || decimals > KERF_PARSE_MAX_DECIMALS || !is_digit(*p))
		return -KERF_EPARSE;
	while (is_digit(*p))
		p++;
	if (*p == '.') {
		frac = ++p;
		if (!is_digit(*p))
			return -KERF_EPARSE;
		while (is_digit(*p))
			p++;
	}
	if (*p != '\0')
		return -KERF_EPARSE;
	/* the syntax is right; now the value, in units of 10^-decimals */
	for (p = s; is_digit(*p); p++)
		if (add_digit(&v, (unsigned)(*p - '0')) < 0)
			return -KERF_ERANGE;
	for (p = frac; p && *p; p++) {
		if (taken == decimals) {
			finer |= *p != '0';
			continue;
		}
		if (add_digit(&v, (unsigned)(*p - '0')) < 0)
			return -KERF_ERANGE;
		taken++;
	}
	for (; taken < decimals; taken++)
		if (add_digit(&v, 0) < 0)
			return -KERF_ERANGE;
	if (finer)
		return -KERF_EINVAL;
	*out = v;
	return 0;
}

int kerf_parse_fixed_opt(const char *opt, const char *s, unsigned decimals,
			 uint64_t min, uint64_t max, uint64_t *out,
			 struct kerf_err *err)
{
	char shown[PARSE_SHOWN_SIZE], lo[32], hi[32];
	uint64_t v;
	int rc = kerf_parse_fixed(s, decimals, &v);

	if (rc == 0 && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	kerf_escape(shown, sizeof(shown), s);
	fmt_fixed(lo, sizeof(lo), min, decimals);
	fmt_fixed(hi, sizeof(hi), max, decimals);
	if (rc == -KERF_EPARSE)
		return kerf_err_set(err, rc, "%s '%s': not a decimal number (expected %s..%s, at most %u decimals)",
				    opt, shown, lo, hi, decimals);
	if (rc == -KERF_EINVAL)
		return kerf_err_set(err, rc, "%s '%s': more than %u decimals (expected %s..%s)",
				    opt, shown, decimals, lo, hi);
	return kerf_err_set(err, -KERF_ERANGE, "%s '%s': out of range (expected %s..%s)",
			    opt, shown, lo, hi);
}

/*
 * The next item of a comma-separated list at *p into item (size bytes):
 * 1 and *p past it (and its comma), 0 at the end, -KERF_EPARSE for an
 * empty item or one longer than size - 1.
 */
static int next_item(const char **p, char *item, size_t size)
{
	const char *s = *p, *comma;
	size_t n;

	if (!s)
		return 0;
	comma = strchr(s, ',');
	n = comma ? (size_t)(comma - s) : strlen(s);
	if (n == 0 || n >= size)
		return -KERF_EPARSE;
	memcpy(item, s, n);
	item[n] = '\0';
	*p = comma ? comma + 1 : NULL;
	return 1;
}

int kerf_parse_u64_list_opt(const char *opt, const char *s, uint64_t min,
			    uint64_t max, bool unique, uint64_t *out,
			    size_t max_items, size_t *nr, struct kerf_err *err)
{
	char shown[PARSE_SHOWN_SIZE], item[PARSE_ITEM_SIZE];
	const char *p = s;
	size_t n = 0;
	int rc;

	kerf_escape(shown, sizeof(shown), s);
	if (!s || !*s)
		return kerf_err_set(err, -KERF_EPARSE, "%s '%s': empty (expected a list N,N,... of integers %" PRIu64 "..%" PRIu64 ")",
				    opt, shown, min, max);
	while ((rc = next_item(&p, item, sizeof(item))) > 0) {
		uint64_t v;

		if (n == max_items)
			return kerf_err_set(err, -KERF_ELIMIT, "%s '%s': more than %zu items",
					    opt, shown, max_items);
		rc = kerf_parse_u64(item, &v);
		if (rc == 0 && (v < min || v > max))
			rc = -KERF_ERANGE;
		if (rc < 0) {
			char bad[PARSE_SHOWN_SIZE];

			kerf_escape(bad, sizeof(bad), item);
			return kerf_err_set(err, rc, "%s '%s': item %zu '%s' is %s (expected %" PRIu64 "..%" PRIu64 ")",
					    opt, shown, n + 1, bad,
					    rc == -KERF_EPARSE ? "not a decimal integer" : "out of range",
					    min, max);
		}
		for (size_t j = 0; unique && j < n; j++)
			if (out[j] == v)
				return kerf_err_set(err, -KERF_EEXIST, "%s '%s': %" PRIu64 " is given twice",
						    opt, shown, v);
		out[n++] = v;
	}
	if (rc < 0)
		return kerf_err_set(err, -KERF_EPARSE, "%s '%s': item %zu is empty or longer than %d bytes (expected N,N,...)",
				    opt, shown, n + 1, PARSE_ITEM_SIZE - 1);
	*nr = n;
	return 0;
}

int kerf_parse_seeds_opt(const char *opt, const char *s, uint64_t *out,
			 size_t max_items, size_t *nr, struct kerf_err *err)
{
	char shown[PARSE_SHOWN_SIZE], first[PARSE_ITEM_SIZE];
	const char *dash = s ? strchr(s, '-') : NULL;
	uint64_t a, b;
	size_t n;

	if (!dash || strchr(s, ','))
		return kerf_parse_u64_list_opt(opt, s, 0, UINT64_MAX, true, out,
					       max_items, nr, err);
	kerf_escape(shown, sizeof(shown), s);
	n = (size_t)(dash - s);
	if (n >= sizeof(first) || strchr(dash + 1, '-'))
		return kerf_err_set(err, -KERF_EPARSE, "%s '%s': expected A-B or A,B,... (decimal integers)",
				    opt, shown);
	memcpy(first, s, n);
	first[n] = '\0';
	if (kerf_parse_u64(first, &a) < 0 || kerf_parse_u64(dash + 1, &b) < 0)
		return kerf_err_set(err, -KERF_EPARSE, "%s '%s': expected A-B or A,B,... (decimal integers up to %" PRIu64 ")",
				    opt, shown, UINT64_MAX);
	if (b < a)
		return kerf_err_set(err, -KERF_ERANGE, "%s '%s': the range ends before it starts",
				    opt, shown);
	if (b - a >= max_items)
		return kerf_err_set(err, -KERF_ELIMIT, "%s '%s': more than %zu seeds",
				    opt, shown, max_items);
	/* count, not compare: b may be UINT64_MAX */
	for (uint64_t i = 0; i <= b - a; i++)
		out[i] = a + i;
	*nr = (size_t)(b - a) + 1;
	return 0;
}
