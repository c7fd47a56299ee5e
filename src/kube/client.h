/*
 * client: the Kubernetes API client on a libcurl multi handle.
 *
 * Single-threaded: the owner's loop calls kerf_kube_client_poll, which
 * starts what is due, moves bytes and runs callbacks (kube/ops.h gives the
 * contract; kerf_kube_client_ops wraps a client as that table).  Many
 * requests are in flight at once; HTTP/2 is used where the server offers
 * it (ALPN), HTTP/1.1 connections are kept alive.
 *
 * Security: https only, the server's certificate always verified (against
 * the config's CA, else the system's), the name checked (tls-server-name
 * when given); a bearer token (read again when its file changes) and/or a
 * client certificate, both from memory.
 *
 * Rate limit: a token bucket (kube/ratelimit.h) every request passes
 * before it is sent, in the order they were made, retries included;
 * watches are exempt.
 *
 * Retries (kube/retry.h): an answer of class 429, 503, 504 or a transport
 * error is tried again, at most max_retries times, when the request is
 * idempotent (GET, PUT, DELETE, or flagged KERF_KUBE_REQ_RETRYABLE) or when
 * it never reached the server (connection refused), and while the retry
 * budget allows; the pause honours Retry-After or retryAfterSeconds, else
 * exponential backoff with full jitter from the client's seeded rng.
 * Watches are never retried here: the informer resumes them.
 *
 * Bounds: a response body is at most max_body_bytes (-KERF_ELIMIT), a
 * watch line at most max_line_bytes, a request takes at most its
 * timeout_ms (a watch: only if it sets one).  At most max_in_flight
 * requests (watches apart) are on the wire at once, the others wait in
 * order: an attempt in flight costs a libcurl handle and, over HTTP/1.1,
 * a TLS connection (tens of KB each), a request waiting only itself.
 */
#ifndef KERF_KUBE_CLIENT_H
#define KERF_KUBE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/config.h"
#include "kube/ops.h"
#include "kube/retry.h"
#include "kube/status.h"

enum kerf_kube_verb {
	KERF_KUBE_VERB_GET = 0,
	KERF_KUBE_VERB_POST,
	KERF_KUBE_VERB_PUT,
	KERF_KUBE_VERB_PATCH,
	KERF_KUBE_VERB_DELETE,
	KERF_KUBE_VERB_WATCH,
	KERF_KUBE_VERB_OTHER,
	KERF_KUBE_VERB_COUNT_,
};

/*
 * HTTP statuses counted one by one in kerf_kube_counters.codes: index 0 is
 * no answer at all (a transport error), the last index every status not
 * listed (kerf_kube_code_index, kerf_kube_code_name).
 */
enum { KERF_KUBE_CODE_COUNT_ = 20 };

/* For metrics; the controller reads it as it likes. */
struct kerf_kube_counters {
	/* every answered attempt, by verb and class (class names the code) */
	uint64_t requests[KERF_KUBE_VERB_COUNT_][KERF_KUBE_CLASS_COUNT_];
	/* the same attempts by verb and HTTP status (kerf_kube_code_index) */
	uint64_t codes[KERF_KUBE_VERB_COUNT_][KERF_KUBE_CODE_COUNT_];
	uint64_t retries;               /* attempts made again */
	uint64_t retries_denied;        /* retryable but over budget or max */
	uint64_t rate_limited;          /* requests that waited for a token */
	uint64_t watches_started;
	uint64_t token_reloads;         /* token file read again */
	uint64_t token_errors;          /* token file unreadable (old one kept) */
	uint64_t in_flight_max;         /* most requests on the wire at once */
};

struct kerf_kube_client_opts {
	uint64_t qps_milli;             /* 0: 10 QPS; UINT64_MAX: no limit */
	uint64_t burst;                 /* 0: 100 */
	uint32_t timeout_ms;            /* 0: 30 s per request */
	uint32_t connect_timeout_ms;    /* 0: 10 s */
	unsigned max_retries;           /* 0: 5; set no_retry for none */
	bool no_retry;
	struct kerf_kube_backoff backoff;   /* zeros: 200 ms .. 30 s, Retry-After <= 120 s */
	uint64_t retry_budget_tokens;   /* 0: 10 */
	uint64_t retry_ratio_milli;     /* 0: 100 (a success refunds 0.1) */
	size_t max_body_bytes;          /* 0: 64 MiB */
	size_t max_line_bytes;          /* 0: KERF_KUBE_MAX_LINE_BYTES */
	unsigned max_in_flight;         /* 0: 64 requests on the wire, watches apart */
	uint64_t seed;                  /* of the backoff's rng */
	uint64_t (*now_ms)(void *arg);  /* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	const char *user_agent;         /* NULL: "kerf/<version>" */
};

struct kerf_kube_client;

/*
 * A client for cfg (copied) with opts (NULL: defaults).  NULL on error,
 * with err saying why (a server URL that is not https://host[:port][/p],
 * out of memory, libcurl refusing to start).
 */
struct kerf_kube_client *kerf_kube_client_new(
	const struct kerf_kube_config *cfg,
	const struct kerf_kube_client_opts *opts, struct kerf_err *err);

/* Stop every request (no callbacks) and free the client; NULL is fine. */
void kerf_kube_client_free(struct kerf_kube_client *c);

int kerf_kube_client_request(struct kerf_kube_client *c,
			     const struct kerf_kube_request *req,
			     kerf_kube_done_fn done, void *arg, uint64_t *id)
	__attribute__((warn_unused_result));
int kerf_kube_client_watch(struct kerf_kube_client *c,
			   const struct kerf_kube_request *req,
			   kerf_kube_line_fn on_line, kerf_kube_done_fn done,
			   void *arg, uint64_t *id)
	__attribute__((warn_unused_result));
void kerf_kube_client_cancel(struct kerf_kube_client *c, uint64_t id);

/*
 * Start what is due, wait for I/O at most timeout_ms (less when a retry
 * or a rate-limited request falls due sooner), then finish what is done.
 * Returns the number of requests still pending (queued, waiting or in
 * flight), or a negative error when libcurl fails.
 */
int kerf_kube_client_poll(struct kerf_kube_client *c, int timeout_ms);

uint64_t kerf_kube_client_now_ms(struct kerf_kube_client *c);

const struct kerf_kube_counters *
kerf_kube_client_counters(const struct kerf_kube_client *c);

/* The client as an ops table (ctx is c). */
void kerf_kube_client_ops(struct kerf_kube_client *c,
			  struct kerf_kube_ops *ops);

/* The verb a request counts under (watch passes true). */
enum kerf_kube_verb kerf_kube_verb_of(const char *method, bool watch);

/* "GET", "POST", ..., "WATCH", "OTHER": the verb's name for metrics. */
const char *kerf_kube_verb_name(enum kerf_kube_verb v);

/* The index of http_status in codes[] (0: no answer; last: not listed). */
unsigned kerf_kube_code_index(long http_status);

/* The label of index i: "<error>", "200", ..., "other". */
const char *kerf_kube_code_name(unsigned i);

#endif /* KERF_KUBE_CLIENT_H */
