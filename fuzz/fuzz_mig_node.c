/*
 * fuzz_mig_node: libFuzzer target for the reader of MIG node descriptions
 * (kerf_mig_node_parse and format/yaml_doc under it), the decoder of the
 * untrusted file `kerf plan-mig` reads.  The input is the YAML text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks
 * properties and abort()s when one fails:
 *  - on error: the code is negative and recorded, the message is printable
 *    ASCII and starts with the path given followed by ':', and the description is all zero;
 *  - on success: the model is one of the tables, every value is within its
 *    bounds (name, GPU and instance counts, profiles, starts, demand) and
 *    every GPU's layout is legal; writing the description back as YAML and
 *    parsing that gives the same description (round trip); and the planner
 *    plans it: demand served plus unserved is the demand, served counts
 *    follow from the free instances before and after, the plan serves at
 *    least what doing nothing serves, no instance in use is destroyed or
 *    lost, destroys come before creates, and applying the actions one by
 *    one with kerf_mig_apply succeeds, stays legal at every step and ends
 *    in the layouts the plan gives, with the headroom lost it states.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_mig_node"
#include "check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "core/mig/geometry.h"
#include "core/mig/planner.h"
#include "sim/mig_node.h"

/* The path handed to the parser; every message must start with it. */
static const char input_path[] = "fuzz-input.yaml";
static const char roundtrip_path[] = "roundtrip.yaml";

/* ---- a bounded text buffer for the round trip ---------------------- */

struct text {
	char data[16384];
	size_t len;
};

static void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->data + t->len, sizeof(t->data) - t->len, fmt, ap);
	va_end(ap);
	CHECK(n >= 0 && (size_t)n < sizeof(t->data) - t->len);
	t->len += (size_t)n;
}

/* A string, double-quoted: it may hold any printable ASCII. */
static void add_quoted(struct text *t, const char *s)
{
	text_add(t, "\"");
	for (; *s; s++)
		text_add(t, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
	text_add(t, "\"");
}

static void write_desc(struct text *t, const struct kerf_mig_node_desc *d)
{
	const struct kerf_mig_model *m = d->node.model;
	bool first = true;

	if (d->name[0]) {
		text_add(t, "node: ");
		add_quoted(t, d->name);
		text_add(t, "\n");
	}
	text_add(t, "model: ");
	add_quoted(t, m->name);
	text_add(t, "\ngpus:\n");
	for (unsigned g = 0; g < d->node.nr_gpus; g++) {
		const struct kerf_mig_layout *l = &d->node.gpus[g];

		text_add(t, "  - instances:%s\n", l->nr ? "" : " []");
		for (unsigned i = 0; i < l->nr; i++) {
			text_add(t, "      - {profile: ");
			add_quoted(t, m->profiles[l->inst[i].profile].name);
			text_add(t, ", start: %u, in_use: %s}\n",
				 (unsigned)l->inst[i].start,
				 l->inst[i].in_use ? "true" : "false");
		}
	}
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		if (d->want[p] == 0)
			continue;
		if (first)
			text_add(t, "demand:\n");
		first = false;
		text_add(t, "  ");
		add_quoted(t, m->profiles[p].name);
		text_add(t, ": %u\n", (unsigned)d->want[p]);
	}
}

/* ---- checks --------------------------------------------------------- */

