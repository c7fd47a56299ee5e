/*
 * test_serve_http: kerf serve's /metrics text and the `kerf get` /
 * `kerf explain` commands against its endpoints.  A controller runs on
 * the scriptable fake API (a gang of four bound, a pod without a tenant
 * told why); its /metrics text is parsed as Prometheus does (HELP and
 * TYPE before the samples of a family, label values with their escapes,
 * histogram buckets cumulative up to +Inf = _count) and each family the
 * issue names is checked.  Then the endpoints listen on loopback and the
 * kerf binary (argv[1]) is run against them: tables, -o json and yaml,
 * explain, a 404, a refused connection, and bad usage (exit 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "kube/fake.h"
#include "serve_lists.h"
#include "serve/api.h"
#include "serve/endpoints.h"
#include "serve/metrics.h"

static const char *kerf_bin;

#define NOW 1796236400000LL

static const char *node_list =
	"{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":["
	"{\"metadata\":{\"name\":\"h-1\",\"uid\":\"h1\",\"resourceVersion\":\"1\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"96\",\"memory\":\"1Ti\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"metadata\":{\"name\":\"h-2\",\"uid\":\"h2\",\"resourceVersion\":\"2\",\"labels\":{\"nvidia.com/gpu.product\":\"H100\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"96\",\"memory\":\"1Ti\",\"nvidia.com/gpu\":\"8\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}},"
	"{\"metadata\":{\"name\":\"q-1\",\"uid\":\"q1\",\"resourceVersion\":\"3\",\"labels\":{\"nvidia.com/gpu.product\":\"L4 \\\"x\\\\y\\\"\"}},"
	"\"status\":{\"allocatable\":{\"cpu\":\"16\",\"memory\":\"64Gi\",\"nvidia.com/gpu\":\"1\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}]}";

static const char *ns_list =
	"{\"kind\":\"NamespaceList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":["
	"{\"metadata\":{\"name\":\"ml\",\"uid\":\"m\",\"resourceVersion\":\"4\",\"labels\":{\"kerf.io/tenant\":\"ml\"}}},"
	"{\"metadata\":{\"name\":\"loose\",\"uid\":\"l\",\"resourceVersion\":\"5\"}}]}";

static const char *tenant_list =
	"{\"kind\":\"TenantList\",\"apiVersion\":\"kerf.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":["
	"{\"apiVersion\":\"kerf.io/v1alpha1\",\"kind\":\"Tenant\",\"metadata\":{\"name\":\"ml\",\"uid\":\"t\",\"resourceVersion\":\"6\",\"generation\":1},"
	"\"spec\":{\"weight\":3,\"quotas\":[{\"flavor\":\"h100\",\"nominal\":16,\"borrowingLimit\":4}]}}]}";

static char pod_list[8192];

static void make_pods(void)
{
	size_t n = (size_t)snprintf(pod_list, sizeof(pod_list),
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[");

	for (int i = 0; i < 4; i++)
		n += (size_t)snprintf(pod_list + n, sizeof(pod_list) - n,
			"{\"metadata\":{\"name\":\"w-%d\",\"namespace\":\"ml\",\"uid\":\"u%d\",\"resourceVersion\":\"1%d\","
			"\"creationTimestamp\":\"2026-12-02T18:00:00Z\",\"labels\":{\"kerf.io/gang\":\"train\"},"
			"\"annotations\":{\"kerf.io/gang-size\":\"4\"}},\"spec\":{\"schedulerName\":\"kerf\","
			"\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"4\"}}}]},"
			"\"status\":{\"phase\":\"Pending\"}},", i, i, i);
	snprintf(pod_list + n, sizeof(pod_list) - n,
		"{\"metadata\":{\"name\":\"lost\",\"namespace\":\"loose\",\"uid\":\"ul\",\"resourceVersion\":\"20\","
		"\"creationTimestamp\":\"2026-12-02T18:00:00Z\"},\"spec\":{\"schedulerName\":\"kerf\","
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},"
		"\"status\":{\"phase\":\"Pending\"}}]}");
}

struct fixture {
	struct kerf_kube_fake *f;
	struct kerf_kube_ops ops;
	struct kerf_controller *c;
};

/* A controller that listed everything and ran one cycle. */
static void start(struct fixture *x)
{
	struct kerf_controller_opts o = { .scheduler_name = "kerf", .policy = "kerf", .seed = 1 };
	struct kerf_err err = { 0 };

	x->f = kerf_kube_fake_new();
	assert_non_null(x->f);
	kerf_kube_fake_ops(x->f, &x->ops);
	o.ops = &x->ops;
	make_pods();
	assert_int_equal(kerf_kube_fake_push_answer(x->f, "GET", "/api/v1/nodes", 200, node_list), 0);
	assert_int_equal(kerf_kube_fake_push_answer(x->f, "GET", "/api/v1/namespaces", 200, ns_list), 0);
	assert_int_equal(kerf_kube_fake_push_answer(x->f, "GET", "/apis/kerf.io/v1alpha1/tenants", 200, tenant_list), 0);
	script_empty_lists(x->f);
	assert_int_equal(kerf_kube_fake_push_answer(x->f, "GET", "/api/v1/pods", 200, pod_list), 0);
	/* the gang's plan, written on its pods before its bindings */
	for (int i = 0; i < 4; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/api/v1/namespaces/ml/pods/w-%d", i);
		assert_int_equal(kerf_kube_fake_push_answer(x->f, "PATCH", path, 200, "{}"), 0);
		snprintf(path, sizeof(path), "/api/v1/namespaces/ml/pods/w-%d/binding", i);
		assert_int_equal(kerf_kube_fake_push_answer(x->f, "POST", path, 201,
			"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\",\"code\":201}"), 0);
	}
	if (kerf_controller_new(&o, &x->c, &err) < 0 || kerf_controller_start(x->c, &err) < 0)
		fail_msg("controller: %s", err.msg);
	for (int i = 0; i < 5; i++) {
		kerf_controller_step(x->c, NOW);
		kerf_kube_fake_poll(x->f);
	}
	kerf_controller_step(x->c, NOW);
	assert_true(kerf_controller_synced(x->c));
	if (kerf_controller_stats(x->c)->world_errors)
		fail_msg("world: %s", kerf_controller_stats(x->c)->last_error);
	if (getenv("KERF_CLI_DEBUG")) {
		char *body = NULL;

		kerf_api_answer(kerf_controller_world(x->c), "GET", "/api/v1/explain/ml/w-0", NOW, &body);
		fprintf(stderr, "%s\n", body ? body : "");
		free(body);
	}
	assert_int_equal(kerf_controller_stats(x->c)->binds_sent, 4);
}

