/*
 * e2e_lib: what the end-to-end suites share (e2e_serve, fault_serve): the
 * API server they test against (kerf's test server over TLS with
 * certificates made for the run, or the cluster of KERF_E2E_KUBECONFIG),
 * kerf serve in this process driven step by step; the client, the
 * objects the suites create and the TAP output are e2e_api's.
 */
#ifndef KERF_TESTS_E2E_LIB_H
#define KERF_TESTS_E2E_LIB_H

#include <stdbool.h>
#include <stdint.h>

#include "e2e_api.h"
#include "kube/client.h"
#include "serve/controller.h"
#include "testapi/testapi.h"

/* What e2e_api does not hold: the server and kerf serve in this process. */
struct e2e_env {
	struct kerf_testapi *ta;          /* NULL against a real cluster */
	struct kerf_controller *ctl;      /* kerf serve, when running */
	struct kerf_kube_client *other;   /* another client to poll, or NULL */
	char dir[64];                     /* certificates and kubeconfigs */
	char kubeconfig[512];             /* of the API server */
};

extern struct e2e_env e2e;

/*
 * The API server and e2e_api's client to it (e2e_turn then also steps
 * kerf serve when running, and polls e2e.other); 0, 1 when the suite must
 * skip (no openssl: printed), -1 on error (printed).
 */
int e2e_setup(const char *cert_script, const char *prog);
void e2e_teardown(void);

/* Run kerf serve until cond holds or timeout_ms passes. */
bool e2e_run_until(bool (*cond)(void *), void *arg, int64_t timeout_ms);

/* kerf serve on ops (NULL: the direct client); false after a message. */
bool e2e_controller_start(const struct kerf_kube_ops *ops);
void e2e_controller_stop(void);

/*
 * The end of a suite: kerf serve's last error shown, kerf serve stopped,
 * namespace ns, node and tenant (each NULL: none) deleted, the API server
 * let go; the exit status (e2e_done).
 */
int e2e_finish(const char *ns, const char *node, const char *tenant);

#endif /* KERF_TESTS_E2E_LIB_H */
