/*
 * kerf plan-mig FILE [-o table|wide|json|yaml]: the MIG plan for a node description
 * (sim/mig_node.h): per GPU the layout before, the actions and the layout
 * after; per profile the demand served before and after; the headroom lost.
 *
 * Before printing, the plan is replayed action by action with
 * kerf_mig_apply on a copy of the node: a plan that would pass through an
 * illegal layout, touch an instance in use or not end in the layout it
 * promises is an error (exit 1), never shown as if it could be applied.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "cmd/output_alias.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "core/mig/geometry.h"
#include "core/mig/planner.h"
#include "sim/mig_node.h"

static const char prog[] = "kerf plan-mig";
static const char usage_line[] = "usage: kerf plan-mig FILE [-o table|wide|json|yaml]\n";

/* What the headroom figures count (kerf_mig_headroom), said wherever one
 * is printed: a bare "16 -> 0" explains nothing. */
static const char headroom_legend[] =
	"headroom: summed over the profiles, how many instances of each could\n"
	"still be created alone on the GPU, times its compute slices (0: nothing\n"
	"more fits); lost: the drop over all GPUs\n";

/* The instances of l sorted by start (the order nvidia-smi lists them). */
static void by_start(const struct kerf_mig_layout *l,
		     struct kerf_mig_instance *out)
{
	unsigned n = l->nr < KERF_MIG_MAX_INSTANCES ? l->nr
						    : KERF_MIG_MAX_INSTANCES;

	memcpy(out, l->inst, n * sizeof(*out));
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && out[j - 1].start > out[j].start; j--) {
			struct kerf_mig_instance t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
}

static bool has_instance(const struct kerf_mig_layout *l, unsigned profile,
			 unsigned start)
{
	for (unsigned i = 0; i < l->nr; i++)
		if (l->inst[i].profile == profile && l->inst[i].start == start)
			return true;
	return false;
}

/* Do a and b hold the same instances (profile, start, in use)? */
static bool same_layout(const struct kerf_mig_layout *a,
			const struct kerf_mig_layout *b)
{
	struct kerf_mig_instance x[KERF_MIG_MAX_INSTANCES];
	struct kerf_mig_instance y[KERF_MIG_MAX_INSTANCES];

	if (a->nr != b->nr)
		return false;
	by_start(a, x);
	by_start(b, y);
	for (unsigned i = 0; i < a->nr; i++)
		if (x[i].profile != y[i].profile || x[i].start != y[i].start ||
		    x[i].in_use != y[i].in_use)
			return false;
	return true;
}

/*
 * In-use instances the plan touches: destroyed by an action, or missing
 * from (or no longer in use in) the layout after.  0 by the planner's rule.
 */
static unsigned in_use_touched(const struct kerf_mig_node *node,
			       const struct kerf_mig_plan *plan)
{
	unsigned touched = 0;

	for (unsigned g = 0; g < node->nr_gpus; g++)
		for (unsigned i = 0; i < node->gpus[g].nr; i++) {
			const struct kerf_mig_instance *in = &node->gpus[g].inst[i];
			const struct kerf_mig_layout *after = &plan->after[g];
			bool kept = false;

			if (!in->in_use)
				continue;
			for (size_t k = 0; k < plan->nr_actions; k++) {
				const struct kerf_mig_action *a = &plan->actions[k];

				if (a->kind == KERF_MIG_DESTROY && a->gpu == g &&
				    a->profile == in->profile && a->start == in->start)
					touched++;
			}
			for (unsigned j = 0; j < after->nr; j++)
				if (after->inst[j].profile == in->profile &&
				    after->inst[j].start == in->start &&
				    after->inst[j].in_use)
					kept = true;
			touched += !kept;
		}
	return touched;
}

/*
 * Apply the plan's actions one by one to a copy of the node; each must be
 * legal and the result must be the plan's layout after.
 */
