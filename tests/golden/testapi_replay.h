/*
 * testapi_replay: replaying real kube-apiserver transcripts against the
 * test API server.  A replay keeps a map from the values of the recorded
 * run (resourceVersions, uids, continue tokens) to those of this run,
 * learnt from each answer, so the next request can refer to them as the
 * capture script did.
 */
#ifndef KERF_TESTS_GOLDEN_TESTAPI_REPLAY_H
#define KERF_TESTS_GOLDEN_TESTAPI_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "testapi/testapi.h"

enum replay_flags {
	RP_LOOSE_MSG = 1u << 0,    /* Status: reason, code, details only */
	RP_NAMES = 1u << 1,        /* lists: item names only */
	RP_STREAM = 1u << 2,       /* a watch: compare the events */
	RP_NO_TOKEN = 1u << 3,     /* send no Authorization */
	RP_BAD_TOKEN = 1u << 4,    /* send a wrong token */
	RP_CORE_ONLY = 1u << 5,    /* objects: spec/status/labels only */
};

struct replay {
	struct kerf_testapi *ta;
	const char *dir;           /* the transcripts' folder */
	json_t *map;               /* recorded string -> live string */
	int nr_replayed;
	int nr_failed;
	const char *token;
};

/* Start a server (window: watch window, 0 default); false: skip. */
bool replay_begin(struct replay *r, const char *folder, uint32_t window);
void replay_end(struct replay *r);

/* One transcript; its timeoutSeconds replaced by timeout_s when > 0. */
void replay(struct replay *r, const char *file, unsigned flags);
void replay_timeout(struct replay *r, const char *file, unsigned flags,
		    unsigned timeout_s);

/* A request of our own (set-up the transcripts assume); the status. */
long replay_send(struct replay *r, const char *method, const char *path,
		 const char *ctype, const char *body, json_t **out);

/* Create a pod like the capture scripts' (gang label, N GPUs). */
void replay_pod(struct replay *r, const char *ns, const char *name,
		const char *gang, int gpus, const char *node,
		const char *scheduler);
void replay_ns(struct replay *r, const char *ns);
void replay_map(struct replay *r, const char *recorded, const char *live);

#endif /* KERF_TESTS_GOLDEN_TESTAPI_REPLAY_H */
