/*
 * kerf sim openb-replay: the openb trace in time mode.  Pods arrive at their
 * creation time and hold their resources until their deletion time, through
 * the real core (quotas, priorities, preemption, reservations), with each
 * pod mapped to a tenant and a class by its qos:
 *
 *   LS (latency-sensitive)  tenant "latency-sensitive", non-preemptible
 *   BE (best effort)        tenant "best-effort", preemptible
 *   Burstable, Guaranteed   tenant "other", preemptible, in between
 *
 * with nominal GPU quotas of 50 / 30 / 20 % of each model, lending all and
 * borrowing without limit.  The last --days of the trace are replayed
 * (pods already running when the window opens arrive at its start with
 * what is left of their run; a pod with no deletion time runs past the
 * end).  The pod list must have the creation_time and deletion_time
 * columns (the multigpu lists do not): without them the replay is
 * refused, not run as zero pods.  Times are bounded by the reader
 * (KERF_OPENB_MAX_TIME_S), so they fit in milliseconds.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/output_alias.h"
#include "cmd/sim_report.h"
#include "cmd/spec.h"
#include "sim/openb.h"
#include "sim/timesim.h"
#include "sim/timesim_report.h"

enum { T_LS, T_BE, T_OTHER, NR_T };

static const char *const tenant_names[NR_T] = { "latency-sensitive",
						"best-effort", "other" };
static const int quota_pct[NR_T] = { 50, 30, 20 };

static int map_qos(const char *qos)
{
	if (!strcmp(qos, "LS"))
		return T_LS;
	if (!strcmp(qos, "BE"))
		return T_BE;
	return T_OTHER;
}

static int build_state(const struct kerf_openb *o, struct kerf_state *st,
		       int *tenant_idx, struct kerf_err *err)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_res cap;
	const struct kerf_priority_class classes[NR_T] = {
		{ .name = "latency-sensitive", .value = 1000, .preemptible = false },
		{ .name = "best-effort", .value = 100, .preemptible = true,
		  .checkpoint_grace_ms = 30 * 1000 },
		{ .name = "other", .value = 500, .preemptible = true,
		  .checkpoint_grace_ms = 30 * 1000 },
	};
	int rc = kerf_openb_cluster(o, NULL, &c, err);

	if (rc < 0)
		return rc;
	/* the models gpu_spec names must exist before the quota dimensions */
	for (size_t i = 0; i < o->nr_pods && rc == 0; i++) {
		struct kerf_pod p;

		rc = kerf_openb_pod_request(o, i, &c, &p, err);
	}
	if (rc == 0 && (rc = kerf_tenants_init(&tt, kerf_res_count(&c))) < 0)
		kerf_err_set(err, rc, "out of memory");
	if (rc < 0) {
		kerf_cluster_release(&c);
		return rc;
	}
	kerf_res_zero(&cap);
	for (size_t i = 0; i < c.nr_nodes; i++)
		if (c.nodes[i].nr_gpus)
			cap.v[kerf_res_gpu(c.nodes[i].model)] +=
				(int64_t)c.nodes[i].nr_gpus * KERF_GPU_MILLI;
	kerf_classes_init(&cl);
	for (int t = 0; t < NR_T && rc >= 0; t++) {
		struct kerf_quota q;

		kerf_quota_default(&q);
		for (int m = 0; m < (int)c.nr_models; m++)
			q.nominal.v[kerf_res_gpu(m)] =
				cap.v[kerf_res_gpu(m)] * quota_pct[t] / 100 / 1000 * 1000;
		rc = kerf_classes_add(&cl, &classes[t], err);
		if (rc >= 0)
			rc = tenant_idx[t] = kerf_tenants_add(&tt, tenant_names[t],
							      KERF_TENANT_ROOT, &q, 1, err);
		if (rc >= 0)
			tt.t[tenant_idx[t]].allowed_classes = 1u << t;
	}
	if (rc >= 0)
		rc = kerf_state_init(st, &c, &tt, &cl, err);
	if (rc < 0) {
		kerf_cluster_release(&c);
		kerf_tenants_release(&tt);
	}
	return rc < 0 ? rc : 0;
}

