#include "base/buf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/grow.h"

void kerf_buf_init(struct kerf_buf *b, size_t max_bytes)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max_bytes = max_bytes;
}

void kerf_buf_release(struct kerf_buf *b)
{
	free(b->data);
	kerf_buf_init(b, b->max_bytes);
}

void kerf_buf_reset(struct kerf_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

const char *kerf_buf_str(const struct kerf_buf *b)
{
	return b->data ? b->data : "";
}

char *kerf_buf_detach(struct kerf_buf *b, size_t *len)
{
	char *d = b->data;

	if (!d)
		d = calloc(1, 1);
	if (len)
		*len = d ? b->len : 0;
	kerf_buf_init(b, b->max_bytes);
	return d;
}

/* Room for len more bytes and the NUL. */
static int room(struct kerf_buf *b, size_t len)
{
	size_t need;

	if (__builtin_add_overflow(b->len, len, &need) ||
	    (b->max_bytes && need > b->max_bytes))
		return -KERF_ELIMIT;
	if (__builtin_add_overflow(need, 1, &need))
		return -KERF_ELIMIT;
	return KERF_GROW(b->data, b->alloc, need);
}

int kerf_buf_add(struct kerf_buf *b, const void *data, size_t len)
{
	int rc = room(b, len);

	if (rc < 0)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int kerf_buf_add_str(struct kerf_buf *b, const char *s)
{
	return kerf_buf_add(b, s, strlen(s));
}

int kerf_buf_vaddf(struct kerf_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n, rc;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	if (n < 0)
		return -KERF_EINVAL;
	rc = room(b, (size_t)n);
	if (rc < 0)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int kerf_buf_addf(struct kerf_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = kerf_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

/* The escaped form of byte c into out (at most 4 bytes); its length. */
static size_t escape_byte(unsigned char c, char quote, char out[4])
{
	static const char hex[] = "0123456789abcdef";

	if (c == '\\' || (quote && c == (unsigned char)quote)) {
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		return 1;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	return 4;
}

int kerf_buf_add_escaped(struct kerf_buf *b, const char *s, size_t len,
			 char quote)
{
	size_t before = b->len;

	for (size_t i = 0; i < len; i++) {
		char e[4];
		size_t n = escape_byte((unsigned char)s[i], quote, e);
		int rc = kerf_buf_add(b, e, n);

		if (rc < 0) {
			/* whole or nothing */
			b->len = before;
			if (b->data)
				b->data[before] = '\0';
			return rc;
		}
	}
	return 0;
}

const char *kerf_escape_n(char *out, size_t size, const char *s, size_t len)
{
	size_t o = 0, total = 0, limit;

	if (size < 8) {
		if (size)
			out[0] = '\0';
		return out;
	}
	for (size_t i = 0; i < len; i++) {
		char e[4];

		total += escape_byte((unsigned char)s[i], '\'', e);
	}
	/* all of it when it fits, else as much as leaves room for "..." */
	limit = total < size ? size - 1 : size - 4;
	for (size_t i = 0; i < len; i++) {
		char e[4];
		size_t n = escape_byte((unsigned char)s[i], '\'', e);

		if (o + n > limit)
			break;
		memcpy(out + o, e, n);
		o += n;
	}
	if (total >= size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

const char *kerf_escape(char *out, size_t size, const char *s)
{
	return kerf_escape_n(out, size, s, s ? strlen(s) : 0);
}

char *kerf_strdup(const char *s)
{
	size_t len = strlen(s);
	char *d = malloc(len + 1);

	if (d)
		memcpy(d, s, len + 1);
	return d;
}

int kerf_buf_add_prom_label(struct kerf_buf *b, const char *s)
{
	int rc = 0;

	for (; *s && rc == 0; s++) {
		if (*s == '\\')
			rc = kerf_buf_add_str(b, "\\\\");
		else if (*s == '"')
			rc = kerf_buf_add_str(b, "\\\"");
		else if (*s == '\n')
			rc = kerf_buf_add_str(b, "\\n");
		else
			rc = kerf_buf_add(b, s, 1);
	}
	return rc;
}
