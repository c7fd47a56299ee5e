/*
 * upstream: one request to the API server through libcurl, with the
 * upstream config's credentials and verification (kube/endpoint.h).
 * Plain requests are sent and waited for on the connection's own thread;
 * a watch runs on a thread of its own and hands its bytes over as they
 * come (bounded: the transfer waits while too much is unread).
 */
#include "faultproxy/faultproxy_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	MAX_BODY_BYTES = 64 << 20,
	MAX_UNREAD_BYTES = 4 << 20,   /* a watch's bytes not yet sent down */
};

int64_t kerf_fp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void wait_ms(pthread_cond_t *cond, pthread_mutex_t *mu, int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)ms * 1000000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(cond, mu, &ts);
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct fp_upstream *u = arg;
	size_t len = size * nmemb;
	int rc;

	pthread_mutex_lock(&u->mu);
	while (u->streaming && !u->abort && !u->p->stopping &&
	       u->body.len > MAX_UNREAD_BYTES)
		wait_ms(&u->cond, &u->mu, 100);
	/* the headers are over once the body starts */
	u->headers_done = true;
	rc = u->abort ? -1 : kerf_buf_add(&u->body, data, len);
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->mu);
	return rc < 0 ? 0 : len;
}

static size_t on_header(char *h, size_t size, size_t nmemb, void *arg)
{
	struct fp_upstream *u = arg;
	size_t len = size * nmemb;
	char val[1024];

	pthread_mutex_lock(&u->mu);
	if (len >= 5 && !strncmp(h, "HTTP/", 5)) {
		/* a new response (after 100 Continue): forget the last */
		u->status = strtol(h + strcspn(h, " "), NULL, 10);
		u->ctype[0] = u->retry_after[0] = '\0';
		kerf_buf_reset(&u->warnings);
	} else if (len <= 2 && u->status >= 200) {
		u->headers_done = true;
		pthread_cond_broadcast(&u->cond);
	} else if (kerf_kube_header_is(h, len, "content-type", u->ctype, sizeof(u->ctype)) ||
		   kerf_kube_header_is(h, len, "retry-after", u->retry_after,
			     sizeof(u->retry_after))) {
		/* kept */
	} else if (kerf_kube_header_is(h, len, "warning", val, sizeof(val))) {
		/* bounded: further warnings are dropped */
		if ((u->warnings.len == 0 || kerf_buf_add_str(&u->warnings, "\n") == 0) &&
		    kerf_buf_add_str(&u->warnings, val) < 0)
			val[0] = '\0';
	}
	pthread_mutex_unlock(&u->mu);
	return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut,
		       curl_off_t un)
{
	struct fp_upstream *u = arg;
	bool stop;

	(void)dt, (void)dn, (void)ut, (void)un;
	pthread_mutex_lock(&u->mu);
	stop = u->abort || u->p->stopping;
	pthread_mutex_unlock(&u->mu);
	return stop ? 1 : 0;
}

static int add_header(struct fp_upstream *u, const char *name, const char *v)
{
	char line[1024];
	struct curl_slist *n;

	if (!v || !*v)
		return 0;
	snprintf(line, sizeof(line), "%s: %s", name, v);
	n = curl_slist_append(u->headers, line);
	if (!n)
		return -KERF_ENOMEM;
	u->headers = n;
	return 0;
}

#define SET(opt, val)                                                  \
	do {                                                           \
		if (curl_easy_setopt(e, (opt), (val)) != CURLE_OK)     \
			return -KERF_EINVAL;                           \
	} while (0)

static int configure(struct fp_upstream *u, const char *method,
		     const char *body, size_t len)
{
	CURL *e = u->e;

	SET(CURLOPT_URL, u->url);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (!u->streaming)
		SET(CURLOPT_TIMEOUT_MS, 120000L);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, u);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, u);
	SET(CURLOPT_NOPROGRESS, 0L);
	SET(CURLOPT_XFERINFOFUNCTION, on_progress);
	SET(CURLOPT_XFERINFODATA, u);
	SET(CURLOPT_HTTPHEADER, u->headers);
	/* the answer as the server framed it: no decoding, no redirects */
	SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
	if (kerf_kube_endpoint_secure(&u->p->ep, &u->p->up, e) < 0)
		return -KERF_EINVAL;
	if (!strcmp(method, "GET")) {
		SET(CURLOPT_HTTPGET, 1L);
	} else {
		SET(CURLOPT_CUSTOMREQUEST, method);
		if (len || strcmp(method, "DELETE")) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
			SET(CURLOPT_POSTFIELDS, body ? body : "");
		}
	}
	return 0;
}

int kerf_fp_upstream_init(struct fp_upstream *u, struct kerf_fault_proxy *p,
			  const char *method, const char *uri,
			  const char *ctype, const char *accept,
			  const char *agent, const char *body, size_t len,
			  bool streaming)
{
	struct kerf_buf url;
	int rc;

	memset(u, 0, sizeof(*u));
	u->p = p;
	u->streaming = streaming;
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cond, NULL);
	kerf_buf_init(&u->warnings, 8192);
	kerf_buf_init(&u->body, MAX_BODY_BYTES);
	kerf_buf_init(&url, 64 << 10);
	if (kerf_buf_addf(&url, "%s%s", p->ep.base_url, uri) < 0) {
		kerf_buf_release(&url);
		return -KERF_ELIMIT;
	}
	u->url = kerf_buf_detach(&url, NULL);
	u->e = curl_easy_init();
	if (!u->url || !u->e)
		return -KERF_ENOMEM;
	rc = add_header(u, "Content-Type", ctype);
	if (rc == 0)
		rc = add_header(u, "Accept", accept);
	if (rc == 0)
		rc = add_header(u, "User-Agent", agent);
	if (rc == 0 && !(u->headers = curl_slist_append(u->headers, "Expect:")))
		rc = -KERF_ENOMEM;
	if (rc == 0)
		rc = configure(u, method, body, len);
	return rc;
}

int kerf_fp_upstream_run(struct fp_upstream *u)
{
	u->result = curl_easy_perform(u->e);
	u->finished = true;
	return u->result == CURLE_OK ? 0 : -KERF_ETRANSPORT;
}

static void *run_thread(void *arg)
{
	struct fp_upstream *u = arg;
	CURLcode rc = curl_easy_perform(u->e);

	pthread_mutex_lock(&u->mu);
	u->result = rc;
	u->finished = true;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

int kerf_fp_upstream_start(struct fp_upstream *u)
{
	bool ok;

	if (pthread_create(&u->thread, NULL, run_thread, u) != 0)
		return -KERF_ENOMEM;
	u->thread_started = true;
	pthread_mutex_lock(&u->mu);
	while (!u->headers_done && !u->finished && !u->p->stopping)
		wait_ms(&u->cond, &u->mu, 100);
	ok = u->headers_done;
	pthread_mutex_unlock(&u->mu);
	return ok ? 0 : -KERF_ETRANSPORT;
}

void kerf_fp_upstream_release(struct fp_upstream *u)
{
	if (u->thread_started) {
		pthread_mutex_lock(&u->mu);
		u->abort = true;
		pthread_cond_broadcast(&u->cond);
		pthread_mutex_unlock(&u->mu);
		pthread_join(u->thread, NULL);
	}
	if (u->e)
		curl_easy_cleanup(u->e);
	curl_slist_free_all(u->headers);
	free(u->url);
	kerf_buf_release(&u->warnings);
	kerf_buf_release(&u->body);
	pthread_cond_destroy(&u->cond);
	pthread_mutex_destroy(&u->mu);
}
