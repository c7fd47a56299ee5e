/*
 * kobj: what the codecs of kerf's Kubernetes objects share (tenant.h,
 * gpupool.h): reading fields of a decoded JSON object (jansson) with
 * messages that name the field's path and show the value, quantities,
 * durations, names, and conditions.
 *
 * Every reader treats the object as untrusted.  The API server checks the
 * schema of a custom resource, but a CRD may be installed without its CEL
 * rules, objects may predate a rule, and anyone with write access may hold
 * a field the schema does not know: a wrong field is an error naming its
 * path ("spec.quotas[1].nominal: must be at least 0, not '-1'"), with
 * the value escaped as kerf_escape does (base/buf.h), so no object can
 * forge a log line or a condition message.  Unknown fields are ignored
 * (the API server prunes them; a newer CRD may add optional ones).
 *
 * Pure: no I/O.  Errors are -KERF_EINVAL (a wrong field) or -KERF_ENOMEM.
 */
#ifndef KERF_KOBJ_KOBJ_H
#define KERF_KOBJ_KOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

enum {
	KERF_KOBJ_NAME_MAX = 64,       /* object names: 63 bytes + NUL */
	KERF_KOBJ_PATH_MAX = 128,      /* a field's path, for messages */
	KERF_KOBJ_MAX_CONDITIONS = 8,
	KERF_KOBJ_COND_TYPE_MAX = 64,
	KERF_KOBJ_COND_REASON_MAX = 128,
	KERF_KOBJ_COND_MESSAGE_MAX = 1024,
	KERF_KOBJ_TIME_MAX = 40,       /* RFC 3339 date-time */
	KERF_KOBJ_QTY_TEXT_MAX = 32,   /* a formatted quantity */
};

/* Durations (budget windows, idle grace) are at most 87600 h, 10 years. */
#define KERF_KOBJ_MAX_DURATION_MS ((int64_t)87600 * 3600 * 1000)

/* The unit a quantity is read into. */
enum kerf_kobj_unit {
	KERF_KOBJ_MILLI = 0,           /* thousandths (GPU milli, CPU milli) */
	KERF_KOBJ_MIB,                 /* bytes, rounded up to MiB */
	KERF_KOBJ_UNITS,               /* whole units, rounded up */
};

/* A status condition (metav1.Condition). */
struct kerf_kobj_condition {
	char type[KERF_KOBJ_COND_TYPE_MAX];
	char status[8];                        /* True, False, Unknown */
	char reason[KERF_KOBJ_COND_REASON_MAX];
	char message[KERF_KOBJ_COND_MESSAGE_MAX];  /* shortened to fit */
	char last_transition[KERF_KOBJ_TIME_MAX];  /* "" = none */
	int64_t observed_generation;
};

/*
 * Record "path: reason" (the reason formatted from fmt) in err; returns
 * -KERF_EINVAL.
 */
int kerf_kobj_fail(struct kerf_err *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * v shown for a message: a string quoted and escaped ('h100'), a number
 * as written, else the JSON type ("an object", "an array", "null", "true").
 * Shortened with "..." to fit out[size] (size >= 16).
 */
const char *kerf_kobj_show(char *out, size_t size, const json_t *v);

/* path "<prefix>.<field>" (or field alone when prefix is "") into out. */
const char *kerf_kobj_path(char *out, size_t size, const char *prefix,
			   const char *field);

/*
 * An object name (a Tenant, GPUPool, PriorityClass, flavor): 1 to 63
 * bytes of lower-case letters, digits, '-' and '.', starting and ending
 * with a letter or digit (a DNS subdomain, shortened to what the core
 * holds).  dns_label refuses '.' too.  Into out[KERF_KOBJ_NAME_MAX].
 */
int kerf_kobj_get_name(const json_t *v, const char *path, bool dns_label,
		       char *out, struct kerf_err *err);

/* An integer from min to max (a JSON integer: 8.0 and "8" are refused). */
int kerf_kobj_get_int(const json_t *v, const char *path, int64_t min,
		      int64_t max, int64_t *out, struct kerf_err *err);

/*
 * A quantity, written as a JSON integer (8) or a string ("2500m", "16Gi",
 * "2.5"): what a field with x-kubernetes-int-or-string holds.  Read in
 * unit, rounded up as the API server's MilliValue() / Value() do; from
 * min to max in that unit.  what names the unit for messages ("GPUs").
 */
int kerf_kobj_get_quantity(const json_t *v, const char *path,
			   enum kerf_kobj_unit unit, int64_t min, int64_t max,
			   const char *what, int64_t *out, struct kerf_err *err);

/*
 * A duration as Go writes it, restricted to what the CRDs' pattern allows:
 * one or more <decimal><unit> with unit h, m, s or ms ("168h", "1h30m",
 * "2.5s"), in milliseconds rounded up; more than 0 and at most
 * KERF_KOBJ_MAX_DURATION_MS.
 */
int kerf_kobj_get_duration(const json_t *v, const char *path, int64_t *ms,
			   struct kerf_err *err);

/*
 * One of names[0..n) (a string); its index into *out.  The message lists
 * the names.
 */
int kerf_kobj_get_enum(const json_t *v, const char *path,
		       const char *const *names, int n, int *out,
		       struct kerf_err *err);

/* v must be present: "path: is required" when it is NULL. */
int kerf_kobj_required(const json_t *v, const char *path, struct kerf_err *err);

/* o's field key, or NULL when absent or JSON null (null reads as absent). */
const json_t *kerf_kobj_field(const json_t *o, const char *key);

/* A string of at most size - 1 bytes without NUL; cut: shortened to fit. */
int kerf_kobj_get_text(const json_t *v, const char *path, char *out,
		       size_t size, bool cut, struct kerf_err *err);

/* v must be an object (or an array), else "path: must be an object". */
int kerf_kobj_need_object(const json_t *v, const char *path,
			  struct kerf_err *err);
int kerf_kobj_need_array(const json_t *v, const char *path, size_t max,
			 struct kerf_err *err);

/*
 * A list of names (x-kubernetes-list-type: set) of at most max entries,
 * each as kerf_kobj_get_name, no duplicates, into out[max][NAME_MAX].
 */
int kerf_kobj_get_name_set(const json_t *v, const char *path, size_t max,
			   char (*out)[KERF_KOBJ_NAME_MAX], size_t *nr,
			   struct kerf_err *err);

/*
 * milli (>= 0) as a decimal quantity the API server accepts: 2500 is
 * "2.5", 12000 "12", 250 "0.25", 1 "0.001".
 */
const char *kerf_kobj_format_milli(char *out, size_t size, int64_t milli);

/* status.conditions as written (an array), and read back. */
json_t *kerf_kobj_conditions_encode(const struct kerf_kobj_condition *c,
				    size_t nr);
int kerf_kobj_conditions_decode(const json_t *v, const char *path,
				struct kerf_kobj_condition *c, size_t *nr,
				struct kerf_err *err);

/*
 * What every kerf.io status starts with: observedGeneration and
 * conditions, read from status (an object, checked) or put into o.
 */
int kerf_kobj_status_head_decode(const json_t *status, int64_t *generation,
				 struct kerf_kobj_condition *c, size_t *nr,
				 struct kerf_err *err);
bool kerf_kobj_status_head_put(json_t *o, int64_t generation,
			       const struct kerf_kobj_condition *c, size_t nr);

/* Set key of o to v (taken); false when v is NULL or the set failed. */
bool kerf_kobj_put(json_t *o, const char *key, json_t *v);

#endif /* KERF_KOBJ_KOBJ_H */
