/*
 * kerf what-if: the current state re-run with a changed quota, borrowing
 * limit, weight, budget or placement policy (docs/what-if.md).  The state
 * is kerf serve's (GET /api/v1/state) or a scenario's at a point in time;
 * every change is parsed before anything is fetched or run, and checked
 * against the state's tenants and flavors before any cycle runs.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/parse.h"
#include "base/units.h"
#include "cmd/api_client.h"
#include "cmd/cmd.h"
#include "cmd/spec.h"
#include "cmd/opt.h"
#include "cmd/table.h"
#include "sim/whatif.h"

static const char usage_text[] =
	"usage: kerf what-if [--server URL | --scenario FILE --at TIME] CHANGE...\n"
	"                    [--horizon DURATION] [-o table|wide|json|yaml]\n"
	"\n"
	"Re-run the current state with changes; show what would start, what would\n"
	"still wait and why, what would be preempted, and each tenant's GPUs.\n"
	"\n"
	"Changes (any number, in order; at least one is usual):\n"
	"  --set-quota TENANT[:FLAVOR]=GPUS            nominal GPU quota of a flavor\n"
	"  --set-borrowing-limit TENANT[:FLAVOR]=GPUS  how far beyond nominal it may borrow\n"
	"  --set-weight TENANT=W                       fair-share weight, 1..1000000\n"
	"  --set-budget TENANT=GPU_HOURS               GPU-hour budget per window (0: none)\n"
	"  --policy NAME                               placement policy (see kerf sim --help)\n"
	"  FLAVOR may be left out when the cluster has one GPU model.\n"
	"\n"
	"State:\n"
	"  --server URL         kerf serve's endpoint (default $KERF_SERVER, else " KERF_CLI_DEFAULT_SERVER ")\n"
	"  --scenario FILE      a scenario (docs/scenario.md), run up to --at first\n"
	"  --at TIME            the scenario's time: 90, 90s, 15m, 2h, 1d\n"
	"\n"
	"  --horizon DURATION   run cycles for this long after (nothing arrives; default 0: one cycle)\n"
	"  -o, --output FMT     table (default), wide (every workload), json or yaml\n"
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 ok, 1 failure (a state that cannot be fetched or loaded), 2 usage\n"
	"(a bad change: unknown tenant, flavor or policy, a negative number).\n";

static const char prog[] = "kerf what-if";

enum { OPT_SERVER = 256, OPT_SCENARIO, OPT_AT, OPT_HORIZON, OPT_CHANGE };

/* A duration: a decimal with an optional unit s (default), m, h or d. */
static int duration(const char *opt, const char *s, int64_t *ms)
{
	static const struct { char unit; int64_t ms; } units[] = {
		{ 's', 1000 }, { 'm', 60000 }, { 'h', 3600000 }, { 'd', 86400000 },
	};
	char num[64], shown[200];
	size_t n = strlen(s);
	int64_t mult = 1000;
	uint64_t v;

	if (n && n < sizeof(num))
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (s[n - 1] == units[i].unit) {
				mult = units[i].ms;
				n--;
			}
	if (n == 0 || n >= sizeof(num))
		goto bad;
	memcpy(num, s, n);
	num[n] = '\0';
	if (num[0] == '-') {
		fprintf(stderr, "%s: %s '%s': must not be negative\n", prog, opt,
			kerf_escape(shown, sizeof(shown), s));
		return 2;
	}
	if (kerf_parse_fixed(num, 3, &v) < 0 || v > (uint64_t)1 << 40)
		goto bad;
	*ms = (int64_t)(v * (uint64_t)mult / 1000);
	return 0;
bad:
	fprintf(stderr, "%s: %s '%s': expected a duration such as 90, 90s, 15m, 2h or 1d "
		"(at most 3 decimals)\n", prog, opt, kerf_escape(shown, sizeof(shown), s));
	return 2;
}

static const char *gpus(int64_t milli, char *buf, size_t size)
{
	kerf_units_gpus(milli, buf, size);
	return buf;
}

