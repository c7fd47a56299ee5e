/*
 * events: NVML's health events read on a thread of their own.
 *
 * nvmlEventSetWait_v2 blocks, so one thread waits (1 s at a time) and
 * hands what it got to the agent's loop through a bounded queue.  A wait
 * that fails other than by timeout is handed on once, then the thread
 * backs off (1 s doubling to 30 s, no busy loop: reliability N-05) and
 * tries again; the first wait that works after that is handed on as a
 * recovery.  The queue holds 1024 events; when it is full, an event that
 * would take a GPU out of service is kept per GPU (the first one), the
 * others are counted and dropped, so a storm loses no unhealthy
 * transition and memory stays bounded (N-12).
 */
#ifndef KERF_AGENT_EVENTS_H
#define KERF_AGENT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "nvml/nvml_load.h"

enum kerf_agent_event_kind {
	KERF_AGENT_EV_NVML = 0,      /* an event: ev and gpu */
	KERF_AGENT_EV_WAIT_FAILED,   /* rc says why */
	KERF_AGENT_EV_RECOVERED,     /* waits work again */
};

struct kerf_agent_event {
	enum kerf_agent_event_kind kind;
	nvmlReturn_t rc;
	nvmlEventData_t ev;
	int gpu;                     /* NVML index of ev.device, -1 unknown */
	int64_t at_ms;               /* monotonic, when the wait returned */
};

struct kerf_agent_event_stats {
	uint64_t waits, events, wait_errors, dropped;
	char registered_off[160];    /* devices whose registration failed */
};

struct kerf_agent_events;

/*
 * Create the event set, register each of the nr devices (handles[i] is
 * NVML index i) and start the thread.  -KERF_ENOTFOUND when the library has
 * no events (the feature is off), -KERF_EIO when the set cannot be made.
 */
int kerf_agent_events_start(struct kerf_agent_events **out, const struct kerf_nvml *nv,
			    const nvmlDevice_t *handles, unsigned nr, struct kerf_err *err);

/* Move at most max queued events to out (oldest first); returns how many. */
size_t kerf_agent_events_take(struct kerf_agent_events *e, struct kerf_agent_event *out,
			      size_t max);

void kerf_agent_events_stats(struct kerf_agent_events *e, struct kerf_agent_event_stats *s);

/* Stop and join the thread, free the set.  e may be NULL. */
void kerf_agent_events_stop(struct kerf_agent_events *e);

/* CLOCK_MONOTONIC in ms. */
int64_t kerf_agent_now_ms(void);

#endif /* KERF_AGENT_EVENTS_H */
