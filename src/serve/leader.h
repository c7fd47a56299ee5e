/*
 * leader: leader election on a coordination.k8s.io/v1 Lease, as client-go
 * does it, as a state machine with no I/O: kerf_elector_poll says which
 * request to send now (GET, then POST to create or PUT to take or renew),
 * kerf_elector_answer takes the reply.
 *
 * Safety: a replica acts as leader only while its last successful write
 * of the lease is younger than renew_deadline, which is shorter than the
 * lease duration; another replica takes over only after it has seen the
 * same lease record unchanged for a whole duration on its own clock (never
 * comparing clocks across machines).  So two replicas never both believe
 * they lead, as long as clocks run at about the same rate.  Writes are
 * conditional on the resourceVersion read: a race is a 409, lost cleanly.
 */
#ifndef KERF_SERVE_LEADER_H
#define KERF_SERVE_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kobj/lease.h"
#include "kobj/request.h"

struct kerf_elector_config {
	char ns[64];
	char name[254];
	char identity[KERF_LEASE_HOLDER_MAX];
	int64_t duration_ms;        /* leaseDurationSeconds (15 s) */
	int64_t renew_deadline_ms;  /* leader gives up after (10 s) */
	int64_t retry_ms;           /* between tries (2 s) */
};

enum kerf_elector_step {
	KERF_ELECT_GET = 0,         /* read the lease */
	KERF_ELECT_CREATE,          /* it was not there: create it, holding it */
	KERF_ELECT_DECIDE,          /* take or renew it, or wait */
	KERF_ELECT_RELEASE,
};

struct kerf_elector {
	struct kerf_elector_config cfg;
	enum kerf_elector_step next;    /* what the next poll does */
	enum kerf_elector_step sent;    /* what is in flight */
	bool in_flight;
	struct kerf_lease seen;     /* the record last read */
	bool have_seen;
	int64_t observed_ms;        /* when seen last changed, our clock */
	struct kerf_lease writing;  /* what is being written */
	bool leading;               /* renewed_ms is a write of ours holding it */
	int64_t renewed_ms;         /* our last successful write */
	int64_t next_ms;            /* next try */
	uint64_t nr_transitions;    /* times we became leader */
};

int kerf_elector_init(struct kerf_elector *e,
		      const struct kerf_elector_config *cfg,
		      struct kerf_err *err);

/*
 * 1 with *req filled (release it after sending) when a request is due at
 * now_ms, 0 when not (e->next_ms says when), negative on error.
 */
int kerf_elector_poll(struct kerf_elector *e, int64_t now_ms,
		      struct kerf_kreq *req, struct kerf_err *err);

/* The reply to the request poll gave: HTTP status (0: none) and body. */
void kerf_elector_answer(struct kerf_elector *e, int64_t now_ms,
			 long http_status, const char *body);

bool kerf_elector_is_leader(const struct kerf_elector *e, int64_t now_ms);

/* On shutdown: 1 and *req (a PUT emptying the holder) when we hold it. */
int kerf_elector_release(struct kerf_elector *e, int64_t now_ms,
			 struct kerf_kreq *req, struct kerf_err *err);

#endif
