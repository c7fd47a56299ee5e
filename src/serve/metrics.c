/*
 * metrics: the /metrics text of kerf serve (Prometheus exposition format
 * 0.0.4): every family with its HELP and TYPE lines, label values escaped
 * (backslash, double quote and newline, as the format asks), a limit
 * without bound written +Inf.  Counters end in _total; the cycle's
 * latency is a histogram in seconds (the unit Prometheus expects), from
 * the controller's milliseconds.
 */
#include "serve/metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/state.h"
#include "kube/informer.h"

const uint32_t kerf_hist_le_ms[KERF_HIST_BUCKETS] = {
	1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
};

void kerf_hist_observe(struct kerf_hist_ms *h, uint64_t ms)
{
	for (int i = 0; i < KERF_HIST_BUCKETS; i++)
		if (ms <= kerf_hist_le_ms[i])
			h->le[i]++;
	h->count++;
	h->sum_ms += ms;
}

static int head(struct kerf_buf *b, const char *name, const char *type,
		const char *help)
{
	return kerf_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{k1="v1",k2="v2"} value (labels: NULL-ended pairs). */
static int sample(struct kerf_buf *b, const char *name, const char *const *labels,
		  const char *value)
{
	int rc = kerf_buf_add_str(b, name);

	for (int i = 0; labels && labels[i] && rc == 0; i += 2) {
		rc = kerf_buf_addf(b, "%s%s=\"", i ? "," : "{", labels[i]);
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, labels[i + 1]);
		if (rc == 0)
			rc = kerf_buf_add_str(b, "\"");
	}
	if (rc == 0 && labels && labels[0])
		rc = kerf_buf_add_str(b, "}");
	if (rc == 0)
		rc = kerf_buf_addf(b, " %s\n", value);
	return rc;
}

static int sample_u64(struct kerf_buf *b, const char *name, const char *const *labels,
		      uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, v);
	return sample(b, name, labels, text);
}

static int qty(struct kerf_buf *b, const char *name, const char *const *labels,
	       int64_t v)
{
	char text[32];

	if (v == KERF_QTY_INF)
		snprintf(text, sizeof(text), "+Inf");
	else
		snprintf(text, sizeof(text), "%" PRId64, v);
	return sample(b, name, labels, text);
}

static int cycle_histogram(struct kerf_buf *b, const struct kerf_hist_ms *h)
{
	static const char name[] = "kerf_cycle_duration_seconds";
	char le[32], sum[48];
	int rc = head(b, name, "histogram", "Duration of scheduling cycles.");

	for (int i = 0; i < KERF_HIST_BUCKETS && rc == 0; i++) {
		const char *l[] = { "le", le, NULL };

		snprintf(le, sizeof(le), "%g", kerf_hist_le_ms[i] / 1000.0);
		rc = sample_u64(b, "kerf_cycle_duration_seconds_bucket", l, h->le[i]);
	}
	if (rc == 0) {
		const char *l[] = { "le", "+Inf", NULL };

		rc = sample_u64(b, "kerf_cycle_duration_seconds_bucket", l, h->count);
	}
	snprintf(sum, sizeof(sum), "%" PRIu64 ".%03" PRIu64, h->sum_ms / 1000, h->sum_ms % 1000);
	if (rc == 0)
		rc = sample(b, "kerf_cycle_duration_seconds_sum", NULL, sum);
	if (rc == 0)
		rc = sample_u64(b, "kerf_cycle_duration_seconds_count", NULL, h->count);
	return rc;
}

static int workloads(struct kerf_buf *b, const struct kerf_state *st,
		     const struct kerf_world_stats *ws)
{
	uint64_t pending = 0;
	int rc;

	for (size_t i = 0; i < st->nr_wl; i++)
		pending += st->wl[i]->state == KERF_WL_PENDING;
	rc = head(b, "kerf_workloads_pending", "gauge", "Workloads waiting in the scheduler's queue.");
	if (rc == 0)
		rc = sample_u64(b, "kerf_workloads_pending", NULL, pending);
	if (rc == 0)
		rc = head(b, "kerf_workloads_admitted_total", "counter", "Workloads the scheduling cycles admitted.");
	if (rc == 0)
		rc = sample_u64(b, "kerf_workloads_admitted_total", NULL, ws->nr_admitted);
	if (rc == 0)
		rc = head(b, "kerf_workloads_preempted_total", "counter", "Workloads asked to checkpoint and leave for others.");
	if (rc == 0)
		rc = sample_u64(b, "kerf_workloads_preempted_total", NULL, ws->nr_preempted);
	return rc;
}

