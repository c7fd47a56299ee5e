/*
 * webhook_metrics: counters with relaxed atomics (each is independent;
 * a scrape may see one request in the count and not yet in a bucket,
 * which Prometheus tolerates), and the rule names under a mutex, as a
 * denial is rare next to an allow and the names are few.
 */
#include "admission/webhook_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

const uint32_t kerf_webhook_hist_le_us[KERF_WEBHOOK_HIST_BUCKETS] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000,
};

static const char *const verdict_names[KERF_WEBHOOK_NR_VERDICTS] = {
	[KERF_WEBHOOK_ALLOWED] = "allowed",
	[KERF_WEBHOOK_PATCHED] = "patched",
	[KERF_WEBHOOK_DENIED] = "denied",
	[KERF_WEBHOOK_ERROR] = "error",
	[KERF_WEBHOOK_REFUSED] = "refused",
};

#define ADD(a) atomic_fetch_add_explicit(&(a), 1, memory_order_relaxed)
#define GET(a) ((uint64_t)atomic_load_explicit(&(a), memory_order_relaxed))

int kerf_webhook_counters_init(struct kerf_webhook_counters *m,
			       const char *const *paths, size_t nr_routes)
{
	memset(m, 0, sizeof(*m));
	m->routes = calloc(nr_routes ? nr_routes : 1, sizeof(*m->routes));
	if (!m->routes)
		return -KERF_ENOMEM;
	m->nr_routes = nr_routes;
	for (size_t i = 0; i < nr_routes; i++)
		m->routes[i].path = paths[i];
	pthread_mutex_init(&m->mu, NULL);
	return 0;
}

void kerf_webhook_counters_release(struct kerf_webhook_counters *m)
{
	if (!m->routes)
		return;
	for (size_t i = 0; i < m->nr_rules; i++)
		free(m->rules[i].rule);
	free(m->rules);
	free(m->routes);
	pthread_mutex_destroy(&m->mu);
	memset(m, 0, sizeof(*m));
}

enum kerf_webhook_verdict kerf_webhook_verdict_of(const char *name)
{
	for (int v = 0; name && v < KERF_WEBHOOK_REFUSED; v++)
		if (!strcmp(name, verdict_names[v]))
			return (enum kerf_webhook_verdict)v;
	return KERF_WEBHOOK_ERROR;
}

void kerf_webhook_count_request(struct kerf_webhook_counters *m, size_t i,
				enum kerf_webhook_verdict v,
				uint64_t duration_us)
{
	struct kerf_webhook_route_counters *r = &m->routes[i];
	size_t b = 0;

	ADD(r->verdicts[v]);
	while (b < KERF_WEBHOOK_HIST_BUCKETS &&
	       duration_us > kerf_webhook_hist_le_us[b])
		b++;
	if (b < KERF_WEBHOOK_HIST_BUCKETS)
		ADD(r->le[b]);
	ADD(r->count);
	atomic_fetch_add_explicit(&r->sum_us, duration_us,
				  memory_order_relaxed);
}

void kerf_webhook_count_denial(struct kerf_webhook_counters *m,
			       const char *rule)
{
	struct kerf_webhook_rule_count *grown;
	size_t i;

	if (!rule || !*rule)
		rule = "unnamed";
	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->nr_rules; i++)
		if (!strcmp(m->rules[i].rule, rule))
			break;
	if (i == m->nr_rules) {
		char *copy = NULL;

		grown = NULL;
		if (m->nr_rules < KERF_WEBHOOK_RULES_MAX &&
		    (copy = kerf_strdup(rule)) &&
		    (grown = realloc(m->rules, (m->nr_rules + 1) *
						       sizeof(*m->rules)))) {
			m->rules = grown;
			m->rules[m->nr_rules].rule = copy;
			m->rules[m->nr_rules].denials = 0;
			m->nr_rules++;
		} else {
			free(copy);
			m->other_denials++;
			pthread_mutex_unlock(&m->mu);
			return;
		}
	}
	m->rules[i].denials++;
	pthread_mutex_unlock(&m->mu);
}

void kerf_webhook_count_http_error(struct kerf_webhook_counters *m,
				   unsigned code)
{
	if (code >= KERF_WEBHOOK_CODE_MIN && code <= KERF_WEBHOOK_CODE_MAX)
		ADD(m->http_errors[code - KERF_WEBHOOK_CODE_MIN]);
}

/* `name{key="value` with value escaped; the caller closes the labels. */
static int series(struct kerf_buf *out, const char *name, const char *key,
		  const char *value)
{
	int rc = kerf_buf_addf(out, "%s{%s=\"", name, key);

	return rc ? rc : kerf_buf_add_prom_label(out, value);
}

static int render_requests(struct kerf_webhook_counters *m,
			   struct kerf_buf *out)
{
	int rc = kerf_buf_add_str(out,
		"# HELP kerf_webhook_requests_total Admission reviews answered, by route and verdict.\n"
		"# TYPE kerf_webhook_requests_total counter\n");

