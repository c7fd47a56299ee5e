/*
 * server: libmicrohttpd glue.  MHD's internal thread pool, each worker an
 * epoll loop over its share of the connections, runs the handlers
 * inline: a review is CPU work of tens of microseconds, so a hand-off to
 * another pool would cost more than it saves on 2 cores.
 *
 * A request is judged on its headers first (path, method, Content-Type,
 * Content-Length, ?timeout=), and refused then without its body being
 * read; MHD closes such a connection after the answer.  A body is then
 * gathered, bounded by bytes actually received (a chunked body has no
 * Content-Length), and handed whole to the route's handler.
 *
 * Shutdown quiesces the daemon (no new connections), waits for the
 * requests in progress, then stops it, which closes idle keep-alive
 * connections.
 */
#include "admission/server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "admission/certs.h"
#include "admission/review.h"
#include "admission/webhook_metrics.h"
#include "base/listen_addr.h"
#include "base/parse.h"

struct kerf_webhook_server {
	struct MHD_Daemon *d;
	MHD_socket quiesced;          /* the listen socket once quiesced */
	struct kerf_webhook_opts opts;
	struct kerf_webhook_route routes[KERF_WEBHOOK_ROUTES_MAX];
	char *paths[KERF_WEBHOOK_ROUTES_MAX]; /* owned */
	size_t nr_routes;
	struct kerf_webhook_counters m;
	struct kerf_webhook_certs certs;
	uint16_t port;
	atomic_int in_flight;         /* requests with a state */
	pthread_mutex_t mu;           /* stopping, for the reload thread */
	pthread_cond_t cv;
	bool stopping;
	bool reloader;                /* the reload thread runs */
	pthread_t reload_thread;
};

/* A review request between its headers and its answer. */
struct wh_req {
	struct kerf_webhook_server *s;
	size_t route;
	int64_t arrival_us;
	int64_t deadline_ms;
	struct kerf_buf body;
	bool too_large;
	bool answered;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t kerf_webhook_now_ms(void)
{
	return now_us() / 1000;
}

static void log_line(struct kerf_webhook_server *s, const char *msg)
{
	if (s->opts.log)
		s->opts.log(s->opts.log_ctx, msg);
	else
		fprintf(stderr, "kerf webhook: %s\n", msg);
}

static void certs_log(void *ctx, const char *msg)
{
	log_line(ctx, msg);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	log_line(cls, line);
}

/*
 * Queue status with body (static unless must_free, then malloc'd and
 * taken) and count it when it is an error.
 */
static enum MHD_Result reply(struct kerf_webhook_server *s,
			     struct MHD_Connection *conn, unsigned status,
			     const char *ctype, const char *body, size_t len,
			     bool must_free, const char *allow)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body,
					    must_free ? MHD_RESPMEM_MUST_FREE :
							MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free((void *)body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	if (status >= 400)
		kerf_webhook_count_http_error(&s->m, status);
	return ret;
}

static enum MHD_Result reply_text(struct kerf_webhook_server *s,
				  struct MHD_Connection *conn, unsigned status,
				  const char *text, const char *allow)
{
	return reply(s, conn, status, "text/plain; charset=utf-8", text,
		     strlen(text), false, allow);
}

/* A review answered without its handler: counted as refused. */
static enum MHD_Result refuse(struct kerf_webhook_server *s,
			      struct MHD_Connection *conn, size_t route,
			      int64_t arrival_us, unsigned status,
			      const char *text, const char *allow)
{
	enum MHD_Result ret = reply_text(s, conn, status, text, allow);

	kerf_webhook_count_request(&s->m, route, KERF_WEBHOOK_REFUSED,
				   (uint64_t)(now_us() - arrival_us));
	return ret;
}

static enum MHD_Result builtin(struct kerf_webhook_server *s,
			       struct MHD_Connection *conn, const char *url,
			       const char *method)
{
	struct kerf_buf out;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "method not allowed\n", "GET, HEAD");
	if (!strcmp(url, "/healthz"))
		return reply_text(s, conn, MHD_HTTP_OK, "ok\n", NULL);
	if (!strcmp(url, "/readyz")) {
		if (s->opts.ready && !s->opts.ready(s->opts.ready_ctx))
			return reply_text(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE,
					  "not ready\n", NULL);
		return reply_text(s, conn, MHD_HTTP_OK, "ok\n", NULL);
	}
	kerf_buf_init(&out, 0);
	if (kerf_webhook_metrics_render(s, &out) < 0) {
		kerf_buf_release(&out);
		return reply_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "out of memory\n", NULL);
	}
	{
		size_t len;
		char *text = kerf_buf_detach(&out, &len);

		return reply(s, conn, MHD_HTTP_OK,
			     "text/plain; version=0.0.4; charset=utf-8",
			     text ? text : "", len, text != NULL, NULL);
	}
}

