/*
 * wire: unix sockets and gRPC response header blocks (wire.h).
 */
#include "grpc/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "grpc/frame.h"

static int unix_addr(struct sockaddr_un *a, const char *path, struct kerf_err *err)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(a->sun_path))
		return kerf_err_set(err, -KERF_EINVAL, "socket path '%.80s...': over %zu bytes",
				    path, sizeof(a->sun_path) - 1);
	memcpy(a->sun_path, path, strlen(path) + 1);
	return 0;
}

int kerf_grpc_unix_listen(const char *path, struct kerf_err *err)
{
	struct sockaddr_un a;
	int rc = unix_addr(&a, path, err);
	if (rc < 0)
		return rc;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kerf_err_set(err, -KERF_EIO, "socket: %s", strerror(errno));
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0) {
		int e = errno;
		close(fd);
		return kerf_err_set(err, -KERF_EIO, "listen on '%.200s': %s", path, strerror(e));
	}
	return fd;
}

int kerf_grpc_unix_connect(const char *path, struct kerf_err *err)
{
	struct sockaddr_un a;
	int rc = unix_addr(&a, path, err);
	if (rc < 0)
		return rc;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return kerf_err_set(err, -KERF_EIO, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int e = errno;
		close(fd);
		return kerf_err_set(err, -KERF_ETRANSPORT, "connect to '%.200s': %s", path,
				    strerror(e));
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		close(fd);
		return kerf_err_set(err, -KERF_EIO, "fcntl: %s", strerror(errno));
	}
	return fd;
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

int kerf_grpc_submit_headers(nghttp2_session *h2, int32_t id, nghttp2_data_provider *prd)
{
	nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc") };
	return nghttp2_submit_response(h2, id, nv, 2, prd);
}

/* The status block: shared by trailers and trailers-only. */
static size_t status_nv(nghttp2_nv *nv, char *code, char *enc, size_t enc_size,
			int status, const char *msg)
{
	size_t n = 0;
	snprintf(code, 12, "%d", status);
	nv[n++] = (nghttp2_nv)NV("grpc-status", code);
	if (msg && *msg) {
		kerf_grpc_message_encode(enc, enc_size, msg);
		nv[n++] = (nghttp2_nv)NV("grpc-message", enc);
	}
	return n;
}

int kerf_grpc_submit_trailers(nghttp2_session *h2, int32_t id, int status, const char *msg)
{
	nghttp2_nv nv[2];
	char code[12], enc[3 * KERF_ERR_MSG_MAX];
	size_t n = status_nv(nv, code, enc, sizeof(enc), status, msg);
	return nghttp2_submit_trailer(h2, id, nv, n);
}

int kerf_grpc_submit_trailers_only(nghttp2_session *h2, int32_t id, int status, const char *msg)
{
	nghttp2_nv nv[4] = { NV(":status", "200"), NV("content-type", "application/grpc") };
	char code[12], enc[3 * KERF_ERR_MSG_MAX];
	size_t n = 2 + status_nv(nv + 2, code, enc, sizeof(enc), status, msg);
	return nghttp2_submit_response(h2, id, nv, n, NULL);
}
