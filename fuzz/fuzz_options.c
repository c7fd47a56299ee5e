/*
 * fuzz_options: libFuzzer target for the strict parsers of command-line
 * options (base/parse.h): kerf_parse_u64 and its option form,
 * kerf_parse_fixed (decimals of seconds, multiples, GPU-hours) and its
 * option form, the integer lists and the seeds of `kerf sim openb`.
 *
 * Input: byte 0 chooses the parser (bits 0..2) and whether a list must be
 * unique (bit 3); byte 1 the number of decimals (0..18) and the bounds; the
 * rest, up to its first NUL, is the option's value.
 *
 * Beyond "no crash, no sanitizer report", each input checks properties and
 * abort()s when one fails:
 *  - the parsers agree with a reference written here (digits only, no
 *    overflow; a decimal is digits, then optionally a point and digits);
 *  - on success the value is within the bounds asked, and writing it back
 *    (integers in decimal, fixed values with their decimals, lists joined
 *    with ',', seed ranges as lists) and parsing that gives the same value
 *    (round trip); lists hold 1..max items, unique when asked; seeds are
 *    unique and a range is consecutive;
 *  - on error the code is negative and recorded, *out and *nr are
 *    untouched, and the message starts with the option's name and is
 *    printable ASCII only (the value is quoted escaped).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_options"
#include "check.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

enum {
	VALUE_MAX = 4096,              /* bytes of the value looked at */
	LIST_MAX = 64,                 /* items of a list or seeds */
	UNTOUCHED = 0x5a,
};

static const char opt_name[] = "--fuzz";

static void check_message(int rc, const struct kerf_err *err)
{
	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	CHECK_MSG(strncmp(err->msg, opt_name, strlen(opt_name)) == 0, err->msg);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
}

/* The reference: -1 not digits, -2 overflow, else 0 and *v. */
static int ref_u64(const char *s, size_t len, uint64_t *v)
{
	unsigned __int128 x = 0;
	bool big = false;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (unsigned)(s[i] - '0');
		if (x > UINT64_MAX) {
			big = true;
			x = UINT64_MAX + (unsigned __int128)1;   /* stays big */
		}
	}
	if (big)
		return -2;
	*v = (uint64_t)x;
	return 0;
}

static void fuzz_u64(const char *s, uint64_t lo, uint64_t hi)
{
	struct kerf_err err = { 0 };
	uint64_t v = 12345, ref = 0, w = 0;
	int want = ref_u64(s, strlen(s), &ref);
	int rc = kerf_parse_u64(s, &v);
	char text[32];

	CHECK(want == 0 ? rc == 0 && v == ref
			: rc == (want == -1 ? -KERF_EPARSE : -KERF_ERANGE));
	if (rc < 0)
		CHECK(v == 12345);
	else {
		snprintf(text, sizeof(text), "%" PRIu64, v);
		CHECK(kerf_parse_u64(text, &w) == 0 && w == v);
	}
	v = 777;
	rc = kerf_parse_u64_opt(opt_name, s, lo, hi, &v, &err);
	if (want == 0 && ref >= lo && ref <= hi) {
		CHECK(rc == 0 && v == ref && err.code == 0);
		return;
	}
	check_message(rc, &err);
	CHECK(v == 777);
}

