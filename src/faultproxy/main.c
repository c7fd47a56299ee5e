/*
 * kerf-fault-proxy: the fault proxy as a process, for scripts and by hand:
 * forwards to the API server of --upstream-kubeconfig, serves kerf on
 * 127.0.0.1 with its own certificate and token, writes a kubeconfig for
 * kerf pointing at itself, injects the faults its options ask for, and
 * runs until SIGTERM or SIGINT, then prints what it injected.
 *
 *   kerf-fault-proxy --upstream-kubeconfig F --port N --token-file F
 *       --tls-cert F --tls-key F --tls-ca F --kubeconfig-out F
 *       [--seed N] [--bind-log F] [--conflict-permille N]
 *       [--conflict-after-forward] [--server-error-permille N]
 *       [--throttle-permille N] [--retry-after-s N] [--gone-permille N]
 *       [--gone-after-events N] [--drop-after-events N]
 *       [--drop-after-ms N] [--latency-ms N]
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"
#include "faultproxy/faultproxy.h"
#include "kube/kubeconfig.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: kerf-fault-proxy --upstream-kubeconfig F --port N --token-file F\n"
		   "           --tls-cert F --tls-key F --tls-ca F --kubeconfig-out F\n"
		   "           [--seed N] [--bind-log F] [--conflict-permille N] [--conflict-after-forward]\n"
		   "           [--server-error-permille N] [--throttle-permille N] [--retry-after-s N]\n"
		   "           [--gone-permille N] [--gone-after-events N] [--drop-after-events N]\n"
		   "           [--drop-after-ms N] [--latency-ms N]\n");
}

struct num_opt {
	const char *name;
	uint64_t max;
	size_t off;          /* in struct kerf_fault_rates, a uint32_t */
};

static const struct num_opt nums[] = {
	{ "--conflict-permille", 1000, offsetof(struct kerf_fault_rates, conflict_permille) },
	{ "--server-error-permille", 1000, offsetof(struct kerf_fault_rates, server_error_permille) },
	{ "--throttle-permille", 1000, offsetof(struct kerf_fault_rates, throttle_permille) },
	{ "--retry-after-s", 3600, offsetof(struct kerf_fault_rates, retry_after_s) },
	{ "--gone-permille", 1000, offsetof(struct kerf_fault_rates, gone_permille) },
	{ "--gone-after-events", 1000000, offsetof(struct kerf_fault_rates, gone_after_events) },
	{ "--drop-after-events", 1000000, offsetof(struct kerf_fault_rates, drop_after_events) },
	{ "--drop-after-ms", 86400000, offsetof(struct kerf_fault_rates, drop_after_ms) },
	{ "--latency-ms", 600000, offsetof(struct kerf_fault_rates, latency_ms) },
};

/* A PEM or token file's text; NULL after a message. */
static char *slurp(const char *what, const char *path)
{
	struct kerf_err err = { 0 };
	char *text = NULL;
	size_t len;

	if (kerf_kube_read_small_file(what, path, KERF_KUBE_PEM_MAX_BYTES, &text,
				      &len, &err) < 0) {
		fprintf(stderr, "kerf-fault-proxy: %s\n", err.msg);
		return NULL;
	}
	return text;
}

static void report(struct kerf_fault_proxy *p)
{
	struct kerf_fault_counts c;

	kerf_fault_proxy_counts(p, &c);
	printf("kerf-fault-proxy: requests %" PRIu64 " forwarded %" PRIu64
	       " watches %" PRIu64 " conflicts %" PRIu64 " (%" PRIu64
	       " after forwarding) 500 %" PRIu64 " 503 %" PRIu64 " 504 %" PRIu64
	       " 429 %" PRIu64 " gone %" PRIu64 "+%" PRIu64 " drops %" PRIu64
	       " binds %" PRIu64 " upstream errors %" PRIu64 "\n",
	       c.requests, c.forwarded, c.watches, c.conflicts,
	       c.conflicts_forwarded, c.server_errors[0], c.server_errors[1],
	       c.server_errors[2], c.throttled, c.gone_at_start,
	       c.gone_mid_stream, c.drops, c.binds_created, c.upstream_errors);
}

