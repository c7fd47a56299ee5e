/*
 * server: a gRPC server on a unix socket, on nghttp2 (server.h).
 */
#include "grpc/server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#include "grpc/frame.h"
#include "grpc/wire.h"

struct conn;

struct kerf_grpc_call {
	struct conn *conn;
	int32_t stream_id;
	char path[128];
	const struct kerf_grpc_route *route;
	struct kerf_grpc_reader reader;
	uint8_t *req;                 /* the request message, once read */
	size_t req_len;
	int n_msgs;
	int bad;                      /* a refusal while reading: status */
	char bad_msg[KERF_ERR_MSG_MAX];
	int streaming;                /* response headers sent, data provider on */
	struct kerf_buf out;          /* prefixed messages not yet sent */
	size_t out_off;
	int finished;                 /* trailers due after out */
	int status;
	char message[KERF_ERR_MSG_MAX];
	struct kerf_grpc_call *next;
};

struct conn {
	struct kerf_grpc_server *srv;
	int fd;
	nghttp2_session *h2;
	struct kerf_grpc_call *calls;
	size_t n_calls;
	int dead;
};

struct kerf_grpc_server {
	int fd;
	char path[108];
	const struct kerf_grpc_route *routes;
	size_t n_routes;
	size_t max_msg_bytes;
	const struct kerf_grpc_io_ops *io;
	struct conn *conns[KERF_GRPC_MAX_CONNS];
	size_t n_conns;
};

static ssize_t posix_read(void *ctx, int fd, void *buf, size_t len)
{
	(void)ctx;
	return read(fd, buf, len);
}

static ssize_t posix_write(void *ctx, int fd, const void *buf, size_t len)
{
	(void)ctx;
	return send(fd, buf, len, MSG_NOSIGNAL);
}

const struct kerf_grpc_io_ops kerf_grpc_io_posix = { posix_read, posix_write, NULL };

static void call_free(struct kerf_grpc_call *c)
{
	kerf_grpc_reader_free(&c->reader);
	kerf_buf_release(&c->out);
	free(c->req);
	free(c);
}

static struct kerf_grpc_call *call_of(struct conn *cn, int32_t id)
{
	return nghttp2_session_get_stream_user_data(cn->h2, id);
}

