/*
 * e2e_lib: what the end-to-end suites share (e2e_serve, fault_serve): the
 * API server they test against (kerf's test server over TLS with
 * certificates made for the run, or the cluster of KERF_E2E_KUBECONFIG),
 * a client straight to it, kerf serve in this process driven step by
 * step, the objects the suites create (GPU nodes, pods, gangs) and TAP
 * output ending "N passed, N failed".
 */
#ifndef KERF_TESTS_E2E_LIB_H
#define KERF_TESTS_E2E_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/config.h"
#include "serve/controller.h"
#include "testapi/testapi.h"

struct e2e_env {
	struct kerf_testapi *ta;          /* NULL against a real cluster */
	struct kerf_kube_config cfg;      /* of the API server */
	struct kerf_kube_client *client;  /* straight to it */
	struct kerf_kube_ops ops;
	struct kerf_controller *ctl;      /* kerf serve, when running */
	struct kerf_kube_client *other;   /* another client to poll, or NULL */
	char dir[64];                     /* certificates and kubeconfigs */
	char kubeconfig[512];             /* of the API server */
	int nr_passed, nr_failed;
};

extern struct e2e_env e2e;

/*
 * The API server and a client to it; 0, 1 when the suite must skip (no
 * openssl: printed), -1 on error (printed).
 */
int e2e_setup(const char *cert_script, const char *prog);
void e2e_teardown(void);

void e2e_check(bool ok, const char *what);
/* The plan and the "N passed, N failed" line; the exit status. */
int e2e_done(void);

int64_t e2e_wall_ms(void);

/* One step of kerf serve (when running) and of the clients. */
void e2e_turn(int wait_ms);

/* A request straight to the API server, answered: its status. */
long e2e_api(const char *method, const char *path, const char *ctype,
	     const char *body, json_t **out);
long e2e_post(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The Tenant CRD installed and served. */
void e2e_install_crd(void);

/* An 8-GPU-style node with gpus GPUs, its not-ready taint removed; label
   is an extra "key":"value" or NULL. */
void e2e_node(const char *name, int gpus, const char *label);

/* A pod of gpus GPUs; gang NULL for none; selector a nodeSelector body
   ("key":"value") or NULL. */
long e2e_pod(const char *ns, const char *name, const char *gang, int size,
	     int gpus, const char *scheduler, const char *selector);

/* The node pod ns/name is bound to ("" when none) and its PodScheduled
   message. */
void e2e_pod_state(const char *ns, const char *name, char *node, size_t n,
		   char *msg, size_t m);
int e2e_count_bound(const char *ns, const char *prefix, int n);

/* Run kerf serve until cond holds or timeout_ms passes. */
bool e2e_run_until(bool (*cond)(void *), void *arg, int64_t timeout_ms);

/* kerf serve on ops (NULL: the direct client); false after a message. */
bool e2e_controller_start(const struct kerf_kube_ops *ops);
void e2e_controller_stop(void);

/* A file's text (malloc), or NULL. */
char *e2e_slurp(const char *path);

#endif /* KERF_TESTS_E2E_LIB_H */
