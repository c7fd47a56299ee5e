/*
 * kerf completion bash|zsh|spec: shell completion generated from the
 * command registry (spec.h).  Both scripts share the same generated data
 * functions (the subcommands of a command, its options, what an option's
 * value is); a small driver per shell reads the line and asks them.
 * `spec` prints the same data as tab-separated lines, for other shells and
 * for the tests.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/opt.h"
#include "cmd/spec.h"

const struct option kerf_completion_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* What a value is, as the scripts read it: file, dir, words W.., list W.., text. */
static void value_kind(FILE *out, enum kerf_spec_value v, const char *choices)
{
	const struct kerf_spec *all;
	size_t nr;

	switch (v) {
	case KERF_VALUE_FILE: fputs("file", out); break;
	case KERF_VALUE_DIR: fputs("dir", out); break;
	case KERF_VALUE_CHOICE: fprintf(out, "words %s", choices); break;
	case KERF_VALUE_POLICY:
		fputs("words ", out);
		kerf_spec_policy_words(out, false);
		break;
	case KERF_VALUE_POLICIES:
		fputs("list ", out);
		kerf_spec_policy_words(out, true);
		break;
	case KERF_VALUE_COMMAND:
		fputs("words", out);
		all = kerf_spec_all(&nr);
		for (size_t i = 0; i < nr; i++)
			if (!strchr(all[i].path, ' '))
				fprintf(out, " %s", all[i].path);
		break;
	default: fputs("text", out); break;
	}
}

/* Every option line of s, with fn(out, s, o) (o NULL: -h/--help). */
static void each_opt(FILE *out, const struct kerf_spec *s,
		     void (*fn)(FILE *, const struct kerf_spec *, const struct kerf_spec_opt *))
{
	const struct kerf_spec_opt *lists[] = { s->opts, s->more_opts };

	for (size_t l = 0; l < 2; l++)
		for (const struct kerf_spec_opt *o = lists[l]; o && o->name; o++)
			fn(out, s, o);
	fn(out, s, NULL);
}

static void opt_words(FILE *out, const struct kerf_spec *s, const struct kerf_spec_opt *o)
{
	(void)s;
	if (!o)
		fputs(" --help -h", out);
	else if (o->short_name)
		fprintf(out, " --%s -%c", o->name, o->short_name);
	else
		fprintf(out, " --%s", o->name);
}

static void opt_value_case(FILE *out, const struct kerf_spec *s, const struct kerf_spec_opt *o)
{
	if (!o || !o->arg)
		return;
	fprintf(out, "\t'%s --%s'", s->path, o->name);
	if (o->short_name)
		fprintf(out, "|'%s -%c'", s->path, o->short_name);
	fputs(") echo '", out);
	value_kind(out, o->value, o->choices);
	fputs("' ;;\n", out);
}

