/*
 * client_int: what client.c (the queue, retries, poll) and client_easy.c
 * (one attempt as a libcurl easy handle, its callbacks) share.
 */
#ifndef KERF_KUBE_CLIENT_INT_H
#define KERF_KUBE_CLIENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "base/buf.h"
#include "base/rng.h"
#include "kube/client.h"
#include "kube/endpoint.h"
#include "kube/lines.h"
#include "kube/ratelimit.h"

enum kreq_state {
	KREQ_QUEUED = 0,     /* waiting for a rate-limit token */
	KREQ_WAITING,        /* waiting for due_ms (a retry's pause) */
	KREQ_RUNNING,        /* an easy handle in the multi handle */
};

struct kreq {
	uint64_t id;
	struct kerf_kube_client *c;
	enum kreq_state state;
	bool watch;
	bool cancelled;
	bool rate_waited;           /* counted in counters.rate_limited */
	bool counted;               /* an attempt in flight, in nr_running */
	uint64_t due_ms;
	char *method;
	char *path;
	char *content_type;         /* or NULL */
	char *body;                 /* or NULL */
	size_t body_len;
	uint32_t timeout_ms;
	unsigned flags;
	kerf_kube_done_fn done;
	kerf_kube_line_fn on_line;
	void *arg;
	unsigned attempts;          /* started so far */
	/* the attempt in flight */
	CURL *easy;
	struct curl_slist *headers;
	struct kerf_buf resp_body;
	struct kerf_kube_lines lines;
	char resp_content_type[128];
	struct kerf_buf warning;
	int64_t retry_after_s;
	long stream_status;         /* watch: HTTP status seen at the first byte */
	int stop_rc;                /* why a write callback stopped the transfer */
	char errbuf[CURL_ERROR_SIZE];
};

struct kerf_kube_client {
	CURLM *multi;
	struct kerf_kube_config cfg;
	struct kerf_kube_client_opts opts;
	struct kerf_kube_endpoint ep;
	struct kerf_rng rng;
	struct kerf_kube_ratelimit rl;
	struct kerf_kube_retry_budget budget;
	struct kerf_kube_counters counters;
	struct kreq **reqs;         /* pending, in the order made */
	size_t nr_reqs;
	size_t alloc_reqs;
	uint64_t next_id;
	unsigned nr_running;        /* requests (not watches) with an easy handle */
	int in_curl;                /* inside a libcurl callback: defer removals */
};

/* A new easy handle for r's next attempt, added to the multi handle. */
int kerf_kube_client_easy_start(struct kerf_kube_client *c, struct kreq *r);

/* Remove r's easy handle (if any) and clear the attempt's buffers. */
void kerf_kube_client_easy_stop(struct kerf_kube_client *c, struct kreq *r);

#endif /* KERF_KUBE_CLIENT_INT_H */
