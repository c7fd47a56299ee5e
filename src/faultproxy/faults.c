/*
 * faults: which fault a request gets, and the answers kube-apiserver 1.34
 * would give in its place, byte for byte as the recorded transcripts show
 * them (a compact metav1.Status in Go's field order, then a newline).
 *
 * Each fault class has its own schedule, from the seed and the number of
 * requests it could have hit so far, so turning one class on does not
 * move another's.
 */
#include "faultproxy/faultproxy_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/map.h"

/*
 * The k-th request a class may hit is hit when an accumulator that gains
 * permille per request, from a phase drawn from the seed, crosses a
 * multiple of 1000: exactly permille/1000 of them over any run of
 * 1000/permille, at places the seed chooses.  (Independent coin flips
 * would give a short run none at all as often as not.)
 */
static bool hit(struct kerf_fault_proxy *p, unsigned cls, uint32_t permille)
{
	uint64_t x = p->seed ^ ((uint64_t)cls << 56), k = p->eligible[cls]++;

	if (permille == 0)
		return false;
	/* splitmix64's finaliser: the phase */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x = (x ^ (x >> 31)) % 1000;
	return (x + k * permille) / 1000 != (x + (k + 1) * permille) / 1000;
}

enum fp_fault kerf_fp_draw(struct kerf_fault_proxy *p, bool write,
			   bool watch_from_rv)
{
	const struct kerf_fault_rates *r = &p->rates;
	enum fp_fault f = FP_NONE;

	/* every class counts each request it may hit, hit or not */
	if (hit(p, FP_CLASS_THROTTLE, r->throttle_permille))
		f = FP_THROTTLE;
	if (hit(p, FP_CLASS_5XX, r->server_error_permille) && f == FP_NONE)
		f = FP_SERVER_ERROR;
	if (write && hit(p, FP_CLASS_CONFLICT, r->conflict_permille) && f == FP_NONE)
		f = FP_CONFLICT;
	if (watch_from_rv && hit(p, FP_CLASS_GONE, r->gone_permille) && f == FP_NONE)
		f = FP_GONE;
	return f;
}

/* Copy segment [s, e) into out, cut to size. */
static void seg(char *out, size_t size, const char *s, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

void kerf_fp_path_parse(const char *uri, struct fp_path *out)
{
	const char *s[8];
	size_t l[8], n = 0, i = 0;
	const char *c = uri;
	size_t end = strcspn(uri, "?");

	memset(out, 0, sizeof(*out));
	while ((size_t)(c - uri) < end && n < 8) {
		size_t len;

		if (*c == '/') {
			c++;
			continue;
		}
		len = strcspn(c, "/?");
		s[n] = c;
		l[n++] = len;
		c += len;
	}
	/* /api/v1/... or /apis/GROUP/VERSION/... */
	if (n >= 2 && l[0] == 3 && !memcmp(s[0], "api", 3)) {
		i = 2;
	} else if (n >= 3 && l[0] == 4 && !memcmp(s[0], "apis", 4)) {
		seg(out->group, sizeof(out->group), s[1], l[1]);
		i = 3;
	} else {
		return;
	}
	if (n - i >= 3 && l[i] == 10 && !memcmp(s[i], "namespaces", 10)) {
		seg(out->ns, sizeof(out->ns), s[i + 1], l[i + 1]);
		i += 2;
	}
	if (i < n)
		seg(out->resource, sizeof(out->resource), s[i], l[i]);
	if (i + 1 < n)
		seg(out->name, sizeof(out->name), s[i + 1], l[i + 1]);
	if (i + 2 < n)
		seg(out->sub, sizeof(out->sub), s[i + 2], l[i + 2]);
}

void kerf_fp_query(const char *uri, const char *key, char *out, size_t size)
{
	const char *q = strchr(uri, '?');
	size_t klen = strlen(key);

	out[0] = '\0';
	while (q) {
		q++;
		if (!strncmp(q, key, klen) && q[klen] == '=') {
			seg(out, size, q + klen + 1, strcspn(q + klen + 1, "&"));
			return;
		}
		q = strchr(q, '&');
	}
}

static char *dump_line(json_t *j, size_t *len)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	char *line;
	size_t n;

	json_decref(j);
	if (!s)
		return NULL;
	n = strlen(s);
	line = realloc(s, n + 2);
	if (!line) {
		free(s);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}

/* metav1.Status in Go's field order; details taken (NULL: none). */
static json_t *status_obj(unsigned code, const char *reason,
			  const char *message, json_t *details)
{
	json_t *s = json_object();

	if (!s) {
		json_decref(details);
		return NULL;
	}
	json_object_set_new(s, "kind", json_string("Status"));
	json_object_set_new(s, "apiVersion", json_string("v1"));
	json_object_set_new(s, "metadata", json_object());
	json_object_set_new(s, "status", json_string("Failure"));
	if (message)
		json_object_set_new(s, "message", json_string(message));
	if (reason)
		json_object_set_new(s, "reason", json_string(reason));
	if (details)
		json_object_set_new(s, "details", details);
	json_object_set_new(s, "code", json_integer(code));
	return s;
}

char *kerf_fp_status_body(unsigned code, const char *reason,
			  const char *message, json_t *details, size_t *len)
{
	return dump_line(status_obj(code, reason, message, details), len);
}

char *kerf_fp_conflict_body(const struct fp_path *path, const char *method,
			    const char *obj_name, const char *node,
			    size_t *len)
{
	char res[160], msg[640];
	json_t *d = json_object();
	bool binding = !strcmp(path->sub, "binding") ||
		       (!strcmp(path->resource, "bindings") && !path->name[0]);
	const char *name = path->name[0] && !binding ? path->name : obj_name;

	if (!d)
		return NULL;
	json_object_set_new(d, "name", json_string(name ? name : ""));
	if (path->group[0])
		json_object_set_new(d, "group", json_string(path->group));
	if (binding) {
		/* the retry of a binding that landed (binding/again-409.json) */
		json_object_set_new(d, "kind", json_string("pods/binding"));
		snprintf(msg, sizeof(msg),
			 "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned to node \"%s\"",
			 name ? name : "", name ? name : "", node ? node : "");
		return kerf_fp_status_body(409, "Conflict", msg, d, len);
	}
	json_object_set_new(d, "kind", json_string(path->resource));
	if (path->group[0])
		snprintf(res, sizeof(res), "%s.%s", path->resource, path->group);
	else
		snprintf(res, sizeof(res), "%s", path->resource);
	if (!strcmp(method, "POST") && !path->name[0]) {
		/* a create: the name is taken */
		snprintf(msg, sizeof(msg), "%s \"%s\" already exists", res,
			 name ? name : "");
		return kerf_fp_status_body(409, "AlreadyExists", msg, d, len);
	}
	/* status/update-stale-resourceVersion-409.json */
	snprintf(msg, sizeof(msg),
		 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; please apply your changes to the latest version and try again",
		 res, name ? name : "");
	return kerf_fp_status_body(409, "Conflict", msg, d, len);
}

char *kerf_fp_expired_line(const char *rv, const char *current, size_t *len)
{
	char msg[128];
	json_t *ev = json_object();

	if (!ev)
		return NULL;
	/* watch/pods-410-compacted-rv.json */
	snprintf(msg, sizeof(msg), "too old resource version: %s (%s)", rv,
		 current);
	json_object_set_new(ev, "type", json_string("ERROR"));
	json_object_set_new(ev, "object", status_obj(410, "Expired", msg, NULL));
	return dump_line(ev, len);
}
