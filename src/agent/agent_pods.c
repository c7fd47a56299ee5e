/*
 * agent_pods: what health events do to the pods on a GPU (agent.h):
 * counted, annotated kerf.io/results-untrusted, evicted.
 */
#include "agent/agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "kobj/pod.h"

enum { EVICT_RETRY_MS = 10000 };

void kerf_agent_pod_job(struct kerf_agent *a, const struct agent_job *job)
{
	if (a->nr_jobs == AGENT_MAX_JOBS) {
		/* full: merge into the last job of the same GPU, never drop a drain */
		for (size_t i = a->nr_jobs; i-- > 0;)
			if (a->jobs[i].gpu == job->gpu) {
				a->jobs[i].actions |= job->actions;
				a->jobs[i].mig[0] = '\0';   /* the whole GPU: safe side */
				return;
			}
		a->jobs[a->nr_jobs - 1].actions |= job->actions;
		return;
	}
	a->jobs[a->nr_jobs++] = *job;
}

static struct agent_note *note_of(struct kerf_agent *a, const struct kerf_kpod *p)
{
	char key[256], uid[KERF_KPOD_UID_BUF];

	snprintf(key, sizeof(key), "%s/%s", kerf_kpod_ns(p), kerf_kpod_name(p));
	kerf_kpod_uid(p, uid);
	for (size_t i = 0; i < a->nr_notes; i++)
		if (!strcmp(a->notes[i].key, key) && !strcmp(a->notes[i].uid, uid))
			return &a->notes[i];
	if (a->nr_notes == AGENT_MAX_NOTES)
		return NULL;
	struct agent_note *n = &a->notes[a->nr_notes++];
	memset(n, 0, sizeof(*n));
	snprintf(n->key, sizeof(n->key), "%s", key);
	snprintf(n->uid, sizeof(n->uid), "%s", uid);
	snprintf(n->tenant, sizeof(n->tenant), "%s",
		 kerf_kpod_tenant(p) ? kerf_kpod_tenant(p) : "");
	return n;
}

bool kerf_agent_pod_gpus(const struct kerf_kpod *p, uint64_t *mask)
{
	const char *s = kerf_kpod_assigned_gpus(p);
	char item[8];
	uint64_t v;

	*mask = 0;
	while (s && *s) {
		size_t len = strcspn(s, ",");

		if (!len || len >= sizeof(item))
			return false;
		memcpy(item, s, len);
		item[len] = '\0';
		if (kerf_parse_u64(item, &v) < 0 || v > 63)
			return false;
		*mask |= 1ull << v;
		s += len;
		if (*s == ',' && !*++s)
			return false;
	}
	return *mask != 0;
}

/* Does pod p hold what job names (its GPU, or that MIG instance of it)? */
static bool hit(const struct kerf_kpod *p, const struct agent_job *job)
{
	const char *mig;
	uint64_t mask = 0;

	if (p->phase == KERF_PHASE_SUCCEEDED || p->phase == KERF_PHASE_FAILED ||
	    job->gpu < 0 || job->gpu > 63 || !kerf_agent_pod_gpus(p, &mask) ||
	    !(mask >> job->gpu & 1))
		return false;
	mig = kerf_kpod_assigned_mig(p);
	return !job->mig[0] || (mig && !strcmp(mig, job->mig));
}

static void run_job(struct kerf_agent *a, const struct agent_job *job)
{
	size_t n = kerf_informer_size(a->pods_inf);

	for (size_t i = 0; i < n; i++) {
		const struct kerf_kpod *p = kerf_informer_at(a->pods_inf, i, NULL);
		struct agent_note *note;

		if (!p || !hit(p, job) || !(note = note_of(a, p)))
			continue;
		if (job->actions & KERF_HEALTH_COUNT_POD)
			note->app_errors++;
		if (job->actions & KERF_HEALTH_UNTRUSTED && !note->untrusted) {
			note->untrusted = true;
			snprintf(note->reason, sizeof(note->reason), "%s", job->reason);
		}
		if (job->actions & (KERF_HEALTH_DRAIN | KERF_HEALTH_KILL_POD) && !a->o.no_drain)
			note->evict = true;
	}
}

static void split_key(const char *key, char *ns, size_t ns_size, char *name, size_t name_size)
{
	const char *slash = strchr(key, '/');
	size_t len = slash ? (size_t)(slash - key) : 0;

	snprintf(ns, ns_size, "%.*s", (int)len, key);
	snprintf(name, name_size, "%s", slash ? slash + 1 : key);
}

