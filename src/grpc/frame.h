/*
 * frame: gRPC's length-prefixed messages and status codes, with no I/O.
 *
 * On the wire (gRPC over HTTP/2, PROTOCOL-HTTP2.md) each message in a
 * stream's DATA is one byte of compressed flag, a four-byte big-endian
 * length and the message.  kerf never asks for compression, so a set flag
 * is refused.  The reader is incremental (DATA arrives in pieces of any
 * size) and bounded: a length over the reader's limit is refused before
 * anything is buffered, since the peer is not trusted.
 */
#ifndef KERF_GRPC_FRAME_H
#define KERF_GRPC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum { KERF_GRPC_PREFIX_BYTES = 5 };
/* The default bound of one message: gRPC's default receive limit. */
enum { KERF_GRPC_MAX_MSG_BYTES = 4 << 20 };

/* gRPC status codes (grpc/doc/statuscodes.md); numbers are the wire's. */
enum kerf_grpc_status {
	KERF_GRPC_OK = 0,
	KERF_GRPC_CANCELLED = 1,
	KERF_GRPC_UNKNOWN = 2,
	KERF_GRPC_INVALID_ARGUMENT = 3,
	KERF_GRPC_DEADLINE_EXCEEDED = 4,
	KERF_GRPC_NOT_FOUND = 5,
	KERF_GRPC_ALREADY_EXISTS = 6,
	KERF_GRPC_PERMISSION_DENIED = 7,
	KERF_GRPC_RESOURCE_EXHAUSTED = 8,
	KERF_GRPC_FAILED_PRECONDITION = 9,
	KERF_GRPC_ABORTED = 10,
	KERF_GRPC_OUT_OF_RANGE = 11,
	KERF_GRPC_UNIMPLEMENTED = 12,
	KERF_GRPC_INTERNAL = 13,
	KERF_GRPC_UNAVAILABLE = 14,
	KERF_GRPC_DATA_LOSS = 15,
	KERF_GRPC_UNAUTHENTICATED = 16,
};

/* "INVALID_ARGUMENT" for 3, "UNKNOWN" for a number out of the table. */
const char *kerf_grpc_status_name(int status);

/* The status a kerf error code (negative kerf_errno) is answered with. */
int kerf_grpc_status_from_err(int code);

struct kerf_grpc_reader {
	size_t max_msg_bytes;       /* refuse longer messages */
	uint8_t prefix[KERF_GRPC_PREFIX_BYTES];
	size_t prefix_have;
	uint8_t *msg;               /* the message being read, malloc'd */
	size_t msg_len;
	size_t msg_have;
	int failed;                 /* a refusal is final */
};

void kerf_grpc_reader_init(struct kerf_grpc_reader *r, size_t max_msg_bytes);
void kerf_grpc_reader_free(struct kerf_grpc_reader *r);

/*
 * Called once for each whole message; the bytes are the reader's until the
 * call returns.  A negative return stops the feed and is its result.
 */
typedef int (*kerf_grpc_msg_fn)(void *arg, const uint8_t *msg, size_t len);

/*
 * Feed len bytes of DATA.  Returns 0, or -KERF_ELIMIT (a message over the
 * bound), -KERF_EPARSE (a compressed message), -KERF_ENOMEM, or what the
 * callback returned, with err naming the reason.
 */
int kerf_grpc_reader_feed(struct kerf_grpc_reader *r, const uint8_t *data,
			  size_t len, kerf_grpc_msg_fn fn, void *arg,
			  struct kerf_err *err);

/* Whether the reader stopped between messages (a stream may end there). */
int kerf_grpc_reader_idle(const struct kerf_grpc_reader *r);

/* Write the five-byte prefix of an uncompressed message of len bytes. */
void kerf_grpc_prefix_write(uint8_t out[KERF_GRPC_PREFIX_BYTES], uint32_t len);

/*
 * grpc-message's percent-encoding: bytes outside printable ASCII and '%'
 * become %XX.  Writes at most size bytes with a NUL; truncates whole
 * escapes only.  Returns the length written.
 */
size_t kerf_grpc_message_encode(char *out, size_t size, const char *msg);

#endif /* KERF_GRPC_FRAME_H */
