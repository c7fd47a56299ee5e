/*
 * kerf-testapi: the test API server as a process, for scripts, the
 * crash-point tests and the binding benchmark: serves on 127.0.0.1 until
 * SIGTERM or SIGINT and writes a kubeconfig pointing at itself, so a
 * client uses it exactly as a real cluster.  SIGUSR1 forgets the history
 * (kerf_testapi_compact): every watch gets a 410 and its client lists
 * again.
 *
 *   kerf-testapi --port N --token-file F [--tls-cert F --tls-key F]
 *                --kubeconfig-out F [--bookmark-interval-ms N]
 *                [--watch-window N]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/parse.h"
#include "format/file.h"
#include "testapi/testapi.h"

enum { MAX_FILE_BYTES = 1 << 20 };

static void usage(FILE *f)
{
	fprintf(f, "usage: kerf-testapi --port N --token-file F [--tls-cert F --tls-key F [--tls-ca F]]\n"
		   "                    --kubeconfig-out F [--bookmark-interval-ms N] [--watch-window N]\n");
}

static void compact(struct kerf_testapi_store *st, void *arg)
{
	(void)arg;
	kerf_testapi_compact(st);
}

static int read_file(const char *opt, const char *path, char **out)
{
	struct kerf_file f;
	struct kerf_err err = { 0 };

	if (kerf_file_read(&f, path, MAX_FILE_BYTES, &err) < 0) {
		fprintf(stderr, "kerf-testapi: %s: %s\n", opt, err.msg);
		return -1;
	}
	*out = f.data;
	return 0;
}

/* The token: the file's first line, which must not be empty. */
static int read_token(const char *path, char **out)
{
	char *t, esc[128];

	if (read_file("--token-file", path, &t) < 0)
		return -1;
	t[strcspn(t, "\r\n")] = 0;
	if (!*t || strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=") != strlen(t)) {
		fprintf(stderr, "kerf-testapi: --token-file '%s': the first line must be a non-empty bearer token\n",
			kerf_escape(esc, sizeof(esc), path));
		free(t);
		return -1;
	}
	*out = t;
	return 0;
}

static int write_kubeconfig(const char *path, const char *url,
			    const char *token, const char *ca_file)
{
	FILE *f = fopen(path, "w");
	char esc[128], tls_line[4200];

	/* the CA that signed the serving certificate, else no verification
	   (which kerf's own client refuses: give --tls-ca for kerf) */
	if (ca_file)
		snprintf(tls_line, sizeof(tls_line), "    certificate-authority: %s\n", ca_file);
	else
		snprintf(tls_line, sizeof(tls_line), "%s",
			 !strncmp(url, "https", 5) ? "    insecure-skip-tls-verify: true\n" : "");

	if (!f) {
		fprintf(stderr, "kerf-testapi: cannot write --kubeconfig-out '%s'\n",
			kerf_escape(esc, sizeof(esc), path));
		return -1;
	}
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: kerf-testapi\n"
		   "  cluster:\n    server: %s\n%s"
		   "users:\n- name: kerf-testapi\n  user:\n    token: \"%s\"\n"
		   "contexts:\n- name: kerf-testapi\n  context:\n    cluster: kerf-testapi\n"
		   "    user: kerf-testapi\ncurrent-context: kerf-testapi\n",
		url, tls_line, token);
	if (fclose(f)) {
		fprintf(stderr, "kerf-testapi: cannot write --kubeconfig-out '%s'\n",
			kerf_escape(esc, sizeof(esc), path));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct kerf_testapi_opts opts = { 0 };
	const char *token_file = NULL, *cert_file = NULL, *key_file = NULL;
	const char *kubeconfig = NULL, *ca_file = NULL;
	char *token = NULL, *cert = NULL, *key = NULL;
	struct kerf_testapi *ta = NULL;
	struct kerf_err err = { 0 };
	bool have_port = false;
	sigset_t set;
	uint64_t v;
	int i, sig, rc = 2;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		char esc[128];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!val) {
			fprintf(stderr, "kerf-testapi: option '%s' needs a value\n",
				kerf_escape(esc, sizeof(esc), a));
			usage(stderr);
			return 2;
		}
		i++;
		if (!strcmp(a, "--port")) {
			if (kerf_parse_u64_opt(a, val, 0, 65535, &v, &err) < 0)
				goto bad;
			opts.port = (uint16_t)v;
			have_port = true;
		} else if (!strcmp(a, "--token-file")) {
			token_file = val;
		} else if (!strcmp(a, "--tls-cert")) {
			cert_file = val;
		} else if (!strcmp(a, "--tls-key")) {
			key_file = val;
		} else if (!strcmp(a, "--tls-ca")) {
			if (val[0] != '/' || strlen(val) > 4000) {
				fprintf(stderr, "kerf-testapi: --tls-ca '%s': an absolute path\n",
					kerf_escape(esc, sizeof(esc), val));
				return 2;
			}
			ca_file = val;
		} else if (!strcmp(a, "--kubeconfig-out")) {
			kubeconfig = val;
		} else if (!strcmp(a, "--bookmark-interval-ms")) {
			if (kerf_parse_u64_opt(a, val, 1, 3600000, &v, &err) < 0)
				goto bad;
			opts.bookmark_interval_ms = (uint32_t)v;
		} else if (!strcmp(a, "--watch-window")) {
			if (kerf_parse_u64_opt(a, val, 1, 1000000, &v, &err) < 0)
				goto bad;
			opts.watch_window = (uint32_t)v;
		} else {
			fprintf(stderr, "kerf-testapi: unknown option '%s'\n",
				kerf_escape(esc, sizeof(esc), a));
			usage(stderr);
			return 2;
		}
	}
	if (!have_port || !token_file || !kubeconfig) {
		fprintf(stderr, "kerf-testapi: --port, --token-file and --kubeconfig-out are required\n");
		usage(stderr);
		return 2;
	}
	if (ca_file && !cert_file) {
		fprintf(stderr, "kerf-testapi: --tls-ca goes with --tls-cert and --tls-key\n");
		return 2;
	}
	if (!cert_file != !key_file) {
		fprintf(stderr, "kerf-testapi: --tls-cert and --tls-key go together\n");
		return 2;
	}
	if (read_token(token_file, &token) < 0 ||
	    (cert_file && (read_file("--tls-cert", cert_file, &cert) < 0 ||
			   read_file("--tls-key", key_file, &key) < 0)))
		goto out;
	opts.token = token;
	opts.tls_cert_pem = cert;
	opts.tls_key_pem = key;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (kerf_testapi_start(&opts, &ta, &err) < 0) {
		fprintf(stderr, "kerf-testapi: %s\n", err.msg);
		rc = 1;
		goto out;
	}
	if (write_kubeconfig(kubeconfig, kerf_testapi_url(ta), token, ca_file) < 0) {
		rc = 1;
		goto out;
	}
	printf("kerf-testapi: serving %s\n", kerf_testapi_url(ta));
	fflush(stdout);
	/* SIGUSR1: forget the history, so every watch ends with a 410 */
	while (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
		kerf_testapi_with_store(ta, compact, NULL);
	rc = 0;
out:
	kerf_testapi_stop(ta);
	free(token);
	free(cert);
	free(key);
	return rc;
bad:
	fprintf(stderr, "kerf-testapi: %s\n", err.msg);
	return 2;
}
