/*
 * metrics: kerf serve's /metrics text (Prometheus exposition format
 * 0.0.4; docs/kubernetes.md lists the families): the controller's and
 * the world's counters, the cycle latency histogram, pending, admitted
 * and preempted workloads, each tenant's GPU usage against its quota per
 * flavor, requests to the Kubernetes API by verb and code, and watch
 * restarts per resource.  Read in the controller's loop: no locks.
 */
#ifndef KERF_SERVE_METRICS_H
#define KERF_SERVE_METRICS_H

#include <stdint.h>

#include "base/buf.h"
#include "kube/client.h"
#include "serve/controller.h"

/*
 * Append the text to b: 0, or -KERF_ENOMEM (or the buffer's limit) with
 * what fitted.  kc may be NULL: no API request counts then.
 */
int kerf_metrics_text(const struct kerf_controller *c,
		      const struct kerf_kube_counters *kc, int64_t now_ms,
		      struct kerf_buf *b);

#endif
