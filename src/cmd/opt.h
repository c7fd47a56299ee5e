/*
 * opt: messages about command-line options that quote what the user typed,
 * escaped (base/buf.h), so that an argument holding ESC or a newline cannot
 * forge output.  The commands set opterr = 0 and start their getopt
 * option string with ':', so that getopt says nothing itself and returns
 * ':' for an option missing its value and '?' for an unknown one; then
 * kerf_opt_error says which, naming the option as typed.
 */
#ifndef KERF_CMD_OPT_H
#define KERF_CMD_OPT_H

#include <stddef.h>

/*
 * "prog: option '--jobs' needs a value" (c == ':') or "prog: unknown
 * option '--bogus'" (c == '?'), on stderr; argv and the getopt globals as
 * getopt_long left them.
 */
void kerf_opt_error(const char *prog, int c, char *const *argv);

/* "prog: unexpected argument 'X'" and the hint, if any, on stderr. */
void kerf_opt_unexpected(const char *prog, const char *arg, const char *hint);

/*
 * The placement policies of option opt: "kerf,fgd" (each known, none
 * empty, none twice, at most max) or "all", as names from the policy
 * table into names[]; *nr is their count.  Returns 0, or -1 after a
 * message on stderr.
 */
int kerf_opt_policies(const char *prog, const char *opt, const char *s,
		      const char **names, size_t max, size_t *nr);

#endif /* KERF_CMD_OPT_H */
