/*
 * Unit tests for sim/mig_node, the reader of MIG node descriptions: a
 * complete description decoded (name, model by alias, instances in order,
 * in_use kept and defaulted, demand per profile), the two examples in
 * examples/mig/ loaded and planned, an instance in use kept by the plan,
 * and one case per rejection rule with its "file:line: field: reason"
 * message and the description left all zero.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/mig/geometry.h"
#include "core/mig/planner.h"
#include "sim/mig_node.h"

static const struct kerf_mig_node_desc empty_desc;

static void assert_empty(const struct kerf_mig_node_desc *d)
{
	assert_memory_equal(d, &empty_desc, sizeof(*d));
}

static int parse(struct kerf_mig_node_desc *d, const char *yaml,
		 struct kerf_err *err)
{
	return kerf_mig_node_parse(d, "n.yaml", yaml, strlen(yaml), err);
}

/* Parse, which must succeed, printing the message if it does not. */
static void parse_ok(struct kerf_mig_node_desc *d, const char *yaml)
{
	struct kerf_err err = { 0 };
	int rc = parse(d, yaml, &err);

	if (rc != 0)
		print_error("unexpected error: %s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(err.code, 0);
}

static int profile(const struct kerf_mig_model *m, const char *name)
{
	int p = kerf_mig_profile_find(m, name);

	assert_true(p >= 0);
	return p;
}

static const char good_yaml[] =
	"node: gpu-a100-7            # a name for the report\n"
	"model: a100-sxm4-40gb       # an alias, without case\n"
	"gpus:\n"
	"  - instances:\n"
	"      - {profile: 3g.20gb, start: 0, in_use: true}\n"
	"      - {profile: 1g.5gb, start: 4}\n"
	"      - profile: \"1g.5gb\"\n"
	"        start: +5\n"
	"        in_use: false\n"
	"  - instances: []\n"
	"  - instances:\n"
	"      - {profile: 7g.40gb, start: 0, in_use: true}\n"
	"demand:\n"
	"  1g.5gb: 3\n"
	"  3g.20gb: 1\n"
	"  7g.40gb: 0\n";

static void test_good(void **state)
{
	const struct kerf_mig_model *a100 = kerf_mig_model_find("A100-40GB");
	struct kerf_mig_node_desc d;
	const struct kerf_mig_layout *g0;

	(void)state;
	assert_non_null(a100);
	parse_ok(&d, good_yaml);
	assert_string_equal(d.name, "gpu-a100-7");
	assert_ptr_equal(d.node.model, a100);
	assert_int_equal(d.node.nr_gpus, 3);
	g0 = &d.node.gpus[0];
	assert_int_equal(g0->nr, 3);
	assert_int_equal(g0->inst[0].profile, profile(a100, "3g.20gb"));
	assert_int_equal(g0->inst[0].start, 0);
	assert_true(g0->inst[0].in_use);
	assert_int_equal(g0->inst[1].profile, profile(a100, "1g.5gb"));
	assert_int_equal(g0->inst[1].start, 4);
	assert_false(g0->inst[1].in_use);
	assert_int_equal(g0->inst[2].profile, profile(a100, "1g.5gb"));
	assert_int_equal(g0->inst[2].start, 5);
	assert_false(g0->inst[2].in_use);
	assert_int_equal(d.node.gpus[1].nr, 0);
	assert_int_equal(d.node.gpus[2].nr, 1);
	assert_true(d.node.gpus[2].inst[0].in_use);
	for (int p = 0; p < KERF_MIG_MAX_PROFILES; p++) {
		int want = p == profile(a100, "1g.5gb")	   ? 3
			   : p == profile(a100, "3g.20gb") ? 1
							   : 0;

		assert_int_equal(d.want[p], want);
	}
}

/* No name, no demand: both left empty. */
static void test_minimal(void **state)
{
	struct kerf_mig_node_desc d;

	(void)state;
	parse_ok(&d, "model: H100-80GB\ngpus: [ {instances: []} ]\n");
	assert_string_equal(d.name, "");
	assert_ptr_equal(d.node.model, kerf_mig_model_find("H100-80GB"));
	assert_int_equal(d.node.nr_gpus, 1);
	assert_int_equal(d.node.gpus[0].nr, 0);
	for (int p = 0; p < KERF_MIG_MAX_PROFILES; p++)
		assert_int_equal(d.want[p], 0);
}

/* The bounds themselves are accepted. */
static void test_bounds(void **state)
{
	char yaml[4096];
	size_t used;
	struct kerf_mig_node_desc d;

	(void)state;
	used = (size_t)snprintf(yaml, sizeof(yaml), "model: A100-40GB\ngpus:\n");
	for (int g = 0; g < KERF_MIG_MAX_GPUS; g++)
		used += (size_t)snprintf(yaml + used, sizeof(yaml) - used,
					 "  - instances: []\n");
	snprintf(yaml + used, sizeof(yaml) - used, "demand: {1g.5gb: 1000}\n");
	parse_ok(&d, yaml);
	assert_int_equal(d.node.nr_gpus, KERF_MIG_MAX_GPUS);
	assert_int_equal(d.want[profile(d.node.model, "1g.5gb")], 1000);
	/* seven 1g.5gb: as many as the GPU holds; start 6 is the last */
	parse_ok(&d, "model: A100-40GB\ngpus:\n  - instances: [\n"
		     "    {profile: 1g.5gb, start: 0}, {profile: 1g.5gb, start: 1},\n"
		     "    {profile: 1g.5gb, start: 2}, {profile: 1g.5gb, start: 3},\n"
		     "    {profile: 1g.5gb, start: 4}, {profile: 1g.5gb, start: 5},\n"
		     "    {profile: 1g.5gb, start: 6}]\n");
	assert_int_equal(d.node.gpus[0].nr, 7);
	assert_int_equal(d.node.gpus[0].inst[6].start, 6);
}

/*
 * An instance in use keeps in_use through the reader, and the plan keeps
 * it although the demand would rather have its slices.
 */
static void test_in_use_kept(void **state)
{
	struct kerf_mig_node_desc d;
	struct kerf_mig_plan plan;
	struct kerf_err err = { 0 };
	const struct kerf_mig_layout *after;
	bool kept = false;

	(void)state;
	parse_ok(&d, "model: A100-40GB\n"
		     "gpus:\n"
		     "  - instances:\n"
		     "      - {profile: 1g.5gb, start: 0, in_use: true}\n"
		     "demand:\n"
		     "  7g.40gb: 1\n"
		     "  1g.5gb: 1\n");
	assert_true(d.node.gpus[0].inst[0].in_use);
	assert_int_equal(kerf_mig_plan_node(&d.node, d.want, &plan, &err), 0);
	after = &plan.after[0];
	for (unsigned i = 0; i < after->nr; i++)
		if (after->inst[i].start == 0 &&
		    after->inst[i].profile == profile(d.node.model, "1g.5gb") &&
		    after->inst[i].in_use)
			kept = true;
	assert_true(kept);
	for (size_t k = 0; k < plan.nr_actions; k++)
		assert_false(plan.actions[k].kind == KERF_MIG_DESTROY &&
			     plan.actions[k].start == 0);
	/* the 7g cannot be made beside it; the instance in use serves no one */
	assert_int_equal(plan.unserved[profile(d.node.model, "7g.40gb")], 1);
}

static void load_example(const char *name, struct kerf_mig_node_desc *d)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char path[4096];
	struct kerf_mig_plan plan;
	struct kerf_err err = { 0 };
	int rc;

	if (!root)
		skip();
	snprintf(path, sizeof(path), "%s/examples/mig/%s", root, name);
	rc = kerf_mig_node_load(d, path, &err);
	if (rc != 0)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	rc = kerf_mig_plan_node(&d->node, d->want, &plan, &err);
	if (rc != 0)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
}

