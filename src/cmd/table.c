#include "cmd/table.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

char *kerf_table_escape(const char *s)
{
	char *e = malloc(4 * strlen(s) + 1), *o = e;   /* \xNN per byte at most */
	const unsigned char *p = (const unsigned char *)s;

	if (!e)
		return NULL;
	for (; *p; p++) {
		/* C0 controls, DEL, and C1 controls as UTF-8 (C2 80..9F) */
		if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
			snprintf(o, 5, "\\x%02x", *p);
			o += 4;
		} else {
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return e;
}

void kerf_table_init(struct kerf_table *t, const char *const *headers)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	while (headers[n] && n < KERF_TABLE_MAX_COLS)
		n++;
	t->nr_cols = n;
	kerf_table_row(t, headers);
}

void kerf_table_release(struct kerf_table *t)
{
	for (size_t i = 0; i < t->nr_rows * t->nr_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void kerf_table_row(struct kerf_table *t, const char *const *cells)
{
	size_t base = t->nr_rows * t->nr_cols;

	if (KERF_GROW(t->cells, t->alloc, base + t->nr_cols) < 0) {
		t->oom = 1;
		return;
	}
	for (size_t c = 0; c < t->nr_cols; c++) {
		char *e = kerf_table_escape(cells[c] ? cells[c] : "<none>");

		if (!e)
			t->oom = 1;
		t->cells[base + c] = e;
	}
	t->nr_rows++;
}

int kerf_table_print(const struct kerf_table *t, FILE *out)
{
	size_t w[KERF_TABLE_MAX_COLS] = { 0 };

	if (t->oom)
		return -1;
	for (size_t r = 0; r < t->nr_rows; r++)
		for (size_t c = 0; c < t->nr_cols; c++) {
			size_t n = strlen(t->cells[r * t->nr_cols + c]);

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < t->nr_rows; r++) {
		for (size_t c = 0; c < t->nr_cols; c++) {
			const char *s = t->cells[r * t->nr_cols + c];

			if (c + 1 < t->nr_cols)
				fprintf(out, "%-*s   ", (int)w[c], s);
			else
				fprintf(out, "%s\n", s);
		}
	}
	return 0;
}

void kerf_duration_text(int64_t ms, char *buf, size_t size)
{
	int64_t s = ms / 1000, m = s / 60, h = s / 3600, d = h / 24;

	/* k8s.io/apimachinery/pkg/util/duration.HumanDuration */
	if (s < -1)
		snprintf(buf, size, "<invalid>");
	else if (s < 0)
		snprintf(buf, size, "0s");
	else if (s < 120)
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

void kerf_gpu_text(int64_t milli, char *buf, size_t size)
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
