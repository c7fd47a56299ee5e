/*
 * api_int: what api.c (routing, queue, nodes) and api_explain.c share:
 * the JSON values of view/api_json.h (a value that cannot be made turns
 * the whole answer into a 500) and the explain endpoint.
 */
#ifndef KERF_SERVE_API_INT_H
#define KERF_SERVE_API_INT_H

#include <stdint.h>

#include <jansson.h>

#include "serve/world_int.h"
#include "view/api_json.h"

/* GET /api/v1/explain/NS/POD: 200 with the explanation, or 404. */
int kerf_api_explain(const struct kerf_world *w, const char *ns,
		     const char *name, int64_t now_ms, json_t **out);

/* GET /api/v1/gpus: every GPU of every node (api_gpus.c); negative on OOM. */
int kerf_api_gpus(const struct kerf_world *w, json_t **out);

/* GET /api/v1/state: 200 with the state document, or 500 (out of memory). */
int kerf_api_state(const struct kerf_world *w, int64_t now_ms, json_t **out);

#endif
