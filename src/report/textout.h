/*
 * textout: appends to a kerf_buf that remember their first failure, so a
 * writer of many pieces (a chart, a page) checks once at the end.
 */
#ifndef KERF_REPORT_TEXTOUT_H
#define KERF_REPORT_TEXTOUT_H

#include "base/buf.h"

struct kerf_textout {
	struct kerf_buf *buf;       /* borrowed */
	int rc;                     /* first failure (negative), else 0 */
};

/* printf-style append; nothing once a failure is kept. */
void kerf_textout_addf(struct kerf_textout *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Bytes as they are. */
void kerf_textout_add(struct kerf_textout *o, const void *data, size_t len);

/* Text for HTML or SVG: &, <, >, " escaped. */
void kerf_textout_escaped(struct kerf_textout *o, const char *text);

#endif /* KERF_REPORT_TEXTOUT_H */
