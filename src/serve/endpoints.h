/*
 * endpoints: kerf serve's HTTP endpoints on libmicrohttpd, run from the
 * controller's own loop (no thread of their own, so they read the
 * controller's counters without locks):
 *   /healthz   200 "ok" while the loop runs;
 *   /readyz    200 once every cache synced, else 503 with what waits;
 *   /metrics   Prometheus text: cycles and their latency, actions sent and
 *              their outcome, objects refused, leadership, in flight.
 */
#ifndef KERF_SERVE_ENDPOINTS_H
#define KERF_SERVE_ENDPOINTS_H

#include <stdint.h>

#include "base/err.h"
#include "serve/controller.h"

struct kerf_endpoints;

/* Listen on addr ("127.0.0.1:8080", ":8080" for every address). */
int kerf_endpoints_start(const char *addr, const struct kerf_controller *c,
			 struct kerf_endpoints **out, struct kerf_err *err);
/* Answer what has arrived, without waiting. */
void kerf_endpoints_run(struct kerf_endpoints *e, int64_t now_ms);
void kerf_endpoints_stop(struct kerf_endpoints *e);

/* The /metrics text into buf (for tests too). */
int kerf_endpoints_metrics(const struct kerf_controller *c, int64_t now_ms,
			   struct kerf_buf *buf);

#endif
