/*
 * kobj: field readers shared by the codecs of kerf's Kubernetes objects.
 * Each reader checks one field and says, on error, its path, what was
 * expected and the value it found, escaped.
 */
#include "kobj/kobj.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quantity.h"

enum { SHOW_MAX = 72 };

int kerf_kobj_fail(struct kerf_err *err, const char *path, const char *fmt, ...)
{
	char reason[KERF_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return kerf_err_set(err, -KERF_EINVAL, "%s: %s", path, reason);
}

const char *kerf_kobj_show(char *out, size_t size, const json_t *v)
{
	char *text;

	if (json_is_string(v)) {
		char esc[SHOW_MAX];

		kerf_escape_n(esc, sizeof(esc) < size - 2 ? sizeof(esc) : size - 2,
			      json_string_value(v), json_string_length(v));
		snprintf(out, size, "'%s'", esc);
		return out;
	}
	if (json_is_integer(v)) {
		snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return out;
	}
	if (json_is_real(v)) {
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		if (text) {
			kerf_escape(out, size, text);
			free(text);
			return out;
		}
		snprintf(out, size, "a number");
		return out;
	}
	snprintf(out, size, "%s",
		 json_is_object(v) ? "an object" :
		 json_is_array(v) ? "an array" :
		 json_is_true(v) ? "true" :
		 json_is_false(v) ? "false" : "null");
	return out;
}

const char *kerf_kobj_path(char *out, size_t size, const char *prefix,
			   const char *field)
{
	snprintf(out, size, "%s%s%s", prefix, prefix[0] ? "." : "", field);
	return out;
}

static bool alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int kerf_kobj_get_name(const json_t *v, const char *path, bool dns_label,
		       char *out, struct kerf_err *err)
{
	char shown[SHOW_MAX];
	const char *s;
	size_t len;

	kerf_kobj_show(shown, sizeof(shown), v);
	if (!json_is_string(v))
		return kerf_kobj_fail(err, path, "must be a name, not %s", shown);
	s = json_string_value(v);
	len = json_string_length(v);
	if (len == 0 || len >= KERF_KOBJ_NAME_MAX)
		return kerf_kobj_fail(err, path, "must be 1 to %d bytes long, not %s",
				      KERF_KOBJ_NAME_MAX - 1, shown);
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = alnum_lower(c) ||
			  (i > 0 && i + 1 < len && (c == '-' || (c == '.' && !dns_label)));

		if (!ok)
			return kerf_kobj_fail(err, path,
					      "must be lower-case letters, digits%s and '-', starting and ending with a letter or digit, not %s",
					      dns_label ? "" : ", '.'", shown);
	}
	memcpy(out, s, len + 1);
	return 0;
}

int kerf_kobj_get_int(const json_t *v, const char *path, int64_t min,
		      int64_t max, int64_t *out, struct kerf_err *err)
{
	char shown[SHOW_MAX];

	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return kerf_kobj_fail(err, path,
				      "must be an integer from %" PRId64 " to %" PRId64 ", not %s",
				      min, max, kerf_kobj_show(shown, sizeof(shown), v));
	*out = json_integer_value(v);
	return 0;
}

static const char *bound_text(char *out, size_t size, enum kerf_kobj_unit unit,
			      int64_t x)
{
	if (unit == KERF_KOBJ_MILLI)
		return kerf_kobj_format_milli(out, size, x);
	snprintf(out, size, "%" PRId64 "%s", x, unit == KERF_KOBJ_MIB ? "Mi" : "");
	return out;
}

