/*
 * report_charts: each chart of a report as an inline SVG (report/svg.h),
 * appended to out; 0 or the buffer's failure.  A chart whose data the
 * report lacks (no time series in a placement batch, no curves in a time
 * run) is not drawn and returns 0: kerf_report_has_* say which are there.
 */
#ifndef KERF_REPORT_REPORT_CHARTS_H
#define KERF_REPORT_REPORT_CHARTS_H

#include <stdbool.h>

#include "base/buf.h"
#include "report/report.h"

/* Time-mode charts: there is a horizon. */
bool kerf_report_has_time(const struct kerf_report *r);

int kerf_chart_alloc(const struct kerf_report *r, struct kerf_buf *out);
int kerf_chart_share(const struct kerf_report *r, struct kerf_buf *out);
int kerf_chart_waits(const struct kerf_report *r, struct kerf_buf *out);
int kerf_chart_preempt(const struct kerf_report *r, struct kerf_buf *out);
int kerf_chart_gpu_map(const struct kerf_report *r, struct kerf_buf *out);
int kerf_chart_curves(const struct kerf_report *r, struct kerf_buf *out);

/* Time of sample k (0..KERF_REPORT_SAMPLES), ms. */
int64_t kerf_report_sample_ms(const struct kerf_report *r, int k);

/* Preemptions and lost GPU-hours x 1000 in window w of nr windows. */
void kerf_report_preempt_window(const struct kerf_report *r, int w, int nr,
				uint64_t *preempted, int64_t *lost_milli_hours);

/* GPUs held at the peak by tenant index t (fractions and MIG as parts). */
double kerf_report_gpus_at_peak(const struct kerf_report *r, int t);

#endif /* KERF_REPORT_REPORT_CHARTS_H */
