/*
 * buf: a bounded, growable byte buffer (curl's dynbuf).  Always
 * NUL-terminated, so data can be used as a string; may hold NUL bytes.
 * Every append is refused whole when it would take the length past
 * max_bytes (-KERF_ELIMIT) or memory runs out (-KERF_ENOMEM): the buffer
 * then keeps what it had, so a partial write is never mistaken for a
 * whole one.
 *
 * Escaping: text that came from outside (a file, a flag, the API server)
 * is written into messages and logs through kerf_buf_add_escaped or
 * kerf_escape, so a key holding ESC or a newline cannot forge output.
 */
#ifndef KERF_BASE_BUF_H
#define KERF_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct kerf_buf {
	char *data;         /* len bytes + NUL; NULL until the first append */
	size_t len;
	size_t alloc;
	size_t max_bytes;   /* bound on len; 0 = none */
};

void kerf_buf_init(struct kerf_buf *b, size_t max_bytes);
void kerf_buf_release(struct kerf_buf *b);

/* Empty it, keeping its storage. */
void kerf_buf_reset(struct kerf_buf *b);

/* The contents as a string ("" when empty); valid until the next change. */
const char *kerf_buf_str(const struct kerf_buf *b);

/* Take the storage (malloc'd, NUL-terminated; caller frees); b is empty. */
char *kerf_buf_detach(struct kerf_buf *b, size_t *len);

int kerf_buf_add(struct kerf_buf *b, const void *data, size_t len)
	__attribute__((warn_unused_result));
int kerf_buf_add_str(struct kerf_buf *b, const char *s)
	__attribute__((warn_unused_result));
int kerf_buf_addf(struct kerf_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), warn_unused_result));
int kerf_buf_vaddf(struct kerf_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0), warn_unused_result));

/*
 * Append s[0..len) with every byte that is not printable ASCII written as
 * \xNN, and the backslash and the quote character (if non-zero) escaped
 * with a backslash.
 */
int kerf_buf_add_escaped(struct kerf_buf *b, const char *s, size_t len,
			 char quote) __attribute__((warn_unused_result));

/* A malloc'd copy of s; NULL on OOM. */
char *kerf_strdup(const char *s);

/*
 * s as a Prometheus label value (the text exposition format): \ " and
 * newline escaped, other bytes as they are.  0 or kerf_buf_add's error.
 */
int kerf_buf_add_prom_label(struct kerf_buf *b, const char *s)
	__attribute__((warn_unused_result));

/*
 * s (NUL-terminated) escaped as above into out[size] for a message,
 * shortened with "..." when it does not fit.  Returns out; out is always a
 * valid string (size >= 8).
 */
const char *kerf_escape(char *out, size_t size, const char *s);

/* The same for s[0..len), which may hold NUL bytes. */
const char *kerf_escape_n(char *out, size_t size, const char *s, size_t len);

#endif /* KERF_BASE_BUF_H */
