/*
 * webhook_metrics: the webhook server's counters, updated with atomics
 * from its worker threads and read at any time for /metrics (the
 * Prometheus text format).  Requests per route and verdict, a latency
 * histogram per route (arrival to response queued), denials per rule,
 * HTTP errors per code, late and bad ?timeout= requests.  The
 * certificate's counters live with it (admission/certs.h).
 */
#ifndef KERF_ADMISSION_WEBHOOK_METRICS_H
#define KERF_ADMISSION_WEBHOOK_METRICS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

enum kerf_webhook_verdict {
	KERF_WEBHOOK_ALLOWED,
	KERF_WEBHOOK_PATCHED,
	KERF_WEBHOOK_DENIED,
	KERF_WEBHOOK_ERROR,     /* the handler failed or said "error" */
	KERF_WEBHOOK_REFUSED,   /* answered without the handler: 405, 413,
	                           415, or 503 past the deadline */
	KERF_WEBHOOK_NR_VERDICTS,
};

enum {
	/* 0.0005 s ... 1 s */
	KERF_WEBHOOK_HIST_BUCKETS = 11,
	/* distinct rule names counted; more are counted as "other" */
	KERF_WEBHOOK_RULES_MAX = 256,
	KERF_WEBHOOK_CODE_MIN = 400,
	KERF_WEBHOOK_CODE_MAX = 599,
};

/* The buckets' upper bounds in microseconds, ascending. */
extern const uint32_t kerf_webhook_hist_le_us[KERF_WEBHOOK_HIST_BUCKETS];

struct kerf_webhook_route_counters {
	const char *path;            /* borrowed from the server */
	atomic_uint_fast64_t verdicts[KERF_WEBHOOK_NR_VERDICTS];
	atomic_uint_fast64_t le[KERF_WEBHOOK_HIST_BUCKETS]; /* not cumulative */
	atomic_uint_fast64_t count;
	atomic_uint_fast64_t sum_us;
};

struct kerf_webhook_rule_count {
	char *rule;                  /* owned */
	uint64_t denials;
};

struct kerf_webhook_counters {
	struct kerf_webhook_route_counters *routes;
	size_t nr_routes;
	atomic_uint_fast64_t http_errors[KERF_WEBHOOK_CODE_MAX -
					 KERF_WEBHOOK_CODE_MIN + 1];
	atomic_uint_fast64_t late;          /* deadline passed: 503 */
	atomic_uint_fast64_t bad_timeout;   /* ?timeout= ignored */
	pthread_mutex_t mu;                 /* guards the rules */
	struct kerf_webhook_rule_count *rules;
	size_t nr_rules;
	uint64_t other_denials;             /* past KERF_WEBHOOK_RULES_MAX */
};

/* For nr_routes routes named by paths (borrowed). -KERF_ENOMEM. */
int kerf_webhook_counters_init(struct kerf_webhook_counters *m,
			       const char *const *paths, size_t nr_routes)
	__attribute__((warn_unused_result));
void kerf_webhook_counters_release(struct kerf_webhook_counters *m);

/* "allowed", ... to its verdict; anything else is KERF_WEBHOOK_ERROR. */
enum kerf_webhook_verdict kerf_webhook_verdict_of(const char *name);

/* One request on route i: its verdict and its duration. */
void kerf_webhook_count_request(struct kerf_webhook_counters *m, size_t i,
				enum kerf_webhook_verdict v,
				uint64_t duration_us);
/* One denial by rule (NULL counts as "unnamed"). */
void kerf_webhook_count_denial(struct kerf_webhook_counters *m,
			       const char *rule);
/* One answer with an HTTP status of 400 or more. */
void kerf_webhook_count_http_error(struct kerf_webhook_counters *m,
				   unsigned code);

/* Append the counters' families to out. */
int kerf_webhook_counters_render(struct kerf_webhook_counters *m,
				 struct kerf_buf *out)
	__attribute__((warn_unused_result));

#endif /* KERF_ADMISSION_WEBHOOK_METRICS_H */
