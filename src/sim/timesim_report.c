#include "sim/timesim_report.h"

#include "core/budget.h"
#include "sim/timesim_pending.h"

#include <inttypes.h>
#include <jansson.h>
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

static void fmt_ms(char *buf, size_t size, int64_t ms)
{
	if (ms < 0)
		snprintf(buf, size, "-");
	else if (ms < 60000)
		snprintf(buf, size, "%" PRId64 "s", ms / 1000);
	else if (ms < 3600000)
		snprintf(buf, size, "%" PRId64 "m%02" PRId64 "s", ms / 60000,
			 ms / 1000 % 60);
	else
		snprintf(buf, size, "%" PRId64 "h%02" PRId64 "m", ms / 3600000,
			 ms / 60000 % 60);
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

void kerf_ts_report_text(FILE *out, const struct kerf_timesim *ts)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	char p50[32], p95[32], p99[32], name[96];

	fprintf(out, "%-28s %6s %9s %9s %10s %11s %8s %8s %8s %9s %8s %7s\n",
		"tenant", "weight", "entitled", "share", "GPU-hours", "started",
		"wait p50", "p95", "p99", "preempted", "lost GPU-h", "evicted");
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];
		char adm[32];

		kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
		fmt_ms(p50, sizeof(p50), kerf_ts_wait_pct(s, 50));
		fmt_ms(p95, sizeof(p95), kerf_ts_wait_pct(s, 95));
		fmt_ms(p99, sizeof(p99), kerf_ts_wait_pct(s, 99));
		snprintf(adm, sizeof(adm), "%u/%u", (unsigned)s->nr_waits,
			 s->submitted);
		fprintf(out, "%-28s %6u %8.1f%% %8.1f%% %10.1f %11s %8s %8s %8s %9u %8.2f %7u\n",
			name, tt->t[t].weight,
			(double)kerf_ts_owed_ppm(ts, (int)t) / 1e4,
			(double)kerf_ts_share_ppm(ts, (int)t) / 1e4,
			(double)s->gpu_milli_ms / 1000.0 / 3.6e6, adm, p50, p95, p99,
			s->preempted, (double)s->lost_gpu_milli_ms / 1000.0 / 3.6e6,
			s->evicted);
	}
	/* share / entitlement over time, six windows of the run, leaves */
	fprintf(out, "\nshare / entitled over time (%% of the GPUs in use, by sixths of the run)\n");
	for (size_t t = 1; t < tt->nr; t++) {
		if (tt->t[t].nr_children > 0)
			continue;
		kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
		fprintf(out, "%-28s", name);
		for (int k = 0; k < 6; k++) {
			int64_t s_sum = 0, o_sum = 0, s_nr = 0;

			for (int j = k * KERF_TS_WINDOWS / 6; j < (k + 1) * KERF_TS_WINDOWS / 6; j++) {
				int64_t sh, ow;

				kerf_ts_window_ppm(ts, (int)t, j, &sh, &ow);
				if (sh < 0 || ow < 0)
					continue;
				s_sum += sh;
				o_sum += ow;
				s_nr++;
			}
			if (s_nr)
				fprintf(out, " %5.1f/%-5.1f", (double)s_sum / (double)s_nr / 1e4,
					(double)o_sum / (double)s_nr / 1e4);
			else
				fprintf(out, " %11s", "-");
		}
		fprintf(out, "\n");
	}
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];

		kerf_ts_tenant_path(tt, (int)t, name, sizeof(name));
		if (tt->t[t].budget.limit_milli_ms > 0)
			fprintf(out, "%s: GPU-hour budget %.0f%% used in the current window\n",
				name, (double)kerf_budget_used_pct(&tt->t[t]));
		if (s->idle_reclaimed)
			fprintf(out, "%s: %u workloads reclaimed for holding GPUs idle\n",
				name, s->idle_reclaimed);
	}
	fprintf(out, "\n%-16s %11s %8s %8s %8s %9s %7s %s\n", "class", "started",
		"wait p50", "p95", "p99", "preempted", "evicted",
		"started within 60s");
	for (int c = 0; c < ts->st.classes.nr; c++) {
		const struct kerf_ts_tenant_stats *s = &ts->cls[c];
		int64_t slo = kerf_ts_slo_ppm(s);
		char adm[32], slo_s[48];

		fmt_ms(p50, sizeof(p50), kerf_ts_wait_pct(s, 50));
		fmt_ms(p95, sizeof(p95), kerf_ts_wait_pct(s, 95));
		fmt_ms(p99, sizeof(p99), kerf_ts_wait_pct(s, 99));
		snprintf(adm, sizeof(adm), "%u/%u", (unsigned)s->nr_waits, s->submitted);
		if (slo < 0)
			snprintf(slo_s, sizeof(slo_s), "-");
		else
			snprintf(slo_s, sizeof(slo_s), "%.1f%%%s", (double)slo / 1e4,
				 ts->st.classes.c[c].preemptible ? "" : " (SLO)");
		fprintf(out, "%-16s %11s %8s %8s %8s %9u %7u %s\n",
			ts->st.classes.c[c].name, adm, p50, p95, p99, s->preempted,
			s->evicted, slo_s);
	}
}

