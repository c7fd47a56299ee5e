/*
 * fake: a scriptable struct kerf_kube_ops for tests of the informers and
 * the controller, no server needed.
 *
 * Answers are scripted per method and path (the path up to '?'; "WATCH"
 * as the method for watches) and used in the order pushed.  A request
 * with nothing scripted fails as a transport error whose message says so;
 * a watch with nothing scripted stays open and quiet, as a server with
 * nothing to say does.  kerf_kube_fake_fail_nth makes the n-th call (1 for
 * the first, counting requests and watches) fail with an HTTP status or a
 * transport error whatever is scripted, which leaves its script for the
 * next call.
 *
 * Nothing is answered inside request or watch: each kerf_kube_fake_poll
 * answers the calls made before it started (a watch delivers all its lines
 * and then ends as scripted), so a test steps through a conversation one
 * poll at a time.  Time is the fake's own: now_ms moves only when the test
 * moves it.  Every call is recorded (method and full path, with query).
 */
#ifndef KERF_KUBE_FAKE_H
#define KERF_KUBE_FAKE_H

#include <stddef.h>
#include <stdint.h>

#include "kube/ops.h"

enum kerf_kube_fake_end {
	KERF_KUBE_FAKE_END_CLEAN = 0,   /* the server closes the stream */
	KERF_KUBE_FAKE_END_DROP,        /* the connection drops */
	KERF_KUBE_FAKE_END_OPEN,        /* stays open until cancelled */
};

struct kerf_kube_fake_script {
	long http_status;               /* 0: a transport error */
	int err;                        /* with 0: -KERF_ETRANSPORT if 0 */
	const char *body;               /* of an answer; NULL: "" (copied) */
	int64_t retry_after_s;          /* header; 0 counts as none here */
	const char *const *lines;       /* watch with 200: the lines (copied) */
	size_t nr_lines;
	enum kerf_kube_fake_end end;    /* watch with 200 */
};

struct kerf_kube_fake_call {
	char *method;                   /* "WATCH" for watches */
	char *path;                     /* with query */
};

struct kerf_kube_fake;

struct kerf_kube_fake *kerf_kube_fake_new(void);
void kerf_kube_fake_free(struct kerf_kube_fake *f);
void kerf_kube_fake_ops(struct kerf_kube_fake *f, struct kerf_kube_ops *ops);

/* Script the next answer for method and path (no query); 0 or -ENOMEM. */
int kerf_kube_fake_push(struct kerf_kube_fake *f, const char *method,
			const char *path,
			const struct kerf_kube_fake_script *s)
	__attribute__((warn_unused_result));

/* The same, short: an answer with status and body. */
int kerf_kube_fake_push_answer(struct kerf_kube_fake *f, const char *method,
			       const char *path, long http_status,
			       const char *body)
	__attribute__((warn_unused_result));

/* The n-th call fails: http_status, or a transport error err when 0. */
void kerf_kube_fake_fail_nth(struct kerf_kube_fake *f, unsigned n,
			     long http_status, int err);

void kerf_kube_fake_set_now(struct kerf_kube_fake *f, uint64_t now_ms);

/* Answer the calls made so far (see above); returns how many were. */
int kerf_kube_fake_poll(struct kerf_kube_fake *f);

size_t kerf_kube_fake_nr_calls(const struct kerf_kube_fake *f);
const struct kerf_kube_fake_call *
kerf_kube_fake_call(const struct kerf_kube_fake *f, size_t i);

/* Watches open now (started, not ended or cancelled). */
size_t kerf_kube_fake_nr_open_watches(const struct kerf_kube_fake *f);

/* Scripts not yet used. */
size_t kerf_kube_fake_nr_scripts_left(const struct kerf_kube_fake *f);

#endif /* KERF_KUBE_FAKE_H */
