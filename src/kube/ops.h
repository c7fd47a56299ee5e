/*
 * ops: the Kubernetes API as the controller and the informers see it, an
 * ops table (style: every external system behind one, with a fake).  Two
 * implementations: the libcurl client (kube/client.h,
 * kerf_kube_client_ops) and the scriptable fake (kube/fake.h).
 *
 * Everything is asynchronous and single-threaded: request and watch only
 * start work and return an id; the answers come from inside poll, which
 * the owner's loop calls, through the callbacks given.  A callback may
 * start requests and cancel any request, its own included.  After cancel
 * returns, no callback of that request runs.
 *
 * A request's done callback runs exactly once unless it is cancelled.  A
 * watch's on_line runs for each line of an HTTP 200 stream; its done runs
 * once when the stream ends: class OK when the server closed it cleanly,
 * TRANSPORT when it dropped (resp->err -KERF_ELIMIT for a line over the
 * bound), anything else when the server refused the watch (then no line
 * came).  Returning non-zero from on_line stops the stream (done runs with
 * that code in resp->err).
 */
#ifndef KERF_KUBE_OPS_H
#define KERF_KUBE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kube/lines.h"
#include "kube/status.h"

enum kerf_kube_req_flags {
	/* Retry although the method is not idempotent (POST, PATCH). */
	KERF_KUBE_REQ_RETRYABLE = 1u << 0,
	/* Never retry, whatever the method. */
	KERF_KUBE_REQ_NO_RETRY = 1u << 1,
	/*
	 * A 429 is an answer for the caller, not a retry (the Eviction API's
	 * "would violate the pod's disruption budget": the caller says why
	 * and asks again itself); other failures retry as the flags say.
	 */
	KERF_KUBE_REQ_OWN_429 = 1u << 2,
};

struct kerf_kube_request {
	const char *method;          /* "GET", "POST", "PUT", "PATCH", "DELETE" */
	const char *path;            /* "/api/v1/pods?limit=500", escaped */
	const char *content_type;    /* of body; NULL without a body */
	const char *body;            /* copied when the request starts */
	size_t body_len;
	uint32_t timeout_ms;         /* whole request; 0: the client's default */
	unsigned flags;              /* enum kerf_kube_req_flags */
};

enum { KERF_KUBE_MSG_MAX = 320 };

struct kerf_kube_response {
	long http_status;            /* 0: no answer (transport error) */
	enum kerf_kube_class class;
	int err;                     /* kerf_kube_class_errno(class), or the cause */
	const char *body;            /* borrowed for the callback; NUL-terminated */
	size_t body_len;
	const char *content_type;    /* "" when absent */
	const char *warning;         /* Warning headers joined by "\n", or "" */
	int64_t retry_after_s;       /* Retry-After header; -1: none */
	struct kerf_kube_status status;   /* the body's Status, when it is one */
	unsigned attempts;           /* 1 + retries made */
	char msg[KERF_KUBE_MSG_MAX]; /* human text, escaped; "" when OK */
};

typedef void (*kerf_kube_done_fn)(void *arg,
				  const struct kerf_kube_response *resp);

struct kerf_kube_ops {
	void *ctx;
	/* Start req; *id names it for cancel.  0 or a negative error. */
	int (*request)(void *ctx, const struct kerf_kube_request *req,
		       kerf_kube_done_fn done, void *arg, uint64_t *id);
	/* Start a watch (a GET whose body streams lines); see above. */
	int (*watch)(void *ctx, const struct kerf_kube_request *req,
		     kerf_kube_line_fn on_line, kerf_kube_done_fn done,
		     void *arg, uint64_t *id);
	/* Stop request id; unknown or finished ids are ignored. */
	void (*cancel)(void *ctx, uint64_t id);
	/* Do the work that is due, waiting at most timeout_ms for some. */
	int (*poll)(void *ctx, int timeout_ms);
	/* A monotonic clock, milliseconds. */
	uint64_t (*now_ms)(void *ctx);
};

#endif /* KERF_KUBE_OPS_H */
