#include "cmd/api_client.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/buf.h"
#include "cmd/table.h"

enum { MAX_BODY = 64 << 20 };

const char *kerf_cli_server(const char *opt)
{
	const char *env = getenv("KERF_SERVER");

	if (opt)
		return opt;
	return env && *env ? env : KERF_CLI_DEFAULT_SERVER;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct kerf_buf *b = arg;

	/* a short count stops the transfer: the body passed its bound */
	return kerf_buf_add(b, data, size * n) == 0 ? size * n : 0;
}

/* s as it is written, control bytes escaped, cut to out[size]. */
static const char *plain(char *out, size_t size, const char *s)
{
	char *e = kerf_table_escape(s);

	snprintf(out, size, "%s", e ? e : "(out of memory)");
	free(e);
	return out;
}

/* The message of a Status answer, else the body's start, escaped. */
static const char *answer_text(const struct kerf_buf *b, char *out, size_t size)
{
	json_t *j = json_loadb(b->len ? kerf_buf_str(b) : "", b->len, 0, NULL);
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;

	plain(out, size, m ? m : b->len ? kerf_buf_str(b) : "(no body)");
	json_decref(j);
	return out;
}

int kerf_cli_get(const char *prog, const char *server, const char *path,
		 json_t **out)
{
	char url[2048], shown[600], why[600], errbuf[CURL_ERROR_SIZE] = "";
	size_t n = strlen(server);
	struct kerf_buf b;
	json_error_t je;
	CURL *h;
	CURLcode cc;
	long status = 0;
	int rc = 1;

	*out = NULL;
	if (strncmp(server, "http://", 7) && strncmp(server, "https://", 8)) {
		fprintf(stderr, "%s: --server '%s': expected a URL starting http:// or https://\n",
			prog, kerf_escape(shown, sizeof(shown), server));
		return 2;
	}
	while (n > 0 && server[n - 1] == '/')
		n--;
	if (n + strlen(path) >= sizeof(url)) {
		fprintf(stderr, "%s: --server: too long\n", prog);
		return 2;
	}
	memcpy(url, server, n);
	memcpy(url + n, path, strlen(path) + 1);
	kerf_escape(shown, sizeof(shown), url);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	if (!h) {
		fprintf(stderr, "%s: cannot start libcurl\n", prog);
		return 1;
	}
	kerf_buf_init(&b, MAX_BODY);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kerf-cli/" KERF_VERSION);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cc != CURLE_OK) {
		fprintf(stderr, "%s: cannot reach kerf serve at %s: %s\n", prog, shown,
			plain(why, sizeof(why), errbuf[0] ? errbuf : curl_easy_strerror(cc)));
	} else if (status < 200 || status > 299) {
		fprintf(stderr, "%s: %s answered %ld: %s\n", prog, shown, status,
			answer_text(&b, why, sizeof(why)));
	} else if (!(*out = json_loadb(b.len ? kerf_buf_str(&b) : "", b.len, 0, &je))) {
		fprintf(stderr, "%s: %s: the answer is not JSON: %s\n", prog, shown,
			kerf_escape(why, sizeof(why), je.text));
	} else {
		rc = 0;
	}
	kerf_buf_release(&b);
	curl_easy_cleanup(h);
	curl_global_cleanup();
	return rc;
}

const char *kerf_cli_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

long long kerf_cli_int(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}
