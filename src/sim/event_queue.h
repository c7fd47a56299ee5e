/*
 * event_queue: the simulator's future events, earliest first.  Events at the
 * same time come out in the order of their kind (see enum kerf_ev_kind),
 * then in the order they were pushed, so a run is the same on every machine.
 */
#ifndef KERF_SIM_EVENT_QUEUE_H
#define KERF_SIM_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* Order of events at the same instant. */
enum kerf_ev_kind {
	KERF_EV_FINISH = 0,     /* a running workload completes */
	KERF_EV_NODE,           /* a node goes down or comes back */
	KERF_EV_QUOTA,          /* a tenant's quota is edited */
	KERF_EV_TENANT,         /* a tenant is added or removed */
	KERF_EV_ACK,            /* a victim acknowledges its checkpoint */
	KERF_EV_DEADLINE,       /* a victim's checkpoint deadline */
	KERF_EV_TIMER,          /* something time-based is due: run a cycle */
	KERF_EV_ARRIVAL,        /* a generator submits its next workload */
	KERF_EV_CYCLE,          /* a scheduling cycle */
};

struct kerf_event {
	int64_t at_ms;
	uint64_t seq;           /* push order, for ties */
	enum kerf_ev_kind kind;
	uint32_t a;             /* workload id, generator, node, tenant... */
	uint32_t b;             /* kind-specific */
	uint64_t gen;           /* e.g. the run of a workload a FINISH is for */
};

struct kerf_event_queue {
	struct kerf_event *ev;
	size_t nr;
	size_t alloc;
	uint64_t next_seq;
};

void kerf_evq_init(struct kerf_event_queue *q);
void kerf_evq_release(struct kerf_event_queue *q);
int kerf_evq_push(struct kerf_event_queue *q, struct kerf_event e);

/* Remove the earliest event into *e; 0 when empty. */
int kerf_evq_pop(struct kerf_event_queue *q, struct kerf_event *e);

#endif /* KERF_SIM_EVENT_QUEUE_H */
