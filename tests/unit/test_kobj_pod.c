/*
 * kobj/pod, kobj/node, kobj/time: Kubernetes objects as the API server
 * sends them (shapes from the real v1.34.9 captures) into kerf's compact
 * forms; the effective request rule; what is an error and what only makes
 * a pod unschedulable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kobj/names.h"
#include "kobj/node.h"
#include "kobj/pdb.h"
#include "kobj/pod.h"

static char ubuf[KERF_KPOD_UID_BUF];   /* kerf_kpod_uid's buffer */
#include "kobj/time.h"

/* The pod of pods/create.json as the API server returned it (trimmed). */
static const char *real_pod =
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p1\","
	"\"namespace\":\"team-a\",\"uid\":\"599389b8-0c5d-43e1-b27f-92bf938cac8b\","
	"\"resourceVersion\":\"208\",\"generation\":1,"
	"\"creationTimestamp\":\"2026-12-02T18:31:53Z\",\"labels\":{\"app\":\"train\","
	"\"kerf.io/gang\":\"g1\",\"kerf.io/tenant\":\"team-a\"}},"
	"\"spec\":{\"containers\":[{\"name\":\"train\",\"image\":\"busybox:1.36\","
	"\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\"},\"requests\":"
	"{\"nvidia.com/gpu\":\"2\"}}}],\"restartPolicy\":\"Always\","
	"\"schedulerName\":\"kerf\",\"tolerations\":[{\"key\":"
	"\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
	"\"NoExecute\",\"tolerationSeconds\":300},{\"key\":"
	"\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":"
	"\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,"
	"\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{\"phase\":"
	"\"Pending\",\"qosClass\":\"BestEffort\"}}";

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fail_msg("bad test JSON: %s at %d", e.text, e.position);
	return j;
}

/* A pod with the given metadata extras, spec extras and status. */
static json_t *pod_with(const char *labels, const char *annotations,
			const char *spec)
{
	char text[8192];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\","
		 "\"labels\":{%s},\"annotations\":{%s}},\"spec\":{%s}}",
		 labels, annotations, spec);
	return parse(text);
}

static void decode_ok(json_t *j, struct kerf_kpod *p)
{
	struct kerf_err err = { 0 };

	if (kerf_kpod_decode(j, p, &err) < 0)
		fail_msg("decode: %s", err.msg);
	json_decref(j);
}

static void decode_fails(json_t *j, int code, const char *msg)
{
	struct kerf_err err = { 0 };
	struct kerf_kpod p;

	assert_int_equal(kerf_kpod_decode(j, &p, &err), code);
	if (!strstr(err.msg, msg))
		fail_msg("message '%s' lacks '%s'", err.msg, msg);
	json_decref(j);
}

static void test_real_pod(void **state)
{
	struct kerf_kpod p;

	(void)state;
	decode_ok(parse(real_pod), &p);
	assert_string_equal(kerf_kpod_ns(&p), "team-a");
	assert_string_equal(kerf_kpod_name(&p), "p1");
	assert_string_equal(kerf_kpod_uid(&p, ubuf), "599389b8-0c5d-43e1-b27f-92bf938cac8b");
	assert_string_equal(kerf_kpod_scheduler(&p), "kerf");
	assert_string_equal(kerf_kpod_gang(&p), "g1");
	assert_string_equal(kerf_kpod_tenant(&p), "team-a");
	assert_null(kerf_kpod_node(&p));
	assert_null(kerf_kpod_invalid(&p));
	assert_int_equal(p.nr_gpus, 2);
	assert_int_equal(p.cpu_milli, 0);
	assert_true(p.has_priority);
	assert_int_equal(p.priority, 0);
	assert_int_equal(p.phase, KERF_PHASE_PENDING);
	assert_int_equal(p.created_ms, 1796236313000LL);
	assert_int_equal(p.nr_tolerations, 2);
	assert_int_equal(kerf_kpod_tolerations(&p)[0].op, KERF_TOL_EXISTS);
	assert_int_equal(kerf_kpod_tolerations(&p)[0].effect, KERF_EFFECT_NO_EXECUTE);
	assert_true(kerf_kpod_wants_gpu(&p));
	kerf_kpod_release(&p);
}

