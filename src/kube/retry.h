/*
 * retry: how long to wait before trying a request again, and how many
 * retries the client may spend.
 *
 * Backoff is exponential with full jitter: before retry number attempt
 * (0 for the first retry) the pause is uniform in [0, min(cap_ms, base_ms *
 * 2^attempt)], drawn from a seeded kerf_rng the caller owns, so tests know
 * every pause.  When the server said how long to wait (a Retry-After header
 * or a Status's retryAfterSeconds, on 429, 503 and 504) that wins: exactly
 * that many seconds, at most max_retry_after_ms.
 *
 * The budget (gRPC's retry throttling) keeps a failing server from being
 * hit by retries of every caller at once: it holds up to max_milli
 * thousandths of a token, every retry costs 1000, every success gives back
 * ratio_milli, and a retry is allowed only while more than half the maximum
 * is left.
 */
#ifndef KERF_KUBE_RETRY_H
#define KERF_KUBE_RETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/rng.h"

struct kerf_kube_backoff {
	uint64_t base_ms;              /* first ceiling */
	uint64_t cap_ms;               /* largest ceiling */
	uint64_t max_retry_after_ms;   /* a server's Retry-After is cut to this */
};

/* The pause before retry number attempt; retry_after_s < 0: none given. */
uint64_t kerf_kube_backoff_ms(const struct kerf_kube_backoff *b,
			      unsigned attempt, int64_t retry_after_s,
			      struct kerf_rng *rng);

struct kerf_kube_retry_budget {
	uint64_t max_milli;
	uint64_t ratio_milli;
	uint64_t tokens_milli;
};

/* A full budget of max_tokens tokens; each success refunds ratio_milli. */
void kerf_kube_retry_budget_init(struct kerf_kube_retry_budget *b,
				 uint64_t max_tokens, uint64_t ratio_milli);

/* Spend one retry: true when the budget allows it (and it is spent). */
bool kerf_kube_retry_budget_take(struct kerf_kube_retry_budget *b);

/* A request succeeded. */
void kerf_kube_retry_budget_success(struct kerf_kube_retry_budget *b);

#endif /* KERF_KUBE_RETRY_H */
