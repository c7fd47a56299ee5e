/*
 * csv: the strict reader of trace files (see csv.h).
 */
#include "format/csv.h"

#include <string.h>

#include "base/buf.h"

enum { CSV_SHOWN_SIZE = 64 };      /* a field quoted in a message */

static const char utf8_bom[3] = { '\xef', '\xbb', '\xbf' };

void kerf_csv_init(struct kerf_csv *r, const char *path, const char *data,
		   size_t len)
{
	memset(r, 0, sizeof(*r));
	kerf_escape(r->path, sizeof(r->path), path);
	r->data = data;
	r->len = len;
	if (len >= sizeof(utf8_bom) && memcmp(data, utf8_bom, sizeof(utf8_bom)) == 0)
		r->off = sizeof(utf8_bom);
}

static int split(struct kerf_csv *r, size_t n, struct kerf_err *err)
{
	char *p = r->row;

	r->nr_fields = 0;
	r->fields[r->nr_fields++] = p;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '"')
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: quoted fields are not supported",
					    r->path, r->line);
		if (p[i] != ',')
			continue;
		if (r->nr_fields == KERF_CSV_MAX_FIELDS)
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: more than %d fields",
					    r->path, r->line, KERF_CSV_MAX_FIELDS);
		p[i] = '\0';
		r->fields[r->nr_fields++] = p + i + 1;
	}
	return 1;
}

int kerf_csv_next(struct kerf_csv *r, struct kerf_err *err)
{
	while (r->off < r->len) {
		const char *start = r->data + r->off;
		const char *nl = memchr(start, '\n', r->len - r->off);
		size_t n = nl ? (size_t)(nl - start) : r->len - r->off;

		r->off += n + (nl ? 1 : 0);
		r->line++;
		if (n > 0 && start[n - 1] == '\r')
			n--;
		if (n > KERF_CSV_MAX_LINE)
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: row longer than %d bytes",
					    r->path, r->line, KERF_CSV_MAX_LINE);
		if (memchr(start, '\0', n))
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: NUL byte in row",
					    r->path, r->line);
		if (n == 0)
			continue;
		memcpy(r->row, start, n);
		r->row[n] = '\0';
		return split(r, n, err);
	}
	return 0;
}

int kerf_csv_header(struct kerf_csv *r, struct kerf_err *err)
{
	int rc = kerf_csv_next(r, err);

	for (int i = 0; rc > 0 && i < r->nr_fields; i++)
		for (int j = 0; j < i; j++)
			if (strcmp(r->fields[i], r->fields[j]) == 0) {
				char shown[CSV_SHOWN_SIZE];

				kerf_escape(shown, sizeof(shown), r->fields[i]);
				return kerf_err_set(err, -KERF_EPARSE,
						    "%s:%u: column '%s' is named twice (fields %d and %d)",
						    r->path, r->line, shown, j + 1,
						    i + 1);
			}
	return rc;
}

int kerf_csv_find(const struct kerf_csv *r, const char *name)
{
	for (int i = 0; i < r->nr_fields; i++)
		if (strcmp(r->fields[i], name) == 0)
			return i;
	return -1;
}

int kerf_csv_int(const struct kerf_csv *r, int i, const char *column,
		 int64_t min, int64_t max, int64_t *out, struct kerf_err *err)
{
	char shown[CSV_SHOWN_SIZE];
	const char *s;
	int64_t v = 0;
	int neg = 0;

	if (i < 0 || i >= r->nr_fields)
		return kerf_err_set(err, -KERF_EPARSE,
				    "%s:%u: column '%s' is missing",
				    r->path, r->line, column);
	s = r->fields[i];
	kerf_escape(shown, sizeof(shown), s);
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s == '\0')
		return kerf_err_set(err, -KERF_EPARSE,
				    neg ? "%s:%u: column '%s': '-' is not an integer"
					: "%s:%u: column '%s' is empty",
				    r->path, r->line, column);
	for (; *s; s++) {
		int d = *s - '0';

		if (d < 0 || d > 9)
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: column '%s': '%s' is not an integer",
					    r->path, r->line, column, shown);
		if (v > (INT64_MAX - d) / 10)
			return kerf_err_set(err, -KERF_ERANGE,
					    "%s:%u: column '%s': '%s' is too large",
					    r->path, r->line, column, shown);
		v = v * 10 + d;
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return kerf_err_set(err, -KERF_ERANGE,
				    "%s:%u: column '%s': %s is outside %lld..%lld",
				    r->path, r->line, column, shown,
				    (long long)min, (long long)max);
	*out = v;
	return 0;
}
