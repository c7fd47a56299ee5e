/*
 * proxy: libmicrohttpd glue and a request's way through: the token
 * checked, a fault drawn, the latency, then an injected answer or the
 * request forwarded (a watch streamed, see stream.c).  One thread per
 * connection, as kerf's test server: a watch holds its own thread.
 */
#include "faultproxy/faultproxy_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

enum { MAX_REQUEST_BYTES = 8 << 20 };

/* A request being received (libmicrohttpd's per-request pointer). */
struct fp_req {
	char *uri;                  /* raw, with the query */
	bool started;
	struct kerf_buf body;
};

struct bind_count {
	unsigned n;
	char key[];                 /* "ns/name" */
};

static void *uri_cb(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct fp_req *rq = calloc(1, sizeof(*rq));

	(void)cls;
	(void)conn;
	if (!rq)
		return NULL;
	rq->uri = kerf_strdup(uri);
	kerf_buf_init(&rq->body, MAX_REQUEST_BYTES);
	return rq;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);

	return v ? v : "";
}

static void add(struct kerf_fault_proxy *p, uint64_t *counter)
{
	pthread_mutex_lock(&p->mu);
	(*counter)++;
	pthread_mutex_unlock(&p->mu);
}

/* A binding answered 201: counted for its pod, logged. */
static void bind_created(struct kerf_fault_proxy *p, const struct fp_path *path,
			 const char *name, const char *node)
{
	char key[320];
	struct bind_count *b;

	snprintf(key, sizeof(key), "%s/%s", path->ns, name);
	pthread_mutex_lock(&p->mu);
	p->counts.binds_created++;
	b = kerf_map_get_str(&p->binds, key);
	if (!b && (b = calloc(1, sizeof(*b) + strlen(key) + 1))) {
		memcpy(b->key, key, strlen(key) + 1);
		if (kerf_map_put_str(&p->binds, b->key, b) < 0) {
			free(b);
			b = NULL;
		}
	}
	if (b)
		b->n++;
	if (p->bind_log) {
		fprintf(p->bind_log, "%s %s\n", key, node);
		fflush(p->bind_log);
	}
	pthread_mutex_unlock(&p->mu);
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned code,
			      const char *ctype, char *body, size_t len,
			      const char *retry_after, const char *warnings)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (ctype && *ctype)
		MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	if (retry_after && *retry_after)
		MHD_add_response_header(r, "Retry-After", retry_after);
	while (warnings && *warnings) {
		size_t n = strcspn(warnings, "\n");
		char w[1024];

		snprintf(w, sizeof(w), "%.*s", (int)n, warnings);
		MHD_add_response_header(r, "Warning", w);
		warnings += n + (warnings[n] == '\n');
	}
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_status(struct MHD_Connection *conn, unsigned code,
				     char *body, size_t len,
				     const char *retry_after)
{
	return answer(conn, code, "application/json", body, len, retry_after, NULL);
}