static void stop(struct fixture *x)
{
	kerf_controller_free(x->c);
	kerf_kube_fake_free(x->f);
}

/* --- the exposition format, read back ------------------------------------ */

struct family {
	char name[96];
	char type[16];
	bool help;
};

struct sample {
	char name[96];
	char labels[512];    /* as unescaped, "k=v,k=v" */
	double value;
};

struct exposition {
	struct family fam[64];
	size_t nr_fam;
	struct sample s[512];
	size_t nr_s;
};

static struct family *family(struct exposition *e, const char *name)
{
	for (size_t i = 0; i < e->nr_fam; i++)
		if (!strcmp(e->fam[i].name, name))
			return &e->fam[i];
	return NULL;
}

/* The family a sample belongs to (a histogram's _bucket, _sum, _count). */
static struct family *family_of(struct exposition *e, const char *sample)
{
	static const char *const suffix[] = { "_bucket", "_sum", "_count" };
	char base[96];
	struct family *f = family(e, sample);

	for (int k = 0; !f && k < 3; k++) {
		size_t n = strlen(sample), m = strlen(suffix[k]);

		if (n > m && !strcmp(sample + n - m, suffix[k]) && n - m < sizeof(base)) {
			memcpy(base, sample, n - m);
			base[n - m] = '\0';
			f = family(e, base);
			if (f && strcmp(f->type, "histogram"))
				f = NULL;
		}
	}
	return f;
}

