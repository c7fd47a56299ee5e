/*
 * spec_help: the dispatch and the help that come from the registry
 * (spec.h): the command list, -h/--help anywhere on the line, kerf help,
 * kerf version, and the usage lines as "kubectl kerf" when kerf runs as
 * the kubectl plugin.
 */
#include "cmd/spec.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"

#ifndef KERF_VERSION
#define KERF_VERSION "0.0.0"
#endif

enum { MAX_PATH_WORDS = 4 };

void kerf_spec_usage(FILE *out)
{
	const struct kerf_spec *all;
	size_t nr;

	all = kerf_spec_all(&nr);
	fprintf(out, "usage: %s <command> [options]\n\ncommands:\n", kerf_prog_name);
	for (size_t i = 0; i < nr; i++)
		if (!strchr(all[i].path, ' '))
			fprintf(out, "  %-10s %s\n", all[i].path, all[i].summary);
	fprintf(out, "\n'%s help COMMAND' or '%s COMMAND --help' tells more;\n"
		"-h and --help work anywhere on the line.\n",
		kerf_prog_name, kerf_prog_name);
}

/* The entry's long options, both tables, as one search: the match or NULL. */
static const struct option *long_option(const struct kerf_spec *s, const char *name,
					size_t len)
{
	const struct option *prefix = NULL;
	int nr_prefix = 0;

	for (size_t i = 0; i < kerf_spec_nr_longopts(s); i++) {
		const struct option *o = kerf_spec_longopt(s, i);

		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
		if (!strncmp(o->name, name, len)) {
			prefix = o;
			nr_prefix++;
		}
	}
	/* getopt_long takes an unambiguous abbreviation */
	return nr_prefix == 1 ? prefix : NULL;
}

/* Whether short option c of s takes a value. */
static bool short_has_value(const struct kerf_spec *s, char c)
{
	const struct kerf_spec_opt *lists[] = { s->opts, s->more_opts };

	for (size_t l = 0; l < 2; l++)
		for (const struct kerf_spec_opt *o = lists[l]; o && o->name; o++)
			if (o->short_name == c)
				return o->arg != NULL;
	return false;
}

int kerf_spec_wants_help(const struct kerf_spec *s, int from, int argc,
			 char *const *argv)
{
	for (int i = from; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return 0;
		if (a[0] != '-' || !a[1])
			continue;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			const struct option *o = long_option(s, a + 2, len);

			/* --help, or its abbreviation where getopt takes one */
			if (o ? !strcmp(o->name, "help")
			      : len == 4 && !strncmp(a + 2, "help", 4))
				return 1;
			if (o && o->has_arg == required_argument && !eq)
				i++;  /* its value */
			continue;
		}
		for (const char *c = a + 1; *c; c++) {
			if (*c == 'h')
				return 1;
			if (short_has_value(s, *c)) {
				if (!c[1])
					i++;  /* its value is the next word */
				break;
			}
		}
	}
	return 0;
}

int kerf_spec_run(const struct kerf_spec *s, int nr_words, int argc, char **argv)
{
	char path[128];

	/* the nearest entry on the path that runs */
	while (nr_words > 1 && !s->run) {
		const char *sp = strrchr(s->path, ' ');

		snprintf(path, sizeof(path), "%.*s", (int)(sp - s->path), s->path);
		s = kerf_spec_find(path);
		nr_words--;
	}
	return s->run(argc - nr_words, argv + nr_words);
}

/* The command's --help with its path, argv as main would have it. */
static int run_help(const struct kerf_spec *s)
{
	char path[128], *words[MAX_PATH_WORDS + 3], *save = NULL;
	int n = 0;

	snprintf(path, sizeof(path), "%s", s->path);
	words[n++] = (char *)"kerf";
	for (char *w = strtok_r(path, " ", &save); w && n <= MAX_PATH_WORDS;
	     w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	words[n] = (char *)"--help";
	words[n + 1] = NULL;
	return kerf_spec_run(s, n - 1, n + 1, words);
}

/*
 * line with "kerf " as kerf_prog_name where it starts a command: after
 * "usage: ", at the start past blanks, or after a quote.
 */
static void put_line_as(const char *line, FILE *out)
{
	const char *p = line;

	while (*p) {
		bool at_word = p == line || p[-1] == '\'' || p[-1] == '`' ||
			       (p[-1] == ' ' && (!strncmp(line, "usage: ", 7) ||
						 strspn(line, " ") >= (size_t)(p - line)));

		if (at_word && !strncmp(p, "kerf ", 5)) {
			fputs(kerf_prog_name, out);
			p += 4;
			continue;
		}
		fputc(*p++, out);
	}
}

int kerf_spec_help(const struct kerf_spec *s)
{
	char line[1024];
	FILE *tmp;
	int saved, status;

	if (!strcmp(kerf_prog_name, "kerf"))
		return run_help(s);
	/* as the kubectl plugin: the command's text, then its usage lines */
	fflush(stdout);
	tmp = tmpfile();
	saved = dup(STDOUT_FILENO);
	if (!tmp || saved < 0 || dup2(fileno(tmp), STDOUT_FILENO) < 0) {
		if (tmp)
			fclose(tmp);
		if (saved >= 0)
			close(saved);
		return run_help(s);
	}
	status = run_help(s);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp))
		put_line_as(line, stdout);
	fclose(tmp);
	return status;
}

int kerf_cmd_help(int argc, char **argv)
{
	const struct kerf_spec *s;
	char shown[80];
	int nr;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		kerf_spec_usage(stdout);
		return 0;
	}
	s = kerf_spec_lookup(argc, argv, &nr);
	if (!s || (nr + 1 < argc && kerf_spec_has_children(s))) {
		const char *bad = argv[nr + 1];

		fprintf(stderr, "%s help: unknown command '%s%s%s'\n\n", kerf_prog_name,
			s ? s->path : "", s ? " " : "",
			kerf_escape(shown, sizeof(shown), bad));
		kerf_spec_usage(stderr);
		return 2;
	}
	return kerf_spec_help(s);
}

int kerf_cmd_version(int argc, char **argv)
{
	if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");

		fprintf(help ? stdout : stderr, "usage: %s version\n", kerf_prog_name);
		return help ? 0 : 2;
	}
	printf("kerf %s\n", KERF_VERSION);
	return 0;
}
