/*
 * node_doc: the Node patches of the agent (node_doc.h).
 */
#include "agent/node_doc.h"

#include "agent/util.h"

#include <stdio.h>
#include <string.h>

static const json_t *md_map(const json_t *node, const char *which)
{
	return json_object_get(json_object_get(node, "metadata"), which);
}

/* Put key=want into patch (an object) when map does not already say it;
 * want NULL removes the key (JSON null) when present. */
static void want_key(json_t *patch, const json_t *map, const char *key, const char *want)
{
	const char *have = json_string_value(json_object_get(map, key));

	if (want && (!have || strcmp(have, want)))
		json_object_set_new(patch, key, json_string(want));
	else if (!want && json_object_get(map, key))
		json_object_set_new(patch, key, json_null());
}

void kerf_agent_product_label(const char *nvml_name, char *out, size_t size)
{
	size_t i = 0;

	for (; nvml_name && nvml_name[i] && i + 1 < size; i++)
		out[i] = nvml_name[i] == ' ' ? '-' : nvml_name[i];
	out[i] = '\0';
}

static void mig_layout(const struct kerf_gpu_inventory *inv, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < inv->nr_gpus && used < size; i++) {
		const struct kerf_gpu *g = &inv->gpus[i];

		if (g->mig_current != 1)
			continue;
		used += (size_t)snprintf(buf + used, size - used, "%s%u:", used ? ";" : "",
					 g->index);
		for (uint32_t k = 0; k < g->nr_gis && used < size; k++)
			used += (size_t)snprintf(buf + used, size - used, "%s%s@%u", k ? "," : "",
						 g->gis[k].profile[0] ? g->gis[k].profile : "?",
						 g->gis[k].start);
	}
}

static void labels_patch(json_t *lp, const json_t *labels,
			 const struct kerf_agent_node_view *v)
{
	const struct kerf_gpu_inventory *inv = v->inv;
	char buf[128];
	unsigned mig = 0;

	if (v->nvlink_domain)
		want_key(lp, labels, "kerf.io/nvlink-domain", v->nvlink_domain);
	if (!inv || inv->state != KERF_GPU_INVENTORY_READ)
		return;
	snprintf(buf, sizeof(buf), "%u", inv->nr_gpus);
	want_key(lp, labels, KERF_LABEL_GPU_COUNT, buf);
	if (!inv->nr_gpus)
		return;
	kerf_agent_product_label(inv->gpus[0].name, buf, sizeof(buf));
	want_key(lp, labels, "nvidia.com/gpu.product", buf[0] ? buf : NULL);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)inv->gpus[0].mem_mib);
	want_key(lp, labels, "nvidia.com/gpu.memory", buf);
	if (inv->gpus[0].model)
		want_key(lp, labels, KERF_LABEL_GPU_MODEL, inv->gpus[0].model);
	for (uint32_t i = 0; i < inv->nr_gpus; i++)
		mig += inv->gpus[i].mig_current == 1;
	snprintf(buf, sizeof(buf), "%u", mig);
	want_key(lp, labels, "kerf.io/mig-gpus", buf);
}

static bool has_taint(const json_t *taints)
{
	const json_t *t;
	size_t i;

	json_array_foreach(taints, i, t) {
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && !strcmp(key, KERF_TAINT_GPU_FAILED))
			return true;
	}
	return false;
}

/* A node mark: the taint, the cordon and whose it is, the remediation ask. */
static int node_mark_patch(json_t *patch, json_t *ap, const json_t *node,
			   const struct kerf_agent_node_view *v)
{
	const json_t *spec = json_object_get(node, "spec");
	const json_t *taints = json_object_get(spec, "taints");
	const json_t *ann = md_map(node, "annotations");

	if (!v->marks->node_failed)
		return 0;
	json_t *sp = json_object();
	if (!sp)
		return -KERF_ENOMEM;
	if (!has_taint(taints)) {
		json_t *list = json_is_array(taints) ? json_deep_copy(taints) : json_array();

		json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "key",
						      KERF_TAINT_GPU_FAILED, "value", "node",
						      "effect", "NoSchedule"));
		json_object_set_new(sp, "taints", list);
	}
	if (!json_object_get(ann, KERF_ANN_REMEDIATION)) {
		char text[KERF_MARK_REASON_MAX + KERF_MARK_TIME_MAX + 8];

		snprintf(text, sizeof(text), "%s reboot: %s", v->now, v->marks->node.reason);
		json_object_set_new(ap, KERF_ANN_REMEDIATION, json_string(text));
	}
	if (json_object_size(sp))
		json_object_set_new(patch, "spec", sp);
	else
		json_decref(sp);
	return 0;
}

