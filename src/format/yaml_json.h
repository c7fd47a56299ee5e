/*
 * yaml_json: YAML as JSON (jansson).  Plain scalars are typed as YAML 1.2's
 * core schema does (null, true/false, integers, floats), quoted ones stay
 * strings.
 */
#ifndef KERF_FORMAT_YAML_JSON_H
#define KERF_FORMAT_YAML_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "format/yaml_doc.h"

/* The tree at n as a new JSON value, or NULL on OOM. */
json_t *kerf_yaml_to_json(const struct kerf_yaml_node *n);

/*
 * text (a stream of documents separated by "---" lines) as a new array of
 * JSON values, one per non-empty document, in *out.  0, or an error from
 * kerf_yaml_load naming path and the line (counted within its document).
 */
int kerf_yaml_load_json_docs(const char *path, const char *text, size_t len,
			     const struct kerf_yaml_limits *lim, json_t **out,
			     struct kerf_err *err);

#endif