static ssize_t on_send(nghttp2_session *h2, const uint8_t *data, size_t len,
		       int flags, void *user)
{
	struct conn *cn = user;
	(void)h2;
	(void)flags;
	ssize_t n = cn->srv->io->write(cn->srv->io->ctx, cn->fd, data, len);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return NGHTTP2_ERR_WOULDBLOCK;
	if (n < 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *cn = user;
	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	if (cn->n_calls >= KERF_GRPC_MAX_CALLS) {
		nghttp2_submit_rst_stream(h2, NGHTTP2_FLAG_NONE, f->hd.stream_id,
					  NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	struct kerf_grpc_call *c = calloc(1, sizeof(*c));
	if (!c)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	c->conn = cn;
	c->stream_id = f->hd.stream_id;
	kerf_grpc_reader_init(&c->reader, cn->srv->max_msg_bytes);
	kerf_buf_init(&c->out, 0);
	c->next = cn->calls;
	cn->calls = c;
	cn->n_calls++;
	nghttp2_session_set_stream_user_data(h2, f->hd.stream_id, c);
	return 0;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *f,
		     const uint8_t *name, size_t namelen, const uint8_t *value,
		     size_t valuelen, uint8_t flags, void *user)
{
	struct conn *cn = user;
	(void)h2;
	(void)flags;
	struct kerf_grpc_call *c = call_of(cn, f->hd.stream_id);
	if (!c || f->hd.type != NGHTTP2_HEADERS)
		return 0;
	if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		if (valuelen >= sizeof(c->path)) {
			c->bad = KERF_GRPC_UNIMPLEMENTED;
			snprintf(c->bad_msg, sizeof(c->bad_msg), ":path: %zu bytes, too long", valuelen);
			return 0;
		}
		memcpy(c->path, value, valuelen);
		c->path[valuelen] = '\0';
	}
	return 0;
}

static int on_msg(void *arg, const uint8_t *msg, size_t len)
{
	struct kerf_grpc_call *c = arg;
	if (c->n_msgs++ > 0)
		return -KERF_EINVAL;
	c->req = malloc(len ? len : 1);
	if (!c->req)
		return -KERF_ENOMEM;
	memcpy(c->req, msg, len);
	c->req_len = len;
	return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t id,
		   const uint8_t *data, size_t len, void *user)
{
	struct conn *cn = user;
	(void)h2;
	(void)flags;
	struct kerf_grpc_call *c = call_of(cn, id);
	struct kerf_err err = { 0 };
	if (!c || c->bad)
		return 0;
	int rc = kerf_grpc_reader_feed(&c->reader, data, len, on_msg, c, &err);
	if (rc == -KERF_EINVAL && c->n_msgs > 1) {
		c->bad = KERF_GRPC_UNIMPLEMENTED;
		snprintf(c->bad_msg, sizeof(c->bad_msg),
			 "%.100s: more than one request message", c->path);
	} else if (rc < 0) {
		c->bad = rc == -KERF_ELIMIT ? KERF_GRPC_RESOURCE_EXHAUSTED : KERF_GRPC_INTERNAL;
		snprintf(c->bad_msg, sizeof(c->bad_msg), "%s", err.msg);
	}
	return 0;
}

static ssize_t read_out(nghttp2_session *h2, int32_t id, uint8_t *buf, size_t len,
			uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct kerf_grpc_call *c = src->ptr;
	(void)user;
	size_t have = c->out.len - c->out_off;
	if (have > 0) {
		size_t n = have < len ? have : len;
		memcpy(buf, c->out.data + c->out_off, n);
		c->out_off += n;
		if (c->out_off == c->out.len) {
			kerf_buf_reset(&c->out);
			c->out_off = 0;
		}
		return (ssize_t)n;
	}
	if (!c->finished)
		return NGHTTP2_ERR_DEFERRED;
	*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
	if (kerf_grpc_submit_trailers(h2, id, c->status, c->message) != 0)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	return 0;
}

static void respond(struct kerf_grpc_call *c, int status, const char *message)
{
	nghttp2_session *h2 = c->conn->h2;
	if (status != KERF_GRPC_OK && c->out.len == 0) {
		kerf_grpc_submit_trailers_only(h2, c->stream_id, status, message);
		return;
	}
	c->finished = 1;
	c->status = status;
	snprintf(c->message, sizeof(c->message), "%s", message ? message : "");
	nghttp2_data_provider prd = { .source.ptr = c, .read_callback = read_out };
	kerf_grpc_submit_headers(h2, c->stream_id, &prd);
}

static int append_msg(struct kerf_buf *out, const uint8_t *msg, size_t len)
{
	uint8_t prefix[KERF_GRPC_PREFIX_BYTES];
	if (len > UINT32_MAX)
		return -KERF_ELIMIT;
	kerf_grpc_prefix_write(prefix, (uint32_t)len);
	int rc = kerf_buf_add(out, prefix, sizeof(prefix));
	if (rc == 0 && len)
		rc = kerf_buf_add(out, msg, len);
	return rc;
}

static void dispatch(struct kerf_grpc_call *c)
{
	struct kerf_grpc_server *s = c->conn->srv;
	struct kerf_err err = { 0 };

	if (c->bad) {
		respond(c, c->bad, c->bad_msg);
		return;
	}
	if (!kerf_grpc_reader_idle(&c->reader) || c->n_msgs != 1) {
		respond(c, KERF_GRPC_INTERNAL, c->n_msgs ? "request message cut short"
							 : "no request message");
		return;
	}
	for (size_t i = 0; i < s->n_routes; i++)
		if (strcmp(s->routes[i].path, c->path) == 0)
			c->route = &s->routes[i];
	if (!c->route) {
		char msg[200];
		snprintf(msg, sizeof(msg), "unknown method %.150s", c->path);
		respond(c, KERF_GRPC_UNIMPLEMENTED, msg);
		return;
	}
	if (c->route->unary) {
		struct kerf_buf resp;
		kerf_buf_init(&resp, s->max_msg_bytes);
		int st = c->route->unary(c->route->arg, c->req, c->req_len, &resp, &err);
		if (st == KERF_GRPC_OK && append_msg(&c->out, (const uint8_t *)resp.data, resp.len) < 0)
			st = KERF_GRPC_RESOURCE_EXHAUSTED;
		kerf_buf_release(&resp);
		respond(c, st, err.msg);
		return;
	}
	int st = c->route->stream(c->route->arg, c->req, c->req_len, c, &err);
	if (st != KERF_GRPC_OK) {
		respond(c, st, err.msg);
		return;
	}
	c->streaming = 1;
	nghttp2_data_provider prd = { .source.ptr = c, .read_callback = read_out };
	kerf_grpc_submit_headers(c->conn->h2, c->stream_id, &prd);
}

static int on_frame_recv(nghttp2_session *h2, const nghttp2_frame *f, void *user)
{
	struct conn *cn = user;
	(void)h2;
	if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
	    !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		return 0;
	struct kerf_grpc_call *c = call_of(cn, f->hd.stream_id);
	if (c && !c->route && !c->finished)
		dispatch(c);
	return 0;
}

static int on_stream_close(nghttp2_session *h2, int32_t id, uint32_t code, void *user)
{
	struct conn *cn = user;
	(void)code;
	struct kerf_grpc_call *c = call_of(cn, id);
	if (!c)
		return 0;
	nghttp2_session_set_stream_user_data(h2, id, NULL);
	for (struct kerf_grpc_call **p = &cn->calls; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	cn->n_calls--;
	if (c->streaming && c->route && c->route->closed)
		c->route->closed(c->route->arg, c);
	call_free(c);
	return 0;
}

int kerf_grpc_call_send(struct kerf_grpc_call *call, const uint8_t *msg, size_t len)
{
	if (call->finished)
		return -KERF_EINVAL;
	int rc = append_msg(&call->out, msg, len);
	if (rc == 0)
		nghttp2_session_resume_data(call->conn->h2, call->stream_id);
	return rc;
}

void kerf_grpc_call_finish(struct kerf_grpc_call *call, int status, const char *message)
{
	if (call->finished)
		return;
	call->finished = 1;
	call->status = status;
	snprintf(call->message, sizeof(call->message), "%s", message ? message : "");
	nghttp2_session_resume_data(call->conn->h2, call->stream_id);
}

static void conn_free(struct conn *cn)
{
	/* Closing the session closes its streams: on_stream_close frees calls. */
	nghttp2_session_del(cn->h2);
	while (cn->calls) {
		struct kerf_grpc_call *c = cn->calls;
		cn->calls = c->next;
		if (c->streaming && c->route && c->route->closed)
			c->route->closed(c->route->arg, c);
		call_free(c);
	}
	close(cn->fd);
	free(cn);
}

static struct conn *conn_new(struct kerf_grpc_server *s, int fd)
{
	struct conn *cn = calloc(1, sizeof(*cn));
	nghttp2_session_callbacks *cb;
	if (!cn)
		return NULL;
	cn->srv = s;
	cn->fd = fd;
	if (nghttp2_session_callbacks_new(&cb) != 0) {
		free(cn);
		return NULL;
	}
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	int rc = nghttp2_session_server_new(&cn->h2, cb, cn);
	nghttp2_session_callbacks_del(cb);
	if (rc != 0) {
		free(cn);
		return NULL;
	}
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, KERF_GRPC_MAX_CALLS },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 16384 },
	};
	nghttp2_submit_settings(cn->h2, NGHTTP2_FLAG_NONE, iv, 2);
	return cn;
}

