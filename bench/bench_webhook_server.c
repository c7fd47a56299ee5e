/*
 * bench_webhook_server: the admission webhook's HTTPS server
 * (src/admission/server.h) for bench/webhook_load.sh: /validate and
 * /mutate answered by the policy-free allow_handler (decode and encode
 * only), and with --objects the four routes of kerf serve
 * (/validate/pods, /mutate/pods, /validate/namespaces, /validate/tenants)
 * answered by the rules (admission/decide.h) under a policy snapshot of
 * that file's objects, as kerf serve answers them.  Serves until SIGINT
 * or SIGTERM, then prints its /metrics to stdout.
 *
 *   bench_webhook_server --cert FILE --key FILE [--addr 127.0.0.1:8443]
 *                        [--threads 2] [--objects OBJECTS.yaml]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission/allow_handler.h"
#include "admission/decide.h"
#include "admission/rules_handler.h"
#include "admission/server.h"
#include "base/buf.h"
#include "base/parse.h"
#include "format/file.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct rules_route {
	struct kerf_admission_policy *p;
	enum kerf_admission_route route;
};

/* The rules, as kerf serve's webhook answers (serve/webhook.c). */
static int rules_review(void *ctx, const char *path, const char *body,
			size_t len, int64_t deadline_ms,
			struct kerf_webhook_answer *ans)
{
	struct rules_route *r = ctx;

	(void)path;
	(void)deadline_ms;
	return kerf_webhook_rules_answer(r->p, r->route, body, len, ans);
}

static struct kerf_admission_policy *load_policy(const char *path)
{
	struct kerf_admission_config cfg;
	struct kerf_admission_policy *p;
	struct kerf_err err = { 0 };
	struct kerf_file f;

	kerf_admission_config_default(&cfg);
	if (kerf_admission_policy_new(&cfg, &p) < 0 ||
	    kerf_file_read(&f, path, 16 << 20, &err) < 0 ||
	    kerf_admission_policy_add_yaml(p, path, f.data, f.len, &err) < 0) {
		fprintf(stderr, "bench_webhook_server: --objects: %s\n", err.msg);
		exit(1);
	}
	kerf_file_release(&f);
	kerf_admission_policy_seal(p);
	return p;
}

int main(int argc, char **argv)
{
	static struct rules_route rr[KERF_ROUTE_NR];
	struct kerf_webhook_route all[2 + KERF_ROUTE_NR];
	const char *objects = NULL;
	static struct kerf_webhook_allow_cfg cfg = { .deny_label = "deny-me" };
	const struct kerf_webhook_route routes[] = {
		{ .path = "/validate", .fn = kerf_webhook_allow_review, .ctx = &cfg },
		{ .path = "/mutate", .fn = kerf_webhook_allow_review, .ctx = &cfg },
	};
	struct kerf_webhook_opts o = {
		.addr = "127.0.0.1:8443",
		.routes = routes,
		.nr_routes = 2,
	};
	struct kerf_webhook_server *s;
	struct kerf_err err = { 0 };
	struct sigaction sa;
	struct kerf_buf out;
	uint64_t n;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cert"))
			o.cert_path = argv[i + 1];
		else if (!strcmp(argv[i], "--key"))
			o.key_path = argv[i + 1];
		else if (!strcmp(argv[i], "--addr"))
			o.addr = argv[i + 1];
		else if (!strcmp(argv[i], "--objects"))
			objects = argv[i + 1];
		else if (!strcmp(argv[i], "--threads") &&
			 kerf_parse_u64(argv[i + 1], &n) == 0 && n && n <= 64)
			o.threads = (unsigned)n;
		else {
			fprintf(stderr, "bench_webhook_server: bad option '%s'\n",
				argv[i]);
			return 2;
		}
	}
	if (!o.cert_path || !o.key_path || argc % 2 == 0) {
		fprintf(stderr, "usage: bench_webhook_server --cert FILE --key FILE [--addr HOST:PORT] [--threads N] [--objects FILE]\n");
		return 2;
	}
	memcpy(all, routes, sizeof(routes));
	if (objects) {
		struct kerf_admission_policy *p = load_policy(objects);

		for (int r = 0; r < KERF_ROUTE_NR; r++) {
			rr[r] = (struct rules_route){ p, (enum kerf_admission_route)r };
			all[2 + r] = (struct kerf_webhook_route){
				kerf_admission_route_path((enum kerf_admission_route)r),
				rules_review, &rr[r] };
		}
		o.nr_routes = 2 + KERF_ROUTE_NR;
	}
	o.routes = all;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (kerf_webhook_start(&o, &s, &err) < 0) {
		fprintf(stderr, "bench_webhook_server: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "bench_webhook_server: listening on port %u\n",
		(unsigned)kerf_webhook_port(s));
	while (!stop)
		pause();
	kerf_buf_init(&out, 0);
	if (kerf_webhook_metrics_render(s, &out) == 0)
		fputs(kerf_buf_str(&out), stdout);
	kerf_buf_release(&out);
	kerf_webhook_stop(s);
	if (objects)
		kerf_admission_policy_put(rr[0].p);
	return 0;
}
