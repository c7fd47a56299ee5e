/*
 * The real struct kerf_mps_ops (mps.h): nvidia-cuda-mps-control in child
 * processes.
 *
 * start: `nvidia-cuda-mps-control -d` as the tenant's UID; the launcher
 * exits once the daemon runs, and the daemon writes its pid into
 * <pipe dir>/nvidia-cuda-mps-control.pid, which is read back.  control:
 * `nvidia-cuda-mps-control` with the command on its stdin (the way
 * NVIDIA's own device plugin and the MPS docs send one), its stdout the
 * answer.  The daemon is not our child (it detaches), so liveness is
 * kill(pid, 0) plus its state in /proc: a killed daemon stays a zombie
 * until init reaps it, and a zombie is dead.
 */
#define _DEFAULT_SOURCE   /* setgroups */
#include "mps/mps.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"

extern char **environ;

enum { OUT_MAX_BYTES = 2048, MAX_ENV = 512 };

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static const char *program(const struct kerf_mps_exec *ex)
{
	return ex->control_path ? ex->control_path : "nvidia-cuda-mps-control";
}

static int timeout_of(const struct kerf_mps_exec *ex)
{
	return ex->timeout_ms > 0 ? ex->timeout_ms : 5000;
}

/* mkdir -p path; the last component mode and owner as given. */
static int make_dir(const char *path, mode_t mode, uint32_t uid, uint32_t gid,
		    struct kerf_err *err)
{
	char p[KERF_MPS_PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return kerf_err_set(err, -KERF_EIO, "mps: cannot make '%s': %s", p,
					    strerror(errno));
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return kerf_err_set(err, -KERF_EIO, "mps: cannot make '%s': %s", p, strerror(errno));
	if (chown(p, (uid_t)uid, (gid_t)gid) < 0 || chmod(p, mode) < 0)
		return kerf_err_set(err, -KERF_EIO, "mps: cannot give '%s' to %u:%u: %s", p, uid,
				    gid, strerror(errno));
	return 0;
}

/* environ without the MPS variables, then "NAME=value" for each of vars. */
static char **make_env(char *const *vars, size_t nr_vars)
{
	size_t n = 0, k = 0;

	while (environ[n])
		n++;
	if (n > MAX_ENV)
		n = MAX_ENV;
	char **env = calloc(n + nr_vars + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CUDA_VISIBLE_DEVICES=", 21) &&
		    strncmp(environ[i], "CUDA_MPS_", 9))
			env[k++] = environ[i];
	for (size_t i = 0; i < nr_vars; i++)
		env[k++] = vars[i];
	return env;
}

struct run {
	const char *path;
	char *const *argv;
	char **env;
	const char *input;      /* written to stdin whole; NULL: /dev/null */
	int as_user;            /* switch to uid:gid first */
	uint32_t uid;
	uint32_t gid;
	int timeout_ms;
	char out[OUT_MAX_BYTES];   /* stdout and stderr */
	size_t out_len;
	int status;
};

static void child(const struct run *r, int in_fd, int out_fd)
{
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(out_fd, 2) < 0)
		_exit(126);
	if (r->as_user && (getuid() != r->uid || getgid() != r->gid)) {
		if ((getuid() == 0 && setgroups(0, NULL) < 0) || setgid((gid_t)r->gid) < 0 ||
		    setuid((uid_t)r->uid) < 0) {
			dprintf(2, "cannot become %u:%u: %s", r->uid, r->gid, strerror(errno));
			_exit(126);
		}
	}
	environ = r->env;
	execvp(r->path, r->argv);
	dprintf(2, "cannot run %s: %s", r->path, strerror(errno));
	_exit(127);
}

/*
 * Run r to its end (or the deadline: SIGKILL).  The input is written
 * before the child starts (it is small: no SIGPIPE can come of it); the
 * output is read until the child exits, not until EOF, because a daemon
 * the child leaves behind may hold the pipe.
 */
