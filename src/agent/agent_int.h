/*
 * agent_int: the agent's state, shared by agent.c (the loop and the Node),
 * agent_pods.c (what events do to pods) and agent_http.c (the endpoints).
 */
#ifndef KERF_AGENT_AGENT_INT_H
#define KERF_AGENT_AGENT_INT_H

#include "agent/agent.h"
#include "agent/events.h"
#include "agent/marks.h"
#include "agent/util.h"
#include "base/rng.h"
#include "kobj/pod.h"
#include "kube/informer.h"
#include "mps/mps.h"
#include "nvml/gpm.h"
#include "nvml/health.h"
#include "nvml/inventory.h"

enum {
	AGENT_MAX_JOBS = 64,
	AGENT_MAX_NOTES = 512,
	AGENT_XID_CLASSES = KERF_XID_UNKNOWN + 1,
};

/*
 * A pod bound here, as the agent keeps it: kerf serve's compact pod and
 * what only the agent needs (an MPS share and the UID it runs as).
 */
struct agent_pod {
	struct kerf_kpod kp;        /* first: the informer's object is this */
	uint32_t fraction_milli;    /* kerf.io/assigned-fraction; 0 none */
	bool mps;                   /* kerf.io/gpu-sharing: mps */
	int64_t uid, gid;           /* securityContext.runAsUser/Group; -1 unknown */
};

/* What an event asks of the pods on one GPU (or one MIG instance of it). */
struct agent_job {
	int gpu;
	char mig[32];               /* "3g.40gb@4", "" for the whole GPU */
	unsigned actions;           /* KERF_HEALTH_* */
	char reason[KERF_MARK_REASON_MAX];
};

/* A pod the agent acted on or counted against. */
struct agent_note {
	char key[256];              /* namespace/name */
	char tenant[64];
	char uid[40];
	uint64_t app_errors;
	bool untrusted, untrusted_sent, evict, evicted;
	char reason[KERF_MARK_REASON_MAX];
	int64_t next_try_ms;
	bool inflight;              /* a request for it is on its way */
};

struct kerf_agent {
	struct kerf_agent_opts o;
	char node_name[256];
	char nvlink_domain[128];
	struct kerf_rng rng;
	struct kerf_agent_counters c;
	uint64_t xid_by_class[AGENT_XID_CLASSES];

	/* NVML */
	struct kerf_gpu_inventory inv;
	nvmlDevice_t handles[KERF_GPU_MAX_GPUS];
	struct kerf_agent_events *events;
	char unknown[KERF_ERR_MSG_MAX];   /* why GPU health is Unknown; "" known */
	int64_t next_inventory_ms;
	struct kerf_util_window util;
	int64_t next_util_ms;
	char util_text[KERF_UTIL_MAX_GPUS * 8];
	int64_t mig_next_ms;
	char mig_result[KERF_ERR_MSG_MAX];   /* kerf.io/mig-actuation; "" none yet */
	struct kerf_gpm_sampler *gpm;        /* NULL: no GPM in the library */

	/* the API */
	struct kerf_informer *node_inf, *pods_inf;
	json_t *node;               /* the latest Node seen (watch or a write's answer) */
	struct kerf_agent_marks api;      /* what the Node says */
	struct kerf_agent_marks fresh;    /* added since, not yet in the API */
	int64_t fresh_since_ms;     /* the oldest event in fresh, -1 none */
	bool api_unreadable;        /* the Node's marks do not parse: all down */
	bool writing;               /* a Node or status write is on its way */
	int64_t next_write_ms;

	/* pods */
	struct agent_job jobs[AGENT_MAX_JOBS];
	size_t nr_jobs;
	struct agent_note *notes;
	size_t nr_notes;

	/* MPS daemons (agent_mps.c); NULL: MPS off */
	struct kerf_mps *mps;
	struct kerf_mps_exec mps_exec;
	uint64_t mps_failed;        /* GPUs whose daemon is not Running */
	int64_t mps_next_ms;
	struct { uint32_t gpu, uid; } mps_running[KERF_MPS_MAX_DAEMONS];
	size_t nr_mps;

	void *dp;                   /* struct kerf_dp_plugin *, NULL none */
	void *http;                 /* struct MHD_Daemon *, NULL none */
	void *health;               /* the same on --health-addr, NULL none */
};

/* The marks in force: the API's, those not yet written, a bad mark's all. */
void kerf_agent_effective(const struct kerf_agent *a, struct kerf_agent_marks *m);
/* Only their GPUs (cheap: what the device plugin asks at every turn). */
uint64_t kerf_agent_gpus_down(const struct kerf_agent *a);

/* agent_pods.c */
/* The pod's kerf.io/assigned-gpus ("0,1") as a mask; false: none, or unreadable. */
bool kerf_agent_pod_gpus(const struct kerf_kpod *p, uint64_t *mask);
void kerf_agent_pod_job(struct kerf_agent *a, const struct agent_job *job);
void kerf_agent_pods_step(struct kerf_agent *a, int64_t now_ms);
int kerf_agent_pods_metrics(const struct kerf_agent *a, struct kerf_buf *b)
	__attribute__((warn_unused_result));

/* agent_mps.c: an MPS daemon per (GPU, UID) of the pods' MPS shares */
int kerf_agent_mps_start(struct kerf_agent *a, struct kerf_err *err);
void kerf_agent_mps_step(struct kerf_agent *a, int64_t now_ms);
void kerf_agent_mps_stop(struct kerf_agent *a);
/* The daemon of (gpu, uid) for the device plugin: 0 or -KERF_ENOTFOUND. */
int kerf_agent_mps_lookup(void *arg, uint32_t gpu, uint32_t uid, struct kerf_mps_view *v);
int kerf_agent_mps_metrics(const struct kerf_agent *a, struct kerf_buf *b)
	__attribute__((warn_unused_result));

/* agent_mig.c: the pods' assigned MIG instances made */
void kerf_agent_mig_step(struct kerf_agent *a, int64_t now_ms);

/* agent_http.c */
int kerf_agent_http_start(struct kerf_agent *a, struct kerf_err *err);
void kerf_agent_http_run(struct kerf_agent *a);
void kerf_agent_http_stop(struct kerf_agent *a);

/* agent_dp.c (a no-op without the device plugin) */
int kerf_agent_dp_start(struct kerf_agent *a, struct kerf_err *err);
void kerf_agent_dp_step(struct kerf_agent *a);
void kerf_agent_dp_stop(struct kerf_agent *a);

#endif /* KERF_AGENT_AGENT_INT_H */