int kerf_agent_node_patch(const json_t *node, const struct kerf_agent_node_view *v,
			  json_t **out)
{
	const json_t *ann = md_map(node, "annotations");
	json_t *patch = json_object(), *md = json_object(), *lp = json_object();
	json_t *ap = json_object(), *marks = kerf_agent_marks_annotations(v->marks), *val;
	const char *key, *rv = json_string_value(md_map(node, "resourceVersion"));
	char layout[1024];
	int rc = -KERF_ENOMEM;

	*out = NULL;
	if (!patch || !md || !lp || !ap || !marks)
		goto done;
	labels_patch(lp, md_map(node, "labels"), v);
	json_object_foreach(marks, key, val)
		want_key(ap, ann, key, json_string_value(val));
	if (v->inv && v->inv->state == KERF_GPU_INVENTORY_READ) {
		mig_layout(v->inv, layout, sizeof(layout));
		want_key(ap, ann, KERF_ANN_MIG_LAYOUT, layout[0] ? layout : NULL);
	}
	if (v->utilization && kerf_util_changed(json_string_value(json_object_get(
							ann, KERF_ANN_GPU_UTILIZATION)),
						v->utilization))
		want_key(ap, ann, KERF_ANN_GPU_UTILIZATION,
			 v->utilization[0] ? v->utilization : NULL);
	if (v->mig_actuation)
		want_key(ap, ann, KERF_ANN_MIG_ACTUATION, v->mig_actuation);
	if (v->mps_on) {
		char failed[256];

		kerf_agent_marks_gpus_text(v->mps_failed, failed, sizeof(failed));
		want_key(ap, ann, KERF_ANN_MPS_FAILED_GPUS, failed[0] ? failed : NULL);
	}
	if ((rc = node_mark_patch(patch, ap, node, v)) < 0)
		goto done;
	rc = 0;
	if (!json_object_size(lp) && !json_object_size(ap) && !json_object_size(patch))
		goto done;
	if (json_object_size(lp))
		json_object_set(md, "labels", lp);
	if (json_object_size(ap))
		json_object_set(md, "annotations", ap);
	if (rv)
		json_object_set_new(md, "resourceVersion", json_string(rv));
	json_object_set(patch, "metadata", md);
	*out = json_incref(patch);
done:
	json_decref(patch);
	json_decref(md);
	json_decref(lp);
	json_decref(ap);
	json_decref(marks);
	return rc;
}

static const char *str_or_empty(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

static const json_t *condition_of(const json_t *node, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(node, "status"), "conditions"), *c;
	size_t i;

	json_array_foreach(conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static void condition_text(const struct kerf_agent_node_view *v, const char *unknown_reason,
			   const char **status, const char **reason, char *msg, size_t size)
{
	const struct kerf_agent_marks *m = v->marks;
	char gpus[256];

	if (unknown_reason) {
		*status = "Unknown";
		*reason = "NVMLUnavailable";
		snprintf(msg, size, "%s", unknown_reason);
		return;
	}
	if (!m->gpus_down && !m->nr_mig && !m->node_failed) {
		*status = "True";
		*reason = "GPUsHealthy";
		snprintf(msg, size, "%u GPUs in service", v->inv ? v->inv->nr_gpus : 0);
		return;
	}
	*status = "False";
	*reason = m->node_failed ? "GPULost" : m->gpus_down ? "GPUUnhealthy" : "MIGInstanceUnhealthy";
	kerf_agent_marks_gpus_text(m->gpus_down, gpus, sizeof(gpus));
	snprintf(msg, size, "out of allocation: GPUs [%s], %u MIG instances%s%s", gpus, m->nr_mig,
		 m->node_failed ? "; node cordoned, remediation asked: " : "",
		 m->node_failed ? m->node.reason : "");
}

int kerf_agent_condition_patch(const json_t *node, const struct kerf_agent_node_view *v,
			       const char *unknown_reason, json_t **out)
{
	const json_t *have = condition_of(node, KERF_COND_GPU_HEALTHY);
	const char *status, *reason, *hs;
	char msg[512];
	json_t *cond;

	*out = NULL;
	condition_text(v, unknown_reason, &status, &reason, msg, sizeof(msg));
	hs = json_string_value(json_object_get(have, "status"));
	if (hs && !strcmp(hs, status) &&
	    !strcmp(str_or_empty(json_object_get(have, "reason")), reason) &&
	    !strcmp(str_or_empty(json_object_get(have, "message")), msg))
		return 0;
	cond = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", KERF_COND_GPU_HEALTHY,
			 "status", status, "reason", reason, "message", msg,
			 "lastHeartbeatTime", v->now, "lastTransitionTime",
			 hs && !strcmp(hs, status) &&
				 json_string_value(json_object_get(have, "lastTransitionTime"))
				 ? json_string_value(json_object_get(have, "lastTransitionTime"))
				 : v->now);
	if (!cond)
		return -KERF_ENOMEM;
	*out = json_pack("{s:{s:[o]}}", "status", "conditions", cond);
	return *out ? 0 : -KERF_ENOMEM;
}
