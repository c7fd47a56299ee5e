/*
 * mig_node: the reader of MIG node descriptions (see mig_node.h).
 *
 * Like sim/scenario, it walks the tree of format/yaml_doc with a field path in
 * hand ("gpus[1].instances[0].start", kept by format/yaml_read) so that every
 * error says "file:line: field: reason".  It decodes into a local description and
 * copies it out only when everything, the layout of every GPU included, is
 * legal.  Names taken from the input are quoted in messages only as
 * printable ASCII, cut short.
 */
#include "sim/mig_node.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "format/file.h"
#include "format/yaml_doc.h"
#include "format/yaml_read.h"

enum {
	MIG_MAX_BYTES = 1 << 20,           /* the file */
	MIG_MAX_DEPTH = 16,                /* nested YAML collections */
	MIG_MAX_YAML_NODES = 100000,
	MIG_LIST_MAX = 320,                /* "known: a, b, c" lists */
};

struct reader {
	struct kerf_yread y;                /* the field path, messages */
	const struct kerf_mig_model *model;
};

/* ---- numbers ------------------------------------------------------- */

/*
 * A plain decimal integer from 0 to max, an optional sign before the
 * digits.  why, when not NULL, is added to the "at most" message.
 */
static int get_count(struct reader *r, const struct kerf_yaml_node *n,
		     unsigned max, const char *why, unsigned *out)
{
	size_t i = 0;
	bool neg = false, big = false, digits = false;
	unsigned v = 0;

	if (n->kind != KERF_YAML_SCALAR || !n->plain)
		goto bad;
	if (n->len > 0 && (n->text[0] == '+' || n->text[0] == '-')) {
		neg = n->text[0] == '-';
		i = 1;
	}
	for (; i < n->len; i++) {
		char c = n->text[i];

		if (c < '0' || c > '9')
			goto bad;
		digits = true;
		if (v > 100000000u)
			big = true;
		else
			v = v * 10 + (unsigned)(c - '0');
	}
	if (!digits)
		goto bad;
	if (neg && (v != 0 || big))
		return kerf_yread_fail(&r->y, n,
				       "must not be negative (an integer from 0 to %u)",
				       max);
	if (big || v > max)
		return kerf_yread_fail(&r->y, n, "must be at most %u%s%s%s",
				       max, why ? " (" : "", why ? why : "",
				       why ? ")" : "");
	*out = v;
	return 0;
bad:
	return kerf_yread_fail(&r->y, n, "must be an integer from 0 to %u",
			       max);
}

/* ---- the description ----------------------------------------------- */

static int get_model(struct reader *r, const struct kerf_yaml_node *n)
{
	char known[MIG_LIST_MAX], shown[KERF_YREAD_SHOWN_SIZE];
	size_t nr = 0, used = 0;
	const struct kerf_mig_model *models = kerf_mig_models(&nr);

	if (!kerf_yread_is_text(n))
		return kerf_yread_fail(&r->y, n, "must be a GPU model name");
	r->model = kerf_mig_model_find(n->text);
	if (r->model)
		return 0;
	known[0] = '\0';
	for (size_t i = 0; i < nr; i++)
		kerf_yread_add_list(known, sizeof(known), &used,
				    models[i].name);
	kerf_yread_show(shown, sizeof(shown), n);
	return kerf_yread_fail(&r->y, n, "unknown GPU model '%s' (known: %s)",
			       shown, known);
}

/* A profile of the model, named by scalar n; its index in *out. */
static int get_profile(struct reader *r, const struct kerf_yaml_node *n,
		       unsigned *out)
{
	const struct kerf_mig_model *m = r->model;
	char known[MIG_LIST_MAX], shown[KERF_YREAD_SHOWN_SIZE];
	size_t used = 0;
	int p = kerf_yread_is_text(n) ? kerf_mig_profile_find(m, n->text) : -1;

	if (p >= 0 && p < m->nr_profiles) {
		*out = (unsigned)p;
		return 0;
	}
	known[0] = '\0';
	for (unsigned i = 0; i < m->nr_profiles; i++)
		kerf_yread_add_list(known, sizeof(known), &used,
				    m->profiles[i].name);
	if (!kerf_yread_is_text(n))
		return kerf_yread_fail(&r->y, n, "must be a profile of %s (%s)",
				       m->name, known);
	kerf_yread_show(shown, sizeof(shown), n);
	return kerf_yread_fail(&r->y, n,
			       "%s has no profile '%s' (profiles: %s)", m->name,
			       shown, known);
}

