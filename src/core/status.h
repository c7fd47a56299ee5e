/*
 * status: a policy verdict.  Not an error: "this node cannot take this pod"
 * is a normal answer, and the reason is what a tenant reads.
 */
#ifndef KERF_CORE_STATUS_H
#define KERF_CORE_STATUS_H

enum kerf_code {
	KERF_FIT = 0,         /* yes */
	KERF_UNSCHEDULABLE,   /* not now; freeing capacity might help */
	KERF_UNRESOLVABLE,    /* never on this node */
	KERF_SKIP,            /* plug-in has nothing to say */
	KERF_WAIT,            /* permit: hold */
	KERF_INTERNAL,        /* a bug or an invalid input reached the core */
};

enum { KERF_REASON_MAX = 256 };

struct kerf_status {
	enum kerf_code code;
	const char *plugin;   /* static name of the plug-in that decided */
	const char *fixed;    /* the reason when it is a constant string, else NULL */
	char reason[KERF_REASON_MAX];
};

const char *kerf_code_name(enum kerf_code code);

/*
 * A verdict whose reason is a constant string (no formatting: the fast path
 * of filters, which the scheduler then counts by pointer).
 */
void kerf_status_fixed(struct kerf_status *st, enum kerf_code code,
		       const char *plugin, const char *text);

void kerf_status_set(struct kerf_status *st, enum kerf_code code,
		     const char *plugin, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* KERF_CORE_STATUS_H */
