/*
 * marks: parse, add to and write the health marks of a node (marks.h).
 */
#include "agent/marks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"

static void text_set(struct kerf_mark_text *t, const char *reason, const char *now)
{
	snprintf(t->reason, sizeof(t->reason), "%s", reason ? reason : "");
	snprintf(t->since, sizeof(t->since), "%s", now ? now : "");
}

static int find_mig(const struct kerf_agent_marks *m, unsigned gpu, const char *profile,
		    unsigned start)
{
	for (uint32_t i = 0; i < m->nr_mig; i++)
		if (m->mig[i].gpu == gpu && m->mig[i].start == start &&
		    !strcmp(m->mig[i].profile, profile))
			return (int)i;
	return -1;
}

static void add_mig(struct kerf_agent_marks *m, const struct kerf_mig_mark *x)
{
	struct kerf_agent_mig_mark *mm;

	if (find_mig(m, x->gpu, x->profile, x->start) >= 0 || m->nr_mig == KERF_MARKS_MAX_MIG)
		return;
	mm = &m->mig[m->nr_mig++];
	memset(mm, 0, sizeof(*mm));
	mm->gpu = x->gpu;
	mm->start = x->start;
	snprintf(mm->profile, sizeof(mm->profile), "%s", x->profile);
}

int kerf_agent_marks_parse(const char *gpus, const char *mig, struct kerf_agent_marks *m,
			   struct kerf_err *err)
{
	struct kerf_mig_mark migs[KERF_MIG_MARKS_MAX];
	uint16_t mask = 0;
	size_t nr = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (gpus && (rc = kerf_gpu_marks_parse_gpus(gpus, &mask, err)) < 0)
		return rc;
	if (mig && (rc = kerf_gpu_marks_parse_mig(mig, migs, KERF_MIG_MARKS_MAX, &nr, err)) < 0)
		return rc;
	m->gpus_down = mask;
	for (size_t i = 0; i < nr; i++)
		add_mig(m, &migs[i]);
	return 0;
}

static void copy_text(struct kerf_mark_text *t, const json_t *o)
{
	const char *r = json_string_value(json_object_get(o, "reason"));
	const char *s = json_string_value(json_object_get(o, "since"));

	if (r)
		text_set(t, r, s);
}

/* The reasons kept in kerf.io/gpu-health, where they are readable. */
static void read_texts(const char *health, struct kerf_agent_marks *m)
{
	json_t *h = health ? json_loads(health, 0, NULL) : NULL, *v;
	const char *key;

	if (!json_is_object(h)) {
		json_decref(h);
		return;
	}
	copy_text(&m->node, json_object_get(h, "node"));
	json_object_foreach(json_object_get(h, "gpus"), key, v) {
		uint64_t i;

		if (kerf_parse_u64(key, &i) == 0 && i < KERF_MARKS_MAX_GPUS)
			copy_text(&m->gpu[i], v);
	}
	json_object_foreach(json_object_get(h, "mig"), key, v) {
		struct kerf_mig_mark mm;
		struct kerf_err err = { 0 };
		size_t nr = 0;
		int at;

		if (kerf_gpu_marks_parse_mig(key, &mm, 1, &nr, &err) == 0 && nr == 1 &&
		    (at = find_mig(m, mm.gpu, mm.profile, mm.start)) >= 0)
			copy_text(&m->mig[at].text, v);
	}
	json_decref(h);
}

int kerf_agent_marks_from_node(const json_t *node, struct kerf_agent_marks *m,
			       struct kerf_err *err)
{
	const json_t *md = json_object_get(node, "metadata");
	const json_t *ann = json_object_get(md, "annotations");
	const json_t *taints = json_object_get(json_object_get(node, "spec"), "taints"), *t;
	const json_t *g = json_object_get(ann, KERF_ANN_UNHEALTHY_GPUS);
	const json_t *mi = json_object_get(ann, KERF_ANN_UNHEALTHY_MIG);
	size_t i;
	int rc;