static void print_table(const struct kerf_whatif_result *r, bool wide)
{
	static const char *const wh[] = { "WORKLOAD", "TENANT", "NOW", "AS-IS", "WHAT-IF",
					  "EFFECT", "NODES", "REASON", NULL };
	static const char *const th[] = { "TENANT", "GPUS-NOW", "AS-IS", "WHAT-IF", NULL };
	static const char *const words[] = { "Pending", "Running", "Gone" };
	struct kerf_table t;
	char a[32], b[32], c[32];
	size_t shown = 0;

	kerf_table_init(&t, wh);
	for (size_t i = 0; i < r->nr_wl; i++) {
		const struct kerf_whatif_wl *w = &r->wl[i];
		const char *effect = kerf_whatif_effect(w);
		const struct kerf_whatif_outcome *o[3] = { &w->before, &w->as_is, &w->what_if };
		const char *st[3];
		const char *row[8];

		if (!wide && w->before.state == KERF_WL_RUNNING && !strcmp(effect, "Same"))
			continue;
		for (int k = 0; k < 3; k++)
			st[k] = o[k]->state == KERF_WL_RUNNING && o[k]->leaving ? "Leaving"
										: words[o[k]->state];
		row[0] = w->key;
		row[1] = w->tenant;
		row[2] = st[0];
		row[3] = st[1];
		row[4] = st[2];
		row[5] = effect;
		row[6] = w->what_if.nodes && w->what_if.nodes[0] ? w->what_if.nodes : "-";
		row[7] = w->what_if.reason && w->what_if.reason[0] ? w->what_if.reason : "-";
		kerf_table_row(&t, row);
		shown++;
	}
	if (shown && kerf_table_print(&t, stdout) < 0)
		fprintf(stderr, "%s: out of memory\n", prog);
	if (!shown)
		printf("No pending or affected workloads.\n");
	kerf_table_release(&t);
	printf("\n");
	kerf_table_init(&t, th);
	for (size_t i = 0; i < r->nr_tenants; i++) {
		const struct kerf_whatif_tenant *x = &r->tenants[i];
		const char *row[] = { x->name, gpus(x->gpu_milli[0], a, sizeof(a)),
				      gpus(x->gpu_milli[1], b, sizeof(b)),
				      gpus(x->gpu_milli[2], c, sizeof(c)) };

		kerf_table_row(&t, row);
	}
	if (r->nr_tenants && kerf_table_print(&t, stdout) < 0)
		fprintf(stderr, "%s: out of memory\n", prog);
	kerf_table_release(&t);
}

struct args {
	enum kerf_cli_output fmt;
	const char *server, *scenario;
	int64_t at_ms, horizon_ms;
	bool have_at;
	struct kerf_whatif_change changes[KERF_WHATIF_MAX_CHANGES];
	size_t nr;
};

/* One change option: parsed now, so a bad one stops everything. */
static int add_change(struct args *a, const char *opt, const char *arg)
{
	struct kerf_err err = { 0 };

	if (a->nr == KERF_WHATIF_MAX_CHANGES) {
		fprintf(stderr, "%s: at most %d changes\n", prog, KERF_WHATIF_MAX_CHANGES);
		return 2;
	}
	if (kerf_whatif_change_parse(opt, arg, &a->changes[a->nr], &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 2;
	}
	a->nr++;
	return 0;
}

static int parse(int argc, char **argv, struct args *a)
{
	int c, li = -1, rc;
	char name[64];

	/* --help anywhere wins, before any other check */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		}
	}
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", kerf_what_if_longopts, &li)) != -1) {
		switch (c) {
		case OPT_SERVER:
			a->server = optarg;
			break;
		case OPT_SCENARIO:
			a->scenario = optarg;
			break;
		case OPT_AT:
			if ((rc = duration("--at", optarg, &a->at_ms)))
				return rc;
			a->have_at = true;
			break;
		case OPT_HORIZON:
			if ((rc = duration("--horizon", optarg, &a->horizon_ms)))
				return rc;
			break;
		case 'o':
			if ((rc = kerf_cli_output(prog, optarg, &a->fmt)))
				return rc;
			break;
		case OPT_CHANGE:
			snprintf(name, sizeof(name), "--%s", kerf_what_if_longopts[li].name);
			if ((rc = add_change(a, name, optarg)))
				return rc;
			break;
		default:
			kerf_opt_error(prog, c, argv);
			fputs(usage_text, stderr);
			return 2;
		}
		li = -1;
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], "changes are options such as --set-quota T=8");
		return 2;
	}
	if (a->scenario && a->server) {
		fprintf(stderr, "%s: --server and --scenario: one state at a time\n", prog);
		return 2;
	}
	if (a->scenario && !a->have_at) {
		fprintf(stderr, "%s: --scenario needs --at TIME (the point of the run to start from)\n", prog);
		return 2;
	}
	if (a->have_at && !a->scenario) {
		fprintf(stderr, "%s: --at goes with --scenario (a cluster's state is as it is now)\n", prog);
		return 2;
	}
	return -1;
}