static enum MHD_Result answer_stream(struct MHD_Connection *conn,
				     struct fp_stream *s, const char *ctype)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!s)
		return MHD_NO;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024,
					      kerf_fp_stream_read, s,
					      kerf_fp_stream_free);
	if (!r) {
		kerf_fp_stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* The answer kube-apiserver gives in place of the request (429, 5xx). */
static enum MHD_Result inject_error(struct kerf_fault_proxy *p,
				    struct MHD_Connection *conn,
				    enum fp_fault f, uint32_t retry_after_s)
{
	char ra[16];
	size_t len = 0;
	uint64_t k;
	char *body;

	if (f == FP_THROTTLE) {
		/* API Priority and Fairness turning a request away */
		json_t *d = json_object();

		add(p, &p->counts.throttled);
		json_object_set_new(d, "retryAfterSeconds", json_integer(retry_after_s));
		snprintf(ra, sizeof(ra), "%u", retry_after_s);
		body = kerf_fp_status_body(429, "TooManyRequests",
					   "Too many requests, please try again later.",
					   d, &len);
		return answer_status(conn, 429, body, len, ra);
	}
	pthread_mutex_lock(&p->mu);
	k = p->nr_5xx++ % 3;
	p->counts.server_errors[k]++;
	pthread_mutex_unlock(&p->mu);
	if (k == 0) {
		json_t *d = json_object(), *causes = json_array(), *c = json_object();

		json_object_set_new(c, "message", json_string("kerf-fault-proxy: injected"));
		json_array_append_new(causes, c);
		json_object_set_new(d, "causes", causes);
		body = kerf_fp_status_body(500, "InternalError",
					   "Internal error occurred: kerf-fault-proxy: injected",
					   d, &len);
		return answer_status(conn, 500, body, len, NULL);
	}
	if (k == 1) {
		body = kerf_fp_status_body(503, "ServiceUnavailable",
					   "the server is currently unable to handle the request",
					   NULL, &len);
		return answer_status(conn, 503, body, len, NULL);
	}
	/* the server's request timeout filter */
	body = kerf_fp_status_body(504, "Timeout",
				   "Timeout: request did not complete within requested timeout - context deadline exceeded",
				   json_object(), &len);
	return answer_status(conn, 504, body, len, NULL);
}

/* metadata.name and target.name of a request body, when it has them. */
static void body_names(const struct kerf_buf *b, char *name, size_t n,
		       char *node, size_t m)
{
	json_t *j = b->len ? json_loadb(b->data, b->len, 0, NULL) : NULL;

	snprintf(name, n, "%s", json_string_value(json_object_get(
		json_object_get(j, "metadata"), "name")) ?: "");
	snprintf(node, m, "%s", json_string_value(json_object_get(
		json_object_get(j, "target"), "name")) ?: "");
	json_decref(j);
}

static enum MHD_Result forward(struct kerf_fault_proxy *p,
			       struct MHD_Connection *conn, const char *method,
			       struct fp_req *rq, const struct fp_path *path,
			       bool binding, bool conflict_after)
{
	struct fp_upstream u;
	enum MHD_Result ret;
	char name[254], node[254];
	size_t len;
	char *body;

	if (kerf_fp_upstream_init(&u, p, method, rq->uri,
				  header(conn, "Content-Type"),
				  header(conn, "Accept"),
				  header(conn, "User-Agent"), rq->body.data,
				  rq->body.len, false) < 0 ||
	    kerf_fp_upstream_run(&u) < 0) {
		/* the upstream is gone: so is this connection */
		kerf_fp_upstream_release(&u);
		add(p, &p->counts.upstream_errors);
		return MHD_NO;
	}
	add(p, &p->counts.forwarded);
	if (binding && u.status == 201) {
		body_names(&rq->body, name, sizeof(name), node, sizeof(node));
		bind_created(p, path, path->name[0] ? path->name : name, node);
		if (conflict_after) {
			/* it landed, but kerf hears what a retry would */
			kerf_fp_upstream_release(&u);
			add(p, &p->counts.conflicts);
			add(p, &p->counts.conflicts_forwarded);
			body = kerf_fp_conflict_body(path, method, name, node, &len);
			return answer_status(conn, 409, body, len, NULL);
		}
	}
	body = kerf_buf_detach(&u.body, &len);
	if (!body)
		body = kerf_strdup("");
	ret = answer(conn, (unsigned)u.status, u.ctype, body, len,
		     u.retry_after, kerf_buf_str(&u.warnings));
	kerf_fp_upstream_release(&u);
	return ret;
}

static enum MHD_Result forward_watch(struct kerf_fault_proxy *p,
				     struct MHD_Connection *conn,
				     struct fp_req *rq,
				     const struct kerf_fault_rates *rates,
				     const char *rv)
{
	struct fp_upstream *u = malloc(sizeof(*u));
	struct fp_stream *s;
	char ctype[128];

	if (!u)
		return MHD_NO;
	if (kerf_fp_upstream_init(u, p, "GET", rq->uri, NULL,
				  header(conn, "Accept"),
				  header(conn, "User-Agent"), NULL, 0, true) < 0 ||
	    kerf_fp_upstream_start(u) < 0) {
		kerf_fp_upstream_release(u);
		free(u);
		add(p, &p->counts.upstream_errors);
		return MHD_NO;
	}
	add(p, &p->counts.forwarded);
	if (u->status != 200) {
		/* a refused watch: the whole answer, as any other */
		enum MHD_Result ret;
		size_t len;
		char *body;

		pthread_mutex_lock(&u->mu);
		while (!u->finished && !p->stopping) {
			pthread_mutex_unlock(&u->mu);
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
			pthread_mutex_lock(&u->mu);
		}
		body = kerf_buf_detach(&u->body, &len);
		pthread_mutex_unlock(&u->mu);
		ret = answer(conn, (unsigned)u->status, u->ctype,
			     body ? body : kerf_strdup(""), len, u->retry_after,
			     NULL);
		kerf_fp_upstream_release(u);
		free(u);
		return ret;
	}
	add(p, &p->counts.watches);
	snprintf(ctype, sizeof(ctype), "%s", u->ctype[0] ? u->ctype : "application/json");
	s = kerf_fp_stream_new(p, u, rates, rv, NULL, 0);
	if (!s) {
		kerf_fp_upstream_release(u);
		free(u);
		return MHD_NO;
	}
	return answer_stream(conn, s, ctype);
}

static bool is_true(const char *v)
{
	return !strcmp(v, "1") || !strcmp(v, "true");
}

static enum MHD_Result handle(struct kerf_fault_proxy *p,
			      struct MHD_Connection *conn, const char *method,
			      struct fp_req *rq)
{
	const char *auth = header(conn, "Authorization");
	struct kerf_fault_rates rates;
	struct fp_path path;
	char watch[8], rv[32], name[254], node[254];
	bool write, is_watch, binding;
	enum fp_fault f;
	size_t len = 0;
	char *body;

	if (strncmp(auth, "Bearer ", 7) || strcmp(auth + 7, p->token)) {
		add(p, &p->counts.unauthorized);
		body = kerf_fp_status_body(401, "Unauthorized", "Unauthorized",
					   NULL, &len);
		return answer_status(conn, 401, body, len, NULL);
	}
	kerf_fp_path_parse(rq->uri, &path);
	kerf_fp_query(rq->uri, "watch", watch, sizeof(watch));
	kerf_fp_query(rq->uri, "resourceVersion", rv, sizeof(rv));
	is_watch = !strcmp(method, "GET") && is_true(watch);
	write = !strcmp(method, "POST") || !strcmp(method, "PUT") ||
		!strcmp(method, "PATCH");
	binding = !strcmp(method, "POST") &&
		  (!strcmp(path.sub, "binding") ||
		   (!strcmp(path.resource, "bindings") && !path.name[0]));
	pthread_mutex_lock(&p->mu);
	p->counts.requests++;
	rates = p->rates;
	f = kerf_fp_draw(p, write, is_watch && rv[0] && strcmp(rv, "0"));
	if (rates.latency_ms)
		p->counts.delayed++;
	pthread_mutex_unlock(&p->mu);
	if (rates.latency_ms) {
		struct timespec ts = {
			.tv_sec = rates.latency_ms / 1000,
			.tv_nsec = (long)(rates.latency_ms % 1000) * 1000000,
		};

		nanosleep(&ts, NULL);
	}
	switch (f) {
	case FP_THROTTLE:
	case FP_SERVER_ERROR:
		return inject_error(p, conn, f,
				    rates.retry_after_s ? rates.retry_after_s : 1);
	case FP_CONFLICT:
		if (binding && rates.conflict_after_forward)
			return forward(p, conn, method, rq, &path, true, true);
		add(p, &p->counts.conflicts);
		body_names(&rq->body, name, sizeof(name), node, sizeof(node));
		body = kerf_fp_conflict_body(&path, method, name, node, &len);
		return answer_status(conn, 409, body, len, NULL);
	case FP_GONE: {
		char cur[40];

		/* HTTP 200 and one ERROR event, as the real server (watch/) */
		add(p, &p->counts.gone_at_start);
		snprintf(cur, sizeof(cur), "%s0", rv);
		body = kerf_fp_expired_line(rv, cur, &len);
		return answer_stream(conn, body ? kerf_fp_stream_new(p, NULL, &rates, rv, body, len)
						: NULL, "application/json");
	}
	case FP_NONE:
		break;
	}
	if (is_watch)
		return forward_watch(p, conn, rq, &rates, rv);
	return forward(p, conn, method, rq, &path, binding, false);
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
				 const char *url, const char *method,
				 const char *version, const char *upload,
				 size_t *upload_size, void **con_cls)
{
	struct fp_req *rq = *con_cls;

	(void)url;
	(void)version;
	if (!rq || !rq->uri)
		return MHD_NO;
	if (!rq->started) {
		rq->started = true;
		return MHD_YES;
	}
	if (*upload_size) {
		if (kerf_buf_add(&rq->body, upload, *upload_size) < 0)
			return MHD_NO; /* too large for any API server */
		*upload_size = 0;
		return MHD_YES;
	}
	return handle(cls, conn, method, rq);
}

static void completed_cb(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct fp_req *rq = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rq) {
		free(rq->uri);
		kerf_buf_release(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

int kerf_fault_proxy_start(const struct kerf_fault_proxy_opts *opts,
			   struct kerf_fault_proxy **out, struct kerf_err *err)
{
	struct kerf_fault_proxy *p;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *di;
	int rc;

	*out = NULL;
	if (!opts->upstream || !opts->token || !*opts->token ||
	    !opts->tls_cert_pem || !opts->tls_key_pem)
		return kerf_err_set(err, -KERF_EINVAL,
				    "fault proxy: an upstream config, a token, a TLS certificate and key are required");
	p = calloc(1, sizeof(*p));
	if (!p)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	pthread_mutex_init(&p->mu, NULL);
	kerf_map_init(&p->binds, true);
	p->seed = opts->seed;
	p->rates = opts->rates;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		free(p);
		return kerf_err_set(err, -KERF_ENOMEM, "fault proxy: libcurl did not start");
	}
	rc = kerf_kube_config_copy(&p->up, opts->upstream);
	if (rc < 0) {
		kerf_kube_config_init(&p->up);
		kerf_fault_proxy_stop(p);
		return kerf_err_set(err, rc, "out of memory");
	}
	rc = kerf_kube_endpoint_init(&p->ep, &p->up, err);
	if (rc < 0) {
		kerf_fault_proxy_stop(p);
		return rc;
	}
	if (!(p->token = kerf_strdup(opts->token)) ||
	    !(p->cert = kerf_strdup(opts->tls_cert_pem)) ||
	    !(p->key = kerf_strdup(opts->tls_key_pem))) {
		kerf_fault_proxy_stop(p);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	if (opts->bind_log_path && !(p->bind_log = fopen(opts->bind_log_path, "a"))) {
		kerf_fault_proxy_stop(p);
		return kerf_err_set(err, -KERF_EIO, "fault proxy: cannot open the bind log");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(opts->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->daemon = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
					     MHD_USE_INTERNAL_POLLING_THREAD |
					     MHD_USE_TLS,
				     0, NULL, NULL, access_cb, p,
				     MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_URI_LOG_CALLBACK, uri_cb, p,
				     MHD_OPTION_NOTIFY_COMPLETED, completed_cb, p,
				     MHD_OPTION_HTTPS_MEM_CERT, p->cert,
				     MHD_OPTION_HTTPS_MEM_KEY, p->key,
				     MHD_OPTION_END);
	if (!p->daemon) {
		kerf_fault_proxy_stop(p);
		return kerf_err_set(err, -KERF_EIO,
				    "fault proxy: cannot listen on 127.0.0.1:%u (or the TLS certificate or key is unusable)",
				    (unsigned)opts->port);
	}
	di = MHD_get_daemon_info(p->daemon, MHD_DAEMON_INFO_BIND_PORT);
	p->port = di ? di->port : opts->port;
	snprintf(p->url, sizeof(p->url), "https://127.0.0.1:%u", (unsigned)p->port);
	*out = p;
	return 0;
}

void kerf_fault_proxy_stop(struct kerf_fault_proxy *p)
{
	void *v;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_mutex_unlock(&p->mu);
	if (p->daemon)
		MHD_stop_daemon(p->daemon);
	for (size_t i = 0; (v = kerf_map_next(&p->binds, &i));)
		free(v);
	kerf_map_release(&p->binds);
	if (p->bind_log)
		fclose(p->bind_log);
	kerf_kube_endpoint_release(&p->ep);
	kerf_kube_config_release(&p->up);
	free(p->token);
	free(p->cert);
	free(p->key);
	pthread_mutex_destroy(&p->mu);
	free(p);
	curl_global_cleanup();
}

const char *kerf_fault_proxy_url(const struct kerf_fault_proxy *p)
{
	return p->url;
}

void kerf_fault_proxy_set(struct kerf_fault_proxy *p,
			  const struct kerf_fault_rates *rates)
{
	pthread_mutex_lock(&p->mu);
	p->rates = *rates;
	pthread_mutex_unlock(&p->mu);
}

void kerf_fault_proxy_counts(struct kerf_fault_proxy *p,
			     struct kerf_fault_counts *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->counts;
	pthread_mutex_unlock(&p->mu);
}

unsigned kerf_fault_proxy_binds(struct kerf_fault_proxy *p, const char *ns,
				const char *name)
{
	char key[320];
	struct bind_count *b;
	unsigned n;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	pthread_mutex_lock(&p->mu);
	b = kerf_map_get_str(&p->binds, key);
	n = b ? b->n : 0;
	pthread_mutex_unlock(&p->mu);
	return n;
}

int kerf_fault_proxy_write_kubeconfig(const struct kerf_fault_proxy *p,
				      const char *path, const char *ca_path,
				      struct kerf_err *err)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return kerf_err_set(err, -KERF_EIO, "cannot write '%s'", path);
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: kerf-fault-proxy\n"
		   "  cluster:\n    server: %s\n    certificate-authority: %s\n"
		   "users:\n- name: kerf-fault-proxy\n  user:\n    token: %s\n"
		   "contexts:\n- name: kerf-fault-proxy\n  context:\n"
		   "    cluster: kerf-fault-proxy\n    user: kerf-fault-proxy\n"
		   "current-context: kerf-fault-proxy\n",
		p->url, ca_path, p->token);
	bad = ferror(f);
	if (fclose(f) != 0 || bad)
		return kerf_err_set(err, -KERF_EIO, "cannot write '%s'", path);
	return 0;
}
