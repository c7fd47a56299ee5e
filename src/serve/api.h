/*
 * api: kerf serve's read-only JSON API (docs/api.md, "The read-only
 * API"), what `kerf get` and `kerf explain` read:
 *   GET /api/v1/tenants                the tenant tree, quotas and usage
 *   GET /api/v1/queue                  pending work in the cycle's order
 *   GET /api/v1/nodes                  nodes, free GPUs, MIG, NVLink
 *   GET /api/v1/gpus                   every GPU with its pods, MIG, health
 *   GET /api/v1/state                  the whole state, re-runnable by
 *                                      kerf what-if (api_state.c)
 *   GET /api/v1/explain/NS/POD         why a pod waits, layer by layer
 *   GET /api/v1/workloads/NS/POD       the same
 * Everything is read from the world as the last cycle and the events
 * since left it; the endpoints run in the controller's loop, so no lock
 * is taken.  Errors are Kubernetes-like Status objects (404 for a name
 * kerf does not know or a path it does not serve, 405 for a method other
 * than GET or HEAD).
 */
#ifndef KERF_SERVE_API_H
#define KERF_SERVE_API_H

#include <stdint.h>

#include "serve/world.h"
#include "view/api_json.h"

/*
 * Answer method url (a query is ignored) from w at now_ms: returns the
 * HTTP status and the JSON text in *body (malloc'd, the caller frees it;
 * NULL only with 500, out of memory).
 */
int kerf_api_answer(const struct kerf_world *w, const char *method,
		    const char *url, int64_t now_ms, char **body);

#endif
