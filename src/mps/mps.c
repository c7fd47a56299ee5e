/*
 * mps: the MPS control daemon manager (mps.h).
 */
#include "mps/mps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct daemon {
	uint32_t gpu_index;
	uint32_t uid;
	uint32_t gid;
	char uuid[KERF_MPS_UUID_MAX];
	char pipe_dir[KERF_MPS_PATH_MAX];
	char log_dir[KERF_MPS_PATH_MAX];
	struct kerf_mps_limits limits;
	enum kerf_mps_state state;
	int64_t pid;
	unsigned restarts;
	unsigned failures;
	int64_t up_since_ms;
	int64_t failed_at_ms;
	int64_t retry_at_ms;
	char why[KERF_ERR_MSG_MAX];
};

struct kerf_mps {
	struct kerf_mps_config cfg;
	char root[130];
	struct daemon d[KERF_MPS_MAX_DAEMONS];
	size_t nr;
};

const char *kerf_mps_state_name(enum kerf_mps_state s)
{
	switch (s) {
	case KERF_MPS_RUNNING:
		return "Running";
	case KERF_MPS_FAILED:
		return "Failed";
	case KERF_MPS_GAVE_UP:
		return "GaveUp";
	}
	return "Unknown";
}

int kerf_mps_new(struct kerf_mps **out, const struct kerf_mps_config *cfg,
		 struct kerf_err *err)
{
	const char *root = cfg->root_dir ? cfg->root_dir : KERF_MPS_DEFAULT_ROOT;
	struct kerf_mps *m;

	if (!cfg->ops.start || !cfg->ops.alive || !cfg->ops.control || !cfg->ops.kill)
		return kerf_err_set(err, -KERF_EINVAL, "mps: ops: start, alive, control and kill are all needed");
	if (root[0] != '/' || strlen(root) > 128)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mps: root directory '%.140s': must be an absolute path of at most 128 characters",
				    root);
	m = calloc(1, sizeof(*m));
	if (!m)
		return kerf_err_set(err, -KERF_ENOMEM, "mps: out of memory");
	m->cfg = *cfg;
	snprintf(m->root, sizeof(m->root), "%s", root);
	if (m->cfg.backoff_first_ms <= 0)
		m->cfg.backoff_first_ms = 1000;
	if (m->cfg.backoff_max_ms <= 0)
		m->cfg.backoff_max_ms = 30000;
	if (m->cfg.max_restarts == 0)
		m->cfg.max_restarts = 5;
	if (m->cfg.stable_ms <= 0)
		m->cfg.stable_ms = 60000;
	*out = m;
	return 0;
}

void kerf_mps_free(struct kerf_mps *m)
{
	free(m);
}

static void spawn_of(const struct daemon *d, struct kerf_mps_spawn *s)
{
	s->gpu_uuid = d->uuid;
	s->uid = d->uid;
	s->gid = d->gid;
	s->pipe_dir = d->pipe_dir;
	s->log_dir = d->log_dir;
}

static void view_of(const struct daemon *d, struct kerf_mps_view *v)
{
	v->gpu_index = d->gpu_index;
	v->uid = d->uid;
	v->gpu_uuid = d->uuid;
	v->pipe_dir = d->pipe_dir;
	v->limits = d->limits;
	v->state = d->state;
	v->pid = d->pid;
	v->restarts = d->restarts;
	v->failures = d->failures;
	v->failed_at_ms = d->failed_at_ms;
	v->retry_at_ms = d->retry_at_ms;
	v->why = d->why;
}

static void changed(const struct kerf_mps *m, const struct daemon *d)
{
	struct kerf_mps_view v;
	if (!m->cfg.on_change)
		return;
	view_of(d, &v);
	m->cfg.on_change(m->cfg.on_change_arg, &v);
}

static struct daemon *find(const struct kerf_mps *m, uint32_t gpu_index, uint32_t uid)
{
	for (size_t i = 0; i < m->nr; i++)
		if (m->d[i].gpu_index == gpu_index && m->d[i].uid == uid)
			return (struct daemon *)&m->d[i];
	return NULL;
}

