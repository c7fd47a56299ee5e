#include "serve/endpoints.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "base/buf.h"
#include "base/listen_addr.h"
#include "base/parse.h"
#include "serve/api.h"
#include "serve/metrics.h"
#include "serve/ui.h"

struct kerf_endpoints {
	struct MHD_Daemon *d;
	const struct kerf_controller *c;
	const struct kerf_kube_counters *kc;   /* NULL: none */
	int64_t now_ms;
	int (*extra)(void *ctx, struct kerf_buf *b);
	void *extra_ctx;
};

void kerf_endpoints_extra_metrics(struct kerf_endpoints *e,
				  int (*fn)(void *ctx, struct kerf_buf *b),
				  void *ctx)
{
	if (e) {
		e->extra = fn;
		e->extra_ctx = ctx;
	}
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *type, const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The read-only JSON API (serve/api.h). */
static enum MHD_Result api(struct kerf_endpoints *e, struct MHD_Connection *conn,
			   const char *method, const char *url)
{
	char *body = NULL;
	int code = kerf_api_answer(kerf_controller_world(e->c), method, url, e->now_ms, &body);
	enum MHD_Result ret;

	if (!body)
		return reply(conn, 500, "text/plain", "out of memory\n", 14);
	ret = reply(conn, (unsigned)code, "application/json", body, strlen(body));
	free(body);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct kerf_endpoints *e = cls;
	struct kerf_buf b;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)con_cls;
	if (*upload_size)
		return reply(conn, 413, "text/plain", "no body expected\n", 17);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return !strncmp(url, "/api/", 5) ? api(e, conn, method, url)
						 : reply(conn, 405, "text/plain", "GET only\n", 9);
	if (!strcmp(url, "/healthz"))
		return reply(conn, 200, "text/plain", "ok", 2);
	if (!strcmp(url, "/readyz")) {
		char why[1024], text[1100];
		int n;

		if (kerf_controller_synced(e->c))
			return reply(conn, 200, "text/plain", "ok", 2);
		kerf_controller_waiting(e->c, why, sizeof(why));
		n = snprintf(text, sizeof(text), "caches not synced: %s\n", why);
		return reply(conn, 503, "text/plain", text,
			     (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
	}
	if (!strcmp(url, "/metrics")) {
		/* a tenant has 4 samples per flavor: 10,000 x 4 fit */
		kerf_buf_init(&b, 16 << 20);
		if (kerf_metrics_text(e->c, e->kc, e->now_ms, &b) < 0 ||
		    (e->extra && e->extra(e->extra_ctx, &b) < 0)) {
			kerf_buf_release(&b);
			return reply(conn, 500, "text/plain", "out of memory\n", 14);
		}
		ret = reply(conn, 200, "text/plain; version=0.0.4", kerf_buf_str(&b), b.len);
		kerf_buf_release(&b);
		return ret;
	}
	if (!strncmp(url, "/api/", 5))
		return api(e, conn, method, url);
	if (kerf_ui_is_path(url))
		return kerf_ui_serve(conn, url, MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
									    "If-None-Match"));
	return reply(conn, 404, "text/plain", "not found\n", 10);
}

int kerf_endpoints_start(const char *addr, const struct kerf_controller *c,
			 const struct kerf_kube_counters *kc,
			 struct kerf_endpoints **out, struct kerf_err *err)
{
	struct kerf_endpoints *e;
	struct sockaddr_in sa;
	int rc = kerf_listen_addr_parse(addr, &sa, err);

	*out = NULL;
	if (rc < 0)
		return rc;
	e = calloc(1, sizeof(*e));
	if (!e)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	e->c = c;
	e->kc = kc;
	e->d = MHD_start_daemon(MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, e,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_END);
	if (!e->d) {
		free(e);
		return kerf_err_set(err, -KERF_EIO, "cannot listen on %s", addr);
	}
	*out = e;
	return 0;
}

void kerf_endpoints_run(struct kerf_endpoints *e, int64_t now_ms)
{
	if (!e)
		return;
	e->now_ms = now_ms;
	MHD_run(e->d);
}

void kerf_endpoints_stop(struct kerf_endpoints *e)
{
	if (!e)
		return;
	MHD_stop_daemon(e->d);
	free(e);
}
