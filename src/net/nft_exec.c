/* The real struct kerf_nft_ops: `nft -f -` in a child process. */
#include "net/nft.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"

enum { STDERR_MAX_BYTES = 4096 };

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void child(const char *path, int in_fd, int err_fd)
{
	if (dup2(in_fd, 0) < 0 || dup2(err_fd, 2) < 0 || dup2(err_fd, 1) < 0)
		_exit(126);
	execlp(path, path, "-f", "-", (char *)NULL);
	dprintf(2, "cannot run %s: %s", path, strerror(errno));
	_exit(127);
}

/* Feed text to in_fd and read err_fd until EOF or the deadline. */
static int pump(int in_fd, int err_fd, const char *text, size_t len,
		char *errbuf, size_t *err_len, long deadline_ms)
{
	size_t off = 0;
	while (err_fd >= 0) {
		struct pollfd p[2] = {
			{ .fd = err_fd, .events = POLLIN },
			{ .fd = in_fd, .events = POLLOUT },
		};
		long left = deadline_ms - now_ms();
		if (left <= 0)
			return -KERF_ETIMEDOUT;
		int n = poll(p, in_fd >= 0 ? 2 : 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -KERF_EIO;
		if (in_fd >= 0 && p[1].revents) {
			ssize_t w = off < len ? write(in_fd, text + off, len - off)
					      : 0;
			if (w > 0)
				off += (size_t)w;
			if (w < 0 && errno != EINTR && errno != EAGAIN)
				off = len;   /* nft went away: read why */
			if (off >= len || (p[1].revents & (POLLERR | POLLHUP))) {
				close(in_fd);
				in_fd = -1;
			}
		}
		if (p[0].revents) {
			char tmp[512];
			ssize_t r = read(err_fd, tmp, sizeof(tmp));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			size_t room = STDERR_MAX_BYTES - 1 - *err_len;
			size_t take = (size_t)r < room ? (size_t)r : room;
			memcpy(errbuf + *err_len, tmp, take);
			*err_len += take;
		}
	}
	if (in_fd >= 0)
		close(in_fd);
	return 0;
}

static int exec_apply(void *ctx, const char *text, size_t len,
		      struct kerf_err *err)
{
	const struct kerf_nft_exec *ex = ctx;
	const char *path = ex->nft_path ? ex->nft_path : "nft";
	int timeout_ms = ex->timeout_ms > 0 ? ex->timeout_ms : 10000;
	int in[2], out[2];
	char errbuf[STDERR_MAX_BYTES];
	size_t err_len = 0;

	if (pipe(in) < 0)
		return kerf_err_set(err, -KERF_EIO, "nft: pipe: %s",
				    strerror(errno));
	if (pipe(out) < 0) {
		close(in[0]);
		close(in[1]);
		return kerf_err_set(err, -KERF_EIO, "nft: pipe: %s",
				    strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		return kerf_err_set(err, -KERF_EIO, "nft: fork: %s",
				    strerror(e));
	}
	if (pid == 0) {
		close(in[1]);
		close(out[0]);
		child(path, in[0], out[1]);
	}
	close(in[0]);
	close(out[1]);
	/* A write to a pipe nft closed must fail with EPIPE, not kill us:
	 * SIGPIPE is blocked in this thread only (the process's disposition
	 * is left alone) and one our write raised is taken before it is
	 * unblocked. */
	sigset_t pipe_set, old_set;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	int rc = pump(in[1], out[0], text, len, errbuf, &err_len,
		      now_ms() + timeout_ms);
	if (!sigismember(&old_set, SIGPIPE)) {
		struct timespec zero = { 0 };
		while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old_set, NULL);
	close(out[0]);
	if (rc == -KERF_ETIMEDOUT)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	errbuf[err_len] = '\0';
	/* The last line of nft's message is enough to tell; keep it short
	 * and escaped (it quotes our text back). */
	char esc[400];
	kerf_escape_n(esc, sizeof(esc), errbuf, err_len);
	if (rc == -KERF_ETIMEDOUT)
		return kerf_err_set(err, rc, "nft: no answer in %d ms", timeout_ms);
	if (rc)
		return kerf_err_set(err, rc, "nft: %s", kerf_strerror(rc));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return kerf_err_set(err, -KERF_EIO, "nft -f - failed (%s %d): %s",
				    WIFEXITED(status) ? "exit" : "signal",
				    WIFEXITED(status) ? WEXITSTATUS(status)
						      : WTERMSIG(status),
				    esc);
	return 0;
}

void kerf_nft_exec_ops(struct kerf_nft_exec *exec, struct kerf_nft_ops *ops)
{
	ops->ctx = exec;
	ops->apply = exec_apply;
}
