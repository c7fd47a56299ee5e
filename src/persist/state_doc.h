/*
 * state_doc: the whole scheduling state as one JSON document, re-runnable
 * (docs/what-if.md, "The state document"): what kerf serve answers on
 * GET /api/v1/state and what `kerf what-if` loads, from a cluster or from
 * a scenario run up to a point in time.  One loader serves both.
 *
 *   {"apiVersion": "kerf.io/api/v1", "kind": "State", "version": 1,
 *    "nowMs": ..., "policy": "kerf", "seed": 1,
 *    "models": [{"name": "H100-80GB", "memMib": 81920, "hw": null}],
 *    "labels": ["zone=a"], "taints": ["gpu=yes:NoSchedule"],
 *    "classes": [{"name", "value", "preemptible", "checkpointGraceMs",
 *                 "minRuntimeMs"}],
 *    "nodes": [{"name", "rank", "cpuMilli", "memMib", "model", "gpus",
 *               "domain", "cordoned", "migGpus", "gpusDown", "labels",
 *               "taints", "mig": [[{"profile", "start", "down"}], ...]}],
 *    "tenants": [{"name", "parent", "weight", "allowedClasses",
 *                 "isolation", "quota": {"gpu:H100-80GB": {"nominal",
 *                 "borrowingLimit", "lendingLimit"}}, "budget": {...},
 *                 "idle": {...}, "removed"}],
 *    "workloads": [{"key", "tenant", "class", "submitMs", "state",
 *                   "startMs", "minCount", "topology", "neverPreempts",
 *                   "pdbProtected", "leaving", "utilPct",
 *                   "sets": [{"count", "req": {...}, "asked": {...}}],
 *                   "pods": [{"set", "node", "gpus", "migStart"}]}],
 *    "history": {the persisted state, persist/state_json.h}}
 *
 * Every quantity is in the core's units (milli-cores, MiB, GPU milli,
 * milliseconds); a limit that is not set is null.  Bit masks (a node's
 * labels, a pod's models, a tenant's allowed classes, a pod's GPUs) are
 * lists of bit numbers, each the index into the document's own list
 * (models, labels, taints, classes) or the GPU's number.  Pending
 * workloads carry what they asked; running ones what they were bound
 * with, and where.  Workloads are listed by submission order (seq).
 *
 * Loading treats the document as untrusted: wrong types, missing fields
 * and values out of range are refused with the field's path and the
 * reason; then the core's own events (node upsert, tenant add, submit,
 * adopt, import) check the rest.  Finished work is not carried.
 */
#ifndef KERF_PERSIST_STATE_DOC_H
#define KERF_PERSIST_STATE_DOC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "core/framework.h"
#include "core/state.h"

enum { KERF_STATE_DOC_VERSION = 1 };

/*
 * The builders' way (here and in sim/whatif_json.c): o[key] = v, a += v
 * (v taken); *ok cleared when v or the container is NULL or the append
 * fails, so one failed allocation fails the whole document.
 */
void kerf_doc_put(json_t *o, const char *key, json_t *v, bool *ok);
void kerf_doc_push(json_t *a, json_t *v, bool *ok);

/* The run the document describes, besides the state itself. */
struct kerf_state_doc_info {
	int64_t now_ms;               /* the state's clock */
	char policy[32];              /* placement policy name */
	uint64_t seed;
	bool history;                 /* decoded: the document has one */
};

/*
 * st (and what s's policy learned) as a document: a new reference, or
 * NULL with err set (out of memory).
 */
json_t *kerf_state_doc_encode(const struct kerf_state *st,
			      const struct kerf_sched *s,
			      const struct kerf_state_doc_info *info,
			      struct kerf_err *err);

/*
 * A state from doc into st (uninitialised; released and zeroed on error),
 * with the document's clock, policy and seed in *info and its history in
 * *hist (released by the caller with kerf_persist_release, to be imported
 * once a scheduler is built: kerf_state_import; info->history false: the
 * document has none, nothing to import).
 */
struct kerf_persist;
int kerf_state_doc_decode(const json_t *doc, struct kerf_state *st,
			  struct kerf_state_doc_info *info,
			  struct kerf_persist *hist, struct kerf_err *err);

#endif /* KERF_PERSIST_STATE_DOC_H */
