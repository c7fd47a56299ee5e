/*
 * kerf agent mig: MIG actuation on this node's GPUs through NVML
 * (actuate/mig_actuate.h, docs/agent.md "MIG actuation").
 *
 *   kerf agent mig plan  (--want PROFILE=N[,..] | --assigned GPU:PROFILE@START[,..])
 *                        [--in-use GPU:PROFILE@START[,..]] [-o table|wide|json|yaml]
 *   kerf agent mig apply ... [--dry-run]
 *   kerf agent mig enable|disable --gpu N
 *
 * --want asks the core's planner for that many free instances per profile;
 * --assigned makes the named instances exist (what the pods' assigned-mig
 * annotations say).  --in-use names instances pods use (never destroyed);
 * instances with processes are in use too.  The plan, its NVML steps and,
 * for apply, what each step did and the layout after.  Exit 0 when every
 * step was done (or planned), 1 when one failed or NVML could not be
 * read, 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "actuate/mig_actuate.h"
#include "base/buf.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output.h"
#include "cmd/spec.h"
#include "nvml/nvml_load.h"

static const char prog[] = "kerf agent mig";
static const char usage_line[] =
	"usage: kerf agent mig plan|apply (--want PROFILE=N[,..] | --assigned GPU:PROFILE@START[,..])\n"
	"                      [--in-use GPU:PROFILE@START[,..]] [--dry-run]\n"
	"                      [-o table|wide|json|yaml] [--nvml-library PATH]\n"
	"       kerf agent mig enable|disable --gpu N [--nvml-library PATH]\n";

static const char help_text[] =
	"  -o, --output FMT   plan, apply: table (default), wide (each instance's\n"
	"                     GPU instance id), json or yaml (one MigActuation\n"
	"                     document, docs/schema/MigActuation.json)\n"
	"exit status: 0 every step done (or planned), 1 a step failed or NVML\n"
	"could not be read, 2 usage\n";

struct args {
	bool apply, dry_run;
	enum kerf_cli_output fmt;
	const char *want, *library;
	struct kerf_mig_ref assigned[KERF_MIG_MAX_REFS];
	struct kerf_mig_ref in_use[2 * KERF_MIG_MAX_REFS];  /* --in-use, then --assigned */
	size_t nr_assigned, nr_in_use;
	bool has_assigned;
	long gpu;
};

struct run {
	struct kerf_mig_gpus gpus;
	struct kerf_mig_plan plan;
	struct kerf_mig_steps steps;
	struct kerf_mig_report rep;
	uint16_t want[KERF_MIG_MAX_PROFILES];
	bool ran;
};

/* "1g.10gb=2,3g.40gb=1" into want[] for model m; -1 after a message. */
static int parse_want(const char *s, const struct kerf_mig_model *m, uint16_t *want)
{
	char shown[160];

	for (const char *p = s; *p;) {
		const char *comma = strchr(p, ','), *eq = strchr(p, '=');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[32], *end;

		if (!eq || eq >= p + len || eq == p || (size_t)(eq - p) >= sizeof(name)) {
			fprintf(stderr, "%s: --want: '%s': expected PROFILE=N\n", prog,
				kerf_escape_n(shown, sizeof(shown), p, len));
			return -1;
		}
		memcpy(name, p, (size_t)(eq - p));
		name[eq - p] = '\0';
		int idx = kerf_mig_profile_find(m, name);
		unsigned long n = strtoul(eq + 1, &end, 10);
		if (idx < 0) {
			fprintf(stderr, "%s: --want: '%s': %s has no such profile\n", prog,
				kerf_escape(shown, sizeof(shown), name), m->name);
			return -1;
		}
		if (end != p + len || eq + 1 == end || eq[1] == '-' || eq[1] == '+' || n > 64) {
			fprintf(stderr, "%s: --want: '%s': N must be a count from 0 to 64\n", prog,
				kerf_escape_n(shown, sizeof(shown), p, len));
			return -1;
		}
		want[idx] = (uint16_t)(want[idx] + n);
		p += len + (comma ? 1 : 0);
	}
	return 0;
}

/* ---- text ---------------------------------------------------------------- */