/* The data functions, the same text for bash and zsh. */
static void data_functions(FILE *out)
{
	const struct kerf_spec *all;
	size_t nr;

	all = kerf_spec_all(&nr);
	fputs("# the subcommands of command $1 ('' for kerf itself)\n"
	      "__kerf_subs() {\n\tcase \"$1\" in\n\t'') echo '", out);
	for (size_t i = 0, n = 0; i < nr; i++)
		if (!strchr(all[i].path, ' '))
			fprintf(out, "%s%s", n++ ? " " : "", all[i].path);
	fputs("' ;;\n", out);
	for (size_t i = 0; i < nr; i++) {
		size_t len = strlen(all[i].path), n = 0;

		if (!kerf_spec_has_children(&all[i]))
			continue;
		fprintf(out, "\t'%s') echo '", all[i].path);
		for (size_t j = 0; j < nr; j++)
			if (!strncmp(all[j].path, all[i].path, len) && all[j].path[len] == ' ' &&
			    !strchr(all[j].path + len + 1, ' '))
				fprintf(out, "%s%s", n++ ? " " : "", all[j].path + len + 1);
		fputs("' ;;\n", out);
	}
	fputs("\tesac\n}\n\n# the options of command $1\n__kerf_opts() {\n\tcase \"$1\" in\n", out);
	for (size_t i = 0; i < nr; i++) {
		fprintf(out, "\t'%s') echo '", all[i].path);
		each_opt(out, &all[i], opt_words);
		fputs("' ;;\n", out);
	}
	fputs("\tesac\n}\n\n"
	      "# option $2 of command $1: its value is a file, a dir, one of words,\n"
	      "# a comma-separated list of words, or text; a flag has none\n"
	      "__kerf_value() {\n\tcase \"$1 $2\" in\n", out);
	for (size_t i = 0; i < nr; i++)
		each_opt(out, &all[i], opt_value_case);
	fputs("\t*) echo none ;;\n\tesac\n}\n\n"
	      "# the operands of command $1\n__kerf_operand() {\n\tcase \"$1\" in\n", out);
	for (size_t i = 0; i < nr; i++) {
		if (all[i].operand == KERF_VALUE_TEXT)
			continue;
		fprintf(out, "\t'%s') echo '", all[i].path);
		value_kind(out, all[i].operand, all[i].operand_choices);
		fputs("' ;;\n", out);
	}
	fputs("\t*) echo none ;;\n\tesac\n}\n\n", out);
}

/*
 * The drivers.  Both find the command path (the leading words that name
 * subcommands), then complete: the value of the option before the word
 * (or after its '='), an option, a subcommand, or an operand.  For
 * `kerf help`, the words after it are a command path.
 */
static const char bash_driver[] =
	"# $1: what the value is (from __kerf_value), $2: the word so far\n"
	"__kerf_complete_value() {\n"
	"\tcase $1 in\n"
	"\tfile) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$2\")) ;;\n"
	"\tdir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$2\")) ;;\n"
	"\twords\\ *) COMPREPLY=($(compgen -W \"${1#words }\" -- \"$2\")) ;;\n"
	"\tlist\\ *)\n"
	"\t\tlocal pre=''\n"
	"\t\tcase $2 in *,*) pre=${2%,*}, ;; esac\n"
	"\t\tcompopt -o nospace 2>/dev/null\n"
	"\t\tCOMPREPLY=($(compgen -P \"$pre\" -W \"${1#list }\" -- \"${2##*,}\")) ;;\n"
	"\t*) COMPREPLY=() ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_kerf() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd='' i=1 w v\n"
	"\tCOMPREPLY=()\n"
	"\twhile [ \"$i\" -lt \"$COMP_CWORD\" ]; do\n"
	"\t\tw=${COMP_WORDS[i]}\n"
	"\t\tcase \" $(__kerf_subs \"$cmd\") \" in\n"
	"\t\t*\" $w \"*) cmd=${cmd:+$cmd }$w ;;\n"
	"\t\t*) break ;;\n"
	"\t\tesac\n"
	"\t\ti=$((i + 1))\n"
	"\tdone\n"
	"\t[ \"$COMP_CWORD\" -gt 1 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\t# --opt=value: bash splits it at '='\n"
	"\tif [ \"$cur\" = = ] && [ \"$COMP_CWORD\" -gt 1 ]; then\n"
	"\t\t__kerf_complete_value \"$(__kerf_value \"$cmd\" \"$prev\")\" ''\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -gt 2 ]; then\n"
	"\t\t__kerf_complete_value \"$(__kerf_value \"$cmd\" \"${COMP_WORDS[COMP_CWORD-2]}\")\" \"$cur\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tcase $cur in\n"
	"\t--*=*)\n"
	"\t\tv=$(__kerf_value \"$cmd\" \"${cur%%=*}\")\n"
	"\t\t__kerf_complete_value \"$v\" \"${cur#*=}\"\n"
	"\t\tCOMPREPLY=(\"${COMPREPLY[@]/#/${cur%%=*}=}\")\n"
	"\t\treturn ;;\n"
	"\tesac\n"
	"\tcase $prev in\n"
	"\t-*)\n"
	"\t\tv=$(__kerf_value \"$cmd\" \"$prev\")\n"
	"\t\tif [ \"$v\" != none ]; then\n"
	"\t\t\t__kerf_complete_value \"$v\" \"$cur\"\n"
	"\t\t\treturn\n"
	"\t\tfi ;;\n"
	"\tesac\n"
	"\tcase $cur in\n"
	"\t-*) COMPREPLY=($(compgen -W \"$(__kerf_opts \"$cmd\")\" -- \"$cur\")); return ;;\n"
	"\tesac\n"
	"\tif [ \"$cmd\" = help ]; then\n"
	"\t\tcmd=''\n"
	"\t\tfor w in \"${COMP_WORDS[@]:2:COMP_CWORD-2}\"; do cmd=${cmd:+$cmd }$w; done\n"
	"\t\tCOMPREPLY=($(compgen -W \"$(__kerf_subs \"$cmd\")\" -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [ \"$i\" -eq \"$COMP_CWORD\" ] && [ -n \"$(__kerf_subs \"$cmd\")\" ]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$(__kerf_subs \"$cmd\")\" -- \"$cur\"))\n"
	"\t\treturn\n"
	"\tfi\n"
	"\t__kerf_complete_value \"$(__kerf_operand \"$cmd\")\" \"$cur\"\n"
	"}\n"
	"\n"
	"complete -F _kerf kerf kubectl-kerf\n";