/* The admission's two default tolerations are shared, not copied; others not. */
static void test_default_tolerations(void **state)
{
	static const char defaults[] =
		"\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
		"\"effect\":\"NoExecute\",\"tolerationSeconds\":300},"
		"{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\","
		"\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"containers\":[]";
	struct kerf_kpod p, c;

	(void)state;
	decode_ok(pod_with("", "", defaults), &p);
	assert_ptr_equal(kerf_kpod_tolerations(&p), kerf_default_tolerations);
	assert_int_equal(p.nr_tolerations, 2);
	assert_string_equal(kerf_kpod_tolerations(&p)[1].key, "node.kubernetes.io/unreachable");
	assert_int_equal(kerf_kpod_tolerations(&p)[1].op, KERF_TOL_EXISTS);
	assert_int_equal(kerf_kpod_tolerations(&p)[1].effect, KERF_EFFECT_NO_EXECUTE);
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	kerf_kpod_release(&p);
	assert_ptr_equal(kerf_kpod_tolerations(&c), kerf_default_tolerations);
	kerf_kpod_release(&c);
	/* the same keys with an effect of their own are the pod's */
	decode_ok(pod_with("", "",
			   "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
			   "\"effect\":\"NoExecute\"},{\"key\":\"node.kubernetes.io/unreachable\","
			   "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],\"containers\":[]"),
		  &p);
	assert_ptr_not_equal(kerf_kpod_tolerations(&p), kerf_default_tolerations);
	assert_int_equal(kerf_kpod_tolerations(&p)[1].effect, KERF_EFFECT_NO_SCHEDULE);
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	kerf_kpod_release(&p);
	assert_string_equal(kerf_kpod_tolerations(&c)[0].key, "node.kubernetes.io/not-ready");
	kerf_kpod_release(&c);
}

static void test_effective_request(void **state)
{
	struct kerf_kpod p;

	(void)state;
	/* two app containers add up; limits stand in for missing requests */
	decode_ok(pod_with("", "",
			   "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500m\","
			   "\"memory\":\"1Gi\"},\"limits\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"4\"}}},"
			   "{\"resources\":{\"limits\":{\"cpu\":\"1.5\",\"memory\":\"1500Mi\","
			   "\"nvidia.com/gpu\":\"2\"}}}]"),
		  &p);
	assert_int_equal(p.cpu_milli, 2000);
	assert_int_equal(p.mem_mib, 2524);
	assert_int_equal(p.nr_gpus, 3);
	kerf_kpod_release(&p);
	/* an init container larger than the app wins; sidecars add */
	decode_ok(pod_with("", "",
			   "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
			   "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"3\","
			   "\"nvidia.com/gpu\":\"4\"}}},{\"restartPolicy\":\"Always\","
			   "\"resources\":{\"requests\":{\"cpu\":\"250m\"}}},"
			   "{\"resources\":{\"requests\":{\"cpu\":\"2900m\"}}}],"
			   "\"overhead\":{\"cpu\":\"100m\",\"nvidia.com/gpu\":\"9\"}"),
		  &p);
	/* max(app 1 + sidecar 0.25, init 3, 2.9 + 0.25) + overhead 0.1 */
	assert_int_equal(p.cpu_milli, 3250);
	assert_int_equal(p.nr_gpus, 4);
	kerf_kpod_release(&p);
	/* memory rounds up to MiB, a MIG resource names the profile */
	decode_ok(pod_with("", "",
			   "\"containers\":[{\"resources\":{\"limits\":{\"memory\":\"1000001\","
			   "\"nvidia.com/mig-3g.40gb\":\"1\"}}}]"),
		  &p);
	assert_int_equal(p.mem_mib, 1);
	assert_int_equal(p.nr_mig, 1);
	assert_string_equal(kerf_kpod_mig_profile(&p), "3g.40gb");
	assert_int_equal(p.nr_gpus, 0);
	kerf_kpod_release(&p);
}