static void print_layout(const struct kerf_mig_gpus *g, unsigned n, bool wide)
{
	const struct kerf_mig_layout *l = &g->node.gpus[n];

	printf("gpu %u:", g->nvml_index[n]);
	if (!l->nr)
		printf(" no instances");
	for (unsigned i = 0; i < l->nr; i++)
	{
		printf("%s %s@%u", i ? "," : "", g->node.model->profiles[l->inst[i].profile].name,
		       l->inst[i].start);
		if (wide)
			printf(" (gi %u, %u ci)", g->gi_id[n][i], g->nr_cis[n][i]);
		printf("%s%s", g->nr_cis[n][i] ? "" : " (no compute instance)",
		       l->inst[i].in_use ? " (in use)" : "");
	}
	printf("\n");
}

static const char *state_name(enum kerf_mig_step_state s, bool ran)
{
	if (!ran)
		return "planned";
	return s == KERF_MIG_STEP_DONE ? "done" : s == KERF_MIG_STEP_FAILED ? "FAILED" : "not done";
}

static void print_text(const struct run *r, bool wide)
{
	const struct kerf_mig_model *m = r->gpus.node.model;

	printf("model %s", m->name);
	if (r->gpus.skipped[0])
		printf("; left alone: %s", r->gpus.skipped);
	printf("\nbefore\n");
	for (unsigned n = 0; n < r->gpus.node.nr_gpus; n++) {
		printf("  ");
		print_layout(&r->gpus, n, wide);
	}
	printf("plan: %zu action%s, %zu NVML step%s\n", r->plan.nr_actions,
	       r->plan.nr_actions == 1 ? "" : "s", r->steps.nr, r->steps.nr == 1 ? "" : "s");
	for (unsigned p = 0; p < m->nr_profiles; p++)
		if (r->want[p])
			printf("  want %s %u: served %u, unserved %u\n", m->profiles[p].name,
			       r->want[p], r->plan.served[p], r->plan.unserved[p]);
	for (size_t k = 0; k < r->steps.nr; k++) {
		const struct kerf_mig_step *s = &r->steps.steps[k];
		char ci[32] = "";
		if (s->kind == KERF_MIG_STEP_DESTROY_CI || (r->ran && s->state == KERF_MIG_STEP_DONE &&
							    s->kind == KERF_MIG_STEP_CREATE_CI))
			snprintf(ci, sizeof(ci), " ci %u", s->ci_id);
		printf("  %2zu %-10s gpu %u %s@%u%s: %s\n", k + 1, kerf_mig_step_kind_name(s->kind),
		       s->gpu, m->profiles[s->profile].name, s->start, ci,
		       state_name(s->state, r->ran));
	}
	if (!r->ran)
		return;
	if (r->rep.failed >= 0)
		printf("result: step %ld of %zu failed: %s\n  %zu done, %zu not done\n",
		       r->rep.failed + 1, r->steps.nr, r->rep.error, r->rep.nr_done,
		       r->steps.nr - r->rep.nr_done - 1);
	else if (r->steps.nr)
		printf("result: all %zu steps done\n", r->steps.nr);
	else
		printf("result: nothing to do\n");
	printf("now (read from NVML)\n");
	for (unsigned n = 0; n < r->rep.now.node.nr_gpus; n++) {
		printf("  ");
		print_layout(&r->rep.now, n, wide);
	}
	if (r->rep.legal)
		printf("layout legal\n");
	else
		printf("layout NOT legal: %s\n", r->rep.legal_error);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *layout_json(const struct kerf_mig_gpus *g)
{
	json_t *a = json_array();

	for (unsigned n = 0; a && n < g->node.nr_gpus; n++) {
		const struct kerf_mig_layout *l = &g->node.gpus[n];
		json_t *inst = json_array();
		for (unsigned i = 0; inst && i < l->nr; i++)
			json_array_append_new(
				inst, json_pack("{s:s, s:i, s:i, s:i, s:b}", "profile",
						g->node.model->profiles[l->inst[i].profile].name,
						"start", (int)l->inst[i].start, "gpuInstanceId",
						(int)g->gi_id[n][i], "computeInstances",
						(int)g->nr_cis[n][i], "inUse", l->inst[i].in_use));
		json_array_append_new(a, json_pack("{s:i, s:o*}", "gpu", (int)g->nvml_index[n],
						   "instances", inst));
	}
	return a;
}

/* The MigActuation document (docs/schema/MigActuation.json). */
static int print_doc(const struct run *r, enum kerf_cli_output fmt)
{
	const struct kerf_mig_model *m = r->gpus.node.model;
	json_t *steps = json_array(), *o;

	for (size_t k = 0; steps && k < r->steps.nr; k++) {
		const struct kerf_mig_step *s = &r->steps.steps[k];
		const char *state = !r->ran ? "planned"
				    : s->state == KERF_MIG_STEP_DONE ? "done"
				    : s->state == KERF_MIG_STEP_FAILED ? "failed" : "notDone";
		json_t *so = json_pack("{s:i, s:s, s:i, s:s, s:i, s:s}", "step", (int)(k + 1),
				       "operation", kerf_mig_step_kind_name(s->kind), "gpu", (int)s->gpu,
				       "profile", m->profiles[s->profile].name, "start",
				       (int)s->start, "state", state);
		if (so && (s->kind == KERF_MIG_STEP_DESTROY_CI ||
			   (r->ran && s->kind == KERF_MIG_STEP_CREATE_CI && s->state == KERF_MIG_STEP_DONE)))
			json_object_set_new(so, "computeInstanceId", json_integer(s->ci_id));
		json_array_append_new(steps, so);
	}
	o = json_pack("{s:s, s:s, s:s, s:s, s:o*, s:i, s:o*}", "apiVersion", KERF_CLI_API_VERSION,
		      "kind", "MigActuation", "model", m->name, "leftAlone",
		      r->gpus.skipped, "before", layout_json(&r->gpus), "actions",
		      (int)r->plan.nr_actions, "steps", steps);
	if (o && r->ran) {
		json_object_set_new(o, "result", json_string(r->rep.failed < 0 ? "done" : "failed"));
		json_object_set_new(o, "stepsDone", json_integer((json_int_t)r->rep.nr_done));
		if (r->rep.failed >= 0) {
			json_object_set_new(o, "failedStep", json_integer(r->rep.failed + 1));
			json_object_set_new(o, "error", json_string(r->rep.error));
			json_object_set_new(o, "nvml", r->rep.nvml_rc
				? json_string(kerf_nvml_return_name(r->rep.nvml_rc)) : json_null());
		}
		json_object_set_new(o, "now", layout_json(&r->rep.now));
		json_object_set_new(o, "legal", json_boolean(r->rep.legal));
		if (!r->rep.legal)
			json_object_set_new(o, "legalError", json_string(r->rep.legal_error));
	} else if (o) {
		json_object_set_new(o, "result", json_string("planned"));
	}
	if (!o)
		return -1;
	return kerf_cli_emit(prog, o, fmt) ? -1 : 0;
}

/* ---- the commands -------------------------------------------------------- */

static int plan_and_run(const struct args *a, const struct kerf_nvml *nv, struct run *r,
			struct kerf_err *err)
{
	int ret = kerf_mig_gpus_read(&r->gpus, nv, a->in_use, a->nr_in_use, err);

	if (ret < 0)
		return ret;
	if (a->has_assigned) {
		ret = kerf_mig_plan_assigned(&r->gpus, a->assigned, a->nr_assigned, &r->plan, err);
	} else {
		if (parse_want(a->want, r->gpus.node.model, r->want) < 0)
			return 2;
		ret = kerf_mig_plan_node(&r->gpus.node, r->want, &r->plan, err);
	}
	if (ret == 0)
		ret = kerf_mig_steps_of(&r->gpus, &r->plan, &r->steps, err);
	if (ret < 0 || !a->apply || a->dry_run)
		return ret;
	r->ran = true;
	kerf_mig_run(nv, &r->steps, a->in_use, a->nr_in_use, &r->rep, err);
	return 0;
}

static int mig_plan_apply(const struct args *a)
{
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct run *r = calloc(1, sizeof(*r));
	int status = 1;

	if (!r) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (kerf_nvml_open(&nv, a->library, &err) < 0)
		goto out;
	if (a->apply && !a->dry_run && !kerf_nvml_has(&nv, KERF_NVML_F_MIG_ACTUATE)) {
		kerf_err_set(&err, -KERF_ENOTFOUND, "MIG actuation is off: %s", nv.off);
		kerf_nvml_close(&nv);
		goto out;
	}
	int ret = plan_and_run(a, &nv, r, &err);
	kerf_nvml_close(&nv);
	if (ret == 2) {
		status = 2;
		goto out;
	}
	if (ret < 0)
		goto out;
	if ((kerf_cli_output_is_doc(a->fmt) ? print_doc(r, a->fmt)
					    : (print_text(r, a->fmt == KERF_OUT_WIDE), 0)) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out;
	}
	status = r->ran && r->rep.failed >= 0 ? 1 : 0;
out:
	if (err.msg[0])  /* user text in it was checked or escaped where it was read */
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	free(r);
	return status;
}

static int mig_mode(const struct args *a, unsigned mode)
{
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_mig_mode out;
	int ret;

	if (a->gpu < 0) {
		fprintf(stderr, "%s: %s needs --gpu N\n", prog, mode ? "enable" : "disable");
		return 2;
	}
	if (kerf_nvml_open(&nv, a->library, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 1;
	}
	ret = kerf_mig_set_mode(&nv, (uint32_t)a->gpu, mode, &out, &err);
	kerf_nvml_close(&nv);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 1;
	}
	printf("gpu %ld: MIG current %s, pending %s", a->gpu, out.current ? "on" : "off",
	       out.pending ? "on" : "off");
	if (ret > 0)
		printf(" (%s)", kerf_nvml_return_name(out.activation_rc));
	printf("\n");
	if (ret > 0)
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	return ret > 0 ? 1 : 0;
}

static int refs(const char *opt, const char *text, struct kerf_mig_ref *out, size_t *nr)
{
	struct kerf_err err = { 0 };

	/* the message quotes only what passed the parser's character check */
	if (kerf_mig_refs_parse(text, opt, out, KERF_MIG_MAX_REFS, nr, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	return 0;
}

const struct option kerf_agent_mig_longopts[] = {
	{ "want", required_argument, NULL, 'w' },
	{ "assigned", required_argument, NULL, 'a' },
	{ "in-use", required_argument, NULL, 'u' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "gpu", required_argument, NULL, 'g' },
	{ "output", required_argument, NULL, 'o' },
	{ "nvml-library", required_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* The options after the verb into *a: 0, or the exit status (0 after --help, 2). */
static int parse_options(int argc, char **argv, struct args *a, bool *done)
{
	char shown[160], *end;
	int c;

	*done = true;
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", kerf_agent_mig_longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			a->want = optarg;
			break;
		case 'a':
			if (refs("--assigned", optarg, a->assigned, &a->nr_assigned) < 0)
				return 2;
			a->has_assigned = true;
			break;
		case 'u':
			if (refs("--in-use", optarg, a->in_use, &a->nr_in_use) < 0)
				return 2;
			break;
		case 'n':
			a->dry_run = true;
			break;
		case 'g':
			a->gpu = strtol(optarg, &end, 10);
			if (!*optarg || *end || a->gpu < 0 || a->gpu > 63) {
				fprintf(stderr, "%s: --gpu '%s': an index from 0 to 63\n", prog,
					kerf_escape(shown, sizeof(shown), optarg));
				return 2;
			}
			break;
		case 'o':
			if (kerf_cli_output(prog, optarg, &a->fmt))
				return 2;
			break;
		case 'l':
			a->library = optarg;
			break;
		case 'h':
			printf("%s%s", usage_line, help_text);
			return 0;
		default:
			kerf_opt_error(prog, c, argv);
			fprintf(stderr, "%s", usage_line);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], NULL);
		return 2;
	}
	*done = false;
	return 0;
}

int kerf_cmd_agent_mig(int argc, char **argv)
{
	static struct args a;
	const char *verb = argc >= 2 ? argv[1] : "";
	char shown[160];
	bool done;

	memset(&a, 0, sizeof(a));
	a.gpu = -1;
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
		printf("%s%s", usage_line, help_text);
		return 0;
	}
	bool mode = !strcmp(verb, "enable") || !strcmp(verb, "disable");
	if (!mode && strcmp(verb, "plan") && strcmp(verb, "apply")) {
		fprintf(stderr, "%s: unknown command '%s'\n%s", prog,
			kerf_escape(shown, sizeof(shown), verb), usage_line);
		return 2;
	}
	a.apply = !strcmp(verb, "apply");
	int status = parse_options(argc, argv, &a, &done);
	if (done)
		return status;
	/* enable and disable print one line of text: no document to give */
	if (mode && kerf_cli_output_is_doc(a.fmt)) {
		fprintf(stderr, "%s: %s: -o json and -o yaml are for plan and apply\n", prog, verb);
		return 2;
	}
	if (mode)
		return mig_mode(&a, !strcmp(verb, "enable") ? NVML_DEVICE_MIG_ENABLE
							    : NVML_DEVICE_MIG_DISABLE);
	if (!a.want == !a.has_assigned) {
		fprintf(stderr, "%s: %s needs exactly one of --want and --assigned\n", prog, verb);
		return 2;
	}
	/* pods use the instances assigned to them: never destroyed */
	memcpy(&a.in_use[a.nr_in_use], a.assigned, a.nr_assigned * sizeof(a.assigned[0]));
	a.nr_in_use += a.nr_assigned;
	return mig_plan_apply(&a);
}
