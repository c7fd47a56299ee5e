/*
 * server: libmicrohttpd glue.  One thread per connection (a watch blocks
 * its own thread for as long as it streams; other requests carry on), an
 * internal polling thread for accepting, loopback only, optional TLS
 * through GnuTLS.  A request body is gathered whole (bounded: 413 beyond
 * max_body_bytes) before it is handled under the store's lock.
 */
#include "testapi/testapi_int.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "base/grow.h"

struct conn_state {
	struct kerf_buf body;
	bool too_large;
	bool started;
};

static enum MHD_Result param_cb(void *cls, enum MHD_ValueKind kind,
				const char *key, const char *value)
{
	struct kerf_ta_req *rq = cls;

	(void)kind;
	if (KERF_GROW(rq->params, rq->alloc_params, rq->nr_params + 1) < 0)
		return MHD_NO;
	rq->params[rq->nr_params].key = kerf_strdup(key ? key : "");
	rq->params[rq->nr_params].val = kerf_strdup(value ? value : "");
	rq->nr_params++;
	return MHD_YES;
}

static void req_release(struct kerf_ta_req *rq)
{
	size_t i;

	for (i = 0; i < rq->nr_params; i++) {
		free(rq->params[i].key);
		free(rq->params[i].val);
	}
	free(rq->params);
	free(rq->path_copy);
}

static void resp_release(struct kerf_ta_resp *rs)
{
	size_t i;

	free(rs->body);
	for (i = 0; i < rs->nr_warnings; i++)
		free(rs->warnings[i]);
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    name);

	return v ? v : "";
}

static enum MHD_Result send_resp(struct MHD_Connection *conn,
				 struct kerf_ta_resp *rs)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char ra[16];
	size_t i;

	if (rs->watch) {
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
						      32 * 1024,
						      kerf_ta_watch_read,
						      rs->watch,
						      kerf_ta_watch_free);
		if (!r) {
			kerf_ta_watch_free(rs->watch);
			return MHD_NO;
		}
		rs->watch = NULL;
	} else {
		r = MHD_create_response_from_buffer(rs->len, rs->body,
						    MHD_RESPMEM_MUST_FREE);
		if (!r)
			return MHD_NO;
		rs->body = NULL;
	}
	MHD_add_response_header(r, "Content-Type", rs->ctype);
	MHD_add_response_header(r, "Cache-Control", "no-cache, private");
	for (i = 0; i < rs->nr_warnings; i++)
		MHD_add_response_header(r, "Warning", rs->warnings[i]);
	if (rs->retry_after_s) {
		snprintf(ra, sizeof(ra), "%u", rs->retry_after_s);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	ret = MHD_queue_response(conn, rs->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn,
				 const char *url, const char *method,
				 const char *version, const char *upload,
				 size_t *upload_size, void **con_cls)
{
	struct kerf_testapi *ta = cls;
	struct conn_state *cs = *con_cls;
	struct kerf_ta_req rq;
	struct kerf_ta_resp rs;
	enum MHD_Result ret;

	(void)version;
	if (!cs) {
		cs = calloc(1, sizeof(*cs));
		if (!cs)
			return MHD_NO;
		kerf_buf_init(&cs->body, ta->opts.max_body_bytes);
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!cs->too_large &&
		    kerf_buf_add(&cs->body, upload, *upload_size) < 0)
			cs->too_large = true;
		*upload_size = 0;
		return MHD_YES;
	}
	memset(&rq, 0, sizeof(rq));
	memset(&rs, 0, sizeof(rs));
	rq.method = method;
	rq.path = url;
	rq.ctype = header(conn, "Content-Type");
	rq.accept = header(conn, "Accept");
	rq.user_agent = header(conn, "User-Agent");
	rq.body = (char *)kerf_buf_str(&cs->body);
	rq.len = cs->body.len;
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, param_cb, &rq);
	if (cs->too_large) {
		kerf_ta_status(&rs, 413, "RequestEntityTooLarge",
			       "Request entity too large: limit is 3145728",
			       json_object());
	} else {
		const char *auth = header(conn, "Authorization");

		if (ta->token && *auth &&
		    (strncmp(auth, "Bearer ", 7) || strcmp(auth + 7, ta->token)))
			kerf_ta_status(&rs, 401, "Unauthorized", "Unauthorized",
				       NULL);
		else {
			rq.anonymous = ta->token && !*auth;
			kerf_ta_handle(ta, &rq, &rs);
		}
	}
	if (!rs.status)
		kerf_ta_status(&rs, 500, "InternalError", "internal error",
			       NULL);
	ret = send_resp(conn, &rs);
	resp_release(&rs);
	req_release(&rq);
	return ret;
}

