/*
 * incluster: a struct kerf_kube_config for a pod, from its service account
 * (client-go's InClusterConfig).
 *
 * The server is https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
 * (an IPv6 host in brackets); under the service-account directory
 * (KERF_KUBE_SA_DIR unless the caller names another, as tests do) token is
 * the bearer token, read again whenever the file changes (bound tokens
 * rotate, see kerf_kube_config_token_refresh), ca.crt the CA bundle and
 * namespace the pod's namespace (optional).
 */
#ifndef KERF_KUBE_INCLUSTER_H
#define KERF_KUBE_INCLUSTER_H

#include "base/err.h"
#include "kube/config.h"

#define KERF_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * host and port as the two environment variables give them (NULL:
 * missing), sa_dir the service-account directory (NULL: KERF_KUBE_SA_DIR).
 * On error cfg is empty and err names the variable or file.
 */
int kerf_kube_incluster_load(struct kerf_kube_config *cfg, const char *host,
			     const char *port, const char *sa_dir,
			     struct kerf_err *err);

/* The same with host and port from the process environment. */
int kerf_kube_incluster_from_env(struct kerf_kube_config *cfg,
				 const char *sa_dir, struct kerf_err *err);

#endif /* KERF_KUBE_INCLUSTER_H */
