/*
 * Integration tests of the libcurl client (kube/client.c) against a small
 * HTTPS server in this process (libmicrohttpd on 127.0.0.1, a port of its
 * choosing), with certificates made for the run by kube_certs.sh (the
 * openssl tool; every test is skipped when it is missing):
 * the bearer token is sent, the server's certificate is verified against
 * the config's CA and a wrong CA is refused, tls-server-name is honoured,
 * a client certificate from a kubeconfig's *-data is presented, a 429 with
 * Retry-After is waited out (time measured), a 503 is retried and a POST
 * is not, a chunked watch stream is split into lines across chunk
 * boundaries, and the rate limit spaces requests out.
 */
#define _DEFAULT_SOURCE                 /* mkdtemp, usleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "base/buf.h"
#include "format/file.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"

static char dir[64];
static bool have_certs;
static struct MHD_Daemon *daemon_h;
static uint16_t port;
static struct kerf_file ca, wrong_ca, server_crt, server_key;

/* What the server saw; guarded by mu (the server runs its own thread). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char seen_auth[256];
static char seen_client_dn[256];
static int seen_429, seen_503, seen_post503, seen_count;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the server ---------------------------------------------------- */

static const char *const stream_pieces[] = {
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n{\"ty",
	"pe\":\"MODIFIED\",\"obj",
	"ect\":{}}\n",
	"{\"type\":\"DELETED\",\"object\":{}}\n",
};

static ssize_t stream_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	size_t *i = cls, len;

	(void)pos;
	if (*i >= sizeof(stream_pieces) / sizeof(stream_pieces[0]))
		return MHD_CONTENT_READER_END_OF_STREAM;
	len = strlen(stream_pieces[*i]);
	if (len > max)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	memcpy(buf, stream_pieces[(*i)++], len);
	usleep(20000);   /* separate chunks, separate reads */
	return (ssize_t)len;
}

static void record_client_cert(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const gnutls_datum_t *certs;
	gnutls_x509_crt_t crt;
	unsigned nr = 0, status = 1;
	size_t size = sizeof(seen_client_dn);

	seen_client_dn[0] = '\0';
	if (!ci)
		return;
	certs = gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session, &nr);
	/* MHD only asks for a certificate: verify it ourselves */
	if (!certs || nr == 0 ||
	    gnutls_certificate_verify_peers2((gnutls_session_t)ci->tls_session, &status) < 0 ||
	    status != 0)
		return;
	if (gnutls_x509_crt_init(&crt) < 0)
		return;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) == 0)
		gnutls_x509_crt_get_dn(crt, seen_client_dn, &size);
	gnutls_x509_crt_deinit(crt);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *body, const char *retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	MHD_add_response_header(r, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(r, "Retry-After", retry_after);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static const char status_429[] = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"slow down\",\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":1},\"code\":429}";
static const char status_503[] = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"unavailable\",\"reason\":\"ServiceUnavailable\",\"code\":503}";

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	static int first_call;
	const char *auth;
	int n;

	(void)cls;
	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		*con_cls = &first_call;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	pthread_mutex_lock(&mu);
	auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	snprintf(seen_auth, sizeof(seen_auth), "%s", auth ? auth : "");
	record_client_cert(conn);
	if (strcmp(url, "/api/v1/429") == 0)
		n = seen_429++;
	else if (strcmp(url, "/api/v1/503") == 0)
		n = strcmp(method, "POST") == 0 ? seen_post503++ : seen_503++;
	else
		n = seen_count++;
	pthread_mutex_unlock(&mu);
	if ((strcmp(url, "/api/v1/429") == 0 && n == 0) ||
	    strcmp(url, "/api/v1/always429") == 0)
		return reply(conn, 429, status_429, "1");
	if (strcmp(url, "/api/v1/503") == 0 && (n < 2 || strcmp(method, "POST") == 0))
		return reply(conn, 503, status_503, NULL);
	if (strcmp(url, "/api/v1/watch") == 0) {
		size_t *i = calloc(1, sizeof(*i));
		struct MHD_Response *r = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 1024, stream_cb, i, free);
		enum MHD_Result ret;

		MHD_add_response_header(r, "Content-Type", "application/json");
		ret = MHD_queue_response(conn, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	return reply(conn, 200, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}", NULL);
}