int kerf_kobj_get_quantity(const json_t *v, const char *path,
			   enum kerf_kobj_unit unit, int64_t min, int64_t max,
			   const char *what, int64_t *out, struct kerf_err *err)
{
	const int64_t mib = (int64_t)1 << 20;
	char shown[SHOW_MAX], lo[KERF_KOBJ_QTY_TEXT_MAX], hi[KERF_KOBJ_QTY_TEXT_MAX];
	int64_t x = 0;
	int rc = 0;

	kerf_kobj_show(shown, sizeof(shown), v);
	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (unit == KERF_KOBJ_MILLI && __builtin_mul_overflow(x, 1000, &x))
			rc = -KERF_ERANGE;
	} else if (json_is_string(v) &&
		   strlen(json_string_value(v)) == json_string_length(v)) {
		rc = unit == KERF_KOBJ_MILLI ?
			     kerf_quantity_parse_milli(json_string_value(v), &x) :
			     kerf_quantity_parse(json_string_value(v), &x);
	} else {
		return kerf_kobj_fail(err, path,
				      "must be a quantity of %s (an integer or a string such as 2.5 or 500m), not %s",
				      what, shown);
	}
	if (rc == -KERF_EPARSE || rc == -KERF_EINVAL)
		return kerf_kobj_fail(err, path,
				      "must be a quantity of %s (digits with a suffix such as 500m, 16Gi or 2e3), not %s",
				      what, shown);
	if (rc == 0 && unit == KERF_KOBJ_MIB)
		x = x < 0 ? -1 : x / mib + (x % mib != 0);
	if (rc < 0 || x < min || x > max)
		return kerf_kobj_fail(err, path, "must be %s from %s to %s, not %s",
				      what, bound_text(lo, sizeof(lo), unit, min),
				      bound_text(hi, sizeof(hi), unit, max), shown);
	*out = x;
	return 0;
}

/* Digits of s from *i as a number, at most cap (false beyond). */
static bool digits(const char *s, size_t *i, int64_t cap, int64_t *out,
		   int *nr)
{
	int64_t x = 0;

	*nr = 0;
	while (s[*i] >= '0' && s[*i] <= '9') {
		x = x * 10 + (s[*i] - '0');
		if (x > cap)
			return false;
		(*i)++;
		(*nr)++;
	}
	*out = x;
	return true;
}

int kerf_kobj_get_duration(const json_t *v, const char *path, int64_t *ms,
			   struct kerf_err *err)
{
	static const char expect[] =
		"must be a duration of h, m, s or ms such as 168h, 30m or 1h30m, more than 0 and at most 87600h";
	const int64_t max = KERF_KOBJ_MAX_DURATION_MS;
	char shown[SHOW_MAX];
	const char *s;
	int64_t total = 0;
	size_t i = 0;

	kerf_kobj_show(shown, sizeof(shown), v);
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
	s = json_string_value(v);
	while (s[i]) {
		int64_t whole, frac = 0, scale = 1, f, part;
		bool extra = false;
		int nr;

		if (!digits(s, &i, max, &whole, &nr) || nr == 0)
			return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
		if (s[i] == '.') {
			i++;
			/* nine digits are exact to the nanosecond; more round up */
			while (s[i] >= '0' && s[i] <= '9') {
				if (scale < 1000000000) {
					frac = frac * 10 + (s[i] - '0');
					scale *= 10;
				} else if (s[i] != '0') {
					extra = true;
				}
				i++;
				nr = -1;
			}
			if (nr != -1)
				return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
		}
		if (s[i] == 'm' && s[i + 1] == 's') {
			f = 1;
			i += 2;
		} else if (s[i] == 'h' || s[i] == 'm' || s[i] == 's') {
			f = s[i] == 'h' ? 3600000 : s[i] == 'm' ? 60000 : 1000;
			i++;
		} else {
			return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
		}
		part = whole * f + (frac * f + extra + scale - 1) / scale;
		total += part;
		if (total > max)
			return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
	}
	if (total <= 0)
		return kerf_kobj_fail(err, path, "%s, not %s", expect, shown);
	*ms = total;
	return 0;
}

int kerf_kobj_get_enum(const json_t *v, const char *path,
		       const char *const *names, int n, int *out,
		       struct kerf_err *err)
{
	char shown[SHOW_MAX], list[256] = "";
	size_t len = 0;

	if (json_is_string(v))
		for (int k = 0; k < n; k++)
			if (!strcmp(json_string_value(v), names[k]) &&
			    strlen(names[k]) == json_string_length(v)) {
				*out = k;
				return 0;
			}
	for (int k = 0; k < n && len < sizeof(list); k++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					k ? ", " : "", names[k]);
	return kerf_kobj_fail(err, path, "must be one of %s, not %s", list,
			      kerf_kobj_show(shown, sizeof(shown), v));
}

