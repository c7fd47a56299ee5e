/*
 * sim_report: what `--report FILE` and the progress lines add to the
 * simulator's commands.  The file's format follows its name (.html or
 * .md, report/report.h); any other name, or a place that cannot be
 * written, is a usage error before the run.  The report is written to
 * FILE.tmp, created when the option is taken, and renamed to FILE only
 * once whole, so a failed or interrupted run never leaves half a report
 * under the name asked for.
 */
#ifndef KERF_CMD_SIM_REPORT_H
#define KERF_CMD_SIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cmd/progress.h"
#include "report/report.h"
#include "sim/timesim.h"
#include "sim/timesim_record.h"

struct kerf_sim_out {
	const char *prog;           /* "kerf sim run", borrowed */
	const char *report_arg;     /* --report as given, or NULL; borrowed */
	const char *path;           /* --report once FILE.tmp is made; borrowed */
	char *tmp_path;             /* path + ".tmp", owned */
	FILE *tmp;
	enum kerf_report_format format;
	bool quiet;                 /* --quiet: no progress */
	struct kerf_report rep;
	struct kerf_ts_record rec;
	struct kerf_progress progress;
	bool progress_on;
	kerf_ts_hook next;          /* the hook before progress's */
	void *next_ctx;
};

/* The long options both add, for a command's table. */
#define KERF_SIM_OUT_OPTIONS \
	{ "report", required_argument, NULL, 'R' }, \
	{ "quiet", no_argument, NULL, 'q' }

void kerf_sim_out_init(struct kerf_sim_out *o, const char *prog);

/*
 * Option c of KERF_SIM_OUT_OPTIONS ('R' --report, 'q' --quiet) taken with
 * its argument: true; false for any other option.
 */
bool kerf_sim_out_option(struct kerf_sim_out *o, int c, const char *arg);

/*
 * After every option is known good: --report's format from its name and
 * FILE.tmp created.  0 (also without --report), or 2 (the exit status)
 * after a message naming --report and the reason.
 */
int kerf_sim_out_open(struct kerf_sim_out *o);

/* Start the progress lines (unless --quiet). */
void kerf_sim_out_start(struct kerf_sim_out *o);

/*
 * A time-mode run: record it for the report (when asked) and report its
 * progress, through its hook.  Before kerf_timesim_run, after any other
 * hook is set.
 */
void kerf_sim_out_attach(struct kerf_sim_out *o, struct kerf_timesim *ts);

/* After a time-mode run: its report data (when asked); 0 or 1. */
int kerf_sim_out_finish(struct kerf_sim_out *o, const struct kerf_timesim *ts,
			const char *title, const char *subtitle);

/*
 * Write the report (when asked) and rename it into place; 0, or 1 after
 * a message.  o->rep is the data (filled by kerf_sim_out_finish or by
 * the caller).
 */
int kerf_sim_out_commit(struct kerf_sim_out *o);

/* End the progress lines (before printing the results). */
void kerf_sim_out_stop(struct kerf_sim_out *o);

/* End progress; a report not committed is removed (FILE.tmp). */
void kerf_sim_out_release(struct kerf_sim_out *o);

#endif /* KERF_CMD_SIM_REPORT_H */
