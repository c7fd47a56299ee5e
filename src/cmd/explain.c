/*
 * kerf explain NAMESPACE/POD: why a pod waits (or where it runs), from
 * kerf serve's read-only API (GET /api/v1/explain/NS/POD): the verdict
 * of the last cycle, then every layer kerf can tell (the pod and its
 * gang, class, budget, quota per flavor, capacity, topology, isolation,
 * preemption), each marked blocking or not, then what would unblock
 * each blocking one.  --snapshot reads a file of `kerf sim snapshot`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/api_client.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/table.h"

static const char usage_text[] =
	"usage: kerf explain NAMESPACE/POD [-o table|json|yaml] [--server URL | --snapshot FILE]\n"
	"\n"
	"  -o, --output FMT   table (default; wide is the same), json or yaml\n"
	"  --server URL       kerf serve's endpoint (default $KERF_SERVER, else " KERF_CLI_DEFAULT_SERVER ")\n"
	"  --snapshot FILE    read a file of 'kerf sim snapshot': TENANT/WORKLOAD names a\n"
	"                     workload pending in it\n"
	"\n"
	"exit status: 0, 1 failure (server or file not read, the pod unknown there, or\n"
	"not pending in the snapshot), 2 usage\n";

static const char prog[] = "kerf explain";

/* A label and its value, the value escaped. */
static void field(const char *label, const char *value)
{
	char *shown = kerf_table_escape(value);

	printf("%-10s %s\n", label, shown ? shown : "(out of memory)");
	free(shown);
}

/* t after a blank line, unless it has no rows; then released. */
static void print_table(struct kerf_table *t)
{
	if (t->nr_rows > 1) {
		printf("\n");
		if (kerf_table_print(t, stdout) < 0)
			fprintf(stderr, "%s: out of memory\n", prog);
	}
	kerf_table_release(t);
}

static void print_text(const json_t *a)
{
	const json_t *pod = json_object_get(a, "pod"), *wl = json_object_get(a, "workload");
	const json_t *l;
	struct kerf_table t;
	static const char *const head[] = { "LAYER", "BLOCKING", "MESSAGE", NULL };
	static const char *const unblock_head[] = { "LAYER", "WOULD UNBLOCK IT", NULL };
	char text[512], wait[32];
	size_t i;

	snprintf(text, sizeof(text), "%s/%s", kerf_cli_str(pod, "namespace"), kerf_cli_str(pod, "name"));
	field("Pod:", text);
	if (json_is_string(json_object_get(pod, "node")))
		field("Node:", kerf_cli_str(pod, "node"));
	if (json_is_object(wl)) {
		if (json_is_string(json_object_get(wl, "tenant")))
			snprintf(text, sizeof(text), "%s (%s; tenant %s, class %s, %lld pods, %lld GPU milli)",
				 kerf_cli_str(wl, "key"), kerf_cli_str(wl, "state"), kerf_cli_str(wl, "tenant"),
				 kerf_cli_str(wl, "class"), kerf_cli_int(wl, "pods"), kerf_cli_int(wl, "gpuMilli"));
		else
			snprintf(text, sizeof(text), "%s (%s, %lld pods there)", kerf_cli_str(wl, "key"),
				 kerf_cli_str(wl, "state"), kerf_cli_int(wl, "podsThere"));
		field("Workload:", text);
		if (json_is_number(json_object_get(wl, "waitSeconds"))) {
			kerf_units_duration((int64_t)(json_number_value(json_object_get(wl, "waitSeconds")) * 1000),
					   wait, sizeof(wait));
			field("Waiting:", wait);
		}
	}
	field("Reason:", kerf_cli_str(a, "reason"));
	field("Message:", kerf_cli_str(a, "message"));
	kerf_table_init(&t, head);
	json_array_foreach(json_object_get(a, "layers"), i, l) {
		const char *row[] = { kerf_cli_str(l, "layer"),
				      json_is_true(json_object_get(l, "blocking")) ? "yes" : "no",
				      kerf_cli_str(l, "message") };

		kerf_table_row(&t, row);
	}
	print_table(&t);
	/* what would unblock each blocking layer */
	kerf_table_init(&t, unblock_head);
	json_array_foreach(json_object_get(a, "layers"), i, l) {
		const char *row[] = { kerf_cli_str(l, "layer"), kerf_cli_str(l, "unblock") };

		if (json_is_true(json_object_get(l, "blocking")) && row[1][0])
			kerf_table_row(&t, row);
	}
	print_table(&t);
}

int kerf_cmd_explain(int argc, char **argv)
{
	enum kerf_cli_output fmt = KERF_OUT_TABLE;
	const char *server = NULL, *snapshot = NULL, *arg, *slash;
	char shown[300], path[700];
	json_t *answer;
	int rc;

	rc = kerf_cli_options(prog, usage_text, argc, argv, &fmt, &server, &snapshot);
	if (rc >= 0)
		return rc;
	if (optind >= argc) {
		fprintf(stderr, "%s: which pod? NAMESPACE/POD\n", prog);
		fputs(usage_text, stderr);
		return 2;
	}
	arg = argv[optind];
	slash = strchr(arg, '/');
	/* names are DNS labels and subdomains: nothing to escape in a URL */
	if (!slash || slash == arg || !slash[1] || strchr(slash + 1, '/') || strlen(arg) > 317 ||
	    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789-./") != strlen(arg)) {
		fprintf(stderr, "%s: '%s': expected NAMESPACE/POD (lower-case letters, digits, '-' and '.')\n",
			prog, kerf_escape(shown, sizeof(shown), arg));
		return 2;
	}
	if (optind + 1 < argc) {
		kerf_opt_unexpected(prog, argv[optind + 1], NULL);
		return 2;
	}
	snprintf(path, sizeof(path), "/api/v1/explain/%s", arg);
	rc = kerf_cli_fetch(prog, server, snapshot, path, &answer);
	if (rc)
		return rc;
	if (fmt == KERF_OUT_JSON || fmt == KERF_OUT_YAML)
		rc = kerf_cli_print(prog, answer, fmt, stdout);
	else
		print_text(answer);
	json_decref(answer);
	return rc;
}