enum { I_PROFILE, I_START, I_IN_USE, I_NR_ };
static const char *const instance_keys[I_NR_] = { "profile", "start",
						  "in_use" };

static int parse_instance(struct reader *r, const struct kerf_yaml_node *n,
			  struct kerf_mig_instance *out)
{
	const struct kerf_yaml_node *v[I_NR_];
	unsigned profile = 0, start = 0;
	unsigned last = r->model->mem_slices ? r->model->mem_slices - 1u : 0;
	char why[96];
	bool in_use = false;
	int rc;

	if ((rc = kerf_yread_take_map(&r->y, n, instance_keys, I_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, n, v[I_PROFILE], "profile")) < 0 ||
	    (rc = kerf_yread_need(&r->y, n, v[I_START], "start")) < 0)
		return rc;
	KERF_YREAD_UNDER_KEY(rc, &r->y, "profile",
			     get_profile(r, v[I_PROFILE], &profile));
	if (rc < 0)
		return rc;
	snprintf(why, sizeof(why), "%s has %u memory slices", r->model->name,
		 (unsigned)r->model->mem_slices);
	KERF_YREAD_UNDER_KEY(rc, &r->y, "start",
			     get_count(r, v[I_START], last, why, &start));
	if (rc < 0)
		return rc;
	rc = kerf_yread_key_bool(&r->y, v[I_IN_USE], "in_use", &in_use);
	if (rc < 0)
		return rc;
	out->profile = (uint8_t)profile;
	out->start = (uint8_t)start;
	out->in_use = in_use;
	return 0;
}

enum { G_INSTANCES, G_NR_ };
static const char *const gpu_keys[G_NR_] = { "instances" };

static int parse_gpu(struct reader *r, const struct kerf_yaml_node *n,
		     struct kerf_mig_layout *out)
{
	const struct kerf_yaml_node *v[G_NR_], *list;
	struct kerf_err why = { 0 };
	size_t mark;
	int rc;

	if ((rc = kerf_yread_take_map(&r->y, n, gpu_keys, G_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, n, v[G_INSTANCES], "instances")) < 0)
		return rc;
	list = v[G_INSTANCES];
	mark = kerf_yread_push_key(&r->y, "instances");
	if (list->kind != KERF_YAML_SEQ)
		rc = kerf_yread_fail(&r->y, list,
				     "must be a list of instances ([] for none)");
	else if (list->nr > KERF_MIG_MAX_INSTANCES)
		rc = kerf_yread_fail(&r->y, list,
				     "at most %d instances on one GPU, not %zu",
				     (int)KERF_MIG_MAX_INSTANCES, list->nr);
	for (size_t i = 0; rc == 0 && i < list->nr; i++) {
		size_t m = kerf_yread_push_index(&r->y, i);

		rc = parse_instance(r, list->items[i], &out->inst[i]);
		kerf_yread_pop(&r->y, m);
	}
	kerf_yread_pop(&r->y, mark);
	if (rc < 0)
		return rc;
	out->nr = (uint8_t)list->nr;
	if (kerf_mig_layout_check(r->model, out, &why) < 0)
		return kerf_yread_fail(&r->y, n, "%s",
				       why.msg[0] ? why.msg : "illegal layout");
	return 0;
}

static int parse_gpus(struct reader *r, const struct kerf_yaml_node *n,
		      struct kerf_mig_node *node)
{
	if (n->kind != KERF_YAML_SEQ || n->nr == 0)
		return kerf_yread_fail(&r->y, n,
				       "must be a list of 1 to %d GPUs",
				       (int)KERF_MIG_MAX_GPUS);
	if (n->nr > KERF_MIG_MAX_GPUS)
		return kerf_yread_fail(&r->y, n,
				       "at most %d GPUs on a node, not %zu",
				       (int)KERF_MIG_MAX_GPUS, n->nr);
	for (size_t i = 0; i < n->nr; i++) {
		size_t mark = kerf_yread_push_index(&r->y, i);
		int rc = parse_gpu(r, n->items[i], &node->gpus[i]);

		kerf_yread_pop(&r->y, mark);
		if (rc < 0)
			return rc;
	}
	node->nr_gpus = (uint8_t)n->nr;
	return 0;
}