static int run(struct run *r, struct kerf_err *err)
{
	int in[2], out[2];
	int64_t deadline = now_ms() + r->timeout_ms;

	if (pipe(in) < 0)
		return kerf_err_set(err, -KERF_EIO, "mps: pipe: %s", strerror(errno));
	if (pipe(out) < 0) {
		close(in[0]);
		close(in[1]);
		return kerf_err_set(err, -KERF_EIO, "mps: pipe: %s", strerror(errno));
	}
	size_t len = r->input ? strlen(r->input) : 0;
	if (len && write(in[1], r->input, len) != (ssize_t)len) {
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		return kerf_err_set(err, -KERF_EIO, "mps: writing the command: %s", strerror(errno));
	}
	close(in[1]);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(in[0]); close(out[0]); close(out[1]);
		return kerf_err_set(err, -KERF_EIO, "mps: fork: %s", strerror(e));
	}
	if (pid == 0) {
		close(out[0]);
		child(r, in[0], out[1]);
	}
	close(in[0]);
	close(out[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	r->out_len = 0;
	int done = 0, rc = 0, eof = 0;
	while (!done) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		if (eof)
			sleep_ms(10);   /* output closed, the program not yet gone */
		else
			poll(&p, 1, 20);
		while (!eof) {
			char tmp[512];
			ssize_t n = read(out[0], tmp, sizeof(tmp));
			if (n == 0)
				eof = 1;
			if (n <= 0)
				break;
			size_t take = (size_t)n;
			if (take > sizeof(r->out) - 1 - r->out_len)
				take = sizeof(r->out) - 1 - r->out_len;
			memcpy(r->out + r->out_len, tmp, take);
			r->out_len += take;
		}
		pid_t w = waitpid(pid, &r->status, WNOHANG);
		if (w == pid)
			done = 1;
		else if (w < 0 && errno != EINTR)
			done = 1, rc = kerf_err_set(err, -KERF_EIO, "mps: waitpid: %s", strerror(errno));
		else if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
				;
			rc = kerf_err_set(err, -KERF_ETIMEDOUT, "mps: %s gave no answer in %d ms",
					  r->path, r->timeout_ms);
			done = 1;
		}
	}
	close(out[0]);
	r->out[r->out_len] = '\0';
	while (r->out_len && strchr(" \t\r\n", r->out[r->out_len - 1]))
		r->out[--r->out_len] = '\0';
	if (rc == 0 && (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)) {
		char esc[300];
		rc = kerf_err_set(err, -KERF_EIO, "mps: %s %s (%s %d): %s", r->path,
				  r->argv[1] ? r->argv[1] : "", 
				  WIFEXITED(r->status) ? "exit" : "signal",
				  WIFEXITED(r->status) ? WEXITSTATUS(r->status) : WTERMSIG(r->status),
				  kerf_escape(esc, sizeof(esc), r->out));
	}
	return rc;
}

static int read_pid_file(const char *path, int64_t *pid)
{
	char buf[32];
	FILE *f = fopen(path, "r");
	if (!f)
		return -KERF_ENOTFOUND;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *end;
	errno = 0;
	long long v = strtoll(buf, &end, 10);
	if (end == buf || errno || v <= 1 || (*end && !strchr(" \n", *end)))
		return -KERF_EPARSE;
	*pid = v;
	return 0;
}

static int exec_start(void *ctx, const struct kerf_mps_spawn *s, int64_t *pid,
		      struct kerf_err *err)
{
	const struct kerf_mps_exec *ex = ctx;
	char visible[KERF_MPS_UUID_MAX + 32], pipe_var[KERF_MPS_PATH_MAX + 32],
		log_var[KERF_MPS_PATH_MAX + 32], pid_path[KERF_MPS_PATH_MAX + 40];
	char *vars[] = { visible, pipe_var, log_var };
	char *argv[] = { (char *)program(ex), "-d", NULL };
	struct run r = { .path = program(ex), .argv = argv, .as_user = 1, .uid = s->uid,
			 .gid = s->gid, .timeout_ms = timeout_of(ex) };
	int rc;

