/*
 * crash: named points where kerf serve kills itself with SIGKILL, as a
 * crash, an OOM kill or a node failure would, for the crash-point tests
 * (tests/crash/).  Chosen by the environment of the process:
 *
 *   KERF_CRASH_AT=POINT[:N]    the N-th time POINT is reached (1 when
 *                              not given, at most 1000000)
 *
 *   after-first-bind   a gang's first binding was answered (bound), the
 *                      others not sent yet
 *   mid-preemption     an eviction was answered (the victim leaves; its
 *                      preemptor not yet bound)
 *   during-relist      a page of a list made again (after a 410 or a
 *                      broken watch) was applied, before the objects it
 *                      no longer holds are deleted
 *
 * The points are always compiled in and cost one compare each.  The kill
 * is raise(SIGKILL), never exit: nothing is flushed, no lease given back.
 */
#ifndef KERF_SERVE_CRASH_H
#define KERF_SERVE_CRASH_H

#include <stdint.h>

#include "base/err.h"

enum kerf_crash_point {
	KERF_CRASH_NONE = 0,
	KERF_CRASH_AFTER_FIRST_BIND,
	KERF_CRASH_MID_PREEMPTION,
	KERF_CRASH_DURING_RELIST,
};

struct kerf_crash {
	uint8_t point;         /* enum kerf_crash_point */
	uint32_t left;         /* times to pass it before the kill */
};

#define KERF_CRASH_ENV "KERF_CRASH_AT"

/* text ("after-first-bind", "during-relist:3"; NULL or "": none) into *out. */
int kerf_crash_parse(const char *text, struct kerf_crash *out,
		     struct kerf_err *err);

/* Point reached: kill the process when it is the chosen one, due now. */
void kerf_crash_reached(struct kerf_crash *c);

static inline void kerf_crash_at(struct kerf_crash *c, uint8_t point)
{
	if (c->point == point)
		kerf_crash_reached(c);
}

#endif /* KERF_SERVE_CRASH_H */
