/*
 * output_alias: the --json flag kept by commands that had it before -o,
 * as another way to write -o json (docs/output.md).
 */
#ifndef KERF_CMD_OUTPUT_ALIAS_H
#define KERF_CMD_OUTPUT_ALIAS_H

#include <stdbool.h>

#include "cmd/output.h"

/*
 * --json (json) with -o's value (fmt_arg, NULL when -o was not given):
 * *fmt becomes json; 0, or 2 after a message naming both when -o asked
 * for another format (usage).
 */
int kerf_cli_json_alias(const char *prog, bool json, const char *fmt_arg,
			enum kerf_cli_output *fmt);

#endif
