/*
 * endpoint: where libcurl connects, and the options that make a transfer
 * to it safe.  See kube/endpoint.h.
 */
#include "kube/endpoint.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"

static int fail(struct kerf_err *err, const char *server)
{
	char shown[128];

	return kerf_err_set(err, -KERF_EINVAL, "server '%s': not an https://host[:port][/path] URL",
			    kerf_escape(shown, sizeof(shown), server));
}

int kerf_kube_endpoint_init(struct kerf_kube_endpoint *ep,
			    const struct kerf_kube_config *cfg, struct kerf_err *err)
{
	const char *s = cfg->server, *hp, *end, *colon, *port;
	char port_buf[8] = "443";
	const char *prefix;
	struct kerf_buf b;
	size_t host_len, i;
	int rc;

	memset(ep, 0, sizeof(*ep));
	if (!s || strncmp(s, "https://", 8) != 0)
		return fail(err, s ? s : "");
	hp = s + 8;
	end = hp + strcspn(hp, "/?#");
	prefix = end;
	if (*end == '?' || *end == '#')
		return fail(err, s);
	if (hp[0] == '[') {
		const char *rb = memchr(hp, ']', (size_t)(end - hp));

		if (!rb)
			return fail(err, s);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (!colon && rb + 1 != end)
			return fail(err, s);
	} else {
		colon = memchr(hp, ':', (size_t)(end - hp));
	}
	host_len = (size_t)((colon ? colon : end) - hp);
	if (host_len == 0 || (colon && colon + 1 == end))
		return fail(err, s);
	for (i = 0; i < (size_t)(end - hp); i++)
		if ((unsigned char)hp[i] <= ' ' || hp[i] == '@' || hp[i] == 0x7f)
			return fail(err, s);
	for (i = 0; colon && colon + 1 + i < end; i++) {
		if (colon[1 + i] < '0' || colon[1 + i] > '9' || i >= 5)
			return fail(err, s);
		port_buf[i] = colon[1 + i];
		port_buf[i + 1] = '\0';
	}
	port = port_buf;
	kerf_buf_init(&b, 4096);
	if (cfg->tls_server_name) {
		rc = kerf_buf_addf(&b, "https://%s:%s%s", cfg->tls_server_name,
				   port, prefix);
	} else {
		rc = kerf_buf_addf(&b, "https://%.*s:%s%s", (int)host_len, hp,
				   port, prefix);
	}
	if (rc == 0 && b.len > 0 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	if (rc == 0)
		ep->base_url = kerf_buf_detach(&b, NULL);
	if (rc == 0 && cfg->tls_server_name) {
		rc = kerf_buf_addf(&b, "%s:%s:%.*s:%s", cfg->tls_server_name,
				   port, (int)host_len, hp, port);
		if (rc == 0)
			ep->connect_to = kerf_buf_detach(&b, NULL);
		if (rc == 0 && ep->connect_to) {
			ep->connect_to_list = curl_slist_append(NULL, ep->connect_to);
			if (!ep->connect_to_list)
				rc = -KERF_ENOMEM;
		}
	}
	kerf_buf_release(&b);
	if (rc < 0 || !ep->base_url || (cfg->tls_server_name && !ep->connect_to))
		return kerf_err_set(err, -KERF_ENOMEM, "endpoint: out of memory");
	return 0;
}

void kerf_kube_endpoint_release(struct kerf_kube_endpoint *ep)
{
	curl_slist_free_all(ep->connect_to_list);
	free(ep->connect_to);
	free(ep->base_url);
	memset(ep, 0, sizeof(*ep));
}

#define SET(opt, val)                                                  \
	do {                                                           \
		if (curl_easy_setopt(e, (opt), (val)) != CURLE_OK)     \
			return -KERF_EINVAL;                           \
	} while (0)

int kerf_kube_endpoint_secure(const struct kerf_kube_endpoint *ep,
			      const struct kerf_kube_config *cfg, CURL *e)
{
	struct curl_blob blob;

	SET(CURLOPT_PROTOCOLS_STR, "https");
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	if (ep->connect_to_list)
		SET(CURLOPT_CONNECT_TO, ep->connect_to_list);
	if (cfg->ca_pem) {
		blob = (struct curl_blob){ .data = cfg->ca_pem,
					   .len = cfg->ca_pem_len,
					   .flags = CURL_BLOB_COPY };
		SET(CURLOPT_CAINFO_BLOB, &blob);
		/* the config's CA only, not the system's as well */
		SET(CURLOPT_CAPATH, (char *)NULL);
	}
	if (cfg->cert_pem && cfg->key_pem) {
		blob = (struct curl_blob){ .data = cfg->cert_pem,
					   .len = cfg->cert_pem_len,
					   .flags = CURL_BLOB_COPY };
		SET(CURLOPT_SSLCERT_BLOB, &blob);
		SET(CURLOPT_SSLCERTTYPE, "PEM");
		blob = (struct curl_blob){ .data = cfg->key_pem,
					   .len = cfg->key_pem_len,
					   .flags = CURL_BLOB_COPY };
		SET(CURLOPT_SSLKEY_BLOB, &blob);
		SET(CURLOPT_SSLKEYTYPE, "PEM");
	}
	if (cfg->token) {
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		SET(CURLOPT_XOAUTH2_BEARER, cfg->token);
	}
	return 0;
}

bool kerf_kube_header_is(const char *h, size_t len, const char *name,
		      char *out, size_t size)
{
	size_t n = strlen(name), v;

	if (len <= n || strncasecmp(h, name, n) != 0 || h[n] != ':')
		return false;
	h += n + 1;
	len -= n + 1;
	while (len > 0 && (*h == ' ' || *h == '\t'))
		h++, len--;
	while (len > 0 && (h[len - 1] == '\r' || h[len - 1] == '\n' ||
			   h[len - 1] == ' '))
		len--;
	v = len < size - 1 ? len : size - 1;
	memcpy(out, h, v);
	out[v] = '\0';
	return true;
}
