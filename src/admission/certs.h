/*
 * certs: the webhook's serving certificate and key, read from PEM files
 * and reloaded when either file changes, handed to GnuTLS per connection.
 *
 * Each connection pins the pair that is current when it is accepted
 * (kerf_webhook_certs_pin), and its handshake uses that pair
 * (kerf_webhook_certs_retrieve reads it from the session's pointer).
 * A reload makes a new pair current; the old one is freed once no
 * connection accepted before the reload is open, so a connection never
 * sees its pair freed under it.  A pair is refused whole (the old one
 * keeps serving) when a file cannot be read, does not parse, or the key
 * is not the certificate's.
 */
#ifndef KERF_ADMISSION_CERTS_H
#define KERF_ADMISSION_CERTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "base/buf.h"
#include "base/err.h"

enum {
	KERF_WEBHOOK_PEM_MAX_BYTES = 1024 * 1024,
	KERF_WEBHOOK_CHAIN_MAX = 16,   /* certificates in the chain file */
};

struct kerf_webhook_pair;

/* What stat says of a file, to see it change. */
struct kerf_webhook_file_id {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
};

typedef void (*kerf_webhook_certs_log_fn)(void *ctx, const char *msg);

struct kerf_webhook_certs {
	char *cert_path;               /* owned */
	char *key_path;                /* owned */
	kerf_webhook_certs_log_fn log;
	void *log_ctx;
	pthread_mutex_t reload_mu;     /* one reload at a time; taken first */
	struct kerf_webhook_file_id cert_id, key_id; /* last tried; reload_mu */
	pthread_mutex_t mu;            /* current, retired and the pins */
	struct kerf_webhook_pair *current;
	struct kerf_webhook_pair *retired; /* oldest first */
	atomic_uint_fast64_t reloads_ok;
	atomic_uint_fast64_t reloads_failed;
	atomic_int_fast64_t not_after_s;   /* the current certificate's */
};

/*
 * Load the pair from the two files (the first load must succeed: the
 * error names the file and the reason).  log (thread-safe) gets one line
 * per load and refusal.  -KERF_EIO, -KERF_ENOMEM.
 */
int kerf_webhook_certs_init(struct kerf_webhook_certs *c,
			    const char *cert_path, const char *key_path,
			    kerf_webhook_certs_log_fn log, void *log_ctx,
			    struct kerf_err *err)
	__attribute__((warn_unused_result));

/*
 * Frees every pair; no connection may be open (the daemon is stopped).
 */
void kerf_webhook_certs_release(struct kerf_webhook_certs *c);

/*
 * Stat both files; when either changed since the last try, load the pair:
 * 1 loaded, 0 unchanged, or the error of a refused pair (logged, counted;
 * the current pair stays).
 */
int kerf_webhook_certs_check(struct kerf_webhook_certs *c);

/* Pin the current pair for a new connection; unpin it when it closes. */
struct kerf_webhook_pair *kerf_webhook_certs_pin(struct kerf_webhook_certs *c);
void kerf_webhook_certs_unpin(struct kerf_webhook_certs *c,
			      struct kerf_webhook_pair *p);

/*
 * The gnutls_certificate_retrieve_function2 for the daemon: the pair
 * pinned in gnutls_session_get_ptr(session).
 */
int kerf_webhook_certs_retrieve(gnutls_session_t session,
				const gnutls_datum_t *req_ca_rdn, int nreqs,
				const gnutls_pk_algorithm_t *pk_algos,
				int pk_algos_length, gnutls_pcert_st **pcert,
				unsigned int *pcert_length,
				gnutls_privkey_t *privkey);

/* The certificate families of /metrics. */
int kerf_webhook_certs_render(struct kerf_webhook_certs *c,
			      struct kerf_buf *out)
	__attribute__((warn_unused_result));

#endif /* KERF_ADMISSION_CERTS_H */