/* "application/json", in any case, with parameters or none. */
static bool is_json(const char *ctype)
{
	size_t n = strlen("application/json");

	if (!ctype || strncasecmp(ctype, "application/json", n))
		return false;
	ctype += n;
	while (*ctype == ' ' || *ctype == '\t')
		ctype++;
	return !*ctype || *ctype == ';';
}

/* The deadline from ?timeout= (the default when absent or bad). */
static int64_t deadline_of(struct kerf_webhook_server *s,
			   struct MHD_Connection *conn, int64_t arrival_us)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						    "timeout");
	int64_t timeout_ms = s->opts.default_timeout_ms, margin_ms;

	if (t && kerf_webhook_timeout_parse(t, &timeout_ms) < 0) {
		atomic_fetch_add_explicit(&s->m.bad_timeout, 1,
					  memory_order_relaxed);
		timeout_ms = s->opts.default_timeout_ms;
	}
	margin_ms = s->opts.deadline_margin_ms;
	if (margin_ms > timeout_ms / 2)
		margin_ms = timeout_ms / 2;
	return arrival_us / 1000 + timeout_ms - margin_ms;
}

/* The headers of a review: refused now, or a state to gather the body. */
static enum MHD_Result begin(struct kerf_webhook_server *s,
			     struct MHD_Connection *conn, const char *url,
			     const char *method, void **con_cls)
{
	int64_t arrival = now_us();
	const char *clen;
	struct wh_req *rq;
	uint64_t n;
	size_t i;

	for (i = 0; i < s->nr_routes; i++)
		if (!strcmp(url, s->paths[i]))
			break;
	if (i == s->nr_routes) {
		if (!strcmp(url, "/healthz") || !strcmp(url, "/readyz") ||
		    !strcmp(url, "/metrics"))
			return builtin(s, conn, url, method);
		return reply_text(s, conn, MHD_HTTP_NOT_FOUND, "not found\n",
				  NULL);
	}
	if (strcmp(method, "POST"))
		return refuse(s, conn, i, arrival, MHD_HTTP_METHOD_NOT_ALLOWED,
			      "method not allowed: reviews are POSTed\n", "POST");
	if (!is_json(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						 MHD_HTTP_HEADER_CONTENT_TYPE)))
		return refuse(s, conn, i, arrival,
			      MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			      "Content-Type: expected application/json\n",
			      NULL);
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (clen && (kerf_parse_u64(clen, &n) < 0 ||
		     n > s->opts.body_max_bytes))
		return refuse(s, conn, i, arrival,
			      MHD_HTTP_CONTENT_TOO_LARGE,
			      "request body too large\n", NULL);
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return MHD_NO;
	rq->s = s;
	rq->route = i;
	rq->arrival_us = arrival;
	rq->deadline_ms = deadline_of(s, conn, arrival);
	kerf_buf_init(&rq->body, s->opts.body_max_bytes);
	atomic_fetch_add(&s->in_flight, 1);
	*con_cls = rq;
	return MHD_YES;
}