static void test_annotations(void **state)
{
	struct kerf_kpod p, c;

	(void)state;
	decode_ok(pod_with("\"kerf.io/gang\":\"g\",\"app\":\"x\"",
			   "\"kerf.io/gang-size\":\"4\",\"kerf.io/gpu-fraction\":\"0.25\","
			   "\"kerf.io/gpu-memory\":\"10Gi\",\"kerf.io/gpu-sharing\":\"mps\","
			   "\"kerf.io/preempt-at\":\"2026-12-02T18:31:53Z\","
			   "\"kerf.io/checkpoint-done\":\"2026-12-02T18:31:50.5+00:00\","
			   "\"kerf.io/assigned-gpus\":\"0,1\"",
			   "\"containers\":[{}],\"nodeSelector\":{\"zone\":\"a\"}"),
		  &p);
	assert_null(kerf_kpod_invalid(&p));
	/* the times in the block before the labels and the selector */
	assert_true(p.has_times);
	assert_int_equal(p.nr_labels, 2);
	assert_int_equal(p.nr_selector, 1);
	assert_string_equal(kerf_kpod_selector(&p)[0].key, "zone");
	assert_string_equal(kerf_kpod_selector(&p)[0].value, "a");
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	assert_int_equal(kerf_kpod_time_ms(&c, KERF_KPOD_PREEMPT_AT), 1796236313000LL);
	assert_memory_equal(kerf_kpod_labels(&c), kerf_kpod_labels(&p),
			    2 * sizeof(uint64_t) * p.nr_labels);
	assert_string_equal(kerf_kpod_selector(&c)[0].value, "a");
	kerf_kpod_release(&c);
	assert_int_equal(p.gang_size, 4);
	assert_int_equal(p.gpu_milli, 250);
	assert_int_equal(p.gpu_mem_mib, 10240);
	assert_int_equal(p.share, 1 /* KERF_SHARE_MPS */);
	assert_int_equal(kerf_kpod_time_ms(&p, KERF_KPOD_PREEMPT_AT), 1796236313000LL);
	assert_int_equal(kerf_kpod_time_ms(&p, KERF_KPOD_CHECKPOINT_DONE), 1796236310500LL);
	assert_int_equal(kerf_kpod_time_ms(&p, KERF_KPOD_LAST_CHECKPOINT), 0);
	assert_string_equal(kerf_kpod_assigned_gpus(&p), "0,1");
	assert_true(kerf_kpod_wants_gpu(&p));
	kerf_kpod_release(&p);
}

/* A clone lives on when the original is gone (ASan checks the reads). */
static void test_clone(void **state)
{
	struct kerf_err err = { 0 };
	struct kerf_kpod p, c;
	struct kerf_knode n, m;
	json_t *j;

	(void)state;
	decode_ok(pod_with("\"kerf.io/gang\":\"g\"", "\"kerf.io/gang-size\":\"x\"",
			   "\"nodeSelector\":{\"a\":\"b\",\"c\":\"d\"},\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}],"
			   "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\"}}}]"),
		  &p);
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	kerf_kpod_release(&p);
	assert_string_equal(kerf_kpod_ns(&c), "ns");
	assert_string_equal(kerf_kpod_name(&c), "p");
	assert_string_equal(kerf_kpod_gang(&c), "g");
	assert_string_equal(kerf_kpod_mig_profile(&c), "1g.10gb");
	assert_null(kerf_kpod_node(&c));
	assert_non_null(strstr(kerf_kpod_invalid(&c), "gang-size 'x'"));
	assert_int_equal(c.nr_selector, 2);
	assert_string_equal(kerf_kpod_selector(&c)[1].key, "c");
	assert_string_equal(kerf_kpod_selector(&c)[1].value, "d");
	assert_string_equal(kerf_kpod_tolerations(&c)[0].key, "k");
	assert_string_equal(kerf_kpod_tolerations(&c)[0].value, "");
	kerf_kpod_release(&c);
	j = parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"x\":\"y\"}},\"spec\":{\"taints\":[{\"key\":\"t\",\"effect\":\"NoSchedule\"}]}}");
	assert_int_equal(kerf_knode_decode(j, &n, &err), 0);
	json_decref(j);
	assert_int_equal(kerf_knode_clone(&m, &n), 0);
	kerf_knode_release(&n);
	assert_string_equal(m.name, "n1");
	assert_string_equal(kerf_knode_label(&m, "x"), "y");
	assert_string_equal(m.taints[0].key, "t");
	assert_null(m.gpu_model);
	kerf_knode_release(&m);
}

/*
 * 50,000 of these live in kerf serve's cache: the struct has no hole (the
 * last byte is the flags) and is 112 bytes (the rare time annotations
 * are in the block).
 */
_Static_assert(sizeof(struct kerf_kpod) == 112, "struct kerf_kpod grew");
_Static_assert(offsetof(struct kerf_kpod, preemption) == 110,
	       "a hole in struct kerf_kpod");

/* Is [p, p + n) inside pod k's block, past its strings? */
static bool in_arrays(const struct kerf_kpod *k, const void *p, size_t n,
		      size_t end)
{
	const char *c = p;

	return c >= k->strings + k->strings_len && c + n <= k->strings + end &&
	       (uintptr_t)c % 8 == 0;
}

/* Is s a string of pod k's block? */
static bool in_strings(const struct kerf_kpod *k, const char *s)
{
	return s > k->strings && s + strlen(s) < k->strings + k->strings_len;
}

