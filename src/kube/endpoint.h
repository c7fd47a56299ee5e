/*
 * endpoint: where libcurl connects for a config, and the options that make
 * a transfer to it safe, shared by the API client and the fault proxy's
 * upstream side (anything else that talks to an API server with libcurl).
 *
 * The config's server is https://host[:port][/prefix]; with
 * tls-server-name the URL names that host instead (so libcurl sends it as
 * SNI and checks the certificate against it) and CURLOPT_CONNECT_TO sends
 * the connection to the real one.
 */
#ifndef KERF_KUBE_ENDPOINT_H
#define KERF_KUBE_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "base/err.h"
#include "kube/config.h"

struct kerf_kube_endpoint {
	char *base_url;             /* "https://host:port[/prefix]" as curl connects */
	char *connect_to;           /* "name:port:host:port" for tls-server-name */
	struct curl_slist *connect_to_list;
};

/* ep (zeroed first) for cfg's server; -KERF_EINVAL names a bad URL. */
int kerf_kube_endpoint_init(struct kerf_kube_endpoint *ep,
			    const struct kerf_kube_config *cfg,
			    struct kerf_err *err);
void kerf_kube_endpoint_release(struct kerf_kube_endpoint *ep);

/*
 * On easy handle e: https only, the peer and its name verified, the
 * connection sent where ep says, the config's CA (only), client
 * certificate and bearer token.  0 or -KERF_EINVAL (libcurl refused).
 * cfg and ep must outlive the transfer (the token is not copied).
 */
int kerf_kube_endpoint_secure(const struct kerf_kube_endpoint *ep,
			      const struct kerf_kube_config *cfg, CURL *e);

/*
 * A response header line h[0..len) from libcurl: when it is "name: ..."
 * (name case-insensitive), the value without surrounding white space and
 * line end into out[size] (cut to fit) and true.
 */
bool kerf_kube_header_is(const char *h, size_t len, const char *name,
			 char *out, size_t size);

#endif /* KERF_KUBE_ENDPOINT_H */
