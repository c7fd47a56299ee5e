/*
 * fuzz_state_doc: libFuzzer target for the state document's reader
 * (persist/state_doc_decode.c), what kerf what-if reads from a server and
 * must treat as untrusted.  The input is the JSON text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on error: the code is negative and recorded with a message, and the
 *    state is left empty;
 *  - on success: the state passes kerf_state_check; with its history
 *    imported (when that succeeds) it encodes to a document that decodes
 *    again, and that second state encodes to the same document (a fixed
 *    point: nothing lost, nothing invented).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_state_doc"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/persist.h"
#include "core/policy.h"
#include "persist/state_doc.h"

enum { MAX_INPUT = 1 << 20 };

/* doc decoded, history imported: the state's document again, or NULL. */
static json_t *again(const json_t *doc, bool must)
{
	struct kerf_state st;
	struct kerf_state_doc_info info;
	struct kerf_persist hist;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_err err = { 0 };
	json_t *out = NULL;
	int rc = kerf_state_doc_decode(doc, &st, &info, &hist, &err);

	if (rc < 0) {
		CHECK(err.code == rc && err.msg[0]);
		CHECK(!st.cluster.nodes && !st.tenants.t && !st.wl);
		CHECK_MSG(!must, err.msg);
		return NULL;
	}
	CHECK_MSG(kerf_state_check(&st, &err) == 0, err.msg);
	if (kerf_policy_build(&pol, info.policy, &(struct kerf_policy_args){
				      .cluster = &st.cluster, .seed = info.seed }, NULL) == 0) {
		kerf_sched_init(&s, &pol);
		if (!info.history || kerf_state_import(&st, &s, &hist, NULL) == 0) {
			out = kerf_state_doc_encode(&st, &s, &info, NULL);
			CHECK(out != NULL);
		}
		CHECK(!must || out);
		kerf_sched_release(&s);
		kerf_policy_release(&pol);
	}
	kerf_persist_release(&hist);
	kerf_state_release(&st);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *doc, *a, *b;

	if (size > MAX_INPUT)
		return 0;
	doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!doc)
		return 0;
	a = again(doc, false);
	if (a) {
		b = again(a, true);
		CHECK(b && json_equal(a, b));
		json_decref(b);
	}
	json_decref(a);
	json_decref(doc);
	return 0;
}
