/*
 * server: a gRPC server on a unix socket, on nghttp2 (HTTP/2 with prior
 * knowledge, no TLS): unary and server-streaming calls routed by :path.
 *
 * Single-threaded: kerf_grpc_server_poll() accepts, reads, dispatches and
 * writes, and returns after at most timeout_ms.  A unary handler answers at
 * once; a streaming handler keeps the call and sends on it later with
 * kerf_grpc_call_send() until the client goes away (the route's closed
 * hook says so) or kerf_grpc_call_finish().  Requests are bounded: one
 * message of at most max_msg_bytes, a bounded number of connections and
 * of open calls per connection.
 */
#ifndef KERF_GRPC_SERVER_H
#define KERF_GRPC_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/err.h"

struct kerf_grpc_server;
struct kerf_grpc_call;

/* The socket I/O the server and client use; a fake in tests. */
struct kerf_grpc_io_ops {
	ssize_t (*read)(void *ctx, int fd, void *buf, size_t len);
	ssize_t (*write)(void *ctx, int fd, const void *buf, size_t len);
	void *ctx;
};
extern const struct kerf_grpc_io_ops kerf_grpc_io_posix;

/*
 * A unary handler: req is the request message; append the response
 * message to resp.  Returns a gRPC status (0 OK); on another status
 * err->msg is sent as grpc-message.
 */
typedef int (*kerf_grpc_unary_fn)(void *arg, const uint8_t *req, size_t len,
				  struct kerf_buf *resp, struct kerf_err *err);
/*
 * A streaming handler: returns 0 to keep the call open (sending on it
 * later), or a gRPC status to end it at once.
 */
typedef int (*kerf_grpc_stream_fn)(void *arg, const uint8_t *req, size_t len,
				   struct kerf_grpc_call *call, struct kerf_err *err);
/* A streaming call is gone: its pointer must not be used again. */
typedef void (*kerf_grpc_closed_fn)(void *arg, struct kerf_grpc_call *call);

struct kerf_grpc_route {
	const char *path;             /* "/v1beta1.DevicePlugin/Allocate" */
	kerf_grpc_unary_fn unary;     /* one of unary, stream */
	kerf_grpc_stream_fn stream;
	kerf_grpc_closed_fn closed;   /* streaming calls; may be NULL */
	void *arg;
};

enum { KERF_GRPC_MAX_CONNS = 32, KERF_GRPC_MAX_CALLS = 16 };

/*
 * Listen on path (an existing file there is removed first).  routes must
 * outlive the server.  io NULL: kerf_grpc_io_posix.
 */
int kerf_grpc_server_new(struct kerf_grpc_server **out, const char *path,
			 const struct kerf_grpc_route *routes, size_t n_routes,
			 size_t max_msg_bytes, const struct kerf_grpc_io_ops *io,
			 struct kerf_err *err);
/* Close every connection and the socket, unlink the path. */
void kerf_grpc_server_free(struct kerf_grpc_server *s);

/* Serve for at most timeout_ms (0: what is ready).  Returns 0 or a code. */
int kerf_grpc_server_poll(struct kerf_grpc_server *s, int timeout_ms);

/* Connections open now, for tests. */
size_t kerf_grpc_server_conns(const struct kerf_grpc_server *s);

/* Queue a message on a streaming call.  Returns 0 or a code. */
int kerf_grpc_call_send(struct kerf_grpc_call *call, const uint8_t *msg, size_t len);
/* End a streaming call with a status (message may be NULL). */
void kerf_grpc_call_finish(struct kerf_grpc_call *call, int status, const char *message);

/* The socket's file, as given. */
const char *kerf_grpc_server_path(const struct kerf_grpc_server *s);

#endif /* KERF_GRPC_SERVER_H */
