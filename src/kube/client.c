/*
 * client: the queue of requests, the rate limit, retries and poll.  A
 * request lives in c->reqs from the call that makes it until its done
 * callback runs (or it is cancelled); it is removed from the array before
 * the callback, so a callback may start or cancel requests freely.
 * Removals asked for while libcurl is inside one of our callbacks wait for
 * the next safe point (c->in_curl).
 */
#include "kube/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/grow.h"
#include "kube/client_int.h"

static uint64_t monotonic_ms(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t kerf_kube_client_now_ms(struct kerf_kube_client *c)
{
	return c->opts.now_ms(c->opts.clock_arg);
}

enum kerf_kube_verb kerf_kube_verb_of(const char *method, bool watch)
{
	static const char *const names[] = { "GET", "POST", "PUT", "PATCH",
					     "DELETE" };
	size_t i;

	if (watch)
		return KERF_KUBE_VERB_WATCH;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(method, names[i]) == 0)
			return (enum kerf_kube_verb)i;
	return KERF_KUBE_VERB_OTHER;
}

const char *kerf_kube_verb_name(enum kerf_kube_verb v)
{
	static const char *const names[KERF_KUBE_VERB_COUNT_] = {
		"GET", "POST", "PUT", "PATCH", "DELETE", "WATCH", "OTHER",
	};

	return (unsigned)v < KERF_KUBE_VERB_COUNT_ ? names[v] : "OTHER";
}

/* client-go's rest_client_requests_total says "<error>" for no answer */
static const char *const code_names[KERF_KUBE_CODE_COUNT_] = {
	"<error>", "200", "201", "202", "204", "304", "400", "401", "403",
	"404", "405", "409", "410", "415", "422", "429", "500", "503", "504",
	"other",
};

unsigned kerf_kube_code_index(long http_status)
{
	char text[8];

	if (http_status == 0)
		return 0;
	snprintf(text, sizeof(text), "%ld", http_status);
	for (unsigned i = 1; i < KERF_KUBE_CODE_COUNT_ - 1; i++)
		if (!strcmp(text, code_names[i]))
			return i;
	return KERF_KUBE_CODE_COUNT_ - 1;
}

const char *kerf_kube_code_name(unsigned i)
{
	return i < KERF_KUBE_CODE_COUNT_ ? code_names[i] : "other";
}

static void set_defaults(struct kerf_kube_client_opts *o)
{
	if (o->qps_milli == 0)
		o->qps_milli = 10000;
	if (o->qps_milli == UINT64_MAX)
		o->qps_milli = 0;
	if (o->burst == 0)
		o->burst = 100;
	if (o->timeout_ms == 0)
		o->timeout_ms = 30000;
	if (o->connect_timeout_ms == 0)
		o->connect_timeout_ms = 10000;
	if (o->max_retries == 0)
		o->max_retries = 5;
	if (o->no_retry)
		o->max_retries = 0;
	if (o->backoff.base_ms == 0)
		o->backoff.base_ms = 200;
	if (o->backoff.cap_ms == 0)
		o->backoff.cap_ms = 30000;
	if (o->backoff.max_retry_after_ms == 0)
		o->backoff.max_retry_after_ms = 120000;
	if (o->retry_budget_tokens == 0)
		o->retry_budget_tokens = 10;
	if (o->retry_ratio_milli == 0)
		o->retry_ratio_milli = 100;
	if (o->max_body_bytes == 0)
		o->max_body_bytes = 64 << 20;
	if (o->max_line_bytes == 0)
		o->max_line_bytes = KERF_KUBE_MAX_LINE_BYTES;
	if (o->max_in_flight == 0)
		o->max_in_flight = 64;
	if (!o->now_ms)
		o->now_ms = monotonic_ms;
	if (!o->user_agent)
		o->user_agent = "kerf/" KERF_VERSION;
}

struct kerf_kube_client *kerf_kube_client_new(
	const struct kerf_kube_config *cfg,
	const struct kerf_kube_client_opts *opts, struct kerf_err *err)
{
	struct kerf_kube_client *c;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		kerf_err_set(err, -KERF_EIO, "client: libcurl failed to start");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		curl_global_cleanup();
		kerf_err_set(err, -KERF_ENOMEM, "client: out of memory");
		return NULL;
	}
	if (opts)
		c->opts = *opts;
	set_defaults(&c->opts);
	if (kerf_kube_config_copy(&c->cfg, cfg) < 0) {
		free(c);
		curl_global_cleanup();
		kerf_err_set(err, -KERF_ENOMEM, "client: out of memory");
		return NULL;
	}
	if (kerf_kube_endpoint_init(&c->ep, &c->cfg, err) < 0)
		goto fail;
	c->multi = curl_multi_init();
	if (!c->multi) {
		kerf_err_set(err, -KERF_ENOMEM, "client: out of memory");
		goto fail;
	}
	curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	/* idle connections kept: as many as may be busy at once, and a few */
	curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, (long)c->opts.max_in_flight + 8);
	kerf_rng_seed(&c->rng, c->opts.seed);
	kerf_kube_ratelimit_init(&c->rl, c->opts.qps_milli, c->opts.burst,
				 kerf_kube_client_now_ms(c));
	kerf_kube_retry_budget_init(&c->budget, c->opts.retry_budget_tokens,
				    c->opts.retry_ratio_milli);
	c->next_id = 1;
	return c;
