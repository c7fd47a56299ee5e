/* output: -o's formats and the one document of a run (see output.h). */
#include "cmd/output.h"

#include <string.h>

#include "base/buf.h"

int kerf_cli_output(const char *prog, const char *s, enum kerf_cli_output *out)
{
	static const char *const names[] = { "table", "wide", "json", "yaml" };
	char shown[80];

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*out = (enum kerf_cli_output)i;
			return 0;
		}
	fprintf(stderr, "%s: -o '%s': expected table, wide, json or yaml\n", prog,
		kerf_escape(shown, sizeof(shown), s));
	return 2;
}

int kerf_cli_print(const char *prog, const json_t *j, enum kerf_cli_output fmt,
		   FILE *out)
{
	if (fmt == KERF_OUT_YAML) {
		if (kerf_cli_yaml(j, out) == 0)
			return 0;
	} else if (json_dumpf(j, out, JSON_INDENT(4) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) == 0) {
		fputc('\n', out);
		return 0;
	}
	fprintf(stderr, "%s: cannot print the answer\n", prog);
	return 1;
}

json_t *kerf_cli_doc(const char *kind)
{
	return json_pack("{s:s, s:s}", "apiVersion", KERF_CLI_API_VERSION, "kind", kind);
}

int kerf_cli_emit(const char *prog, json_t *doc, enum kerf_cli_output fmt)
{
	int rc;

	if (!doc) {
		fprintf(stderr, "%s: out of memory building the output\n", prog);
		return 1;
	}
	rc = kerf_cli_print(prog, doc, fmt == KERF_OUT_YAML ? KERF_OUT_YAML : KERF_OUT_JSON,
			    stdout);
	json_decref(doc);
	return rc;
}
