#include "kube/lines.h"

#include <string.h>

#include "base/err.h"

void kerf_kube_lines_init(struct kerf_kube_lines *l, size_t max_line_bytes)
{
	l->max_line_bytes = max_line_bytes;
	kerf_buf_init(&l->partial, max_line_bytes + 1);
}

void kerf_kube_lines_release(struct kerf_kube_lines *l)
{
	kerf_buf_release(&l->partial);
}

size_t kerf_kube_lines_pending(const struct kerf_kube_lines *l)
{
	return l->partial.len;
}

static int deliver(struct kerf_kube_lines *l, const char *line, size_t len,
		   kerf_kube_line_fn fn, void *arg)
{
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > l->max_line_bytes)
		return -KERF_ELIMIT;
	if (len == 0)
		return 0;
	return fn(arg, line, len);
}

int kerf_kube_lines_feed(struct kerf_kube_lines *l, const char *data,
			 size_t len, kerf_kube_line_fn fn, void *arg)
{
	const char *nl;
	size_t n;
	int rc;

	while (len > 0) {
		nl = memchr(data, '\n', len);
		n = nl ? (size_t)(nl - data) : len;
		if (l->partial.len + n > l->max_line_bytes + 1)
			return -KERF_ELIMIT;
		if (!nl)
			return kerf_buf_add(&l->partial, data, n);
		if (l->partial.len == 0) {
			rc = deliver(l, data, n, fn, arg);
		} else {
			rc = kerf_buf_add(&l->partial, data, n);
			if (rc == 0)
				rc = deliver(l, l->partial.data, l->partial.len,
					     fn, arg);
			kerf_buf_reset(&l->partial);
		}
		if (rc != 0)
			return rc;
		data += n + 1;
		len -= n + 1;
	}
	return 0;
}
