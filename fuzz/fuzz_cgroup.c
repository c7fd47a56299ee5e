/*
 * fuzz_cgroup: libFuzzer target for the agent's reader of /proc/PID/cgroup
 * (nvml/process_map.h, kerf_cgroup_pod_uid), the text that tells which pod
 * a GPU process is in.
 *
 * Beyond "no crash, no sanitizer report", each input checks:
 *  - the answer is a pod, no pod, or -KERF_EPARSE with a message;
 *  - a pod's UID is 32 to 36 characters of lower-case hex and '-', and
 *    the input holds it (with '-' or '_' for each '-');
 *  - a first line "0::/" (a hybrid's unified line, or the agent's own
 *    cgroup) changes nothing, but the numbering of lines.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_cgroup"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "nvml/process_map.h"

/* data holds uid at some offset, each '-' of uid as '-' or '_'. */
static bool holds(const uint8_t *data, size_t size, const char *uid)
{
	size_t len = strlen(uid);

	for (size_t at = 0; at + len <= size; at++) {
		size_t i = 0;

		while (i < len && (data[at + i] == (uint8_t)uid[i] ||
				   (uid[i] == '-' && data[at + i] == '_')))
			i++;
		if (i == len)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char first[] = "0::/\n";
	char uid[KERF_POD_UID_MAX + 1], again[KERF_POD_UID_MAX + 1];
	struct kerf_err err = { 0 }, err2 = { 0 };
	char *prefixed;
	int rc = kerf_cgroup_pod_uid((const char *)data, size, uid, &err), rc2;

	CHECK(rc == KERF_PROC_POD || rc == KERF_PROC_HOST || rc == -KERF_EPARSE);
	if (rc == -KERF_EPARSE)
		CHECK(err.msg[0] != '\0');
	if (rc == KERF_PROC_POD) {
		size_t len = strlen(uid);

		CHECK(len >= 32 && len <= KERF_POD_UID_MAX);
		for (size_t i = 0; i < len; i++)
			CHECK((uid[i] >= '0' && uid[i] <= '9') || (uid[i] >= 'a' && uid[i] <= 'f') ||
			      uid[i] == '-');
		CHECK(holds(data, size, uid));
	} else {
		CHECK(uid[0] == '\0');
	}
	prefixed = malloc(size + sizeof(first));
	if (!prefixed)
		return 0;
	memcpy(prefixed, first, sizeof(first) - 1);
	if (size)
		memcpy(prefixed + sizeof(first) - 1, data, size);
	rc2 = kerf_cgroup_pod_uid(prefixed, size + sizeof(first) - 1, again, &err2);
	/* an input of only empty lines is no file; with the line, no pod */
	CHECK(rc2 == rc || (rc2 == KERF_PROC_HOST && !strcmp(err.msg, "cgroup: no line")));
	if (rc == KERF_PROC_POD)
		CHECK(!strcmp(again, uid));
	free(prefixed);
	return 0;
}
