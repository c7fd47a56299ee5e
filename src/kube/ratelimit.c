#include "kube/ratelimit.h"

void kerf_kube_ratelimit_init(struct kerf_kube_ratelimit *rl,
			      uint64_t qps_milli, uint64_t burst,
			      uint64_t now_ms)
{
	rl->qps_milli = qps_milli;
	rl->burst = burst ? burst : 1;
	if (rl->burst > UINT64_MAX / KERF_KUBE_RL_UNITS_PER_TOKEN)
		rl->burst = UINT64_MAX / KERF_KUBE_RL_UNITS_PER_TOKEN;
	rl->units = rl->burst * KERF_KUBE_RL_UNITS_PER_TOKEN;
	rl->last_ms = now_ms;
}

static void refill(struct kerf_kube_ratelimit *rl, uint64_t now_ms)
{
	uint64_t full = rl->burst * KERF_KUBE_RL_UNITS_PER_TOKEN;
	uint64_t elapsed, room;

	if (now_ms <= rl->last_ms)
		return;
	elapsed = now_ms - rl->last_ms;
	rl->last_ms = now_ms;
	room = full - rl->units;
	if (elapsed >= room / rl->qps_milli + 1)
		rl->units = full;
	else
		rl->units += elapsed * rl->qps_milli;
	if (rl->units > full)
		rl->units = full;
}

uint64_t kerf_kube_ratelimit_take(struct kerf_kube_ratelimit *rl,
				  uint64_t now_ms)
{
	uint64_t missing;

	if (rl->qps_milli == 0)
		return 0;
	refill(rl, now_ms);
	if (rl->units >= KERF_KUBE_RL_UNITS_PER_TOKEN) {
		rl->units -= KERF_KUBE_RL_UNITS_PER_TOKEN;
		return 0;
	}
	missing = KERF_KUBE_RL_UNITS_PER_TOKEN - rl->units;
	return (missing + rl->qps_milli - 1) / rl->qps_milli;
}