static int read_cert(struct kerf_file *f, const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return kerf_file_read(f, path, 1 << 20, NULL);
}

static int group_setup(void **state)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char cmd[512];
	int rc;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kerf-test-kube-client-XXXXXX");
	if (!mkdtemp(dir) || !root)
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/unit/kube_certs.sh' '%s'", root, dir);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "# kube_certs.sh failed (openssl missing?): skipping\n");
		return 0;
	}
	if (read_cert(&ca, "ca.crt") || read_cert(&wrong_ca, "wrong-ca.crt") ||
	    read_cert(&server_crt, "server.crt") || read_cert(&server_key, "server.key"))
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	daemon_h = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS,
				    0, NULL, NULL, handler, NULL,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				    MHD_OPTION_HTTPS_MEM_KEY, server_key.data,
				    MHD_OPTION_HTTPS_MEM_CERT, server_crt.data,
				    MHD_OPTION_HTTPS_MEM_TRUST, ca.data,
				    MHD_OPTION_END);
	if (!daemon_h)
		return -1;
	port = MHD_get_daemon_info(daemon_h, MHD_DAEMON_INFO_BIND_PORT)->port;
	have_certs = true;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (daemon_h)
		MHD_stop_daemon(daemon_h);
	kerf_file_release(&ca);
	kerf_file_release(&wrong_ca);
	kerf_file_release(&server_crt);
	kerf_file_release(&server_key);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the client side ------------------------------------------------ */

struct result {
	bool done;
	struct kerf_kube_response resp;   /* body etc. not kept */
	char body[256];
	struct kerf_buf lines;
	int nr_lines;
};

static void on_done(void *arg, const struct kerf_kube_response *resp)
{
	struct result *r = arg;

	r->done = true;
	r->resp = *resp;
	snprintf(r->body, sizeof(r->body), "%s", resp->body);
	r->resp.body = NULL;
	r->resp.content_type = NULL;
	r->resp.warning = NULL;
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct result *r = arg;

	r->nr_lines++;
	assert_int_equal(kerf_buf_add(&r->lines, line, len), 0);
	assert_int_equal(kerf_buf_add_str(&r->lines, "|"), 0);
	return 0;
}

static void run_until_done(struct kerf_kube_client *c, struct result *r,
			   size_t nr)
{
	uint64_t start = now_ms();
	size_t i, done;

	do {
		assert_true(kerf_kube_client_poll(c, 50) >= 0);
		for (i = 0, done = 0; i < nr; i++)
			done += r[i].done;
	} while (done < nr && now_ms() - start < 15000);
	assert_int_equal(done, nr);
}

static void base_config(struct kerf_kube_config *cfg, const struct kerf_file *ca_file)
{
	char server[64];

	kerf_kube_config_init(cfg);
	snprintf(server, sizeof(server), "https://127.0.0.1:%u", port);
	cfg->server = kerf_strdup(server);
	cfg->ca_pem = kerf_strdup(ca_file->data);
	cfg->ca_pem_len = ca_file->len;
	cfg->token = kerf_strdup("s3cret-token");
}

static struct kerf_kube_client *client_for(const struct kerf_kube_config *cfg,
					   struct kerf_kube_client_opts *o)
{
	struct kerf_err err = { 0 };
	struct kerf_kube_client *c = kerf_kube_client_new(cfg, o, &err);

	if (!c)
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(c);
	return c;
}

static void get(struct kerf_kube_client *c, const char *path, struct result *r)
{
	struct kerf_kube_request req = { .method = "GET", .path = path };

	memset(r, 0, sizeof(*r));
	assert_int_equal(kerf_kube_client_request(c, &req, on_done, r, NULL), 0);
}

