/*
 * state_json: the persisted state (core/persist.h) as JSON, the form the
 * Kubernetes layer stores and an operator can read:
 *
 *   {"kind": "KerfState", "version": 1, "avgAtMs": ..., "halfLifeMs": ...,
 *    "nextSeq": ...,
 *    "tenants": [{"name": "team-a", "usageAvg": {"gpu:H100-80GB": 4000},
 *                 "budget": {"usedMilliMs": ..., "windowStartMs": ...,
 *                            "warnedPct": 50}}],
 *    "workloads": [{"key": "ns/train", "seq": 7, "lastCheckpointMs": ...,
 *                   "evictedAtMs": [0, 0, 0], "preemptions": 0,
 *                   "lostGpuMilliMs": 0, "askedBy": ["ns/prod"],
 *                   "borrowed": false, "preemptDeadlineMs": 0,
 *                   "preemptedBy": "ns/prod", "idleReclaim": false,
 *                   "idleNotified": false, "idleSinceMs": -1, "utilPct": 100,
 *                   "pending": "InsufficientCapacity",
 *                   "pendingTold": "00000000deadbeef", "observed": true,
 *                   "nominated": ["node-1"]}],
 *    "reservation": {"workload": "ns/gang", "nodes": ["node-3"]},
 *    "policy": {"name": "kerf", "state": [...]}}
 *
 * Decoding treats the text as untrusted: at most KERF_STATE_JSON_MAX
 * bytes, duplicate keys, unknown fields, wrong types, fractions where
 * integers belong and values out of range are refused with the field's
 * path and the reason; then kerf_persist_validate checks the whole.
 * Encoding sorts keys: the same state gives the same text.
 */
#ifndef KERF_PERSIST_STATE_JSON_H
#define KERF_PERSIST_STATE_JSON_H

#include <stddef.h>

#include "base/err.h"
#include "core/persist.h"

enum { KERF_STATE_JSON_MAX = 64 << 20 };

/* p as JSON text (malloc'd, NUL-terminated) and its length. */
int kerf_state_json_encode(const struct kerf_persist *p, char **text,
			   size_t *len, struct kerf_err *err);

/* text[0..len) into p (initialised here; released on error). */
int kerf_state_json_decode(const char *text, size_t len, struct kerf_persist *p,
			   struct kerf_err *err);

#endif /* KERF_PERSIST_STATE_JSON_H */
