/*
 * ratelimit: the client's token bucket (client-go's flowcontrol shape):
 * at most burst requests at once, refilled at qps per second.  Pure: time
 * comes in as now_ms (a monotonic clock the caller reads), so tests drive
 * it exactly.  Arithmetic is in integers: a token is 10^6 units and every
 * millisecond adds qps_milli units, so a qps of 0.5 (qps_milli 500) is
 * exact too.
 */
#ifndef KERF_KUBE_RATELIMIT_H
#define KERF_KUBE_RATELIMIT_H

#include <stdint.h>

enum { KERF_KUBE_RL_UNITS_PER_TOKEN = 1000000 };

struct kerf_kube_ratelimit {
	uint64_t qps_milli;    /* refill, thousandths of a token per second; 0: no limit */
	uint64_t burst;        /* bucket size in tokens, >= 1 */
	uint64_t units;        /* tokens held, in units */
	uint64_t last_ms;      /* when units was last brought up to date */
};

/* A full bucket at now_ms; burst 0 counts as 1. */
void kerf_kube_ratelimit_init(struct kerf_kube_ratelimit *rl,
			      uint64_t qps_milli, uint64_t burst,
			      uint64_t now_ms);

/*
 * Take a token at now_ms: 0 when taken, else the milliseconds until one
 * will be there (nothing taken).  A clock that goes back is taken as no
 * time passing.
 */
uint64_t kerf_kube_ratelimit_take(struct kerf_kube_ratelimit *rl,
				  uint64_t now_ms);

#endif /* KERF_KUBE_RATELIMIT_H */
