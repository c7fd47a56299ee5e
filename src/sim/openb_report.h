/*
 * openb_report: how the results of `kerf sim openb` and `kerf sim placement`
 * are printed: a readable table (wide: each seed's figure too), a policy's
 * item of their -o json document, and the allocation curve as CSV.
 */
#ifndef KERF_SIM_OPENB_REPORT_H
#define KERF_SIM_OPENB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "sim/openb_batch.h"

void kerf_report_table_head(FILE *out);
/* A policy's row; wide adds a line of each seed's unallocated GPU (and
 * the defrag's tries, when it ran); runs[] are its per-seed results. */
void kerf_report_table_row(FILE *out, const struct kerf_batch_summary *s,
			   const struct kerf_run *runs, size_t nr_runs, bool wide);

/*
 * A policy's item of the OpenbRun and PlacementComparison documents
 * (docs/schema/OpenbRun.json): camelCase keys, percentages in keys ending
 * Percent..., wall time in wallSeconds; NULL when out of memory.
 */
json_t *kerf_report_item(const struct kerf_batch_summary *s,
			 const struct kerf_run *runs, size_t nr_runs);

/* CSV: policy,arrived_pct,alloc_pct_mean,alloc_pct_sd,unalloc_pct_mean */
void kerf_report_curve_head(FILE *out);
void kerf_report_curve_rows(FILE *out, const struct kerf_batch_summary *s,
			    int inflate_pct);

#endif /* KERF_SIM_OPENB_REPORT_H */