static int replay_plan(const struct kerf_mig_node *node,
		       const struct kerf_mig_plan *plan, struct kerf_err *err)
{
	struct kerf_mig_node *copy = malloc(sizeof(*copy));
	int rc = 0;

	if (!copy)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	*copy = *node;
	for (size_t k = 0; rc == 0 && k < plan->nr_actions; k++) {
		rc = kerf_mig_apply(copy, &plan->actions[k], err);
		if (rc < 0) {
			char msg[KERF_ERR_MSG_MAX];

			memcpy(msg, err->msg, sizeof(msg));
			kerf_err_clear(err);
			rc = kerf_err_set(err, rc, "action %zu of the plan: %s",
					  k + 1, msg);
		}
	}
	for (unsigned g = 0; rc == 0 && g < node->nr_gpus; g++)
		if (!same_layout(&copy->gpus[g], &plan->after[g]))
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "gpu %u: the actions do not lead to the layout the plan gives",
					  g);
	free(copy);
	return rc;
}

struct totals {
	unsigned wanted;
	unsigned served;
	unsigned touched;
};

static struct totals totals_of(const struct kerf_mig_node_desc *d,
			       const struct kerf_mig_plan *plan)
{
	struct totals t = { 0, 0, 0 };

	for (unsigned p = 0; p < d->node.model->nr_profiles; p++) {
		t.wanted += d->want[p];
		t.served += plan->served[p];
	}
	t.touched = in_use_touched(&d->node, plan);
	return t;
}

/* ---- text ----------------------------------------------------------- */

static void print_layout(const struct kerf_mig_model *m, const char *label,
			 const struct kerf_mig_layout *l,
			 const struct kerf_mig_layout *before)
{
	struct kerf_mig_instance s[KERF_MIG_MAX_INSTANCES];

	by_start(l, s);
	printf("  %-8s ", label);
	if (l->nr == 0)
		printf("(no instances)");
	for (unsigned i = 0; i < l->nr; i++) {
		printf("%s%s@%u", i ? ", " : "", m->profiles[s[i].profile].name,
		       (unsigned)s[i].start);
		if (s[i].in_use)
			printf(" (in use)");
		else if (before && !has_instance(before, s[i].profile, s[i].start))
			printf(" (new)");
	}
	printf("\n");
}

/*
 * wide: per profile, how many instances could still be created alone on
 * layout l (the terms of kerf_mig_headroom, before their weights).
 */
static void print_room(const struct kerf_mig_model *m, const char *label,
		       const struct kerf_mig_layout *l)
{
	printf("  %-8s", label);
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		struct kerf_mig_layout t = *l;
		unsigned n = 0;

		for (unsigned s = 0; s < m->mem_slices; s++)
			if (kerf_mig_can_add(m, &t, p, s)) {
				t.inst[t.nr++] = (struct kerf_mig_instance){
					.profile = (uint8_t)p, .start = (uint8_t)s };
				n++;
			}
		printf("%s %s x%u", p ? "," : "", m->profiles[p].name, n);
	}
	printf("\n");
}

static void print_text(const char *path, const struct kerf_mig_node_desc *d,
		       const struct kerf_mig_plan *plan, bool wide)
{
	const struct kerf_mig_node *node = &d->node;
	const struct kerf_mig_model *m = node->model;
	struct totals t = totals_of(d, plan);
	bool any_want = false;
	char shown[160];

	printf("node %s: %s, %u GPU%s (%s)\n", d->name[0] ? d->name : "(unnamed)",
	       m->name, (unsigned)node->nr_gpus, node->nr_gpus == 1 ? "" : "s",
	       kerf_escape(shown, sizeof(shown), path));
	for (unsigned g = 0; g < node->nr_gpus; g++) {
		unsigned n = 0;

		printf("\ngpu %u\n", g);
		print_layout(m, "before", &node->gpus[g], NULL);
		for (size_t k = 0; k < plan->nr_actions; k++) {
			const struct kerf_mig_action *a = &plan->actions[k];

			if (a->gpu != g)
				continue;
			printf("  %-8s %s@%u\n",
			       a->kind == KERF_MIG_DESTROY ? "destroy" : "create",
			       m->profiles[a->profile].name, (unsigned)a->start);
			n++;
		}
		if (n == 0)
			printf("  %-8s\n", "no change");
		print_layout(m, "after", &plan->after[g], &node->gpus[g]);
		printf("  %-8s %d -> %d compute slices\n", "headroom",
		       (int)kerf_mig_headroom(m, &node->gpus[g]),
		       (int)kerf_mig_headroom(m, &plan->after[g]));
		if (wide) {
			print_room(m, "room now", &node->gpus[g]);
			print_room(m, "room new", &plan->after[g]);
		}
	}
	printf("\n%-12s %6s %14s %13s %9s\n", "profile", "wanted",
	       "served before", "served after", "unserved");
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		if (d->want[p] == 0)
			continue;
		any_want = true;
		printf("%-12s %6u %14u %13u %9u\n", m->profiles[p].name,
		       (unsigned)d->want[p], (unsigned)plan->served_before[p],
		       (unsigned)plan->served[p], (unsigned)plan->unserved[p]);
	}
	if (!any_want)
		printf("(no demand)\n");
	printf("\nheadroom lost: %d compute slices\n", (int)plan->headroom_lost);
	printf("%zu action%s, %u of %u instance%s served, %u in-use instance%s touched\n",
	       plan->nr_actions, plan->nr_actions == 1 ? "" : "s", t.served,
	       t.wanted, t.wanted == 1 ? "" : "s", t.touched,
	       t.touched == 1 ? "" : "s");
	printf("\n%s", headroom_legend);
	if (wide)
		printf("room: per profile, the instances that could still be created alone\n");
}

