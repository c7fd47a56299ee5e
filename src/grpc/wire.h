/*
 * wire: what the gRPC server and client share: unix sockets and the
 * HTTP/2 header blocks of a gRPC response (PROTOCOL-HTTP2.md).
 */
#ifndef KERF_GRPC_WIRE_H
#define KERF_GRPC_WIRE_H

#include <stdint.h>

#include <nghttp2/nghttp2.h>

#include "base/err.h"

/* A non-blocking listening socket at path (an old file removed). */
int kerf_grpc_unix_listen(const char *path, struct kerf_err *err);
/* A connected, non-blocking socket to path. */
int kerf_grpc_unix_connect(const char *path, struct kerf_err *err);

/* :status 200, content-type application/grpc, with a body from prd. */
int kerf_grpc_submit_headers(nghttp2_session *h2, int32_t id, nghttp2_data_provider *prd);
/* grpc-status and grpc-message (percent-encoded) as trailers. */
int kerf_grpc_submit_trailers(nghttp2_session *h2, int32_t id, int status, const char *msg);
/* A response of headers only, carrying the status (an error, no body). */
int kerf_grpc_submit_trailers_only(nghttp2_session *h2, int32_t id, int status, const char *msg);

#endif /* KERF_GRPC_WIRE_H */
