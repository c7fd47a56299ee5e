/*
 * openb_report: how the results of `kerf sim openb` are printed: a readable
 * table, one JSON object per policy, and the allocation curve as CSV.
 */
#ifndef KERF_SIM_OPENB_REPORT_H
#define KERF_SIM_OPENB_REPORT_H

#include <stdio.h>

#include "sim/openb_batch.h"

void kerf_report_table_head(FILE *out);
void kerf_report_table_row(FILE *out, const struct kerf_batch_summary *s);

/* One line of JSON for a policy; runs[] are its per-seed results. */
int kerf_report_json(FILE *out, const struct kerf_batch_summary *s,
		     const struct kerf_run *runs, size_t nr_runs);

/* CSV: policy,arrived_pct,alloc_pct_mean,alloc_pct_sd,unalloc_pct_mean */
void kerf_report_curve_head(FILE *out);
void kerf_report_curve_rows(FILE *out, const struct kerf_batch_summary *s,
			    int inflate_pct);

#endif /* KERF_SIM_OPENB_REPORT_H */
