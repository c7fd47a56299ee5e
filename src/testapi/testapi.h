/*
 * testapi: an in-process Kubernetes API server for kerf's tests, faithful
 * to a real kube-apiserver v1.34.9 for everything kerf calls (the real
 * transcripts in ../shared/fixtures/k8s/real-1.34.9 hold it to that; see
 * docs/testapi.md for what it reproduces and what it does not).
 *
 * It listens on 127.0.0.1 only, over plain HTTP or TLS, and serves until
 * kerf_testapi_stop.  Every request runs on its own thread (watches are
 * long), and all of them share one store under one lock.
 *
 * Thread-safety: every function here may be called from any thread;
 * kerf_testapi_with_store runs its callback under the store's lock, so it
 * must not call back into the server.
 */
#ifndef KERF_TESTAPI_TESTAPI_H
#define KERF_TESTAPI_TESTAPI_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

struct kerf_testapi;

struct kerf_testapi_opts {
	uint16_t port;                 /* 0: pick a free port */
	const char *token;             /* bearer token required; NULL: none */
	const char *tls_cert_pem;      /* PEM text; both or neither */
	const char *tls_key_pem;
	uint32_t bookmark_interval_ms; /* 0: 60000, as the real server */
	uint32_t watch_window;         /* events kept per resource; 0: 100 */
	uint32_t too_large_rv_wait_ms; /* wait before 504 on a future rv; 0: 3000 */
	size_t max_body_bytes;         /* 0: 3 MiB (413 beyond) */
};

int kerf_testapi_start(const struct kerf_testapi_opts *opts,
		       struct kerf_testapi **out, struct kerf_err *err)
	__attribute__((warn_unused_result));

/* "http://127.0.0.1:PORT" or "https://..."; valid until stop. */
const char *kerf_testapi_url(const struct kerf_testapi *ta);
uint16_t kerf_testapi_port(const struct kerf_testapi *ta);

/* Ends every watch, stops the daemon, frees everything; NULL is fine. */
void kerf_testapi_stop(struct kerf_testapi *ta);

/*
 * Direct access to the store, as a kubelet or controller would act, under
 * the store's lock.  The callback gets a handle for the calls below only.
 */
struct kerf_testapi_store;
typedef void (*kerf_testapi_store_fn)(struct kerf_testapi_store *st,
				      void *arg);
void kerf_testapi_with_store(struct kerf_testapi *ta,
			     kerf_testapi_store_fn fn, void *arg);

/*
 * A copy of the stored object (caller decrefs) of resource plural in group
 * ("" for core; "pods", "nodes", "tenants"...) or NULL.  ns NULL for
 * cluster-scoped kinds.
 */
json_t *kerf_testapi_get(struct kerf_testapi_store *st, const char *group,
			 const char *plural, const char *ns, const char *name);

/*
 * Replace the object (borrowed; copied) as an update would, bumping its
 * resourceVersion and sending MODIFIED to watchers; the object's
 * metadata.resourceVersion is ignored.  0 or -KERF_ENOTFOUND/-KERF_ENOMEM.
 */
int kerf_testapi_put(struct kerf_testapi_store *st, const char *group,
		     const char *plural, const char *ns, const char *name,
		     const json_t *obj);

/* Set status.phase of a pod as a kubelet would. */
int kerf_testapi_set_pod_phase(struct kerf_testapi_store *st, const char *ns,
			       const char *name, const char *phase);

/* Remove an object at once (a kubelet finishing a Terminating pod). */
int kerf_testapi_remove(struct kerf_testapi_store *st, const char *group,
			const char *plural, const char *ns, const char *name);

/* The current global resourceVersion. */
uint64_t kerf_testapi_rv(struct kerf_testapi_store *st);

/*
 * Forget the history (as etcd's compaction does under an API server that
 * restarted): every open watch gets its 410 Expired ERROR event and ends,
 * so clients list again; lists and watches from now on work as before.
 */
void kerf_testapi_compact(struct kerf_testapi_store *st);

#endif /* KERF_TESTAPI_TESTAPI_H */
