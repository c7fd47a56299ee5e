#include "kube/fake.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/grow.h"

struct script {
	char *method;
	char *path;
	struct kerf_kube_fake_script s;   /* body and lines owned */
};

struct call {
	uint64_t id;
	bool watch;
	bool started;       /* a watch whose lines went out, left open */
	bool cancelled;
	size_t seq;         /* 1-based call number */
	struct script *sc;  /* NULL: nothing scripted */
	kerf_kube_line_fn on_line;
	kerf_kube_done_fn done;
	void *arg;
	char *path;
};

struct kerf_kube_fake {
	struct script **scripts;
	size_t nr_scripts, alloc_scripts;
	struct call **calls;            /* pending */
	size_t nr_calls, alloc_calls;
	struct kerf_kube_fake_call *log;
	size_t nr_log, alloc_log;
	unsigned fail_n;
	long fail_status;
	int fail_err;
	uint64_t now_ms;
	uint64_t next_id;
};

struct kerf_kube_fake *kerf_kube_fake_new(void)
{
	struct kerf_kube_fake *f = calloc(1, sizeof(*f));

	if (f)
		f->next_id = 1;
	return f;
}

static void script_free(struct script *sc)
{
	size_t i;

	if (!sc)
		return;
	free(sc->method);
	free(sc->path);
	free((char *)sc->s.body);
	for (i = 0; i < sc->s.nr_lines; i++)
		free((char *)sc->s.lines[i]);
	free((char **)sc->s.lines);
	free(sc);
}

static void call_free(struct call *c)
{
	script_free(c->sc);
	free(c->path);
	free(c);
}

void kerf_kube_fake_free(struct kerf_kube_fake *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nr_scripts; i++)
		script_free(f->scripts[i]);
	for (i = 0; i < f->nr_calls; i++)
		call_free(f->calls[i]);
	for (i = 0; i < f->nr_log; i++) {
		free(f->log[i].method);
		free(f->log[i].path);
	}
	free(f->scripts);
	free(f->calls);
	free(f->log);
	free(f);
}

int kerf_kube_fake_push(struct kerf_kube_fake *f, const char *method,
			const char *path, const struct kerf_kube_fake_script *s)
{
	struct script *sc;
	char **lines = NULL;
	size_t i;

	if (KERF_GROW(f->scripts, f->alloc_scripts, f->nr_scripts + 1) < 0)
		return -KERF_ENOMEM;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -KERF_ENOMEM;
	sc->s = *s;
	sc->s.body = NULL;
	sc->s.lines = NULL;
	sc->s.nr_lines = 0;
	sc->method = kerf_strdup(method);
	sc->path = kerf_strdup(path);
	sc->s.body = kerf_strdup(s->body ? s->body : "");
	if (s->nr_lines)
		lines = calloc(s->nr_lines, sizeof(*lines));
	sc->s.lines = (const char *const *)lines;
	for (i = 0; lines && i < s->nr_lines; i++) {
		lines[i] = kerf_strdup(s->lines[i]);
		if (!lines[i])
			break;
		sc->s.nr_lines++;
	}
	if (!sc->method || !sc->path || !sc->s.body ||
	    sc->s.nr_lines != s->nr_lines) {
		script_free(sc);
		return -KERF_ENOMEM;
	}
	f->scripts[f->nr_scripts++] = sc;
	return 0;
}

int kerf_kube_fake_push_answer(struct kerf_kube_fake *f, const char *method,
			       const char *path, long http_status,
			       const char *body)
{
	struct kerf_kube_fake_script s = { .http_status = http_status,
					   .body = body };

	return kerf_kube_fake_push(f, method, path, &s);
}

void kerf_kube_fake_fail_nth(struct kerf_kube_fake *f, unsigned n,
			     long http_status, int err)
{
	f->fail_n = n;
	f->fail_status = http_status;
	f->fail_err = err;
}

void kerf_kube_fake_set_now(struct kerf_kube_fake *f, uint64_t now_ms)
{
	f->now_ms = now_ms;
}

size_t kerf_kube_fake_nr_calls(const struct kerf_kube_fake *f)
{
	return f->nr_log;
}

