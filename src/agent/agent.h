/*
 * agent: kerf's node agent, the loop that joins its parts
 * (docs/agent.md "The agent loop").
 *
 * Single-threaded apart from the NVML event thread (events.h): each
 * kerf_agent_step() polls the API client (the informers of its own Node
 * and of the pods bound to it), applies the NVML events that arrived
 * (nvml/health.h decides; marks.h keeps), writes the Node (node_doc.h) and
 * acts on pods, re-reads the inventory now and then, serves the device
 * plugin and /metrics, /healthz, /readyz.
 *
 * Marks live in the API: at start the agent reads them from its Node and
 * keeps them; new marks are written at once (a merge patch under the
 * Node's resourceVersion, again on 409) and the time from the event to
 * the write is measured.  The agent never removes a mark; `kerf agent
 * verify` does, after checking the GPU, and the agent follows the Node.
 *
 * What an event asks for pods (the pods bound here whose
 * kerf.io/assigned-gpus name the GPU): drained ones are annotated
 * kerf.io/results-untrusted when asked, then evicted (the Eviction API, so
 * disruption budgets hold); an application Xid is counted against them
 * (metrics only).  Nothing is force-deleted: the scheduler frees their
 * GPUs only when the pods are gone (N-04).
 */
#ifndef KERF_AGENT_AGENT_H
#define KERF_AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "kube/ops.h"
#include "nvml/nvml_load.h"

#define KERF_ANN_RESULTS_UNTRUSTED "kerf.io/results-untrusted"

struct kerf_agent_opts {
	const char *node_name;           /* required */
	const struct kerf_kube_ops *ops; /* the API; required */
	struct kerf_nvml *nv;            /* opened; not initialised: N-01 */
	const char *nvml_error;          /* why NVML is not there, or NULL */
	const char *nvlink_domain;       /* NULL: the label is not written */
	const char *metrics_addr;        /* "127.0.0.1:9400"; NULL: none */
	const char *health_addr;         /* /healthz and /readyz also here; NULL: none */
	const char *dp_dir;              /* device plugin dir; NULL: none */
	bool no_drain;                   /* never evict (marks still written) */
	bool no_mig;                     /* never create or destroy MIG instances */
	const char *mps_root;            /* MPS daemons' directories; NULL: no MPS */
	const char *mps_control;         /* nvidia-cuda-mps-control; NULL: from PATH */
	const char *proc_root;           /* where /proc/PID/cgroup is; NULL: /proc */
	int inventory_ms;                /* re-read period; 0: 30000 */
	int util_window_ms;              /* utilisation mean over; 0: 300000 */
	uint64_t seed;
};

struct kerf_agent_counters {
	uint64_t events, app_errors, marks_added, node_writes, status_writes;
	uint64_t write_conflicts, write_errors, evictions, untrusted, inventory_reads;
	uint64_t mig_steps, mig_failures;
	int64_t mps_failed_at_ms;        /* when a daemon last went Failed (monotonic) */
	int64_t last_report_ms;          /* event to its mark in the API */
	int64_t max_report_ms;
};

struct kerf_agent;

int kerf_agent_new(const struct kerf_agent_opts *o, struct kerf_agent **out,
		   struct kerf_err *err);
/* Start the informers (and the event thread, the device plugin, HTTP). */
int kerf_agent_start(struct kerf_agent *a, struct kerf_err *err);
/* One turn; waits at most timeout_ms for the API. */
int kerf_agent_step(struct kerf_agent *a, int timeout_ms);
void kerf_agent_free(struct kerf_agent *a);

const struct kerf_agent_counters *kerf_agent_counters(const struct kerf_agent *a);
/* The Node and the pods read, and every mark found in the API written. */
bool kerf_agent_ready(const struct kerf_agent *a);
/* The metrics text (/metrics). */
int kerf_agent_metrics(struct kerf_agent *a, struct kerf_buf *out)
	__attribute__((warn_unused_result));

#endif /* KERF_AGENT_AGENT_H */
