/* units: one text form per quantity (see units.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/units.h"

void kerf_units_duration(int64_t ms, char *buf, size_t size)
{
	int64_t s, m, h, d;

	if (ms < 0) {
		snprintf(buf, size, "-");
		return;
	}
	s = (ms + 500) / 1000;
	m = s / 60;
	h = s / 3600;
	d = h / 24;
	/* k8s.io/apimachinery/pkg/util/duration.HumanDuration */
	if (s < 120)
		snprintf(buf, size, "%" PRId64 "s", s);
	else if (m < 10 && s % 60)
		snprintf(buf, size, "%" PRId64 "m%" PRId64 "s", m, s % 60);
	else if (m < 180)
		snprintf(buf, size, "%" PRId64 "m", m);
	else if (h < 8 && m % 60)
		snprintf(buf, size, "%" PRId64 "h%" PRId64 "m", h, m % 60);
	else if (h < 48)
		snprintf(buf, size, "%" PRId64 "h", h);
	else if (h < 24 * 8 && h % 24)
		snprintf(buf, size, "%" PRId64 "d%" PRId64 "h", d, h % 24);
	else if (h < 24 * 365 * 2)
		snprintf(buf, size, "%" PRId64 "d", d);
	else if (h < 24 * 365 * 8 && d % 365)
		snprintf(buf, size, "%" PRId64 "y%" PRId64 "d", d / 365, d % 365);
	else
		snprintf(buf, size, "%" PRId64 "y", d / 365);
}

void kerf_units_elapsed(double seconds, char *buf, size_t size)
{
	if (!(seconds >= 0))
		snprintf(buf, size, "-");
	else if (seconds < 10)
		snprintf(buf, size, "%.2fs", seconds);
	else if (seconds < 120)
		snprintf(buf, size, "%.1fs", seconds);
	else
		kerf_units_duration((int64_t)(seconds * 1000), buf, size);
}

void kerf_units_gpus(int64_t milli, char *buf, size_t size)
{
	char frac[8];
	size_t n;

	if (milli < 0) {
		snprintf(buf, size, "-");
		return;
	}
	if (milli % 1000 == 0) {
		snprintf(buf, size, "%" PRId64, milli / 1000);
		return;
	}
	snprintf(frac, sizeof(frac), "%03" PRId64, milli % 1000);
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(buf, size, "%" PRId64 ".%s", milli / 1000, frac);
}

void kerf_units_gpu_hours(double hours, char *buf, size_t size)
{
	if (!(hours == hours))
		snprintf(buf, size, "-");
	else if (hours == 0)
		snprintf(buf, size, "0 GPU-h");
	else
		snprintf(buf, size, "%.1f GPU-h", hours);
}

void kerf_units_percent(double pct, int decimals, char *buf, size_t size)
{
	if (decimals < 0)
		decimals = 0;
	if (decimals > 3)
		decimals = 3;
	if (!(pct == pct))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f%%", decimals, pct);
}
