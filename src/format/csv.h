/*
 * csv: a strict reader for the simple comma-separated files of traces.
 *
 * Fields are separated by ',' and rows by "\n" (a "\r\n" ending is accepted).
 * Quoting is not part of these files, so a '"' is an error rather than a
 * silently misread field; so are NUL bytes, rows longer than
 * KERF_CSV_MAX_LINE and rows with more than KERF_CSV_MAX_FIELDS fields.
 * The reader never allocates: rows are copied into the reader's buffer and
 * fields point into it until the next row.
 *
 * A UTF-8 byte order mark (EF BB BF) at the very start of the data is
 * skipped, so a file saved by a spreadsheet still has its first column's
 * name.  kerf_csv_header reads the header row and refuses a column named
 * twice, which kerf_csv_find would otherwise silently resolve to the first.
 * Messages quote the path and any field escaped (base/buf.h).
 */
#ifndef KERF_FORMAT_CSV_H
#define KERF_FORMAT_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum {
	KERF_CSV_MAX_LINE = 4096,
	KERF_CSV_MAX_FIELDS = 32,
	KERF_CSV_PATH_SHOWN = 160,         /* the path, escaped, with its NUL */
};

struct kerf_csv {
	char path[KERF_CSV_PATH_SHOWN];    /* escaped, for messages */
	const char *data;          /* whole input, borrowed */
	size_t len;
	size_t off;                /* start of the next row */
	unsigned line;             /* 1-based number of the current row */
	int nr_fields;
	const char *fields[KERF_CSV_MAX_FIELDS];
	char row[KERF_CSV_MAX_LINE + 1];
};

void kerf_csv_init(struct kerf_csv *r, const char *path, const char *data,
		   size_t len);

/*
 * Read the next non-empty row into r->fields.  Returns 1 for a row, 0 at the
 * end, negative with "path:line: reason" in err on malformed input.
 */
int kerf_csv_next(struct kerf_csv *r, struct kerf_err *err);

/*
 * Read the header: the first non-empty row, as kerf_csv_next.  A column
 * named twice is an error: "path:line: column 'name' is named twice
 * (fields 2 and 5)".  Returns 1, 0 for no row at all, or negative.
 */
int kerf_csv_header(struct kerf_csv *r, struct kerf_err *err);

/* Index of the header field called name in the current row, or -1. */
int kerf_csv_find(const struct kerf_csv *r, const char *name);

/*
 * Parse field i as a decimal integer in [min, max] into *out; the message
 * names the file, line and column name.  An empty field is an error.
 */
int kerf_csv_int(const struct kerf_csv *r, int i, const char *column,
		 int64_t min, int64_t max, int64_t *out, struct kerf_err *err);

#endif /* KERF_FORMAT_CSV_H */
