/*
 * api_json: the JSON values of kerf's read-only views (docs/api.md), as
 * kerf serve's API and the simulator's snapshots build them: text and
 * numbers from the core.  A value that cannot be made (out of memory)
 * turns the whole answer into an error: every setter takes the answer's
 * rc and leaves it negative.
 */
#ifndef KERF_VIEW_API_JSON_H
#define KERF_VIEW_API_JSON_H

#include <stdint.h>

#include <jansson.h>

#include "core/state.h"

/* The apiVersion of every answer. */
#define KERF_API_VERSION "kerf.io/api/v1"

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

/* A Status object for code with reason and message (NULL on OOM). */
json_t *kerf_api_status(int code, const char *reason, const char *message);

/* {"kind": kind, "apiVersion": ...}, the head of every list. */
json_t *kerf_api_list(const char *kind, int *rc);

#endif /* KERF_VIEW_API_JSON_H */
