/*
 * server: the admission webhook's HTTPS server (docs/admission.md,
 * "Server"), engine-agnostic: libmicrohttpd with GnuTLS, a pool of worker
 * threads each running its own epoll loop, keep-alive connections, and a
 * table of review routes the caller fills with its handlers.
 *
 * What the API server sends (../shared fixtures, real kube-apiserver
 * 1.34.9): POST <path>?timeout=<timeoutSeconds>s, Content-Type
 * application/json, an AdmissionReview body; it expects 200 with an
 * AdmissionReview response.  It gives up after timeoutSeconds, so the
 * server passes each handler a deadline and answers 503 without calling
 * it when the deadline passed before the request was taken up.
 *
 * The serving certificate and key are read from PEM files and reloaded
 * when either changes (their mtime, size or inode, checked every
 * reload_interval_ms on a thread of the server).  A new pair serves the
 * connections accepted after it loaded; connections already open keep the
 * pair they started with until they close.  A pair that does not parse, or
 * whose key is not the certificate's, is refused with a logged error and
 * the old pair keeps serving.
 *
 * Threads: handlers, the readiness callback and the log callback are
 * called from the server's worker threads (and the log callback from its
 * reload thread), several at once: they must be thread-safe.  A handler
 * runs on the worker that owns the connection, so a slow handler delays
 * the other connections of that worker: handlers decide from memory, with
 * no network calls.
 */
#ifndef KERF_ADMISSION_SERVER_H
#define KERF_ADMISSION_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "admission/timeout.h"

/* What a handler answers. */
struct kerf_webhook_answer {
	char *body;          /* malloc'd JSON (the AdmissionReview response);
	                        the server frees it */
	size_t len;
	int http_status;     /* 200 normally; 400 for a body that is not an
	                        AdmissionReview */
	const char *verdict; /* "allowed", "patched", "denied" or "error", a
	                        static string (any other counts as "error") */
	const char *rule;    /* the rule that denied (a string that outlives
	                        the call), or NULL */
};

/*
 * A review handler.  body[0..len) is the request body, NUL-terminated at
 * len; deadline_ms is on kerf_webhook_now_ms's clock, the time by which
 * the answer must be queued for the API server to still wait for it.
 * Fill *ans (zeroed on entry) and return 0; a negative return, or 0 with
 * no body, is answered 500 and counted as an error.  Called on a worker
 * thread, concurrently with itself: it must be thread-safe.
 */
typedef int (*kerf_webhook_fn)(void *ctx, const char *path, const char *body,
			       size_t len, int64_t deadline_ms,
			       struct kerf_webhook_answer *ans);

/* One review route: POST path (exact, no query) is answered by fn(ctx). */
struct kerf_webhook_route {
	const char *path;    /* "/validate/pods"; copied */
	kerf_webhook_fn fn;
	void *ctx;
};

/* Whether /readyz answers 200; called on worker threads. */
typedef bool (*kerf_webhook_ready_fn)(void *ctx);

/* One log line (no newline), from any of the server's threads. */
typedef void (*kerf_webhook_log_fn)(void *ctx, const char *msg);

enum {
	KERF_WEBHOOK_THREADS_DEFAULT = 2,          /* the machine's 2 cores */
	KERF_WEBHOOK_CONNECTIONS_DEFAULT = 1024,
	/*
	 * Longer than the API server's idle keep-alive (Go's transport
	 * closes idle connections after 90 s): a server that closes first
	 * races a request on the closing connection, and Go does not
	 * retry a POST.
	 */
	KERF_WEBHOOK_IDLE_TIMEOUT_S_DEFAULT = 120,
	KERF_WEBHOOK_RELOAD_INTERVAL_MS_DEFAULT = 1000,
	/* the API server's default timeoutSeconds */
	KERF_WEBHOOK_TIMEOUT_MS_DEFAULT = 10000,
	/* kept back from the API server's timeout for the trip back */
	KERF_WEBHOOK_DEADLINE_MARGIN_MS_DEFAULT = 100,
	KERF_WEBHOOK_SHUTDOWN_GRACE_MS_DEFAULT = 5000,
	KERF_WEBHOOK_ROUTES_MAX = 32,
};

/* Options; a zero field takes its default. */
struct kerf_webhook_opts {
	const char *addr;            /* "127.0.0.1:8443" or ":8443" (every
	                                address); port 0 picks a free port */
	const char *cert_path;       /* PEM: the certificate, then its chain */
	const char *key_path;        /* PEM: its private key */
	const struct kerf_webhook_route *routes; /* copied */
	size_t nr_routes;            /* 1..KERF_WEBHOOK_ROUTES_MAX */
	unsigned threads;            /* worker threads */
	unsigned max_connections;
	unsigned idle_timeout_s;     /* an idle keep-alive connection closes */
	int64_t reload_interval_ms;  /* how often the PEM files are checked;
	                                negative: never (kerf_webhook_reload_check) */
	int64_t default_timeout_ms;  /* when ?timeout= is absent or bad */
	int64_t deadline_margin_ms;  /* at most half the timeout is kept */
	int64_t shutdown_grace_ms;   /* how long stop waits for requests */
	size_t body_max_bytes;       /* at most KERF_ADMISSION_BODY_MAX_BYTES,
	                                which is the default */
	const char *tls_priorities;  /* a GnuTLS priority string; NULL for
	                                libmicrohttpd's default */
	kerf_webhook_ready_fn ready; /* NULL: ready as soon as it listens */
	void *ready_ctx;
	kerf_webhook_log_fn log;     /* NULL: stderr, "kerf webhook: " */
	void *log_ctx;
};

struct kerf_webhook_server;

/*
 * Load the certificate pair, listen and serve.  Returns 0, or
 * -KERF_EINVAL (an option: the address, a route; err names it),
 * -KERF_EIO (a PEM file cannot be read, does not parse or the key is not
 * the certificate's; the port cannot be bound), -KERF_ENOMEM.
 */
int kerf_webhook_start(const struct kerf_webhook_opts *opts,
		       struct kerf_webhook_server **out, struct kerf_err *err)
	__attribute__((warn_unused_result));

/* The port it listens on (the one picked for port 0). */
uint16_t kerf_webhook_port(const struct kerf_webhook_server *s);

/*
 * Check the PEM files now, as the reload thread does: 1 when a new pair
 * was loaded, 0 when neither file changed, or the negative error of a
 * refused pair (the old pair keeps serving; logged and counted).
 */
int kerf_webhook_reload_check(struct kerf_webhook_server *s);

/*
 * Append the server's metrics in the Prometheus text format to out
 * (kerf_webhook_*; see docs/admission.md).  Safe from any thread while
 * the server runs.  Returns 0 or the error of kerf_buf_add.
 */
int kerf_webhook_metrics_render(struct kerf_webhook_server *s,
				struct kerf_buf *out)
	__attribute__((warn_unused_result));

/*
 * Stop accepting, let the requests in progress finish (for up to
 * shutdown_grace_ms), close every connection and free everything.  NULL
 * is fine.
 */
void kerf_webhook_stop(struct kerf_webhook_server *s);

/* The clock of deadline_ms: CLOCK_MONOTONIC in milliseconds. */
int64_t kerf_webhook_now_ms(void);

#endif /* KERF_ADMISSION_SERVER_H */