/* Start the process, set its limits and read them back. */
static int bring_up(struct kerf_mps *m, struct daemon *d, struct kerf_err *err)
{
	const struct kerf_mps_ops *o = &m->cfg.ops;
	struct kerf_mps_spawn s;
	char cmds[2][KERF_MPS_TEXT_MAX];
	char reply[64], want[16];
	int64_t pid = 0;
	int rc;

	spawn_of(d, &s);
	rc = o->start(o->ctx, &s, &pid, err);
	if (rc < 0)
		return rc;
	size_t n = kerf_mps_limits_commands(&d->limits, cmds);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = o->control(o->ctx, &s, cmds[i], NULL, 0, err);
	if (rc == 0)
		rc = o->control(o->ctx, &s, "get_default_active_thread_percentage", reply,
				sizeof(reply), err);
	snprintf(want, sizeof(want), "%u", d->limits.thread_pct);
	if (rc == 0 && strcmp(reply, want) != 0 &&
	    !(strlen(reply) > strlen(want) && !strncmp(reply, want, strlen(want)) &&
	      reply[strlen(want)] == '.'))
		rc = kerf_err_set(err, -KERF_EIO,
				  "get_default_active_thread_percentage answered '%.40s', not %s",
				  reply, want);
	if (rc < 0) {
		/* Half up is not up: no client may reach a daemon without limits. */
		o->kill(o->ctx, pid);
		return rc;
	}
	d->pid = pid;
	return 0;
}

static void fail(struct kerf_mps *m, struct daemon *d, int64_t now_ms, const char *why)
{
	d->pid = 0;
	d->failed_at_ms = now_ms;
	snprintf(d->why, sizeof(d->why), "%s", why);
	if (d->failures >= m->cfg.max_restarts) {
		d->state = KERF_MPS_GAVE_UP;
		d->retry_at_ms = 0;
		return;
	}
	int64_t wait = m->cfg.backoff_first_ms;
	for (unsigned i = 0; i < d->failures && wait < m->cfg.backoff_max_ms; i++)
		wait *= 2;
	if (wait > m->cfg.backoff_max_ms)
		wait = m->cfg.backoff_max_ms;
	d->state = KERF_MPS_FAILED;
	d->retry_at_ms = now_ms + wait;
}

/* Bring d up (first start or restart); 0 when Running. */
static int attempt(struct kerf_mps *m, struct daemon *d, int64_t now_ms, struct kerf_err *err)
{
	struct kerf_err e = { 0 };
	int restarting = d->state != KERF_MPS_RUNNING;
	int rc = bring_up(m, d, &e);

	if (rc == 0) {
		if (restarting)
			d->restarts++;
		d->state = KERF_MPS_RUNNING;
		d->up_since_ms = now_ms;
		d->retry_at_ms = 0;
		d->why[0] = '\0';
		return 0;
	}
	d->failures++;
	char why[KERF_ERR_MSG_MAX];
	snprintf(why, sizeof(why), "MPS daemon for GPU %u (%.80s) UID %u did not come up: %.300s",
		 d->gpu_index, d->uuid, d->uid, e.msg);
	fail(m, d, now_ms, why);
	return kerf_err_set(err, rc, "%s", why);
}

