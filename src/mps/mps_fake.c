/*
 * The fake struct kerf_mps_ops (mps.h): daemons are numbers, commands are
 * recorded, starts and commands fail on request.
 */
#include "mps/mps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fake_start(void *ctx, const struct kerf_mps_spawn *s, int64_t *pid,
		      struct kerf_err *err)
{
	struct kerf_mps_fake *f = ctx;

	if (f->fail_starts) {
		f->fail_starts--;
		return kerf_err_set(err, -KERF_EIO, "fake: start for %s failed", s->gpu_uuid);
	}
	if (f->nr_started >= KERF_MPS_FAKE_MAX)
		return kerf_err_set(err, -KERF_ELIMIT, "fake: too many starts");
	if (f->next_pid == 0)
		f->next_pid = 1000;
	*pid = f->next_pid++;
	f->pids[f->nr_started] = *pid;
	f->dead[f->nr_started] = 0;
	f->nr_started++;
	return 0;
}

static int slot(const struct kerf_mps_fake *f, int64_t pid)
{
	for (size_t i = 0; i < f->nr_started; i++)
		if (f->pids[i] == pid)
			return (int)i;
	return -1;
}

static int fake_alive(void *ctx, int64_t pid)
{
	struct kerf_mps_fake *f = ctx;
	int i = slot(f, pid);
	return i >= 0 && !f->dead[i];
}

static void fake_kill(void *ctx, int64_t pid)
{
	kerf_mps_fake_kill(ctx, pid);
}

static int fake_control(void *ctx, const struct kerf_mps_spawn *s, const char *cmd,
			char *reply, size_t reply_size, struct kerf_err *err)
{
	struct kerf_mps_fake *f = ctx;
	char line[KERF_MPS_PATH_MAX + KERF_MPS_TEXT_MAX + 4];
	static const char set_pct[] = "set_default_active_thread_percentage ";

	if (f->fail_controls) {
		f->fail_controls--;
		return kerf_err_set(err, -KERF_EIO, "fake: '%s' failed", cmd);
	}
	if (f->nr_cmds >= KERF_MPS_FAKE_MAX)
		return kerf_err_set(err, -KERF_ELIMIT, "fake: too many commands");
	snprintf(line, sizeof(line), "%s: %s", s->pipe_dir, cmd);
	f->cmds[f->nr_cmds] = strdup(line);
	if (!f->cmds[f->nr_cmds])
		return -KERF_ENOMEM;
	f->nr_cmds++;
	if (!strncmp(cmd, set_pct, sizeof(set_pct) - 1))
		snprintf(f->last_pct, sizeof(f->last_pct), "%s", cmd + sizeof(set_pct) - 1);
	if (reply && reply_size) {
		const char *r = "";
		if (strcmp(cmd, "get_default_active_thread_percentage") == 0)
			r = f->pct_override[0] ? f->pct_override : f->last_pct;
		snprintf(reply, reply_size, "%s", r);
	}
	return 0;
}

void kerf_mps_fake_ops(struct kerf_mps_fake *fake, struct kerf_mps_ops *ops)
{
	ops->ctx = fake;
	ops->start = fake_start;
	ops->alive = fake_alive;
	ops->control = fake_control;
	ops->kill = fake_kill;
}

void kerf_mps_fake_kill(struct kerf_mps_fake *fake, int64_t pid)
{
	int i = slot(fake, pid);
	if (i >= 0)
		fake->dead[i] = 1;
}

void kerf_mps_fake_release(struct kerf_mps_fake *fake)
{
	for (size_t i = 0; i < fake->nr_cmds; i++)
		free(fake->cmds[i]);
	fake->nr_cmds = 0;
}