static void test_examples(void **state)
{
	struct kerf_mig_node_desc d;

	(void)state;
	load_example("a100-mixed.yaml", &d);
	assert_string_equal(d.name, "gpu-a100-7");
	assert_ptr_equal(d.node.model, kerf_mig_model_find("A100-40GB"));
	assert_int_equal(d.node.nr_gpus, 2);
	assert_true(d.node.gpus[0].inst[0].in_use);
	load_example("h100-empty.yaml", &d);
	assert_ptr_equal(d.node.model, kerf_mig_model_find("H100-80GB"));
	assert_int_equal(d.node.nr_gpus, 4);
}

static void test_load(void **state)
{
	struct kerf_mig_node_desc d;
	struct kerf_err err = { 0 };

	(void)state;
	assert_true(kerf_mig_node_load(&d, "/nonexistent/n.yaml", &err) < 0);
	assert_non_null(strstr(err.msg, "/nonexistent/n.yaml"));
	assert_empty(&d);
}

/* ---- rejections ------------------------------------------------------ */

struct reject {
	const char *rule;
	const char *yaml;
	const char *msg;        /* the whole message, or its start ... */
	const char *contains;   /* ... and this further on, when not NULL */
};

/* model on line 1, gpus on 2, the first GPU's entry on 3 */
#define M1 "model: A100-40GB\ngpus:\n"
/* one GPU with the instance given in flow style on line 4 */
#define INST(fields) M1 "  - instances:\n      - { " fields " }\n"
/* one empty GPU, then a demand mapping from line 4 on */
#define DEMAND(lines) M1 "  - instances: []\ndemand:\n" lines

