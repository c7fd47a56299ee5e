#include "base/quantity.h"

#include <string.h>

#include "base/buf.h"

/* A parsed quantity: sign * mant * 10^exp10 * 2^exp2, mant exact. */
struct quantity {
	bool negative;
	uint64_t mant;
	int exp10;
	int exp2;
};

static int parse_suffix(const char *s, struct quantity *q)
{
	static const struct {
		const char *text;
		int exp10, exp2;
	} suffixes[] = {
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 },
		{ "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
		{ "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },
		{ "", 0, 0 },    { "k", 3, 0 },   { "M", 6, 0 },
		{ "G", 9, 0 },   { "T", 12, 0 },  { "P", 15, 0 },
		{ "E", 18, 0 },
	};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(s, suffixes[i].text)) {
			q->exp10 += suffixes[i].exp10;
			q->exp2 = suffixes[i].exp2;
			return 0;
		}
	if (s[0] == 'e' || s[0] == 'E') {
		const char *p = s + 1;
		bool neg = false;
		int e = 0;

		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		if (!*p)
			return -KERF_EPARSE;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return -KERF_EPARSE;
			if (e > 1000)
				return -KERF_ERANGE;
			e = e * 10 + (*p - '0');
		}
		q->exp10 += neg ? -e : e;
		return 0;
	}
	return -KERF_EPARSE;
}

static int parse(const char *s, struct quantity *q)
{
	bool digits = false, point = false;
	int dropped = 0;

	*q = (struct quantity){ 0 };
	if (!s)
		return -KERF_EPARSE;
	if (*s == '+' || *s == '-')
		q->negative = *s++ == '-';
	for (;; s++) {
		if (*s == '.' && !point) {
			point = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		digits = true;
		if (q->mant > (UINT64_MAX - 9) / 10) {
			/* beyond 19 digits: only zeros past the point are exact */
			if (*s != '0')
				return -KERF_ERANGE;
			if (!point)
				dropped++;
			continue;
		}
		q->mant = q->mant * 10 + (uint64_t)(*s - '0');
		if (point)
			q->exp10--;
	}
	if (!digits)
		return -KERF_EPARSE;
	q->exp10 += dropped;
	return parse_suffix(s, q);
}

/* q in units of 10^-scale, rounded up in magnitude, into *out. */
static int to_int(const struct quantity *q, int scale, int64_t *out)
{
	uint64_t v = q->mant;
	int e = q->exp10 + scale;

	if (v == 0) {
		*out = 0;
		return 0;
	}
	if (q->exp2 > 0) {
		if (v > (UINT64_MAX >> q->exp2))
			return -KERF_ERANGE;
		v <<= q->exp2;
	}
	for (; e > 0; e--) {
		if (v > UINT64_MAX / 10)
			return -KERF_ERANGE;
		v *= 10;
	}
	if (e < 0) {
		bool rest = false;

		for (; e < 0 && v; e++) {
			rest |= v % 10 != 0;
			v /= 10;
		}
		if (rest || e < 0)
			v++; /* round away from zero, as the server does */
	}
	if (v > (uint64_t)INT64_MAX)
		return -KERF_ERANGE;
	*out = q->negative ? -(int64_t)v : (int64_t)v;
	return 0;
}

int kerf_quantity_parse(const char *s, int64_t *out)
{
	struct quantity q;
	int rc = parse(s, &q);

	return rc < 0 ? rc : to_int(&q, 0, out);
}

int kerf_quantity_parse_milli(const char *s, int64_t *out)
{
	struct quantity q;
	int rc = parse(s, &q);

	return rc < 0 ? rc : to_int(&q, 3, out);
}

int kerf_quantity_parse_whole(const char *s, int64_t *out)
{
	struct quantity q;
	int64_t units;
	int rc = parse(s, &q);

	if (rc < 0)
		return rc;
	rc = to_int(&q, 0, &units);
	if (rc < 0)
		return rc;
	if (q.exp10 < 0 && q.mant) {
		/* to_int shifted without overflow, so this fits too */
		uint64_t v = q.mant << q.exp2;

		for (int e = q.exp10; e < 0; e++, v /= 10)
			if (v % 10)
				return -KERF_EINVAL;
	}
	*out = units;
	return 0;
}

int kerf_quantity_parse_field(const char *field, const char *s,
			      enum kerf_quantity_unit unit, int64_t *out,
			      struct kerf_err *err)
{
	char shown[80];
	int rc = unit == KERF_QTY_WHOLE ? kerf_quantity_parse_whole(s, out)
		 : unit == KERF_QTY_MILLI ? kerf_quantity_parse_milli(s, out)
					  : kerf_quantity_parse(s, out);

	if (rc == 0)
		return 0;
	kerf_escape(shown, sizeof(shown), s ? s : "");
	if (rc == -KERF_ERANGE)
		return kerf_err_set(err, rc, "%s '%s': out of range", field,
				    shown);
	if (rc == -KERF_EINVAL)
		return kerf_err_set(err, rc, "%s '%s': must be an integer",
				    field, shown);
	return kerf_err_set(err, rc,
			    "%s '%s': not a quantity (digits with a suffix such as 500m, 16Gi, 2e3)",
			    field, shown);
}
