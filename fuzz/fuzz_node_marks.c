/*
 * fuzz_node_marks: libFuzzer target for the decoder of the health marks
 * the node agent reads back from its Node (agent/marks.c:
 * kerf.io/unhealthy-gpus, kerf.io/unhealthy-mig, kerf.io/gpu-health and
 * the kerf.io/gpu-failed taint), which anyone who may write the Node can
 * set.  The input is the Node's JSON text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on refusal: a negative code, a printable message naming the
 *    annotation;
 *  - on success: the marks written back as annotations read again as the
 *    same marks (a restart reads what the agent wrote), and every mark
 *    read is a mark in force (instance_down agrees).
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_node_marks"
#include "check.h"

#include <string.h>

#include <jansson.h>

#include "agent/marks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_agent_marks m, back;
	struct kerf_err err = { 0 };
	json_t *root = json_loadb((const char *)data, size,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	int rc;

	if (!root)
		return 0;
	rc = kerf_agent_marks_from_node(root, &m, &err);
	json_decref(root);
	if (rc < 0) {
		CHECK(rc == -KERF_EPARSE && err.code == rc);
		CHECK(strstr(err.msg, "kerf.io/unhealthy-") != NULL);
		for (const char *p = err.msg; *p; p++)
			CHECK_MSG(*p >= ' ' && *p < 0x7f, err.msg);
		return 0;
	}
	for (int g = 0; g < KERF_MARKS_MAX_GPUS; g++)
		CHECK(kerf_agent_marks_instance_down(&m, g, NULL, 0) == (bool)(m.gpus_down >> g & 1));
	for (uint32_t i = 0; i < m.nr_mig; i++)
		CHECK(kerf_agent_marks_instance_down(&m, m.mig[i].gpu, m.mig[i].profile,
						     m.mig[i].start));
	json_t *ann = kerf_agent_marks_annotations(&m);
	CHECK(ann != NULL);
	json_t *node = json_pack("{s:{s:o}}", "metadata", "annotations", ann);
	CHECK(node != NULL);
	if (m.node_failed)
		json_object_set_new(node, "spec",
				    json_pack("{s:[{s:s, s:s}]}", "taints", "key",
					      KERF_TAINT_GPU_FAILED, "effect", "NoSchedule"));
	rc = kerf_agent_marks_from_node(node, &back, &err);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(kerf_agent_marks_equal(&m, &back));
	json_decref(node);
	return 0;
}
