/*
 * json_patch: JSON Patch (RFC 6902) applied to a jansson document in
 * place, with the kube-apiserver's messages: what a mutating webhook's
 * answer does to the object (the test API server, `kerf admission
 * review`, the admission tests).
 */
#ifndef KERF_FORMAT_JSON_PATCH_H
#define KERF_FORMAT_JSON_PATCH_H

#include <stddef.h>

#include <jansson.h>

/*
 * Apply ops (an array of operations) to doc.  0; -1 a malformed patch or
 * a path that is not there; -2 a failed test (msg says which).  doc may
 * be partly patched after a failure: apply to a copy to keep the original.
 */
int kerf_json_patch_apply(json_t *doc, const json_t *ops, char *msg,
			  size_t size);

#endif