static void test_bearer_and_ca(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client *c;
	struct result r;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, NULL);
	get(c, "/api/v1/pods/p", &r);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.http_status, 200);
	assert_int_equal(r.resp.class, KERF_KUBE_OK);
	assert_string_equal(r.body, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
	pthread_mutex_lock(&mu);
	assert_string_equal(seen_auth, "Bearer s3cret-token");
	assert_string_equal(seen_client_dn, "");
	pthread_mutex_unlock(&mu);
	assert_int_equal(kerf_kube_client_counters(c)->requests[KERF_KUBE_VERB_GET][KERF_KUBE_OK], 1);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

static void test_wrong_ca_refused(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts o = { .no_retry = true };
	struct kerf_kube_client *c;
	struct result r;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &wrong_ca);
	c = client_for(&cfg, &o);
	get(c, "/api/v1/pods/p", &r);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.http_status, 0);
	assert_int_equal(r.resp.class, KERF_KUBE_TRANSPORT);
	assert_int_equal(r.resp.err, -KERF_ETRANSPORT);
	assert_non_null(strstr(r.resp.msg, "SSL"));
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

static void test_tls_server_name(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts o = { .no_retry = true };
	struct kerf_kube_client *c;
	struct result r;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	/* the certificate names localhost: checked against it, not the IP */
	cfg.tls_server_name = kerf_strdup("localhost");
	c = client_for(&cfg, &o);
	get(c, "/api/v1/pods/p", &r);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.http_status, 200);
	kerf_kube_client_free(c);
	free(cfg.tls_server_name);
	cfg.tls_server_name = kerf_strdup("not-in-the-cert.example");
	c = client_for(&cfg, &o);
	get(c, "/api/v1/pods/p", &r);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.class, KERF_KUBE_TRANSPORT);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

static void test_client_cert_from_data(void **state)
{
	struct kerf_file crt_b64, key_b64;
	struct kerf_kube_config cfg;
	struct kerf_kube_client *c;
	struct kerf_err err = { 0 };
	struct kerf_buf kc;
	struct result r;

	(void)state;
	if (!have_certs)
		skip();
	assert_int_equal(read_cert(&crt_b64, "client.crt.b64"), 0);
	assert_int_equal(read_cert(&key_b64, "client.key.b64"), 0);
	kerf_buf_init(&kc, 0);
	assert_int_equal(kerf_buf_addf(&kc,
		"current-context: t\n"
		"contexts: [{name: t, context: {cluster: c, user: u}}]\n"
		"clusters: [{name: c, cluster: {server: \"https://127.0.0.1:%u\", certificate-authority: ca.crt}}]\n"
		"users: [{name: u, user: {client-certificate-data: %s, client-key-data: %s}}]\n",
		port, crt_b64.data, key_b64.data), 0);
	assert_int_equal(kerf_kubeconfig_parse(&cfg, kerf_buf_str(&kc), kc.len, "kc", dir, NULL, &err), 0);
	c = client_for(&cfg, NULL);
	get(c, "/api/v1/nodes", &r);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.http_status, 200);
	pthread_mutex_lock(&mu);
	assert_string_equal(seen_client_dn, "CN=kerf-client");
	assert_string_equal(seen_auth, "");
	pthread_mutex_unlock(&mu);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
	kerf_buf_release(&kc);
	kerf_file_release(&crt_b64);
	kerf_file_release(&key_b64);
}

static void test_429_retry_after_honoured(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client *c;
	struct result r;
	uint64_t start, elapsed;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, NULL);
	start = now_ms();
	get(c, "/api/v1/429", &r);
	run_until_done(c, &r, 1);
	elapsed = now_ms() - start;
	assert_int_equal(r.resp.http_status, 200);
	assert_int_equal(r.resp.attempts, 2);
	assert_true(elapsed >= 1000);
	assert_true(elapsed < 5000);
	assert_int_equal(kerf_kube_client_counters(c)->retries, 1);
	assert_int_equal(kerf_kube_client_counters(c)->requests[KERF_KUBE_VERB_GET][KERF_KUBE_TOO_MANY_REQUESTS], 1);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

/* KERF_KUBE_REQ_OWN_429: the caller gets the 429 (an eviction's budget). */
static void test_429_own(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client *c;
	struct result r;
	struct kerf_kube_request req = {
		.method = "POST", .path = "/api/v1/always429",
		.content_type = "application/json", .body = "{}", .body_len = 2,
		.flags = KERF_KUBE_REQ_RETRYABLE | KERF_KUBE_REQ_OWN_429,
	};

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, NULL);
	memset(&r, 0, sizeof(r));
	assert_int_equal(kerf_kube_client_request(c, &req, on_done, &r, NULL), 0);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.http_status, 429);
	assert_int_equal(r.resp.attempts, 1);
	assert_int_equal(r.resp.retry_after_s, 1);
	assert_string_equal(r.resp.status.message, "slow down");
	assert_int_equal(kerf_kube_client_counters(c)->retries, 0);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

