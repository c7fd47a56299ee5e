/*
 * fuzz_testapi_patch: the test API server's patch code on untrusted input.
 * The input is split at the first NUL: a document and a patch (both JSON,
 * the patch also tried as YAML).  Properties: nothing crashes; a merge
 * patch applied twice gives what it gave once (RFC 7386 is idempotent);
 * strategic merge and JSON patch leave a valid JSON value.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "testapi/testapi_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t dlen = nul ? (size_t)(nul - data) : size;
	const char *p = nul ? (const char *)nul + 1 : "";
	size_t plen = nul ? size - dlen - 1 : 0;
	json_t *doc = json_loadb((const char *)data, dlen, JSON_DECODE_ANY, NULL);
	json_t *patch = json_loadb(p, plen, JSON_DECODE_ANY, NULL);
	json_t *y, *once, *twice, *copy;
	char msg[512];

	if (plen < 65536) {
		y = kerf_ta_yaml_to_json(p, plen, msg, sizeof(msg));
		json_decref(y);
	}
	if (!doc || !patch)
		goto out;
	once = kerf_ta_merge_patch_apply(doc, patch);
	twice = once ? kerf_ta_merge_patch_apply(once, patch) : NULL;
	if (once && twice && !json_equal(once, twice))
		abort();
	json_decref(once);
	json_decref(twice);
	if (json_is_object(doc) && json_is_object(patch)) {
		copy = json_deep_copy(doc);
		kerf_ta_strategic_merge(copy, patch);
		json_decref(copy);
	}
	copy = json_deep_copy(doc);
	kerf_ta_json_patch(copy, patch, msg, sizeof(msg));
	json_decref(copy);
out:
	json_decref(doc);
	json_decref(patch);
	return 0;
}
