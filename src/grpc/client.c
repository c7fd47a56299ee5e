/*
 * client: one unary gRPC call over a unix socket (client.h).
 */
#include "grpc/client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "grpc/frame.h"
#include "grpc/wire.h"

struct ccall {
	const struct kerf_grpc_io_ops *io;
	int fd;
	const uint8_t *body;          /* prefix + request */
	size_t body_len, body_off;
	struct kerf_grpc_reader reader;
	struct kerf_buf *resp;
	int n_msgs;
	int status;                   /* -1 until grpc-status */
	char message[KERF_ERR_MSG_MAX];
	int closed;
	int bad;
	char bad_msg[KERF_ERR_MSG_MAX];
};

static ssize_t c_send(nghttp2_session *h2, const uint8_t *data, size_t len, int flags, void *user)
{
	struct ccall *c = user;
	(void)h2;
	(void)flags;
	ssize_t n = c->io->write(c->io->ctx, c->fd, data, len);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return NGHTTP2_ERR_WOULDBLOCK;
	return n < 0 ? NGHTTP2_ERR_CALLBACK_FAILURE : n;
}

static ssize_t c_body(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len,
		      uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct ccall *c = user;
	(void)h2;
	(void)id;
	(void)src;
	size_t n = c->body_len - c->body_off;
	if (n > len)
		n = len;
	memcpy(buf, c->body + c->body_off, n);
	c->body_off += n;
	if (c->body_off == c->body_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int pct_decode(char *out, size_t size, const uint8_t *v, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 1 < size; i++) {
		unsigned hi, lo;
		if (v[i] == '%' && i + 2 < len && sscanf((const char *)v + i + 1, "%1x%1x", &hi, &lo) == 2) {
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[n++] = (char)v[i];
		}
	}
	out[n] = '\0';
	return 0;
}

static int c_header(nghttp2_session *h2, const nghttp2_frame *f, const uint8_t *name,
		    size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		    void *user)
{
	struct ccall *c = user;
	(void)h2;
	(void)f;
	(void)flags;
	if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
		int st = 0;
		for (size_t i = 0; i < valuelen && i < 3; i++)
			st = st * 10 + (value[i] >= '0' && value[i] <= '9' ? value[i] - '0' : 0);
		c->status = st;
	} else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
		pct_decode(c->message, sizeof(c->message), value, valuelen);
	} else if (namelen == 7 && memcmp(name, ":status", 7) == 0 &&
		   !(valuelen == 3 && memcmp(value, "200", 3) == 0)) {
		c->bad = 1;
		snprintf(c->bad_msg, sizeof(c->bad_msg), "HTTP status %.*s, not 200",
			 (int)(valuelen < 8 ? valuelen : 8), (const char *)value);
	}
	return 0;
}

static int c_msg(void *arg, const uint8_t *msg, size_t len)
{
	struct ccall *c = arg;
	if (c->n_msgs++ > 0)
		return -KERF_EPARSE;
	return kerf_buf_add(c->resp, msg, len);
}

static int c_data(nghttp2_session *h2, uint8_t flags, int32_t id, const uint8_t *data,
		  size_t len, void *user)
{
	struct ccall *c = user;
	struct kerf_err err = { 0 };
	(void)h2;
	(void)flags;
	(void)id;
	if (c->bad)
		return 0;
	if (kerf_grpc_reader_feed(&c->reader, data, len, c_msg, c, &err) < 0) {
		c->bad = 1;
		snprintf(c->bad_msg, sizeof(c->bad_msg), "%s",
			 err.msg[0] ? err.msg : "response: more than one message, or too long");
	}
	return 0;
}

