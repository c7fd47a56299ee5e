/*
 * mps: the node agent's MPS control daemons, one per (GPU, tenant UID) for
 * GPUs shared in MPS mode (docs/agent.md "MPS daemons"; reliability N-07).
 *
 * A daemon is `nvidia-cuda-mps-control -d` run as the tenant's UID with
 *   CUDA_VISIBLE_DEVICES=<GPU UUID>       the one GPU it serves
 *   CUDA_MPS_PIPE_DIRECTORY=<root>/<GPU UUID>/<uid>/pipe
 *   CUDA_MPS_LOG_DIRECTORY=<root>/<GPU UUID>/<uid>/log
 * and, right after it starts and before any client can connect, its
 * limits through the control pipe (limits.h): the defaults of every MPS
 * server it spawns, which each client inherits.  The bring-up ends with
 * get_default_active_thread_percentage, which must answer the percentage
 * just set: only then is the daemon Running.
 *
 * Watching: kerf_mps_poll() checks each daemon's process.  A daemon that
 * died (kill -9, a crash) is Failed at once: its GPU is in
 * kerf_mps_failed_gpus(), the device plugin refuses new MPS allocations on
 * it, and on_change tells the agent loop (which reports the slices on that
 * GPU failed).  It is restarted with the SAME limits after a backoff (1 s,
 * doubling, at most 30 s by default); a restart that fails counts, and
 * after max_restarts failures in a row the daemon is Given up: it stays
 * failed until kerf_mps_start() is called for it again.  A daemon that has
 * run for stable_ms has its count reset.  Nothing spins: between
 * attempts poll only compares the clock.
 *
 * Detection takes at most the agent's poll interval: call kerf_mps_poll()
 * at least once a second (N-07 asks for 5 s).
 *
 * Every process and control-pipe action goes through struct kerf_mps_ops:
 * mps_exec.c runs the real programs, mps_fake.c is an in-process fake for
 * unit tests.  Single-threaded: one thread calls all of these.
 */
#ifndef KERF_MPS_MPS_H
#define KERF_MPS_MPS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "mps/limits.h"

#define KERF_MPS_DEFAULT_ROOT "/run/kerf/mps"
#define KERF_MPS_PID_FILE "nvidia-cuda-mps-control.pid"

enum {
	KERF_MPS_MAX_DAEMONS = 128,
	KERF_MPS_UUID_MAX = 80,     /* "GPU-..." or "MIG-...", with the NUL */
	KERF_MPS_PATH_MAX = 256,
	KERF_MPS_MAX_GPUS = 64,     /* GPU indexes are bits of a mask */
};

/* What a daemon needs to start and to be spoken to. */
struct kerf_mps_spawn {
	const char *gpu_uuid;       /* CUDA_VISIBLE_DEVICES */
	uint32_t uid;               /* the tenant's UID: daemon and clients */
	uint32_t gid;
	const char *pipe_dir;       /* CUDA_MPS_PIPE_DIRECTORY */
	const char *log_dir;        /* CUDA_MPS_LOG_DIRECTORY */
};

struct kerf_mps_ops {
	void *ctx;
	/*
	 * Make pipe_dir and log_dir (owned by uid:gid), start the control
	 * daemon as uid:gid with the three variables above, and set *pid to
	 * the daemon's process (the one that stays).  0 or a negative error.
	 */
	int (*start)(void *ctx, const struct kerf_mps_spawn *s, int64_t *pid,
		     struct kerf_err *err);
	/* 1 while process pid runs, 0 once it is gone. */
	int (*alive)(void *ctx, int64_t pid);
	/*
	 * Send one command line to the daemon of s through its control pipe;
	 * its answer (trailing blanks cut) into reply[0..reply_size) when
	 * reply is not NULL.  0 or a negative error with the program's words.
	 */
	int (*control)(void *ctx, const struct kerf_mps_spawn *s, const char *cmd,
		       char *reply, size_t reply_size, struct kerf_err *err);
	/* SIGKILL pid (a daemon that would not quit, or half started). */
	void (*kill)(void *ctx, int64_t pid);
};

enum kerf_mps_state {
	KERF_MPS_RUNNING = 0,       /* alive, limits set: takes new clients */
	KERF_MPS_FAILED = 1,        /* died or did not come up; restart due */
	KERF_MPS_GAVE_UP = 2,       /* restarts exhausted; failed until started again */
};

/* One daemon as the manager sees it; strings are the manager's. */
struct kerf_mps_view {
	uint32_t gpu_index;
	uint32_t uid;
	const char *gpu_uuid;
	const char *pipe_dir;
	struct kerf_mps_limits limits;
	enum kerf_mps_state state;
	int64_t pid;                /* 0 when none runs */
	unsigned restarts;          /* successful restarts after a failure, all time */
	unsigned failures;          /* failed bring-ups in a row */
	int64_t failed_at_ms;       /* when it last failed; 0 never */
	int64_t retry_at_ms;        /* next restart (Failed only) */
	const char *why;            /* why it failed; "" when Running */
};