	if ((rc = make_dir(s->pipe_dir, 0700, s->uid, s->gid, err)) < 0 ||
	    (rc = make_dir(s->log_dir, 0700, s->uid, s->gid, err)) < 0)
		return rc;
	snprintf(pid_path, sizeof(pid_path), "%s/%s", s->pipe_dir, KERF_MPS_PID_FILE);
	unlink(pid_path);
	snprintf(visible, sizeof(visible), "CUDA_VISIBLE_DEVICES=%s", s->gpu_uuid);
	snprintf(pipe_var, sizeof(pipe_var), "CUDA_MPS_PIPE_DIRECTORY=%s", s->pipe_dir);
	snprintf(log_var, sizeof(log_var), "CUDA_MPS_LOG_DIRECTORY=%s", s->log_dir);
	r.env = make_env(vars, 3);
	if (!r.env)
		return kerf_err_set(err, -KERF_ENOMEM, "mps: out of memory");
	int64_t deadline = now_ms() + r.timeout_ms;
	rc = run(&r, err);
	free(r.env);
	if (rc < 0)
		return rc;
	/* The daemon writes its pid once it listens. */
	for (;;) {
		rc = read_pid_file(pid_path, pid);
		if (rc == 0)
			return 0;
		if (now_ms() >= deadline)
			return kerf_err_set(err, -KERF_ETIMEDOUT,
					    "mps: no valid %s in %d ms after %s -d", pid_path,
					    r.timeout_ms, r.path);
		sleep_ms(20);
	}
}

static int exec_alive(void *ctx, int64_t pid)
{
	char path[64], buf[256];
	(void)ctx;

	if (pid <= 1 || pid > INT32_MAX)
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;   /* no /proc: kill's word */
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] != ' ')
		return 1;
	return close_paren[2] != 'Z' && close_paren[2] != 'X';
}

static int exec_control(void *ctx, const struct kerf_mps_spawn *s, const char *cmd,
			char *reply, size_t reply_size, struct kerf_err *err)
{
	const struct kerf_mps_exec *ex = ctx;
	char pipe_var[KERF_MPS_PATH_MAX + 32], line[KERF_MPS_TEXT_MAX + 2];
	char *vars[] = { pipe_var };
	char *argv[] = { (char *)program(ex), NULL };
	struct run r = { .path = program(ex), .argv = argv, .input = line,
			 .timeout_ms = timeout_of(ex) };

	if (strlen(cmd) > KERF_MPS_TEXT_MAX || strchr(cmd, '\n'))
		return kerf_err_set(err, -KERF_EINVAL, "mps: command '%.80s': one line of at most %d characters",
				    cmd, KERF_MPS_TEXT_MAX);
	snprintf(line, sizeof(line), "%s\n", cmd);
	snprintf(pipe_var, sizeof(pipe_var), "CUDA_MPS_PIPE_DIRECTORY=%s", s->pipe_dir);
	r.env = make_env(vars, 1);
	if (!r.env)
		return kerf_err_set(err, -KERF_ENOMEM, "mps: out of memory");
	int rc = run(&r, err);
	free(r.env);
	if (rc < 0) {
		struct kerf_err inner = *err;
		kerf_err_clear(err);
		return kerf_err_set(err, rc, "'%s': %s", cmd, inner.msg);
	}
	if (reply && reply_size)
		snprintf(reply, reply_size, "%s", r.out);
	return 0;
}

static void exec_kill(void *ctx, int64_t pid)
{
	(void)ctx;
	if (pid > 1 && pid <= INT32_MAX)
		kill((pid_t)pid, SIGKILL);
}

void kerf_mps_exec_ops(struct kerf_mps_exec *exec, struct kerf_mps_ops *ops)
{
	ops->ctx = exec;
	ops->start = exec_start;
	ops->alive = exec_alive;
	ops->control = exec_control;
	ops->kill = exec_kill;
}
