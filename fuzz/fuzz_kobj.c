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

static bool same_string(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A clone reads as the original: every string and array of its own block. */
static void check_pod_clone(const struct kerf_kpod *p)
{
	const struct kerf_toleration *t, *u;
	const struct kerf_label *s, *l;
	struct kerf_kpod c;

	if (kerf_kpod_clone(&c, p) < 0)
		return;
	for (int i = 0; i < KERF_KPOD_NR_STR; i++)
		CHECK(same_string(kerf_kpod_at(p, (enum kerf_kpod_str)i),
				  kerf_kpod_at(&c, (enum kerf_kpod_str)i)));
	CHECK(c.nr_labels == p->nr_labels && c.strings_len == p->strings_len);
	CHECK(!p->nr_labels || !memcmp(kerf_kpod_labels(&c), kerf_kpod_labels(p),
				       2 * sizeof(uint64_t) * p->nr_labels));
	s = kerf_kpod_selector(p);
	l = kerf_kpod_selector(&c);
	for (size_t i = 0; i < p->nr_selector; i++)
		CHECK(!strcmp(s[i].key, l[i].key) && !strcmp(s[i].value, l[i].value) &&
		      l[i].key > c.strings && l[i].key < c.strings + c.strings_len);
	t = kerf_kpod_tolerations(p);
	u = kerf_kpod_tolerations(&c);
	for (size_t i = 0; i < p->nr_tolerations; i++)
		CHECK(!strcmp(t[i].key, u[i].key) && !strcmp(t[i].value, u[i].value) &&
		      t[i].op == u[i].op && t[i].effect == u[i].effect);
	kerf_kpod_release(&c);
}

static void check_pod(const json_t *j)
{
	struct kerf_err err = { 0 };
	char uid[KERF_KPOD_UID_BUF];
	struct kerf_kpod p;
	int rc = kerf_kpod_decode(j, &p, &err);

	if (rc < 0) {
		CHECK(err.code < 0 && err.msg[0]);
		CHECK_MSG(printable(err.msg), err.msg);
		return;
	}
	CHECK(kerf_kpod_ns(&p)[0] && kerf_kpod_name(&p)[0] &&
	      kerf_kpod_uid(&p, uid)[0] && kerf_kpod_scheduler(&p));
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
	check_pod_clone(&p);
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
	/* GPU marks: an unreadable one takes every GPU out, says why */
	if (n.marks_error) {
		CHECK_MSG(printable(n.marks_error), n.marks_error);
		CHECK(n.gpus_down == UINT16_MAX && n.nr_mig_down == 0);
	}
	/* GPU utilisation: percents; an unreadable value gives none, says why */
	if (n.util_error) {
		CHECK_MSG(printable(n.util_error), n.util_error);
		CHECK(n.util_gpus == 0);
	}
	for (unsigned g = 0; g < KERF_GPU_UTIL_MAX_GPUS; g++)
		CHECK(n.util_pct[g] <= 100 && ((n.util_gpus >> g & 1) || n.util_pct[g] == 0));
	CHECK(n.nr_mig_down <= KERF_MIG_MARKS_MAX);
	for (size_t i = 0; i < n.nr_mig_down; i++)
		CHECK(n.mig_down[i].gpu < 16 && n.mig_down[i].start < 8 &&
		      n.mig_down[i].profile[0]);
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