static const char zsh_driver[] =
	"# $1: what the value is (from __kerf_value)\n"
	"__kerf_complete_value() {\n"
	"\tcase $1 in\n"
	"\tfile) _files ;;\n"
	"\tdir) _files -/ ;;\n"
	"\twords\\ *) compadd -- ${=${1#words }} ;;\n"
	"\tlist\\ *) compset -P '*,'; compadd -S '' -- ${=${1#list }} ;;\n"
	"\t*) return 1 ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_kerf() {\n"
	"\tlocal cur=${words[CURRENT]} prev=${words[CURRENT-1]} cmd='' w v\n"
	"\tinteger i=2\n"
	"\twhile (( i < CURRENT )); do\n"
	"\t\tw=${words[i]}\n"
	"\t\tif [[ \" $(__kerf_subs \"$cmd\") \" == *\" $w \"* ]]; then\n"
	"\t\t\tcmd=${cmd:+$cmd }$w\n"
	"\t\telse\n"
	"\t\t\tbreak\n"
	"\t\tfi\n"
	"\t\t(( i++ ))\n"
	"\tdone\n"
	"\tif [[ $cur == --*=* ]]; then\n"
	"\t\tv=$(__kerf_value \"$cmd\" \"${cur%%=*}\")\n"
	"\t\tcompset -P '*='\n"
	"\t\t__kerf_complete_value \"$v\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [[ $prev == -* ]]; then\n"
	"\t\tv=$(__kerf_value \"$cmd\" \"$prev\")\n"
	"\t\tif [[ $v != none ]]; then\n"
	"\t\t\t__kerf_complete_value \"$v\"\n"
	"\t\t\treturn\n"
	"\t\tfi\n"
	"\tfi\n"
	"\tif [[ $cur == -* ]]; then\n"
	"\t\tcompadd -- ${=$(__kerf_opts \"$cmd\")}\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif [[ $cmd == help ]]; then\n"
	"\t\tcmd=${(j: :)words[3,CURRENT-1]}\n"
	"\t\tcompadd -- ${=$(__kerf_subs \"$cmd\")}\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tif (( i == CURRENT )) && [[ -n $(__kerf_subs \"$cmd\") ]]; then\n"
	"\t\tcompadd -- ${=$(__kerf_subs \"$cmd\")}\n"
	"\t\treturn\n"
	"\tfi\n"
	"\t__kerf_complete_value \"$(__kerf_operand \"$cmd\")\"\n"
	"}\n"
	"\n"
	"if [[ $funcstack[1] == _kerf ]]; then\n"
	"\t_kerf \"$@\"\n"
	"else\n"
	"\tcompdef _kerf kerf kubectl-kerf\n"
	"fi\n";

