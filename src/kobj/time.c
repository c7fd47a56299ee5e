#include "kobj/time.h"

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

/* n digits at s into *v; false unless all n are digits. */
static bool digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int kerf_time_parse_ms(const char *s, int64_t *out_ms)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30,
				     31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, frac_ms = 0, off_min = 0;
	const char *p;

	if (!s || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) ||
	    s[16] != ':' || !digits(s + 17, 2, &sec))
		return -KERF_EPARSE;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 || mi > 59 ||
	    sec > 60)
		return -KERF_EPARSE;
	p = s + 19;
	if (*p == '.') {
		int n = 0;

		for (p++; *p >= '0' && *p <= '9'; p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (n == 0 || n > 9)
			return -KERF_EPARSE;
		for (; n < 3; n++)
			frac_ms *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;

		if (!digits(p + 1, 2, &oh) || p[3] != ':' ||
		    !digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return -KERF_EPARSE;
		off_min = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return -KERF_EPARSE;
	}
	if (*p)
		return -KERF_EPARSE;
	if (sec == 60)
		sec = 59; /* a leap second reads as the second before it */
	*out_ms = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
		    sec - (int64_t)off_min * 60) *
		   1000) + frac_ms;
	return *out_ms < 0 ? (*out_ms = 0, -KERF_EPARSE) : 0;
}

static void split(int64_t ms, int *y, int *mo, int *d, int *h, int *mi,
		  int *s, int *frac)
{
	int64_t secs, days, rem;

	if (ms < 0)
		ms = 0;
	secs = ms / 1000;
	*frac = (int)(ms % 1000);
	days = secs / 86400;
	rem = secs % 86400;
	civil_from_days(days, y, mo, d);
	*h = (int)(rem / 3600);
	*mi = (int)(rem % 3600 / 60);
	*s = (int)(rem % 60);
}

void kerf_time_format(int64_t ms, char out[KERF_TIME_TEXT_MAX])
{
	int y, mo, d, h, mi, s, frac;

	split(ms, &y, &mo, &d, &h, &mi, &s, &frac);
	snprintf(out, KERF_TIME_TEXT_MAX, "%04d-%02d-%02dT%02d:%02d:%02dZ", y,
		 mo, d, h, mi, s);
}

void kerf_time_format_micro(int64_t ms, char out[KERF_TIME_TEXT_MAX])
{
	int y, mo, d, h, mi, s, frac;

	split(ms, &y, &mo, &d, &h, &mi, &s, &frac);
	snprintf(out, KERF_TIME_TEXT_MAX,
		 "%04d-%02d-%02dT%02d:%02d:%02d.%03d000Z", y, mo, d, h, mi, s,
		 frac);
}
