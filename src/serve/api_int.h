/*
 * api_int: what api.c (routing, tenants, queue, nodes), api_explain.c and
 * api_gpus.c share: JSON values built from the world's text and numbers.
 * A value that cannot be made (out of memory) turns the whole answer into
 * a 500: every setter takes the answer's rc and leaves it negative.
 */
#ifndef KERF_SERVE_API_INT_H
#define KERF_SERVE_API_INT_H

#include <stdint.h>

#include <jansson.h>

#include "serve/world_int.h"

/* o[key] = v (taken); rc set to -KERF_ENOMEM when v is NULL or o is. */
void kerf_api_put(json_t *o, const char *key, json_t *v, int *rc);
/* a += v (taken), the same way. */
void kerf_api_push(json_t *a, json_t *v, int *rc);

/* s as a JSON string (escaped when it is not UTF-8); null for NULL. */
json_t *kerf_api_str(const char *s);
/* ms as RFC 3339 ("2026-01-01T00:00:00Z"); null for 0. */
json_t *kerf_api_time(int64_t ms);
/* A quantity: null for KERF_QTY_INF (no limit). */
json_t *kerf_api_qty(int64_t v);
/* Seconds from a to b (b >= a), to the millisecond. */
json_t *kerf_api_seconds(int64_t from_ms, int64_t to_ms);

/* "Pending", "Running", "Finished". */
const char *kerf_api_wl_state(enum kerf_wl_state s);
/* The tenant's name ("" for an index out of range). */
const char *kerf_api_tenant_name(const struct kerf_state *st, int t);

/* GET /api/v1/explain/NS/POD: 200 with the explanation, or 404. */
int kerf_api_explain(const struct kerf_world *w, const char *ns,
		     const char *name, int64_t now_ms, json_t **out);

/* GET /api/v1/gpus: every GPU of every node (api_gpus.c); negative on OOM. */
int kerf_api_gpus(const struct kerf_world *w, json_t **out);

/* A Status object for code with reason and message (NULL on OOM). */
json_t *kerf_api_status(int code, const char *reason, const char *message);

#endif