#define GPUS_17                                                          \
	"  - instances: []\n  - instances: []\n  - instances: []\n"       \
	"  - instances: []\n  - instances: []\n  - instances: []\n"       \
	"  - instances: []\n  - instances: []\n  - instances: []\n"       \
	"  - instances: []\n  - instances: []\n  - instances: []\n"       \
	"  - instances: []\n  - instances: []\n  - instances: []\n"       \
	"  - instances: []\n  - instances: []\n"

/* clang-format off */
static const struct reject rejects[] = {
	{ "document is empty", "", "n.yaml:1: the node description is empty", NULL },
	{ "document is a comment", "# nothing\n",
	  "n.yaml:1: the node description is empty", NULL },
	{ "document is not a mapping", "- a\n- b\n",
	  "n.yaml:1: a node description must be a mapping", NULL },
	{ "yaml syntax", M1 "  - instances: [ {profile: 1g.5gb\n",
	  "n.yaml:", ": yaml: " },
	{ "yaml alias bomb",
	  "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
	  "n.yaml:5: yaml: more than 100000 nodes (aliases count as what they name)", NULL },

	/* keys */
	{ "unknown top-level key", M1 "  - instances: []\nnodes: 3\n",
	  "n.yaml:4: nodes: unknown key (known: node, model, gpus, demand)", NULL },
	{ "unknown key with ESC and a newline, escaped", M1 "  - instances: []\n\"\\e[2J\\nforged: 1\": 2\n",
	  "n.yaml:4: \\x1b[2J\\x0aforged: 1: unknown key (known: node, model, gpus, demand)", NULL },
	{ "unknown key of a GPU", M1 "  - instances: []\n    mig: true\n",
	  "n.yaml:4: gpus[0].mig: unknown key (known: instances)", NULL },
	{ "unknown key of an instance", INST("profile: 1g.5gb, start: 0, used: true"),
	  "n.yaml:4: gpus[0].instances[0].used: unknown key (known: profile, start, in_use)", NULL },
	{ "top-level key given twice", M1 "  - instances: []\nmodel: H100-80GB\n",
	  "n.yaml:4: model: given twice", NULL },
	{ "instance key given twice", INST("profile: 1g.5gb, start: 0, start: 1"),
	  "n.yaml:4: gpus[0].instances[0].start: given twice", NULL },
	{ "model missing", "gpus: [ {instances: []} ]\n", "n.yaml:1: model: missing", NULL },
	{ "gpus missing", "model: A100-40GB\n", "n.yaml:1: gpus: missing", NULL },
	{ "instances missing", M1 "  - {}\n", "n.yaml:3: gpus[0].instances: missing", NULL },
	{ "profile missing", INST("start: 0"),
	  "n.yaml:4: gpus[0].instances[0].profile: missing", NULL },
	{ "start missing", INST("profile: 1g.5gb"),
	  "n.yaml:4: gpus[0].instances[0].start: missing", NULL },

	/* the model and profiles */
	{ "unknown model", "model: Z100\ngpus: [ {instances: []} ]\n",
	  "n.yaml:1: model: unknown GPU model 'Z100' (known: A30-24GB, A100-40GB, ", NULL },
	{ "model not a name", "model: [A100-40GB]\ngpus: [ {instances: []} ]\n",
	  "n.yaml:1: model: must be a GPU model name", NULL },
	{ "model null", "model:\ngpus: [ {instances: []} ]\n",
	  "n.yaml:1: model: must be a GPU model name", NULL },
	{ "unknown profile", INST("profile: 1g.10gbx, start: 0"),
	  "n.yaml:4: gpus[0].instances[0].profile: A100-40GB has no profile '1g.10gbx' (profiles: 1g.5gb, 1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb)", NULL },
	{ "profile of another model", INST("profile: 1g.10gb+me, start: 0"),
	  "n.yaml:4: gpus[0].instances[0].profile: A100-40GB has no profile '1g.10gb+me' (profiles: ", NULL },
	{ "profile not a scalar", INST("profile: [1g.5gb], start: 0"),
	  "n.yaml:4: gpus[0].instances[0].profile: must be a profile of A100-40GB (1g.5gb, ", NULL },
	{ "unknown profile in demand", DEMAND("  1g.5gb: 1\n  2g.20gb: 1\n"),
	  "n.yaml:6: demand.2g.20gb: A100-40GB has no profile '2g.20gb' (profiles: 1g.5gb, ", NULL },
	{ "unprintable profile shown safely", DEMAND("  \"1g\\t5gb\": 1\n"),
	  "n.yaml:5: demand.1g\\x095gb: A100-40GB has no profile '1g\\x095gb' (profiles: ", NULL },

	/* numbers */
	{ "start not an integer", INST("profile: 1g.5gb, start: one"),
	  "n.yaml:4: gpus[0].instances[0].start: must be an integer from 0 to 7", NULL },
	{ "start a fraction", INST("profile: 1g.5gb, start: 1.5"),
	  "n.yaml:4: gpus[0].instances[0].start: must be an integer from 0 to 7", NULL },
	{ "start quoted", INST("profile: 1g.5gb, start: \"1\""),
	  "n.yaml:4: gpus[0].instances[0].start: must be an integer from 0 to 7", NULL },
	{ "start empty", INST("profile: 1g.5gb, start: "),
	  "n.yaml:4: gpus[0].instances[0].start: must be an integer from 0 to 7", NULL },
	{ "start a sign alone", INST("profile: 1g.5gb, start: +"),
	  "n.yaml:4: gpus[0].instances[0].start: must be an integer from 0 to 7", NULL },
	{ "start negative", INST("profile: 1g.5gb, start: -1"),
	  "n.yaml:4: gpus[0].instances[0].start: must not be negative (an integer from 0 to 7)", NULL },
	{ "start out of range", INST("profile: 1g.5gb, start: 8"),
	  "n.yaml:4: gpus[0].instances[0].start: must be at most 7 (A100-40GB has 8 memory slices)", NULL },
	{ "start far out of range", INST("profile: 1g.5gb, start: 99999999999999999999999"),
	  "n.yaml:4: gpus[0].instances[0].start: must be at most 7 (A100-40GB has 8 memory slices)", NULL },
	{ "start out of range on A30",
	  "model: A30\ngpus:\n  - instances:\n      - { profile: 1g.6gb, start: 4 }\n",
	  "n.yaml:4: gpus[0].instances[0].start: must be at most 3 (A30-24GB has 4 memory slices)", NULL },
	{ "count negative", DEMAND("  1g.5gb: -1\n"),
	  "n.yaml:5: demand.1g.5gb: must not be negative (an integer from 0 to 1000)", NULL },
	{ "count too large", DEMAND("  1g.5gb: 1001\n"),
	  "n.yaml:5: demand.1g.5gb: must be at most 1000", NULL },
	{ "count not an integer", DEMAND("  1g.5gb: many\n"),
	  "n.yaml:5: demand.1g.5gb: must be an integer from 0 to 1000", NULL },
	{ "count null", DEMAND("  1g.5gb:\n"),
	  "n.yaml:5: demand.1g.5gb: must be an integer from 0 to 1000", NULL },
	{ "demand key given twice", DEMAND("  1g.5gb: 1\n  3g.20gb: 1\n  1g.5gb: 2\n"),
	  "n.yaml:7: demand.1g.5gb: given twice", NULL },

	/* kinds */
	{ "gpus a mapping", "model: A100-40GB\ngpus: {instances: []}\n",
	  "n.yaml:2: gpus: must be a list of 1 to 16 GPUs", NULL },
	{ "gpus empty", "model: A100-40GB\ngpus: []\n",
	  "n.yaml:2: gpus: must be a list of 1 to 16 GPUs", NULL },
	{ "gpu not a mapping", M1 "  - [ ]\n", "n.yaml:3: gpus[0]: must be a mapping", NULL },
	{ "instances a scalar", M1 "  - instances: none\n",
	  "n.yaml:3: gpus[0].instances: must be a list of instances ([] for none)", NULL },
	{ "instances null", M1 "  - instances:\n",
	  "n.yaml:3: gpus[0].instances: must be a list of instances ([] for none)", NULL },
	{ "instance a list", M1 "  - instances:\n      - [1g.5gb, 0]\n",
	  "n.yaml:4: gpus[0].instances[0]: must be a mapping", NULL },
	{ "in_use not a bool", INST("profile: 1g.5gb, start: 0, in_use: yes"),
	  "n.yaml:4: gpus[0].instances[0].in_use: must be true or false", NULL },
	{ "in_use quoted", INST("profile: 1g.5gb, start: 0, in_use: \"true\""),
	  "n.yaml:4: gpus[0].instances[0].in_use: must be true or false", NULL },
	{ "demand a list", M1 "  - instances: []\ndemand: [1g.5gb]\n",
	  "n.yaml:4: demand: must be a mapping from profile to count", NULL },
	{ "node name with a space", "node: a b\n" M1 "  - instances: []\n",
	  "n.yaml:1: node: byte 0x20 is not allowed in a name", NULL },
	{ "node name too long",
	  "node: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
	  M1 "  - instances: []\n",
	  "n.yaml:1: node: must be a name of 1 to 63 bytes", NULL },

	/* sizes */
	{ "too many GPUs", M1 GPUS_17,
	  "n.yaml:3: gpus: at most 16 GPUs on a node, not 17", NULL },
	{ "too many instances", M1 "  - instances: [\n"
	  "    {profile: 1g.5gb, start: 0}, {profile: 1g.5gb, start: 1},\n"
	  "    {profile: 1g.5gb, start: 2}, {profile: 1g.5gb, start: 3},\n"
	  "    {profile: 1g.5gb, start: 4}, {profile: 1g.5gb, start: 5},\n"
	  "    {profile: 1g.5gb, start: 6}, {profile: 1g.5gb, start: 7},\n"
	  "    {profile: 1g.5gb, start: 0}]\n",
	  "n.yaml:3: gpus[0].instances: at most 8 instances on one GPU, not 9", NULL },

	/* layouts (the reasons are kerf_mig_layout_check's) */
	{ "overlap", M1 "  - instances: []\n  - instances:\n"
	  "      - {profile: 3g.20gb, start: 0, in_use: true}\n"
	  "      - {profile: 1g.5gb, start: 2}\n",
	  "n.yaml:4: gpus[1]: instance 1 ", "overlap" },
	{ "start not a placement of the profile", INST("profile: 3g.20gb, start: 2"),
	  "n.yaml:3: gpus[0]: instance 0 ", "3g.20gb" },
	{ "more than max_instances", M1 "  - instances:\n"
	  "      - {profile: 1g.5gb+me, start: 0}\n"
	  "      - {profile: 1g.5gb+me, start: 1}\n",
	  "n.yaml:3: gpus[0]: instance 1 ", "1g.5gb+me" },
};
/* clang-format on */