static void test_503_retried_post_not(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts o = { .backoff = { .base_ms = 10, .cap_ms = 50 }, .seed = 3 };
	struct kerf_kube_request post = { .method = "POST", .path = "/api/v1/503",
					  .content_type = "application/json",
					  .body = "{}", .body_len = 2 };
	struct kerf_kube_client *c;
	struct result r[2];

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, &o);
	get(c, "/api/v1/503", &r[0]);
	memset(&r[1], 0, sizeof(r[1]));
	assert_int_equal(kerf_kube_client_request(c, &post, on_done, &r[1], NULL), 0);
	run_until_done(c, r, 2);
	assert_int_equal(r[0].resp.http_status, 200);
	assert_int_equal(r[0].resp.attempts, 3);
	assert_int_equal(r[1].resp.http_status, 503);
	assert_int_equal(r[1].resp.class, KERF_KUBE_UNAVAILABLE);
	assert_int_equal(r[1].resp.attempts, 1);
	assert_true(r[1].resp.status.decoded);
	assert_string_equal(r[1].resp.status.reason, "ServiceUnavailable");
	assert_string_equal(r[1].resp.msg, "POST: HTTP 503 service unavailable: unavailable");
	assert_int_equal(kerf_kube_client_counters(c)->retries, 2);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

static void test_watch_lines_across_chunks(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_request req = { .method = "GET", .path = "/api/v1/watch?watch=1" };
	struct kerf_kube_client *c;
	struct result r;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, NULL);
	memset(&r, 0, sizeof(r));
	kerf_buf_init(&r.lines, 0);
	assert_int_equal(kerf_kube_client_watch(c, &req, on_line, on_done, &r, NULL), 0);
	run_until_done(c, &r, 1);
	assert_int_equal(r.resp.class, KERF_KUBE_OK);
	assert_int_equal(r.resp.err, 0);
	assert_int_equal(r.nr_lines, 3);
	assert_string_equal(kerf_buf_str(&r.lines),
			    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}|"
			    "{\"type\":\"MODIFIED\",\"object\":{}}|"
			    "{\"type\":\"DELETED\",\"object\":{}}|");
	assert_int_equal(kerf_kube_client_counters(c)->watches_started, 1);
	kerf_buf_release(&r.lines);
	/* a line over the bound stops the stream with a clear error */
	kerf_kube_client_free(c);
	{
		struct kerf_kube_client_opts o = { .max_line_bytes = 20 };

		c = client_for(&cfg, &o);
		memset(&r, 0, sizeof(r));
		kerf_buf_init(&r.lines, 0);
		assert_int_equal(kerf_kube_client_watch(c, &req, on_line, on_done, &r, NULL), 0);
		run_until_done(c, &r, 1);
		assert_int_equal(r.resp.err, -KERF_ELIMIT);
		assert_string_equal(r.resp.msg, "watch GET: a line longer than 20 bytes");
		assert_int_equal(r.nr_lines, 0);
		kerf_buf_release(&r.lines);
		kerf_kube_client_free(c);
	}
	kerf_kube_config_release(&cfg);
}

static void test_rate_limit_applied(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts o = { .qps_milli = 10000, .burst = 1 };
	struct kerf_kube_client *c;
	struct result r[4];
	uint64_t start, elapsed;
	int i;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, &o);
	start = now_ms();
	for (i = 0; i < 4; i++)
		get(c, "/api/v1/count", &r[i]);
	run_until_done(c, r, 4);
	elapsed = now_ms() - start;
	/* one at once, then one every 100 ms */
	assert_true(elapsed >= 300);
	assert_int_equal(kerf_kube_client_counters(c)->rate_limited, 3);
	for (i = 0; i < 4; i++)
		assert_int_equal(r[i].resp.http_status, 200);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
}

