/*
 * api_client: what `kerf get` and `kerf explain` share: where kerf serve's
 * read-only API is (--server, else $KERF_SERVER, else
 * http://127.0.0.1:8080), one GET of it with libcurl, and the -o formats
 * (json as the server sent it, indented; yaml through libyaml's emitter).
 */
#ifndef KERF_CMD_API_CLIENT_H
#define KERF_CMD_API_CLIENT_H

#include <stdio.h>

#include <jansson.h>

#include "cmd/output.h"

#define KERF_CLI_DEFAULT_SERVER "http://127.0.0.1:8080"

/*
 * The options kerf get and kerf explain share (-o, --server, --snapshot,
 * -h) from argv: -1 to go on (optind at the first operand), else the exit
 * status (0 after --help, 2 after a usage message naming prog: also for
 * --server and --snapshot together).
 */
int kerf_cli_options(const char *prog, const char *usage, int argc, char **argv,
		     enum kerf_cli_output *fmt, const char **server, const char **snapshot);

/* --server and --snapshot given together or an empty file name: 2 after
 * a message naming prog; else -1 (go on). */
int kerf_cli_source_check(const char *prog, const char *server, const char *snapshot);

/* The server: opt when given, else $KERF_SERVER, else the default. */
const char *kerf_cli_server(const char *opt);

/*
 * GET server + path and decode the JSON answer into *out (the caller
 * decrefs it).  Returns 0, or 1 after a message on stderr naming the URL
 * and what failed: a server not reached, a non-2xx answer (its Status
 * message), a body that is not JSON.  A server that is not http:// or
 * https:// is 2 (usage).
 */
int kerf_cli_get(const char *prog, const char *server, const char *path,
		 json_t **out);

/*
 * The answer to path (/api/v1/tenants, queue, nodes, gpus, explain/NS/NAME)
 * from kerf serve at server, or, when snapshot is a file name, from that
 * file of `kerf sim snapshot` (cmd/snapshot_read.c): the same shapes.
 * Returns as kerf_cli_get: 0, 1 after a message on stderr, 2 for usage.
 */
int kerf_cli_fetch(const char *prog, const char *server, const char *snapshot,
		   const char *path, json_t **out);

/* Small readers of the answer: "" / 0 / false when absent or of another type. */
const char *kerf_cli_str(const json_t *o, const char *key);
long long kerf_cli_int(const json_t *o, const char *key);

#endif