/* {k="v",...}: the values unescaped (\\ \" \n only), into out. */
static const char *read_labels(const char *p, char *out, size_t size)
{
	size_t n = 0;

	assert_int_equal(*p++, '{');
	while (*p != '}') {
		while ((*p >= 'a' && *p <= 'z') || *p == '_')
			out[n++] = *p++;
		assert_int_equal(*p++, '=');
		out[n++] = '=';
		assert_int_equal(*p++, '"');
		while (*p != '"') {
			assert_true(*p && *p != '\n');
			if (*p == '\\') {
				p++;
				assert_true(*p == '\\' || *p == '"' || *p == 'n');
				out[n++] = *p == 'n' ? '\n' : *p;
				p++;
			} else {
				out[n++] = *p++;
			}
			assert_true(n < size - 2);
		}
		p++;
		if (*p == ',') {
			out[n++] = ',';
			p++;
		}
	}
	out[n] = '\0';
	return p + 1;
}

static void parse_exposition(const char *text, struct exposition *e)
{
	char line[1024];

	memset(e, 0, sizeof(*e));
	while (*text) {
		const char *nl = strchr(text, '\n'), *p;
		struct family *f;
		char name[96], kind[16];
		size_t n;

		assert_non_null(nl);    /* every line ends with \n */
		n = (size_t)(nl - text);
		assert_true(n < sizeof(line));
		memcpy(line, text, n);
		line[n] = '\0';
		text = nl + 1;
		if (sscanf(line, "# HELP %95s", name) == 1) {
			assert_null(family(e, name));
			f = &e->fam[e->nr_fam++];
			snprintf(f->name, sizeof(f->name), "%s", name);
			f->help = true;
			continue;
		}
		if (sscanf(line, "# TYPE %95s %15s", name, kind) == 2) {
			f = family(e, name);
			if (!f || f->type[0])
				fail_msg("TYPE without HELP, or twice: %s", line);
			assert_true(!strcmp(kind, "counter") || !strcmp(kind, "gauge") || !strcmp(kind, "histogram"));
			snprintf(f->type, sizeof(f->type), "%s", kind);
			continue;
		}
		assert_true(line[0] != '#');
		struct sample *s = &e->s[e->nr_s++];

		assert_true(e->nr_s < 512);
		for (p = line, n = 0; (*p >= 'a' && *p <= 'z') || *p == '_'; p++)
			s->name[n++] = *p;
		s->name[n] = '\0';
		f = family_of(e, s->name);
		if (!f || !f->type[0])
			fail_msg("sample before its HELP and TYPE: %s", line);
		if (!strcmp(f->type, "counter") && strcmp(s->name + strlen(s->name) - 6, "_total"))
			fail_msg("a counter not ending in _total: %s", s->name);
		if (*p == '{')
			p = read_labels(p, s->labels, sizeof(s->labels));
		assert_int_equal(*p++, ' ');
		if (!strcmp(p, "+Inf")) {
			s->value = 1e308;
		} else {
			char *end;

			s->value = strtod(p, &end);
			if (end == p || *end)
				fail_msg("not a value: %s", line);
		}
	}
}

static double value(const struct exposition *e, const char *name, const char *labels)
{
	for (size_t i = 0; i < e->nr_s; i++)
		if (!strcmp(e->s[i].name, name) && !strcmp(e->s[i].labels, labels))
			return e->s[i].value;
	fail_msg("no sample %s{%s}", name, labels);
	return -1;
}

