/*
 * e2e_api: what the end-to-end, fault and crash-point suites share: a
 * kube client on a kubeconfig, requests answered synchronously, the
 * cluster objects they make (Nodes with GPUs and no not-ready taint, Pods
 * of a scheduler, kerf's CRDs), what a pod looks like to the API server,
 * and TAP checks ending "N passed, N failed".  Only HTTP: the same code
 * runs against the test API server and a real cluster.
 */
#ifndef KERF_TESTS_E2E_API_H
#define KERF_TESTS_E2E_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/ops.h"

extern int e2e_nr_passed, e2e_nr_failed;
extern struct kerf_kube_client *e2e_client;
extern struct kerf_kube_ops e2e_ops;
/* Called at every turn before the client's poll (kerf serve in process). */
extern void (*e2e_step)(void);

int64_t e2e_wall_ms(void);
void e2e_sleep_ms(int ms);

/* "ok N - what" or "not ok N - what", counted. */
void e2e_check(bool ok, const char *what);
/* The plan and the "N passed, N failed" line (a TAP comment under meson:
   KERF_TAP); the exit status. */
int e2e_done(void);

/* The client on kubeconfig kc; 0 or -1 with a message on stderr. */
int e2e_connect(const char *kc);
void e2e_disconnect(void);
/* The configuration the client was made from (e2e_connect). */
const struct kerf_kube_config *e2e_kube_config(void);

/* One step (e2e_step) and one poll of the client. */
void e2e_turn(int wait_ms);

/* A request, answered: the status; *out (caller decrefs) when wanted. */
long e2e_api(const char *method, const char *path, const char *ctype,
	     const char *body, json_t **out);
long e2e_post(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* kerf's CRDs (Tenant, GPUPool) installed and served (true), each waited
   for up to 5 s. */
bool e2e_crd(void);

/*
 * A Node of gpus H100s, untainted, with its status as a kubelet sends it;
 * label an extra "key":"value" or NULL.
 */
void e2e_node(const char *name, int gpus, const char *label);

/*
 * A pod of scheduler with gpus whole GPUs, in gang (of size) when gang is
 * not NULL, of PriorityClass pclass when not NULL, with selector (a
 * nodeSelector body, "key":"value") when not NULL.
 */
long e2e_pod(const char *ns, const char *name, const char *gang, int size,
	     int gpus, const char *scheduler, const char *pclass,
	     const char *selector);

/* The node a pod is bound to ("" when none) and its PodScheduled message. */
void e2e_pod_state(const char *ns, const char *name, char *node, size_t n,
		   char *msg, size_t m);

/* Annotation key of pod ns/name into out ("" when none or no such pod). */
void e2e_pod_annotation(const char *ns, const char *name, const char *key,
			char *out, size_t size);

/* How many of pods PREFIX-0 .. PREFIX-(n-1) are bound. */
int e2e_count_bound(const char *ns, const char *prefix, int n);

/* The whole file (caller frees), or NULL. */
char *e2e_slurp(const char *path);

#endif /* KERF_TESTS_E2E_API_H */
