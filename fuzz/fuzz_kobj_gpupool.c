/*
 * fuzz_kobj_gpupool: libFuzzer target for the GPUPool codec
 * (kobj/gpupool.c).  The input is the object's JSON text.
 *
 * Each input checks:
 *  - on refusal: -KERF_EINVAL, a message of printable ASCII only that
 *    starts with the path of a field;
 *  - on success: decoding again gives the same struct; a Fixed layout has
 *    1 to 8 instances on a model with a MIG table; MIG is allowed exactly
 *    when the policy is not None; the pool selects a node carrying its
 *    own matchLabels;
 *  - the status: when it decodes, encoding it and decoding that gives the
 *    same struct.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_kobj_gpupool"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kobj/gpupool.h"

static void check_message(int rc, const struct kerf_err *err)
{
	CHECK(rc == -KERF_EINVAL && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
}

static void check_pool(const json_t *root, const struct kerf_kobj_gpupool *p)
{
	struct kerf_kobj_gpupool *q = malloc(sizeof(*q));
	json_t *labels = json_object();

	CHECK(q && labels);
	CHECK(kerf_kobj_gpupool_decode(root, q, NULL) == 0);
	CHECK(memcmp(p, q, sizeof(*p)) == 0);
	CHECK(p->nr_match_labels >= 1 && p->nr_match_labels <= KERF_KOBJ_MAX_MATCH_LABELS);
	CHECK(p->sharing != 0 && p->sharing < 16u);
	CHECK((p->mig_policy != KERF_KOBJ_MIG_NONE) == !!(p->sharing & KERF_KOBJ_SHARE_MIG));
	CHECK(p->mig_policy == KERF_KOBJ_MIG_NONE || p->mig != NULL);
	CHECK((p->mig_policy == KERF_KOBJ_MIG_FIXED) == (p->nr_layout > 0));
	for (size_t i = 0; i < p->nr_match_labels; i++)
		CHECK(json_object_set_new(labels, p->match_labels[i].key,
					  json_string(p->match_labels[i].value)) == 0);
	CHECK(kerf_kobj_gpupool_selects(p, labels));
	json_decref(labels);
	free(q);
}

static void check_status(const json_t *status)
{
	struct kerf_kobj_gpupool_status a, b;
	struct kerf_err err = { 0 };
	json_t *o;
	int rc = kerf_kobj_gpupool_status_decode(status, &a, &err);

	if (rc < 0) {
		check_message(rc, &err);
		CHECK_MSG(strncmp(err.msg, "status", 6) == 0, err.msg);
		return;
	}
	o = kerf_kobj_gpupool_status_encode(&a);
	CHECK(o != NULL);
	CHECK_MSG(kerf_kobj_gpupool_status_decode(o, &b, &err) == 0, err.msg);
	json_decref(o);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_kobj_gpupool *p = malloc(sizeof(*p));
	struct kerf_err err = { 0 };
	json_t *root = json_loadb((const char *)data, size,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
					  JSON_ALLOW_NUL, NULL);
	int rc;

	CHECK(p != NULL);
	if (!root)
		goto out;
	rc = kerf_kobj_gpupool_decode(root, p, &err);
	if (rc < 0) {
		check_message(rc, &err);
		CHECK_MSG(!strncmp(err.msg, "spec", 4) || !strncmp(err.msg, "metadata", 8) ||
			  !strncmp(err.msg, "GPUPool", 7), err.msg);
	} else {
		check_pool(root, p);
	}
	if (json_is_object(root))
		check_status(json_object_get(root, "status"));
	json_decref(root);
out:
	free(p);
	return 0;
}