int kerf_ts_report_json(FILE *out, const struct kerf_timesim *ts)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	json_t *o = json_object(), *tenants = json_array(), *classes = json_array();
	json_t *pending;
	int rc;

	if (!o || !tenants || !classes) {
		json_decref(o);
		json_decref(tenants);
		json_decref(classes);
		return -1;
	}
	for (size_t t = 1; t < tt->nr; t++) {
		const struct kerf_ts_tenant_stats *s = &ts->tenant[t];
		json_t *x = json_object();

		json_object_set_new(x, "name", json_string(tt->t[t].name));
		json_object_set_new(x, "weight", json_integer(tt->t[t].weight));
		json_t *series = json_array();

		json_object_set_new(x, "weight_entitlement", json_real((double)kerf_ts_entitlement_ppm(tt, (int)t) / 1e6));
		json_object_set_new(x, "entitlement", json_real((double)kerf_ts_owed_ppm(ts, (int)t) / 1e6));
		json_object_set_new(x, "share", json_real((double)kerf_ts_share_ppm(ts, (int)t) / 1e6));
		for (int k = 0; k < KERF_TS_WINDOWS; k++) {
			int64_t a, b, sh, ow;
			json_t *pt = json_object();

			window(ts, k, &a, &b);
			kerf_ts_window_ppm(ts, (int)t, k, &sh, &ow);
			json_object_set_new(pt, "from_h", json_real((double)(a * ts->share_bucket_ms) / 3.6e6));
			json_object_set_new(pt, "share", sh < 0 ? json_null() : json_real((double)sh / 1e6));
			json_object_set_new(pt, "entitlement", ow < 0 ? json_null() : json_real((double)ow / 1e6));
			json_array_append_new(series, pt);
		}
		json_object_set_new(x, "over_time", series);
		json_object_set_new(x, "gpu_hours", json_real((double)s->gpu_milli_ms / 1000.0 / 3.6e6));
		json_object_set_new(x, "submitted", json_integer(s->submitted));
		json_object_set_new(x, "started", json_integer((json_int_t)s->nr_waits));
		json_object_set_new(x, "finished", json_integer(s->finished));
		json_object_set_new(x, "evicted", json_integer(s->evicted));
		json_object_set_new(x, "preempted", json_integer(s->preempted));
		json_object_set_new(x, "idle_reclaimed", json_integer(s->idle_reclaimed));
		json_object_set_new(x, "budget_used_pct", json_integer(kerf_budget_used_pct(&tt->t[t])));
		json_object_set_new(x, "lost_gpu_hours", json_real((double)s->lost_gpu_milli_ms / 1000.0 / 3.6e6));
		json_object_set_new(x, "wait_p50_s", json_real((double)kerf_ts_wait_pct(s, 50) / 1e3));
		json_object_set_new(x, "wait_p95_s", json_real((double)kerf_ts_wait_pct(s, 95) / 1e3));
		json_object_set_new(x, "wait_p99_s", json_real((double)kerf_ts_wait_pct(s, 99) / 1e3));
		json_array_append_new(tenants, x);
	}
	for (int c = 0; c < ts->st.classes.nr; c++) {
		const struct kerf_ts_tenant_stats *s = &ts->cls[c];
		json_t *x = json_object();

		json_object_set_new(x, "name", json_string(ts->st.classes.c[c].name));
		json_object_set_new(x, "preemptible", json_boolean(ts->st.classes.c[c].preemptible));
		json_object_set_new(x, "submitted", json_integer(s->submitted));
		json_object_set_new(x, "started", json_integer((json_int_t)s->nr_waits));
		json_object_set_new(x, "wait_p50_s", json_real((double)kerf_ts_wait_pct(s, 50) / 1e3));
		json_object_set_new(x, "wait_p95_s", json_real((double)kerf_ts_wait_pct(s, 95) / 1e3));
		json_object_set_new(x, "wait_p99_s", json_real((double)kerf_ts_wait_pct(s, 99) / 1e3));
		json_object_set_new(x, "preempted", json_integer(s->preempted));
		json_object_set_new(x, "started_within_slo", json_real((double)kerf_ts_slo_ppm(s) / 1e6));
		json_array_append_new(classes, x);
	}
	json_object_set_new(o, "scenario", json_string(ts->sc->name));
	json_object_set_new(o, "horizon_s", json_real((double)ts->horizon_ms / 1e3));
	json_object_set_new(o, "events", json_integer((json_int_t)ts->nr_events));
	json_object_set_new(o, "cycles", json_integer((json_int_t)ts->nr_cycles));
	json_object_set_new(o, "tenants", tenants);
	json_object_set_new(o, "classes", classes);
	pending = kerf_ts_pending_json(ts);
	if (!pending) {
		json_decref(o);
		return -1;
	}
	json_object_set_new(o, "pending", pending);
	rc = json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(6));
	fputc('\n', out);
	json_decref(o);
	return rc;
}