	if (json_is_null(g))   /* a merge patch's "remove" read back: absent */
		g = NULL;
	if (json_is_null(mi))
		mi = NULL;
	if ((g && !json_is_string(g)) || (mi && !json_is_string(mi))) {
		memset(m, 0, sizeof(*m));
		return kerf_err_set(err, -KERF_EPARSE, "annotation %s: not a string",
				    g && !json_is_string(g) ? KERF_ANN_UNHEALTHY_GPUS
							    : KERF_ANN_UNHEALTHY_MIG);
	}
	rc = kerf_agent_marks_parse(json_string_value(g), json_string_value(mi), m, err);
	if (rc < 0)
		return rc;
	json_array_foreach(taints, i, t) {
		const char *key = json_string_value(json_object_get(t, "key"));

		if (key && !strcmp(key, KERF_TAINT_GPU_FAILED))
			m->node_failed = true;
	}
	read_texts(json_string_value(json_object_get(ann, KERF_ANN_GPU_HEALTH)), m);
	return 0;
}

static int gi_of(const struct kerf_gpu *g, unsigned gi_id)
{
	for (uint32_t k = 0; k < g->nr_gis; k++)
		if (g->gis[k].id == gi_id)
			return (int)k;
	return -1;
}

static bool mark_gpu(struct kerf_agent_marks *m, int gpu, const char *reason,
		     const char *now)
{
	if (gpu < 0 || gpu >= KERF_MARKS_MAX_GPUS || (m->gpus_down >> gpu & 1))
		return false;
	m->gpus_down |= 1ull << gpu;
	text_set(&m->gpu[gpu], reason, now);
	return true;
}

bool kerf_agent_marks_apply(struct kerf_agent_marks *m, const struct kerf_health_verdict *v,
			    int gpu, const struct kerf_gpu_inventory *inv, const char *now)
{
	bool added = false;

	if (v->actions & KERF_HEALTH_CORDON_NODE && !m->node_failed) {
		m->node_failed = true;
		text_set(&m->node, v->reason, now);
		added = true;
	}
	if (v->actions & (KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_CORDON_NODE))
		added |= mark_gpu(m, gpu, v->reason, now);
	if (v->actions & KERF_HEALTH_INSTANCE_UNHEALTHY) {
		const struct kerf_gpu *g = inv && gpu >= 0 && (uint32_t)gpu < inv->nr_gpus
						   ? &inv->gpus[gpu] : NULL;
		int k = g ? gi_of(g, v->gi) : -1;

		if (k < 0 || !g->gis[k].profile[0] || m->nr_mig == KERF_MARKS_MAX_MIG)
			return mark_gpu(m, gpu, v->reason, now) || added;
		if (find_mig(m, (unsigned)gpu, g->gis[k].profile, g->gis[k].start) >= 0)
			return added;
		struct kerf_agent_mig_mark *mm = &m->mig[m->nr_mig++];
		memset(mm, 0, sizeof(*mm));
		mm->gpu = (uint8_t)gpu;
		mm->start = (uint8_t)g->gis[k].start;
		snprintf(mm->profile, sizeof(mm->profile), "%s", g->gis[k].profile);
		text_set(&mm->text, v->reason, now);
		added = true;
	}
	return added;
}

void kerf_agent_marks_union(struct kerf_agent_marks *dst, const struct kerf_agent_marks *src)
{
	for (int i = 0; i < KERF_MARKS_MAX_GPUS; i++)
		if (src->gpus_down >> i & 1) {
			if (!(dst->gpus_down >> i & 1) || !dst->gpu[i].reason[0])
				dst->gpu[i] = src->gpu[i];
			dst->gpus_down |= 1ull << i;
		}
	for (uint32_t i = 0; i < src->nr_mig; i++) {
		const struct kerf_agent_mig_mark *s = &src->mig[i];
		int at = find_mig(dst, s->gpu, s->profile, s->start);

		if (at < 0 && dst->nr_mig < KERF_MARKS_MAX_MIG)
			dst->mig[dst->nr_mig++] = *s;
		else if (at >= 0 && !dst->mig[at].text.reason[0])
			dst->mig[at].text = s->text;
	}
	if (src->node_failed && (!dst->node_failed || !dst->node.reason[0]))
		dst->node = src->node;
	dst->node_failed |= src->node_failed;
}