int kerf_grpc_server_new(struct kerf_grpc_server **out, const char *path,
			 const struct kerf_grpc_route *routes, size_t n_routes,
			 size_t max_msg_bytes, const struct kerf_grpc_io_ops *io,
			 struct kerf_err *err)
{
	struct kerf_grpc_server *s;
	int fd = kerf_grpc_unix_listen(path, err);
	if (fd < 0)
		return fd;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return kerf_err_set(err, -KERF_ENOMEM, "gRPC server: out of memory");
	}
	s->fd = fd;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->routes = routes;
	s->n_routes = n_routes;
	s->max_msg_bytes = max_msg_bytes;
	s->io = io ? io : &kerf_grpc_io_posix;
	*out = s;
	return 0;
}

void kerf_grpc_server_free(struct kerf_grpc_server *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_conns; i++)
		conn_free(s->conns[i]);
	close(s->fd);
	unlink(s->path);
	free(s);
}

const char *kerf_grpc_server_path(const struct kerf_grpc_server *s)
{
	return s->path;
}

size_t kerf_grpc_server_conns(const struct kerf_grpc_server *s)
{
	return s->n_conns;
}

/* Read what is there and answer; marks the connection dead when done. */
static void conn_io(struct conn *cn, short revents)
{
	uint8_t buf[16384];

	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		for (;;) {
			ssize_t n = cn->srv->io->read(cn->srv->io->ctx, cn->fd, buf, sizeof(buf));
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (n <= 0) {
				cn->dead = 1;
				return;
			}
			if (nghttp2_session_mem_recv(cn->h2, buf, (size_t)n) < 0) {
				cn->dead = 1;
				return;
			}
		}
	}
	if (nghttp2_session_send(cn->h2) != 0)
		cn->dead = 1;
	if (!nghttp2_session_want_read(cn->h2) && !nghttp2_session_want_write(cn->h2))
		cn->dead = 1;
}

