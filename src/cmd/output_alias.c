#include "cmd/output_alias.h"

#include <stdio.h>

#include "base/buf.h"

int kerf_cli_json_alias(const char *prog, bool json, const char *fmt_arg,
			enum kerf_cli_output *fmt)
{
	char shown[40];

	if (!json)
		return 0;
	if (fmt_arg && *fmt != KERF_OUT_JSON) {
		/* two answers to one question: refuse rather than pick one */
		fprintf(stderr, "%s: --json and -o %s disagree (--json is -o json)\n",
			prog, kerf_escape(shown, sizeof(shown), fmt_arg));
		return 2;
	}
	*fmt = KERF_OUT_JSON;
	return 0;
}