struct done_arg {
	struct kerf_agent *a;
	size_t note;
	bool evict;
};

static void pod_done(void *arg, const struct kerf_kube_response *resp)
{
	struct done_arg *d = arg;
	struct agent_note *n = &d->a->notes[d->note];

	n->inflight = false;
	if (resp->class == KERF_KUBE_OK || resp->http_status == 404) {
		if (d->evict) {
			n->evicted = true;
			d->a->c.evictions += resp->class == KERF_KUBE_OK;
		} else {
			n->untrusted_sent = true;
			d->a->c.untrusted += resp->class == KERF_KUBE_OK;
		}
	} else {
		/* 429: a disruption budget says not now; try again later */
		n->next_try_ms = kerf_agent_now_ms() + EVICT_RETRY_MS;
		if (resp->http_status != 429)
			fprintf(stderr, "kerf agent: pod %s: %s: %s\n", n->key,
				d->evict ? "eviction" : "annotation", resp->msg);
	}
	free(d);
}

static void act(struct kerf_agent *a, size_t i, int64_t now_ms)
{
	struct agent_note *n = &a->notes[i];
	char ns[128], name[256], path[512], *body = NULL;
	bool annotate_due = n->untrusted && !n->untrusted_sent;
	bool evict_due = n->evict && !n->evicted;
	bool evict = !annotate_due;
	struct done_arg *d;
	uint64_t id = 0;

	if (n->inflight || now_ms < n->next_try_ms || (!annotate_due && !evict_due))
		return;
	split_key(n->key, ns, sizeof(ns), name, sizeof(name));
	json_t *j = evict ? json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "policy/v1",
				       "kind", "Eviction", "metadata", "name", name,
				       "namespace", ns)
			  : json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
				      KERF_ANN_RESULTS_UNTRUSTED, n->reason);
	if (j)
		body = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!body || !(d = malloc(sizeof(*d)))) {
		free(body);
		return;
	}
	*d = (struct done_arg){ .a = a, .note = i, .evict = evict };
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s%s", ns, name,
		 evict ? "/eviction" : "");
	struct kerf_kube_request req = {
		.method = evict ? "POST" : "PATCH", .path = path,
		.content_type = evict ? "application/json" : "application/merge-patch+json",
		.body = body, .body_len = strlen(body),
		.flags = evict ? KERF_KUBE_REQ_OWN_429 : KERF_KUBE_REQ_RETRYABLE,
	};
	n->inflight = true;
	if (a->o.ops->request(a->o.ops->ctx, &req, pod_done, d, &id) < 0) {
		n->inflight = false;
		n->next_try_ms = now_ms + EVICT_RETRY_MS;
		free(d);
	}
	free(body);
}

void kerf_agent_pods_step(struct kerf_agent *a, int64_t now_ms)
{
	for (size_t i = 0; i < a->nr_jobs; i++)
		run_job(a, &a->jobs[i]);
	a->nr_jobs = 0;
	for (size_t i = 0; i < a->nr_notes; i++)
		act(a, i, now_ms);
}

int kerf_agent_pods_metrics(const struct kerf_agent *a, struct kerf_buf *b)
{
	int rc = kerf_buf_add_str(b,
		"# HELP kerf_agent_pod_gpu_errors_total Application GPU errors (Xid) counted against a pod.\n"
		"# TYPE kerf_agent_pod_gpu_errors_total counter\n");

	for (size_t i = 0; rc == 0 && i < a->nr_notes; i++) {
		const struct agent_note *n = &a->notes[i];
		char ns[128], name[256];

		if (!n->app_errors)
			continue;
		split_key(n->key, ns, sizeof(ns), name, sizeof(name));
		rc = kerf_buf_add_str(b, "kerf_agent_pod_gpu_errors_total{namespace=\"");
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, ns);
		if (rc == 0)
			rc = kerf_buf_add_str(b, "\",pod=\"");
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, name);
		if (rc == 0)
			rc = kerf_buf_add_str(b, "\",tenant=\"");
		if (rc == 0)
			rc = kerf_buf_add_prom_label(b, n->tenant);
		if (rc == 0)
			rc = kerf_buf_addf(b, "\"} %" PRIu64 "\n", n->app_errors);
	}
	return rc;
}
