/*
 * textout: sticky-failure appends for the report writers.
 */
#include "report/textout.h"

#include <stdarg.h>
#include <string.h>

void kerf_textout_addf(struct kerf_textout *o, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (o->rc)
		return;
	va_start(ap, fmt);
	rc = kerf_buf_vaddf(o->buf, fmt, ap);
	va_end(ap);
	if (rc < 0)
		o->rc = rc;
}

void kerf_textout_add(struct kerf_textout *o, const void *data, size_t len)
{
	int rc;

	if (o->rc || len == 0)
		return;
	rc = kerf_buf_add(o->buf, data, len);
	if (rc < 0)
		o->rc = rc;
}

void kerf_textout_escaped(struct kerf_textout *o, const char *text)
{
	for (const char *p = text; *p && !o->rc; p++) {
		size_t plain = strcspn(p, "&<>\"");

		kerf_textout_add(o, p, plain);
		p += plain;
		switch (*p) {
		case '&': kerf_textout_add(o, "&amp;", 5); break;
		case '<': kerf_textout_add(o, "&lt;", 4); break;
		case '>': kerf_textout_add(o, "&gt;", 4); break;
		case '"': kerf_textout_add(o, "&quot;", 6); break;
		default: return;   /* the end */
		}
	}
}