static int tenant_gpus(struct kerf_buf *b, const struct kerf_state *st)
{
	static const char *const kinds[] = { "nominal", "borrowing", "lending" };
	int rc = head(b, "kerf_tenant_gpu_usage_milli", "gauge",
		      "GPU milli of admitted work charged to the tenant's subtree, per flavor.");

	for (size_t t = 0; t < st->tenants.nr && rc == 0; t++) {
		const struct kerf_tenant *tn = &st->tenants.t[t];

		for (size_t m = 0; m < st->cluster.nr_models && rc == 0 && !tn->removed; m++) {
			const char *l[] = { "tenant", tn->name, "flavor", st->cluster.models[m].name, NULL };

			rc = sample_u64(b, "kerf_tenant_gpu_usage_milli", l,
					(uint64_t)tn->usage.v[kerf_res_gpu((int)m)]);
		}
	}
	if (rc == 0)
		rc = head(b, "kerf_tenant_gpu_quota_milli", "gauge",
			  "The tenant's GPU quota per flavor in milli: nominal, borrowing and lending limits (+Inf: no limit).");
	for (size_t t = 0; t < st->tenants.nr && rc == 0; t++) {
		const struct kerf_tenant *tn = &st->tenants.t[t];

		for (size_t m = 0; m < st->cluster.nr_models && rc == 0 && !tn->removed; m++) {
			int i = kerf_res_gpu((int)m);
			const int64_t v[] = { tn->quota.nominal.v[i], tn->quota.borrow_limit.v[i],
					      tn->quota.lend_limit.v[i] };

			for (int k = 0; k < 3 && rc == 0; k++) {
				const char *l[] = { "tenant", tn->name, "flavor", st->cluster.models[m].name,
						    "kind", kinds[k], NULL };

				rc = qty(b, "kerf_tenant_gpu_quota_milli", l, v[k]);
			}
		}
	}
	return rc;
}

static int api_requests(struct kerf_buf *b, const struct kerf_kube_counters *kc)
{
	int rc = head(b, "kerf_api_requests_total", "counter",
		      "Answered attempts of requests to the Kubernetes API, by verb and HTTP status (<error>: no answer).");

	for (int v = 0; kc && v < KERF_KUBE_VERB_COUNT_ && rc == 0; v++)
		for (unsigned k = 0; k < KERF_KUBE_CODE_COUNT_ && rc == 0; k++) {
			const char *l[] = { "verb", kerf_kube_verb_name((enum kerf_kube_verb)v),
					    "code", kerf_kube_code_name(k), NULL };

			if (kc->codes[v][k])
				rc = sample_u64(b, "kerf_api_requests_total", l, kc->codes[v][k]);
		}
	return rc;
}

static int watch_restarts(struct kerf_buf *b, const struct kerf_controller *c)
{
	const struct kerf_informer *inf;
	const char *resource;
	int rc = head(b, "kerf_watch_restarts_total", "counter",
		      "Watches started again after the first, per resource (ended, dropped or expired).");

	for (unsigned k = 0; rc == 0 && (inf = kerf_controller_informer(c, k, &resource)); k++) {
		const char *l[] = { "resource", resource, NULL };

		rc = sample_u64(b, "kerf_watch_restarts_total", l,
				kerf_informer_stats(inf)->watch_restarts);
	}
	return rc;
}

