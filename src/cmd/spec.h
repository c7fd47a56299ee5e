/*
 * spec: the one registry of kerf's command line.  Every command and
 * subcommand is an entry: its path of words ("sim openb"), a one-line
 * summary, its synopsis, the getopt table the command itself parses with
 * (referenced by symbol, never copied) and, per option, a one-line
 * description and what its value is (a file, a directory, one of a fixed
 * list, policy names).  main.c dispatches from it and answers -h/--help
 * anywhere on the line; `kerf completion bash|zsh` and `kerf man` are
 * generated from it; tests/cli/test_spec.sh checks that every getopt table
 * in src/cmd is in it, and that each command's --help and its table agree.
 *
 * Adding a command is one entry in spec.c (and its table's declaration
 * below); adding an option is its line in the table and one line in the
 * entry's option list.
 */
#ifndef KERF_CMD_SPEC_H
#define KERF_CMD_SPEC_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* What an option's value (or a command's operand) is, for completion. */
enum kerf_spec_value {
	KERF_VALUE_TEXT = 0,  /* anything: nothing to complete */
	KERF_VALUE_FILE,      /* a file name */
	KERF_VALUE_DIR,       /* a directory name */
	KERF_VALUE_CHOICE,    /* one of the words of choices */
	KERF_VALUE_POLICY,    /* a policy name from the policy table */
	KERF_VALUE_POLICIES,  /* NAME[,NAME...] or all */
	KERF_VALUE_COMMAND,   /* a command's path (kerf help) */
};

/* One option of a command: its long name as in the getopt table. */
struct kerf_spec_opt {
	const char *name;
	char short_name;              /* its one-letter form, '\0' if none */
	const char *arg;              /* the value's name ("FILE"), NULL: no value */
	const char *help;             /* one line */
	enum kerf_spec_value value;
	const char *choices;          /* KERF_VALUE_CHOICE: "table json" */
};

struct kerf_spec {
	const char *path;             /* "sim openb": the words after kerf */
	const char *summary;          /* one line */
	const char *synopsis;         /* after the path: "--nodes FILE ..." */
	/*
	 * The command itself, argv[0] its last word; NULL: the entry's
	 * parent takes the line (with this word still in it).
	 */
	int (*run)(int argc, char **argv);
	const struct option *longopts;       /* its getopt table, NULL: none */
	const struct option *more_longopts;  /* a second table it appends, */
	size_t nr_more_longopts;             /* of this many, not {0}-ended */
	const struct kerf_spec_opt *opts;    /* {0}-ended; --help implied */
	const struct kerf_spec_opt *more_opts;  /* more_longopts' */
	enum kerf_spec_value operand;        /* its operands, if any */
	const char *operand_choices;
};

/* All entries, parents before their subcommands; *nr is their count. */
const struct kerf_spec *kerf_spec_all(size_t *nr);

/* The entry of path ("sim openb"), or NULL. */
const struct kerf_spec *kerf_spec_find(const char *path);

/*
 * The entry the words argv[1..] name (the longest path of them), or NULL
 * when argv[1] names no command; *nr_words is how many words it took.
 */
const struct kerf_spec *kerf_spec_lookup(int argc, char *const *argv,
					 int *nr_words);

/* Whether s has subcommands. */
bool kerf_spec_has_children(const struct kerf_spec *s);

/*
 * Whether argv[from..] asks for help: -h or --help (or a prefix of it)
 * as an option of s, not the value of an option before it, before any
 * "--".
 */
int kerf_spec_wants_help(const struct kerf_spec *s, int from, int argc,
			 char *const *argv);

/* How many getopt options s has, both tables; the i-th of them. */
size_t kerf_spec_nr_longopts(const struct kerf_spec *s);
const struct option *kerf_spec_longopt(const struct kerf_spec *s, size_t i);

/* The policy names (and "all"), space-separated, for completion. */
void kerf_spec_policy_words(FILE *out, bool all);

/* The commands, one a line, and where to learn more: kerf's own help. */
void kerf_spec_usage(FILE *out);

/*
 * Run the command argv[1..] names: the entry of its first nr_words words,
 * or the nearest above it with a run, argv[0] its last word.
 */
int kerf_spec_run(const struct kerf_spec *s, int nr_words, int argc, char **argv);

/*
 * Entry s's help on stdout: the command's own --help, "kerf" as
 * kerf_prog_name in its usage lines.  Returns the exit status.
 */
int kerf_spec_help(const struct kerf_spec *s);

/* The program as the user called it: "kerf" or "kubectl kerf". */
extern const char *kerf_prog_name;

/* kerf help [COMMAND [SUB]]; kerf version. */
int kerf_cmd_help(int argc, char **argv);
int kerf_cmd_version(int argc, char **argv);

/* kerf completion bash|zsh|spec; kerf man (roff of kerf(1)). */
int kerf_cmd_completion(int argc, char **argv);
int kerf_cmd_man(int argc, char **argv);

/* The commands' getopt tables, each defined in its command's file. */
extern const struct option kerf_sim_openb_longopts[];
extern const struct option kerf_sim_check_longopts[];
extern const struct option kerf_sim_demo_longopts[];
extern const struct option kerf_sim_run_longopts[];
extern const struct option kerf_sim_mig_longopts[];
extern const struct option kerf_sim_gpuspec_longopts[];
extern const struct option kerf_sim_replay_longopts[];
extern const struct option kerf_plan_mig_longopts[];
extern const struct option kerf_serve_longopts[];
extern const struct option kerf_cli_longopts[];
extern const struct option kerf_admission_review_longopts[];
extern const struct option kerf_agent_inventory_longopts[];
extern const struct option kerf_agent_metrics_longopts[];
extern const struct option kerf_agent_run_longopts[];
extern const struct option kerf_agent_mig_longopts[];
extern const struct option kerf_completion_longopts[];
extern const struct option kerf_sim_day_longopts[];
extern const struct option kerf_sim_snapshot_longopts[];
extern const struct option kerf_top_longopts[];
extern const struct option kerf_what_if_longopts[];

#endif /* KERF_CMD_SPEC_H */
