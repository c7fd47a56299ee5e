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
