/*
 * lines: a watch stream's body cut into lines.  The API server writes one
 * JSON object per line, '\n'-terminated; a transport hands over chunks
 * that cut lines anywhere.  A line is delivered once its '\n' arrived
 * (without it, and without a '\r' before it); empty lines are skipped.  A
 * line longer than max_line_bytes is an error (-KERF_ELIMIT): a watch that
 * sends one is stopped, never buffered without bound.
 */
#ifndef KERF_KUBE_LINES_H
#define KERF_KUBE_LINES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

enum { KERF_KUBE_MAX_LINE_BYTES = 16 << 20 };

/* One line (not NUL-terminated); non-zero stops the feed, returned as is. */
typedef int (*kerf_kube_line_fn)(void *arg, const char *line, size_t len);

struct kerf_kube_lines {
	struct kerf_buf partial;      /* an unfinished line */
	size_t max_line_bytes;
};

void kerf_kube_lines_init(struct kerf_kube_lines *l, size_t max_line_bytes);
void kerf_kube_lines_release(struct kerf_kube_lines *l);

/*
 * Feed data[0..len): every line it completes goes to fn.  Returns 0, what
 * fn returned when non-zero, -KERF_ELIMIT for a line that is too long or
 * -KERF_ENOMEM.
 */
int kerf_kube_lines_feed(struct kerf_kube_lines *l, const char *data,
			 size_t len, kerf_kube_line_fn fn, void *arg);

/* Bytes of an unfinished line held (a stream that ends so was cut off). */
size_t kerf_kube_lines_pending(const struct kerf_kube_lines *l);

#endif /* KERF_KUBE_LINES_H */
