#include "kube/retry.h"

uint64_t kerf_kube_backoff_ms(const struct kerf_kube_backoff *b,
			      unsigned attempt, int64_t retry_after_s,
			      struct kerf_rng *rng)
{
	uint64_t ceiling = b->base_ms;

	if (retry_after_s >= 0) {
		uint64_t ms = (uint64_t)retry_after_s * 1000;

		return ms < b->max_retry_after_ms ? ms : b->max_retry_after_ms;
	}
	while (attempt-- > 0 && ceiling < b->cap_ms)
		ceiling *= 2;
	if (ceiling > b->cap_ms)
		ceiling = b->cap_ms;
	return kerf_rng_below(rng, ceiling + 1);
}

void kerf_kube_retry_budget_init(struct kerf_kube_retry_budget *b,
				 uint64_t max_tokens, uint64_t ratio_milli)
{
	b->max_milli = max_tokens * 1000;
	b->ratio_milli = ratio_milli;
	b->tokens_milli = b->max_milli;
}

bool kerf_kube_retry_budget_take(struct kerf_kube_retry_budget *b)
{
	if (b->tokens_milli <= b->max_milli / 2 || b->tokens_milli < 1000)
		return false;
	b->tokens_milli -= 1000;
	return true;
}

void kerf_kube_retry_budget_success(struct kerf_kube_retry_budget *b)
{
	b->tokens_milli += b->ratio_milli;
	if (b->tokens_milli > b->max_milli)
		b->tokens_milli = b->max_milli;
}