static int build_arrivals(const struct kerf_openb *o, struct kerf_state *st,
			  const int *tenant_idx, int64_t days,
			  struct kerf_scenario *sc, struct kerf_err *err)
{
	int64_t end = 0, start;

	for (size_t i = 0; i < o->nr_pods; i++)
		if (o->pods[i].creation_s > end)
			end = o->pods[i].creation_s;
	start = end - days * 86400 > 0 ? end - days * 86400 : 0;
	sc->arrivals = calloc(o->nr_pods ? o->nr_pods : 1, sizeof(*sc->arrivals));
	if (!sc->arrivals)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < o->nr_pods; i++) {
		const struct kerf_openb_pod *p = &o->pods[i];
		struct kerf_scn_arrival *a = &sc->arrivals[sc->nr_arrivals];
		int64_t from = p->creation_s, to = p->deletion_s;
		int t = map_qos(p->qos);
		int rc;

		/* no deletion time: still running when the trace ends */
		if (to < 0)
			to = end + 1;
		/* never ran (deleted as created), or gone before the window */
		if (from < 0 || to <= start || to <= from)
			continue;
		if (from < start)
			from = start;
		snprintf(a->name, sizeof(a->name), "%s", p->name);
		a->tenant = tenant_idx[t];
		a->class_idx = t;
		a->at_ms = (from - start) * 1000;
		a->duration_ms = (to - from) * 1000;
		a->set.count = 1;
		rc = kerf_openb_pod_request(o, i, &st->cluster, &a->set.req, err);
		if (rc < 0)
			return rc;
		sc->nr_arrivals++;
	}
	sc->horizon_ms = days * 86400 * 1000;
	return 0;
}

/* Progress ends; the report, when asked, is written.  0 or 1. */
static int report_replay(struct kerf_sim_out *out, const struct kerf_timesim *ts,
			 int64_t days, size_t nr_pods)
{
	char sub[320];

	kerf_sim_out_stop(out);
	if (!out->path)
		return 0;
	snprintf(sub, sizeof(sub), "The openb trace in time: %zu nodes, the last %lld days, %zu pods; tenants and classes by qos.",
		 ts->st.cluster.nr_nodes, (long long)days, nr_pods);
	if (kerf_sim_out_finish(out, ts, "kerf sim openb-replay", sub) != 0)
		return 1;
	return kerf_sim_out_commit(out);
}

