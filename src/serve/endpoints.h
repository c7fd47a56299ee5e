/*
 * endpoints: kerf serve's HTTP endpoints on libmicrohttpd, run from the
 * controller's own loop (no thread of their own, so they read the
 * controller's counters without locks):
 *   /healthz   200 "ok" while the loop runs;
 *   /readyz    200 once every cache synced, else 503 with what waits;
 *   /metrics   Prometheus text (serve/metrics.h);
 *   /api/v1/   the read-only JSON API (serve/api.h);
 *   /, /ui/    the dashboard, which reads that API (serve/ui.h).
 */
#ifndef KERF_SERVE_ENDPOINTS_H
#define KERF_SERVE_ENDPOINTS_H

#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "kube/client.h"
#include "serve/controller.h"

struct kerf_endpoints;

/*
 * Listen on addr ("127.0.0.1:8080", ":8080" for every address); kc (the
 * API client's counters, or NULL) is read for /metrics.
 */
int kerf_endpoints_start(const char *addr, const struct kerf_controller *c,
			 const struct kerf_kube_counters *kc,
			 struct kerf_endpoints **out, struct kerf_err *err);
/*
 * More metrics appended to /metrics (the admission webhook's): fn(ctx, b)
 * is called on the controller's thread.
 */
void kerf_endpoints_extra_metrics(struct kerf_endpoints *e,
				  int (*fn)(void *ctx, struct kerf_buf *b),
				  void *ctx);

/* Answer what has arrived, without waiting. */
void kerf_endpoints_run(struct kerf_endpoints *e, int64_t now_ms);
void kerf_endpoints_stop(struct kerf_endpoints *e);

#endif