static void spec_opt_line(FILE *out, const struct kerf_spec *s, const struct kerf_spec_opt *o)
{
	char short_name[3] = "-";

	if (!o) {
		fprintf(out, "option\t%s\t--help\t-h\tnone\n", s->path);
		return;
	}
	if (o->short_name)
		short_name[1] = o->short_name;
	fprintf(out, "option\t%s\t--%s\t%s\t", s->path, o->name, short_name);
	if (o->arg)
		value_kind(out, o->value, o->choices);
	else
		fputs("none", out);
	fputc('\n', out);
}

/*
 * The getopt table of entry i as the command parses it: "getopt", the
 * path, the first entry with the same table, the option, "value" or
 * "flag".  The tests hold these against the descriptions.
 */
static void getopt_lines(FILE *out, const struct kerf_spec *all, size_t i)
{
	size_t first = i;

	for (size_t j = 0; j < i; j++)
		if (all[j].longopts == all[i].longopts) {
			first = j;
			break;
		}
	for (size_t k = 0; k < kerf_spec_nr_longopts(&all[i]); k++) {
		const struct option *o = kerf_spec_longopt(&all[i], k);

		fprintf(out, "getopt\t%s\t%s\t--%s\t%s\n", all[i].path,
			all[first].path, o->name,
			o->has_arg == no_argument ? "flag" : "value");
	}
}

static void spec_lines(FILE *out)
{
	const struct kerf_spec *all;
	size_t nr;

	all = kerf_spec_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		fprintf(out, "command\t%s\t%s\t%s\t", all[i].path,
			all[i].longopts ? "table" : "-", all[i].summary);
		value_kind(out, all[i].operand, all[i].operand_choices);
		fputc('\n', out);
		each_opt(out, &all[i], spec_opt_line);
		getopt_lines(out, all, i);
	}
}

static const char usage[] =
	"usage: kerf completion bash|zsh|spec\n"
	"\n"
	"a completion script generated from kerf's option tables, on stdout:\n"
	"  bash   source <(kerf completion bash)      (in ~/.bashrc)\n"
	"  zsh    source <(kerf completion zsh)       (in ~/.zshrc, after compinit)\n"
	"  spec   the commands and options, tab-separated lines, for other shells\n";

int kerf_cmd_completion(int argc, char **argv)
{
	char shown[80];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", kerf_completion_longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		kerf_opt_error("kerf completion", c, argv);
		fputs(usage, stderr);
		return 2;
	}
	if (optind != argc - 1) {
		if (optind < argc - 1)
			kerf_opt_unexpected("kerf completion", argv[optind + 1], NULL);
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "spec")) {
		spec_lines(stdout);
		return 0;
	}
	if (!strcmp(argv[optind], "bash") || !strcmp(argv[optind], "zsh")) {
		bool zsh = argv[optind][0] == 'z';

		if (zsh)
			fputs("#compdef kerf kubectl-kerf\n", stdout);
		printf("# %s completion for kerf and kubectl-kerf, generated by `kerf completion %s`\n"
		       "# from kerf's option tables.\n\n",
		       zsh ? "zsh" : "bash", zsh ? "zsh" : "bash");
		data_functions(stdout);
		fputs(zsh ? zsh_driver : bash_driver, stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	fprintf(stderr, "kerf completion: unknown shell '%s' (bash, zsh or spec)\n",
		kerf_escape(shown, sizeof(shown), argv[optind]));
	return 2;
}