/* The whole body is in: the handler's answer. */
static enum MHD_Result review(struct kerf_webhook_server *s,
			      struct MHD_Connection *conn, struct wh_req *rq,
			      const char *url)
{
	const struct kerf_webhook_route *r = &s->routes[rq->route];
	struct kerf_webhook_answer ans;
	enum kerf_webhook_verdict v;
	enum MHD_Result ret;
	int rc;

	rq->answered = true;
	if (rq->too_large)
		return refuse(s, conn, rq->route, rq->arrival_us,
			      MHD_HTTP_CONTENT_TOO_LARGE,
			      "request body too large\n", NULL);
	if (kerf_webhook_now_ms() > rq->deadline_ms) {
		atomic_fetch_add_explicit(&s->m.late, 1, memory_order_relaxed);
		return refuse(s, conn, rq->route, rq->arrival_us,
			      MHD_HTTP_SERVICE_UNAVAILABLE,
			      "the review's deadline passed before it was taken up\n",
			      NULL);
	}
	memset(&ans, 0, sizeof(ans));
	rc = r->fn(r->ctx, url, kerf_buf_str(&rq->body), rq->body.len,
		   rq->deadline_ms, &ans);
	if (rc < 0 || !ans.body) {
		free(ans.body);
		ret = reply_text(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				 "the review failed\n", NULL);
		v = KERF_WEBHOOK_ERROR;
	} else {
		v = kerf_webhook_verdict_of(ans.verdict);
		if (v == KERF_WEBHOOK_DENIED)
			kerf_webhook_count_denial(&s->m, ans.rule);
		ret = reply(s, conn,
			    ans.http_status > 0 ? (unsigned)ans.http_status :
						  MHD_HTTP_OK,
			    "application/json", ans.body, ans.len, true, NULL);
	}
	kerf_webhook_count_request(&s->m, rq->route, v,
				   (uint64_t)(now_us() - rq->arrival_us));
	return ret;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
				 const char *url, const char *method,
				 const char *version, const char *upload,
				 size_t *upload_size, void **con_cls)
{
	struct kerf_webhook_server *s = cls;
	struct wh_req *rq = *con_cls;

	(void)version;
	if (!rq)
		return begin(s, conn, url, method, con_cls);
	if (rq->answered) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (kerf_buf_add(&rq->body, upload, *upload_size) < 0) {
			/*
			 * Over the limit (no Content-Length said so): read
			 * no more.  libmicrohttpd 0.9.75 refuses an answer
			 * queued mid-body, so the connection is closed; the
			 * 413 is counted all the same.
			 */
			*upload_size = 0;
			rq->too_large = true;
			kerf_buf_release(&rq->body);
			return review(s, conn, rq, url);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return review(s, conn, rq, url);
}

static void completed_cb(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct kerf_webhook_server *s = cls;
	struct wh_req *rq = *con_cls;

	(void)conn;
	(void)toe;
	if (!rq)
		return;
	kerf_buf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
	atomic_fetch_sub(&s->in_flight, 1);
}

/* Each connection shakes hands with the pair current when it arrived. */
static void connection_cb(void *cls, struct MHD_Connection *conn,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct kerf_webhook_server *s = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
		struct kerf_webhook_pair *p = kerf_webhook_certs_pin(&s->certs);

		*socket_context = p;
		if (ci && ci->tls_session)
			gnutls_session_set_ptr(ci->tls_session, p);
	} else {
		kerf_webhook_certs_unpin(&s->certs, *socket_context);
		*socket_context = NULL;
	}
}

