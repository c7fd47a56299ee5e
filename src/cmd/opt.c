/*
 * opt: escaped messages about command-line options (see opt.h).
 */
#include "cmd/opt.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "core/policy.h"

enum { OPT_SHOWN_SIZE = 80 };

void kerf_opt_error(const char *prog, int c, char *const *argv)
{
	char shown[OPT_SHOWN_SIZE];
	const char *arg = optind > 0 && argv[optind - 1] ? argv[optind - 1] : "";
	bool is_long = arg[0] == '-' && arg[1] == '-';

	if (!is_long && optopt > 0 && optopt < 0x80) {
		/* a short option: name the letter, not the group it came in */
		char s[3] = { '-', (char)optopt, '\0' };

		kerf_escape(shown, sizeof(shown), s);
	} else {
		kerf_escape(shown, sizeof(shown), arg);
	}
	if (c == ':')
		fprintf(stderr, "%s: option '%s' needs a value\n", prog, shown);
	else if (is_long && optopt != 0)
		fprintf(stderr, "%s: option '%s' takes no value\n", prog, shown);
	else
		fprintf(stderr, "%s: unknown option '%s'\n", prog, shown);
}

void kerf_opt_unexpected(const char *prog, const char *arg, const char *hint)
{
	char shown[OPT_SHOWN_SIZE];

	kerf_escape(shown, sizeof(shown), arg);
	fprintf(stderr, "%s: unexpected argument '%s'%s%s\n", prog, shown,
		hint ? " " : "", hint ? hint : "");
}

int kerf_opt_policies(const char *prog, const char *opt, const char *s,
		      const char **names, size_t max, size_t *nr)
{
	char shown[OPT_SHOWN_SIZE];
	const char *p = s;
	size_t n = 0;

	kerf_escape(shown, sizeof(shown), s);
	if (!strcmp(s, "all")) {
		for (size_t i = 0; i < kerf_policy_count() && n < max; i++)
			names[n++] = kerf_policy_at(i)->name;
		*nr = n;
		return 0;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char tok[64], tok_shown[OPT_SHOWN_SIZE];
		const struct kerf_policy_info *info;

		if (len == 0 || len >= sizeof(tok)) {
			fprintf(stderr, "%s: %s '%s': expected NAME[,NAME...] or all, with no empty name\n",
				prog, opt, shown);
			return -1;
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		kerf_escape(tok_shown, sizeof(tok_shown), tok);
		info = kerf_policy_lookup(tok);
		if (!info) {
			fprintf(stderr, "%s: %s: unknown policy '%s' (known: ",
				prog, opt, tok_shown);
			for (size_t i = 0; i < kerf_policy_count(); i++)
				fprintf(stderr, "%s%s", i ? ", " : "",
					kerf_policy_at(i)->name);
			fprintf(stderr, ")\n");
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			if (names[i] == info->name) {
				fprintf(stderr, "%s: %s '%s': '%s' is given twice\n",
					prog, opt, shown, tok_shown);
				return -1;
			}
		if (n == max) {
			fprintf(stderr, "%s: %s '%s': more than %zu policies\n",
				prog, opt, shown, max);
			return -1;
		}
		names[n++] = info->name;
		if (!comma)
			break;
		p = comma + 1;
	}
	*nr = n;
	return 0;
}
