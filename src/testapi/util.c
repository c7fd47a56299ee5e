/*
 * util: small helpers of the test API server: query parameters, the
 * server's clock in the API's formats, dotted paths into JSON objects,
 * MicroTime checking as Go's time.Parse reports it, label syntax, and the
 * unpadded URL-safe base64 of continue tokens.
 */
#include "testapi/testapi_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "base/buf.h"

const char *kerf_ta_param(const struct kerf_ta_req *rq, const char *key)
{
	size_t i;

	for (i = 0; i < rq->nr_params; i++)
		if (!strcmp(rq->params[i].key, key))
			return rq->params[i].val;
	return NULL;
}

static void fmt_time(char *out, size_t size, time_t t)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void kerf_ta_now(char out[32])
{
	fmt_time(out, 32, time(NULL));
}

void kerf_ta_now_plus(char out[32], int64_t secs)
{
	fmt_time(out, 32, time(NULL) + (time_t)secs);
}

void kerf_ta_now_micro(char out[40])
{
	struct timeval tv;
	struct tm tm;
	char s[32];
	time_t t;

	gettimeofday(&tv, NULL);
	t = tv.tv_sec;
	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 40, "%s.%06ldZ", s, (long)tv.tv_usec);
}

/* Walk "a.b.c"; keys may not hold dots. */
json_t *kerf_ta_path(const json_t *obj, const char *path)
{
	char key[256];
	const char *p = path, *dot;
	json_t *cur = (json_t *)obj;

	while (cur && *p) {
		size_t n;

		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		cur = json_object_get(cur, key);
		p += n + (dot ? 1 : 0);
		if (!dot)
			break;
	}
	return cur;
}

/* The object at path, made (as {}) where missing. */
json_t *kerf_ta_path_mk(json_t *obj, const char *path)
{
	char key[256];
	const char *p = path, *dot;
	json_t *cur = obj;

	while (*p) {
		json_t *next;
		size_t n;

		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key) || !json_is_object(cur))
			return NULL;
		memcpy(key, p, n);
		key[n] = 0;
		next = json_object_get(cur, key);
		if (!json_is_object(next)) {
			next = json_object();
			if (!next || json_object_set_new(cur, key, next))
				return NULL;
		}
		cur = next;
		p += n + (dot ? 1 : 0);
		if (!dot)
			break;
	}
	return cur;
}

const char *kerf_ta_str(const json_t *obj, const char *path)
{
	return json_string_value(kerf_ta_path(obj, path));
}

int kerf_ta_set_str(json_t *obj, const char *path, const char *val)
{
	char parent[256];
	const char *dot = strrchr(path, '.');
	json_t *p = obj;

	if (dot) {
		size_t n = (size_t)(dot - path);

		if (n >= sizeof(parent))
			return -1;
		memcpy(parent, path, n);
		parent[n] = 0;
		p = kerf_ta_path_mk(obj, parent);
		if (!p)
			return -1;
	}
	return json_object_set_new(p, dot ? dot + 1 : path,
				   json_string(val));
}

char *kerf_ta_dump(const json_t *j, bool sorted, size_t *len)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY |
					(sorted ? JSON_SORT_KEYS : 0));

	if (s && len)
		*len = strlen(s);
	return s;
}

/*
 * Go's layout "2006-01-02T15:04:05.000000Z07:00" (metav1.MicroTime): 0 or
 * -1 with msg "cannot parse "REST" as "ELEM"" as time.Parse says it.
 */
static const char *const micro_elems[] = {
	"2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05",
	".000000", "Z07:00",
};