static bool is_name(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static bool same_inst(const struct kerf_mig_instance *a,
		      const struct kerf_mig_instance *b)
{
	return a->profile == b->profile && a->start == b->start &&
	       a->in_use == b->in_use;
}

static bool same_layout_ordered(const struct kerf_mig_layout *a,
				const struct kerf_mig_layout *b)
{
	if (a->nr != b->nr)
		return false;
	for (unsigned i = 0; i < a->nr; i++)
		if (!same_inst(&a->inst[i], &b->inst[i]))
			return false;
	return true;
}

/* The same instances in any order (a legal layout has one per start). */
static bool same_layout_set(const struct kerf_mig_layout *a,
			    const struct kerf_mig_layout *b)
{
	if (a->nr != b->nr)
		return false;
	for (unsigned i = 0; i < a->nr; i++) {
		bool found = false;

		for (unsigned j = 0; j < b->nr && !found; j++)
			found = same_inst(&a->inst[i], &b->inst[j]);
		if (!found)
			return false;
	}
	return true;
}

static void check_layout(const struct kerf_mig_model *m,
			 const struct kerf_mig_layout *l)
{
	struct kerf_err err = { 0 };
	int rc;

	CHECK(l->nr <= KERF_MIG_MAX_INSTANCES);
	for (unsigned i = 0; i < l->nr; i++) {
		CHECK(l->inst[i].profile < m->nr_profiles);
		CHECK(l->inst[i].start < m->mem_slices);
	}
	rc = kerf_mig_layout_check(m, l, &err);
	CHECK_MSG(rc == 0, err.msg);
}

static void check_parsed(const struct kerf_mig_node_desc *d)
{
	const struct kerf_mig_model *m = d->node.model;
	size_t nr = 0;
	const struct kerf_mig_model *models = kerf_mig_models(&nr);

	CHECK(m != NULL && m >= models && m < models + nr);
	CHECK(m->nr_profiles <= KERF_MIG_MAX_PROFILES);
	CHECK(d->name[0] == '\0' || is_name(d->name, KERF_MIG_NODE_NAME_MAX - 1));
	CHECK(d->node.nr_gpus >= 1 && d->node.nr_gpus <= KERF_MIG_MAX_GPUS);
	for (unsigned g = 0; g < d->node.nr_gpus; g++)
		check_layout(m, &d->node.gpus[g]);
	for (unsigned g = d->node.nr_gpus; g < KERF_MIG_MAX_GPUS; g++)
		CHECK(d->node.gpus[g].nr == 0);
	for (unsigned p = 0; p < KERF_MIG_MAX_PROFILES; p++)
		CHECK(p < m->nr_profiles ? d->want[p] <= KERF_MIG_NODE_MAX_DEMAND
					 : d->want[p] == 0);
}

static void check_roundtrip(const struct kerf_mig_node_desc *d)
{
	static struct text t;
	struct kerf_mig_node_desc back;
	struct kerf_err err = { 0 };
	int rc;

	t.len = 0;
	t.data[0] = '\0';
	write_desc(&t, d);
	rc = kerf_mig_node_parse(&back, roundtrip_path, t.data, t.len, &err);
	if (rc != 0)
		fprintf(stderr, "%.*s", (int)t.len, t.data);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(strcmp(back.name, d->name) == 0);
	CHECK(back.node.model == d->node.model);
	CHECK(back.node.nr_gpus == d->node.nr_gpus);
	for (unsigned g = 0; g < d->node.nr_gpus; g++)
		CHECK(same_layout_ordered(&back.node.gpus[g], &d->node.gpus[g]));
	CHECK(memcmp(back.want, d->want, sizeof(d->want)) == 0);
}

/* Free instances per profile over the node's GPUs. */
static void count_free(const struct kerf_mig_layout *gpus, unsigned nr,
		       unsigned *free_p)
{
	memset(free_p, 0, KERF_MIG_MAX_PROFILES * sizeof(*free_p));
	for (unsigned g = 0; g < nr; g++)
		for (unsigned i = 0; i < gpus[g].nr; i++)
			if (!gpus[g].inst[i].in_use)
				free_p[gpus[g].inst[i].profile]++;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

static void check_plan(const struct kerf_mig_node_desc *d)
{
	const struct kerf_mig_node *node = &d->node;
	const struct kerf_mig_model *m = node->model;
	static struct kerf_mig_plan plan;
	static struct kerf_mig_node applied;
	struct kerf_err err = { 0 };
	unsigned free_before[KERF_MIG_MAX_PROFILES];
	unsigned free_after[KERF_MIG_MAX_PROFILES];
	unsigned long served_w = 0, before_w = 0;
	int32_t lost = 0;
	bool creating = false;
	int rc = kerf_mig_plan_node(node, d->want, &plan, &err);

	/* a description that decoded is always planned */
	CHECK_MSG(rc == 0, err.msg);
	CHECK(plan.nr_actions <= KERF_MIG_MAX_ACTIONS);
	for (unsigned g = 0; g < node->nr_gpus; g++)
		check_layout(m, &plan.after[g]);
	count_free(node->gpus, node->nr_gpus, free_before);
	count_free(plan.after, node->nr_gpus, free_after);
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		unsigned slices = m->profiles[p].compute_slices;

		CHECK(plan.served[p] + plan.unserved[p] == d->want[p]);
		CHECK(plan.served_before[p] == min_u(d->want[p], free_before[p]));
		CHECK(plan.served[p] == min_u(d->want[p], free_after[p]));
		served_w += (unsigned long)plan.served[p] * slices;
		before_w += (unsigned long)plan.served_before[p] * slices;
	}
	CHECK(served_w >= before_w);
	/* every instance in use is still there, still in use */
	for (unsigned g = 0; g < node->nr_gpus; g++)
		for (unsigned i = 0; i < node->gpus[g].nr; i++) {
			const struct kerf_mig_instance *in = &node->gpus[g].inst[i];
			bool kept = false;

			if (!in->in_use)
				continue;
			for (unsigned j = 0; j < plan.after[g].nr; j++)
				kept |= same_inst(in, &plan.after[g].inst[j]);
			CHECK(kept);
		}
	/* the actions, one by one: destroys first, legal at every step */
	applied = *node;
	for (size_t k = 0; k < plan.nr_actions; k++) {
		const struct kerf_mig_action *a = &plan.actions[k];

		CHECK(a->gpu < node->nr_gpus && a->profile < m->nr_profiles);
		CHECK(a->kind == KERF_MIG_DESTROY || a->kind == KERF_MIG_CREATE);
		if (a->kind == KERF_MIG_CREATE)
			creating = true;
		else
			CHECK(!creating);
		rc = kerf_mig_apply(&applied, a, &err);
		CHECK_MSG(rc == 0, err.msg);
		check_layout(m, &applied.gpus[a->gpu]);
	}
	for (unsigned g = 0; g < node->nr_gpus; g++) {
		CHECK(same_layout_set(&applied.gpus[g], &plan.after[g]));
		lost += kerf_mig_headroom(m, &node->gpus[g]) -
			kerf_mig_headroom(m, &plan.after[g]);
	}
	CHECK(lost == plan.headroom_lost);
}

static void check_failure(int rc, const struct kerf_err *err,
			  const struct kerf_mig_node_desc *d)
{
	static const struct kerf_mig_node_desc empty;

	fuzz_check_refusal(rc, err, input_path, true);
	CHECK(memcmp(d, &empty, sizeof(*d)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_mig_node_desc d;
	struct kerf_err err = { 0 };
	int rc = kerf_mig_node_parse(&d, input_path, (const char *)data, size,
				     &err);

	if (rc < 0) {
		check_failure(rc, &err, &d);
		return 0;
	}
	CHECK(rc == 0 && err.code == 0);
	check_parsed(&d);
	check_roundtrip(&d);
	check_plan(&d);
	return 0;
}
