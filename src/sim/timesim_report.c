#include "sim/timesim_report.h"

#include "base/units.h"
#include "core/budget.h"
#include "sim/timesim_pending.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

int64_t kerf_ts_entitlement_ppm(const struct kerf_tenants *tt, int t)
{
	int64_t e = 1000000;

	/* weight over the sum of the weights of the siblings, up the tree */
	for (; t > KERF_TENANT_ROOT; t = tt->t[t].parent) {
		int64_t sum = 0;

		for (size_t j = 1; j < tt->nr; j++)
			if (tt->t[j].parent == tt->t[t].parent)
				sum += tt->t[j].weight;
		e = e * tt->t[t].weight / (sum ? sum : 1);
	}
	return e;
}

int64_t kerf_ts_share_ppm(const struct kerf_timesim *ts, int t)
{
	__int128 total = ts->tenant[KERF_TENANT_ROOT].gpu_milli_ms;

	if (total <= 0)
		return 0;
	return (int64_t)(ts->tenant[t].gpu_milli_ms * 1000000 / total);
}

int64_t kerf_ts_owed_ppm(const struct kerf_timesim *ts, int t)
{
	__int128 total = ts->tenant[KERF_TENANT_ROOT].owed_milli_ms;

	if (total <= 0)
		return 0;
	return (int64_t)(ts->tenant[t].owed_milli_ms * 1000000 / total);
}

/* Buckets [first, last) of window k of KERF_TS_WINDOWS over the horizon. */
static void window(const struct kerf_timesim *ts, int k, int64_t *first,
		   int64_t *last)
{
	int64_t used = ts->horizon_ms / ts->share_bucket_ms + 1;

	if (used > KERF_TS_SHARE_BUCKETS)
		used = KERF_TS_SHARE_BUCKETS;
	*first = used * k / KERF_TS_WINDOWS;
	*last = used * (k + 1) / KERF_TS_WINDOWS;
}

void kerf_ts_window_ppm(const struct kerf_timesim *ts, int t, int k,
			int64_t *share, int64_t *owed)
{
	int64_t a, b, used = 0, used_all = 0, o = 0, o_all = 0;

	window(ts, k, &a, &b);
	for (int64_t i = a; i < b; i++) {
		used += ts->tenant[t].share_milli_ms[i];
		used_all += ts->tenant[KERF_TENANT_ROOT].share_milli_ms[i];
		o += ts->tenant[t].owed_share_milli_ms[i];
		o_all += ts->tenant[KERF_TENANT_ROOT].owed_share_milli_ms[i];
	}
	*share = used_all > 0 ? used * 1000000 / used_all : -1;
	*owed = o_all > 0 ? o * 1000000 / o_all : -1;
}

int64_t kerf_ts_slo_ppm(const struct kerf_ts_tenant_stats *s)
{
	size_t ok = 0;

	if (s->nr_waits == 0)
		return -1;
	for (size_t i = 0; i < s->nr_waits; i++)
		ok += s->waits_ms[i] <= KERF_START_SLO_MS;
	return (int64_t)(ok * 1000000 / s->nr_waits);
}

void kerf_ts_tenant_path(const struct kerf_tenants *tt, int t, char *buf,
			 size_t size)
{
	if (tt->t[t].parent > KERF_TENANT_ROOT) {
		kerf_ts_tenant_path(tt, tt->t[t].parent, buf, size);
		snprintf(buf + strlen(buf), size - strlen(buf), "/%s", tt->t[t].name);
	} else {
		snprintf(buf, size, "%s", tt->t[t].name);
	}
}

void kerf_ts_totals(const struct kerf_timesim *ts, struct kerf_ts_totals *tot)
{
	const struct kerf_tenants *tt = &ts->st.tenants;

	memset(tot, 0, sizeof(*tot));
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];

		tot->preempted += s->preempted;
		tot->idle_reclaimed += s->idle_reclaimed;
		tot->evicted += s->evicted;
		tot->submitted += s->submitted;
		tot->started += s->nr_waits;
		/* a parent's GPU use includes its children's: leaves only */
		if (tt->t[t].nr_children == 0) {
			tot->lost_gpu_hours += (double)s->lost_gpu_milli_ms / 3.6e9;
			tot->gpu_hours += (double)s->gpu_milli_ms / 3.6e9;
		}
	}
	for (size_t i = 0; i < ts->st.cluster.nr_slots; i++)
		tot->gpus += (uint32_t)ts->st.cluster.nodes[i].nr_gpus;
}

