/*
 * bench_webhook_server: the admission webhook's HTTPS server
 * (src/admission/server.h) alone, for bench/webhook_load.sh: /validate
 * and /mutate answered by the policy-free allow_handler, which decodes
 * and encodes each AdmissionReview as the real path does.  Serves until
 * SIGINT or SIGTERM, then prints its /metrics to stdout.
 *
 *   bench_webhook_server --cert FILE --key FILE [--addr 127.0.0.1:8443]
 *                        [--threads 2]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admission/allow_handler.h"
#include "admission/server.h"
#include "base/buf.h"
#include "base/parse.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
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
		fprintf(stderr, "usage: bench_webhook_server --cert FILE --key FILE [--addr HOST:PORT] [--threads N]\n");
		return 2;
	}
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
	return 0;
}
