/*
 * api_state: GET /api/v1/state, the whole scheduling state as a state
 * document (persist/state_doc.h, docs/api.md): what `kerf what-if`
 * re-runs.  Read from the world as the last cycle left it.
 */
#include "serve/api_int.h"

#include <stdio.h>

#include "persist/state_doc.h"

int kerf_api_state(const struct kerf_world *w, int64_t now_ms, json_t **out)
{
	struct kerf_state_doc_info info = { .now_ms = now_ms, .seed = w->seed };
	struct kerf_err err = { 0 };

	snprintf(info.policy, sizeof(info.policy), "%s",
		 w->policy_name ? w->policy_name : "kerf");
	*out = kerf_state_doc_encode(&w->st, &w->sched, &info, &err);
	return *out ? 200 : 500;
}
