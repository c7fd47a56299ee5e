/*
 * kerf man: the manual page kerf(1) as roff, generated from the command
 * registry (spec.h): every command and subcommand with its synopsis and
 * every option with its description.  `kerf man | man -l -` reads it.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/opt.h"
#include "cmd/spec.h"

#ifndef KERF_VERSION
#define KERF_VERSION "0.0.0"
#endif

/* s as roff text: '-' and '\' escaped, a leading '.' or '\'' kept as text. */
static void roff(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", out);
		else if (*s == '\\')
			fputs("\\e", out);
		else
			fputc(*s, out);
	}
}

static void option_item(FILE *out, const struct kerf_spec_opt *o)
{
	fputs(".TP\n", out);
	if (o->short_name)
		fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
	fputs("\\fB\\-\\-", out);
	roff(out, o->name);
	fputs("\\fR", out);
	if (o->arg) {
		fputs(" \\fI", out);
		roff(out, o->arg);
		fputs("\\fR", out);
	}
	fputc('\n', out);
	roff(out, o->help);
	fputc('\n', out);
}

static void command_section(FILE *out, const struct kerf_spec *s)
{
	const struct kerf_spec_opt *lists[] = { s->opts, s->more_opts };

	fputs(".SS \"kerf ", out);
	roff(out, s->path);
	fputs("\"\n\\fBkerf ", out);
	roff(out, s->path);
	fputs("\\fR", out);
	if (s->synopsis[0]) {
		fputc(' ', out);
		roff(out, s->synopsis);
	}
	fputs("\n.PP\n", out);
	roff(out, s->summary);
	fputs(".\n", out);
	for (size_t l = 0; l < 2; l++)
		for (const struct kerf_spec_opt *o = lists[l]; o && o->name; o++)
			option_item(out, o);
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthis command's help\n", out);
}

static const char head[] =
	".TH KERF 1 \"\" \"kerf " KERF_VERSION "\" \"User Commands\"\n"
	".SH NAME\n"
	"kerf \\- multi\\-tenant GPU control plane for Kubernetes, and its simulator\n"
	".SH SYNOPSIS\n"
	"\\fBkerf\\fR \\fIcommand\\fR [\\fIsubcommand\\fR] [\\fIoptions\\fR]\n"
	".br\n"
	"\\fBkubectl kerf\\fR \\fIcommand\\fR [\\fIsubcommand\\fR] [\\fIoptions\\fR]\n"
	".SH DESCRIPTION\n"
	"kerf is one binary with several roles: \\fBkerf serve\\fR is the controller,\n"
	"secondary scheduler and admission webhook; \\fBkerf agent\\fR is the node agent;\n"
	"\\fBkerf get\\fR and \\fBkerf explain\\fR read what kerf serve sees;\n"
	"\\fBkerf sim\\fR is the simulator.\n"
	".PP\n"
	"Every command and subcommand answers \\fB\\-h\\fR and \\fB\\-\\-help\\fR anywhere on\n"
	"the line (not as the value of an option, not after \\fB\\-\\-\\fR), and\n"
	"\\fBkerf help\\fR \\fIcommand\\fR [\\fIsubcommand\\fR] shows the same help.\n"
	"Installed under the name \\fBkubectl\\-kerf\\fR on the PATH, kerf is the kubectl\n"
	"plugin \\fBkubectl kerf\\fR, with the same commands.\n"
	".SH OPTIONS\n"
	".TP\n"
	"\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n"
	"the commands, or with a command its help\n"
	".TP\n"
	"\\fB\\-V\\fR, \\fB\\-\\-version\\fR\n"
	"print the version\n"
	".SH COMMANDS\n";

static const char tail[] =
	".SH EXIT STATUS\n"
	".TP\n"
	"0\n"
	"success\n"
	".TP\n"
	"1\n"
	"failure: a file that cannot be read, a server not reached, an error\n"
	".TP\n"
	"2\n"
	"usage error: an unknown command or option, a bad value\n"
	".TP\n"
	"3\n"
	"pending or violated: a workload still waits at the end of \\fBkerf sim run\\fR,\n"
	"an admission review denied\n"
	".SH ENVIRONMENT\n"
	".TP\n"
	".B KERF_SERVER\n"
	"kerf serve's endpoint for \\fBkerf get\\fR and \\fBkerf explain\\fR when\n"
	"\\fB\\-\\-server\\fR is not given (default http://127.0.0.1:8080)\n"
	".TP\n"
	".B KERF_NVML_LIBRARY\n"
	"the NVML library the agent loads when \\fB\\-\\-nvml\\-library\\fR is not given\n"
	".TP\n"
	".BR KUBERNETES_SERVICE_HOST \", \" KUBERNETES_SERVICE_PORT\n"
	"in a pod, where the API server is (without \\fB\\-\\-kubeconfig\\fR)\n"
	".TP\n"
	".B NO_COLOR\n"
	"kerf writes no terminal colours; output stays plain whatever its value\n"
	".SH FILES\n"
	".TP\n"
	".I /var/run/secrets/kubernetes.io/serviceaccount/\n"
	"the service account's token and CA, in a pod\n"
	".TP\n"
	".I /var/lib/kubelet/device\\-plugins/\n"
	"where \\fBkerf agent run \\-\\-device\\-plugin\\-dir\\fR serves the device plugin API\n"
	".SH SEE ALSO\n"
	".BR kubectl (1),\n"
	".BR nvidia\\-smi (1);\n"
	"docs/cli.md, docs/kubernetes.md and docs/scenario.md in kerf's sources;\n"
	"\\fBkerf completion bash|zsh\\fR for shell completion.\n";

int kerf_cmd_man(int argc, char **argv)
{
	const struct kerf_spec *all;
	size_t nr;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", kerf_completion_longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: kerf man\n\nthe manual page kerf(1) as roff: kerf man >kerf.1; man ./kerf.1\n");
			return 0;
		}
		kerf_opt_error("kerf man", c, argv);
		return 2;
	}
	if (optind < argc) {
		kerf_opt_unexpected("kerf man", argv[optind], "(try 'kerf man --help')");
		return 2;
	}
	all = kerf_spec_all(&nr);
	fputs(head, stdout);
	for (size_t i = 0; i < nr; i++)
		command_section(stdout, &all[i]);
	fputs(tail, stdout);
	return fflush(stdout) == 0 ? 0 : 1;
}
