/*
 * tenant_status: a Tenant's status as kerf serve keeps it.  What kerf
 * holds for each tenant (usage, borrowed, pending, budget) is written to
 * its /status so `kubectl get tenants` shows it, with the accumulators
 * the core exports (status.history: fair-share usage history and budget)
 * so that a restarted or new leader restores them before it decides.
 *
 * The informer keeps a struct kerf_ctenant per Tenant: its spec and, when
 * the object has one, its status as the API server has it.
 */
#ifndef KERF_SERVE_TENANT_STATUS_H
#define KERF_SERVE_TENANT_STATUS_H

#include <jansson.h>

#include "base/err.h"
#include "core/state.h"
#include "kobj/tenant.h"
#include "serve/world.h"

struct kerf_ctenant {
	struct kerf_kobj_tenant t;
	struct kerf_kobj_tenant_status *status;   /* NULL: none, or unreadable */
	char status_error[KERF_ERR_MSG_MAX];       /* why it was unreadable */
};

/* obj (a Tenant) into a new ctenant, or NULL with err (the spec's error). */
struct kerf_ctenant *kerf_ctenant_decode(const json_t *obj, struct kerf_err *err);
void kerf_ctenant_free(struct kerf_ctenant *ct);

/*
 * The merge patch of ct's /status from the core's state of now: body
 * (malloc'd JSON text) or NULL when the core does not know the tenant.
 * Dimensions of status.history.usageAverage that the core no longer
 * holds are written as 0.  -KERF_ENOMEM.
 */
int kerf_ctenant_status_patch(const struct kerf_state *st,
			      const struct kerf_ctenant *ct, char **body);

/*
 * ct's status.history into the world's core (once, at start, after the
 * nodes are known so that GPU dimensions resolve): 1 restored, 0 nothing
 * to restore, negative with err.
 */
int kerf_ctenant_restore(struct kerf_world *w, const struct kerf_ctenant *ct,
			 struct kerf_err *err);

#endif
