/*
 * faultproxy_int: what the proxy's files share: proxy.c (libmicrohttpd,
 * the request's way through), faults.c (which fault, and the answers
 * kube-apiserver would write), upstream.c (libcurl to the API server) and
 * stream.c (a watch passed down line by line, its faults on the way).
 */
#ifndef KERF_FAULTPROXY_INT_H
#define KERF_FAULTPROXY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <curl/curl.h>
#include <jansson.h>

#include "base/buf.h"
#include "base/map.h"
#include "faultproxy/faultproxy.h"
#include "kube/endpoint.h"

/* Fault classes, each with its own schedule. */
enum { FP_CLASS_THROTTLE = 0, FP_CLASS_5XX, FP_CLASS_CONFLICT, FP_CLASS_GONE,
       FP_NR_CLASSES };

struct kerf_fault_proxy {
	struct kerf_kube_config up;
	struct kerf_kube_endpoint ep;
	char *token;
	char *cert, *key;
	struct MHD_Daemon *daemon;
	uint16_t port;
	char url[64];
	pthread_mutex_t mu;            /* everything below */
	uint64_t seed;
	uint64_t eligible[FP_NR_CLASSES];  /* requests each class could hit */
	uint64_t nr_5xx;               /* injected 5xx so far: 500, 503, 504 */
	struct kerf_fault_rates rates;
	struct kerf_fault_counts counts;
	struct kerf_map binds;         /* "ns/name" -> struct bind_count */
	FILE *bind_log;
	volatile bool stopping;        /* read without mu by waits */
};

/* --- faults.c ---------------------------------------------------------- */

enum fp_fault {
	FP_NONE = 0,
	FP_THROTTLE,
	FP_SERVER_ERROR,
	FP_CONFLICT,
	FP_GONE,
};

/* A request's path taken apart ("/api/v1/namespaces/ns/pods/p/binding"). */
struct fp_path {
	char group[64];      /* "" for core */
	char ns[64];
	char resource[64];   /* "pods" */
	char name[254];
	char sub[32];        /* "binding", "status" */
};

void kerf_fp_path_parse(const char *uri, struct fp_path *out);

/* The value of query parameter key in uri into out ("" when absent). */
void kerf_fp_query(const char *uri, const char *key, char *out, size_t size);

/*
 * The fault for the next request (under p->mu): writes may get 409,
 * watches from a resourceVersion 410.
 */
enum fp_fault kerf_fp_draw(struct kerf_fault_proxy *p, bool write,
			   bool watch_from_rv);

/*
 * The body of an answer kube-apiserver would give (malloc, a newline after
 * the object, *len its length); NULL when out of memory.
 */
char *kerf_fp_status_body(unsigned code, const char *reason,
			  const char *message, json_t *details, size_t *len);

/* The 409 a write to path gets; node is the binding's target or NULL. */
char *kerf_fp_conflict_body(const struct fp_path *path, const char *method,
			    const char *obj_name, const char *node,
			    size_t *len);

/* A watch ERROR event line (410 Expired) for rv, then current. */
char *kerf_fp_expired_line(const char *rv, const char *current, size_t *len);

/* --- upstream.c -------------------------------------------------------- */

struct fp_upstream {
	struct kerf_fault_proxy *p;
	CURL *e;
	struct curl_slist *headers;
	char *url;
	bool streaming;                /* a watch: bytes handed on as they come */
	pthread_t thread;
	bool thread_started;
	pthread_mutex_t mu;            /* everything below, once streaming */
	pthread_cond_t cond;
	long status;
	char ctype[128];
	char retry_after[32];
	struct kerf_buf warnings;      /* "\n" between headers */
	struct kerf_buf body;          /* whole, or not yet handed on */
	bool headers_done;
	bool finished;
	bool abort;
	CURLcode result;
};

int kerf_fp_upstream_init(struct fp_upstream *u, struct kerf_fault_proxy *p,
			  const char *method, const char *uri,
			  const char *ctype, const char *accept,
			  const char *agent, const char *body, size_t len,
			  bool streaming);
/* Send and wait for the whole answer; 0, or -KERF_ETRANSPORT. */
int kerf_fp_upstream_run(struct fp_upstream *u);
/* Send on a thread of its own; wait until the headers came (or it ended). */
int kerf_fp_upstream_start(struct fp_upstream *u);
/* Stop the transfer (if any), wait for its thread, free. */
void kerf_fp_upstream_release(struct fp_upstream *u);

/* --- stream.c ---------------------------------------------------------- */

/* A watch answer on its way down (MHD's content reader). */
struct fp_stream {
	struct kerf_fault_proxy *p;
	struct fp_upstream *up;        /* NULL: out holds all there is */
	struct kerf_fault_rates rates; /* as they were when it started */
	char start_rv[32];
	char last_rv[32];
	struct kerf_buf line;          /* a line not yet whole */
	struct kerf_buf out;           /* for the client */
	size_t out_off;
	uint64_t events;
	int64_t start_ms;
	bool end_after_out;            /* a clean end once out is sent */
	bool drop_after_out;           /* cut once out is sent */
	bool done;
};

/* A stream of up (taken), or of the text alone (up NULL). */
struct fp_stream *kerf_fp_stream_new(struct kerf_fault_proxy *p,
				     struct fp_upstream *up,
				     const struct kerf_fault_rates *rates,
				     const char *start_rv, char *text,
				     size_t len);
ssize_t kerf_fp_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
void kerf_fp_stream_free(void *cls);

int64_t kerf_fp_now_ms(void);

#endif /* KERF_FAULTPROXY_INT_H */
