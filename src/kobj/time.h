/*
 * time: Kubernetes timestamps.  metav1.Time is RFC 3339 to the second
 * ("2026-12-02T18:31:53Z"); MicroTime (leases, events) has exactly six
 * fractional digits ("2026-12-02T18:28:56.123456Z"), and the API server
 * refuses it with any other count.
 */
#ifndef KERF_KOBJ_TIME_H
#define KERF_KOBJ_TIME_H

#include <stddef.h>
#include <stdint.h>

enum {
	/* "YYYY-MM-DDTHH:MM:SS.ffffffZ" and a NUL; room for any int fields,
	   as -O3 checks the formats against them */
	KERF_TIME_TEXT_MAX = 96,
};

/*
 * s (RFC 3339: a 'T', 'Z' or a +hh:mm / -hh:mm offset, an optional
 * fraction of 1 to 9 digits) as milliseconds since the epoch, the fraction
 * cut to milliseconds.  Years 1970..9999.  -KERF_EPARSE otherwise.
 */
int kerf_time_parse_ms(const char *s, int64_t *out_ms);

/* ms as "YYYY-MM-DDTHH:MM:SSZ" (whole seconds, rounded down). */
void kerf_time_format(int64_t ms, char out[KERF_TIME_TEXT_MAX]);

/* ms as a MicroTime "YYYY-MM-DDTHH:MM:SS.mmm000Z". */
void kerf_time_format_micro(int64_t ms, char out[KERF_TIME_TEXT_MAX]);

#endif
