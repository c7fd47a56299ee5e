/*
 * kerf serve: the controller and secondary scheduler on a Kubernetes API
 * server (serve/controller.h), with /healthz, /readyz and /metrics.
 * Out of a cluster with --kubeconfig; in one from the service account.
 * SIGTERM or SIGINT: the lease is given back and the process ends.
 */
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/parse.h"
#include "base/slab.h"
#include "cmd/cmd.h"
#include "cmd/admission_options.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "kube/client.h"
#include "kube/incluster.h"
#include "kube/kubeconfig.h"
#include "serve/controller.h"
#include "serve/crash.h"
#include "serve/endpoints.h"
#include "serve/webhook.h"

static const char usage_text[] =
	"usage: kerf serve [options]\n"
	"\n"
	"  --kubeconfig FILE       out of a cluster (default: the service account)\n"
	"  --context NAME          a context of the kubeconfig (default: current)\n"
	"  --scheduler-name NAME   pods with this schedulerName are kerf's (kerf)\n"
	"  --policy NAME           placement policy (kerf)\n"
	"  --qps N --burst N       client-side rate limit (50, 100)\n"
	"  --max-in-flight N       API requests on the wire at once, watches apart (64)\n"
	"  --metrics-addr ADDR     /metrics, /healthz, /readyz, /api/v1/ (:8080; '' = off)\n"
	"  --leader-elect          elect a leader on a Lease (for several replicas)\n"
	"  --lease-namespace NS    (kerf-system)   --lease-name NAME (kerf-scheduler)\n"
	"  --lease-duration D      (15s)  --renew-deadline D (10s)  --retry-period D (2s)\n"
	"  --identity ID           this replica's name (the host name)\n"
	"  --resync D              a cycle at least this often (1s)\n"
	"  --seed N                of the policy and jitter (1)\n"
	"  --webhook-addr ADDR     serve the admission webhook here (':8443'; '' = off,\n"
	"                          the default); needs --webhook-cert and --webhook-key\n"
	"  --webhook-cert FILE --webhook-key FILE  its serving pair (PEM), reloaded on change\n"
	"  --webhook-threads N     its worker threads (2)\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "15s", "500ms", "2m" into ms; -1 when it is not a duration. */
static int64_t duration_ms(const char *s)
{
	char num[32];
	size_t n = 0;
	uint64_t v;
	int64_t unit;

	while (s[n] >= '0' && s[n] <= '9' && n < sizeof(num) - 1)
		n++;
	memcpy(num, s, n);
	num[n] = '\0';
	if (kerf_parse_u64(num, &v) < 0 || v > 1000000)
		return -1;
	if (!strcmp(s + n, "ms"))
		unit = 1;
	else if (!strcmp(s + n, "s"))
		unit = 1000;
	else if (!strcmp(s + n, "m"))
		unit = 60000;
	else
		return -1;
	return (int64_t)v * unit;
}

enum {
	OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_SCHED, OPT_POLICY, OPT_QPS,
	OPT_BURST, OPT_METRICS, OPT_LEADER, OPT_LEASE_NS, OPT_LEASE_NAME,
	OPT_LEASE_DUR, OPT_RENEW, OPT_RETRY, OPT_IDENTITY, OPT_RESYNC, OPT_SEED,
	OPT_IN_FLIGHT, OPT_WH_ADDR, OPT_WH_CERT, OPT_WH_KEY, OPT_WH_THREADS,
};

