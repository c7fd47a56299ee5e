/*
 * client_easy: one attempt of a request as a libcurl easy handle: the
 * options that make it safe (https only, verification on), the headers,
 * and the callbacks that collect the body (bounded) or cut a watch's
 * stream into lines.
 */
#include "kube/client_int.h"

#include <stdlib.h>
#include <string.h>

static size_t on_write(char *data, size_t size, size_t nmemb, void *p)
{
	struct kreq *r = p;
	size_t len = size * nmemb;
	int rc;

	if (r->cancelled)
		return 0;
	if (r->watch && r->stream_status == 0)
		curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE,
				  &r->stream_status);
	if (r->watch && r->stream_status == 200) {
		r->c->in_curl++;
		rc = kerf_kube_lines_feed(&r->lines, data, len, r->on_line,
					  r->arg);
		r->c->in_curl--;
		if (rc != 0 || r->cancelled) {
			r->stop_rc = rc;
			return 0;
		}
		return len;
	}
	if (kerf_buf_add(&r->resp_body, data, len) < 0) {
		r->stop_rc = -KERF_ELIMIT;
		return 0;
	}
	return len;
}

static size_t on_header(char *h, size_t size, size_t nmemb, void *p)
{
	struct kreq *r = p;
	size_t len = size * nmemb;
	char val[512];

	if (len >= 5 && strncmp(h, "HTTP/", 5) == 0) {
		/* a new response (after 100 Continue, say): forget the last */
		r->resp_content_type[0] = '\0';
		r->retry_after_s = -1;
		kerf_buf_reset(&r->warning);
		return len;
	}
	if (kerf_kube_header_is(h, len, "content-type", r->resp_content_type,
		      sizeof(r->resp_content_type)))
		return len;
	if (kerf_kube_header_is(h, len, "retry-after", val, sizeof(val))) {
		r->retry_after_s = kerf_kube_parse_retry_after(val);
		return len;
	}
	if (kerf_kube_header_is(h, len, "warning", val, sizeof(val))) {
		/* bounded: further warnings are dropped, the response kept */
		if (r->warning.len > 0 && kerf_buf_add_str(&r->warning, "\n") < 0)
			return len;
		if (kerf_buf_add_str(&r->warning, val) < 0)
			return len;
	}
	return len;
}

#define SET(opt, val)                                                  \
	do {                                                           \
		if (curl_easy_setopt(e, (opt), (val)) != CURLE_OK)     \
			goto fail;                                     \
	} while (0)

static struct curl_slist *build_headers(struct kreq *r, const char *agent)
{
	struct curl_slist *h = NULL, *n;
	char line[256];

	n = curl_slist_append(h, "Accept: application/json");
	if (!n)
		return NULL;
	h = n;
	snprintf(line, sizeof(line), "User-Agent: %s", agent);
	if (!(n = curl_slist_append(h, line)))
		goto fail;
	if (r->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", r->content_type);
		if (!(n = curl_slist_append(h, line)))
			goto fail;
	}
	/* no "Expect: 100-continue" round trip before a body */
	if (!(n = curl_slist_append(h, "Expect:")))
		goto fail;
	return h;
fail:
	curl_slist_free_all(h);
	return NULL;
}

static int configure(struct kerf_kube_client *c, struct kreq *r, CURL *e,
		     const char *url)
{
	uint32_t timeout_ms;

	SET(CURLOPT_URL, url);
	SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_ERRORBUFFER, r->errbuf);
	SET(CURLOPT_PRIVATE, r);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_WRITEDATA, r);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, r);
	SET(CURLOPT_HTTPHEADER, r->headers);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)c->opts.connect_timeout_ms);
	timeout_ms = r->timeout_ms ? r->timeout_ms :
		     (r->watch ? 0 : c->opts.timeout_ms);
	SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	if (kerf_kube_endpoint_secure(&c->ep, &c->cfg, e) < 0)
		goto fail;
	if (strcmp(r->method, "GET") == 0) {
		SET(CURLOPT_HTTPGET, 1L);
	} else {
		SET(CURLOPT_CUSTOMREQUEST, r->method);
		if (r->body) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
			SET(CURLOPT_POSTFIELDS, r->body);
		} else if (strcmp(r->method, "DELETE") != 0) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
			SET(CURLOPT_POSTFIELDS, "");
		}
	}
	return 0;
fail:
	return -KERF_EINVAL;
}

int kerf_kube_client_easy_start(struct kerf_kube_client *c, struct kreq *r)
{
	struct kerf_buf url;
	bool changed;
	int rc;

	if (kerf_kube_config_token_refresh(&c->cfg, &changed, NULL) < 0)
		c->counters.token_errors++;
	else if (changed)
		c->counters.token_reloads++;
	kerf_buf_init(&url, 64 << 10);
	if (kerf_buf_addf(&url, "%s%s", c->ep.base_url, r->path) < 0) {
		kerf_buf_release(&url);
		return -KERF_ELIMIT;
	}
	kerf_buf_init(&r->resp_body, c->opts.max_body_bytes);
	kerf_buf_init(&r->warning, 4096);
	kerf_kube_lines_init(&r->lines, c->opts.max_line_bytes);
	r->resp_content_type[0] = '\0';
	r->retry_after_s = -1;
	r->stream_status = 0;
	r->stop_rc = 0;
	r->errbuf[0] = '\0';
	r->headers = build_headers(r, c->opts.user_agent);
	r->easy = curl_easy_init();
	rc = -KERF_ENOMEM;
	if (r->headers && r->easy)
		rc = configure(c, r, r->easy, kerf_buf_str(&url));
	kerf_buf_release(&url);
	if (rc == 0 && curl_multi_add_handle(c->multi, r->easy) != CURLM_OK)
		rc = -KERF_ENOMEM;
	if (rc < 0) {
		kerf_kube_client_easy_stop(c, r);
		return rc;
	}
	r->attempts++;
	r->state = KREQ_RUNNING;
	if (!r->watch) {
		r->counted = true;
		c->nr_running++;
		if (c->nr_running > c->counters.in_flight_max)
			c->counters.in_flight_max = c->nr_running;
	}
	return 0;
}

void kerf_kube_client_easy_stop(struct kerf_kube_client *c, struct kreq *r)
{
	if (r->easy) {
		curl_multi_remove_handle(c->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
	}
	if (r->counted) {
		r->counted = false;
		c->nr_running--;
	}
	curl_slist_free_all(r->headers);
	r->headers = NULL;
	kerf_buf_release(&r->resp_body);
	kerf_buf_release(&r->warning);
	kerf_kube_lines_release(&r->lines);
}