static size_t elem_match(const char *s, const char *elem)
{
	size_t i;

	if (!strcmp(elem, ".000000")) {
		if (s[0] != '.')
			return 0;
		for (i = 1; i <= 6; i++)
			if (!isdigit((unsigned char)s[i]))
				return 0;
		return isdigit((unsigned char)s[7]) ? 0 : 7;
	}
	if (!strcmp(elem, "Z07:00")) {
		if (s[0] == 'Z')
			return 1;
		if ((s[0] == '+' || s[0] == '-') && isdigit((unsigned char)s[1]) &&
		    isdigit((unsigned char)s[2]) && s[3] == ':' &&
		    isdigit((unsigned char)s[4]) && isdigit((unsigned char)s[5]))
			return 6;
		return 0;
	}
	if (isdigit((unsigned char)elem[0])) {
		size_t n = strlen(elem);

		for (i = 0; i < n; i++)
			if (!isdigit((unsigned char)s[i]))
				return 0;
		return n;
	}
	return s[0] == elem[0] ? 1 : 0;
}

int kerf_ta_microtime_check(const char *s, char *msg, size_t size)
{
	const char *p = s;
	size_t i;

	for (i = 0; i < sizeof(micro_elems) / sizeof(*micro_elems); i++) {
		size_t n = elem_match(p, micro_elems[i]);

		if (!n) {
			snprintf(msg, size,
				 "parsing time \"%s\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"%s\" as \"%s\"",
				 s, p, micro_elems[i]);
			return -1;
		}
		p += n;
	}
	if (*p) {
		snprintf(msg, size, "parsing time \"%s\": extra text: \"%s\"",
			 s, p);
		return -1;
	}
	return 0;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* (([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?, at most 63 bytes */
bool kerf_ta_valid_label_value(const char *v)
{
	size_t n = strlen(v), i;

	if (!n)
		return true;
	if (n > 63 || !isalnum((unsigned char)v[0]) ||
	    !isalnum((unsigned char)v[n - 1]))
		return false;
	for (i = 0; i < n; i++)
		if (!name_char(v[i]))
			return false;
	return true;
}

/* [prefix/]name: prefix a DNS subdomain, name a non-empty label value */
bool kerf_ta_valid_qualified_name(const char *v)
{
	const char *slash = strchr(v, '/');
	const char *name = slash ? slash + 1 : v;
	size_t i;

	if (slash) {
		size_t n = (size_t)(slash - v);

		if (!n || n > 253)
			return false;
		for (i = 0; i < n; i++)
			if (!(islower((unsigned char)v[i]) ||
			      isdigit((unsigned char)v[i]) || v[i] == '-' ||
			      v[i] == '.'))
				return false;
	}
	return *name && kerf_ta_valid_label_value(name);
}

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int kerf_ta_b64_encode(const char *in, size_t len, char *out, size_t size)
{
	const unsigned char *u = (const unsigned char *)in;
	size_t i, o = 0;

	for (i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)u[i] << 16;
		size_t n = len - i < 3 ? len - i : 3, k;

		if (n > 1)
			v |= (uint32_t)u[i + 1] << 8;
		if (n > 2)
			v |= u[i + 2];
		for (k = 0; k < n + 1; k++) {
			if (o + 1 >= size)
				return -1;
			out[o++] = b64[(v >> (18 - 6 * k)) & 63];
		}
	}
	out[o] = 0;
	return 0;
}

static int b64_val(char c)
{
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	const char *p = strchr(b64, c);

	return c && p ? (int)(p - b64) : -1;
}

/* Standard or URL-safe, padded or not. */
int kerf_ta_b64_decode(const char *in, char *out, size_t size, size_t *len)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (; *in && *in != '='; in++) {
		int v = b64_val(*in);

		if (v < 0)
			return -1;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 >= size)
				return -1;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = 0;
	*len = o;
	return 0;
}

/* "pods", "leases.coordination.k8s.io" as messages name resources */
const char *kerf_ta_resource_name(const struct kerf_ta_kind *k, char *buf,
				  size_t size)
{
	if (*k->group)
		snprintf(buf, size, "%s.%s", k->plural, k->group);
	else
		snprintf(buf, size, "%s", k->plural);
	return buf;
}

/* "Pod", "Lease.coordination.k8s.io" */
const char *kerf_ta_kind_name(const struct kerf_ta_kind *k, char *buf,
			      size_t size)
{
	if (*k->group)
		snprintf(buf, size, "%s.%s", k->kind, k->group);
	else
		snprintf(buf, size, "%s", k->kind);
	return buf;
}