int kerf_metrics_text(const struct kerf_controller *c,
		      const struct kerf_kube_counters *kc, int64_t now_ms,
		      struct kerf_buf *b)
{
	const struct kerf_controller_stats *s = kerf_controller_stats(c);
	const struct kerf_world *world = kerf_controller_world(c);
	const struct kerf_world_stats *w = kerf_world_stats(world);
	int rc = 0;

#define ONE(type, name, help, v)                                                \
	if (rc == 0)                                                            \
		rc = head(b, name, type, help);                                 \
	if (rc == 0)                                                            \
		rc = sample_u64(b, name, NULL, (uint64_t)(v))
	ONE("counter", "kerf_cycles_total", "Scheduling cycles run.", s->cycles);
	ONE("counter", "kerf_cycle_milliseconds_total", "Milliseconds spent in cycles.", s->cycle_ms_total);
	ONE("gauge", "kerf_cycle_max_milliseconds", "Longest cycle so far, in milliseconds.", s->cycle_ms_max);
	ONE("counter", "kerf_binds_sent_total", "Bindings sent.", s->binds_sent);
	ONE("counter", "kerf_binds_ok_total", "Bindings the API server took.", s->binds_ok);
	ONE("counter", "kerf_binds_conflict_total", "Bindings refused with 409 (the pod was bound already).", s->binds_conflict);
	ONE("counter", "kerf_binds_failed_total", "Bindings that failed otherwise.", s->binds_failed);
	ONE("counter", "kerf_binds_already_total", "Bindings refused with 409 because the pod was bound already where kerf binds it (counted as done).", s->binds_already);
	ONE("counter", "kerf_plans_sent_total", "Plan patches (kerf.io/planned-node) sent on gangs' pods before their bindings.", s->plans_sent);
	ONE("counter", "kerf_plans_failed_total", "Gangs placed again because their plan could not be written or their first binding failed.", s->plans_failed);
	ONE("counter", "kerf_gangs_partly_bound_total", "Gangs found partly bound (kerf stopped between their bindings).", w->nr_partial);
	ONE("counter", "kerf_gang_plans_finished_total", "Partly bound gangs finished from their plan.", w->nr_plans_finished);
	ONE("counter", "kerf_gang_plans_undone_total", "Partly bound gangs whose bound pods were evicted: their plan could not be carried out.", w->nr_plans_undone);
	ONE("counter", "kerf_idle_samples_total", "Idle samples of running workloads from their nodes' kerf.io/gpu-utilization.", w->nr_util_samples);
	ONE("counter", "kerf_gpu_utilization_unreadable_total", "Node updates whose kerf.io/gpu-utilization did not read (no samples taken from them).", w->nr_util_unreadable);
	ONE("counter", "kerf_binds_retried_total", "Bindings sent again because the pod stayed unbound after a 409 or a failure.", s->binds_retried);
	ONE("counter", "kerf_binds_given_up_total", "Workloads placed anew because their binding kept failing.", s->binds_given_up);
	ONE("counter", "kerf_pending_told_total", "PodScheduled=False conditions sent.", s->pending_sent);
	ONE("counter", "kerf_events_sent_total", "Events sent.", s->events_sent);
	ONE("counter", "kerf_preemption_requests_total", "Checkpoint requests and their withdrawals sent.", s->preempts_sent);
	ONE("counter", "kerf_evictions_sent_total", "Evictions sent.", s->evictions_sent);
	ONE("counter", "kerf_evictions_blocked_total", "Evictions a PodDisruptionBudget held back (429).", s->evictions_blocked);
	ONE("counter", "kerf_requests_failed_total", "Writes that failed.", s->requests_failed);
	ONE("counter", "kerf_objects_refused_total", "Objects from the API server that did not decode.", s->objects_refused);
	ONE("counter", "kerf_world_errors_total", "Changes the scheduler's state refused.", s->world_errors);
	ONE("counter", "kerf_workloads_submitted_total", "Workloads submitted.", w->nr_submitted);
	ONE("counter", "kerf_workloads_adopted_total", "Running workloads adopted.", w->nr_adopted);
	ONE("counter", "kerf_workloads_finished_total", "Workloads finished.", w->nr_finished);
	ONE("counter", "kerf_external_pods_total", "Other schedulers' GPU pods counted as used.", w->nr_external);
	ONE("counter", "kerf_invalid_pods_total", "Pods kerf will not place, told why.", w->nr_invalid);
	ONE("gauge", "kerf_leader", "1 while this replica leads.", kerf_controller_leading(c, now_ms) ? 1 : 0);
	ONE("gauge", "kerf_synced", "1 once every cache synced.", kerf_controller_synced(c) ? 1 : 0);
	ONE("gauge", "kerf_requests_in_flight", "Requests of ours not answered yet.", kerf_controller_in_flight(c));
#undef ONE
	if (rc == 0)
		rc = cycle_histogram(b, &s->cycle_hist);
	if (rc == 0)
		rc = workloads(b, kerf_world_state(world), w);
	if (rc == 0)
		rc = tenant_gpus(b, kerf_world_state(world));
	if (rc == 0)
		rc = api_requests(b, kc);
	if (rc == 0)
		rc = watch_restarts(b, c);
	return rc;
}
