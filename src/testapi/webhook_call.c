/*
 * webhook_call: one call of an admission webhook as kube-apiserver makes
 * it: POST url?timeout=Ns (the webhook's timeoutSeconds, also the call's
 * deadline) with User-Agent kube-apiserver-admission, the Accept header
 * of the real server (JSON, then any type), Accept-Encoding gzip and no
 * credentials, the server's certificate verified against clientConfig.caBundle.  The
 * answer is verified as the real server's VerifyAdmissionResponse does;
 * a failure reads as the Go client's error would (`Post "URL": dial tcp
 * ...: connect: connection refused`, `context deadline exceeded`).
 */
#include "testapi/testapi_int.h"
#include "testapi/webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/buf.h"

enum { WH_RESPONSE_MAX_BYTES = 8 * 1024 * 1024 };

struct sink {
	struct kerf_buf b;
	bool over;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;

	if (s->b.len + size * n > WH_RESPONSE_MAX_BYTES) {
		s->over = true;
		return 0;
	}
	if (kerf_buf_add(&s->b, p, size * n) < 0)
		return 0;
	return size * n;
}

static void failf(struct kerf_ta_wh_result *out, const char *name,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void failf(struct kerf_ta_wh_result *out, const char *name,
		  const char *fmt, ...)
{
	char why[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	out->outcome = KERF_TA_WH_CALL_FAILED;
	snprintf(out->msg, sizeof(out->msg), "failed calling webhook \"%s\": %s",
		 name, why);
}

/* The URL with ?timeout=Ns (or &timeout=Ns) as the rest client adds it. */
static void call_url(const char *url, long timeout_s, char *out, size_t size)
{
	snprintf(out, size, "%s%stimeout=%lds", url,
		 strchr(url, '?') ? "&" : "?", timeout_s);
}

/* host:port of the URL as Go's dialer names it (the address it dialed). */
static void dial_addr(CURL *h, const char *url, char *out, size_t size)
{
	char *ip = NULL;
	long port = 0;
	const char *p = strstr(url, "://"), *end;

	if (curl_easy_getinfo(h, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK &&
	    ip && *ip &&
	    curl_easy_getinfo(h, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK &&
	    port > 0) {
		snprintf(out, size, strchr(ip, ':') ? "[%s]:%ld" : "%s:%ld",
			 ip, port);
		return;
	}
	p = p ? p + 3 : url;
	end = p + strcspn(p, "/?#");
	if (memchr(p, ':', (size_t)(end - p)))
		snprintf(out, size, "%.*s", (int)(end - p), p);
	else
		snprintf(out, size, "%.*s:443", (int)(end - p), p);
}

static void transport_error(CURL *h, CURLcode rc, const char *url,
			    const char *errbuf, const char *name,
			    struct kerf_ta_wh_result *out)
{
	char addr[300];

	dial_addr(h, url, addr, sizeof(addr));
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		failf(out, name,
		      "failed to call webhook: Post \"%s\": dial tcp %s: connect: connection refused",
		      url, addr);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		failf(out, name,
		      "failed to call webhook: Post \"%s\": context deadline exceeded",
		      url);
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		failf(out, name,
		      "failed to call webhook: Post \"%s\": tls: failed to verify certificate: x509: certificate signed by unknown authority",
		      url);
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		failf(out, name,
		      "failed to call webhook: Post \"%s\": dial tcp: lookup %s: no such host",
		      url, addr);
		break;
	default:
		failf(out, name, "failed to call webhook: Post \"%s\": %s%s%s",
		      url, curl_easy_strerror(rc), *errbuf ? ": " : "",
		      errbuf);
		break;
	}
}

/* The text client-go's rest client gives a non-2xx answer that is not a
 * Status (apierrors.NewGenericServerResponse). */
static const char *generic_error(long code)
{
	switch (code) {
	case 400: return "the server rejected our request for an unknown reason";
	case 401: return "the server has asked for the client to provide credentials";
	case 403: return "the server does not allow access to the requested resource";
	case 404: return "the server could not find the requested resource";
	case 405: return "the server does not allow this method on the requested resource";
	case 409: return "the server reported a conflict";
	case 422: return "the server rejected our request due to an error in our request";
	case 429: return "the server has received too many requests and has asked us to try again later";
	case 503: return "the server is currently unable to handle the request";
	case 504: return "the server was unable to return a response in the time allotted, but may still be processing the request";
	default: return NULL;
	}
}

static void http_error(long code, const char *body, const char *name,
		       struct kerf_ta_wh_result *out)
{
	json_t *j = json_loads(body, 0, NULL);
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *msg = json_string_value(json_object_get(j, "message"));
	const char *g = generic_error(code);

	if (kind && !strcmp(kind, "Status") && msg)
		failf(out, name, "failed to call webhook: %s", msg);
	else if (g)
		failf(out, name, "failed to call webhook: %s", g);
	else
		failf(out, name,
		      "failed to call webhook: an error on the server (\"%.512s\") has prevented the request from succeeding",
		      body);
	json_decref(j);
}

/* Verify the AdmissionReview answer (VerifyAdmissionResponse). */
static void verify(const char *body, size_t len, bool mutating,
		   const char *uid, const char *name,
		   struct kerf_ta_wh_result *out)
{
	json_error_t je;
	json_t *j = json_loadb(body, len, 0, &je), *r, *st, *w;
	const char *api, *kind, *ruid, *pt, *patch;
	size_t i;

	if (!json_is_object(j)) {
		json_decref(j);
		failf(out, name,
		      "received invalid webhook response: couldn't get version/kind; json parse error: %s",
		      je.text);
		return;
	}
	out->resp = j;
	api = json_string_value(json_object_get(j, "apiVersion"));
	kind = json_string_value(json_object_get(j, "kind"));
	if (!kind || !*kind) {
		failf(out, name, "received invalid webhook response: Object 'Kind' is missing in '%.256s'",
		      body);
		return;
	}
	r = json_object_get(j, "response");
	if (!json_is_object(r)) {
		failf(out, name, "received invalid webhook response: webhook response was absent");
		return;
	}
	ruid = json_string_value(json_object_get(r, "uid"));
	if (!ruid || strcmp(ruid, uid)) {
		failf(out, name,
		      "received invalid webhook response: expected response.uid=\"%s\", got \"%s\"",
		      uid, ruid ? ruid : "");
		return;
	}
	if (!api || strcmp(api, "admission.k8s.io/v1") ||
	    strcmp(kind, "AdmissionReview")) {
		failf(out, name,
		      "received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s",
		      api ? api : "", kind);
		return;
	}
	pt = json_string_value(json_object_get(r, "patchType"));
	patch = json_string_value(json_object_get(r, "patch"));
	if (pt && !*pt)
		pt = NULL;
	if (patch && !*patch)
		patch = NULL;
	if (mutating && patch && !pt) {
		failf(out, name, "received invalid webhook response: webhook returned response.patch but not response.patchType");
		return;
	}
	if (mutating && !patch && pt) {
		failf(out, name, "received invalid webhook response: webhook returned response.patchType but not response.patch");
		return;
	}
	if (!mutating && patch) {
		failf(out, name, "received invalid webhook response: validating webhook may not return response.patch");
		return;
	}
	if (!mutating && pt) {
		failf(out, name, "received invalid webhook response: validating webhook may not return response.patchType");
		return;
	}
	w = json_object_get(r, "warnings");
	if (json_is_array(w)) {
		out->warnings = json_array();
		json_array_foreach(w, i, st)
			if (json_is_string(st) && json_string_length(st))
				json_array_append(out->warnings, st);
	}
	if (!json_is_true(json_object_get(r, "allowed"))) {
		out->outcome = KERF_TA_WH_DENIED;
		out->status = kerf_ta_wh_denial(name, json_object_get(r, "status"));
		return;
	}
	out->outcome = KERF_TA_WH_ALLOWED;
	out->patch_type = pt;
	if (patch) {
		size_t n = strlen(patch), dl;
		char *raw = malloc(n + 4);

		if (!raw || kerf_ta_b64_decode(patch, raw, n + 4, &dl) < 0) {
			free(raw);
			failf(out, name, "received invalid webhook response: illegal base64 data in response.patch");
			return;
		}
		out->patch = json_loadb(raw, dl, JSON_DECODE_ANY, &je);
		free(raw);
		if (!out->patch)
			snprintf(out->msg, sizeof(out->msg),
				 "invalid character in the JSON patch: %s",
				 je.text);
	}
}

json_t *kerf_ta_wh_denial(const char *name, const json_t *status)
{
	static const char *const dkeys[] = { "name", "group", "kind", "uid" };
	const char *st = json_string_value(json_object_get(status, "status"));
	const char *msg = json_string_value(json_object_get(status, "message"));
	const char *reason = json_string_value(json_object_get(status, "reason"));
	const json_t *d = json_object_get(status, "details"), *c;
	json_int_t code = json_integer_value(json_object_get(status, "code"));
	json_t *out, *details = NULL;
	char text[4096];
	size_t i;

	if (!st || !*st || !strcmp(st, "Success"))
		st = "Failure";
	if (code < 400)
		code = 400;
	if (msg && *msg)
		snprintf(text, sizeof(text), "admission webhook \"%s\" denied the request: %s",
			 name, msg);
	else if (reason && *reason)
		snprintf(text, sizeof(text), "admission webhook \"%s\" denied the request: %s",
			 name, reason);
	else
		snprintf(text, sizeof(text), "admission webhook \"%s\" denied the request without explanation",
			 name);
	out = json_pack("{sssss{}ssss}", "kind", "Status", "apiVersion", "v1",
			"metadata", "status", st, "message", text);
	if (!out)
		return NULL;
	if (reason && *reason)
		json_object_set_new(out, "reason", json_string(reason));
	if (json_is_object(d)) {
		details = json_object();
		for (i = 0; i < sizeof(dkeys) / sizeof(*dkeys); i++) {
			const char *v = json_string_value(json_object_get(d, dkeys[i]));

			if (v && *v)
				json_object_set_new(details, dkeys[i], json_string(v));
		}
		if (json_array_size(json_object_get(d, "causes"))) {
			json_t *causes = json_array();

			json_array_foreach(json_object_get(d, "causes"), i, c) {
				static const char *const ckeys[] = {
					"reason", "message", "field" };
				json_t *nc = json_object();
				size_t k;

				for (k = 0; k < 3; k++) {
					const char *v = json_string_value(json_object_get(c, ckeys[k]));

					if (v && *v)
						json_object_set_new(nc, ckeys[k], json_string(v));
				}
				json_array_append_new(causes, nc);
			}
			json_object_set_new(details, "causes", causes);
		}
		if (json_integer_value(json_object_get(d, "retryAfterSeconds")))
			json_object_set(details, "retryAfterSeconds",
					json_object_get(d, "retryAfterSeconds"));
		if (json_object_size(details))
			json_object_set_new(out, "details", details);
		else
			json_decref(details);
	}
	json_object_set_new(out, "code", json_integer(code));
	return out;
}

int kerf_ta_wh_call(const json_t *hook, bool mutating, const json_t *review,
		    const char *uid, struct kerf_ta_wh_result *out)
{
	const char *name = json_string_value(json_object_get(hook, "name"));
	const char *url = kerf_ta_str(hook, "clientConfig.url");
	const char *ca = kerf_ta_str(hook, "clientConfig.caBundle");
	long timeout_s = (long)json_integer_value(json_object_get(hook, "timeoutSeconds"));
	struct curl_slist *hdrs = NULL;
	struct sink s = { .over = false };
	char full[4096], errbuf[CURL_ERROR_SIZE] = "";
	char *body = NULL, *pem = NULL;
	CURL *h = NULL;
	CURLcode rc;
	long code = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (timeout_s <= 0)
		timeout_s = 10;
	if (!name)
		name = "";
	if (!url) {
		failf(out, name, "failed to call webhook: no clientConfig.url");
		return 0;
	}
	call_url(url, timeout_s, full, sizeof(full));
	kerf_buf_init(&s.b, WH_RESPONSE_MAX_BYTES + 1);
	body = json_dumps(review, JSON_COMPACT);
	h = curl_easy_init();
	if (!body || !h)
		goto out;
	if (ca && *ca) {
		size_t n = strlen(ca), pl;

		pem = malloc(n + 4);
		if (!pem)
			goto out;
		if (kerf_ta_b64_decode(ca, pem, n + 4, &pl) < 0) {
			failf(out, name, "failed to call webhook: clientConfig.caBundle is not base64");
			ret = 0;
			goto out;
		}
		struct curl_blob blob = { .data = pem, .len = pl,
					  .flags = CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!hdrs)
		goto out;
	curl_easy_setopt(h, CURLOPT_URL, full);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "kube-apiserver-admission");
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_s * 1000);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	rc = curl_easy_perform(h);
	ret = 0;
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && s.over)) {
		transport_error(h, rc, full, errbuf, name, out);
		goto out;
	}
	if (s.over) {
		failf(out, name, "failed to call webhook: the response is over %d bytes",
		      WH_RESPONSE_MAX_BYTES);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		http_error(code, kerf_buf_str(&s.b), name, out);
		goto out;
	}
	verify(kerf_buf_str(&s.b), s.b.len, mutating, uid, name, out);
out:
	curl_slist_free_all(hdrs);
	if (h)
		curl_easy_cleanup(h);
	free(pem);
	free(body);
	kerf_buf_release(&s.b);
	return ret;
}

void kerf_ta_wh_result_release(struct kerf_ta_wh_result *r)
{
	json_decref(r->status);
	json_decref(r->patch);
	json_decref(r->warnings);
	json_decref(r->resp);
	memset(r, 0, sizeof(*r));
}
