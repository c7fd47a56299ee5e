/*
 * client: one unary gRPC call over a unix socket (Register towards the
 * kubelet).  Blocking, bounded by a timeout; between reads it calls tick
 * (if set), so that a caller that also serves (the device plugin, whose
 * kubelet dials it back while Register is in flight) keeps serving.
 */
#ifndef KERF_GRPC_CLIENT_H
#define KERF_GRPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "grpc/server.h"

struct kerf_grpc_client_opts {
	int timeout_ms;
	size_t max_msg_bytes;
	void (*tick)(void *arg);
	void *tick_arg;
	const struct kerf_grpc_io_ops *io;  /* NULL: kerf_grpc_io_posix */
};

/*
 * Call method ("/v1beta1.Registration/Register") on the server at
 * sock_path with one request message; the response message is appended to
 * resp.  Returns the gRPC status (>= 0; err->msg holds grpc-message when
 * not OK), or a negative code when no status came (connect, timeout, a
 * malformed answer).
 */
int kerf_grpc_unary_call(const char *sock_path, const char *method,
			 const uint8_t *req, size_t len, struct kerf_buf *resp,
			 const struct kerf_grpc_client_opts *opts, struct kerf_err *err);

#endif /* KERF_GRPC_CLIENT_H */