int kerf_kobj_required(const json_t *v, const char *path, struct kerf_err *err)
{
	return v ? 0 : kerf_kobj_fail(err, path, "is required");
}

const json_t *kerf_kobj_field(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

int kerf_kobj_need_object(const json_t *v, const char *path,
			  struct kerf_err *err)
{
	char shown[SHOW_MAX];

	if (!v)
		return kerf_kobj_required(v, path, err);
	if (json_is_object(v))
		return 0;
	return kerf_kobj_fail(err, path, "must be an object, not %s",
			      kerf_kobj_show(shown, sizeof(shown), v));
}

int kerf_kobj_need_array(const json_t *v, const char *path, size_t max,
			 struct kerf_err *err)
{
	char shown[SHOW_MAX];

	if (!v)
		return kerf_kobj_required(v, path, err);
	if (!json_is_array(v))
		return kerf_kobj_fail(err, path, "must be a list, not %s",
				      kerf_kobj_show(shown, sizeof(shown), v));
	if (json_array_size(v) > max)
		return kerf_kobj_fail(err, path,
				      "must have at most %zu entries, not %zu", max,
				      json_array_size(v));
	return 0;
}

int kerf_kobj_get_name_set(const json_t *v, const char *path, size_t max,
			   char (*out)[KERF_KOBJ_NAME_MAX], size_t *nr,
			   struct kerf_err *err)
{
	char p[KERF_KOBJ_PATH_MAX];
	int rc = kerf_kobj_need_array(v, path, max, err);

	*nr = 0;
	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		rc = kerf_kobj_get_name(json_array_get(v, i), p, false, out[i], err);
		for (size_t k = 0; rc == 0 && k < i; k++)
			if (!strcmp(out[k], out[i]))
				rc = kerf_kobj_fail(err, p, "'%s' is listed twice",
						    out[i]);
		if (rc == 0)
			*nr = i + 1;
	}
	return rc;
}

const char *kerf_kobj_format_milli(char *out, size_t size, int64_t milli)
{
	int64_t frac = milli % 1000;

	if (frac == 0)
		snprintf(out, size, "%" PRId64, milli / 1000);
	else if (frac % 100 == 0)
		snprintf(out, size, "%" PRId64 ".%01" PRId64, milli / 1000, frac / 100);
	else if (frac % 10 == 0)
		snprintf(out, size, "%" PRId64 ".%02" PRId64, milli / 1000, frac / 10);
	else
		snprintf(out, size, "%" PRId64 ".%03" PRId64, milli / 1000, frac);
	return out;
}