const struct kerf_kube_fake_call *
kerf_kube_fake_call(const struct kerf_kube_fake *f, size_t i)
{
	return i < f->nr_log ? &f->log[i] : NULL;
}

size_t kerf_kube_fake_nr_open_watches(const struct kerf_kube_fake *f)
{
	size_t i, n = 0;

	for (i = 0; i < f->nr_calls; i++)
		n += f->calls[i]->watch && !f->calls[i]->cancelled;
	return n;
}

size_t kerf_kube_fake_nr_scripts_left(const struct kerf_kube_fake *f)
{
	return f->nr_scripts;
}

/* Take the first script for method and path (query ignored). */
static struct script *take_script(struct kerf_kube_fake *f, const char *method,
				  const char *path)
{
	size_t plen = strcspn(path, "?"), i;
	struct script *sc;

	for (i = 0; i < f->nr_scripts; i++) {
		sc = f->scripts[i];
		if (strcmp(sc->method, method) == 0 && strlen(sc->path) == plen &&
		    strncmp(sc->path, path, plen) == 0) {
			memmove(&f->scripts[i], &f->scripts[i + 1],
				(f->nr_scripts - i - 1) * sizeof(f->scripts[0]));
			f->nr_scripts--;
			return sc;
		}
	}
	return NULL;
}

static int add_call(struct kerf_kube_fake *f, const char *method,
		    const struct kerf_kube_request *req, bool watch,
		    kerf_kube_line_fn on_line, kerf_kube_done_fn done,
		    void *arg, uint64_t *id)
{
	struct kerf_kube_fake_call *lg;
	struct call *c;

	if (KERF_GROW(f->calls, f->alloc_calls, f->nr_calls + 1) < 0 ||
	    KERF_GROW(f->log, f->alloc_log, f->nr_log + 1) < 0)
		return -KERF_ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -KERF_ENOMEM;
	lg = &f->log[f->nr_log];
	lg->method = kerf_strdup(method);
	lg->path = kerf_strdup(req->path);
	c->path = kerf_strdup(req->path);
	if (!lg->method || !lg->path || !c->path) {
		free(lg->method);
		free(lg->path);
		call_free(c);
		return -KERF_ENOMEM;
	}
	f->nr_log++;
	c->seq = f->nr_log;
	c->id = f->next_id++;
	c->watch = watch;
	c->on_line = on_line;
	c->done = done;
	c->arg = arg;
	if (f->fail_n != c->seq)
		c->sc = take_script(f, method, req->path);
	else {
		struct kerf_kube_fake_script s = { .http_status = f->fail_status,
						   .err = f->fail_err };
		/* a one-off answer, not taken from the scripts */
		if (kerf_kube_fake_push(f, "\x01", "", &s) == 0)
			c->sc = take_script(f, "\x01", "");
	}
	f->calls[f->nr_calls++] = c;
	if (id)
		*id = c->id;
	return 0;
}

static int fake_request(void *ctx, const struct kerf_kube_request *req,
			kerf_kube_done_fn done, void *arg, uint64_t *id)
{
	return add_call(ctx, req->method, req, false, NULL, done, arg, id);
}

static int fake_watch(void *ctx, const struct kerf_kube_request *req,
		      kerf_kube_line_fn on_line, kerf_kube_done_fn done,
		      void *arg, uint64_t *id)
{
	return add_call(ctx, "WATCH", req, true, on_line, done, arg, id);
}

static void fake_cancel(void *ctx, uint64_t id)
{
	struct kerf_kube_fake *f = ctx;
	size_t i;

	for (i = 0; i < f->nr_calls; i++)
		if (f->calls[i]->id == id)
			f->calls[i]->cancelled = true;
}