/* A uid not written the canonical way is kept as it came, byte for byte. */
static void test_uid_forms(void **state)
{
	static const char *const forms[] = {
		"599389B8-0C5D-43E1-B27F-92BF938CAC8B",   /* upper case */
		"599389b80c5d43e1b27f92bf938cac8b",       /* no hyphens */
		"599389b8-0c5d-43e1-b27f-92bf938cac8",    /* 35 */
		"599389b8-0c5d-43e1-b27f-92bf938cac8g",   /* not hex */
		"599389b8-0c5d-43e1-b27f+92bf938cac8b",   /* not a hyphen */
		"u1",
	};
	char text[512];
	struct kerf_kpod p, c;

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"%s\"},"
			 "\"spec\":{\"containers\":[{}]}}", forms[i]);
		decode_ok(parse(text), &p);
		assert_false(p.uid_bin);
		assert_string_equal(kerf_kpod_uid(&p, ubuf), forms[i]);
		kerf_kpod_release(&p);
	}
	/* the canonical form, cloned: the same uid */
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":"
		 "\"00ff0a1b-2c3d-4e5f-8090-a0b0c0d0e0f0\"},\"spec\":{\"containers\":[{}]}}");
	decode_ok(parse(text), &p);
	assert_true(p.uid_bin);
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	kerf_kpod_release(&p);
	assert_string_equal(kerf_kpod_uid(&c, ubuf), "00ff0a1b-2c3d-4e5f-8090-a0b0c0d0e0f0");
	kerf_kpod_release(&c);
}

/* Strings and arrays share one block, packed, the strings exactly. */
static void test_compact(void **state)
{
	static const char *uid = "599389b8-0c5d-43e1-b27f-92bf938cac8b";
	const struct kerf_label *sel;
	const struct kerf_toleration *tol;
	struct kerf_kpod p;
	char text[2048];
	size_t end;

	(void)state;
	/* the shape bench/bench_k8s_bind.c creates, bound */
	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"p-12345\",\"namespace\":\"kerf-bench\",\"uid\":\"%s\"},"
		 "\"spec\":{\"nodeName\":\"kerf-bench-node-1234\",\"schedulerName\":\"kerf\","
		 "\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}],"
		 "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
		 "\"effect\":\"NoExecute\",\"tolerationSeconds\":300},{\"key\":"
		 "\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":"
		 "\"NoExecute\",\"tolerationSeconds\":300}]}}", uid);
	decode_ok(parse(text), &p);
	/* the NUL of offset 0, then each string and its NUL; the canonical
	   uid as its 16 bytes after them, read back the same */
	assert_int_equal(p.strings_len, 1 + strlen("kerf-bench") + 1 + strlen("p-12345") + 1 +
			 strlen("kerf-bench-node-1234") + 1 + strlen("kerf") + 1);
	assert_true(p.uid_bin);
	assert_null(kerf_kpod_at(&p, KERF_KPOD_UID));
	assert_string_equal(kerf_kpod_uid(&p, ubuf), uid);
	assert_int_equal(p.strings[0], '\0');
	assert_ptr_equal(kerf_kpod_ns(&p), p.strings + 1);
	assert_ptr_equal(kerf_kpod_tolerations(&p), kerf_default_tolerations);
	assert_null(kerf_kpod_labels(&p));
	assert_null(kerf_kpod_selector(&p));
	print_message("# struct kerf_kpod: %zu bytes; bench pod's block: %u bytes\n",
		      sizeof(p), (unsigned)p.strings_len);
	kerf_kpod_release(&p);

	/* labels, selector and tolerations after the strings, aligned */
	decode_ok(pod_with("\"a\":\"1\",\"bc\":\"2\",\"def\":\"3\"", "",
			   "\"nodeSelector\":{\"zone\":\"z1\"},\"tolerations\":["
			   "{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\",\"effect\":\"NoSchedule\"},"
			   "{\"operator\":\"Exists\"}]"), &p);
	assert_int_equal(p.nr_labels, 3);
	assert_int_equal(p.nr_selector, 1);
	assert_int_equal(p.nr_tolerations, 2);
	assert_false(p.default_tolerations);
	end = ((p.strings_len + 7) & ~(size_t)7) + 2 * 8 * 3 + sizeof(*sel) + 2 * sizeof(*tol);
	sel = kerf_kpod_selector(&p);
	tol = kerf_kpod_tolerations(&p);
	assert_true(in_arrays(&p, kerf_kpod_labels(&p), 2 * 8 * 3, end));
	assert_true(in_arrays(&p, sel, sizeof(*sel), end));
	assert_true(in_arrays(&p, tol, 2 * sizeof(*tol), end));
	assert_ptr_equal((const char *)tol + 2 * sizeof(*tol), p.strings + end);
	assert_true(in_strings(&p, sel[0].key) && in_strings(&p, sel[0].value));
	assert_string_equal(sel[0].key, "zone");
	assert_string_equal(sel[0].value, "z1");
	assert_true(in_strings(&p, tol[0].key) && in_strings(&p, tol[1].value));
	assert_string_equal(tol[0].value, "v");
	assert_int_equal(tol[0].effect, KERF_EFFECT_NO_SCHEDULE);
	assert_string_equal(tol[1].key, "");
	assert_int_equal(tol[1].op, KERF_TOL_EXISTS);
	assert_int_equal(kerf_kpod_labels(&p)[0], kerf_label_hash("a", NULL));
	assert_int_equal(kerf_kpod_labels(&p)[5], kerf_label_hash("def", "3"));
	kerf_kpod_release(&p);
}

