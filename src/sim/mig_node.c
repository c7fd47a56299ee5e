/*
 * mig_node: the reader of MIG node descriptions (see mig_node.h).
 *
 * Like sim/scenario, it walks the tree of sim/yaml_doc with a field path in
 * hand ("gpus[1].instances[0].start") so that every error says
 * "file:line: field: reason".  It decodes into a local description and
 * copies it out only when everything, the layout of every GPU included, is
 * legal.  Names taken from the input are quoted in messages only as
 * printable ASCII, cut short.
 */
#include "sim/mig_node.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "sim/file.h"
#include "sim/yaml_doc.h"

enum {
	MIG_MAX_BYTES = 1 << 20,           /* the file */
	MIG_MAX_DEPTH = 16,                /* nested YAML collections */
	MIG_MAX_YAML_NODES = 100000,
	MIG_FIELD_MAX = 160,
	MIG_SHOW_MAX = 40,                 /* bytes of a name quoted back */
	MIG_LIST_MAX = 320,                /* "known: a, b, c" lists */
};

struct reader {
	const char *path;
	struct kerf_err *err;
	char field[MIG_FIELD_MAX];          /* path of the value at hand */
	size_t field_len;
	const struct kerf_mig_model *model;
};

/* ---- messages and the field path ----------------------------------- */

static int fail(struct reader *r, const struct kerf_yaml_node *n,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, const struct kerf_yaml_node *n,
		const char *fmt, ...)
{
	char reason[KERF_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (r->field_len == 0)
		return kerf_err_set(r->err, -KERF_EPARSE, "%s:%u: %s", r->path,
				    n->line, reason);
	return kerf_err_set(r->err, -KERF_EPARSE, "%s:%u: %s: %s", r->path,
			    n->line, r->field, reason);
}

/*
 * The text of scalar n for a message: printable ASCII, anything else as
 * '?', at most MIG_SHOW_MAX bytes then "...".
 */
static void show(char *out, size_t size, const struct kerf_yaml_node *n)
{
	size_t used = 0, i;

	for (i = 0; i < n->len && i < MIG_SHOW_MAX && used + 1 < size; i++) {
		unsigned char ch = (unsigned char)n->text[i];

		out[used++] = ch >= ' ' && ch < 0x7f ? (char)ch : '?';
	}
	if (i < n->len && used + 4 < size) {
		memcpy(out + used, "...", 3);
		used += 3;
	}
	out[used] = '\0';
}

/* Append sep then text to the field path; returns the mark to pop to. */
static size_t push_text(struct reader *r, const char *sep, const char *text)
{
	size_t mark = r->field_len;
	int n = snprintf(r->field + mark, sizeof(r->field) - mark, "%s%s", sep,
			 text);

	if (n > 0)
		r->field_len += (size_t)n;
	if (r->field_len >= sizeof(r->field))
		r->field_len = sizeof(r->field) - 1;
	return mark;
}

/* Append to the field path; returns the mark to pop back to. */
static size_t push_key(struct reader *r, const char *key)
{
	return push_text(r, r->field_len ? "." : "", key);
}

/* Append a key taken from the input, shown safely. */
static size_t push_key_node(struct reader *r, const struct kerf_yaml_node *k)
{
	char shown[MIG_SHOW_MAX + 4];

	show(shown, sizeof(shown), k);
	return push_key(r, shown);
}

static size_t push_index(struct reader *r, size_t i)
{
	char idx[32];

	snprintf(idx, sizeof(idx), "[%zu]", i);
	return push_text(r, "", idx);
}

static void pop(struct reader *r, size_t mark)
{
	r->field_len = mark;
	r->field[mark] = '\0';
}

/* rc = call, with key appended to the field path meanwhile. */
#define UNDER_KEY(rc, r, key, call)                             \
	do {                                                    \
		size_t mark_ = push_key((r), (key));            \
		(rc) = (call);                                  \
		pop((r), mark_);                                \
	} while (0)

/* An error about key of a mapping (the key itself is absent or wrong). */
static int fail_key(struct reader *r, const struct kerf_yaml_node *at,
		    const char *key, const char *reason)
{
	size_t mark = push_key(r, key);
	int rc = fail(r, at, "%s", reason);

	pop(r, mark);
	return rc;
}

/* "a, b, c" into out. */
static void add_list(char *out, size_t size, size_t *used, const char *item)
{
	int w;

	if (*used >= size)
		return;
	w = snprintf(out + *used, size - *used, "%s%s", *used ? ", " : "", item);
	if (w > 0)
		*used += (size_t)w;
}

/* ---- mappings and scalars ------------------------------------------ */

static bool key_is(const struct kerf_yaml_node *k, const char *name)
{
	size_t len = strlen(name);

	return k->len == len && memcmp(k->text, name, len) == 0;
}

/*
 * The values of a mapping with the given keys (NULL where absent).  Unknown
 * keys and keys given twice are errors.
 */
static int take_map(struct reader *r, const struct kerf_yaml_node *n,
		    const char *const *keys, int nr_keys,
		    const struct kerf_yaml_node **vals)
{
	for (int j = 0; j < nr_keys; j++)
		vals[j] = NULL;
	if (n->kind != KERF_YAML_MAP)
		return fail(r, n, "must be a mapping");
	for (size_t i = 0; i < n->nr; i++) {
		const struct kerf_yaml_node *k = n->pairs[i].key;
		char known[MIG_LIST_MAX];
		size_t used = 0, mark;
		int j, rc;

		for (j = 0; j < nr_keys && !key_is(k, keys[j]); j++)
			;
		if (j < nr_keys && !vals[j]) {
			vals[j] = n->pairs[i].value;
			continue;
		}
		if (j < nr_keys)
			return fail_key(r, k, keys[j], "given twice");
		known[0] = '\0';
		for (j = 0; j < nr_keys; j++)
			add_list(known, sizeof(known), &used, keys[j]);
		mark = push_key_node(r, k);
		rc = fail(r, k, "unknown key (known: %s)", known);
		pop(r, mark);
		return rc;
	}
	return 0;
}

static int need(struct reader *r, const struct kerf_yaml_node *map,
		const struct kerf_yaml_node *val, const char *key)
{
	return val ? 0 : fail_key(r, map, key, "missing");
}

static bool is_scalar(const struct kerf_yaml_node *n)
{
	return n->kind == KERF_YAML_SCALAR && !kerf_yaml_is_null(n);
}

/* A scalar of 1.. bytes holding no NUL: usable as a C string. */
static bool is_text(const struct kerf_yaml_node *n)
{
	return is_scalar(n) && n->len > 0 && strlen(n->text) == n->len;
}

/* A name: 1..max bytes of printable ASCII, no space. */
static int get_name(struct reader *r, const struct kerf_yaml_node *n,
		    size_t max, char *out)
{
	if (!is_scalar(n) || n->len == 0 || n->len > max)
		return fail(r, n, "must be a name of 1 to %zu bytes", max);
	for (size_t i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->text[i];

		if (ch <= ' ' || ch >= 0x7f)
			return fail(r, n, "byte 0x%02x is not allowed in a name",
				    ch);
	}
	memcpy(out, n->text, n->len + 1);
	return 0;
}

static int get_bool(struct reader *r, const struct kerf_yaml_node *n,
		    bool *out)
{
	if (n->kind == KERF_YAML_SCALAR && n->plain && key_is(n, "true")) {
		*out = true;
		return 0;
	}
	if (n->kind == KERF_YAML_SCALAR && n->plain && key_is(n, "false")) {
		*out = false;
		return 0;
	}
	return fail(r, n, "must be true or false");
}

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
		return fail(r, n, "must not be negative (an integer from 0 to %u)",
			    max);
	if (big || v > max)
		return fail(r, n, "must be at most %u%s%s%s", max,
			    why ? " (" : "", why ? why : "", why ? ")" : "");
	*out = v;
	return 0;
bad:
	return fail(r, n, "must be an integer from 0 to %u", max);
}

