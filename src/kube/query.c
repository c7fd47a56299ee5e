#include "kube/query.h"

#include <string.h>

#include "base/err.h"

static int is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

int kerf_kube_query_add(struct kerf_buf *b, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	const char *sep = memchr(b->data ? b->data : "", '?', b->len) ? "&" : "?";
	char enc[3] = { '%', 0, 0 };
	size_t i;
	int rc;

	rc = kerf_buf_addf(b, "%s%s=", sep, key);
	for (i = 0; rc == 0 && value[i]; i++) {
		unsigned char c = (unsigned char)value[i];

		if (is_unreserved(c)) {
			rc = kerf_buf_add(b, &value[i], 1);
		} else {
			enc[1] = hex[c >> 4];
			enc[2] = hex[c & 15];
			rc = kerf_buf_add(b, enc, 3);
		}
	}
	return rc;
}