const struct option kerf_serve_longopts[] = {
	{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "scheduler-name", required_argument, NULL, OPT_SCHED },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "qps", required_argument, NULL, OPT_QPS },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "max-in-flight", required_argument, NULL, OPT_IN_FLIGHT },
	{ "metrics-addr", required_argument, NULL, OPT_METRICS },
	{ "leader-elect", no_argument, NULL, OPT_LEADER },
	{ "lease-namespace", required_argument, NULL, OPT_LEASE_NS },
	{ "lease-name", required_argument, NULL, OPT_LEASE_NAME },
	{ "lease-duration", required_argument, NULL, OPT_LEASE_DUR },
	{ "renew-deadline", required_argument, NULL, OPT_RENEW },
	{ "retry-period", required_argument, NULL, OPT_RETRY },
	{ "identity", required_argument, NULL, OPT_IDENTITY },
	{ "resync", required_argument, NULL, OPT_RESYNC },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "webhook-addr", required_argument, NULL, OPT_WH_ADDR },
	{ "webhook-cert", required_argument, NULL, OPT_WH_CERT },
	{ "webhook-key", required_argument, NULL, OPT_WH_KEY },
	{ "webhook-threads", required_argument, NULL, OPT_WH_THREADS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

enum { NR_OWN_OPTS = sizeof(kerf_serve_longopts) / sizeof(kerf_serve_longopts[0]) - 1 };

static const char prog[] = "kerf serve";

static int webhook_metrics(void *ctx, struct kerf_buf *b)
{
	return kerf_serve_webhook_metrics(ctx, b);
}

static int bad_value(const char *opt, const char *v, const char *want)
{
	char shown[80];

	fprintf(stderr, "%s: %s%s '%s': %s\n", prog, opt[0] == '-' ? "" : "--",
		opt, kerf_escape(shown, sizeof(shown), v), want);
	return 2;
}

int kerf_cmd_serve(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL, *metrics = ":8080";
	struct kerf_controller_opts co = {
		.scheduler_name = "kerf", .policy = "kerf", .resync_ms = 1000, .seed = 1,
	};
	struct kerf_kube_client_opts ko = { .qps_milli = 50000, .burst = 100 };
	struct kerf_elector_config *lc = &co.lease;
	struct kerf_kube_config cfg;
	struct kerf_kube_client *client = NULL;
	struct kerf_kube_ops ops;
	struct kerf_controller *c = NULL;
	struct kerf_endpoints *ep = NULL;
	struct kerf_serve_webhook *wh = NULL;
	struct kerf_serve_webhook_opts wo = { 0 };
	struct kerf_admission_config acfg;
	struct kerf_admission_opt_state ast = { 0 };
	struct option allopts[NR_OWN_OPTS + KERF_ADM_OPT_NR + 1];
	struct kerf_err err = { 0 };
	char identity[KERF_LEASE_HOLDER_MAX];
	uint64_t v;
	int opt, rc = 1;

	/*
	 * One thread (the endpoints are polled from the loop below): the
	 * cached records (pods, workloads) come from kerf_slab, without
	 * malloc's header, rounding and holes.
	 */
	kerf_slab_enable();
	snprintf(lc->ns, sizeof(lc->ns), "kerf-system");
	snprintf(lc->name, sizeof(lc->name), "kerf-scheduler");
	lc->duration_ms = 15000;
	lc->renew_deadline_ms = 10000;
	lc->retry_ms = 2000;
	if (gethostname(identity, sizeof(identity)) != 0)
		snprintf(identity, sizeof(identity), "kerf");
	identity[sizeof(identity) - 1] = '\0';
	opterr = 0;
	optind = 1;
	memcpy(allopts, kerf_serve_longopts, NR_OWN_OPTS * sizeof(kerf_serve_longopts[0]));
	memcpy(allopts + NR_OWN_OPTS, kerf_admission_longopts,
	       sizeof(kerf_admission_longopts));
	memset(&allopts[NR_OWN_OPTS + KERF_ADM_OPT_NR], 0, sizeof(allopts[0]));
	kerf_admission_config_default(&acfg);
	while ((opt = getopt_long(argc, argv, ":h", allopts, NULL)) != -1) {
		switch (opt) {
		case OPT_KUBECONFIG: kubeconfig = optarg; break;
		case OPT_WH_ADDR: wo.addr = optarg; break;
		case OPT_WH_CERT: wo.cert_path = optarg; break;
		case OPT_WH_KEY: wo.key_path = optarg; break;
		case OPT_WH_THREADS:
			if (kerf_parse_u64_opt("--webhook-threads", optarg, 1, 64, &v, &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			wo.threads = (unsigned)v;
			break;
		case OPT_CONTEXT: context = optarg; break;
		case OPT_SCHED: co.scheduler_name = optarg; break;
		case OPT_POLICY: co.policy = optarg; break;
		case OPT_METRICS: metrics = optarg; break;
		case OPT_LEADER: co.leader_elect = true; break;
		case OPT_LEASE_NS:
			if (strlen(optarg) >= sizeof(lc->ns))
				return bad_value("--lease-namespace", optarg, "too long");
			snprintf(lc->ns, sizeof(lc->ns), "%s", optarg);
			break;
		case OPT_LEASE_NAME:
			if (strlen(optarg) >= sizeof(lc->name))
				return bad_value("--lease-name", optarg, "too long");
			snprintf(lc->name, sizeof(lc->name), "%s", optarg);
			break;
		case OPT_IDENTITY:
			if (!*optarg || strlen(optarg) >= sizeof(identity))
				return bad_value("--identity", optarg, "1 to 255 bytes");
			snprintf(identity, sizeof(identity), "%s", optarg);
			break;
		case OPT_QPS:
		case OPT_BURST:
		case OPT_SEED:
			if (kerf_parse_u64_opt(opt == OPT_QPS ? "--qps" : opt == OPT_BURST ? "--burst" : "--seed",
					       optarg, opt == OPT_SEED ? 0 : 1,
					       opt == OPT_SEED ? UINT64_MAX : 100000, &v, &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			if (opt == OPT_QPS)
				ko.qps_milli = v * 1000;
			else if (opt == OPT_BURST)
				ko.burst = v;
			else
				co.seed = v;
			break;
		case OPT_IN_FLIGHT:
			if (kerf_parse_u64_opt("--max-in-flight", optarg, 1, 4096, &v, &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			ko.max_in_flight = (unsigned)v;
			break;
		case OPT_LEASE_DUR:
		case OPT_RENEW:
		case OPT_RETRY:
		case OPT_RESYNC: {
			int64_t ms = duration_ms(optarg);

			if (ms <= 0)
				return bad_value(kerf_serve_longopts[opt - OPT_KUBECONFIG].name, optarg,
						 "expected a duration such as 15s, 500ms or 2m");
			if (opt == OPT_LEASE_DUR)
				lc->duration_ms = ms;
			else if (opt == OPT_RENEW)
				lc->renew_deadline_ms = ms;
			else if (opt == OPT_RETRY)
				lc->retry_ms = ms;
			else
				co.resync_ms = ms;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			fputs(kerf_admission_options_help, stdout);
			return 0;
		default:
			if (opt >= KERF_ADM_OPT_BASE) {
				if (kerf_admission_option(prog, opt, optarg, &acfg, &ast) < 0)
					return 2;
				break;
			}
			kerf_opt_error(prog, opt, argv);
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], NULL);
		return 2;
	}
	if (wo.addr && wo.addr[0] && (!wo.cert_path || !wo.key_path)) {
		fprintf(stderr, "%s: --webhook-addr needs --webhook-cert and --webhook-key (the API server calls webhooks over HTTPS only)\n", prog);
		return 2;
	}
	if (snprintf(acfg.scheduler_name, sizeof(acfg.scheduler_name), "%s",
		     co.scheduler_name) >= (int)sizeof(acfg.scheduler_name))
		return bad_value("--scheduler-name", co.scheduler_name, "too long");
	wo.cfg = &acfg;
	snprintf(lc->identity, sizeof(lc->identity), "%s", identity);
	co.identity = identity;
	/* the crash-point tests' kill switch (serve/crash.h) */
	if (kerf_crash_parse(getenv(KERF_CRASH_ENV), &co.crash, &err) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 2;
	}
	kerf_kube_config_init(&cfg);
	if (kubeconfig)
		rc = kerf_kubeconfig_load(&cfg, kubeconfig, context, &err);
	else
		rc = kerf_kube_incluster_from_env(&cfg, NULL, &err);
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		kerf_kube_config_release(&cfg);
		return 1;
	}
	rc = 1;
	/* a SIGTERM while starting ends as cleanly as one later */
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	client = kerf_kube_client_new(&cfg, &ko, &err);
	if (!client)
		goto out;
	kerf_kube_client_ops(client, &ops);
	co.ops = &ops;
	if (kerf_controller_new(&co, &c, &err) < 0 ||
	    (metrics[0] && kerf_endpoints_start(metrics, c, kerf_kube_client_counters(client), &ep, &err) < 0) ||
	    (wo.addr && wo.addr[0] && kerf_serve_webhook_start(&wo, c, &wh, &err) < 0) ||
	    kerf_controller_start(c, &err) < 0)
		goto out;
	kerf_endpoints_extra_metrics(ep, webhook_metrics, wh);
	if (wh)
		fprintf(stderr, "%s: admission webhook on %s (port %u)\n", prog,
			wo.addr, (unsigned)kerf_serve_webhook_port(wh));
	fprintf(stderr, "%s: %s as %s, scheduler name %s\n", prog,
		co.leader_elect ? "electing a leader" : "leading alone", identity,
		co.scheduler_name);
	int64_t told_ms = wall_ms(), trimmed_ms = told_ms;

	while (!stop) {
		int64_t now = wall_ms(), wait = kerf_controller_step(c, now);

#ifdef __GLIBC__
		/*
		 * Free memory back to the system, at most every 10 s and only
		 * with nothing in flight: a burst (a relist, a cycle of 40,000
		 * bindings) frees what it took, but glibc keeps the pages.
		 */
		if (now - trimmed_ms >= 10000 && !kerf_controller_in_flight(c)) {
			malloc_trim(0);
			trimmed_ms = now;
		}
#endif

		/* say what readiness waits for, every 10 s until it is ready */
		if (!kerf_controller_synced(c) && now - told_ms >= 10000) {
			char why[1024];

			kerf_controller_waiting(c, why, sizeof(why));
			fprintf(stderr, "%s: caches not synced yet: %s\n", prog, why);
			told_ms = now;
		}

		kerf_serve_webhook_step(wh, now);
		kerf_endpoints_run(ep, now);
		kerf_kube_client_poll(client, (int)(wait < 0 ? 0 : wait > 100 ? 100 : wait));
	}
	/* give the lease back, and wait a little for the answer */
	kerf_controller_stop(c, wall_ms());
	for (int i = 0; i < 20 && kerf_controller_in_flight(c); i++)
		kerf_kube_client_poll(client, 100);
	rc = 0;
out:
	if (rc && err.msg[0])
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	kerf_endpoints_stop(ep);
	kerf_serve_webhook_stop(wh);
	kerf_controller_free(c);
	kerf_kube_client_free(client);
	kerf_kube_config_release(&cfg);
	return rc;
}
