/*
 * table: kubectl-like tables for `kerf get` and `kerf explain`: upper-case
 * headers, columns padded to the widest cell and three spaces apart, the
 * last column not padded; cells are the server's text with control bytes
 * escaped (kerf_table_escape), so a hostile name cannot forge terminal
 * output.
 * Durations, GPUs and percentages are written by base/units.h.
 */
#ifndef KERF_CMD_TABLE_H
#define KERF_CMD_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/units.h"

enum { KERF_TABLE_MAX_COLS = 16 };

struct kerf_table {
	size_t nr_cols;
	char **cells;          /* row-major, header row first; owned */
	size_t nr_rows;        /* the header included */
	size_t alloc;
	int oom;               /* a cell could not be kept: print fails */
};

/*
 * s with C0 and C1 control bytes and DEL as \xNN, everything else as it
 * is (UTF-8 stays readable); malloc'd, NULL on OOM.
 */
char *kerf_table_escape(const char *s);

/* A table with the given headers (NULL-ended, at most 16). */
void kerf_table_init(struct kerf_table *t, const char *const *headers);
void kerf_table_release(struct kerf_table *t);

/* Append a row of nr_cols cells (NULL: "<none>"), escaped. */
void kerf_table_row(struct kerf_table *t, const char *const *cells);

/* Print it: 0, or -1 when a row was lost to memory. */
int kerf_table_print(const struct kerf_table *t, FILE *out);

#endif