bool kerf_agent_marks_equal(const struct kerf_agent_marks *a, const struct kerf_agent_marks *b)
{
	if (a->gpus_down != b->gpus_down || a->nr_mig != b->nr_mig ||
	    a->node_failed != b->node_failed)
		return false;
	for (uint32_t i = 0; i < a->nr_mig; i++)
		if (find_mig(b, a->mig[i].gpu, a->mig[i].profile, a->mig[i].start) < 0)
			return false;
	return true;
}

bool kerf_agent_marks_instance_down(const struct kerf_agent_marks *m, int gpu,
				    const char *profile, unsigned start)
{
	if (gpu < 0 || gpu >= KERF_MARKS_MAX_GPUS)
		return false;
	if (m->gpus_down >> gpu & 1)
		return true;
	return profile && find_mig(m, (unsigned)gpu, profile, start) >= 0;
}

void kerf_agent_marks_gpus_text(uint64_t mask, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < KERF_MARKS_MAX_GPUS && used < size; i++)
		if (mask >> i & 1)
			used += (size_t)snprintf(buf + used, size - used, "%s%d",
						 used ? "," : "", i);
}

static json_t *text_json(const struct kerf_mark_text *t)
{
	return json_pack("{s:s, s:s}", "reason", t->reason, "since", t->since);
}

static json_t *health_json(const struct kerf_agent_marks *m)
{
	json_t *h = json_object(), *gpus = json_object(), *mig = json_object();
	char key[48];

	if (!h || !gpus || !mig)
		goto oom;
	for (int i = 0; i < KERF_MARKS_MAX_GPUS; i++)
		if (m->gpus_down >> i & 1) {
			snprintf(key, sizeof(key), "%d", i);
			json_object_set_new(gpus, key, text_json(&m->gpu[i]));
		}
	for (uint32_t i = 0; i < m->nr_mig; i++) {
		snprintf(key, sizeof(key), "%u:%s@%u", m->mig[i].gpu, m->mig[i].profile,
			 m->mig[i].start);
		json_object_set_new(mig, key, text_json(&m->mig[i].text));
	}
	if (m->node_failed)
		json_object_set_new(h, "node", text_json(&m->node));
	json_object_set_new(h, "gpus", gpus);
	json_object_set_new(h, "mig", mig);
	return h;
oom:
	json_decref(h);
	json_decref(gpus);
	json_decref(mig);
	return NULL;
}

json_t *kerf_agent_marks_annotations(const struct kerf_agent_marks *m)
{
	json_t *a = json_object(), *h;
	char gpus[256], mig[KERF_MARKS_MAX_MIG * 24];
	size_t used = 0;
	char *health;

	if (!a)
		return NULL;
	kerf_agent_marks_gpus_text(m->gpus_down, gpus, sizeof(gpus));
	json_object_set_new(a, KERF_ANN_UNHEALTHY_GPUS, gpus[0] ? json_string(gpus) : json_null());
	mig[0] = '\0';
	for (uint32_t i = 0; i < m->nr_mig && used < sizeof(mig); i++)
		used += (size_t)snprintf(mig + used, sizeof(mig) - used, "%s%u:%s@%u",
					 i ? "," : "", m->mig[i].gpu, m->mig[i].profile,
					 m->mig[i].start);
	json_object_set_new(a, KERF_ANN_UNHEALTHY_MIG, mig[0] ? json_string(mig) : json_null());
	if (!m->gpus_down && !m->nr_mig && !m->node_failed) {
		json_object_set_new(a, KERF_ANN_GPU_HEALTH, json_null());
		return a;
	}
	h = health_json(m);
	health = h ? json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(h);
	if (!health) {
		json_decref(a);
		return NULL;
	}
	json_object_set_new(a, KERF_ANN_GPU_HEALTH, json_string(health));
	free(health);
	return a;
}