struct kerf_mps_config {
	const char *root_dir;       /* NULL: KERF_MPS_DEFAULT_ROOT */
	struct kerf_mps_ops ops;
	int64_t backoff_first_ms;   /* 0: 1000 */
	int64_t backoff_max_ms;     /* 0: 30000 */
	unsigned max_restarts;      /* failed bring-ups in a row; 0: 5 */
	int64_t stable_ms;          /* up this long resets the count; 0: 60000 */
	/* Called on every change of state (v is valid during the call). */
	void (*on_change)(void *arg, const struct kerf_mps_view *v);
	void *on_change_arg;
};

/* One daemon to run: which GPU, for which tenant UID, with which limits. */
struct kerf_mps_daemon {
	uint32_t gpu_index;         /* 0..63, the index of kerf.io/assigned-gpus */
	const char *gpu_uuid;       /* 1..79 of [A-Za-z0-9-] */
	uint32_t uid;
	uint32_t gid;
	struct kerf_mps_limits limits;
};

struct kerf_mps;

int kerf_mps_new(struct kerf_mps **out, const struct kerf_mps_config *cfg,
		 struct kerf_err *err);
/* Frees the manager; the daemons keep running (kerf_mps_stop stops one). */
void kerf_mps_free(struct kerf_mps *m);

/*
 * Run d.  New: brought up now; 0 when it came up, else the error (the
 * daemon is then Failed with its restart scheduled, as after a crash).
 * Known with the same GPU UUID and limits: 0 (a Given-up daemon is tried
 * again now).  Known with other limits: -KERF_EBUSY (set_default_* reach
 * only servers spawned later: stop it, then start it with the new ones).
 * Bad input: -KERF_EINVAL/-KERF_ERANGE naming the field; a 129th daemon:
 * -KERF_ELIMIT.
 */
int kerf_mps_start(struct kerf_mps *m, const struct kerf_mps_daemon *d,
		   int64_t now_ms, struct kerf_err *err);

/* Quit the daemon of (gpu_index, uid) (SIGKILL if quit fails) and forget it. */
int kerf_mps_stop(struct kerf_mps *m, uint32_t gpu_index, uint32_t uid,
		  struct kerf_err *err);

/* Check every daemon and restart those due; returns how many changed state. */
int kerf_mps_poll(struct kerf_mps *m, int64_t now_ms);

/* Bit i: GPU i has a daemon that is not Running (its MPS slices failed). */
uint64_t kerf_mps_failed_gpus(const struct kerf_mps *m);

/* The daemon of (gpu_index, uid): 0, or -KERF_ENOTFOUND. */
int kerf_mps_find(const struct kerf_mps *m, uint32_t gpu_index, uint32_t uid,
		  struct kerf_mps_view *out);

/* "Running", "Failed", "GaveUp". */
const char *kerf_mps_state_name(enum kerf_mps_state s);

/* -- the real ops: exec nvidia-cuda-mps-control ------------------------ */

struct kerf_mps_exec {
	const char *control_path;   /* NULL: "nvidia-cuda-mps-control" from PATH */
	int timeout_ms;             /* per program run and pid file wait; 0: 5000 */
};

/* ops over exec (which must outlive ops). */
void kerf_mps_exec_ops(struct kerf_mps_exec *exec, struct kerf_mps_ops *ops);

/* -- the fake ------------------------------------------------------------ */

enum { KERF_MPS_FAKE_MAX = 64 };

struct kerf_mps_fake {
	int64_t next_pid;           /* 0: starts at 1000 */
	int64_t pids[KERF_MPS_FAKE_MAX];        /* started, in order */
	int dead[KERF_MPS_FAKE_MAX];            /* per started pid */
	size_t nr_started;
	char *cmds[KERF_MPS_FAKE_MAX];          /* "PIPE_DIR: command", in order */
	size_t nr_cmds;
	unsigned fail_starts;       /* the next N starts fail */
	unsigned fail_controls;     /* the next N control commands fail */
	char last_pct[16];          /* the last set_default_active_thread_percentage */
	char pct_override[16];      /* get_default_active_thread_percentage's answer; "": last_pct */
};

void kerf_mps_fake_ops(struct kerf_mps_fake *fake, struct kerf_mps_ops *ops);
/* Mark pid dead, as kill -9 would. */
void kerf_mps_fake_kill(struct kerf_mps_fake *fake, int64_t pid);
void kerf_mps_fake_release(struct kerf_mps_fake *fake);

#endif /* KERF_MPS_MPS_H */