int kerf_grpc_server_poll(struct kerf_grpc_server *s, int timeout_ms)
{
	struct pollfd pfd[KERF_GRPC_MAX_CONNS + 1];
	size_t n = 0;

	/* Flush what handlers queued since the last poll. */
	for (size_t i = 0; i < s->n_conns; i++)
		if (nghttp2_session_send(s->conns[i]->h2) != 0)
			s->conns[i]->dead = 1;
	pfd[n++] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	for (size_t i = 0; i < s->n_conns; i++) {
		short ev = POLLIN;
		if (nghttp2_session_want_write(s->conns[i]->h2))
			ev |= POLLOUT;
		pfd[n++] = (struct pollfd){ .fd = s->conns[i]->fd, .events = ev };
	}
	int rc = poll(pfd, (nfds_t)n, timeout_ms);
	if (rc < 0 && errno != EINTR)
		return -KERF_EIO;
	for (size_t i = 1; i < n && rc > 0; i++)
		if (pfd[i].revents)
			conn_io(s->conns[i - 1], pfd[i].revents);
	if (rc > 0 && (pfd[0].revents & POLLIN)) {
		int fd = accept(s->fd, NULL, NULL);
		if (fd >= 0) {
			struct conn *cn = NULL;
			if (s->n_conns < KERF_GRPC_MAX_CONNS &&
			    fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
				cn = conn_new(s, fd);
			if (cn) {
				s->conns[s->n_conns++] = cn;
				conn_io(cn, 0);
			} else {
				close(fd);
			}
		}
	}
	for (size_t i = 0; i < s->n_conns;) {
		if (s->conns[i]->dead) {
			conn_free(s->conns[i]);
			s->conns[i] = s->conns[--s->n_conns];
		} else {
			i++;
		}
	}
	return 0;
}
