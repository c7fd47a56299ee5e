/*
 * snapshot: a simulated cluster at one instant as one JSON document
 * (docs/api.md "Snapshots"), read by `kerf get --snapshot`, `kerf explain
 * --snapshot` and `kerf top --snapshot`:
 *   {apiVersion, kind: "Snapshot", atSeconds (simulated time),
 *    source: {scenario, name, seed, policy}, tenants, queue, nodes, gpus,
 *    explanations: [Explanation of every pending workload, named by its
 *    workload.key TENANT/NAME]} (docs/schema/Snapshot.json)
 * Each view has exactly the shape of kerf serve's answer (view/view.h).
 */
#ifndef KERF_VIEW_SNAPSHOT_H
#define KERF_VIEW_SNAPSHOT_H

#include <stdint.h>

#include <jansson.h>

#include "core/state.h"

/* Where the state came from (strings borrowed; NULL shows as null). */
struct kerf_view_source {
	const char *scenario;   /* the scenario file as given */
	const char *name;       /* its name: field */
	uint64_t seed;
	const char *policy;
};

/*
 * The snapshot of st at now_ms (simulated ms from 0) into *out (always
 * set; the caller decrefs it).  0 or -KERF_ENOMEM.
 */
int kerf_view_snapshot(const struct kerf_state *st, int64_t now_ms,
		       const struct kerf_view_source *src, json_t **out);

/* The Explanation of wl as kerf serve's explain endpoint shapes it. */
json_t *kerf_view_explain_sim(const struct kerf_state *st, const struct kerf_workload *wl,
			      int64_t now_ms, int *rc);

#endif /* KERF_VIEW_SNAPSHOT_H */
