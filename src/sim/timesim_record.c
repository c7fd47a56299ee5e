/*
 * timesim_record: the report data of a time-mode run, taken through the
 * run's hook.  The GPU map is taken again at each new peak of allocation
 * (allocation rises only in cycles, so this is bounded by the binds).
 */
#include "sim/timesim_record.h"

#include <stdlib.h>
#include <string.h>

#include "core/mig/geometry.h"
#include "core/mig/place.h"
#include "sim/timesim_pending.h"
#include "sim/timesim_report.h"

static int64_t alloc_now(const struct kerf_timesim *ts)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	int64_t g = 0;

	if (ts->gpu_capacity_milli <= 0)
		return 0;
	for (int i = KERF_RES_GPU0; i < tt->nr_res; i++)
		g += tt->t[KERF_TENANT_ROOT].usage.v[i];
	return g * 1000000 / ts->gpu_capacity_milli;
}

static void totals_now(const struct kerf_timesim *ts, uint64_t *preempted,
		       int64_t *lost)
{
	__int128 l = 0;

	*preempted = 0;
	for (int c = 0; c < ts->st.classes.nr; c++) {
		*preempted += ts->cls[c].preempted;
		l += ts->cls[c].lost_gpu_milli_ms;
	}
	*lost = (int64_t)(l / 1000);
}

/* The slices of instance start on a MIG GPU, as a count. */
static int inst_slices(const struct kerf_cluster *c, const struct kerf_node *n,
		       int g, int start)
{
	const struct kerf_mig_model *m = c->models[n->model].mig;
	const struct kerf_mig_layout *l = &n->mig->gpu[g];

	for (int i = 0; m && i < l->nr; i++)
		if (l->inst[i].start == start)
			return m->profiles[l->inst[i].profile].mem_slices;
	return 0;
}

static void map_node(const struct kerf_cluster *c, const struct kerf_node *n,
		     struct kerf_report_node *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", n->name);
	out->nr_gpus = n->nr_gpus;
	for (int g = 0; g < n->nr_gpus && g < KERF_REPORT_NODE_GPUS; g++) {
		struct kerf_report_gpu *gp = &out->gpu[g];
		bool down = n->gpus_down >> g & 1;

		gp->owner = KERF_REPORT_FREE;
		for (int k = 0; k < KERF_REPORT_MIG_SLICES; k++)
			gp->slices[k] = KERF_REPORT_FREE;
		gp->mig = n->mig && (n->mig_gpus >> g & 1);
		if (!gp->mig) {
			gp->used_milli = (int16_t)(KERF_GPU_MILLI -
				(down ? n->gpu_down_free_milli[g] : n->gpu_free_milli[g]));
			continue;
		}
		for (int i = 0; i < n->mig->gpu[g].nr; i++) {
			int s = n->mig->gpu[g].inst[i].start;
			int w = inst_slices(c, n, g, s);

			for (int k = s; k < s + w && k < KERF_REPORT_MIG_SLICES; k++)
				gp->slices[k] = KERF_REPORT_IDLE_SLICE;
		}
	}
}

/* Who holds what: each running pod's GPUs or MIG slices. */
static void map_pods(const struct kerf_timesim *ts, struct kerf_report *rep)
{
	const struct kerf_cluster *c = &ts->st.cluster;

	for (size_t i = 0; i < ts->st.nr_wl; i++) {
		const struct kerf_workload *w = ts->st.wl[i];

		for (uint32_t p = 0; w->pods && p < w->nr_bound; p++) {
			struct kerf_binding b = w->pods[p].b;
			uint32_t at = b.node < c->nr_slots ? c->pos[b.node] : KERF_NO_POS;
			struct kerf_report_node *rn;

			if (at == KERF_NO_POS || at >= rep->nr_nodes)
				continue;
			rn = &rep->nodes[at];
			for (int g = 0; g < rn->nr_gpus; g++) {
				struct kerf_report_gpu *gp = &rn->gpu[g];

				if (!(b.gpus >> g & 1))
					continue;
				if (gp->mig) {
					int s = b.mig_start;
					int n = inst_slices(c, &c->nodes[b.node], g, s);

					for (int k = s; k < s + n && k < KERF_REPORT_MIG_SLICES; k++)
						gp->slices[k] = w->tenant;
				} else if (gp->owner == KERF_REPORT_FREE) {
					gp->owner = w->tenant;
				} else if (gp->owner != w->tenant) {
					gp->owner = KERF_REPORT_MIXED;
				}
			}
		}
	}
}

static int take_map(struct kerf_ts_record *rec, const struct kerf_timesim *ts)
{
	const struct kerf_cluster *c = &ts->st.cluster;
	struct kerf_report *rep = rec->rep;

	if (c->nr_nodes > rep->nr_nodes || !rep->nodes) {
		struct kerf_report_node *grown =
			realloc(rep->nodes, (c->nr_nodes ? c->nr_nodes : 1) * sizeof(*grown));

		if (!grown)
			return -KERF_ENOMEM;
		rep->nodes = grown;
	}
	rep->nr_nodes = c->nr_nodes;
	for (size_t i = 0; i < c->nr_nodes; i++)
		map_node(c, &c->nodes[c->order[i]], &rep->nodes[i]);
	map_pods(ts, rep);
	return 0;
}