int64_t kerf_ts_budget_spent_ms(const struct kerf_timesim *ts, int t)
{
	for (uint64_t i = 0; i < ts->st.nr_notices && i < KERF_NOTICES; i++)
		if (ts->st.notices[i].kind == KERF_NOTICE_BUDGET &&
		    ts->st.notices[i].tenant == t && ts->st.notices[i].pct == 100)
			return ts->st.notices[i].at_ms;
	return -1;
}

/* A share in ppm as "33.0%", or "-" for -1 (nothing to share). */
static void fmt_ppm(char *buf, size_t size, int64_t ppm)
{
	if (ppm < 0)
		snprintf(buf, size, "-");
	else
		kerf_units_percent((double)ppm / 1e4, 1, buf, size);
}

/* Share / entitlement of leaf t over sixths of the run, one line. */
static void over_time_line(FILE *out, const struct kerf_timesim *ts, int t,
			   const char *name)
{
	fprintf(out, "%-28s", name);
	for (int k = 0; k < 6; k++) {
		int64_t s_sum = 0, o_sum = 0, s_nr = 0;
		char sh[16], ow[16], cell[40];

		for (int j = k * KERF_TS_WINDOWS / 6; j < (k + 1) * KERF_TS_WINDOWS / 6; j++) {
			int64_t a, b;

			kerf_ts_window_ppm(ts, t, j, &a, &b);
			if (a < 0 || b < 0)
				continue;
			s_sum += a;
			o_sum += b;
			s_nr++;
		}
		if (s_nr) {
			fmt_ppm(sh, sizeof(sh), s_sum / s_nr);
			fmt_ppm(ow, sizeof(ow), o_sum / s_nr);
			snprintf(cell, sizeof(cell), "%s/%s", sh, ow);
		} else {
			snprintf(cell, sizeof(cell), "-");
		}
		fprintf(out, " %13s", cell);
	}
	fprintf(out, "\n");
}

void kerf_ts_report_text(FILE *out, const struct kerf_timesim *ts, bool wide)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	char p50[32], p95[32], p99[32], name[96], ent[16], share[16], gh[32], lost[32];

	if (wide)
		fprintf(out, "%-28s %6s %8s %8s %12s %11s %8s %8s %8s %9s %12s %7s\n",
			"tenant", "weight", "entitled", "share", "GPU-hours", "started",
			"wait p50", "p95", "p99", "preempted", "lost", "evicted");
	else
		fprintf(out, "%-28s %6s %8s %8s %12s %11s %8s %9s %12s\n",
			"tenant", "weight", "entitled", "share", "GPU-hours", "started",
			"wait p99", "preempted", "lost");
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];
		char adm[32];

		kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
		kerf_units_duration(kerf_ts_wait_pct(s, 50), p50, sizeof(p50));
		kerf_units_duration(kerf_ts_wait_pct(s, 95), p95, sizeof(p95));
		kerf_units_duration(kerf_ts_wait_pct(s, 99), p99, sizeof(p99));
		fmt_ppm(ent, sizeof(ent), kerf_ts_owed_ppm(ts, (int)t));
		fmt_ppm(share, sizeof(share), kerf_ts_share_ppm(ts, (int)t));
		kerf_units_gpu_hours((double)s->gpu_milli_ms / 3.6e9, gh, sizeof(gh));
		kerf_units_gpu_hours((double)s->lost_gpu_milli_ms / 3.6e9, lost, sizeof(lost));
		snprintf(adm, sizeof(adm), "%u/%u", (unsigned)s->nr_waits,
			 s->submitted);
		if (wide)
			fprintf(out, "%-28s %6u %8s %8s %12s %11s %8s %8s %8s %9u %12s %7u\n",
				name, tt->t[t].weight, ent, share, gh, adm, p50, p95, p99,
				s->preempted, lost, s->evicted);
		else
			fprintf(out, "%-28s %6u %8s %8s %12s %11s %8s %9u %12s\n",
				name, tt->t[t].weight, ent, share, gh, adm, p99,
				s->preempted, lost);
	}
	if (wide) {
		/* share / entitlement over time, six windows of the run, leaves */
		fprintf(out, "\nshare / entitled over time (of the GPUs in use, by sixths of the run)\n");
		for (size_t t = 1; t < tt->nr; t++) {
			if (tt->t[t].nr_children > 0)
				continue;
			kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
			over_time_line(out, ts, (int)t, name);
		}
	}
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];

		kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
		if (tt->t[t].budget.limit_milli_ms > 0) {
			int64_t all = kerf_ts_budget_spent_ms(ts, (int)t);

			kerf_units_percent(kerf_budget_used_pct(&tt->t[t]), 0, share, sizeof(share));
			/* the window may have reset since: say when it ran out */
			kerf_units_duration(all, p50, sizeof(p50));
			if (all < 0)
				fprintf(out, "%s: GPU-hour budget %s spent in the current window\n",
					name, share);
			else if (kerf_budget_used_pct(&tt->t[t]) < 100)
				fprintf(out, "%s: GPU-hour budget all spent after %s; its window has reset since, %s of the new one spent\n",
					name, p50, share);
			else
				fprintf(out, "%s: GPU-hour budget all spent after %s (%s of the window spent)\n",
					name, p50, share);
		}
		if (s->idle_reclaimed)
			fprintf(out, "%s: %u workloads reclaimed for holding GPUs idle\n",
				name, s->idle_reclaimed);
	}
	if (wide)
		fprintf(out, "\n%-16s %11s %8s %8s %8s %9s %7s %s\n", "class", "started",
			"wait p50", "p95", "p99", "preempted", "evicted",
			"started within 60s");
	else
		fprintf(out, "\n%-16s %11s %8s %9s %s\n", "class", "started",
			"wait p99", "preempted", "started within 60s");
	for (int c = 0; c < ts->st.classes.nr; c++) {
		const struct kerf_ts_tenant_stats *s = &ts->cls[c];
		int64_t slo = kerf_ts_slo_ppm(s);
		char adm[32], slo_s[48];

		kerf_units_duration(kerf_ts_wait_pct(s, 50), p50, sizeof(p50));
		kerf_units_duration(kerf_ts_wait_pct(s, 95), p95, sizeof(p95));
		kerf_units_duration(kerf_ts_wait_pct(s, 99), p99, sizeof(p99));
		snprintf(adm, sizeof(adm), "%u/%u", (unsigned)s->nr_waits, s->submitted);
		fmt_ppm(share, sizeof(share), slo);
		snprintf(slo_s, sizeof(slo_s), "%s%s", share,
			 slo >= 0 && !ts->st.classes.c[c].preemptible ? " (SLO)" : "");
		if (wide)
			fprintf(out, "%-16s %11s %8s %8s %8s %9u %7u %s\n",
				ts->st.classes.c[c].name, adm, p50, p95, p99, s->preempted,
				s->evicted, slo_s);
		else
			fprintf(out, "%-16s %11s %8s %9u %s\n",
				ts->st.classes.c[c].name, adm, p99, s->preempted, slo_s);
	}
}