/* A pod made by hand gets its strings through kerf_kpod_set_strings. */
static void test_set_strings(void **state)
{
	const char *v[KERF_KPOD_NR_STR] = {
		[KERF_KPOD_NS] = "ns", [KERF_KPOD_NAME] = "a", [KERF_KPOD_UID] = "u1",
		[KERF_KPOD_SCHEDULER] = "kerf", [KERF_KPOD_GANG] = "g",
	};
	struct kerf_kpod p = { .nr_gpus = 1 }, c;
	static char big[KERF_POD_MAX_STRING_BYTES];

	(void)state;
	assert_int_equal(kerf_kpod_set_strings(&p, v), 0);
	assert_string_equal(kerf_kpod_ns(&p), "ns");
	assert_string_equal(kerf_kpod_name(&p), "a");
	assert_string_equal(kerf_kpod_uid(&p, ubuf), "u1");
	assert_string_equal(kerf_kpod_scheduler(&p), "kerf");
	assert_string_equal(kerf_kpod_gang(&p), "g");
	assert_null(kerf_kpod_node(&p));
	assert_null(kerf_kpod_invalid(&p));
	assert_int_equal(p.nr_gpus, 1);
	/* again: the old block goes (ASan sees a leak otherwise) */
	v[KERF_KPOD_NODE] = "n1";
	v[KERF_KPOD_GANG] = NULL;
	assert_int_equal(kerf_kpod_set_strings(&p, v), 0);
	assert_string_equal(kerf_kpod_node(&p), "n1");
	assert_null(kerf_kpod_gang(&p));
	/* refused: p as it was */
	v[KERF_KPOD_UID] = NULL;
	assert_int_equal(kerf_kpod_set_strings(&p, v), -KERF_EINVAL);
	v[KERF_KPOD_UID] = "u1";
	memset(big, 'x', sizeof(big) - 1);
	v[KERF_KPOD_INVALID] = big;
	assert_int_equal(kerf_kpod_set_strings(&p, v), -KERF_ELIMIT);
	assert_string_equal(kerf_kpod_uid(&p, ubuf), "u1");
	assert_null(kerf_kpod_invalid(&p));
	assert_int_equal(kerf_kpod_clone(&c, &p), 0);
	kerf_kpod_release(&p);
	assert_string_equal(kerf_kpod_node(&c), "n1");
	assert_string_equal(kerf_kpod_name(&c), "a");
	kerf_kpod_release(&c);

	/* a decoded pod keeps its arrays */
	decode_ok(pod_with("\"x\":\"y\"", "", "\"nodeSelector\":{\"zone\":\"z1\"}"), &p);
	v[KERF_KPOD_INVALID] = "why";
	assert_int_equal(kerf_kpod_set_strings(&p, v), 0);
	assert_string_equal(kerf_kpod_invalid(&p), "why");
	assert_int_equal(p.nr_selector, 1);
	assert_string_equal(kerf_kpod_selector(&p)[0].key, "zone");
	assert_true(in_strings(&p, kerf_kpod_selector(&p)[0].value));
	assert_int_equal(kerf_kpod_labels(&p)[1], kerf_label_hash("x", "y"));
	kerf_kpod_release(&p);
}

