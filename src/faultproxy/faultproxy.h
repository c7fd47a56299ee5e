/*
 * faultproxy: an HTTPS proxy on loopback that the tests put between kerf
 * and an API server (kerf's test server or a real one), forwarding every
 * request and injecting the faults a live control plane meets: 409 on a
 * share of writes, 410 and dropped watch streams, 5xx, 429 with
 * Retry-After, slow answers.
 *
 * Downstream (kerf's side): 127.0.0.1, TLS with its own certificate, a
 * bearer token of its own.  Upstream: any API server named by a kerf
 * config (kube/config.h: token or client certificate, CA verified),
 * through libcurl.  Watches are streamed line by line, never buffered
 * whole, so informers work through the proxy.
 *
 * Faults follow a schedule per class from the seed: of the requests a
 * class may hit (in order of arrival), exactly permille/1000 are hit, at
 * places the seed chooses, so even a short run meets every class on and a
 * run with one client is repeatable.  A request gets at most one fault,
 * tried in the order 429, 5xx, 409 (writes only), 410 (watch starts
 * from a resourceVersion only); latency is added on top.  Injected answers are shaped byte for byte as kube-apiserver
 * 1.34 writes them (metav1.Status, key order kind, apiVersion, metadata,
 * status, message, reason, details, code; a newline after the object).
 *
 * Bindings: every binding the upstream answered 201 is counted per pod
 * (and written to bind_log_path when given), so a test can prove no pod
 * was bound twice.  A 409 on a binding is either answered without
 * forwarding or, with conflict_after_forward, answered after the upstream
 * bound the pod (kerf's answer lost: the retry case).
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef KERF_FAULTPROXY_FAULTPROXY_H
#define KERF_FAULTPROXY_FAULTPROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/config.h"

/* What to inject; all zero: a transparent proxy. */
struct kerf_fault_rates {
	uint32_t conflict_permille;      /* writes (POST, PUT, PATCH): 409 */
	bool conflict_after_forward;     /* bindings: forwarded first */
	uint32_t server_error_permille;  /* any request: 500, 503, 504 in turn */
	uint32_t throttle_permille;      /* any request: 429 */
	uint32_t retry_after_s;          /* of the 429 (0: 1) */
	uint32_t gone_permille;          /* watches from a resourceVersion:
					    ERROR 410 at once, then the end */
	uint32_t gone_after_events;      /* ERROR 410 after N events; 0: off */
	uint32_t drop_after_events;      /* cut streams after N events; 0: off */
	uint32_t drop_after_ms;          /* cut streams after T ms; 0: off */
	uint32_t latency_ms;             /* before every answer */
};

/* What was injected and seen. */
struct kerf_fault_counts {
	uint64_t requests;
	uint64_t forwarded;
	uint64_t watches;                /* watch streams forwarded */
	uint64_t watch_events;           /* lines passed down, bookmarks too */
	uint64_t conflicts;              /* 409s injected */
	uint64_t conflicts_forwarded;    /* of which the binding landed first */
	uint64_t server_errors[3];       /* 500, 503, 504 injected */
	uint64_t throttled;              /* 429s injected */
	uint64_t gone_at_start;          /* watches answered ERROR 410 */
	uint64_t gone_mid_stream;        /* ERROR 410 after events */
	uint64_t drops;                  /* streams cut */
	uint64_t delayed;                /* answers held back latency_ms */
	uint64_t binds_created;          /* bindings answered 201 upstream */
	uint64_t upstream_errors;        /* upstream unreachable: conn closed */
	uint64_t unauthorized;           /* wrong or missing token: 401 */
};

struct kerf_fault_proxy_opts {
	const struct kerf_kube_config *upstream;   /* copied */
	uint16_t port;                   /* 0: a free one */
	const char *token;               /* required of kerf (copied) */
	const char *tls_cert_pem;        /* required: PEM text (copied) */
	const char *tls_key_pem;
	uint64_t seed;
	struct kerf_fault_rates rates;
	const char *bind_log_path;       /* "ns/name node" per 201; NULL */
};

struct kerf_fault_proxy;

int kerf_fault_proxy_start(const struct kerf_fault_proxy_opts *opts,
			   struct kerf_fault_proxy **out, struct kerf_err *err)
	__attribute__((warn_unused_result));

/* Ends every stream, stops the daemon, frees everything; NULL is fine. */
void kerf_fault_proxy_stop(struct kerf_fault_proxy *p);

/* "https://127.0.0.1:PORT"; valid until stop. */
const char *kerf_fault_proxy_url(const struct kerf_fault_proxy *p);

/* Change the faults from the next request on (streams open keep theirs). */
void kerf_fault_proxy_set(struct kerf_fault_proxy *p,
			  const struct kerf_fault_rates *rates);

void kerf_fault_proxy_counts(struct kerf_fault_proxy *p,
			     struct kerf_fault_counts *out);

/* Bindings of pod ns/name the upstream answered 201 through the proxy. */
unsigned kerf_fault_proxy_binds(struct kerf_fault_proxy *p, const char *ns,
				const char *name);

/*
 * A kubeconfig at path for kerf: this proxy as the server, ca_path as its
 * certificate authority, the proxy's token.
 */
int kerf_fault_proxy_write_kubeconfig(const struct kerf_fault_proxy *p,
				      const char *path, const char *ca_path,
				      struct kerf_err *err);

#endif /* KERF_FAULTPROXY_FAULTPROXY_H */