/*
 * v rounded to dp decimals: a figure carries the digits it means, and YAML
 * prints it short (seconds to the ms, GPU-hours to 1/1000, percents to
 * 1/100).
 */
static json_t *real_dp(double v, int dp)
{
	double m = dp == 3 ? 1e3 : 1e2;

	return json_real(round(v * m) / m);
}

/* A wait percentile in seconds, null when nothing started. */
static json_t *wait_s(const struct kerf_ts_tenant_stats *s, int p)
{
	int64_t ms = kerf_ts_wait_pct(s, p);

	return ms < 0 ? json_null() : real_dp((double)ms / 1e3, 3);
}

/* A ppm as a percent, null for -1. */
static json_t *pct_of(int64_t ppm)
{
	return ppm < 0 ? json_null() : real_dp((double)ppm / 1e4, 2);
}

static json_t *tenant_json(const struct kerf_timesim *ts, int t)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	const struct kerf_ts_tenant_stats *s = &ts->tenant[t];
	json_t *x = json_object(), *series = json_array();
	char path[96];

	if (!x || !series) {
		json_decref(x);
		json_decref(series);
		return NULL;
	}
	kerf_ts_tenant_path(tt, t, path, sizeof(path));
	json_object_set_new(x, "name", json_string(path));
	json_object_set_new(x, "weight", json_integer(tt->t[t].weight));
	json_object_set_new(x, "weightEntitledPercent", pct_of(kerf_ts_entitlement_ppm(tt, t)));
	json_object_set_new(x, "entitledPercent", pct_of(kerf_ts_owed_ppm(ts, t)));
	json_object_set_new(x, "sharePercent", pct_of(kerf_ts_share_ppm(ts, t)));
	json_object_set_new(x, "gpuHours", real_dp((double)s->gpu_milli_ms / 3.6e9, 3));
	json_object_set_new(x, "submitted", json_integer(s->submitted));
	json_object_set_new(x, "started", json_integer((json_int_t)s->nr_waits));
	json_object_set_new(x, "finished", json_integer(s->finished));
	json_object_set_new(x, "evicted", json_integer(s->evicted));
	json_object_set_new(x, "preempted", json_integer(s->preempted));
	json_object_set_new(x, "idleReclaimed", json_integer(s->idle_reclaimed));
	json_object_set_new(x, "lostGPUHours", real_dp((double)s->lost_gpu_milli_ms / 3.6e9, 3));
	json_object_set_new(x, "waitP50Seconds", wait_s(s, 50));
	json_object_set_new(x, "waitP95Seconds", wait_s(s, 95));
	json_object_set_new(x, "waitP99Seconds", wait_s(s, 99));
	if (tt->t[t].budget.limit_milli_ms > 0) {
		int64_t at = kerf_ts_budget_spent_ms(ts, t);
		json_t *b = json_object();

		json_object_set_new(b, "limitGPUHours",
				    real_dp((double)tt->t[t].budget.limit_milli_ms / 3.6e9, 3));
		json_object_set_new(b, "spentPercent", json_integer(kerf_budget_used_pct(&tt->t[t])));
		json_object_set_new(b, "exhaustedAtSeconds",
				    at < 0 ? json_null() : real_dp((double)at / 1e3, 3));
		json_object_set_new(x, "budget", b);
	} else {
		json_object_set_new(x, "budget", json_null());
	}
	for (int k = 0; k < KERF_TS_WINDOWS; k++) {
		int64_t a, b, sh, ow;
		json_t *pt = json_object();

		window(ts, k, &a, &b);
		kerf_ts_window_ppm(ts, t, k, &sh, &ow);
		json_object_set_new(pt, "fromSeconds", real_dp((double)(a * ts->share_bucket_ms) / 1e3, 3));
		json_object_set_new(pt, "sharePercent", pct_of(sh));
		json_object_set_new(pt, "entitledPercent", pct_of(ow));
		json_array_append_new(series, pt);
	}
	json_object_set_new(x, "overTime", series);
	return x;
}

