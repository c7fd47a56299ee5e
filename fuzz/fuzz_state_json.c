/*
 * fuzz_state_json: libFuzzer target for the decoder of the persisted state
 * (persist/state_json.c), what a restarted controller reads back from the
 * API server and must treat as untrusted.  The input is the JSON text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on error: the code is negative and recorded, the message starts with
 *    "state JSON:" (or names the field kerf_persist_validate refused);
 *  - on success: it validates; encoding it and decoding that gives the
 *    same text again (a fixed point: nothing lost, nothing invented); and
 *    importing it into a small state either succeeds, leaving a state that
 *    passes kerf_state_check, or fails leaving the state as it was.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_state_json"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "core/persist.h"
#include "core/policy.h"
#include "core/state.h"
#include "persist/state_json.h"

/* Two nodes, a tenant team-a with one workload pending and one running. */
static void small_state(struct kerf_state *st)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_priority_class pc = { .name = "batch", .value = 1, .preemptible = true };
	struct kerf_workload w = { .nr_sets = 1, .min_count = 1 };
	struct kerf_wl_pod pod = { .set = 0, .b = { .node = 0, .gpus = 1 } };
	int t;

	kerf_cluster_init(&c);
	kerf_cluster_model(&c, "H100-80GB", 81920, NULL);
	kerf_cluster_add_node(&c, "n0", 64000, 524288, 0, 8, NULL);
	kerf_cluster_add_node(&c, "n1", 64000, 524288, 0, 8, NULL);
	kerf_tenants_init(&tt, kerf_res_count(&c));
	t = kerf_tenants_add(&tt, "team-a", KERF_TENANT_ROOT, NULL, 1, NULL);
	kerf_classes_init(&cl);
	kerf_classes_add(&cl, &pc, NULL);
	CHECK(kerf_state_init(st, &c, &tt, &cl, NULL) == 0);
	w.tenant = t;
	w.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = 1,
			 .gpu_milli = 1000 },
		.count = 1,
	};
	CHECK(kerf_state_adopt(st, "ns/run", &w, 0, 0, &pod, 1, NULL) > 0);
	CHECK(kerf_state_submit(st, "ns/wait", &w, 5, NULL) > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_persist p, q;
	struct kerf_err err = { 0 };
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched s;
	char *a = NULL, *b = NULL;
	size_t la, lb;
	int rc = kerf_state_json_decode((const char *)data, size, &p, &err);

	if (rc < 0) {
		CHECK(err.code == rc);
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
		CHECK_MSG(rc == -KERF_ENOMEM || strncmp(err.msg, "state JSON: ", 12) == 0 ||
			  rc == -KERF_EINVAL, err.msg);
		return 0;
	}
	CHECK(kerf_persist_validate(&p, NULL) == 0);
	CHECK(kerf_state_json_encode(&p, &a, &la, NULL) == 0);
	CHECK_MSG(kerf_state_json_decode(a, la, &q, &err) == 0, err.msg);
	CHECK(kerf_state_json_encode(&q, &b, &lb, NULL) == 0);
	CHECK(la == lb && memcmp(a, b, la) == 0);
	/* import: all or nothing, and a state that checks */
	small_state(&st);
	CHECK(kerf_policy_build(&pol, "kerf", &(struct kerf_policy_args){
					.cluster = &st.cluster }, NULL) == 0);
	kerf_sched_init(&s, &pol);
	{
		int64_t avg_before = st.avg_at_ms;
		uint64_t seq_before = st.next_seq;

		if (kerf_state_import(&st, &s, &p, &err) < 0) {
			CHECK(st.avg_at_ms == avg_before && st.next_seq == seq_before);
		}
		CHECK_MSG(kerf_state_check(&st, &err) == 0, err.msg);
	}
	kerf_sched_release(&s);
	kerf_policy_release(&pol);
	kerf_state_release(&st);
	kerf_persist_release(&p);
	kerf_persist_release(&q);
	free(a);
	free(b);
	return 0;
}