/* The reference syntax of a decimal: digits[.digits]. */
static bool ref_decimal(const char *s)
{
	const char *p = s;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/* v in units of 10^-decimals as a decimal with exactly that many. */
static void write_fixed(char *out, size_t size, uint64_t v, unsigned decimals)
{
	uint64_t unit = 1;

	for (unsigned i = 0; i < decimals; i++)
		unit *= 10;
	if (decimals == 0)
		snprintf(out, size, "%" PRIu64, v);
	else
		snprintf(out, size, "%" PRIu64 ".%0*" PRIu64, v / unit,
			 (int)decimals, v % unit);
}

static void fuzz_fixed(const char *s, unsigned decimals, uint64_t lo,
		       uint64_t hi)
{
	struct kerf_err err = { 0 };
	uint64_t v = 12345, w = 0;
	int rc = kerf_parse_fixed(s, decimals, &v);
	char text[64];

	if (!ref_decimal(s) || decimals > KERF_PARSE_MAX_DECIMALS)
		CHECK(rc == -KERF_EPARSE);
	else
		CHECK(rc == 0 || rc == -KERF_EINVAL || rc == -KERF_ERANGE);
	if (rc < 0) {
		CHECK(v == 12345);
	} else {
		write_fixed(text, sizeof(text), v, decimals);
		CHECK_MSG(kerf_parse_fixed(text, decimals, &w) == 0 && w == v,
			  text);
		/* more decimals are the same value, ten times finer */
		if (decimals < KERF_PARSE_MAX_DECIMALS && v <= UINT64_MAX / 10)
			CHECK(kerf_parse_fixed(s, decimals + 1, &w) == 0 &&
			      w == v * 10);
	}
	/* an integer is a decimal with no fraction */
	if (decimals == 0 && rc == 0)
		CHECK(strchr(s, '.') || (kerf_parse_u64(s, &w) == 0 && w == v));
	v = 777;
	rc = kerf_parse_fixed_opt(opt_name, s, decimals, lo, hi, &v, &err);
	if (rc == 0) {
		CHECK(v >= lo && v <= hi && err.code == 0);
		CHECK(kerf_parse_fixed(s, decimals, &w) == 0 && w == v);
		return;
	}
	check_message(rc, &err);
	CHECK(v == 777);
}

static void check_list(const char *s, const uint64_t *v, size_t nr,
		       uint64_t lo, uint64_t hi, bool unique)
{
	char text[LIST_MAX * 24];
	uint64_t again[LIST_MAX];
	size_t used = 0, nr2 = 0;
	struct kerf_err err = { 0 };

	CHECK(nr >= 1 && nr <= LIST_MAX);
	for (size_t i = 0; i < nr; i++) {
		CHECK(v[i] >= lo && v[i] <= hi);
		for (size_t j = 0; unique && j < i; j++)
			CHECK(v[i] != v[j]);
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "%s%" PRIu64, i ? "," : "", v[i]);
	}
	CHECK_MSG(kerf_parse_u64_list_opt(opt_name, text, lo, hi, unique, again,
					  LIST_MAX, &nr2, &err) == 0, s);
	CHECK(nr2 == nr && memcmp(again, v, nr * sizeof(*v)) == 0);
}

static void fuzz_list(const char *s, uint64_t lo, uint64_t hi, bool unique)
{
	struct kerf_err err = { 0 };
	uint64_t v[LIST_MAX];
	size_t nr = 99;
	int rc = kerf_parse_u64_list_opt(opt_name, s, lo, hi, unique, v,
					 LIST_MAX, &nr, &err);

	if (rc < 0) {
		check_message(rc, &err);
		CHECK(nr == 99);
		/* an empty item is always refused */
		return;
	}
	CHECK(*s && s[0] != ',' && s[strlen(s) - 1] != ',' && !strstr(s, ",,"));
	check_list(s, v, nr, lo, hi, unique);
}

static void fuzz_seeds(const char *s)
{
	struct kerf_err err = { 0 };
	uint64_t v[LIST_MAX];
	size_t nr = 99;
	int rc = kerf_parse_seeds_opt(opt_name, s, v, LIST_MAX, &nr, &err);

	if (rc < 0) {
		check_message(rc, &err);
		CHECK(nr == 99);
		return;
	}
	check_list(s, v, nr, 0, UINT64_MAX, true);
	if (strchr(s, '-')) {
		/* a range: consecutive, and its ends are the ones written */
		for (size_t i = 1; i < nr; i++)
			CHECK(v[i] == v[i - 1] + 1);
		CHECK(!strchr(s, ','));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t bounds[][2] = {
		{ 0, UINT64_MAX }, { 1, 64 }, { 0, 3600000 }, { 1, 1000 },
		{ 100, 1000 }, { 42, 42 }, { 0, 0 }, { 1000000, UINT64_MAX },
	};
	char *s;
	size_t len;
	unsigned sel, dec;
	uint64_t lo, hi;

	if (size < 2)
		return 0;
	sel = data[0];
	dec = data[1] % 20;          /* 19: one more than allowed */
	lo = bounds[(data[1] >> 5) & 7][0];
	hi = bounds[(data[1] >> 5) & 7][1];
	len = size - 2 < VALUE_MAX ? size - 2 : VALUE_MAX;
	s = malloc(len + 1);
	CHECK(s != NULL);
	memcpy(s, data + 2, len);
	s[len] = '\0';
	switch (sel & 7) {
	case 0:
	case 1:
		fuzz_u64(s, lo, hi);
		break;
	case 2:
	case 3:
		fuzz_fixed(s, dec, lo, hi);
		break;
	case 4:
	case 5:
		fuzz_list(s, lo, hi, (sel & 8) != 0);
		break;
	default:
		fuzz_seeds(s);
		break;
	}
	free(s);
	return 0;
}
