/*
 * agent_http: the agent's endpoints on libmicrohttpd, run from the loop
 * (no thread of their own):
 *   /healthz  200 while the loop runs;
 *   /readyz   200 once the Node and the pods are read and every mark found
 *             is in the API, else 503 saying what waits;
 *   /metrics  the GPUs' telemetry (DCGM names, nvml/telemetry.h) and the
 *             agent's own kerf_agent_* series.
 */
#include "agent/agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/listen_addr.h"
#include "nvml/process_map.h"
#include "nvml/telemetry.h"

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
			     const char *text, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static int gauge(struct kerf_buf *b, const char *name, const char *help, const char *type,
		 double v)
{
	return kerf_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type,
			     name, v);
}

static int gpu_series(struct kerf_agent *a, struct kerf_buf *b, const struct kerf_agent_marks *m)
{
	int rc = kerf_buf_add_str(b,
		"# HELP kerf_agent_gpu_in_service 1 when the GPU takes new work, 0 when a mark keeps it out.\n"
		"# TYPE kerf_agent_gpu_in_service gauge\n");

	for (uint32_t i = 0; rc == 0 && i < a->inv.nr_gpus; i++) {
		rc = kerf_buf_addf(b, "kerf_agent_gpu_in_service{gpu=\"%u\",uuid=\"", a->inv.gpus[i].index);
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, a->inv.gpus[i].uuid);
		if (rc == 0)
			rc = kerf_buf_addf(b, "\"} %d\n", i < 64 && (m->gpus_down >> i & 1) ? 0 : 1);
	}
	if (rc == 0)
		rc = kerf_buf_add_str(b,
			"# HELP kerf_agent_xid_total NVML Xid and ECC events by class.\n"
			"# TYPE kerf_agent_xid_total counter\n");
	for (int k = 0; rc == 0 && k < AGENT_XID_CLASSES; k++)
		rc = kerf_buf_addf(b, "kerf_agent_xid_total{class=\"%s\"} %" PRIu64 "\n",
				   kerf_xid_class_name((enum kerf_xid_class)k), a->xid_by_class[k]);
	return rc;
}

/* The pod of a UID, for the per-process memory (nvml/process_map.h). */
static bool pod_of_uid(void *ctx, const char *uid, struct kerf_pod_ref *ref)
{
	struct kerf_agent *a = ctx;
	size_t n = kerf_informer_size(a->pods_inf);

	for (size_t i = 0; i < n; i++) {
		const struct agent_pod *p = kerf_informer_at(a->pods_inf, i, NULL);
		char buf[KERF_KPOD_UID_BUF];

		if (p && !strcmp(kerf_kpod_uid(&p->kp, buf), uid)) {
			ref->ns = kerf_kpod_ns(&p->kp);
			ref->name = kerf_kpod_name(&p->kp);
			ref->tenant = kerf_kpod_tenant(&p->kp);
			return true;
		}
	}
	return false;
}

/* Each pod's and tenant's GPU memory, from NVML's processes. */
static int process_series(struct kerf_agent *a, struct kerf_buf *b)
{
	struct kerf_gpu_processes procs;
	struct kerf_pod_table_ops ops = { .lookup = pod_of_uid };
	struct kerf_err err = { 0 };
	int rc;

	memset(&procs, 0, sizeof(procs));
	if (!kerf_nvml_has(a->o.nv, KERF_NVML_F_PROCESSES))
		return 0;
	rc = kerf_gpu_processes_read(&procs, a->o.nv, &a->inv, a->o.proc_root, &err);
	if (rc == 0)
		rc = kerf_gpu_process_metrics_text(&a->inv, &procs, &ops, a, b);
	kerf_gpu_processes_release(&procs);
	return rc;
}

