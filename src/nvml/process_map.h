/*
 * process_map: the GPU memory of each process NVML reports, and the pod
 * (and through the agent's pod table, the namespace, name and tenant)
 * each process belongs to.
 *
 * NVML (nvmlDeviceGetComputeRunningProcesses_v3) gives a PID and the
 * bytes it holds on a GPU.  The PID is in the host's PID namespace (the
 * agent runs with hostPID), so <proc root>/<PID>/cgroup names its cgroup,
 * and a pod's containers live in the pod's cgroup, which carries the
 * pod's UID:
 *
 *   cgroup v2, systemd driver:  0::/kubepods.slice/kubepods-burstable.slice/
 *                               kubepods-burstable-pod<UID, '-' as '_'>.slice/cri-containerd-<id>.scope
 *   cgroup v2, cgroupfs driver: 0::/kubepods/besteffort/pod<UID>/<container id>
 *   cgroup v1: the same paths, one line per hierarchy ("4:memory:/kubepods/...")
 *
 * Seen from inside the agent's own cgroup namespace the path is relative
 * to the agent's cgroup ("0::/../../kubepods-besteffort-pod<UID>.slice/..."),
 * so the pod is found by a path component of that form anywhere in the
 * path, never by a prefix.  A guaranteed pod has no QoS level in the path
 * (kubepods-pod<UID>.slice, /kubepods/pod<UID>).  A UID is 32 to 36
 * characters of lower-case hex and '-' (a static pod's is a 32-digit
 * hash); anything else is no pod.
 *
 * The UID is mapped to namespace, name and tenant by the agent's table of
 * the pods bound to its node (struct kerf_pod_table_ops); a UID the table
 * does not know (a pod just started, or gone) keeps only its UID.
 */
#ifndef KERF_NVML_PROCESS_MAP_H
#define KERF_NVML_PROCESS_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "nvml/inventory.h"
#include "nvml/nvml_load.h"

enum {
	KERF_POD_UID_MAX = 36,           /* 8-4-4-4-12 */
	KERF_GPU_PROCESSES_MAX = 4096,   /* per GPU; with more, the GPU's list is an error */
	KERF_PROC_CGROUP_MAX = 64 << 10, /* bytes of /proc/PID/cgroup read */
};

/* Whose a process is. */
enum kerf_proc_owner {
	KERF_PROC_POD,    /* in a pod's cgroup: its UID is known */
	KERF_PROC_HOST,   /* in no pod's cgroup: a host daemon, or a process of
			   * the agent's own container (cgroup "/" seen from
			   * inside its cgroup namespace) */
	KERF_PROC_GONE,   /* exited between NVML's report and the read */
};

/*
 * The pod whose cgroup the text of a /proc/PID/cgroup file names (len
 * bytes, lines of "ID:CONTROLLERS:PATH", v1 or v2).  uid gets the UID with
 * '-' separators.  Returns KERF_PROC_POD or KERF_PROC_HOST;
 * -KERF_EPARSE when a line is not of that form or there is no line.
 */
int kerf_cgroup_pod_uid(const char *text, size_t len, char uid[KERF_POD_UID_MAX + 1],
			struct kerf_err *err)
	__attribute__((warn_unused_result));

/*
 * Read <proc_root>/<pid>/cgroup (proc_root NULL: "/proc") and say whose
 * the process is: KERF_PROC_POD (uid set), KERF_PROC_HOST, or
 * KERF_PROC_GONE when the file is not there (ENOENT, ESRCH).  PID 0 (NVML
 * could not tell) is KERF_PROC_HOST.  Errors: -KERF_EIO when the file
 * cannot be read (the message names it), -KERF_EPARSE as above.
 */
int kerf_proc_owner_read(const char *proc_root, uint32_t pid,
			 char uid[KERF_POD_UID_MAX + 1], struct kerf_err *err)
	__attribute__((warn_unused_result));

/* One process on one GPU. */
struct kerf_gpu_process {
	uint32_t gpu;                    /* index in the inventory */
	uint32_t pid;                    /* host PID namespace */
	bool has_mem;                    /* NVML knew the memory */
	uint64_t used_bytes;
	uint32_t gi_id, ci_id;           /* NVML_INSTANCE_ID_NONE unless MIG */
	enum kerf_proc_owner owner;
	char pod_uid[KERF_POD_UID_MAX + 1]; /* "" unless KERF_PROC_POD */
};

/* Every process on the node's GPUs, at one sample. */
struct kerf_gpu_processes {
	struct kerf_gpu_process *procs;  /* malloc'd, nr of them */
	size_t nr;
	uint32_t errors;                 /* NVML refusals, unreadable /proc files */
};

/*
 * Read the processes of every GPU of inv through nv (needs
 * KERF_NVML_F_PROCESSES; without it, none and no error) and the owner of
 * each from proc_root.  Drivers 535.43 to 535.103 write 32-byte elements
 * (gpu-nvml-api.md, "535 caveat"); the driver version of inv decides the
 * stride.  A GPU whose list NVML refuses, or a /proc file that cannot be
 * read, counts in errors and is left out; a process gone is kept with
 * KERF_PROC_GONE.  Errors: -KERF_ENOMEM (err says so).
 */
int kerf_gpu_processes_read(struct kerf_gpu_processes *out, const struct kerf_nvml *nv,
			    const struct kerf_gpu_inventory *inv, const char *proc_root,
			    struct kerf_err *err)
	__attribute__((warn_unused_result));

void kerf_gpu_processes_release(struct kerf_gpu_processes *p);

/* Element size of nvmlDeviceGetComputeRunningProcesses_v3 for a driver version. */
size_t kerf_nvml_process_stride(const char *driver_version);

/* What the agent knows of a pod bound to its node (strings borrowed). */
struct kerf_pod_ref {
	const char *ns;
	const char *name;
	const char *tenant;              /* NULL or "": the pod has none */
};

/*
 * The agent loop's table of the pods on its node.  lookup fills *ref for
 * a UID it knows and returns true; the strings stay valid until the
 * metrics text is written.
 */
struct kerf_pod_table_ops {
	bool (*lookup)(void *ctx, const char *uid, struct kerf_pod_ref *ref);
};

/* GPU memory summed by GPU and pod. */
struct kerf_pod_gpu_memory {
	uint32_t gpu;
	char pod_uid[KERF_POD_UID_MAX + 1]; /* "" for processes in no pod */
	bool known;                      /* the table knew the pod: ref is set */
	struct kerf_pod_ref ref;
	uint64_t used_bytes;
};

/*
 * Sum p's memory by (GPU, pod) into rows (malloc'd, *nr of them, ordered
 * by GPU then UID; processes in no pod make one row per GPU with UID "").
 * Processes gone or of unknown memory are left out.  pods may be NULL (no
 * pod known).  Errors: -KERF_ENOMEM.
 */
int kerf_pod_gpu_memory_sum(const struct kerf_gpu_processes *p,
			    const struct kerf_pod_table_ops *pods, void *ctx,
			    struct kerf_pod_gpu_memory **rows, size_t *nr)
	__attribute__((warn_unused_result));

#endif /* KERF_NVML_PROCESS_MAP_H */
