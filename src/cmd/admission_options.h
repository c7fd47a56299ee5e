/*
 * admission_options: the admission settings as command-line options,
 * shared by `kerf serve` (its webhook) and `kerf admission review`, so a
 * policy checked offline is the policy served.
 */
#ifndef KERF_CMD_ADMISSION_OPTIONS_H
#define KERF_CMD_ADMISSION_OPTIONS_H

#include <getopt.h>

#include "admission/policy.h"

/* getopt_long entries; their values start at KERF_ADM_OPT_BASE. */
enum { KERF_ADM_OPT_BASE = 0x1000, KERF_ADM_OPT_NR = 11 };
extern const struct option kerf_admission_longopts[KERF_ADM_OPT_NR];

/* The help lines of the options. */
extern const char kerf_admission_options_help[];

/* Which list options were given (the first replaces the default). */
struct kerf_admission_opt_state {
	unsigned replaced;              /* bit per list option */
};

/*
 * Apply option opt (KERF_ADM_OPT_BASE + i) with arg to c.  0, or -1 after
 * a message on stderr naming the option ("prog: --gpu-taint 'x': ...").
 */
int kerf_admission_option(const char *prog, int opt, const char *arg,
			  struct kerf_admission_config *c,
			  struct kerf_admission_opt_state *st);

#endif