int kerf_agent_metrics(struct kerf_agent *a, struct kerf_buf *b)
{
	struct kerf_gpu_sample s[KERF_GPU_MAX_GPUS];
	struct kerf_agent_event_stats es;
	struct kerf_agent_marks m;
	const struct kerf_agent_counters *c = &a->c;
	int rc = 0;

	kerf_agent_effective(a, &m);
	kerf_agent_events_stats(a->events, &es);
	memset(s, 0, sizeof(s));
	if (a->inv.state == KERF_GPU_INVENTORY_READ && a->inv.nr_gpus <= KERF_GPU_MAX_GPUS &&
	    a->o.nv && a->o.nv->initialised) {
		kerf_gpu_sample_read(a->o.nv, &a->inv, s);
		rc = kerf_gpu_metrics_text(&a->inv, s, a->node_name, b);
		if (rc == 0 && a->gpm)   /* the rates since the scrape before */
			rc = kerf_gpm_metrics(a->gpm, &a->inv, kerf_agent_now_ms(), a->node_name, b);
		if (rc == 0)
			rc = process_series(a, b);
	}
	if (rc == 0)
		rc = gauge(b, "kerf_agent_health_known", "1 when NVML is read and its events arrive.",
			   "gauge", a->unknown[0] ? 0 : 1);
	if (rc == 0)
		rc = gpu_series(a, b, &m);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_mig_instances_out_of_service",
			   "MIG instances a mark keeps out of allocation.", "gauge", m.nr_mig);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_node_failed", "1 when the node is cordoned for a lost GPU.",
			   "gauge", m.node_failed);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_nvml_waits_total", "NVML event waits made.", "counter",
			   (double)es.waits);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_nvml_wait_errors_total",
			   "NVML event waits that failed other than by timeout.", "counter",
			   (double)es.wait_errors);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_nvml_events_dropped_total",
			   "Events dropped from a full queue (none that take a GPU out).", "counter",
			   (double)es.dropped);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_marks_added_total", "Health marks added.", "counter",
			   (double)c->marks_added);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_health_report_seconds",
			   "From the last event that added a mark to the mark in the API.", "gauge",
			   (double)c->last_report_ms / 1000.0);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_health_report_max_seconds",
			   "The longest such time since the agent started.", "gauge",
			   (double)c->max_report_ms / 1000.0);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_node_writes_total", "Node writes that landed.", "counter",
			   (double)(c->node_writes + c->status_writes));
	if (rc == 0)
		rc = gauge(b, "kerf_agent_node_write_conflicts_total",
			   "Node writes refused because the Node changed (written again).", "counter",
			   (double)c->write_conflicts);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_node_write_errors_total", "Node writes that failed.",
			   "counter", (double)c->write_errors);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_evictions_total", "Pods evicted off an unhealthy GPU.",
			   "counter", (double)c->evictions);
	if (rc == 0)
		rc = gauge(b, "kerf_agent_results_untrusted_total",
			   "Pods marked kerf.io/results-untrusted.", "counter", (double)c->untrusted);
	if (rc == 0)
		rc = kerf_agent_pods_metrics(a, b);
	if (rc == 0 && a->mps)
		rc = kerf_agent_mps_metrics(a, b);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req_cls)
{
	struct kerf_agent *a = cls;
	struct kerf_buf b;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)upload_len;
	(void)req_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, 405, "text/plain", "method not allowed\n", 19);
	if (!strcmp(url, "/healthz"))
		return reply(conn, 200, "text/plain", "ok\n", 3);
	if (!strcmp(url, "/readyz")) {
		if (kerf_agent_ready(a))
			return reply(conn, 200, "text/plain", "ok\n", 3);
		const char *why = !a->node ? "waiting for the Node\n"
				  : a->fresh_since_ms ? "health marks not yet written\n"
						      : "waiting for the pods\n";
		return reply(conn, 503, "text/plain", why, strlen(why));
	}
	if (strcmp(url, "/metrics"))
		return reply(conn, 404, "text/plain", "not found\n", 10);
	kerf_buf_init(&b, 4u << 20);
	if (kerf_agent_metrics(a, &b) < 0) {
		kerf_buf_release(&b);
		return reply(conn, 500, "text/plain", "metrics: out of memory\n", 23);
	}
	ret = reply(conn, 200, "text/plain; version=0.0.4; charset=utf-8", kerf_buf_str(&b),
		    b.len);
	kerf_buf_release(&b);
	return ret;
}

static int listen_on(struct kerf_agent *a, const char *opt, const char *addr, void **out,
		     struct kerf_err *err)
{
	struct sockaddr_in sa;
	int rc;

	if ((rc = kerf_listen_addr_parse(addr, &sa, err)) < 0)
		return rc;
	*out = MHD_start_daemon(MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, a,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!*out)
		return kerf_err_set(err, -KERF_EIO, "%s %s: cannot listen there", opt, addr);
	return 0;
}

int kerf_agent_http_start(struct kerf_agent *a, struct kerf_err *err)
{
	int rc;

	if (a->o.metrics_addr &&
	    (rc = listen_on(a, "--metrics-addr", a->o.metrics_addr, &a->http, err)) < 0)
		return rc;
	if (a->o.health_addr &&
	    (rc = listen_on(a, "--health-addr", a->o.health_addr, &a->health, err)) < 0)
		return rc;
	return 0;
}

void kerf_agent_http_run(struct kerf_agent *a)
{
	if (a->http)
		MHD_run(a->http);
	if (a->health)
		MHD_run(a->health);
}

void kerf_agent_http_stop(struct kerf_agent *a)
{
	if (a->http)
		MHD_stop_daemon(a->http);
	if (a->health)
		MHD_stop_daemon(a->health);
	a->http = a->health = NULL;
}
