/*
 * timeout: Go's time.ParseDuration, the part a webhook needs.  Integers
 * only: the value is kept in nanoseconds, bounded by 24 h, so no step can
 * overflow.
 */
#include "admission/timeout.h"

#include <stdbool.h>
#include <string.h>

#define NS_PER_MS 1000000LL
#define MAX_NS (24LL * 3600 * 1000 * NS_PER_MS)

static const struct {
	const char *name;
	int64_t ns;
} units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "\xc2\xb5s", 1000 },          /* U+00B5 micro sign */
	{ "\xce\xbcs", 1000 },          /* U+03BC Greek mu */
	{ "ms", NS_PER_MS },
	{ "s", 1000 * NS_PER_MS },
	{ "m", 60 * 1000 * NS_PER_MS },
	{ "h", 3600 * 1000 * NS_PER_MS },
};

/* The unit at *p (the longest name that matches), advancing *p. */
static int64_t unit_at(const char **p)
{
	int64_t ns = 0;
	size_t best = 0;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);

		if (n > best && !strncmp(*p, units[i].name, n)) {
			best = n;
			ns = units[i].ns;
		}
	}
	*p += best;
	return ns;
}

int kerf_webhook_timeout_parse(const char *s, int64_t *ms)
{
	const char *p = s;
	int64_t total = 0;

	if (!p || !*p)
		return -KERF_EINVAL;
	if (*p == '+')
		p++;
	if (!*p)
		return -KERF_EINVAL;
	while (*p) {
		int64_t whole = 0, frac = 0, scale = 1, unit;
		bool digits = false;

		for (; *p >= '0' && *p <= '9'; p++, digits = true) {
			whole = whole * 10 + (*p - '0');
			if (whole > MAX_NS)
				return -KERF_EINVAL;
		}
		if (*p == '.') {
			for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
				if (scale < NS_PER_MS * 1000) { /* 9 digits */
					frac = frac * 10 + (*p - '0');
					scale *= 10;
				}
			}
		}
		if (!digits)
			return -KERF_EINVAL;
		unit = unit_at(&p);
		if (!unit)
			return -KERF_EINVAL;
		if (whole > MAX_NS / unit)
			return -KERF_EINVAL;
		total += whole * unit + unit / scale * frac +
			 unit % scale * frac / scale;
		if (total > MAX_NS)
			return -KERF_EINVAL;
	}
	if (total < NS_PER_MS)
		return -KERF_EINVAL;
	*ms = total / NS_PER_MS;
	return 0;
}
