/*
 * kerf admission review FILE... --objects OBJECTS.yaml: the webhook's own
 * decision code on AdmissionReview files, offline.  OBJECTS.yaml holds the
 * Namespaces, Tenants, PriorityClasses and GPUPools the decisions depend
 * on (and Pods of gangs), as `kubectl apply -f` takes them (documents
 * separated by ---).
 *
 * A Pod goes through /mutate/pods and then /validate/pods with the
 * mutation applied, as the API server calls the two webhooks; a Namespace
 * through /validate/namespaces, a Tenant through /validate/tenants.
 * --webhook PATH picks one.  Prints one JSON document: the array of
 * AdmissionReview responses, in order; a line per review on stderr.
 * Exit 0 when every review is allowed, 3 when one is denied, 1 on an
 * error, 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/decide.h"
#include "admission/review.h"
#include "base/base64.h"
#include "base/buf.h"
#include "cmd/admission_options.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "format/file.h"
#include "format/json_patch.h"

static const char prog[] = "kerf admission review";

enum { MAX_FILE_BYTES = KERF_ADMISSION_BODY_MAX_BYTES, OPT_OBJECTS = 1,
       OPT_WEBHOOK, OPT_SCHED };

/* kerf admission review's own options; the admission options come first. */
const struct option kerf_admission_review_longopts[] = {
	{ "objects", required_argument, NULL, OPT_OBJECTS },
	{ "webhook", required_argument, NULL, OPT_WEBHOOK },
	{ "scheduler-name", required_argument, NULL, OPT_SCHED },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

enum { NR_OWN_OPTS = sizeof(kerf_admission_review_longopts) /
		      sizeof(kerf_admission_review_longopts[0]) - 1 };

static void usage(FILE *f)
{
	fprintf(f, "usage: kerf admission review FILE... --objects OBJECTS.yaml [options]\n"
		   "  --objects FILE          Namespaces, Tenants, PriorityClasses, GPUPools (YAML)\n"
		   "  --webhook PATH          only this webhook: /validate/pods, /mutate/pods,\n"
		   "                          /validate/namespaces, /validate/tenants,\n"
		   "                          /validate/resourceclaims\n"
		   "                          (default: by the object's kind; a Pod is mutated,\n"
		   "                          then validated)\n"
		   "  --scheduler-name NAME   kerf's scheduler name (kerf)\n"
		   "%s"
		   "prints the AdmissionReview responses as one JSON array; exit 0 all\n"
		   "allowed, 3 one denied, 1 error, 2 usage\n",
		   kerf_admission_options_help);
}

static int load_objects(const char *path, struct kerf_admission_policy *p)
{
	struct kerf_file f;
	struct kerf_err err = { 0 };
	int rc;

	if (kerf_file_read(&f, path, 16 << 20, &err) < 0) {
		fprintf(stderr, "%s: --objects: %s\n", prog, err.msg);
		return -1;
	}
	rc = kerf_admission_policy_add_yaml(p, path, f.data, f.len, &err);
	kerf_file_release(&f);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	kerf_admission_policy_seal(p);
	return 0;
}

/* The webhooks a review goes through, by its kind. */
static size_t routes_for(const json_t *review, int forced, int *routes)
{
	const char *kind = json_string_value(json_object_get(
		json_object_get(json_object_get(review, "request"), "kind"), "kind"));

	if (forced >= 0) {
		routes[0] = forced;
		return 1;
	}
	if (kind && !strcmp(kind, "Namespace")) {
		routes[0] = KERF_ROUTE_VALIDATE_NAMESPACES;
		return 1;
	}
	if (kind && !strcmp(kind, "Tenant")) {
		routes[0] = KERF_ROUTE_VALIDATE_TENANTS;
		return 1;
	}
	if (kind && (!strcmp(kind, "ResourceClaim") ||
		     !strcmp(kind, "ResourceClaimTemplate"))) {
		routes[0] = KERF_ROUTE_VALIDATE_CLAIMS;
		return 1;
	}
	routes[0] = KERF_ROUTE_MUTATE_PODS;
	routes[1] = KERF_ROUTE_VALIDATE_PODS;
	return 2;
}

/* The review with the answer's patch applied to request.object. */
static char *patched_body(const char *body, size_t len, const json_t *answer,
			  size_t *out_len, char *msg, size_t size)
{
	const json_t *resp = json_object_get(answer, "response");
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	json_t *review, *obj, *ops;
	char *text, *out = NULL;
	size_t n;

	review = json_loadb(body, len, 0, NULL);
	obj = json_object_get(json_object_get(review, "request"), "object");
	if (!b64 || !obj) {
		json_decref(review);
		return NULL;
	}
	text = NULL;
	if (kerf_base64_decode(b64, strlen(b64), &text, &n) == 0) {
		ops = json_loadb(text, n, 0, NULL);
		if (ops && kerf_json_patch_apply(obj, ops, msg, size) == 0) {
			out = json_dumps(review, JSON_COMPACT);
			*out_len = out ? strlen(out) : 0;
		}
		json_decref(ops);
	}
	free(text);
	json_decref(review);
	return out;
}

static int review_file(const struct kerf_admission_policy *p, const char *path,
		       int forced, json_t *all, bool *denied)
{
	struct kerf_file f;
	struct kerf_err err = { 0 };
	int routes[2];
	size_t n, blen;
	char *body = NULL;
	json_t *first;

	if (kerf_file_read(&f, path, MAX_FILE_BYTES, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return -1;
	}
	first = json_loadb(f.data, f.len, 0, NULL);
	n = routes_for(first, forced, routes);
	json_decref(first);
	body = f.data;
	blen = f.len;
	f.data = NULL;
	for (size_t i = 0; i < n; i++) {
		struct kerf_admission_answer a;
		json_t *answer;
		char msg[256] = "";

		if (kerf_admission_answer(p, routes[i], body, blen, &a) < 0) {
			fprintf(stderr, "%s: %s: out of memory\n", prog, path);
			free(body);
			return -1;
		}
		if (a.http_status != 200) {
			fprintf(stderr, "%s: %s: %s: %.*s\n", prog, path,
				kerf_admission_route_path(routes[i]), (int)a.len, a.body);
			kerf_admission_answer_release(&a);
			free(body);
			return -1;
		}
		answer = json_loadb(a.body, a.len, 0, NULL);
		fprintf(stderr, "%s: %s %s%s%s\n", path,
			kerf_admission_route_path(routes[i]), a.verdict,
			a.rule ? ": rule " : "", a.rule ? a.rule : "");
		if (!strcmp(a.verdict, "denied"))
			*denied = true;
		if (!strcmp(a.verdict, "patched") && i + 1 < n) {
			size_t nl;
			char *next = patched_body(body, blen, answer, &nl, msg, sizeof(msg));

			if (!next) {
				fprintf(stderr, "%s: %s: the patch does not apply: %s\n",
					prog, path, msg);
				json_decref(answer);
				kerf_admission_answer_release(&a);
				free(body);
				return -1;
			}
			free(body);
			body = next;
			blen = nl;
		}
		kerf_admission_answer_release(&a);
		if (!answer || json_array_append_new(all, answer) < 0) {
			free(body);
			return -1;
		}
	}
	free(body);
	return 0;
}

int kerf_cmd_admission(int argc, char **argv)
{
	struct option longopts[KERF_ADM_OPT_NR + NR_OWN_OPTS + 1];
	struct kerf_admission_config cfg;
	struct kerf_admission_opt_state st = { 0 };
	struct kerf_admission_policy *p = NULL;
	const char *objects = NULL;
	int forced = -1, opt, rc = 1;
	bool denied = false;
	json_t *all;

	if (argc < 2 || strcmp(argv[1], "review")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return 0;
		}
		fprintf(stderr, "kerf admission: expected the verb 'review'\n\n");
		usage(stderr);
		return 2;
	}
	argc--;
	argv++;
	kerf_admission_config_default(&cfg);
	memcpy(longopts, kerf_admission_longopts, sizeof(kerf_admission_longopts));
	memcpy(longopts + KERF_ADM_OPT_NR, kerf_admission_review_longopts,
	       sizeof(kerf_admission_review_longopts));
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_OBJECTS:
			objects = optarg;
			break;
		case OPT_WEBHOOK:
			forced = kerf_admission_route_find(optarg);
			if (forced < 0) {
				char shown[64];

				fprintf(stderr, "%s: --webhook '%s': not one of /validate/pods, /mutate/pods, /validate/namespaces, /validate/tenants, /validate/resourceclaims\n",
					prog, kerf_escape(shown, sizeof(shown), optarg));
				return 2;
			}
			break;
		case OPT_SCHED:
			if (!*optarg || strlen(optarg) >= sizeof(cfg.scheduler_name)) {
				fprintf(stderr, "%s: --scheduler-name: 1 to 253 bytes\n", prog);
				return 2;
			}
			memcpy(cfg.scheduler_name, optarg, strlen(optarg) + 1);
			break;
		case ':':
		case '?':
			kerf_opt_error(prog, opt, argv);
			return 2;
		default:
			if (kerf_admission_option(prog, opt, optarg, &cfg, &st) < 0)
				return 2;
		}
	}
	if (!objects) {
		fprintf(stderr, "%s: --objects OBJECTS.yaml is required (the Namespaces, Tenants, PriorityClasses and GPUPools)\n", prog);
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no AdmissionReview FILE given\n", prog);
		return 2;
	}
	if (kerf_admission_policy_new(&cfg, &p) < 0 || load_objects(objects, p) < 0)
		goto out;
	all = json_array();
	for (int i = optind; all && i < argc; i++)
		if (review_file(p, argv[i], forced, all, &denied) < 0) {
			json_decref(all);
			goto out;
		}
	if (!all || json_dumpf(all, stdout, JSON_INDENT(2)) < 0) {
		json_decref(all);
		goto out;
	}
	putchar('\n');
	json_decref(all);
	rc = denied ? 3 : 0;
out:
	kerf_admission_policy_put(p);
	return rc;
}
