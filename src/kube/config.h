/*
 * config: where the API server is and how kerf proves who it is, whatever
 * the source (a kubeconfig file, kube/kubeconfig.h, or the pod's service
 * account, kube/incluster.h).
 *
 * TLS verification is always on: there is no field to turn it off, and the
 * sources refuse configurations that ask for it.  Certificates and keys are
 * PEM held in memory (the client passes them to libcurl as blobs), so files
 * are read once, when the config is loaded.  A bearer token either is fixed
 * (token) or comes from a file (token_path) that is read again whenever it
 * changes, because bound service-account tokens rotate.
 */
#ifndef KERF_KUBE_CONFIG_H
#define KERF_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

enum {
	KERF_KUBE_PEM_MAX_BYTES = 1 << 20,   /* a CA bundle, cert or key */
	KERF_KUBE_TOKEN_MAX_BYTES = 64 << 10,
};

struct kerf_kube_config {
	char *server;            /* "https://host[:port][/prefix]" (malloc) */
	char *tls_server_name;   /* name checked in the certificate, or NULL */
	char *ca_pem;            /* CA bundle; NULL: the system's CAs */
	size_t ca_pem_len;
	char *cert_pem;          /* client certificate, or NULL */
	size_t cert_pem_len;
	char *key_pem;           /* its private key, or NULL */
	size_t key_pem_len;
	char *token;             /* bearer token, or NULL */
	char *token_path;        /* file token is read from, or NULL (fixed) */
	char *namespace_name;    /* default namespace, or NULL */
	int64_t token_mtime_ns;  /* token_path's change stamp when last read */
	uint64_t token_ino;
	int64_t token_size;
};

void kerf_kube_config_init(struct kerf_kube_config *cfg);
void kerf_kube_config_release(struct kerf_kube_config *cfg);

/* A deep copy of src into dst (initialised here); 0 or -KERF_ENOMEM. */
int kerf_kube_config_copy(struct kerf_kube_config *dst,
			  const struct kerf_kube_config *src)
	__attribute__((warn_unused_result));

/*
 * Read token_path again when it changed (inode, size or mtime) since the
 * last read; *changed says whether token was replaced.  With no
 * token_path, 0 and nothing changes.  A token file that cannot be read
 * keeps the old token and returns the error (the caller goes on with the
 * old one and logs).  Leading and trailing white space is trimmed; an
 * empty token is refused.
 */
int kerf_kube_config_token_refresh(struct kerf_kube_config *cfg,
				   bool *changed, struct kerf_err *err);

/* PEM (or token) text of the file at path into *out; messages name what. */
int kerf_kube_read_small_file(const char *what, const char *path,
			      size_t max_bytes, char **out, size_t *out_len,
			      struct kerf_err *err);

#endif /* KERF_KUBE_CONFIG_H */