static void test_metrics(void **state)
{
	struct fixture x;
	struct kerf_kube_counters kc;
	struct exposition *e = calloc(1, sizeof(*e));
	struct kerf_buf b;
	double prev = 0;
	int buckets = 0;

	(void)state;
	assert_non_null(e);
	start(&x);
	memset(&kc, 0, sizeof(kc));
	kc.codes[KERF_KUBE_VERB_GET][kerf_kube_code_index(200)] = 3;
	kc.codes[KERF_KUBE_VERB_POST][kerf_kube_code_index(409)] = 2;
	kc.codes[KERF_KUBE_VERB_WATCH][kerf_kube_code_index(0)] = 1;
	kc.codes[KERF_KUBE_VERB_PATCH][kerf_kube_code_index(418)] = 1;
	kerf_buf_init(&b, 1 << 20);
	assert_int_equal(kerf_metrics_text(x.c, &kc, NOW, &b), 0);
	if (getenv("KERF_METRICS_DEBUG"))
		fputs(kerf_buf_str(&b), stderr);
	parse_exposition(kerf_buf_str(&b), e);
	/* the cycle latency histogram: cumulative, +Inf = _count = cycles */
	assert_string_equal(family(e, "kerf_cycle_duration_seconds")->type, "histogram");
	for (size_t i = 0; i < e->nr_s; i++) {
		if (strcmp(e->s[i].name, "kerf_cycle_duration_seconds_bucket"))
			continue;
		assert_true(e->s[i].value >= prev);
		prev = e->s[i].value;
		buckets++;
	}
	assert_int_equal(buckets, KERF_HIST_BUCKETS + 1);
	assert_true(value(e, "kerf_cycle_duration_seconds_bucket", "le=0.001") >= 0);
	assert_true(value(e, "kerf_cycle_duration_seconds_bucket", "le=10") == prev);
	assert_true(value(e, "kerf_cycle_duration_seconds_bucket", "le=+Inf") ==
		    value(e, "kerf_cycle_duration_seconds_count", ""));
	assert_true(value(e, "kerf_cycle_duration_seconds_count", "") == value(e, "kerf_cycles_total", ""));
	assert_true(value(e, "kerf_cycles_total", "") >= 1);
	assert_true(value(e, "kerf_cycle_duration_seconds_sum", "") >= 0);
	/* workloads: the gang admitted, none pending in the core, none preempted */
	assert_string_equal(family(e, "kerf_workloads_pending")->type, "gauge");
	assert_true(value(e, "kerf_workloads_pending", "") == 0);
	assert_true(value(e, "kerf_workloads_admitted_total", "") == 1);
	assert_true(value(e, "kerf_workloads_preempted_total", "") == 0);
	/* usage against quota, per tenant and flavor */
	assert_true(value(e, "kerf_tenant_gpu_usage_milli", "tenant=ml,flavor=H100") == 16000);
	assert_true(value(e, "kerf_tenant_gpu_quota_milli", "tenant=ml,flavor=H100,kind=nominal") == 16000);
	assert_true(value(e, "kerf_tenant_gpu_quota_milli", "tenant=ml,flavor=H100,kind=borrowing") == 4000);
	assert_true(value(e, "kerf_tenant_gpu_quota_milli", "tenant=ml,flavor=H100,kind=lending") == 1e308);
	assert_true(value(e, "kerf_tenant_gpu_usage_milli", "tenant=cluster,flavor=H100") == 16000);
	/* a flavor named with a quote and a backslash, escaped and read back */
	assert_true(value(e, "kerf_tenant_gpu_quota_milli", "tenant=cluster,flavor=L4 \"x\\y\",kind=nominal") == 1000);
	/* API requests by verb and code */
	assert_true(value(e, "kerf_api_requests_total", "verb=GET,code=200") == 3);
	assert_true(value(e, "kerf_api_requests_total", "verb=POST,code=409") == 2);
	assert_true(value(e, "kerf_api_requests_total", "verb=WATCH,code=<error>") == 1);
	assert_true(value(e, "kerf_api_requests_total", "verb=PATCH,code=other") == 1);
	/* watch restarts per resource */
	assert_string_equal(family(e, "kerf_watch_restarts_total")->type, "counter");
	assert_true(value(e, "kerf_watch_restarts_total", "resource=pods") == 0);
	assert_true(value(e, "kerf_watch_restarts_total", "resource=tenants") == 0);
	assert_true(value(e, "kerf_binds_sent_total", "") == 4);
	kerf_buf_release(&b);
	free(e);
	stop(&x);
}