/* ---- JSON ----------------------------------------------------------- */

static json_t *json_layout(const struct kerf_mig_model *m,
			   const struct kerf_mig_layout *l)
{
	struct kerf_mig_instance s[KERF_MIG_MAX_INSTANCES];
	json_t *a = json_array();

	by_start(l, s);
	for (unsigned i = 0; a && i < l->nr; i++) {
		json_t *x = json_object();

		json_object_set_new(x, "profile",
				    json_string(m->profiles[s[i].profile].name));
		json_object_set_new(x, "start", json_integer(s[i].start));
		json_object_set_new(x, "inUse", json_boolean(s[i].in_use));
		json_array_append_new(a, x);
	}
	return a;
}

static json_t *json_gpu(const struct kerf_mig_node *node,
			const struct kerf_mig_plan *plan, unsigned g)
{
	const struct kerf_mig_model *m = node->model;
	json_t *o = json_object(), *acts = json_array();

	for (size_t k = 0; acts && k < plan->nr_actions; k++) {
		const struct kerf_mig_action *a = &plan->actions[k];
		json_t *x;

		if (a->gpu != g)
			continue;
		x = json_object();
		json_object_set_new(x, "action",
				    json_string(a->kind == KERF_MIG_DESTROY
							? "destroy"
							: "create"));
		json_object_set_new(x, "profile",
				    json_string(m->profiles[a->profile].name));
		json_object_set_new(x, "start", json_integer(a->start));
		json_array_append_new(acts, x);
	}
	json_object_set_new(o, "gpu", json_integer(g));
	json_object_set_new(o, "before", json_layout(m, &node->gpus[g]));
	json_object_set_new(o, "actions", acts);
	json_object_set_new(o, "after", json_layout(m, &plan->after[g]));
	json_object_set_new(o, "headroomBefore",
			    json_integer(kerf_mig_headroom(m, &node->gpus[g])));
	json_object_set_new(o, "headroomAfter",
			    json_integer(kerf_mig_headroom(m, &plan->after[g])));
	return o;
}