/* At most max_in_flight requests on the wire; a watch does not count. */
static void test_in_flight_bounded(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client *c;
	struct result r[10], w;
	struct kerf_kube_request wr = { .method = "GET", .path = "/api/v1/watch" };
	uint64_t id;

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	for (unsigned cap = 2; cap <= 16; cap += 14) {
		struct kerf_kube_client_opts o = { .qps_milli = UINT64_MAX,
						   .max_in_flight = cap };

		c = client_for(&cfg, &o);
		memset(&w, 0, sizeof(w));
		kerf_buf_init(&w.lines, 1 << 20);
		assert_int_equal(kerf_kube_client_watch(c, &wr, on_line, on_done, &w, &id), 0);
		for (int i = 0; i < 10; i++)
			get(c, "/api/v1/pods/x", &r[i]);
		run_until_done(c, r, 10);
		for (int i = 0; i < 10; i++)
			assert_int_equal(r[i].resp.http_status, 200);
		/* all ten at once when they may; two at a time otherwise */
		assert_int_equal(kerf_kube_client_counters(c)->in_flight_max,
				 cap < 10 ? cap : 10);
		kerf_kube_client_cancel(c, id);
		kerf_buf_release(&w.lines);
		kerf_kube_client_free(c);
	}
	kerf_kube_config_release(&cfg);
}

static void test_cancel_and_refused_connection(void **state)
{
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts o = { .backoff = { .base_ms = 5, .cap_ms = 5 }, .max_retries = 2 };
	struct kerf_kube_client *c;
	struct result r[2];
	uint64_t id;
	int sock;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	(void)state;
	if (!have_certs)
		skip();
	base_config(&cfg, &ca);
	c = client_for(&cfg, &o);
	get(c, "/api/v1/pods/a", &r[0]);
	memset(&r[1], 0, sizeof(r[1]));
	{
		struct kerf_kube_request req = { .method = "GET", .path = "/api/v1/pods/b" };

		assert_int_equal(kerf_kube_client_request(c, &req, on_done, &r[1], &id), 0);
	}
	kerf_kube_client_cancel(c, id);
	run_until_done(c, r, 1);
	assert_false(r[1].done);
	assert_int_equal(kerf_kube_client_poll(c, 0), 0);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);

	/* a port nobody listens on: refused, retried (never sent), then given up */
	sock = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(sock, (struct sockaddr *)&sa, &len), 0);
	kerf_kube_config_init(&cfg);
	{
		char server[64];

		snprintf(server, sizeof(server), "https://127.0.0.1:%u", ntohs(sa.sin_port));
		cfg.server = kerf_strdup(server);
	}
	c = client_for(&cfg, &o);
	{
		struct kerf_kube_request post = { .method = "POST", .path = "/x", .body = "{}", .body_len = 2 };

		memset(&r[0], 0, sizeof(r[0]));
		assert_int_equal(kerf_kube_client_request(c, &post, on_done, &r[0], NULL), 0);
	}
	run_until_done(c, r, 1);
	assert_int_equal(r[0].resp.class, KERF_KUBE_TRANSPORT);
	assert_int_equal(r[0].resp.attempts, 3);
	kerf_kube_client_free(c);
	kerf_kube_config_release(&cfg);
	close(sock);
}

static void test_bad_server_urls(void **state)
{
	static const char *const bad[] = {
		"http://h", "https://", "https://:443", "https://h:", "https://h:99999x",
		"https://[::1", "https://a b", "https://u@h", "https://h?x",
	};
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		kerf_kube_config_init(&cfg);
		cfg.server = kerf_strdup(bad[i]);
		kerf_err_clear(&err);
		assert_null(kerf_kube_client_new(&cfg, NULL, &err));
		assert_int_equal(err.code, -KERF_EINVAL);
		assert_non_null(strstr(err.msg, "not an https://host[:port][/path] URL"));
		kerf_kube_config_release(&cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bearer_and_ca),
		cmocka_unit_test(test_wrong_ca_refused),
		cmocka_unit_test(test_tls_server_name),
		cmocka_unit_test(test_client_cert_from_data),
		cmocka_unit_test(test_429_retry_after_honoured),
		cmocka_unit_test(test_429_own),
		cmocka_unit_test(test_503_retried_post_not),
		cmocka_unit_test(test_watch_lines_across_chunks),
		cmocka_unit_test(test_rate_limit_applied),
		cmocka_unit_test(test_in_flight_bounded),
		cmocka_unit_test(test_cancel_and_refused_connection),
		cmocka_unit_test(test_bad_server_urls),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