/* Each of these decodes (what it holds is counted) but may not be placed. */
static void test_unschedulable(void **state)
{
	static const struct {
		const char *ann, *spec, *msg;
	} cases[] = {
		{ "\"kerf.io/gang-size\":\"four\"", "", "kerf.io/gang-size 'four': expected a whole number 1..4096" },
		{ "\"kerf.io/gang-size\":\"0\"", "", "kerf.io/gang-size '0'" },
		{ "\"kerf.io/gang-size\":\"-1\"", "", "kerf.io/gang-size '-1'" },
		{ "\"kerf.io/gang-size\":\"4097\"", "", "kerf.io/gang-size '4097'" },
		{ "\"kerf.io/gang-size\":4", "", "kerf.io/gang-size ''" },
		{ "\"kerf.io/gpu-fraction\":\"1\"", "", "kerf.io/gpu-fraction '1': expected a fraction" },
		{ "\"kerf.io/gpu-fraction\":\"0\"", "", "kerf.io/gpu-fraction '0'" },
		{ "\"kerf.io/gpu-fraction\":\"0.5\"",
		  "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]",
		  "a fraction of a GPU together with whole GPUs" },
		{ "\"kerf.io/gpu-memory\":\"lots\"", "", "kerf.io/gpu-memory 'lots'" },
		{ "\"kerf.io/gpu-sharing\":\"\\u001b[2J\"", "", "kerf.io/gpu-sharing '\\x1b[2J': expected mps or timeslice" },
		{ "\"kerf.io/preempt-at\":\"yesterday\"", "", "kerf.io/preempt-at 'yesterday': not an RFC 3339 time" },
		{ "\"kerf.io/checkpoint-done\":\"2026-13-01T00:00:00Z\"", "", "kerf.io/checkpoint-done" },
		{ "", "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\","
		  "\"nvidia.com/mig-3g.40gb\":\"1\"}}}]", "a second MIG profile" },
		{ "", "\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/mig-1g.10gb\":\"1\","
		  "\"nvidia.com/gpu\":\"1\"}}}]", "whole GPUs (nvidia.com/gpu) and MIG instances together" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kerf_kpod p;
		char spec[1024];

		snprintf(spec, sizeof(spec), "%s", *cases[i].spec ? cases[i].spec : "\"containers\":[]");
		decode_ok(pod_with("", cases[i].ann, spec), &p);
		if (!kerf_kpod_invalid(&p) || !strstr(kerf_kpod_invalid(&p), cases[i].msg))
			fail_msg("case %zu: invalid '%s' lacks '%s'", i,
				 kerf_kpod_invalid(&p) ? kerf_kpod_invalid(&p) : "(none)", cases[i].msg);
		assert_null(strchr(kerf_kpod_invalid(&p), '\x1b'));
		kerf_kpod_release(&p);
	}
}

static void test_errors(void **state)
{
	(void)state;
	decode_fails(parse("[]"), -KERF_EPARSE, "pod: expected an object, got an array");
	decode_fails(parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\"spec\":{}}"),
		     -KERF_EPARSE, "metadata.uid: missing");
	decode_fails(parse("{\"metadata\":{\"name\":\"\",\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{}}"),
		     -KERF_EPARSE, "metadata.name: missing");
	decode_fails(parse("{\"metadata\":{\"name\":7,\"namespace\":\"n\",\"uid\":\"u\"},\"spec\":{}}"),
		     -KERF_EPARSE, "metadata.name: expected a string, got an integer");
	decode_fails(parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"}}"),
		     -KERF_EPARSE, "spec: missing");
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"fast\"}}}]"),
		     -KERF_EPARSE, "spec.containers[0].resources.requests.cpu 'fast': not a quantity");
	decode_fails(pod_with("", "", "\"containers\":[{},{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1500m\"}}}]"),
		     -KERF_EINVAL, "spec.containers[1].resources.limits.nvidia.com/gpu '1500m': must be an integer");
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"9Ei\"}}}]"),
		     -KERF_ERANGE, "requests.memory '9Ei': out of range");
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"4Ei\"}}}]"),
		     -KERF_ERANGE, "requests.memory: out of range");
	/* beyond int64 in milli (9E cores), and a huge integer instead of a string */
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"9E\"}}}]"),
		     -KERF_ERANGE, "requests.cpu '9E': out of range");
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":{\"cpu\":9223372036854775807}}}]"),
		     -KERF_ERANGE, "requests.cpu: out of range");
	decode_fails(pod_with("", "", "\"containers\":[{\"resources\":{\"requests\":[]}}]"),
		     -KERF_EPARSE, "spec.containers[0].resources.requests: expected an object, got an array");
	decode_fails(pod_with("", "", "\"containers\":{}"),
		     -KERF_EPARSE, "spec.containers: expected an array, got an object");
	decode_fails(pod_with("", "", "\"tolerations\":[{\"operator\":\"Near\"}]"),
		     -KERF_EPARSE, "spec.tolerations[0].operator 'Near': expected Equal or Exists");
	decode_fails(pod_with("", "", "\"tolerations\":[{\"effect\":\"NoWay\"}]"),
		     -KERF_EPARSE, "spec.tolerations[0].effect 'NoWay'");
	decode_fails(pod_with("", "", "\"nodeSelector\":{\"a\":1}"),
		     -KERF_EPARSE, "spec.nodeSelector.a: expected a string, got an integer");
	decode_fails(pod_with("", "", "\"priority\":4294967296"),
		     -KERF_ERANGE, "spec.priority: 4294967296 out of range");
	decode_fails(parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\"},"
			   "\"spec\":{},\"status\":{\"phase\":\"Sleeping\"}}"),
		     -KERF_EPARSE, "status.phase 'Sleeping': not a pod phase");
	decode_fails(parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\","
			   "\"creationTimestamp\":\"noon\"},\"spec\":{}}"),
		     -KERF_EPARSE, "metadata.creationTimestamp 'noon'");
	/* every string together at most KERF_POD_MAX_STRING_BYTES */
	{
		json_t *j = pod_with("", "", "");
		json_t *ann = json_object_get(json_object_get(j, "metadata"), "annotations");
		static char big[KERF_POD_MAX_STRING_BYTES];

		memset(big, '0', sizeof(big) - 1);
		json_object_set_new(ann, "kerf.io/assigned-gpus", json_string(big));
		decode_fails(j, -KERF_ELIMIT, "pod strings: too long");
	}
}