/* Progress of a long scenario run: a plain line a second after 2 s. */
struct progress {
	int64_t start_ms, told_ms, at_ms;
	uint64_t events;
};

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int progress(void *ctx, struct kerf_timesim *ts, const struct kerf_event *ev)
{
	struct progress *p = ctx;
	int64_t now;

	(void)ev;
	if (++p->events % 4096)
		return 0;
	now = wall_ms();
	if (now - p->start_ms >= 2000 && now - p->told_ms >= 1000) {
		char done[32], at[32];

		kerf_units_duration(ts->now_ms, done, sizeof(done));
		kerf_units_duration(p->at_ms, at, sizeof(at));
		fprintf(stderr, "%s: running the scenario: %s of %s simulated\n", prog, done, at);
		p->told_ms = now;
	}
	return 0;
}

static int load(const struct args *a, json_t **doc)
{
	struct progress p = { .start_ms = wall_ms(), .at_ms = a->at_ms };
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	int rc;

	if (!a->scenario)
		return kerf_cli_get(prog, kerf_cli_server(a->server), "/api/v1/state", doc);
	kerf_scenario_init(&sc);
	rc = kerf_scenario_load(&sc, a->scenario, &err);
	if (rc == 0) {
		if (a->at_ms > sc.horizon_ms) {
			char at[32], end[32];

			kerf_units_duration(a->at_ms, at, sizeof(at));
			kerf_units_duration(sc.horizon_ms, end, sizeof(end));
			fprintf(stderr, "%s: --at: %s is past the scenario's horizon (%s)\n",
				prog, at, end);
			kerf_scenario_release(&sc);
			return 2;
		}
		rc = kerf_whatif_scenario_doc(&sc, a->at_ms, progress, &p, doc, &err);
	}
	kerf_scenario_release(&sc);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 1;
	}
	return 0;
}

const struct option kerf_what_if_longopts[] = {
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "scenario", required_argument, NULL, OPT_SCENARIO },
	{ "at", required_argument, NULL, OPT_AT },
	{ "horizon", required_argument, NULL, OPT_HORIZON },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ "set-quota", required_argument, NULL, OPT_CHANGE },
	{ "set-borrowing-limit", required_argument, NULL, OPT_CHANGE },
	{ "set-weight", required_argument, NULL, OPT_CHANGE },
	{ "set-budget", required_argument, NULL, OPT_CHANGE },
	{ "policy", required_argument, NULL, OPT_CHANGE },
	{ NULL, 0, NULL, 0 },
};

int kerf_cmd_what_if(int argc, char **argv)
{
	static struct args a;
	struct kerf_whatif_result r;
	struct kerf_err err = { 0 };
	json_t *doc = NULL, *out;
	int rc;

	memset(&a, 0, sizeof(a));
	if ((rc = parse(argc, argv, &a)) >= 0)
		return rc;
	if ((rc = load(&a, &doc)))
		return rc;
	rc = kerf_whatif_run(doc, a.changes, a.nr, a.horizon_ms, 0, &r, &err);
	json_decref(doc);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		/* a change the state refuses is the user's; anything else fails */
		return rc == -KERF_EINVAL && !strncmp(err.msg, "--", 2) ? 2 : 1;
	}
	if (a.fmt == KERF_OUT_JSON || a.fmt == KERF_OUT_YAML) {
		out = kerf_whatif_json(&r, a.changes, a.nr);
		rc = out ? kerf_cli_print(prog, out, a.fmt, stdout) : 1;
		if (!out)
			fprintf(stderr, "%s: out of memory\n", prog);
		json_decref(out);
	} else {
		print_table(&r, a.fmt == KERF_OUT_WIDE);
	}
	kerf_whatif_result_release(&r);
	return rc;
}