int main(int argc, char **argv)
{
	struct kerf_fault_proxy_opts o = { 0 };
	const char *upstream = NULL, *token_file = NULL, *cert_file = NULL;
	const char *key_file = NULL, *ca_file = NULL, *kubeconfig = NULL;
	char *token = NULL, *cert = NULL, *key = NULL;
	struct kerf_kube_config up;
	struct kerf_fault_proxy *p = NULL;
	struct kerf_err err = { 0 };
	bool have_port = false;
	sigset_t set;
	uint64_t v;
	int sig, rc = 2;

	kerf_kube_config_init(&up);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		char esc[128];
		size_t k;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--conflict-after-forward")) {
			o.rates.conflict_after_forward = true;
			continue;
		}
		if (!val) {
			fprintf(stderr, "kerf-fault-proxy: option '%s' needs a value\n",
				kerf_escape(esc, sizeof(esc), a));
			usage(stderr);
			return 2;
		}
		i++;
		for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
			if (!strcmp(a, nums[k].name))
				break;
		if (k < sizeof(nums) / sizeof(nums[0])) {
			if (kerf_parse_u64_opt(a, val, 0, nums[k].max, &v, &err) < 0)
				goto bad;
			*(uint32_t *)((char *)&o.rates + nums[k].off) = (uint32_t)v;
		} else if (!strcmp(a, "--port")) {
			if (kerf_parse_u64_opt(a, val, 0, 65535, &v, &err) < 0)
				goto bad;
			o.port = (uint16_t)v;
			have_port = true;
		} else if (!strcmp(a, "--seed")) {
			if (kerf_parse_u64_opt(a, val, 0, UINT64_MAX, &v, &err) < 0)
				goto bad;
			o.seed = v;
		} else if (!strcmp(a, "--upstream-kubeconfig")) {
			upstream = val;
		} else if (!strcmp(a, "--token-file")) {
			token_file = val;
		} else if (!strcmp(a, "--tls-cert")) {
			cert_file = val;
		} else if (!strcmp(a, "--tls-key")) {
			key_file = val;
		} else if (!strcmp(a, "--tls-ca")) {
			ca_file = val;
		} else if (!strcmp(a, "--kubeconfig-out")) {
			kubeconfig = val;
		} else if (!strcmp(a, "--bind-log")) {
			o.bind_log_path = val;
		} else {
			fprintf(stderr, "kerf-fault-proxy: unknown option '%s'\n",
				kerf_escape(esc, sizeof(esc), a));
			usage(stderr);
			return 2;
		}
	}
	if (!upstream || !have_port || !token_file || !cert_file || !key_file ||
	    !ca_file || !kubeconfig) {
		fprintf(stderr, "kerf-fault-proxy: --upstream-kubeconfig, --port, --token-file, --tls-cert, --tls-key, --tls-ca and --kubeconfig-out are required\n");
		usage(stderr);
		return 2;
	}
	if (kerf_kubeconfig_load(&up, upstream, NULL, &err) < 0) {
		fprintf(stderr, "kerf-fault-proxy: --upstream-kubeconfig: %s\n", err.msg);
		return 2;
	}
	if (!(token = slurp("--token-file", token_file)) ||
	    !(cert = slurp("--tls-cert", cert_file)) ||
	    !(key = slurp("--tls-key", key_file)))
		goto out;
	token[strcspn(token, " \t\r\n")] = '\0';
	if (!*token) {
		fprintf(stderr, "kerf-fault-proxy: --token-file: the first line must be a bearer token\n");
		goto out;
	}
	o.upstream = &up;
	o.token = token;
	o.tls_cert_pem = cert;
	o.tls_key_pem = key;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	rc = 1;
	if (kerf_fault_proxy_start(&o, &p, &err) < 0 ||
	    kerf_fault_proxy_write_kubeconfig(p, kubeconfig, ca_file, &err) < 0) {
		fprintf(stderr, "kerf-fault-proxy: %s\n", err.msg);
		goto out;
	}
	printf("kerf-fault-proxy: serving %s\n", kerf_fault_proxy_url(p));
	fflush(stdout);
	sigwait(&set, &sig);
	report(p);
	rc = 0;
	goto out;
bad:
	fprintf(stderr, "kerf-fault-proxy: %s\n", err.msg);
	usage(stderr);
out:
	kerf_fault_proxy_stop(p);
	kerf_kube_config_release(&up);
	free(token);
	free(cert);
	free(key);
	return rc;
}
