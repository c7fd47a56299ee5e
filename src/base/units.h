/*
 * units: the one way kerf writes a quantity for people (issue 13,
 * friction 9).  Every table, summary line and report of the CLI goes
 * through these, so the same number reads the same everywhere:
 *
 *   durations   kerf_units_duration: kubectl's AGE style ("0s", "45s",
 *               "3m12s", "58m", "3h58m", "5h", "2d3h"), rounded to the
 *               nearest second, never "85543s" or "33 s"
 *   run times   kerf_units_elapsed: a measured wall time, "0.42s",
 *               "12.3s", then as a duration ("3m12s")
 *   GPUs        kerf_units_gpus: milli-GPUs as GPUs ("2", "2.5", "0.125")
 *   GPU-hours   kerf_units_gpu_hours: "12.5 GPU-h"
 *   percentages kerf_units_percent: "33.0%" (decimals chosen by the
 *               caller, no space before the sign)
 *
 * JSON and YAML output never use these: there a duration is a number of
 * seconds in a key ending "Seconds", a share a number in a key ending
 * "Percent" or "Ratio" (docs/output.md).
 */
#ifndef KERF_BASE_UNITS_H
#define KERF_BASE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* ms as kubectl's HumanDuration, rounded to the nearest second;
 * "-" for a negative (not known). */
void kerf_units_duration(int64_t ms, char *buf, size_t size);

/* A measured run time in seconds: "0.42s" under 10 s, "12.3s" under
 * 2 min, then as kerf_units_duration. */
void kerf_units_elapsed(double seconds, char *buf, size_t size);

/* milli-GPUs as GPUs: "2", "2.5", "0.125"; "-" for a negative. */
void kerf_units_gpus(int64_t milli, char *buf, size_t size);

/* GPU-hours: "12.5 GPU-h" (one decimal; "0 GPU-h" for zero). */
void kerf_units_gpu_hours(double hours, char *buf, size_t size);

/* A percentage (0..100 and beyond) with the given decimals (0..3): "33%",
 * "33.0%", "213%". */
void kerf_units_percent(double pct, int decimals, char *buf, size_t size);

#endif