const struct option kerf_sim_replay_longopts[] = {
	{ "nodes", required_argument, NULL, 'n' },
	{ "pods", required_argument, NULL, 'p' },
	{ "days", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "json", no_argument, NULL, 'j' },
	KERF_SIM_OUT_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_replay(int argc, char **argv)
{
	const char *nodes = NULL, *pods = NULL;
	struct kerf_sim_out out;
	int64_t days = 30;
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *fmt_arg = NULL;
	bool json = false;
	struct kerf_openb o;
	struct kerf_state st;
	struct kerf_scenario sc;
	struct kerf_timesim ts;
	struct kerf_err err = { 0 };
	int tenant_idx[NR_T], c, status = 1;

	kerf_sim_out_init(&out, "kerf sim openb-replay");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hqo:", kerf_sim_replay_longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nodes = optarg;
			break;
		case 'p':
			pods = optarg;
			break;
		case 'd': {
			uint64_t v;

			if (kerf_parse_u64_opt("--days", optarg, 1, 365, &v, &err) < 0) {
				fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
				return 2;
			}
			days = (int64_t)v;
			break;
		}
		case 'o':
			if (kerf_cli_output("kerf sim openb-replay", optarg, &fmt) != 0)
				return 2;
			fmt_arg = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: kerf sim openb-replay --nodes FILE --pods FILE [--days N] [-o FMT]\n"
			       "                                [--report FILE.html|FILE.md] [-q]\n"
			       "  the last N days (default 30) of the trace in time mode; tenants by qos\n"
			       "  -o, --output FMT\n"
			       "                 table (default), wide (also the p50 and p95 waits,\n"
			       "                 evictions, share against entitlement over time), json or\n"
			       "                 yaml: one SimulationRun document\n"
			       "                 (docs/schema/SimulationRun.json)\n"
			       "  --json         the same as -o json\n"
			       "  --report FILE  also write a report with charts (docs/reports.md)\n"
			       "  -q, --quiet    no progress lines on stderr (shown after 2 s)\n"
			       "\n"
			       "exit status: 0 replayed, 1 failure, 2 usage\n");
			return 0;
		default:
			if (kerf_sim_out_option(&out, c, optarg))
				break;
			kerf_opt_error("kerf sim openb-replay", c, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf sim openb-replay", argv[optind], NULL);
		return 2;
	}
	if (kerf_cli_json_alias("kerf sim openb-replay", json, fmt_arg, &fmt) != 0)
		return 2;
	if (!nodes || !pods) {
		fprintf(stderr, "usage: kerf sim openb-replay --nodes FILE --pods FILE [--days N] [-o FMT]\n");
		return 2;
	}
	if (kerf_sim_out_open(&out) != 0)
		return 2;
	kerf_sim_out_start(&out);
	kerf_openb_init(&o);
	kerf_scenario_init(&sc);
	snprintf(sc.name, sizeof(sc.name), "openb replay, last %lld days",
		 (long long)days);
	sc.cycle_ms = 10 * 1000;
	if (kerf_openb_load(&o, nodes, pods, &err) < 0) {
		fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
		goto out_trace;
	}
	if (o.untimed) {
		char shown[160];

		fprintf(stderr, "kerf sim openb-replay: %s:1: the pod list has no creation_time or no deletion_time column; a replay in time needs both\n",
			kerf_escape(shown, sizeof(shown), pods));
		goto out_trace;
	}
	if (build_state(&o, &st, tenant_idx, &err) < 0) {
		fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
		goto out_trace;
	}
	if (build_arrivals(&o, &st, tenant_idx, days, &sc, &err) < 0) {
		fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
		kerf_state_release(&st);
		goto out_trace;
	}
	if (sc.nr_arrivals == 0) {
		char shown[160];

		fprintf(stderr, "kerf sim openb-replay: %s: none of its %zu pods runs in the last %lld days of the trace; nothing to replay\n",
			kerf_escape(shown, sizeof(shown), pods), o.nr_pods,
			(long long)days);
		kerf_state_release(&st);
		goto out_trace;
	}
	if (kerf_timesim_init_state(&ts, &sc, &st, &err) < 0) {
		fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
		kerf_state_release(&st);
		goto out_trace;
	}
	kerf_sim_out_attach(&out, &ts);
	if (kerf_timesim_run(&ts, &err) < 0) {
		kerf_sim_out_stop(&out);
		fprintf(stderr, "kerf sim openb-replay: %s\n", err.msg);
	} else if (report_replay(&out, &ts, days, sc.nr_arrivals) == 0) {
		if (kerf_cli_output_is_doc(fmt)) {
			json_t *doc = kerf_cli_doc("SimulationRun");

			if (doc && kerf_ts_report_json(doc, &ts, "sim openb-replay") < 0) {
				json_decref(doc);
				doc = NULL;
			}
			status = kerf_cli_emit("kerf sim openb-replay", doc, fmt);
		} else {
			printf("openb replay: %zu nodes, last %lld days, %zu pods; tenants and classes by qos\n\n",
			       ts.st.cluster.nr_nodes, (long long)days, sc.nr_arrivals);
			kerf_ts_report_text(stdout, &ts, fmt == KERF_OUT_WIDE);
			status = 0;
		}
	}
	kerf_timesim_release(&ts);
out_trace:
	kerf_sim_out_release(&out);
	kerf_scenario_release(&sc);
	kerf_openb_release(&o);
	return status;
}