/* ---- the description ----------------------------------------------- */

static int get_model(struct reader *r, const struct kerf_yaml_node *n)
{
	char known[MIG_LIST_MAX], shown[MIG_SHOW_MAX + 4];
	size_t nr = 0, used = 0;
	const struct kerf_mig_model *models = kerf_mig_models(&nr);

	if (!is_text(n))
		return fail(r, n, "must be a GPU model name");
	r->model = kerf_mig_model_find(n->text);
	if (r->model)
		return 0;
	known[0] = '\0';
	for (size_t i = 0; i < nr; i++)
		add_list(known, sizeof(known), &used, models[i].name);
	show(shown, sizeof(shown), n);
	return fail(r, n, "unknown GPU model '%s' (known: %s)", shown, known);
}

/* A profile of the model, named by scalar n; its index in *out. */
static int get_profile(struct reader *r, const struct kerf_yaml_node *n,
		       unsigned *out)
{
	const struct kerf_mig_model *m = r->model;
	char known[MIG_LIST_MAX], shown[MIG_SHOW_MAX + 4];
	size_t used = 0;
	int p = is_text(n) ? kerf_mig_profile_find(m, n->text) : -1;

	if (p >= 0 && p < m->nr_profiles) {
		*out = (unsigned)p;
		return 0;
	}
	known[0] = '\0';
	for (unsigned i = 0; i < m->nr_profiles; i++)
		add_list(known, sizeof(known), &used, m->profiles[i].name);
	if (!is_text(n))
		return fail(r, n, "must be a profile of %s (%s)", m->name, known);
	show(shown, sizeof(shown), n);
	return fail(r, n, "%s has no profile '%s' (profiles: %s)", m->name,
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

	if ((rc = take_map(r, n, instance_keys, I_NR_, v)) < 0 ||
	    (rc = need(r, n, v[I_PROFILE], "profile")) < 0 ||
	    (rc = need(r, n, v[I_START], "start")) < 0)
		return rc;
	UNDER_KEY(rc, r, "profile", get_profile(r, v[I_PROFILE], &profile));
	if (rc < 0)
		return rc;
	snprintf(why, sizeof(why), "%s has %u memory slices", r->model->name,
		 (unsigned)r->model->mem_slices);
	UNDER_KEY(rc, r, "start", get_count(r, v[I_START], last, why, &start));
	if (rc < 0)
		return rc;
	if (v[I_IN_USE])
		UNDER_KEY(rc, r, "in_use", get_bool(r, v[I_IN_USE], &in_use));
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

	if ((rc = take_map(r, n, gpu_keys, G_NR_, v)) < 0 ||
	    (rc = need(r, n, v[G_INSTANCES], "instances")) < 0)
		return rc;
	list = v[G_INSTANCES];
	mark = push_key(r, "instances");
	if (list->kind != KERF_YAML_SEQ)
		rc = fail(r, list, "must be a list of instances ([] for none)");
	else if (list->nr > KERF_MIG_MAX_INSTANCES)
		rc = fail(r, list, "at most %d instances on one GPU, not %zu",
			  (int)KERF_MIG_MAX_INSTANCES, list->nr);
	for (size_t i = 0; rc == 0 && i < list->nr; i++) {
		size_t m = push_index(r, i);

		rc = parse_instance(r, list->items[i], &out->inst[i]);
		pop(r, m);
	}
	pop(r, mark);
	if (rc < 0)
		return rc;
	out->nr = (uint8_t)list->nr;
	if (kerf_mig_layout_check(r->model, out, &why) < 0)
		return fail(r, n, "%s", why.msg[0] ? why.msg : "illegal layout");
	return 0;
}

static int parse_gpus(struct reader *r, const struct kerf_yaml_node *n,
		      struct kerf_mig_node *node)
{
	if (n->kind != KERF_YAML_SEQ || n->nr == 0)
		return fail(r, n, "must be a list of 1 to %d GPUs",
			    (int)KERF_MIG_MAX_GPUS);
	if (n->nr > KERF_MIG_MAX_GPUS)
		return fail(r, n, "at most %d GPUs on a node, not %zu",
			    (int)KERF_MIG_MAX_GPUS, n->nr);
	for (size_t i = 0; i < n->nr; i++) {
		size_t mark = push_index(r, i);
		int rc = parse_gpu(r, n->items[i], &node->gpus[i]);

		pop(r, mark);
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
		return fail(r, n, "must be a mapping from profile to count");
	for (size_t i = 0; i < n->nr; i++) {
		const struct kerf_yaml_node *k = n->pairs[i].key;
		size_t mark = push_key_node(r, k);
		unsigned p = 0, count = 0;
		int rc = get_profile(r, k, &p);

		if (rc == 0 && seen[p])
			rc = fail(r, k, "given twice");
		if (rc == 0)
			rc = get_count(r, n->pairs[i].value,
				       KERF_MIG_NODE_MAX_DEMAND, NULL, &count);
		pop(r, mark);
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
		return fail(r, root, "a node description must be a mapping");
	if ((rc = take_map(r, root, top_keys, T_NR_, v)) < 0 ||
	    (rc = need(r, root, v[T_MODEL], "model")) < 0 ||
	    (rc = need(r, root, v[T_GPUS], "gpus")) < 0)
		return rc;
	if (v[T_NODE])
		UNDER_KEY(rc, r, "node",
			  get_name(r, v[T_NODE], KERF_MIG_NODE_NAME_MAX - 1,
				   d->name));
	if (rc < 0)
		return rc;
	UNDER_KEY(rc, r, "model", get_model(r, v[T_MODEL]));
	if (rc < 0)
		return rc;
	d->node.model = r->model;
	UNDER_KEY(rc, r, "gpus", parse_gpus(r, v[T_GPUS], &d->node));
	if (rc < 0)
		return rc;
	if (v[T_DEMAND])
		UNDER_KEY(rc, r, "demand", parse_demand(r, v[T_DEMAND], d->want));
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
	memset(&r, 0, sizeof(r));
	rc = kerf_yaml_load(&doc, path, yaml, len, &limits, err);
	if (rc < 0)
		return rc;
	r.path = path;
	r.err = err;
	if (!doc.root || kerf_yaml_is_null(doc.root))
		rc = kerf_err_set(err, -KERF_EPARSE,
				  "%s:%u: the node description is empty", path,
				  doc.root ? doc.root->line : 1);
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
