/*
 * quantity: Kubernetes resource quantities ("500m", "16Gi", "1.5", "2e3")
 * as exact integers, never through floating point.
 *
 * The grammar is the API server's: an optional sign, digits with at most
 * one point (".5" and "5." are accepted, as the server does), then one
 * suffix: a binary SI one (Ki Mi Gi Ti Pi Ei), a decimal SI one (n u m "" k
 * M G T P E) or an exponent (e3, E-2).  Anything else is refused: spaces,
 * two suffixes, "0x10", an empty string.
 *
 * A value that is not whole in the unit asked for is rounded up, as the
 * server's Value() and MilliValue() do ("1.5" is 2 units, "0.1m" 1 milli).
 * A value beyond int64 is -KERF_ERANGE.
 */
#ifndef KERF_BASE_QUANTITY_H
#define KERF_BASE_QUANTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* s in whole units (bytes, GPUs) into *out; 0 or a negative error. */
int kerf_quantity_parse(const char *s, int64_t *out);

/* s in thousandths of a unit (CPU millicores) into *out. */
int kerf_quantity_parse_milli(const char *s, int64_t *out);

/*
 * s as a whole number of units with no rounding: "8" and "8000m" are 8,
 * "1500m" and "0.5" are -KERF_EINVAL (the API server refuses a fractional
 * extended resource such as nvidia.com/gpu the same way).
 */
int kerf_quantity_parse_whole(const char *s, int64_t *out);

/* What kerf_quantity_parse_field reads s as. */
enum kerf_quantity_unit {
	KERF_QTY_UNITS = 0,    /* kerf_quantity_parse */
	KERF_QTY_WHOLE = 1,    /* kerf_quantity_parse_whole */
	KERF_QTY_MILLI = 2,    /* kerf_quantity_parse_milli */
};

/*
 * One of the three with a message naming the field ("spec.containers[0].
 * resources.limits.nvidia.com/gpu") and the value, escaped as kerf_escape
 * does.
 */
int kerf_quantity_parse_field(const char *field, const char *s,
			      enum kerf_quantity_unit unit, int64_t *out,
			      struct kerf_err *err);

#endif