	for (size_t i = 0; rc == 0 && i < m->nr_routes; i++) {
		for (int v = 0; rc == 0 && v < KERF_WEBHOOK_NR_VERDICTS; v++) {
			rc = series(out, "kerf_webhook_requests_total", "path",
				    m->routes[i].path);
			if (rc == 0)
				rc = kerf_buf_addf(out, "\",verdict=\"%s\"} %llu\n",
						   verdict_names[v],
						   (unsigned long long)GET(m->routes[i].verdicts[v]));
		}
	}
	return rc;
}

#define DURATION "kerf_webhook_request_duration_seconds"

static int render_histograms(struct kerf_webhook_counters *m,
			     struct kerf_buf *out)
{
	int rc = kerf_buf_add_str(out,
		"# HELP " DURATION " Time from a review's arrival to its answer queued.\n"
		"# TYPE " DURATION " histogram\n");

	for (size_t i = 0; rc == 0 && i < m->nr_routes; i++) {
		struct kerf_webhook_route_counters *r = &m->routes[i];
		uint64_t cum = 0, count;

		for (int b = 0; rc == 0 && b < KERF_WEBHOOK_HIST_BUCKETS; b++) {
			cum += GET(r->le[b]);
			rc = series(out, DURATION "_bucket", "path", r->path);
			if (rc == 0)
				rc = kerf_buf_addf(out, "\",le=\"%g\"} %llu\n",
						   kerf_webhook_hist_le_us[b] / 1e6,
						   (unsigned long long)cum);
		}
		/* read after the buckets, which a request counts first */
		count = GET(r->count);
		if (count < cum)
			count = cum;
		if (rc == 0)
			rc = series(out, DURATION "_bucket", "path", r->path);
		if (rc == 0)
			rc = kerf_buf_addf(out, "\",le=\"+Inf\"} %llu\n",
					   (unsigned long long)count);
		if (rc == 0)
			rc = series(out, DURATION "_sum", "path", r->path);
		if (rc == 0)
			rc = kerf_buf_addf(out, "\"} %.6f\n",
					   (double)GET(r->sum_us) / 1e6);
		if (rc == 0)
			rc = series(out, DURATION "_count", "path", r->path);
		if (rc == 0)
			rc = kerf_buf_addf(out, "\"} %llu\n",
					   (unsigned long long)count);
	}
	return rc;
}

static int render_denials(struct kerf_webhook_counters *m,
			  struct kerf_buf *out)
{
	int rc = kerf_buf_add_str(out,
		"# HELP kerf_webhook_denials_total Reviews denied, by the rule that denied.\n"
		"# TYPE kerf_webhook_denials_total counter\n");

	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; rc == 0 && i < m->nr_rules; i++) {
		rc = series(out, "kerf_webhook_denials_total", "rule",
			    m->rules[i].rule);
		if (rc == 0)
			rc = kerf_buf_addf(out, "\"} %llu\n",
					   (unsigned long long)m->rules[i].denials);
	}
	if (rc == 0 && m->other_denials)
		rc = kerf_buf_addf(out, "kerf_webhook_denials_total{rule=\"other\"} %llu\n",
				   (unsigned long long)m->other_denials);
	pthread_mutex_unlock(&m->mu);
	return rc;
}

int kerf_webhook_counters_render(struct kerf_webhook_counters *m,
				 struct kerf_buf *out)
{
	int rc = render_requests(m, out);

	if (rc == 0)
		rc = render_denials(m, out);
	if (rc == 0)
		rc = render_histograms(m, out);
	if (rc == 0)
		rc = kerf_buf_add_str(out,
			"# HELP kerf_webhook_http_errors_total Answers with an HTTP status of 400 or more, by status.\n"
			"# TYPE kerf_webhook_http_errors_total counter\n");
	for (unsigned c = KERF_WEBHOOK_CODE_MIN;
	     rc == 0 && c <= KERF_WEBHOOK_CODE_MAX; c++) {
		uint64_t n = GET(m->http_errors[c - KERF_WEBHOOK_CODE_MIN]);

		if (n)
			rc = kerf_buf_addf(out, "kerf_webhook_http_errors_total{code=\"%u\"} %llu\n",
					   c, (unsigned long long)n);
	}
	if (rc == 0)
		rc = kerf_buf_addf(out,
			"# HELP kerf_webhook_late_total Reviews answered 503 unhandled: their deadline had passed.\n"
			"# TYPE kerf_webhook_late_total counter\n"
			"kerf_webhook_late_total %llu\n"
			"# HELP kerf_webhook_bad_timeout_total Reviews whose ?timeout= did not parse (the default was used).\n"
			"# TYPE kerf_webhook_bad_timeout_total counter\n"
			"kerf_webhook_bad_timeout_total %llu\n",
			(unsigned long long)GET(m->late),
			(unsigned long long)GET(m->bad_timeout));
	return rc;
}
