#include "kobj/json_field.h"

#include <stdarg.h>
#include <stdio.h>

void kerf_note_first(char *note, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (note[0])
		return;
	va_start(ap, fmt);
	vsnprintf(note, size, fmt, ap);
	va_end(ap);
}

const json_t *kerf_json_get(const json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

const char *kerf_json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}

static int wrong(const char *path, const char *key, const char *want,
		 const json_t *v, struct kerf_err *err)
{
	return kerf_err_set(err, -KERF_EPARSE, "%s%s%s: expected %s, got %s",
			    path, *path ? "." : "", key, want,
			    kerf_json_type_name(v));
}

int kerf_json_string(const json_t *obj, const char *key, const char *path,
		     const char **out, struct kerf_err *err)
{
	const json_t *v = kerf_json_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_string(v))
		return wrong(path, key, "a string", v, err);
	*out = json_string_value(v);
	return 0;
}

int kerf_json_object(const json_t *obj, const char *key, const char *path,
		     const json_t **out, struct kerf_err *err)
{
	const json_t *v = kerf_json_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_object(v))
		return wrong(path, key, "an object", v, err);
	*out = v;
	return 0;
}

int kerf_json_array(const json_t *obj, const char *key, const char *path,
		    const json_t **out, struct kerf_err *err)
{
	const json_t *v = kerf_json_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 1;
	if (!json_is_array(v))
		return wrong(path, key, "an array", v, err);
	*out = v;
	return 0;
}

int kerf_json_int(const json_t *obj, const char *key, const char *path,
		  long long min, long long max, long long *out,
		  struct kerf_err *err)
{
	const json_t *v = kerf_json_get(obj, key);
	json_int_t x;

	if (!v || json_is_null(v))
		return 1;
	if (!json_is_integer(v))
		return wrong(path, key, "an integer", v, err);
	x = json_integer_value(v);
	if (x < min || x > max)
		return kerf_err_set(err, -KERF_ERANGE,
				    "%s%s%s: %lld out of range (%lld..%lld)",
				    path, *path ? "." : "", key, (long long)x,
				    min, max);
	*out = (long long)x;
	return 0;
}