static int check_uuid(const char *uuid, struct kerf_err *err)
{
	size_t n = uuid ? strlen(uuid) : 0;

	if (n == 0 || n >= KERF_MPS_UUID_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mps: gpu_uuid: must be 1..%d characters", KERF_MPS_UUID_MAX - 1);
	if (strspn(uuid, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mps: gpu_uuid '%.80s': only letters, digits and '-' (it names a directory)",
				    uuid);
	return 0;
}

int kerf_mps_start(struct kerf_mps *m, const struct kerf_mps_daemon *want,
		   int64_t now_ms, struct kerf_err *err)
{
	struct daemon *d;
	int rc;

	if (want->gpu_index >= KERF_MPS_MAX_GPUS)
		return kerf_err_set(err, -KERF_ERANGE, "mps: gpu_index %u: must be 0..%d",
				    want->gpu_index, KERF_MPS_MAX_GPUS - 1);
	if ((rc = check_uuid(want->gpu_uuid, err)) < 0 ||
	    (rc = kerf_mps_limits_check(&want->limits, err)) < 0)
		return rc;
	d = find(m, want->gpu_index, want->uid);
	if (d) {
		if (strcmp(d->uuid, want->gpu_uuid) != 0 ||
		    d->limits.thread_pct != want->limits.thread_pct ||
		    d->limits.pinned_mem_mib != want->limits.pinned_mem_mib)
			return kerf_err_set(err, -KERF_EBUSY,
					    "mps: GPU %u UID %u: the daemon runs for %.80s with %u%% and %" PRIu64 " MiB; stop it to change them",
					    d->gpu_index, d->uid, d->uuid, d->limits.thread_pct,
					    d->limits.pinned_mem_mib);
		if (d->state != KERF_MPS_GAVE_UP)
			return 0;
		d->failures = 0;
		rc = attempt(m, d, now_ms, err);
		changed(m, d);
		return rc;
	}
	if (m->nr >= KERF_MPS_MAX_DAEMONS)
		return kerf_err_set(err, -KERF_ELIMIT, "mps: %d daemons already",
				    KERF_MPS_MAX_DAEMONS);
	d = &m->d[m->nr];
	memset(d, 0, sizeof(*d));
	d->gpu_index = want->gpu_index;
	d->uid = want->uid;
	d->gid = want->gid;
	d->limits = want->limits;
	snprintf(d->uuid, sizeof(d->uuid), "%s", want->gpu_uuid);
	snprintf(d->pipe_dir, sizeof(d->pipe_dir), "%.129s/%.79s/%u/pipe", m->root,
		 want->gpu_uuid, want->uid);
	snprintf(d->log_dir, sizeof(d->log_dir), "%.129s/%.79s/%u/log", m->root,
		 want->gpu_uuid, want->uid);
	d->state = KERF_MPS_RUNNING;
	m->nr++;
	rc = attempt(m, d, now_ms, err);
	if (rc < 0)
		changed(m, d);
	return rc;
}

int kerf_mps_stop(struct kerf_mps *m, uint32_t gpu_index, uint32_t uid, struct kerf_err *err)
{
	const struct kerf_mps_ops *o = &m->cfg.ops;
	struct daemon *d = find(m, gpu_index, uid);
	struct kerf_mps_spawn s;

	if (!d)
		return kerf_err_set(err, -KERF_ENOTFOUND, "mps: no daemon for GPU %u UID %u",
				    gpu_index, uid);
	if (d->pid) {
		struct kerf_err e = { 0 };
		spawn_of(d, &s);
		if (o->control(o->ctx, &s, "quit", NULL, 0, &e) < 0)
			o->kill(o->ctx, d->pid);
	}
	*d = m->d[--m->nr];
	return 0;
}

int kerf_mps_poll(struct kerf_mps *m, int64_t now_ms)
{
	const struct kerf_mps_ops *o = &m->cfg.ops;
	int n = 0;

	for (size_t i = 0; i < m->nr; i++) {
		struct daemon *d = &m->d[i];
		if (d->state == KERF_MPS_RUNNING) {
			if (o->alive(o->ctx, d->pid)) {
				if (d->failures && now_ms - d->up_since_ms >= m->cfg.stable_ms)
					d->failures = 0;
				continue;
			}
			char why[KERF_ERR_MSG_MAX];
			snprintf(why, sizeof(why), "MPS daemon for GPU %u (%.80s) UID %u: process %" PRId64 " is gone",
				 d->gpu_index, d->uuid, d->uid, d->pid);
			fail(m, d, now_ms, why);
			changed(m, d);
			n++;
		} else if (d->state == KERF_MPS_FAILED && now_ms >= d->retry_at_ms) {
			enum kerf_mps_state before = d->state;
			attempt(m, d, now_ms, NULL);
			if (d->state != before)
				n++;
			/* a failed retry changes the reason and the next time */
			changed(m, d);
		}
	}
	return n;
}

uint64_t kerf_mps_failed_gpus(const struct kerf_mps *m)
{
	uint64_t mask = 0;
	for (size_t i = 0; i < m->nr; i++)
		if (m->d[i].state != KERF_MPS_RUNNING)
			mask |= UINT64_C(1) << m->d[i].gpu_index;
	return mask;
}

int kerf_mps_find(const struct kerf_mps *m, uint32_t gpu_index, uint32_t uid,
		  struct kerf_mps_view *out)
{
	const struct daemon *d = find(m, gpu_index, uid);
	if (!d)
		return -KERF_ENOTFOUND;
	view_of(d, out);
	return 0;
}
