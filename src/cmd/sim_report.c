/*
 * sim_report: --report and progress for the simulator's commands.
 */
#include "cmd/sim_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"

enum { REPORT_MAX_BYTES = 256 << 20 };

void kerf_sim_out_init(struct kerf_sim_out *o, const char *prog)
{
	memset(o, 0, sizeof(*o));
	o->prog = prog;
	kerf_report_init(&o->rep);
}

bool kerf_sim_out_option(struct kerf_sim_out *o, int c, const char *arg)
{
	if (c == 'R')
		o->report_arg = arg;
	else if (c == 'q')
		o->quiet = true;
	return c == 'R' || c == 'q';
}

int kerf_sim_out_open(struct kerf_sim_out *o)
{
	const char *path = o->report_arg;
	char shown[160], shown_tmp[168];
	size_t len;

	if (!path || o->path)
		return 0;
	len = strlen(path);
	kerf_escape(shown, sizeof(shown), path);
	o->format = kerf_report_format_of(path);
	if (o->format == KERF_REPORT_NONE) {
		fprintf(stderr, "%s: --report '%s': the format follows the file name, which must end in .html or .md\n",
			o->prog, shown);
		return 2;
	}
	o->tmp_path = malloc(len + 5);
	if (!o->tmp_path) {
		fprintf(stderr, "%s: out of memory\n", o->prog);
		return 2;
	}
	memcpy(o->tmp_path, path, len);
	memcpy(o->tmp_path + len, ".tmp", 5);
	o->tmp = fopen(o->tmp_path, "w");
	if (!o->tmp) {
		fprintf(stderr, "%s: --report '%s': cannot write '%s': %s\n", o->prog,
			shown, kerf_escape(shown_tmp, sizeof(shown_tmp), o->tmp_path),
			strerror(errno));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return 2;
	}
	o->path = path;
	return 0;
}

void kerf_sim_out_start(struct kerf_sim_out *o)
{
	if (o->progress_on)
		return;
	kerf_progress_init(&o->progress, o->prog, stderr,
			   isatty(STDERR_FILENO) == 1, o->quiet, NULL, NULL);
	o->progress_on = true;
}

static int on_event(void *ctx, struct kerf_timesim *ts,
		    const struct kerf_event *ev)
{
	struct kerf_sim_out *o = ctx;
	char detail[64];

	if (ts->horizon_ms > 0 && kerf_progress_is_due(&o->progress)) {
		snprintf(detail, sizeof(detail), "%.1f of %.1f h simulated",
			 (double)ts->now_ms / 3.6e6, (double)ts->horizon_ms / 3.6e6);
		kerf_progress_update(&o->progress,
				     ts->now_ms * 1000000 / ts->horizon_ms, detail);
	}
	return o->next ? o->next(o->next_ctx, ts, ev) : 0;
}

void kerf_sim_out_attach(struct kerf_sim_out *o, struct kerf_timesim *ts)
{
	if (o->path)
		kerf_ts_record_attach(&o->rec, ts, &o->rep);
	kerf_sim_out_start(o);
	o->next = ts->hook;
	o->next_ctx = ts->hook_ctx;
	ts->hook = on_event;
	ts->hook_ctx = o;
}

int kerf_sim_out_finish(struct kerf_sim_out *o, const struct kerf_timesim *ts,
			const char *title, const char *subtitle)
{
	struct kerf_err err = { 0 };

	if (!o->path)
		return 0;
	snprintf(o->rep.title, sizeof(o->rep.title), "%s", title);
	snprintf(o->rep.subtitle, sizeof(o->rep.subtitle), "%s", subtitle);
	if (kerf_ts_record_finish(&o->rec, ts, &err) < 0) {
		fprintf(stderr, "%s: %s\n", o->prog, err.msg);
		return 1;
	}
	return 0;
}

int kerf_sim_out_commit(struct kerf_sim_out *o)
{
	struct kerf_buf b;
	char shown[160];
	int rc;

	if (!o->path)
		return 0;
	kerf_escape(shown, sizeof(shown), o->path);
	kerf_buf_init(&b, REPORT_MAX_BYTES);
	rc = o->format == KERF_REPORT_HTML ? kerf_report_html(&o->rep, &b)
					   : kerf_report_md(&o->rep, &b);
	if (rc < 0) {
		fprintf(stderr, "%s: --report '%s': %s\n", o->prog, shown,
			kerf_strerror(rc));
		kerf_buf_release(&b);
		return 1;
	}
	if (b.len && fwrite(b.data, 1, b.len, o->tmp) != b.len)
		rc = -KERF_EIO;
	kerf_buf_release(&b);
	if (fclose(o->tmp) != 0)
		rc = -KERF_EIO;
	o->tmp = NULL;
	if (rc == 0 && rename(o->tmp_path, o->path) != 0)
		rc = -KERF_EIO;
	if (rc < 0) {
		fprintf(stderr, "%s: --report '%s': cannot write it: %s\n", o->prog,
			shown, strerror(errno));
		unlink(o->tmp_path);
		return 1;
	}
	free(o->tmp_path);
	o->tmp_path = NULL;
	return 0;
}

void kerf_sim_out_stop(struct kerf_sim_out *o)
{
	if (o->progress_on)
		kerf_progress_end(&o->progress);
	o->progress_on = false;
}

void kerf_sim_out_release(struct kerf_sim_out *o)
{
	kerf_sim_out_stop(o);
	if (o->tmp)
		fclose(o->tmp);
	if (o->tmp_path)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp = NULL;
	o->tmp_path = NULL;
	kerf_report_release(&o->rep);
}