static void *reload_main(void *arg)
{
	struct kerf_webhook_server *s = arg;
	int64_t every_ms = s->opts.reload_interval_ms;

	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += every_ms / 1000;
		ts.tv_nsec += (every_ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->stopping)
			break;
		pthread_mutex_unlock(&s->mu);
		(void)kerf_webhook_certs_check(&s->certs);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static int copy_opts(struct kerf_webhook_server *s,
		     const struct kerf_webhook_opts *o, struct kerf_err *err)
{
	struct kerf_webhook_opts *c = &s->opts;
	char shown[80];

	*c = *o;
	c->routes = NULL;
	if (!c->threads)
		c->threads = KERF_WEBHOOK_THREADS_DEFAULT;
	if (!c->max_connections)
		c->max_connections = KERF_WEBHOOK_CONNECTIONS_DEFAULT;
	if (!c->idle_timeout_s)
		c->idle_timeout_s = KERF_WEBHOOK_IDLE_TIMEOUT_S_DEFAULT;
	if (!c->reload_interval_ms)
		c->reload_interval_ms = KERF_WEBHOOK_RELOAD_INTERVAL_MS_DEFAULT;
	if (c->default_timeout_ms <= 0)
		c->default_timeout_ms = KERF_WEBHOOK_TIMEOUT_MS_DEFAULT;
	if (c->deadline_margin_ms <= 0)
		c->deadline_margin_ms = KERF_WEBHOOK_DEADLINE_MARGIN_MS_DEFAULT;
	if (c->shutdown_grace_ms <= 0)
		c->shutdown_grace_ms = KERF_WEBHOOK_SHUTDOWN_GRACE_MS_DEFAULT;
	if (!c->body_max_bytes || c->body_max_bytes > KERF_ADMISSION_BODY_MAX_BYTES)
		c->body_max_bytes = KERF_ADMISSION_BODY_MAX_BYTES;
	if (!o->nr_routes || o->nr_routes > KERF_WEBHOOK_ROUTES_MAX || !o->routes)
		return kerf_err_set(err, -KERF_EINVAL,
				    "webhook routes: expected 1 to %d, got %zu",
				    KERF_WEBHOOK_ROUTES_MAX, o->nr_routes);
	for (size_t i = 0; i < o->nr_routes; i++) {
		const struct kerf_webhook_route *r = &o->routes[i];
		const char *p = r->path ? r->path : "";

		if (p[0] != '/' || strchr(p, '?') || !r->fn ||
		    !strcmp(p, "/healthz") || !strcmp(p, "/readyz") ||
		    !strcmp(p, "/metrics"))
			return kerf_err_set(err, -KERF_EINVAL,
					    "webhook route '%s': expected a path starting with '/', without a query, not /healthz, /readyz or /metrics, and a handler",
					    kerf_escape(shown, sizeof(shown), p));
		for (size_t j = 0; j < i; j++)
			if (!strcmp(s->paths[j], p))
				return kerf_err_set(err, -KERF_EINVAL,
						    "webhook route '%s': listed twice",
						    kerf_escape(shown, sizeof(shown), p));
		s->paths[i] = kerf_strdup(p);
		if (!s->paths[i])
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		s->routes[i] = *r;
		s->routes[i].path = s->paths[i];
		s->nr_routes = i + 1;
	}
	return 0;
}

static void server_free(struct kerf_webhook_server *s)
{
	for (size_t i = 0; i < s->nr_routes; i++)
		free(s->paths[i]);
	kerf_webhook_counters_release(&s->m);
	kerf_webhook_certs_release(&s->certs);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static struct MHD_Daemon *daemon_start(struct kerf_webhook_server *s,
				       struct sockaddr_in *sa)
{
	struct MHD_OptionItem tls[2] = {
		{ MHD_OPTION_END, 0, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (s->opts.tls_priorities)
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						  (void *)s->opts.tls_priorities };
	return MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			MHD_USE_TLS | MHD_USE_ITC | MHD_USE_ERROR_LOG,
		0, NULL, NULL, access_cb, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)sa,
		MHD_OPTION_THREAD_POOL_SIZE, s->opts.threads,
		MHD_OPTION_CONNECTION_LIMIT, s->opts.max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, s->opts.idle_timeout_s,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
		MHD_OPTION_HTTPS_CERT_CALLBACK, kerf_webhook_certs_retrieve,
		MHD_OPTION_NOTIFY_CONNECTION, connection_cb, s,
		MHD_OPTION_NOTIFY_COMPLETED, completed_cb, s,
		MHD_OPTION_ARRAY, tls,
		MHD_OPTION_END);
}

int kerf_webhook_start(const struct kerf_webhook_opts *opts,
		       struct kerf_webhook_server **out, struct kerf_err *err)
{
	struct kerf_webhook_server *s;
	const union MHD_DaemonInfo *di;
	struct sockaddr_in sa;
	const char *paths[KERF_WEBHOOK_ROUTES_MAX];
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	rc = kerf_listen_addr_parse(opts->addr, &sa, err);
	if (rc < 0)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	pthread_mutex_init(&s->mu, NULL);
	/* the reload thread's waits are on CLOCK_MONOTONIC, not the
	 * default CLOCK_REALTIME (against which they would never wait) */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->quiesced = MHD_INVALID_SOCKET;
	rc = copy_opts(s, opts, err);
	for (size_t i = 0; i < s->nr_routes; i++)
		paths[i] = s->paths[i];
	if (rc == 0 &&
	    kerf_webhook_counters_init(&s->m, paths, s->nr_routes) < 0)
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	if (rc == 0)
		rc = kerf_webhook_certs_init(&s->certs, opts->cert_path,
					     opts->key_path, certs_log, s, err);
	if (rc < 0) {
		server_free(s);
		return rc;
	}
	s->d = daemon_start(s, &sa);
	if (!s->d) {
		server_free(s);
		return kerf_err_set(err, -KERF_EIO,
				    "webhook: cannot listen on %s", opts->addr);
	}
	di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = di ? di->port : ntohs(sa.sin_port);
	if (s->opts.reload_interval_ms > 0) {
		if (pthread_create(&s->reload_thread, NULL, reload_main, s)) {
			MHD_stop_daemon(s->d);
			server_free(s);
			return kerf_err_set(err, -KERF_ENOMEM,
					    "webhook: cannot start the reload thread");
		}
		s->reloader = true;
	}
	*out = s;
	return 0;
}

uint16_t kerf_webhook_port(const struct kerf_webhook_server *s)
{
	return s->port;
}

int kerf_webhook_reload_check(struct kerf_webhook_server *s)
{
	return kerf_webhook_certs_check(&s->certs);
}

int kerf_webhook_metrics_render(struct kerf_webhook_server *s,
				struct kerf_buf *out)
{
	int rc = kerf_webhook_counters_render(&s->m, out);

	if (rc == 0)
		rc = kerf_webhook_certs_render(&s->certs, out);
	return rc;
}

void kerf_webhook_stop(struct kerf_webhook_server *s)
{
	int64_t until;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->reloader)
		pthread_join(s->reload_thread, NULL);
	s->quiesced = MHD_quiesce_daemon(s->d);
	until = kerf_webhook_now_ms() + s->opts.shutdown_grace_ms;
	while (atomic_load(&s->in_flight) > 0 &&
	       kerf_webhook_now_ms() < until) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	MHD_stop_daemon(s->d);
	if (s->quiesced != MHD_INVALID_SOCKET)
		close(s->quiesced);
	server_free(s);
}
