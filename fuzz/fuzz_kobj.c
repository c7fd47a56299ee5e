/*
 * fuzz_kobj: libFuzzer target for the decoders of Pods and Nodes
 * (kobj/pod.c, kobj/node.c), which read what the API server sends: objects
 * of any user's making.  The input is JSON text; the first byte chooses
 * the decoder (even: pod, odd: node) and is skipped.
 *
 * Beyond "no crash, no leak, no sanitizer report": on error the code is
 * negative and the message non-empty and free of control characters; on
 * success every string the compact form holds is readable, counts are in
 * range and an invalid reason, when set, is printable.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_kobj"
#include "check.h"

#include <jansson.h>

#include "kobj/node.h"
#include "kobj/pod.h"

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

static void check_pod(const json_t *j)
{
	struct kerf_err err = { 0 };
	struct kerf_kpod p;
	int rc = kerf_kpod_decode(j, &p, &err);

	if (rc < 0) {
		CHECK(err.code < 0 && err.msg[0]);
		CHECK_MSG(printable(err.msg), err.msg);
		return;
	}
	CHECK(kerf_kpod_ns(&p)[0] && kerf_kpod_name(&p)[0] &&
	      kerf_kpod_uid(&p)[0] && kerf_kpod_scheduler(&p));
	CHECK(p.cpu_milli >= 0 && p.mem_mib >= 0 && p.nr_gpus >= 0 && p.nr_mig >= 0);
	CHECK(p.gpu_milli >= 0 && p.gpu_milli < 1000);
	CHECK(p.phase <= KERF_PHASE_UNKNOWN);
	CHECK(p.nr_selector <= KERF_POD_MAX_SELECTOR);
	CHECK(p.nr_tolerations <= KERF_POD_MAX_TOLERATIONS);
	for (size_t i = 0; i < p.nr_selector; i++)
		CHECK(kerf_kpod_selector(&p)[i].key &&
		      kerf_kpod_selector(&p)[i].value);
	for (size_t i = 0; i < p.nr_tolerations; i++)
		CHECK(kerf_kpod_tolerations(&p)[i].key &&
		      kerf_kpod_tolerations(&p)[i].value);
	if (kerf_kpod_invalid(&p))
		CHECK_MSG(printable(kerf_kpod_invalid(&p)), kerf_kpod_invalid(&p));
	CHECK(!kerf_kpod_mig_profile(&p) || p.nr_mig > 0);
	kerf_kpod_release(&p);
}

static void check_node(const json_t *j)
{
	struct kerf_err err = { 0 };
	struct kerf_knode n;
	int rc = kerf_knode_decode(j, &n, &err);

	if (rc < 0) {
		CHECK(err.code < 0 && err.msg[0]);
		CHECK_MSG(printable(err.msg), err.msg);
		return;
	}
	CHECK(n.name[0] && n.uid);
	CHECK(n.cpu_milli >= 0 && n.mem_mib >= 0 && n.nr_gpus >= 0);
	CHECK(n.nr_labels <= KERF_KNODE_MAX_LABELS && n.nr_taints <= KERF_KNODE_MAX_TAINTS);
	for (size_t i = 0; i < n.nr_labels; i++)
		CHECK(kerf_knode_label(&n, n.labels[i].key) != NULL);
	if (n.invalid)
		CHECK_MSG(printable(n.invalid), n.invalid);
	kerf_knode_release(&n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t e;
	json_t *j;

	if (size < 1 || size > 1 << 20)
		return 0;
	j = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		return 0;
	if (data[0] & 1)
		check_node(j);
	else
		check_pod(j);
	json_decref(j);
	return 0;
}
