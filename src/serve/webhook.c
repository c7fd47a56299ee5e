#include "serve/webhook.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/decide.h"
#include "admission/rules_handler.h"
#include "admission/server.h"

struct route_ctx {
	struct kerf_serve_webhook *w;
	enum kerf_admission_route route;
};

struct kerf_serve_webhook {
	const struct kerf_controller *c;
	struct kerf_admission_config cfg;
	struct kerf_webhook_server *srv;
	struct route_ctx routes[KERF_ROUTE_NR];
	pthread_mutex_t mu;
	struct kerf_admission_policy *cur;   /* under mu */
	bool ready;                          /* under mu */
	uint64_t gen;                        /* of cur; controller thread */
	int64_t built_ms;
	uint64_t published;                  /* snapshots; under mu */
	uint64_t failed;                     /* builds that failed; under mu */
};

/* The current snapshot, referenced, or NULL before the first. */
static struct kerf_admission_policy *current(struct kerf_serve_webhook *w)
{
	struct kerf_admission_policy *p;

	pthread_mutex_lock(&w->mu);
	p = kerf_admission_policy_get(w->cur);
	pthread_mutex_unlock(&w->mu);
	return p;
}

static int review(void *ctx, const char *path, const char *body, size_t len,
		  int64_t deadline_ms, struct kerf_webhook_answer *ans)
{
	struct route_ctx *rc = ctx;
	struct kerf_admission_policy *p = current(rc->w);
	int r;

	(void)path;
	(void)deadline_ms;            /* decisions take microseconds */
	if (!p)
		return -KERF_EBUSY;   /* not ready: answered 500, failurePolicy */
	r = kerf_webhook_rules_answer(p, rc->route, body, len, ans);
	kerf_admission_policy_put(p);
	return r;
}

static bool ready(void *ctx)
{
	struct kerf_serve_webhook *w = ctx;
	bool r;

	pthread_mutex_lock(&w->mu);
	r = w->ready;
	pthread_mutex_unlock(&w->mu);
	return r;
}

int kerf_serve_webhook_start(const struct kerf_serve_webhook_opts *o,
			     const struct kerf_controller *c,
			     struct kerf_serve_webhook **out,
			     struct kerf_err *err)
{
	struct kerf_serve_webhook *w = calloc(1, sizeof(*w));
	struct kerf_webhook_route routes[KERF_ROUTE_NR];
	struct kerf_webhook_opts so = { 0 };
	int rc;

	if (!w)
		return kerf_err_set(err, -KERF_ENOMEM, "webhook: out of memory");
	w->c = c;
	w->cfg = *o->cfg;
	pthread_mutex_init(&w->mu, NULL);
	for (int r = 0; r < KERF_ROUTE_NR; r++) {
		w->routes[r] = (struct route_ctx){ w, (enum kerf_admission_route)r };
		routes[r] = (struct kerf_webhook_route){
			kerf_admission_route_path((enum kerf_admission_route)r),
			review, &w->routes[r] };
	}
	so.addr = o->addr;
	so.cert_path = o->cert_path;
	so.key_path = o->key_path;
	so.routes = routes;
	so.nr_routes = KERF_ROUTE_NR;
	so.threads = o->threads;
	so.ready = ready;
	so.ready_ctx = w;
	rc = kerf_webhook_start(&so, &w->srv, err);
	if (rc < 0) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void kerf_serve_webhook_step(struct kerf_serve_webhook *w, int64_t now_ms)
{
	struct kerf_admission_policy *p, *old;
	uint64_t gen;
	bool synced;

	if (!w)
		return;
	synced = kerf_controller_synced(w->c);
	gen = kerf_controller_policy_generation(w->c);
	if (w->cur && gen == w->gen && synced == w->ready)
		return;               /* nothing changed */
	if (w->cur && synced == w->ready && now_ms - w->built_ms < 1000)
		return;               /* changes come in bursts: once a second */
	if (kerf_controller_admission_policy(w->c, &w->cfg, &p) < 0) {
		pthread_mutex_lock(&w->mu);
		w->failed++;
		pthread_mutex_unlock(&w->mu);
		return;
	}
	w->gen = gen;
	w->built_ms = now_ms;
	pthread_mutex_lock(&w->mu);
	old = w->cur;
	w->cur = p;
	w->ready = synced;
	w->published++;
	pthread_mutex_unlock(&w->mu);
	kerf_admission_policy_put(old);
}

uint16_t kerf_serve_webhook_port(const struct kerf_serve_webhook *w)
{
	return kerf_webhook_port(w->srv);
}

int kerf_serve_webhook_metrics(struct kerf_serve_webhook *w,
			       struct kerf_buf *out)
{
	uint64_t published, failed;
	int rc;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->mu);
	published = w->published;
	failed = w->failed;
	pthread_mutex_unlock(&w->mu);
	rc = kerf_webhook_metrics_render(w->srv, out);
	if (rc == 0)
		rc = kerf_buf_addf(out,
			"# HELP kerf_webhook_policy_snapshots_total Policy snapshots the webhook decided from, published from the caches.\n"
			"# TYPE kerf_webhook_policy_snapshots_total counter\n"
			"kerf_webhook_policy_snapshots_total %llu\n"
			"# HELP kerf_webhook_policy_snapshot_failures_total Snapshots that could not be built (out of memory).\n"
			"# TYPE kerf_webhook_policy_snapshot_failures_total counter\n"
			"kerf_webhook_policy_snapshot_failures_total %llu\n",
			(unsigned long long)published, (unsigned long long)failed);
	return rc;
}

void kerf_serve_webhook_stop(struct kerf_serve_webhook *w)
{
	if (!w)
		return;
	kerf_webhook_stop(w->srv);
	kerf_admission_policy_put(w->cur);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