static json_t *class_json(const struct kerf_timesim *ts, int c)
{
	const struct kerf_ts_tenant_stats *s = &ts->cls[c];

	return json_pack("{s:s, s:b, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:o}",
			 "name", ts->st.classes.c[c].name,
			 "preemptible", (int)ts->st.classes.c[c].preemptible,
			 "submitted", (json_int_t)s->submitted,
			 "started", (json_int_t)s->nr_waits,
			 "waitP50Seconds", wait_s(s, 50),
			 "waitP95Seconds", wait_s(s, 95),
			 "waitP99Seconds", wait_s(s, 99),
			 "preempted", (json_int_t)s->preempted,
			 "evicted", (json_int_t)s->evicted,
			 "startedWithinSLOPercent", pct_of(kerf_ts_slo_ppm(s)));
}

int kerf_ts_report_json(json_t *doc, const struct kerf_timesim *ts,
			const char *command)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	json_t *tenants = json_array(), *classes = json_array(), *pending;
	struct kerf_ts_totals tot;
	int bad = !tenants || !classes;

	kerf_ts_totals(ts, &tot);
	for (size_t t = 1; !bad && t < tt->nr; t++)
		bad = json_array_append_new(tenants, tenant_json(ts, (int)t)) < 0;
	for (int c = 0; !bad && c < ts->st.classes.nr; c++)
		bad = json_array_append_new(classes, class_json(ts, c)) < 0;
	pending = bad ? NULL : kerf_ts_pending_json(ts);
	if (!pending) {
		json_decref(tenants);
		json_decref(classes);
		return -1;
	}
	bad = json_object_set_new(doc, "source", json_pack(
		"{s:s, s:s, s:s, s:I, s:o}",
		"command", command,
		"name", ts->sc->name,
		"policy", ts->pol.name,
		"seed", (json_int_t)ts->sc->seed,
		"horizonSeconds", real_dp((double)ts->horizon_ms / 1e3, 3))) < 0;
	bad |= json_object_set_new(doc, "summary", json_pack(
		"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
		"nodes", (json_int_t)ts->st.cluster.nr_nodes,
		"gpus", (json_int_t)tot.gpus,
		"tenants", (json_int_t)(tt->nr - 1),
		"submitted", (json_int_t)kerf_timesim_submitted(ts),
		"started", (json_int_t)tot.started,
		"pending", (json_int_t)json_array_size(pending),
		"events", (json_int_t)ts->nr_events,
		"cycles", (json_int_t)ts->nr_cycles,
		"preemptions", (json_int_t)tot.preempted,
		"idleReclaimed", (json_int_t)tot.idle_reclaimed,
		"gpuHours", real_dp(tot.gpu_hours, 3),
		"lostGPUHours", real_dp(tot.lost_gpu_hours, 3))) < 0;
	bad |= json_object_set_new(doc, "tenants", tenants) < 0;
	bad |= json_object_set_new(doc, "classes", classes) < 0;
	bad |= json_object_set_new(doc, "pending", pending) < 0;
	return bad ? -1 : 0;
}
