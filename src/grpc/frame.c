/*
 * frame: gRPC's length-prefixed messages and status codes (frame.h).
 */
#include "grpc/frame.h"

#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
	"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};

const char *kerf_grpc_status_name(int status)
{
	if (status < 0 || (size_t)status >= sizeof(status_names) / sizeof(status_names[0]))
		return "UNKNOWN";
	return status_names[status];
}

int kerf_grpc_status_from_err(int code)
{
	switch (code) {
	case 0:
		return KERF_GRPC_OK;
	case -KERF_EINVAL:
	case -KERF_EPARSE:
	case -KERF_ERANGE:
		return KERF_GRPC_INVALID_ARGUMENT;
	case -KERF_ENOTFOUND:
		return KERF_GRPC_NOT_FOUND;
	case -KERF_EEXIST:
		return KERF_GRPC_ALREADY_EXISTS;
	case -KERF_ELIMIT:
	case -KERF_ENOMEM:
		return KERF_GRPC_RESOURCE_EXHAUSTED;
	case -KERF_EBUSY:
		return KERF_GRPC_FAILED_PRECONDITION;
	case -KERF_ETIMEDOUT:
		return KERF_GRPC_DEADLINE_EXCEEDED;
	case -KERF_EIO:
	case -KERF_ETRANSPORT:
		return KERF_GRPC_UNAVAILABLE;
	default:
		return KERF_GRPC_INTERNAL;
	}
}

void kerf_grpc_reader_init(struct kerf_grpc_reader *r, size_t max_msg_bytes)
{
	memset(r, 0, sizeof(*r));
	r->max_msg_bytes = max_msg_bytes;
}

void kerf_grpc_reader_free(struct kerf_grpc_reader *r)
{
	free(r->msg);
	r->msg = NULL;
}

int kerf_grpc_reader_idle(const struct kerf_grpc_reader *r)
{
	return !r->failed && r->prefix_have == 0;
}

static int reader_fail(struct kerf_grpc_reader *r, int rc)
{
	r->failed = 1;
	return rc;
}

int kerf_grpc_reader_feed(struct kerf_grpc_reader *r, const uint8_t *data,
			  size_t len, kerf_grpc_msg_fn fn, void *arg,
			  struct kerf_err *err)
{
	if (r->failed)
		return kerf_err_set(err, -KERF_EINVAL, "gRPC message: the stream already failed");
	while (len > 0) {
		if (r->prefix_have < KERF_GRPC_PREFIX_BYTES) {
			size_t take = KERF_GRPC_PREFIX_BYTES - r->prefix_have;
			if (take > len)
				take = len;
			memcpy(r->prefix + r->prefix_have, data, take);
			r->prefix_have += take;
			data += take;
			len -= take;
			if (r->prefix_have < KERF_GRPC_PREFIX_BYTES)
				break;
			if (r->prefix[0] != 0)
				return reader_fail(r, kerf_err_set(err, -KERF_EPARSE,
					"gRPC message: compressed flag %u, but no compression was offered",
					r->prefix[0]));
			r->msg_len = (size_t)r->prefix[1] << 24 | (size_t)r->prefix[2] << 16 |
				     (size_t)r->prefix[3] << 8 | (size_t)r->prefix[4];
			if (r->msg_len > r->max_msg_bytes)
				return reader_fail(r, kerf_err_set(err, -KERF_ELIMIT,
					"gRPC message: length %zu over the limit of %zu bytes",
					r->msg_len, r->max_msg_bytes));
			r->msg_have = 0;
			free(r->msg);
			r->msg = malloc(r->msg_len ? r->msg_len : 1);
			if (!r->msg)
				return reader_fail(r, kerf_err_set(err, -KERF_ENOMEM,
					"gRPC message: out of memory for %zu bytes", r->msg_len));
		}
		size_t take = r->msg_len - r->msg_have;
		if (take > len)
			take = len;
		memcpy(r->msg + r->msg_have, data, take);
		r->msg_have += take;
		data += take;
		len -= take;
		if (r->msg_have < r->msg_len)
			break;
		r->prefix_have = 0;
		int rc = fn(arg, r->msg, r->msg_len);
		free(r->msg);
		r->msg = NULL;
		if (rc < 0)
			return reader_fail(r, rc);
	}
	return 0;
}

void kerf_grpc_prefix_write(uint8_t out[KERF_GRPC_PREFIX_BYTES], uint32_t len)
{
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
}

size_t kerf_grpc_message_encode(char *out, size_t size, const char *msg)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (size == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p >= 0x20 && *p <= 0x7e && *p != '%') {
			if (n + 1 >= size)
				break;
			out[n++] = (char)*p;
		} else {
			if (n + 3 >= size)
				break;
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return n;
}
