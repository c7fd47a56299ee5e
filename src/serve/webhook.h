/*
 * webhook: kerf serve's admission webhook, the HTTPS server of
 * admission/server.h on its own port beside the controller, answering
 * /validate/pods, /mutate/pods, /validate/namespaces and /validate/tenants
 * with the rules of admission/decide.h (docs/admission-rules.md).
 *
 * The decisions read a policy snapshot (admission/policy.h) built from
 * the controller's caches on the controller's thread, in
 * kerf_serve_webhook_step, whenever the cached Namespaces, Tenants,
 * PriorityClasses, GPUPools or Nodes changed (at most once a second).  A
 * new snapshot is published under a mutex; each review takes a reference
 * to the current one, so the server's worker threads never touch the
 * controller and never wait for it.
 *
 * /readyz of the webhook port is 200 once the controller's caches synced
 * and a snapshot of them is published: before that a tenant namespace
 * would be unknown, and its GPU pods refused.
 */
#ifndef KERF_SERVE_WEBHOOK_H
#define KERF_SERVE_WEBHOOK_H

#include <stdint.h>

#include "admission/policy.h"
#include "base/buf.h"
#include "base/err.h"
#include "serve/controller.h"

struct kerf_serve_webhook;

struct kerf_serve_webhook_opts {
	const char *addr;                 /* ":8443", "127.0.0.1:0" */
	const char *cert_path;
	const char *key_path;
	const struct kerf_admission_config *cfg;   /* copied */
	unsigned threads;                 /* 0: the server's default (2) */
};

int kerf_serve_webhook_start(const struct kerf_serve_webhook_opts *o,
			     const struct kerf_controller *c,
			     struct kerf_serve_webhook **out,
			     struct kerf_err *err)
	__attribute__((warn_unused_result));

/* On the controller's thread: publish a new snapshot when due. */
void kerf_serve_webhook_step(struct kerf_serve_webhook *w, int64_t now_ms);

/* The port it listens on. */
uint16_t kerf_serve_webhook_port(const struct kerf_serve_webhook *w);

/* Its metrics (kerf_webhook_*, and the snapshots published). */
int kerf_serve_webhook_metrics(struct kerf_serve_webhook *w,
			       struct kerf_buf *out)
	__attribute__((warn_unused_result));

/* Stop serving and free everything (NULL is fine). */
void kerf_serve_webhook_stop(struct kerf_serve_webhook *w);

#endif