static void test_code_index(void **state)
{
	(void)state;
	assert_string_equal(kerf_kube_code_name(kerf_kube_code_index(0)), "<error>");
	assert_string_equal(kerf_kube_code_name(kerf_kube_code_index(201)), "201");
	assert_string_equal(kerf_kube_code_name(kerf_kube_code_index(504)), "504");
	assert_string_equal(kerf_kube_code_name(kerf_kube_code_index(599)), "other");
	assert_string_equal(kerf_kube_code_name(kerf_kube_code_index(2000)), "other");
	assert_string_equal(kerf_kube_verb_name(KERF_KUBE_VERB_WATCH), "WATCH");
}

/* --- the CLI against the endpoints --------------------------------------- */

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static char out[65536], err_text[8192];

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Run kerf with args while the endpoints answer; its exit status. */
static int run(struct kerf_endpoints *ep, const char *env_server, const char *const *args)
{
	char o[] = "/tmp/kerf-cli-outXXXXXX", e[] = "/tmp/kerf-cli-errXXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e), status = -1;
	char *argv[16];
	pid_t pid;
	size_t n = 0;

	assert_true(fo >= 0 && fe >= 0);
	argv[n++] = (char *)kerf_bin;
	while (args[n - 1] && n < 15) {
		argv[n] = (char *)args[n - 1];
		n++;
	}
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fo, 1);
		dup2(fe, 2);
		if (env_server)
			setenv("KERF_SERVER", env_server, 1);
		else
			unsetenv("KERF_SERVER");
		execv(kerf_bin, argv);
		_exit(127);
	}
	for (int i = 0; i < 30000; i++) {
		struct timespec ts = { 0, 1000000 };

		kerf_endpoints_run(ep, NOW + 60000);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		nanosleep(&ts, NULL);
	}
	slurp(o, out, sizeof(out));
	slurp(e, err_text, sizeof(err_text));
	close(fo);
	close(fe);
	unlink(o);
	unlink(e);
	if (getenv("KERF_CLI_DEBUG"))
		fprintf(stderr, "--- kerf %s %s\n%s%s", args[0], args[1] ? args[1] : "", out, err_text);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_cli(void **state)
{
	struct fixture x;
	struct kerf_endpoints *ep;
	struct kerf_err err = { 0 };
	char addr[64], url[80];
	json_t *j;
	json_error_t je;

	(void)state;
	start(&x);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", free_port());
	snprintf(url, sizeof(url), "http://%s", addr);
	if (kerf_endpoints_start(addr, x.c, NULL, &ep, &err) < 0)
		fail_msg("endpoints: %s", err.msg);

	/* tenants as a table: headers, aligned, GPUs not milli */
	assert_int_equal(run(ep, NULL, (const char *[]){ "get", "tenants", "--server", url, NULL }), 0);
	assert_non_null(strstr(out, "NAME            PARENT    WEIGHT   NOMINAL   USAGE   BORROWED   PENDING   BUDGET\n"));
	assert_non_null(strstr(out, "\nml              cluster   3        16        16      0          0         -\n"));
	/* wide: a row per flavor, the escaped flavor name as it is */
	assert_int_equal(run(ep, url, (const char *[]){ "get", "tenants", "-o", "wide", NULL }), 0);
	assert_non_null(strstr(out, "FLAVOR"));
	assert_non_null(strstr(out, "L4 \"x\\y\"   1 "));
	/* the queue as JSON, the server from KERF_SERVER */
	assert_int_equal(run(ep, url, (const char *[]){ "get", "queue", "-o", "json", NULL }), 0);
	j = json_loads(out, 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "Queue");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "waiting"), 0), "reason")), "NoTenant");
	json_decref(j);
	assert_int_equal(run(ep, url, (const char *[]){ "get", "queue", NULL }), 0);
	assert_non_null(strstr(out, "POS   WORKLOAD"));
	assert_non_null(strstr(out, "NoTenant"));
	/* nodes as YAML */
	assert_int_equal(run(ep, url, (const char *[]){ "get", "nodes", "-o", "yaml", NULL }), 0);
	assert_non_null(strstr(out, "kind: NodeList\n"));
	assert_non_null(strstr(out, "- name: h-1\n"));
	assert_non_null(strstr(out, "  gpus: 8\n"));
	assert_non_null(strstr(out, "  nvlinkDomain: null\n"));
	assert_int_equal(run(ep, url, (const char *[]){ "get", "nodes", NULL }), 0);
	assert_non_null(strstr(out, "NAME   MODEL"));
	assert_non_null(strstr(out, "Usable"));
	/* explain */
	assert_int_equal(run(ep, url, (const char *[]){ "explain", "loose/lost", NULL }), 0);
	assert_non_null(strstr(out, "Reason:    NoTenant\n"));
	assert_non_null(strstr(out, "LAYER    BLOCKING   MESSAGE\n"));
	assert_non_null(strstr(out, "tenant   yes"));
	assert_int_equal(run(ep, url, (const char *[]){ "explain", "ml/w-1", "-o", "json", NULL }), 0);
	/* placed, the binding not yet shown by the (fake) API server */
	assert_non_null(strstr(out, "\"reason\": \"Placed\""));
	assert_non_null(strstr(out, "\"placedOn\": \"h-1\""));
	/* errors: a 404 with the server's message, a refused connection */
	assert_int_equal(run(ep, url, (const char *[]){ "explain", "ml/nope", NULL }), 1);
	assert_non_null(strstr(err_text, "answered 404"));
	assert_non_null(strstr(err_text, "pod 'ml/nope' is not in kerf's cache"));
	assert_int_equal(run(ep, NULL, (const char *[]){ "get", "tenants", "--server", "http://127.0.0.1:1", NULL }), 1);
	assert_non_null(strstr(err_text, "kerf get: cannot reach kerf serve at http://127.0.0.1:1/api/v1/tenants"));
	/* usage: exit 2 with the reason */
	assert_int_equal(run(ep, url, (const char *[]){ "get", "pods", NULL }), 2);
	assert_non_null(strstr(err_text, "unknown resource 'pods'"));
	assert_int_equal(run(ep, url, (const char *[]){ "get", "-o", "xml", "nodes", NULL }), 2);
	assert_non_null(strstr(err_text, "-o 'xml': expected table, wide, json or yaml"));
	assert_int_equal(run(ep, url, (const char *[]){ "get", NULL }), 2);
	assert_int_equal(run(ep, url, (const char *[]){ "explain", "justapod", NULL }), 2);
	assert_int_equal(run(ep, url, (const char *[]){ "get", "nodes", "--server", "ftp://x", NULL }), 2);
	assert_int_equal(run(ep, url, (const char *[]){ "get", "--help", NULL }), 0);
	assert_non_null(strstr(out, "usage: kerf get"));
	assert_int_equal(run(ep, url, (const char *[]){ "explain", "--help", NULL }), 0);
	kerf_endpoints_stop(ep);
	stop(&x);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_index),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_cli),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: test_serve_http PATH-TO-KERF\n");
		return 2;
	}
	kerf_bin = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