static void completed_cb(void *cls, struct MHD_Connection *conn,
			 void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (cs) {
		kerf_buf_release(&cs->body);
		free(cs);
		*con_cls = NULL;
	}
}

int kerf_testapi_start(const struct kerf_testapi_opts *opts,
		       struct kerf_testapi **out, struct kerf_err *err)
{
	struct kerf_testapi *ta;
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *di;
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_INTERNAL_POLLING_THREAD;
	struct MHD_Daemon *d;
	int rc;

	*out = NULL;
	if (!opts->tls_cert_pem != !opts->tls_key_pem)
		return kerf_err_set(err, -KERF_EINVAL,
				    "TLS needs both a certificate and a key");
	ta = calloc(1, sizeof(*ta));
	if (!ta)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	ta->opts = *opts;
	if (!ta->opts.bookmark_interval_ms)
		ta->opts.bookmark_interval_ms = 60000;
	if (!ta->opts.too_large_rv_wait_ms)
		ta->opts.too_large_rv_wait_ms = 3000;
	if (!ta->opts.max_body_bytes)
		ta->opts.max_body_bytes = 3 * 1024 * 1024;
	curl_global_init(CURL_GLOBAL_DEFAULT); /* webhook calls */
	rc = kerf_ta_store_init(&ta->st, opts->watch_window);
	if (rc < 0) {
		free(ta);
		return kerf_err_set(err, rc, "cannot set up the store");
	}
	if ((opts->token && !(ta->token = kerf_strdup(opts->token))) ||
	    (opts->tls_cert_pem &&
	     (!(ta->cert = kerf_strdup(opts->tls_cert_pem)) ||
	      !(ta->key = kerf_strdup(opts->tls_key_pem)))) ||
	    kerf_ta_kinds_builtin(&ta->st) < 0) {
		kerf_testapi_stop(ta);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(opts->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ta->cert)
		flags |= MHD_USE_TLS;
	if (ta->cert)
		d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, ta,
				     MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, completed_cb,
				     ta, MHD_OPTION_HTTPS_MEM_CERT, ta->cert,
				     MHD_OPTION_HTTPS_MEM_KEY, ta->key,
				     MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, ta,
				     MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_NOTIFY_COMPLETED, completed_cb,
				     ta, MHD_OPTION_END);
	if (!d) {
		kerf_testapi_stop(ta);
		return kerf_err_set(err, -KERF_EIO,
				    "cannot listen on 127.0.0.1:%u%s",
				    (unsigned)opts->port,
				    opts->tls_cert_pem ?
					    " (or the TLS certificate or key is unusable)" :
					    "");
	}
	ta->daemon = d;
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	ta->port = di ? di->port : opts->port;
	snprintf(ta->url, sizeof(ta->url), "%s://127.0.0.1:%u",
		 ta->cert ? "https" : "http", (unsigned)ta->port);
	*out = ta;
	return 0;
}

const char *kerf_testapi_url(const struct kerf_testapi *ta)
{
	return ta->url;
}

uint16_t kerf_testapi_port(const struct kerf_testapi *ta)
{
	return ta->port;
}

void kerf_testapi_stop(struct kerf_testapi *ta)
{
	if (!ta)
		return;
	pthread_mutex_lock(&ta->st.lock);
	ta->st.stopping = true;
	pthread_cond_broadcast(&ta->st.cond);
	pthread_mutex_unlock(&ta->st.lock);
	if (ta->daemon)
		MHD_stop_daemon(ta->daemon);
	kerf_ta_store_release(&ta->st);
	free(ta->token);
	free(ta->cert);
	free(ta->key);
	free(ta);
}