static void test_bound_and_done(void **state)
{
	struct kerf_kpod p;

	(void)state;
	decode_ok(parse("{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"uid\":\"u\","
			"\"deletionTimestamp\":\"2026-12-02T18:31:53Z\"},\"spec\":{"
			"\"nodeName\":\"gpu-node-1\",\"schedulerName\":\"\"},"
			"\"status\":{\"phase\":\"Succeeded\"}}"),
		  &p);
	assert_string_equal(kerf_kpod_node(&p), "gpu-node-1");
	assert_string_equal(kerf_kpod_scheduler(&p), "default-scheduler");
	assert_true(p.terminating);
	assert_true(kerf_kpod_is_done(&p));
	assert_false(kerf_kpod_wants_gpu(&p));
	assert_false(p.has_priority);
	kerf_kpod_release(&p);
}

static const char *real_node =
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gpu-node-1\","
	"\"uid\":\"6f1\",\"labels\":{\"nvidia.com/gpu.present\":\"true\","
	"\"nvidia.com/gpu.product\":\"NVIDIA-A100-SXM4-80GB\",\"nvidia.com/gpu.memory\":"
	"\"81920\",\"kerf.io/nvlink-domain\":\"rack-7\"}},\"spec\":{\"taints\":[{\"key\":"
	"\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]},\"status\":{"
	"\"capacity\":{\"cpu\":\"64\",\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"},"
	"\"allocatable\":{\"cpu\":\"63500m\",\"memory\":\"500Gi\",\"nvidia.com/gpu\":\"8\"},"
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}";

static void test_node(void **state)
{
	struct kerf_err err = { 0 };
	struct kerf_knode n;
	struct kerf_kpod p;
	json_t *j = parse(real_node);

	(void)state;
	assert_int_equal(kerf_knode_decode(j, &n, &err), 0);
	json_decref(j);
	assert_string_equal(n.name, "gpu-node-1");
	assert_string_equal(n.gpu_model, "NVIDIA-A100-SXM4-80GB");
	assert_string_equal(n.nvlink_domain, "rack-7");
	assert_int_equal(n.gpu_mem_mib, 81920);
	assert_int_equal(n.cpu_milli, 63500);
	assert_int_equal(n.mem_mib, 500 * 1024);
	assert_int_equal(n.nr_gpus, 8);
	assert_true(n.ready);
	assert_null(n.invalid);
	assert_true(kerf_knode_is_usable(&n));
	assert_string_equal(kerf_knode_label(&n, "nvidia.com/gpu.present"), "true");
	/* the not-ready taint: only a pod tolerating it may go there */
	decode_ok(pod_with("", "", "\"nodeSelector\":{\"kerf.io/nvlink-domain\":\"rack-7\"}"), &p);
	assert_false(kerf_knode_tolerated(&n, &p));
	assert_true(kerf_knode_selected(&n, &p));
	kerf_kpod_release(&p);
	decode_ok(pod_with("", "", "\"tolerations\":[{\"operator\":\"Exists\"}],"
			   "\"nodeSelector\":{\"kerf.io/nvlink-domain\":\"rack-8\"}"), &p);
	assert_true(kerf_knode_tolerated(&n, &p));
	assert_false(kerf_knode_selected(&n, &p));
	kerf_kpod_release(&p);
	decode_ok(pod_with("", "", "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\","
			   "\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]"), &p);
	assert_false(kerf_knode_tolerated(&n, &p));
	kerf_kpod_release(&p);
	kerf_knode_release(&n);
}

