/*
 * fuzz_kobj_pdb: libFuzzer target for the PodDisruptionBudget and
 * PriorityClass decoders (kobj/pdb.c, kobj/priorityclass.c), objects kerf
 * serve reads from the API server.  The input is the object's JSON text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on refusal: a negative code, a message of printable ASCII only that
 *    names a field ("metadata", "spec", "status", "PodDisruptionBudget");
 *  - on success: decoding again gives the same terms; every term's values
 *    lie within values[]; a budget without a selector selects no pod; one
 *    not observed blocks; matching a pod's labels never reads out of
 *    bounds and agrees on a second call.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_kobj_pdb"
#include "check.h"

#include <string.h>

#include <jansson.h>

#include "kobj/pdb.h"
#include "kobj/priorityclass.h"

static void check_message(int rc, const struct kerf_err *err)
{
	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	CHECK(err->msg[0] != '\0');
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_kpdb a, b;
	struct kerf_kpc c;
	struct kerf_err err = { 0 };
	json_t *root = json_loadb((const char *)data, size,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
					  JSON_ALLOW_NUL, NULL);
	uint64_t labels[8];
	int rc;

	if (!root)
		return 0;
	rc = kerf_kpdb_decode(root, &a, &err);
	if (rc < 0) {
		check_message(rc, &err);
		CHECK_MSG(!strncmp(err.msg, "metadata", 8) || !strncmp(err.msg, "spec", 4) ||
			  !strncmp(err.msg, "status", 6) ||
			  !strncmp(err.msg, "PodDisruptionBudget", 19) ||
			  rc == -KERF_ENOMEM, err.msg);
	} else {
		CHECK(kerf_kpdb_decode(root, &b, NULL) == 0);
		CHECK(a.nr_terms == b.nr_terms && a.nr_values == b.nr_values);
		CHECK(!a.nr_terms || !memcmp(a.terms, b.terms, a.nr_terms * sizeof(*a.terms)));
		CHECK(!a.nr_values || !memcmp(a.values, b.values, a.nr_values * sizeof(*a.values)));
		for (uint16_t t = 0; t < a.nr_terms; t++)
			CHECK(a.terms[t].first + a.terms[t].nr <= a.nr_values);
		CHECK(a.has_selector || !a.nr_terms);
		CHECK(a.observed || kerf_kpdb_blocks(&a));
		/* the pod's labels: the budget's first values, read as labels */
		for (size_t i = 0; i < 4; i++) {
			labels[2 * i] = i < a.nr_terms ? a.terms[i].key : 0;
			labels[2 * i + 1] = i < a.nr_values ? a.values[i] : 0;
		}
		CHECK(kerf_kpdb_selects(&a, labels, 4) == kerf_kpdb_selects(&b, labels, 4));
		if (!a.has_selector)
			CHECK(!kerf_kpdb_selects(&a, labels, 4));
		kerf_kpdb_release(&b);
		kerf_kpdb_release(&a);
	}
	err = (struct kerf_err){ 0 };
	rc = kerf_kpc_decode(root, &c, &err);
	if (rc < 0)
		check_message(rc, &err);
	else
		CHECK(c.preemption == KERF_PREEMPT_LOWER_PRIORITY ||
		      c.preemption == KERF_PREEMPT_NEVER);
	json_decref(root);
	return 0;
}