bool kerf_kobj_put(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

json_t *kerf_kobj_conditions_encode(const struct kerf_kobj_condition *c,
				    size_t nr)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < nr; i++) {
		json_t *o = json_object();
		bool ok = o && json_array_append_new(a, o) == 0;

		ok = ok && kerf_kobj_put(o, "type", json_string(c[i].type)) &&
		     kerf_kobj_put(o, "status", json_string(c[i].status)) &&
		     kerf_kobj_put(o, "reason", json_string(c[i].reason)) &&
		     kerf_kobj_put(o, "message", json_string(c[i].message)) &&
		     kerf_kobj_put(o, "observedGeneration",
				   json_integer(c[i].observed_generation)) &&
		     (!c[i].last_transition[0] ||
		      kerf_kobj_put(o, "lastTransitionTime",
				    json_string(c[i].last_transition)));
		if (!ok) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int kerf_kobj_get_text(const json_t *v, const char *path, char *out, size_t size,
		    bool cut, struct kerf_err *err)
{
	char shown[SHOW_MAX];
	size_t len;

	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return kerf_kobj_fail(err, path, "must be a string, not %s",
				      kerf_kobj_show(shown, sizeof(shown), v));
	len = json_string_length(v);
	if (len >= size && !cut)
		return kerf_kobj_fail(err, path, "must be at most %zu bytes, not %zu",
				      size - 1, len);
	if (len >= size) {
		const char *t = json_string_value(v);

		/* never inside a UTF-8 sequence: the text must encode again */
		len = size - 1;
		while (len > 0 && ((unsigned char)t[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(out, json_string_value(v), len);
	out[len] = '\0';
	return 0;
}

int kerf_kobj_conditions_decode(const json_t *v, const char *path,
				struct kerf_kobj_condition *c, size_t *nr,
				struct kerf_err *err)
{
	static const char *const statuses[] = { "True", "False", "Unknown" };
	int rc = kerf_kobj_need_array(v, path, KERF_KOBJ_MAX_CONDITIONS, err);

	*nr = 0;
	for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
		const json_t *o = json_array_get(v, i);
		struct kerf_kobj_condition *x = &c[i];
		char p[KERF_KOBJ_PATH_MAX], f[KERF_KOBJ_PATH_MAX];
		const json_t *g;
		int st;

		memset(x, 0, sizeof(*x));
		snprintf(p, sizeof(p), "%s[%zu]", path, i);
		rc = kerf_kobj_need_object(o, p, err);
		if (rc == 0)
			rc = kerf_kobj_get_text(json_object_get(o, "type"),
				      kerf_kobj_path(f, sizeof(f), p, "type"),
				      x->type, sizeof(x->type), false, err);
		if (rc == 0 && !x->type[0])
			rc = kerf_kobj_fail(err, f, "must not be empty");
		if (rc == 0 &&
		    (rc = kerf_kobj_get_enum(json_object_get(o, "status"),
					     kerf_kobj_path(f, sizeof(f), p, "status"),
					     statuses, 3, &st, err)) == 0)
			memcpy(x->status, statuses[st], strlen(statuses[st]) + 1);
		if (rc == 0 && (g = json_object_get(o, "reason")))
			rc = kerf_kobj_get_text(g, kerf_kobj_path(f, sizeof(f), p, "reason"),
				      x->reason, sizeof(x->reason), false, err);
		if (rc == 0 && (g = json_object_get(o, "message")))
			rc = kerf_kobj_get_text(g, kerf_kobj_path(f, sizeof(f), p, "message"),
				      x->message, sizeof(x->message), true, err);
		if (rc == 0 && (g = json_object_get(o, "lastTransitionTime")))
			rc = kerf_kobj_get_text(g, kerf_kobj_path(f, sizeof(f), p, "lastTransitionTime"),
				      x->last_transition, sizeof(x->last_transition),
				      false, err);
		if (rc == 0 && (g = json_object_get(o, "observedGeneration")))
			rc = kerf_kobj_get_int(g, kerf_kobj_path(f, sizeof(f), p,
								 "observedGeneration"),
					       0, INT64_MAX, &x->observed_generation, err);
		for (size_t k = 0; rc == 0 && k < i; k++)
			if (!strcmp(c[k].type, x->type)) {
				char esc[SHOW_MAX];

				rc = kerf_kobj_fail(err, p, "type '%s' is listed twice",
						    kerf_escape(esc, sizeof(esc), x->type));
			}
		if (rc == 0)
			*nr = i + 1;
	}
	return rc;
}

int kerf_kobj_status_head_decode(const json_t *status, int64_t *generation,
				 struct kerf_kobj_condition *c, size_t *nr,
				 struct kerf_err *err)
{
	const json_t *v;
	int rc = kerf_kobj_need_object(status, "status", err);

	if (rc == 0 && (v = kerf_kobj_field(status, "observedGeneration")))
		rc = kerf_kobj_get_int(v, "status.observedGeneration", 0, INT64_MAX,
				       generation, err);
	if (rc == 0 && (v = kerf_kobj_field(status, "conditions")))
		rc = kerf_kobj_conditions_decode(v, "status.conditions", c, nr, err);
	return rc;
}

bool kerf_kobj_status_head_put(json_t *o, int64_t generation,
			       const struct kerf_kobj_condition *c, size_t nr)
{
	return kerf_kobj_put(o, "observedGeneration", json_integer(generation)) &&
	       kerf_kobj_put(o, "conditions", kerf_kobj_conditions_encode(c, nr));
}