static int c_close(nghttp2_session *h2, int32_t id, uint32_t code, void *user)
{
	struct ccall *c = user;
	(void)h2;
	(void)id;
	if (code != NGHTTP2_NO_ERROR && c->status < 0 && !c->bad) {
		c->bad = 1;
		snprintf(c->bad_msg, sizeof(c->bad_msg), "stream reset: %s",
			 nghttp2_http2_strerror(code));
	}
	c->closed = 1;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the session until the stream closes, the peer goes or time is up. */
static int c_loop(nghttp2_session *h2, struct ccall *c, const struct kerf_grpc_client_opts *o,
		  const char *method, struct kerf_err *err)
{
	int64_t deadline = now_ms() + o->timeout_ms;
	uint8_t buf[16384];

	while (!c->closed) {
		if (nghttp2_session_send(h2) != 0)
			return kerf_err_set(err, -KERF_ETRANSPORT, "%s: write failed", method);
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return kerf_err_set(err, -KERF_ETIMEDOUT, "%s: no answer in %d ms", method,
					    o->timeout_ms);
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		if (nghttp2_session_want_write(h2))
			p.events |= POLLOUT;
		int rc = poll(&p, 1, o->tick ? (left < 20 ? (int)left : 20) : (int)left);
		if (rc < 0 && errno != EINTR)
			return kerf_err_set(err, -KERF_EIO, "%s: poll: %s", method, strerror(errno));
		if (rc > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = c->io->read(c->io->ctx, c->fd, buf, sizeof(buf));
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
				return kerf_err_set(err, -KERF_ETRANSPORT,
						    "%s: the server closed the connection", method);
			if (n > 0 && nghttp2_session_mem_recv(h2, buf, (size_t)n) < 0)
				return kerf_err_set(err, -KERF_EPARSE, "%s: malformed HTTP/2", method);
		}
		if (o->tick)
			o->tick(o->tick_arg);
	}
	return 0;
}

int kerf_grpc_unary_call(const char *sock_path, const char *method,
			 const uint8_t *req, size_t len, struct kerf_buf *resp,
			 const struct kerf_grpc_client_opts *opts, struct kerf_err *err)
{
	struct ccall c = { .status = -1, .resp = resp };
	nghttp2_session_callbacks *cb;
	nghttp2_session *h2 = NULL;
	uint8_t *body;
	int rc;

	if (len > UINT32_MAX || len > opts->max_msg_bytes)
		return kerf_err_set(err, -KERF_ELIMIT, "%s: request of %zu bytes too long", method, len);
	body = malloc(len + KERF_GRPC_PREFIX_BYTES);
	if (!body)
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory", method);
	kerf_grpc_prefix_write(body, (uint32_t)len);
	if (len)
		memcpy(body + KERF_GRPC_PREFIX_BYTES, req, len);
	c.body = body;
	c.body_len = len + KERF_GRPC_PREFIX_BYTES;
	c.io = opts->io ? opts->io : &kerf_grpc_io_posix;
	kerf_grpc_reader_init(&c.reader, opts->max_msg_bytes);
	c.fd = kerf_grpc_unix_connect(sock_path, err);
	if (c.fd < 0) {
		rc = c.fd;
		goto out;
	}
	if (nghttp2_session_callbacks_new(&cb) != 0) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory", method);
		goto out;
	}
	nghttp2_session_callbacks_set_send_callback(cb, c_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, c_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, c_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, c_close);
	rc = nghttp2_session_client_new(&h2, cb, &c);
	nghttp2_session_callbacks_del(cb);
	if (rc != 0) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory", method);
		goto out;
	}
	nghttp2_submit_settings(h2, NGHTTP2_FLAG_NONE, NULL, 0);
	nghttp2_nv nv[] = {
		{ (uint8_t *)":method", (uint8_t *)"POST", 7, 4, 0 },
		{ (uint8_t *)":scheme", (uint8_t *)"http", 7, 4, 0 },
		{ (uint8_t *)":path", (uint8_t *)method, 5, strlen(method), 0 },
		{ (uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, 0 },
		{ (uint8_t *)"te", (uint8_t *)"trailers", 2, 8, 0 },
	};
	nghttp2_data_provider prd = { .read_callback = c_body };
	if (nghttp2_submit_request(h2, NULL, nv, sizeof(nv) / sizeof(nv[0]), &prd, &c) < 0) {
		rc = kerf_err_set(err, -KERF_EINVAL, "%s: request refused by nghttp2", method);
		goto out;
	}
	rc = c_loop(h2, &c, opts, method, err);
	if (rc < 0)
		goto out;
	if (c.bad) {
		rc = kerf_err_set(err, -KERF_EPARSE, "%s: %s", method, c.bad_msg);
	} else if (c.status < 0) {
		rc = kerf_err_set(err, -KERF_EPARSE, "%s: the answer carried no grpc-status", method);
	} else {
		rc = c.status;
		if (rc == KERF_GRPC_OK && (c.n_msgs != 1 || !kerf_grpc_reader_idle(&c.reader)))
			rc = kerf_err_set(err, -KERF_EPARSE, "%s: %d response messages, not one",
					  method, c.n_msgs);
		else if (rc != KERF_GRPC_OK)
			kerf_err_set(err, -KERF_EHTTP, "%s: %s: %s", method,
				     kerf_grpc_status_name(rc), c.message);
	}
out:
	if (h2)
		nghttp2_session_del(h2);
	if (c.fd >= 0)
		close(c.fd);
	kerf_grpc_reader_free(&c.reader);
	free(body);
	return rc;
}
