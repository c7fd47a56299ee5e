/*
 * fuzz_pod_annotations: libFuzzer target for the device plugin's decoders
 * of a pod's kerf annotations (deviceplugin/match.h), which the agent
 * reads from the API server: kerf.io/assigned-gpus, assigned-mig,
 * assigned-fraction and gpu-sharing, each alone and together as a pod's
 * whole assignment, and the Allocate answer (deviceplugin/answer.h) for
 * that pod against a fixed device table.
 *
 * Input: one byte of flags (bit i: field i present; bits 4-5: the UID,
 * bit 6: the MPS daemon failed), then the four fields separated by '\n'
 * in the order gpus, mig, fraction, sharing.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - a refusal has its code recorded and a message of printable ASCII
 *    that starts with the annotation's name (the input is escaped);
 *  - assigned-gpus: the mask written back as "i,j,..." parses to the same
 *    mask;
 *  - assigned-mig: accepted text is canonical: profile '@' start written
 *    back is the input, the profile fits, the start is 0..7;
 *  - assigned-fraction: 1..999, and "<n>m" parses to the same;
 *  - gpu-sharing: accepted exactly for "mps" and "timeslice";
 *  - the whole assignment: accepted only when each part is, a MIG
 *    instance or a fraction on exactly one GPU, never both; an Allocate
 *    answer names this pod and devices of the table, MPS variables only
 *    for an MPS share with the daemon healthy.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_pod_annotations"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deviceplugin/answer.h"
#include "deviceplugin/match.h"

enum { FIELD_MAX = 128 };

static const struct kerf_dp_device devs[] = {
	{ .id = "GPU-0", .gpu_index = 0, .healthy = 1 },
	{ .id = "GPU-1", .gpu_index = 1, .healthy = 1 },
	{ .id = "MIG-a", .gpu_index = 2, .healthy = 1, .kind = KERF_DP_DEV_MIG,
	  .mig_profile = "3g.40gb", .mig_start = 4 },
	{ .id = "MIG-b", .gpu_index = 2, .healthy = 1, .kind = KERF_DP_DEV_MIG,
	  .mig_profile = "1g.10gb+me", .mig_start = 0 },
	{ .id = "GPU-3::0", .gpu_index = 3, .healthy = 1, .kind = KERF_DP_DEV_SHARE,
	  .gpu_id = "GPU-3", .mem_mib = 81559 },
	{ .id = "GPU-4::0", .gpu_index = 4, .healthy = 1, .kind = KERF_DP_DEV_SHARE,
	  .gpu_id = "GPU-4", .mem_mib = 1 },
};
enum { N_DEVS = sizeof(devs) / sizeof(devs[0]) };

static void check_refusal(int rc, const struct kerf_err *err, const char *name)
{
	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
	if (name)
		CHECK_MSG(strncmp(err->msg, name, strlen(name)) == 0, err->msg);
}

static void fuzz_gpus(const char *s)
{
	struct kerf_err err = { 0 };
	uint64_t m = 0, again = 0;
	char text[64 * 3 + 1];
	size_t n = 0;
	int rc = kerf_dp_assigned_parse(s, &m, &err);

	if (rc < 0) {
		check_refusal(rc, &err, "kerf.io/assigned-gpus");
		return;
	}
	CHECK(m != 0);
	text[0] = '\0';
	for (unsigned i = 0; i < 64; i++)
		if (m & (UINT64_C(1) << i))
			n += (size_t)snprintf(text + n, sizeof(text) - n, n ? ",%u" : "%u", i);
	CHECK(kerf_dp_assigned_parse(text, &again, NULL) == 0 && again == m);
}

static void fuzz_mig(const char *s)
{
	struct kerf_err err = { 0 };
	char prof[KERF_DP_MIG_PROFILE_MAX], back[KERF_DP_MIG_PROFILE_MAX + 8];
	uint32_t start = 0;
	int rc = kerf_dp_mig_parse(s, prof, &start, &err);

	if (rc < 0) {
		check_refusal(rc, &err, "kerf.io/assigned-mig");
		return;
	}
	CHECK(start <= KERF_DP_MIG_MAX_START);
	CHECK(memchr(prof, '\0', sizeof(prof)) != NULL);
	snprintf(back, sizeof(back), "%s@%u", prof, start);
	CHECK_MSG(strcmp(back, s) == 0, back);
}

static void fuzz_fraction(const char *s)
{
	struct kerf_err err = { 0 };
	uint32_t m = 0, again = 0;
	char back[16];
	int rc = kerf_dp_fraction_parse(s, &m, &err);

	if (rc < 0) {
		check_refusal(rc, &err, "kerf.io/assigned-fraction");
		return;
	}
	CHECK(m >= 1 && m <= 999);
	snprintf(back, sizeof(back), "%um", m);
	CHECK(kerf_dp_fraction_parse(back, &again, NULL) == 0 && again == m);
}

static void fuzz_sharing(const char *s)
{
	struct kerf_err err = { 0 };
	enum kerf_dp_sharing sh = KERF_DP_SHARE_NONE;
	int rc = kerf_dp_sharing_parse(s, &sh, &err);
	int known = !strcmp(s, "mps") || !strcmp(s, "timeslice");

	CHECK((rc == 0) == known);
	if (rc < 0)
		check_refusal(rc, &err, "kerf.io/gpu-sharing");
	else
		CHECK(sh == (s[0] == 'm' ? KERF_DP_SHARE_MPS : KERF_DP_SHARE_TIMESLICE));
}

static int mps_daemon(void *arg, uint32_t gpu_index, uint32_t uid, struct kerf_dp_mps *out)
{
	const int *failed = arg;
	memset(out, 0, sizeof(*out));
	if (uid == 3)
		return -KERF_ENOTFOUND;
	out->healthy = !*failed;
	snprintf(out->pipe_dir, sizeof(out->pipe_dir), "/run/kerf/mps/GPU-%u/%u/pipe", gpu_index,
		 uid);
	out->limits.thread_pct = 50;
	out->limits.pinned_mem_mib = 40000;
	snprintf(out->why, sizeof(out->why), "gone");
	return 0;
}

static void fuzz_answer(const struct kerf_dp_pod_assign *pod, int failed)
{
	for (size_t i = 0; i < N_DEVS; i++) {
		struct kerf_dp_answer a;
		struct kerf_err err = { 0 };
		char *ids[] = { (char *)devs[i].id };
		int rc = kerf_dp_answer(devs, N_DEVS, ids, 1, pod, 1, mps_daemon, &failed, &a,
					&err);
		if (rc < 0) {
			check_refusal(rc, &err, NULL);
			continue;
		}
		CHECK(a.pod == 0);
		CHECK(a.n_ids == 1 && a.ids[0] != NULL);
		CHECK(a.kind == devs[i].kind);
		if (a.n_envs) {
			CHECK(devs[i].kind == KERF_DP_DEV_SHARE);
			CHECK(pod->sharing == KERF_DP_SHARE_MPS && !failed);
			CHECK(a.n_envs == 3 && a.mount_path[0] == '/');
		}
		if (devs[i].kind == KERF_DP_DEV_MIG)
			CHECK(!strcmp(pod->mig_profile, devs[i].mig_profile) &&
			      pod->mig_start == devs[i].mig_start);
		if (devs[i].kind == KERF_DP_DEV_SHARE)
			CHECK(pod->fraction_milli > 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char fields[4][FIELD_MAX + 1];
	const char *f[4] = { NULL, NULL, NULL, NULL };
	size_t k = 0, off = 1;

	if (size < 1)
		return 0;
	uint8_t flags = data[0];
	for (k = 0; k < 4; k++) {
		size_t n = 0;
		while (off < size && data[off] != '\n') {
			if (n < FIELD_MAX)
				fields[k][n++] = (char)data[off];
			off++;
		}
		off++;
		fields[k][n] = '\0';
		if (n != strlen(fields[k]))
			return 0;   /* a NUL inside: annotations are strings */
		if (flags & (1u << k))
			f[k] = fields[k];
	}
	if (f[0])
		fuzz_gpus(f[0]);
	if (f[1])
		fuzz_mig(f[1]);
	if (f[2])
		fuzz_fraction(f[2]);
	if (f[3])
		fuzz_sharing(f[3]);

	struct kerf_dp_pod_assign pod;
	struct kerf_err err = { 0 };
	uint32_t uid = (flags >> 4) & 3;
	int rc = kerf_dp_pod_assign_parse(&pod, "ns/pod", f[0], f[1], f[2], f[3], uid, &err);
	if (rc < 0) {
		check_refusal(rc, &err, "kerf.io/");
		return 0;
	}
	uint64_t m;
	CHECK(f[0] && kerf_dp_assigned_parse(f[0], &m, NULL) == 0 && m == pod.gpu_mask);
	CHECK(!(f[1] && f[2]));
	if (f[1] || f[2])
		CHECK(__builtin_popcountll(pod.gpu_mask) == 1);
	CHECK(!f[3] || f[2]);
	CHECK(kerf_dp_pod_is_whole(&pod) == (!f[1] && !f[2]));
	fuzz_answer(&pod, (flags >> 6) & 1);
	return 0;
}