static int print_doc(const struct kerf_mig_node_desc *d,
		     const struct kerf_mig_plan *plan, enum kerf_cli_output fmt)
{
	const struct kerf_mig_node *node = &d->node;
	const struct kerf_mig_model *m = node->model;
	struct totals t = totals_of(d, plan);
	json_t *o = kerf_cli_doc("MigPlan"), *gpus = json_array(), *profiles = json_array();

	if (!o || !gpus || !profiles) {
		json_decref(o);
		json_decref(gpus);
		json_decref(profiles);
		return kerf_cli_emit(prog, NULL, fmt);
	}
	for (unsigned g = 0; g < node->nr_gpus; g++)
		json_array_append_new(gpus, json_gpu(node, plan, g));
	for (unsigned p = 0; p < m->nr_profiles; p++) {
		json_t *x;

		if (d->want[p] == 0)
			continue;
		x = json_object();
		json_object_set_new(x, "profile", json_string(m->profiles[p].name));
		json_object_set_new(x, "wanted", json_integer(d->want[p]));
		json_object_set_new(x, "servedBefore",
				    json_integer(plan->served_before[p]));
		json_object_set_new(x, "servedAfter", json_integer(plan->served[p]));
		json_object_set_new(x, "unserved", json_integer(plan->unserved[p]));
		json_array_append_new(profiles, x);
	}
	json_object_set_new(o, "node", d->name[0] ? json_string(d->name)
						  : json_null());
	json_object_set_new(o, "model", json_string(m->name));
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "profiles", profiles);
	json_object_set_new(o, "headroomLost", json_integer(plan->headroom_lost));
	json_object_set_new(o, "actions", json_integer((json_int_t)plan->nr_actions));
	json_object_set_new(o, "wanted", json_integer(t.wanted));
	json_object_set_new(o, "served", json_integer(t.served));
	json_object_set_new(o, "inUseTouched", json_integer(t.touched));
	return kerf_cli_emit(prog, o, fmt);
}

/* ---- the command ---------------------------------------------------- */

const struct option kerf_plan_mig_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_plan_mig(int argc, char **argv)
{
	struct kerf_mig_node_desc *d;
	struct kerf_mig_plan *plan;
	struct kerf_err err = { 0 };
	const char *path;
	char shown[160];
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *oarg = NULL;
	bool json = false;
	int c, status = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", kerf_plan_mig_longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'o':
			if (kerf_cli_output(prog, optarg, &fmt))
				return 2;
			oarg = optarg;
			break;
		case 'h':
			printf("%s", usage_line);
			printf("\nthe MIG plan for a node description (examples/mig/*.yaml):\n"
			       "per GPU the instances before, the destroys and creates, the\n"
			       "instances after; per profile the demand served; the headroom lost.\n\n"
			       "%s\n"
			       "  -o, --output FMT   table (default), wide (per GPU and profile, the\n"
			       "                     instances that could still be created), json or\n"
			       "                     yaml (one MigPlan document, docs/schema/MigPlan.json)\n"
			       "  --json             the same as -o json\n"
			       "exit status: 0 planned, 1 the file or the plan is wrong, 2 usage\n",
			       headroom_legend);
			return 0;
		default:
			kerf_opt_error("kerf plan-mig", c, argv);
			fprintf(stderr, "%s", usage_line);
			return 2;
		}
	}
	if (optind < argc - 1) {
		kerf_opt_unexpected("kerf plan-mig", argv[optind + 1], NULL);
		return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s", usage_line);
		return 2;
	}
	if (kerf_cli_json_alias(prog, json, oarg, &fmt) != 0)
		return 2;
	path = argv[optind];
	kerf_escape(shown, sizeof(shown), path);
	d = malloc(sizeof(*d));
	plan = malloc(sizeof(*plan));
	if (!d || !plan) {
		free(d);
		free(plan);
		fprintf(stderr, "kerf plan-mig: out of memory\n");
		return 1;
	}
	if (kerf_mig_node_load(d, path, &err) < 0) {
		fprintf(stderr, "kerf plan-mig: %s\n", err.msg);
		status = 1;
	} else if (kerf_mig_plan_node(&d->node, d->want, plan, &err) < 0) {
		fprintf(stderr, "kerf plan-mig: %s: %s\n", shown, err.msg);
		status = 1;
	} else if (replay_plan(&d->node, plan, &err) < 0 ||
		   in_use_touched(&d->node, plan) != 0) {
		fprintf(stderr, "kerf plan-mig: %s: the planner's plan is wrong: %s\n",
			shown, err.msg[0] ? err.msg : "it touches an instance in use");
		status = 1;
	} else if (kerf_cli_output_is_doc(fmt)) {
		status = print_doc(d, plan, fmt);
	} else {
		print_text(path, d, plan, fmt == KERF_OUT_WIDE);
	}
	free(d);
	free(plan);
	return status;
}