static int parse_demand(struct reader *r, const struct kerf_yaml_node *n,
			uint16_t *want)
{
	bool seen[KERF_MIG_MAX_PROFILES] = { false };

	if (n->kind != KERF_YAML_MAP)
		return kerf_yread_fail(&r->y, n,
				       "must be a mapping from profile to count");
	for (size_t i = 0; i < n->nr; i++) {
		const struct kerf_yaml_node *k = n->pairs[i].key;
		size_t mark = kerf_yread_push_key_node(&r->y, k);
		unsigned p = 0, count = 0;
		int rc = get_profile(r, k, &p);

		if (rc == 0 && seen[p])
			rc = kerf_yread_fail(&r->y, k, "given twice");
		if (rc == 0)
			rc = get_count(r, n->pairs[i].value,
				       KERF_MIG_NODE_MAX_DEMAND, NULL, &count);
		kerf_yread_pop(&r->y, mark);
		if (rc < 0)
			return rc;
		seen[p] = true;
		want[p] = (uint16_t)count;
	}
	return 0;
}

enum { T_NODE, T_MODEL, T_GPUS, T_DEMAND, T_NR_ };
static const char *const top_keys[T_NR_] = { "node", "model", "gpus",
					     "demand" };

static int parse_top(struct reader *r, const struct kerf_yaml_node *root,
		     struct kerf_mig_node_desc *d)
{
	const struct kerf_yaml_node *v[T_NR_];
	int rc;

	if (root->kind != KERF_YAML_MAP)
		return kerf_yread_fail(&r->y, root,
				       "a node description must be a mapping");
	if ((rc = kerf_yread_take_map(&r->y, root, top_keys, T_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, root, v[T_MODEL], "model")) < 0 ||
	    (rc = kerf_yread_need(&r->y, root, v[T_GPUS], "gpus")) < 0)
		return rc;
	rc = kerf_yread_key_name(&r->y, v[T_NODE], "node",
				 KERF_MIG_NODE_NAME_MAX - 1, d->name);
	if (rc < 0)
		return rc;
	KERF_YREAD_UNDER_KEY(rc, &r->y, "model", get_model(r, v[T_MODEL]));
	if (rc < 0)
		return rc;
	d->node.model = r->model;
	KERF_YREAD_UNDER_KEY(rc, &r->y, "gpus",
			     parse_gpus(r, v[T_GPUS], &d->node));
	if (rc < 0)
		return rc;
	if (v[T_DEMAND])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "demand",
				     parse_demand(r, v[T_DEMAND], d->want));
	return rc;
}

int kerf_mig_node_parse(struct kerf_mig_node_desc *d, const char *path,
			const char *yaml, size_t len, struct kerf_err *err)
{
	static const struct kerf_yaml_limits limits = {
		.max_bytes = MIG_MAX_BYTES,
		.max_depth = MIG_MAX_DEPTH,
		.max_nodes = MIG_MAX_YAML_NODES,
	};
	struct kerf_mig_node_desc tmp;
	struct kerf_yaml_doc doc;
	struct reader r;
	int rc;

	memset(d, 0, sizeof(*d));
	memset(&tmp, 0, sizeof(tmp));
	rc = kerf_yaml_load(&doc, path, yaml, len, &limits, err);
	if (rc < 0)
		return rc;
	kerf_yread_init(&r.y, path, err);
	r.model = NULL;
	if (!doc.root || kerf_yaml_is_null(doc.root))
		rc = kerf_err_set(err, -KERF_EPARSE,
				  "%s:%u: the node description is empty",
				  r.y.path, doc.root ? doc.root->line : 1);
	else
		rc = parse_top(&r, doc.root, &tmp);
	kerf_yaml_release(&doc);
	if (rc == 0)
		*d = tmp;
	return rc;
}

int kerf_mig_node_load(struct kerf_mig_node_desc *d, const char *path,
		       struct kerf_err *err)
{
	struct kerf_file f;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = kerf_file_read(&f, path, MIG_MAX_BYTES, err);
	if (rc < 0)
		return rc;
	rc = kerf_mig_node_parse(d, path, f.data, f.len, err);
	kerf_file_release(&f);
	return rc;
}