static void fill_to(struct kerf_ts_record *rec, int64_t before_ms, bool all)
{
	struct kerf_report *rep = rec->rep;

	while (rec->next_sample <= KERF_REPORT_SAMPLES &&
	       (all || rep->horizon_ms * rec->next_sample / KERF_REPORT_SAMPLES <
				before_ms)) {
		rep->alloc_ppm[rec->next_sample] = rec->alloc_ppm;
		rep->preempted_cum[rec->next_sample] = rec->preempted;
		rep->lost_milli_ms_cum[rec->next_sample] = rec->lost_milli_ms;
		rec->next_sample++;
	}
}

static int on_event(void *ctx, struct kerf_timesim *ts,
		    const struct kerf_event *ev)
{
	struct kerf_ts_record *rec = ctx;
	struct kerf_report *rep = rec->rep;

	fill_to(rec, ts->now_ms, false);
	rec->alloc_ppm = alloc_now(ts);
	totals_now(ts, &rec->preempted, &rec->lost_milli_ms);
	if (rec->rc == 0 && (rep->peak_ms < 0 || rec->alloc_ppm > rep->peak_alloc_ppm)) {
		rep->peak_alloc_ppm = rec->alloc_ppm;
		rep->peak_ms = ts->now_ms;
		rec->rc = take_map(rec, ts);
	}
	return rec->next ? rec->next(rec->next_ctx, ts, ev) : 0;
}

void kerf_ts_record_attach(struct kerf_ts_record *rec, struct kerf_timesim *ts,
			   struct kerf_report *rep)
{
	memset(rec, 0, sizeof(*rec));
	rec->rep = rep;
	rec->next = ts->hook;
	rec->next_ctx = ts->hook_ctx;
	rep->horizon_ms = ts->horizon_ms;
	ts->hook = on_event;
	ts->hook_ctx = rec;
}

static void tenant_figures(const struct kerf_timesim *ts, int t,
			   struct kerf_report_tenant *out)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	const struct kerf_ts_tenant_stats *s = &ts->tenant[t];

	memset(out, 0, sizeof(*out));
	kerf_ts_tenant_path(tt, t, out->name, sizeof(out->name));
	out->index = t;
	out->leaf = tt->t[t].nr_children == 0;
	out->submitted = s->submitted;
	out->started = (uint32_t)s->nr_waits;
	out->preempted = s->preempted;
	out->gpu_milli_hours = (int64_t)(s->gpu_milli_ms / 3600000);
	out->lost_milli_hours = (int64_t)(s->lost_gpu_milli_ms / 3600000);
	for (int k = 0; k < KERF_REPORT_WINDOWS; k++)
		kerf_ts_window_ppm(ts, t, k * KERF_TS_WINDOWS / KERF_REPORT_WINDOWS,
				   &out->share_ppm[k], &out->owed_ppm[k]);
	for (size_t i = 0; i < ts->st.nr_wl; i++)
		out->pending += ts->st.wl[i]->state == KERF_WL_PENDING &&
				ts->st.wl[i]->tenant == t;
}

static void class_figures(const struct kerf_timesim *ts, int c,
			  struct kerf_report_class *out)
{
	const struct kerf_ts_tenant_stats *s = &ts->cls[c];

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", ts->st.classes.c[c].name);
	out->preemptible = ts->st.classes.c[c].preemptible;
	out->submitted = s->submitted;
	out->started = (uint32_t)s->nr_waits;
	out->wait_p50_ms = kerf_ts_wait_pct(s, 50);
	out->wait_p99_ms = kerf_ts_wait_pct(s, 99);
	for (size_t i = 0; s->waits_ms && i < s->nr_waits; i++)
		out->wait_bins[kerf_report_wait_bin(s->waits_ms[i])]++;
}

int kerf_ts_record_finish(struct kerf_ts_record *rec,
			  const struct kerf_timesim *ts, struct kerf_err *err)
{
	const struct kerf_tenants *tt = &ts->st.tenants;
	struct kerf_report *rep = rec->rep;
	size_t nr_t = tt->nr > 1 ? tt->nr - 1 : 0;
	int nr_c = ts->st.classes.nr;

	if (rec->rc < 0)
		return kerf_err_set(err, rec->rc, "report: out of memory");
	fill_to(rec, 0, true);
	if (rep->peak_ms < 0)
		rep->peak_ms = 0;
	rep->tenants = calloc(nr_t ? nr_t : 1, sizeof(*rep->tenants));
	rep->classes = calloc(nr_c > 0 ? (size_t)nr_c : 1, sizeof(*rep->classes));
	if (!rep->tenants || !rep->classes)
		return kerf_err_set(err, -KERF_ENOMEM, "report: out of memory");
	for (size_t t = 1; t < tt->nr; t++) {
		if (tt->t[t].removed)
			continue;
		tenant_figures(ts, (int)t, &rep->tenants[rep->nr_tenants]);
		rep->started += rep->tenants[rep->nr_tenants].started;
		rep->nr_tenants++;
	}
	for (int c = 0; c < nr_c; c++)
		class_figures(ts, c, &rep->classes[rep->nr_classes++]);
	rep->submitted = (uint32_t)kerf_timesim_submitted(ts);
	rep->pending = (uint32_t)kerf_ts_nr_pending(ts);
	rep->nr_events = ts->nr_events;
	rep->gpu_capacity_milli = ts->gpu_capacity_milli;
	return 0;
}
