/*
 * output: -o table|wide|json|yaml, the same on every kerf command that
 * prints data (issue 13, friction 3; docs/output.md).
 *
 *   table  the default: what a person reads
 *   wide   the table with more columns
 *   json   one JSON document per run: {"apiVersion": "kerf.io/api/v1",
 *          "kind": ..., camelCase keys}, its schema in docs/schema/KIND.json
 *   yaml   the same document as YAML (libyaml's emitter)
 */
#ifndef KERF_CMD_OUTPUT_H
#define KERF_CMD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#define KERF_CLI_API_VERSION "kerf.io/api/v1"

/* The output formats of -o. */
enum kerf_cli_output {
	KERF_OUT_TABLE = 0,
	KERF_OUT_WIDE,
	KERF_OUT_JSON,
	KERF_OUT_YAML,
};

/* -o's value as a format: 0, or 2 after a message on stderr naming prog
 * and the formats (usage). */
int kerf_cli_output(const char *prog, const char *s, enum kerf_cli_output *out);

/* json or yaml: the format prints a document, not a table. */
static inline bool kerf_cli_output_is_doc(enum kerf_cli_output fmt)
{
	return fmt == KERF_OUT_JSON || fmt == KERF_OUT_YAML;
}

/* A new document {"apiVersion": "kerf.io/api/v1", "kind": kind}; NULL on
 * OOM. */
json_t *kerf_cli_doc(const char *kind);

/* j as JSON (indented) or YAML on out: 0, or 1 after a message on stderr. */
int kerf_cli_print(const char *prog, const json_t *j, enum kerf_cli_output fmt,
		   FILE *out);

/*
 * The document of a run on stdout in fmt (json or yaml) and released:
 * 0, or 1 after a message on stderr (NULL doc: out of memory).
 */
int kerf_cli_emit(const char *prog, json_t *doc, enum kerf_cli_output fmt);

/* j as YAML (libyaml's emitter), a string that reads back as another
 * type (a number, a boolean, null, empty) quoted: 0 or -1. */
int kerf_cli_yaml(const json_t *j, FILE *out);

#endif