static void test_node_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"metadata\":{}}", "metadata.name: missing" },
		{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"1500m\"}}}",
		  "status.allocatable.nvidia.com/gpu '1500m': must be an integer" },
		{ "{\"metadata\":{\"name\":\"n\"},\"status\":{\"allocatable\":{\"cpu\":\"x\"}}}",
		  "status.allocatable.cpu 'x': not a quantity" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":\"Maybe\"}]}}",
		  "spec.taints[0].effect 'Maybe'" },
		{ "{\"metadata\":{\"name\":\"n\"},\"spec\":{\"unschedulable\":\"yes\"}}",
		  "spec.unschedulable: expected a boolean, got a string" },
		{ "{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":true}}}",
		  "metadata.labels.a: expected a string, got a boolean" },
	};
	struct kerf_err err = { 0 };
	struct kerf_knode n;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = parse(bad[i].text);

		assert_true(kerf_knode_decode(j, &n, &err) < 0);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].msg);
		kerf_err_clear(&err);
		json_decref(j);
	}
	/* GPUs without a model label, MIG GPUs beyond the GPUs: kept, unusable */
	{
		json_t *j = parse("{\"metadata\":{\"name\":\"n\",\"labels\":{\"kerf.io/mig-gpus\":\"9\"}},"
				  "\"spec\":{\"unschedulable\":true},\"status\":{\"allocatable\":"
				  "{\"nvidia.com/gpu\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");

		assert_int_equal(kerf_knode_decode(j, &n, &err), 0);
		json_decref(j);
		assert_non_null(n.invalid);
		assert_non_null(strstr(n.invalid, "nvidia.com/gpu.product: missing on a node with 4 GPUs"));
		assert_true(n.unschedulable);
		assert_false(kerf_knode_is_usable(&n));
		kerf_knode_release(&n);
	}
}

static void test_time(void **state)
{
	char text[KERF_TIME_TEXT_MAX];
	int64_t ms;

	(void)state;
	assert_int_equal(kerf_time_parse_ms("1970-01-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(kerf_time_parse_ms("2026-12-02T18:28:56.123456Z", &ms), 0);
	assert_int_equal(ms, 1796236136123LL);
	kerf_time_format_micro(ms, text);
	assert_string_equal(text, "2026-12-02T18:28:56.123000Z");
	kerf_time_format(ms, text);
	assert_string_equal(text, "2026-12-02T18:28:56Z");
	assert_int_equal(kerf_time_parse_ms("2026-12-02T20:28:56+02:00", &ms), 0);
	assert_int_equal(ms, 1796236136000LL);
	assert_int_equal(kerf_time_parse_ms("2024-02-29T00:00:00Z", &ms), 0);
	kerf_time_format(ms, text);
	assert_string_equal(text, "2024-02-29T00:00:00Z");
	static const char *bad[] = {
		"", "2026-12-02", "2026-12-02T18:28:56", "2026-12-02 18:28:56Z",
		"2023-02-29T00:00:00Z", "2026-00-01T00:00:00Z", "2026-12-32T00:00:00Z",
		"2026-12-02T24:00:00Z", "2026-12-02T18:28:56.Z", "2026-12-02T18:28:56.1234567890Z",
		"2026-12-02T18:28:56Zjunk", "1969-12-31T23:59:59Z", "2026-12-02T18:28:56+2:00",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kerf_time_parse_ms(bad[i], &ms) != -KERF_EPARSE)
			fail_msg("accepted '%s'", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_pod),
		cmocka_unit_test(test_default_tolerations),
		cmocka_unit_test(test_effective_request),
		cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_uid_forms),
		cmocka_unit_test(test_set_strings),
		cmocka_unit_test(test_unschedulable),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bound_and_done),
		cmocka_unit_test(test_node),
		cmocka_unit_test(test_node_errors),
		cmocka_unit_test(test_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
