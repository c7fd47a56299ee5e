/*
 * client_url: where libcurl connects.  The config's server is
 * https://host[:port][/prefix]; with tls-server-name the URL names that
 * host instead (so libcurl sends it as SNI and checks the certificate
 * against it) and CURLOPT_CONNECT_TO sends the connection to the real one.
 */
#include "kube/client_int.h"

#include <stdlib.h>
#include <string.h>

static int fail(struct kerf_err *err, const char *server)
{
	char shown[128];

	return kerf_err_set(err, -KERF_EINVAL, "server '%s': not an https://host[:port][/path] URL",
			    kerf_escape(shown, sizeof(shown), server));
}

int kerf_kube_client_url_init(struct kerf_kube_client *c, struct kerf_err *err)
{
	const char *s = c->cfg.server, *hp, *end, *colon, *port;
	char port_buf[8] = "443";
	const char *prefix;
	struct kerf_buf b;
	size_t host_len, i;
	int rc;

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
	if (c->cfg.tls_server_name) {
		rc = kerf_buf_addf(&b, "https://%s:%s%s", c->cfg.tls_server_name,
				   port, prefix);
	} else {
		rc = kerf_buf_addf(&b, "https://%.*s:%s%s", (int)host_len, hp,
				   port, prefix);
	}
	if (rc == 0 && b.len > 0 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	if (rc == 0)
		c->base_url = kerf_buf_detach(&b, NULL);
	if (rc == 0 && c->cfg.tls_server_name) {
		rc = kerf_buf_addf(&b, "%s:%s:%.*s:%s", c->cfg.tls_server_name,
				   port, (int)host_len, hp, port);
		if (rc == 0)
			c->connect_to = kerf_buf_detach(&b, NULL);
		if (rc == 0 && c->connect_to) {
			c->connect_to_list = curl_slist_append(NULL, c->connect_to);
			if (!c->connect_to_list)
				rc = -KERF_ENOMEM;
		}
	}
	kerf_buf_release(&b);
	if (rc < 0 || !c->base_url || (c->cfg.tls_server_name && !c->connect_to))
		return kerf_err_set(err, -KERF_ENOMEM, "client: out of memory");
	return 0;
}