static void test_reject(void **state)
{
	const struct reject *r = *state;
	struct kerf_mig_node_desc d;
	struct kerf_err err = { 0 };
	int rc = parse(&d, r->yaml, &err);

	if (rc == 0)
		print_error("accepted: %s\n", r->rule);
	assert_true(rc < 0);
	assert_int_equal(err.code, rc);
	if (strncmp(err.msg, r->msg, strlen(r->msg)) != 0 ||
	    (r->contains && !strstr(err.msg + strlen(r->msg), r->contains)))
		print_error("message: %s\nwanted:  %s%s%s\n", err.msg, r->msg,
			    r->contains ? "..." : "",
			    r->contains ? r->contains : "");
	assert_true(strncmp(err.msg, r->msg, strlen(r->msg)) == 0);
	if (r->contains)
		assert_non_null(strstr(err.msg + strlen(r->msg), r->contains));
	assert_empty(&d);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_in_use_kept),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_load),
	};
	enum { NR_FIXED = sizeof(fixed) / sizeof(fixed[0]),
	       NR_REJECTS = sizeof(rejects) / sizeof(rejects[0]) };
	struct CMUnitTest tests[NR_FIXED + NR_REJECTS];

	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < NR_REJECTS; i++)
		tests[NR_FIXED + i] = (struct CMUnitTest){
			.name = rejects[i].rule,
			.test_func = test_reject,
			.initial_state = (void *)&rejects[i],
		};
	return _cmocka_run_group_tests("mig_node", tests, NR_FIXED + NR_REJECTS,
				       NULL, NULL);
}