fail:
	kerf_kube_client_free(c);
	return NULL;
}

static void kreq_free(struct kerf_kube_client *c, struct kreq *r)
{
	kerf_kube_client_easy_stop(c, r);
	free(r->method);
	free(r->path);
	free(r->content_type);
	free(r->body);
	free(r);
}

void kerf_kube_client_free(struct kerf_kube_client *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr_reqs; i++)
		kreq_free(c, c->reqs[i]);
	free(c->reqs);
	if (c->multi)
		curl_multi_cleanup(c->multi);
	kerf_kube_endpoint_release(&c->ep);
	kerf_kube_config_release(&c->cfg);
	free(c);
	curl_global_cleanup();
}

static char *dup_n(const char *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

static int add(struct kerf_kube_client *c, const struct kerf_kube_request *req,
	       bool watch, kerf_kube_line_fn on_line, kerf_kube_done_fn done,
	       void *arg, uint64_t *id)
{
	struct kreq *r;

	if (!req->method || !req->path || req->path[0] != '/' || !done ||
	    (watch && !on_line))
		return -KERF_EINVAL;
	if (KERF_GROW(c->reqs, c->alloc_reqs, c->nr_reqs + 1) < 0)
		return -KERF_ENOMEM;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -KERF_ENOMEM;
	r->method = kerf_strdup(req->method);
	r->path = kerf_strdup(req->path);
	if (req->content_type)
		r->content_type = kerf_strdup(req->content_type);
	if (req->body)
		r->body = dup_n(req->body, req->body_len);
	if (!r->method || !r->path || (req->content_type && !r->content_type) ||
	    (req->body && !r->body)) {
		kreq_free(c, r);
		return -KERF_ENOMEM;
	}
	r->c = c;
	r->id = c->next_id++;
	r->watch = watch;
	r->body_len = req->body_len;
	r->timeout_ms = req->timeout_ms;
	r->flags = req->flags;
	r->done = done;
	r->on_line = on_line;
	r->arg = arg;
	r->state = KREQ_QUEUED;
	c->reqs[c->nr_reqs++] = r;
	if (id)
		*id = r->id;
	return 0;
}

int kerf_kube_client_request(struct kerf_kube_client *c,
			     const struct kerf_kube_request *req,
			     kerf_kube_done_fn done, void *arg, uint64_t *id)
{
	return add(c, req, false, NULL, done, arg, id);
}

int kerf_kube_client_watch(struct kerf_kube_client *c,
			   const struct kerf_kube_request *req,
			   kerf_kube_line_fn on_line, kerf_kube_done_fn done,
			   void *arg, uint64_t *id)
{
	return add(c, req, true, on_line, done, arg, id);
}

static void remove_at(struct kerf_kube_client *c, size_t i)
{
	memmove(&c->reqs[i], &c->reqs[i + 1],
		(c->nr_reqs - i - 1) * sizeof(c->reqs[0]));
	c->nr_reqs--;
}

static void reap_cancelled(struct kerf_kube_client *c)
{
	size_t i = 0;

	while (i < c->nr_reqs) {
		if (c->reqs[i]->cancelled) {
			struct kreq *r = c->reqs[i];

			remove_at(c, i);
			kreq_free(c, r);
		} else {
			i++;
		}
	}
}

void kerf_kube_client_cancel(struct kerf_kube_client *c, uint64_t id)
{
	size_t i;

	for (i = 0; i < c->nr_reqs; i++)
		if (c->reqs[i]->id == id)
			c->reqs[i]->cancelled = true;
	if (!c->in_curl)
		reap_cancelled(c);
}

const struct kerf_kube_counters *
kerf_kube_client_counters(const struct kerf_kube_client *c)
{
	return &c->counters;
}

static bool is_idempotent(const struct kreq *r)
{
	return strcmp(r->method, "GET") == 0 || strcmp(r->method, "PUT") == 0 ||
	       strcmp(r->method, "DELETE") == 0 ||
	       strcmp(r->method, "HEAD") == 0;
}

/* The answer of r's attempt that just ended with code cc. */
static void fill_response(struct kreq *r, CURLcode cc,
			  struct kerf_kube_response *resp)
{
	char shown[KERF_KUBE_MESSAGE_MAX];
	long status = 0;

	memset(resp, 0, sizeof(*resp));
	kerf_kube_status_init(&resp->status);
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	resp->body = kerf_buf_str(&r->resp_body);
	resp->body_len = r->resp_body.len;
	resp->content_type = r->resp_content_type;
	resp->warning = kerf_buf_str(&r->warning);
	resp->retry_after_s = r->retry_after_s;
	resp->attempts = r->attempts;
	if (r->stop_rc == -KERF_ELIMIT) {
		resp->http_status = status;
		resp->class = KERF_KUBE_TRANSPORT;
		resp->err = -KERF_ELIMIT;
		snprintf(resp->msg, sizeof(resp->msg), r->watch && status == 200 ?
			 "watch %s: a line longer than %zu bytes" :
			 "%s: response body longer than %zu bytes",
			 r->method, r->watch ? r->lines.max_line_bytes :
			 r->resp_body.max_bytes);
		return;
	}
	if (r->stop_rc != 0) {
		resp->http_status = status;
		resp->class = KERF_KUBE_OK;
		resp->err = r->stop_rc;
		return;
	}
	if (cc != CURLE_OK) {
		resp->http_status = 0;
		resp->class = KERF_KUBE_TRANSPORT;
		resp->err = cc == CURLE_OPERATION_TIMEDOUT ? -KERF_ETIMEDOUT :
			    -KERF_ETRANSPORT;
		snprintf(resp->msg, sizeof(resp->msg), "%s %s: %s", r->method,
			 curl_easy_strerror(cc),
			 kerf_escape(shown, 200, r->errbuf));
		return;
	}
	resp->http_status = status;
	if (status < 200 || status >= 300)
		kerf_kube_status_decode(&resp->status, resp->body, resp->body_len);
	resp->class = kerf_kube_classify(status, resp->status.reason);
	resp->err = kerf_kube_class_errno(resp->class);
	if (resp->class != KERF_KUBE_OK)
		snprintf(resp->msg, sizeof(resp->msg), "%s: HTTP %ld %s: %s",
			 r->method, status, kerf_kube_class_name(resp->class),
			 kerf_escape(shown, 256, resp->status.message));
}

/* Whether r's failed attempt should be made again, and when. */
static bool plan_retry(struct kerf_kube_client *c, struct kreq *r, CURLcode cc,
		       const struct kerf_kube_response *resp)
{
	bool never_sent = cc == CURLE_COULDNT_CONNECT ||
			  cc == CURLE_COULDNT_RESOLVE_HOST;
	int64_t after = resp->retry_after_s;
	uint64_t delay;

	if (r->watch || !kerf_kube_class_is_retryable(resp->class) ||
	    resp->err == -KERF_ELIMIT || (r->flags & KERF_KUBE_REQ_NO_RETRY) ||
	    (resp->http_status == 429 && (r->flags & KERF_KUBE_REQ_OWN_429)))
		return false;
	if (!is_idempotent(r) && !(r->flags & KERF_KUBE_REQ_RETRYABLE) &&
	    !never_sent)
		return false;
	if (r->attempts > c->opts.max_retries ||
	    !kerf_kube_retry_budget_take(&c->budget)) {
		c->counters.retries_denied++;
		return false;
	}
	if (after < 0)
		after = resp->status.retry_after_s;
	if (resp->class == KERF_KUBE_TRANSPORT)
		after = -1;
	delay = kerf_kube_backoff_ms(&c->opts.backoff, r->attempts - 1, after,
				     &c->rng);
	r->due_ms = kerf_kube_client_now_ms(c) + delay;
	r->state = KREQ_WAITING;
	c->counters.retries++;
	return true;
}

static void finish(struct kerf_kube_client *c, struct kreq *r, CURLcode cc)
{
	struct kerf_kube_response resp;
	size_t i;

	for (i = 0; i < c->nr_reqs && c->reqs[i] != r; i++)
		;
	if (r->cancelled)
		return;       /* reaped at the next safe point */
	fill_response(r, cc, &resp);
	c->counters.requests[kerf_kube_verb_of(r->method, r->watch)][resp.class]++;
	c->counters.codes[kerf_kube_verb_of(r->method, r->watch)]
			 [kerf_kube_code_index(resp.http_status)]++;
	if (plan_retry(c, r, cc, &resp)) {
		kerf_kube_client_easy_stop(c, r);
		return;
	}
	if (resp.class == KERF_KUBE_OK)
		kerf_kube_retry_budget_success(&c->budget);
	if (i < c->nr_reqs)
		remove_at(c, i);
	r->done(r->arg, &resp);
	kreq_free(c, r);
}

/* A request that could not even start: answered as a transport error. */
static void fail_start(struct kerf_kube_client *c, size_t i, int rc)
{
	struct kreq *r = c->reqs[i];
	struct kerf_kube_response resp;

	memset(&resp, 0, sizeof(resp));
	kerf_kube_status_init(&resp.status);
	resp.class = KERF_KUBE_TRANSPORT;
	resp.err = rc;
	resp.body = "";
	resp.content_type = "";
	resp.warning = "";
	resp.retry_after_s = -1;
	resp.attempts = r->attempts;
	snprintf(resp.msg, sizeof(resp.msg), "%s: cannot start: %s", r->method,
		 kerf_strerror(rc));
	remove_at(c, i);
	r->done(r->arg, &resp);
	kreq_free(c, r);
}

/*
 * Start what is due at now; returns the milliseconds until the next
 * request falls due (UINT64_MAX: none waits).
 */
static uint64_t start_due(struct kerf_kube_client *c, uint64_t now)
{
	uint64_t next = UINT64_MAX, wait;
	bool limited = false;
	size_t i = 0;
	int rc;

	while (i < c->nr_reqs) {
		struct kreq *r = c->reqs[i];

		if (r->cancelled || r->state == KREQ_RUNNING) {
			i++;
			continue;
		}
		if (r->state == KREQ_WAITING && r->due_ms > now) {
			next = r->due_ms - now < next ? r->due_ms - now : next;
			i++;
			continue;
		}
		if (!r->watch && c->nr_running >= c->opts.max_in_flight) {
			/* FIFO: an answer makes room for the first one waiting */
			i++;
			continue;
		}
		if (!r->watch) {
			/* FIFO: once one waits for a token, all after it do */
			wait = limited ? 1 : kerf_kube_ratelimit_take(&c->rl, now);
			if (wait > 0) {
				if (!r->rate_waited)
					c->counters.rate_limited++;
				r->rate_waited = true;
				limited = true;
				next = wait < next ? wait : next;
				i++;
				continue;
			}
		} else if (r->attempts == 0) {
			c->counters.watches_started++;
		}
		rc = kerf_kube_client_easy_start(c, r);
		if (rc < 0) {
			fail_start(c, i, rc);
			continue;
		}
		i++;
	}
	return next;
}

int kerf_kube_client_poll(struct kerf_kube_client *c, int timeout_ms)
{
	uint64_t next;
	CURLMsg *m;
	int running, left, wait_ms = timeout_ms < 0 ? 0 : timeout_ms;

	reap_cancelled(c);
	next = start_due(c, kerf_kube_client_now_ms(c));
	if (next != UINT64_MAX && next < (uint64_t)wait_ms)
		wait_ms = (int)next;
	if (curl_multi_poll(c->multi, NULL, 0, wait_ms, NULL) != CURLM_OK)
		return -KERF_EIO;
	c->in_curl++;
	if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
		c->in_curl--;
		return -KERF_EIO;
	}
	c->in_curl--;
	while ((m = curl_multi_info_read(c->multi, &left))) {
		struct kreq *r = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		finish(c, r, m->data.result);
	}
	reap_cancelled(c);
	start_due(c, kerf_kube_client_now_ms(c));
	return (int)c->nr_reqs;
}

static int ops_request(void *ctx, const struct kerf_kube_request *req,
		       kerf_kube_done_fn done, void *arg, uint64_t *id)
{
	return kerf_kube_client_request(ctx, req, done, arg, id);
}

static int ops_watch(void *ctx, const struct kerf_kube_request *req,
		     kerf_kube_line_fn on_line, kerf_kube_done_fn done,
		     void *arg, uint64_t *id)
{
	return kerf_kube_client_watch(ctx, req, on_line, done, arg, id);
}

static void ops_cancel(void *ctx, uint64_t id)
{
	kerf_kube_client_cancel(ctx, id);
}

static int ops_poll(void *ctx, int timeout_ms)
{
	int rc = kerf_kube_client_poll(ctx, timeout_ms);

	return rc < 0 ? rc : 0;
}

static uint64_t ops_now_ms(void *ctx)
{
	return kerf_kube_client_now_ms(ctx);
}

void kerf_kube_client_ops(struct kerf_kube_client *c,
			  struct kerf_kube_ops *ops)
{
	*ops = (struct kerf_kube_ops){
		.ctx = c,
		.request = ops_request,
		.watch = ops_watch,
		.cancel = ops_cancel,
		.poll = ops_poll,
		.now_ms = ops_now_ms,
	};
}
