#include "serve/leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

int kerf_elector_init(struct kerf_elector *e,
		      const struct kerf_elector_config *cfg,
		      struct kerf_err *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = kerf_kreq_check_name("lease namespace", cfg->ns, 63, err)) < 0 ||
	    (rc = kerf_kreq_check_name("lease name", cfg->name, 253, err)) < 0)
		return rc;
	if (!cfg->identity[0])
		return kerf_err_set(err, -KERF_EINVAL, "leader election: empty identity");
	if (cfg->duration_ms < 1000 || cfg->renew_deadline_ms <= 0 ||
	    cfg->renew_deadline_ms >= cfg->duration_ms || cfg->retry_ms <= 0 ||
	    cfg->retry_ms >= cfg->renew_deadline_ms)
		return kerf_err_set(err, -KERF_EINVAL,
				    "leader election: need retry < renew deadline < lease duration (>= 1 s), got %lld, %lld, %lld ms",
				    (long long)cfg->retry_ms,
				    (long long)cfg->renew_deadline_ms,
				    (long long)cfg->duration_ms);
	e->cfg = *cfg;
	return 0;
}

static void lease_path(const struct kerf_elector *e, struct kerf_kreq *r,
		       bool with_name)
{
	snprintf(r->path, sizeof(r->path),
		 "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s%s",
		 e->cfg.ns, with_name ? "/" : "", with_name ? e->cfg.name : "");
}

static int write_req(struct kerf_elector *e, struct kerf_kreq *r,
		     const char *method, bool with_name, struct kerf_err *err)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->content_type = "application/json";
	lease_path(e, r, with_name);
	r->body = kerf_lease_encode(&e->writing, e->cfg.ns, e->cfg.name);
	if (!r->body)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return 1;
}

/* Take or renew the lease read last, or wait while another holds it. */
static int decide(struct kerf_elector *e, int64_t now_ms, struct kerf_kreq *r,
		  struct kerf_err *err)
{
	const struct kerf_lease *s = &e->seen;
	bool mine = !strcmp(s->holder, e->cfg.identity);
	int64_t held_ms = (int64_t)s->duration_s * 1000;

	if (s->holder[0] && !mine && now_ms < e->observed_ms + held_ms) {
		e->next = KERF_ELECT_GET;
		e->next_ms = now_ms + e->cfg.retry_ms;
		return 0;
	}
	e->writing = *s;
	snprintf(e->writing.holder, sizeof(e->writing.holder), "%s", e->cfg.identity);
	e->writing.duration_s = (int32_t)(e->cfg.duration_ms / 1000);
	e->writing.renew_ms = now_ms;
	if (!mine) {
		e->writing.acquire_ms = now_ms;
		e->writing.transitions = s->transitions + 1;
	}
	return write_req(e, r, "PUT", true, err);
}

int kerf_elector_poll(struct kerf_elector *e, int64_t now_ms,
		      struct kerf_kreq *req, struct kerf_err *err)
{
	int rc;

	if (e->in_flight || now_ms < e->next_ms || e->next == KERF_ELECT_RELEASE)
		return 0;
	switch (e->next) {
	case KERF_ELECT_CREATE:
		rc = write_req(e, req, "POST", false, err);
		break;
	case KERF_ELECT_DECIDE:
		rc = decide(e, now_ms, req, err);
		break;
	default:
		memset(req, 0, sizeof(*req));
		req->method = "GET";
		lease_path(e, req, true);
		rc = 1;
		break;
	}
	if (rc == 1) {
		e->sent = e->next;
		e->in_flight = true;
	}
	return rc;
}

/* A record read or written: note when it last changed, on our clock. */
static void observe(struct kerf_elector *e, const struct kerf_lease *l,
		    int64_t now_ms)
{
	if (!e->have_seen || strcmp(l->holder, e->seen.holder) ||
	    l->renew_ms != e->seen.renew_ms || strcmp(l->rv, e->seen.rv))
		e->observed_ms = now_ms;
	e->seen = *l;
	e->have_seen = true;
}

static bool decode(const char *body, struct kerf_lease *l)
{
	json_t *j = body ? json_loads(body, 0, NULL) : NULL;
	bool ok = j && kerf_lease_decode(j, l, NULL) == 0;

	json_decref(j);
	return ok;
}

void kerf_elector_answer(struct kerf_elector *e, int64_t now_ms,
			 long http_status, const char *body)
{
	struct kerf_lease l;

	if (!e->in_flight)
		return;
	e->in_flight = false;
	/* by default: read again after a pause */
	e->next = KERF_ELECT_GET;
	e->next_ms = now_ms + e->cfg.retry_ms;
	switch (e->sent) {
	case KERF_ELECT_GET:
		if (http_status == 404) {
			memset(&e->writing, 0, sizeof(e->writing));
			snprintf(e->writing.holder, sizeof(e->writing.holder), "%s",
				 e->cfg.identity);
			e->writing.duration_s = (int32_t)(e->cfg.duration_ms / 1000);
			e->writing.acquire_ms = e->writing.renew_ms = now_ms;
			e->next = KERF_ELECT_CREATE;
			e->next_ms = now_ms;
		} else if (http_status == 200 && decode(body, &l)) {
			observe(e, &l, now_ms);
			if (strcmp(l.holder, e->cfg.identity))
				e->leading = false; /* somebody else holds it */
			e->next = KERF_ELECT_DECIDE;
			e->next_ms = now_ms;
		}
		return;
	case KERF_ELECT_CREATE:
	case KERF_ELECT_DECIDE:
		if ((http_status == 200 || http_status == 201) && decode(body, &l)) {
			if (!e->leading)
				e->nr_transitions++;
			observe(e, &l, now_ms);
			e->leading = true;
			e->renewed_ms = now_ms;
			e->next = KERF_ELECT_DECIDE; /* renew from what we wrote */
		}
		/* a 409 (a race, a stale rv) or a failure: read again */
		return;
	case KERF_ELECT_RELEASE:
		e->next = KERF_ELECT_RELEASE; /* done: nothing more */
		return;
	}
}

bool kerf_elector_is_leader(const struct kerf_elector *e, int64_t now_ms)
{
	return e->leading && now_ms < e->renewed_ms + e->cfg.renew_deadline_ms;
}

int kerf_elector_release(struct kerf_elector *e, int64_t now_ms,
			 struct kerf_kreq *req, struct kerf_err *err)
{
	int rc;

	if (!e->leading || strcmp(e->seen.holder, e->cfg.identity))
		return 0;
	e->writing = e->seen;
	e->writing.holder[0] = '\0';
	e->writing.duration_s = 1;
	e->writing.renew_ms = now_ms;
	e->leading = false;
	rc = write_req(e, req, "PUT", true, err);
	if (rc == 1) {
		e->sent = e->next = KERF_ELECT_RELEASE;
		e->in_flight = true;
	}
	return rc;
}