static void answer(struct call *c, const struct script *sc)
{
	struct kerf_kube_response resp;
	char shown[200];

	memset(&resp, 0, sizeof(resp));
	kerf_kube_status_init(&resp.status);
	resp.body = "";
	resp.content_type = "application/json";
	resp.warning = "";
	resp.retry_after_s = -1;
	resp.attempts = 1;
	if (!sc) {
		resp.class = KERF_KUBE_TRANSPORT;
		resp.err = -KERF_ETRANSPORT;
		snprintf(resp.msg, sizeof(resp.msg), "fake: nothing scripted for '%s'",
			 kerf_escape(shown, sizeof(shown), c->path));
	} else if (sc->s.http_status == 0) {
		resp.class = KERF_KUBE_TRANSPORT;
		resp.err = sc->s.err ? sc->s.err : -KERF_ETRANSPORT;
		snprintf(resp.msg, sizeof(resp.msg), "fake: transport error");
	} else {
		resp.http_status = sc->s.http_status;
		resp.body = sc->s.body;
		resp.body_len = strlen(sc->s.body);
		if (sc->s.retry_after_s > 0)
			resp.retry_after_s = sc->s.retry_after_s;
		if (resp.http_status < 200 || resp.http_status >= 300)
			kerf_kube_status_decode(&resp.status, resp.body,
						resp.body_len);
		resp.class = kerf_kube_classify(resp.http_status,
						resp.status.reason);
		resp.err = kerf_kube_class_errno(resp.class);
		if (resp.class != KERF_KUBE_OK)
			snprintf(resp.msg, sizeof(resp.msg), "fake: HTTP %ld",
				 resp.http_status);
	}
	c->done(c->arg, &resp);
}

/* A watch: its lines, then its end.  true when it is over. */
static bool stream(struct call *c)
{
	const struct script *sc = c->sc;
	struct kerf_kube_response resp;
	size_t i;
	int rc = 0;

	if (!sc)
		return false;            /* quiet and open */
	if (sc->s.http_status != 200) {
		answer(c, sc);
		return true;
	}
	for (i = 0; i < sc->s.nr_lines && !c->cancelled && rc == 0; i++)
		rc = c->on_line(c->arg, sc->s.lines[i], strlen(sc->s.lines[i]));
	if (c->cancelled)
		return true;
	if (rc == 0 && sc->s.end == KERF_KUBE_FAKE_END_OPEN)
		return false;
	memset(&resp, 0, sizeof(resp));
	kerf_kube_status_init(&resp.status);
	resp.http_status = 200;
	resp.body = "";
	resp.content_type = "application/json";
	resp.warning = "";
	resp.retry_after_s = -1;
	resp.attempts = 1;
	resp.err = rc;
	if (rc == 0 && sc->s.end == KERF_KUBE_FAKE_END_DROP) {
		resp.class = KERF_KUBE_TRANSPORT;
		resp.err = -KERF_ETRANSPORT;
		snprintf(resp.msg, sizeof(resp.msg), "fake: stream dropped");
	}
	c->done(c->arg, &resp);
	return true;
}

int kerf_kube_fake_poll(struct kerf_kube_fake *f)
{
	size_t nr = f->nr_calls, i = 0, done = 0;

	while (i < nr && i < f->nr_calls) {
		struct call *c = f->calls[i];
		bool over;

		if (c->cancelled) {
			over = true;
		} else if (!c->watch) {
			answer(c, c->sc);
			over = true;
		} else if (c->started) {
			over = false;
		} else {
			c->started = true;
			over = stream(c);
		}
		if (over) {
			memmove(&f->calls[i], &f->calls[i + 1],
				(f->nr_calls - i - 1) * sizeof(f->calls[0]));
			f->nr_calls--;
			nr--;
			call_free(c);
			done++;
		} else {
			i++;
		}
	}
	return (int)done;
}

static int ops_poll(void *ctx, int timeout_ms)
{
	(void)timeout_ms;
	kerf_kube_fake_poll(ctx);
	return 0;
}

static uint64_t ops_now_ms(void *ctx)
{
	return ((struct kerf_kube_fake *)ctx)->now_ms;
}

void kerf_kube_fake_ops(struct kerf_kube_fake *f, struct kerf_kube_ops *ops)
{
	*ops = (struct kerf_kube_ops){
		.ctx = f,
		.request = fake_request,
		.watch = fake_watch,
		.cancel = fake_cancel,
		.poll = ops_poll,
		.now_ms = ops_now_ms,
	};
}
