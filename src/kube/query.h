/*
 * query: URL query parameters for API paths, percent-encoded (RFC 3986:
 * everything but unreserved characters), so a label selector such as
 * "kerf.io/tier in (gold,silver)" or an opaque continue token goes into a
 * path unchanged in meaning.
 */
#ifndef KERF_KUBE_QUERY_H
#define KERF_KUBE_QUERY_H

#include "base/buf.h"

/* Append "?key=value" (the first) or "&key=value", value encoded. */
int kerf_kube_query_add(struct kerf_buf *b, const char *key,
			const char *value) __attribute__((warn_unused_result));

#endif /* KERF_KUBE_QUERY_H */
