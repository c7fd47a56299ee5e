/*
 * kubeconfig: a struct kerf_kube_config from a kubeconfig file (YAML, or
 * JSON, which is YAML), the format kubectl reads.
 *
 * Read: current-context or a context named by the caller; the context's
 * cluster (server, certificate-authority or certificate-authority-data,
 * tls-server-name) and user (token or tokenFile, client-certificate or
 * client-certificate-data, client-key or client-key-data) and namespace.
 * Relative file paths are taken against the kubeconfig's directory.  Keys
 * kerf does not use (preferences, extensions, ...) are ignored.
 *
 * Refused, each with a message naming the field: insecure-skip-tls-verify
 * true (TLS is always verified), exec and auth-provider plugins (kerf runs
 * no programs to get credentials), username/password, a server that is
 * not https://, both a file and its -data form, a -data value that is not
 * strict base64 (base/base64.h), a certificate without its key and the
 * reverse.  Messages read "FILE:LINE: users[0].user.client-key-data: not
 * base64 'ab$c'", values and names from the file escaped.
 */
#ifndef KERF_KUBE_KUBECONFIG_H
#define KERF_KUBE_KUBECONFIG_H

#include <stddef.h>

#include "base/err.h"
#include "kube/config.h"

enum { KERF_KUBECONFIG_MAX_BYTES = 4 << 20 };

/*
 * The kubeconfig at path into cfg (initialised here), using context (NULL:
 * current-context).  On error cfg is empty.
 */
int kerf_kubeconfig_load(struct kerf_kube_config *cfg, const char *path,
			 const char *context, struct kerf_err *err);

/*
 * The same from text[0..len); name is the file's name for messages and
 * base_dir the directory relative paths are taken against (NULL: file
 * references are refused, for callers that must not touch the disk).
 */
int kerf_kubeconfig_parse(struct kerf_kube_config *cfg, const char *text,
			  size_t len, const char *name, const char *base_dir,
			  const char *context, struct kerf_err *err);

#endif /* KERF_KUBE_KUBECONFIG_H */
