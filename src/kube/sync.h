/*
 * sync: one request sent and waited for, for tools and tests that read
 * the API between steps (the e2e suite, bench_k8s_bind).  The caller's
 * turn function drives the loop (it must poll the ops; it may step a
 * controller too).  Not for the controller itself, which never waits.
 */
#ifndef KERF_KUBE_SYNC_H
#define KERF_KUBE_SYNC_H

#include <jansson.h>

#include "kube/ops.h"

/*
 * The HTTP status of req (0: no answer within max_turns turns, or not
 * sent); *body the parsed answer (caller decrefs; NULL when not JSON) when
 * body is not NULL.
 */
long kerf_kube_sync(const struct kerf_kube_ops *ops,
		    const struct kerf_kube_request *req,
		    void (*turn)(void *arg), void *arg, unsigned max_turns,
		    json_t **body);

#endif
