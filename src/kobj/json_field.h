/*
 * json_field: reading the fields of a Kubernetes object with errors that
 * name the JSON path ("spec.containers[1].resources.limits.cpu") and the
 * value, escaped.  A field of the wrong type is an error, never read as
 * absent.
 */
#ifndef KERF_KOBJ_JSON_FIELD_H
#define KERF_KOBJ_JSON_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

enum { KERF_JSON_PATH_MAX = 256 };

/* obj[key] when obj is an object and key is there, else NULL. */
const json_t *kerf_json_get(const json_t *obj, const char *key);

/*
 * obj[key] as a string into *out (borrowed from obj): 0, or 1 when absent
 * or null (*out NULL), or -KERF_EPARSE when of another type.
 */
int kerf_json_string(const json_t *obj, const char *key, const char *path,
		     const char **out, struct kerf_err *err);

/* obj[key] as an object / array: 1 when absent or null, error if other. */
int kerf_json_object(const json_t *obj, const char *key, const char *path,
		     const json_t **out, struct kerf_err *err);
int kerf_json_array(const json_t *obj, const char *key, const char *path,
		    const json_t **out, struct kerf_err *err);

/* obj[key] as an integer in [min, max]: 1 when absent. */
int kerf_json_int(const json_t *obj, const char *key, const char *path,
		  long long min, long long max, long long *out,
		  struct kerf_err *err);

/*
 * Keep the first reason an object cannot be used: writes into note[size]
 * only while note is empty.
 */
void kerf_note_first(char *note, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The JSON type of v in words ("a number"), for messages. */
const char *kerf_json_type_name(const json_t *v);

#endif
