/*
 * fake nvidia-cuda-mps-control, for the MPS tests (never installed).
 *
 *   nvidia-cuda-mps-control -d   start the "daemon": it detaches (a new
 *                                session, stdio on /dev/null), writes its
 *                                pid to $CUDA_MPS_PIPE_DIRECTORY/
 *                                nvidia-cuda-mps-control.pid and sleeps
 *                                until killed; the launcher exits 0 once
 *                                the pid file is there
 *   nvidia-cuda-mps-control      read commands from stdin, one a line, as
 *                                the real front end does; exit 1 with the
 *                                real message when no daemon runs
 *
 * Everything it gets is appended to $CUDA_MPS_PIPE_DIRECTORY/fake.log:
 * "start uid=U gid=G visible=V log=L" for each -d, "cmd LINE" for each
 * command, so a test can check what a restarted daemon was told.
 * Commands: set_default_active_thread_percentage N (kept, answered by
 * get_default_active_thread_percentage as "N.0"; 100.0 before any set),
 * quit (the daemon ends), anything else is recorded and answered by
 * nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *dir;

static void path_of(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static void logf_line(const char *prefix, const char *text)
{
	char p[4096];
	path_of(p, sizeof(p), "fake.log");
	FILE *f = fopen(p, "a");
	if (!f)
		return;
	fprintf(f, "%s%s\n", prefix, text);
	fclose(f);
}

static long read_pid(void)
{
	char p[4096];
	long pid = 0;
	path_of(p, sizeof(p), "nvidia-cuda-mps-control.pid");
	FILE *f = fopen(p, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

static int daemon_alive(long pid)
{
	char p[64], buf[512];
	if (pid <= 1 || kill((pid_t)pid, 0) < 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%ld/stat", pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *c = strrchr(buf, ')');
	return !(c && c[1] == ' ' && (c[2] == 'Z' || c[2] == 'X'));
}

static int start(void)
{
	char line[4096], p[4096];
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	const char *log = getenv("CUDA_MPS_LOG_DIRECTORY");

	snprintf(line, sizeof(line), "uid=%u gid=%u visible=%s log=%s", (unsigned)getuid(),
		 (unsigned)getgid(), vis ? vis : "(unset)", log ? log : "(unset)");
	logf_line("start ", line);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		setsid();
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		char tmp[4200];
		path_of(p, sizeof(p), "nvidia-cuda-mps-control.pid");
		snprintf(tmp, sizeof(tmp), "%s.tmp", p);
		FILE *f = fopen(tmp, "w");
		if (!f)
			_exit(1);
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
		rename(tmp, p);
		for (;;)
			pause();
	}
	/* the launcher returns once the daemon is there */
	for (int i = 0; i < 200; i++) {
		if (read_pid() == (long)pid)
			return 0;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return 1;
}

static int front_end(void)
{
	char line[1024], p[4096];
	long pid = read_pid();

	if (!daemon_alive(pid)) {
		fprintf(stderr, "Cannot find MPS control daemon process\n");
		return 1;
	}
	path_of(p, sizeof(p), "pct");
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		logf_line("cmd ", line);
		if (!strncmp(line, "set_default_active_thread_percentage ", 37)) {
			FILE *f = fopen(p, "w");
			if (f) {
				fprintf(f, "%s", line + 37);
				fclose(f);
			}
		} else if (!strcmp(line, "get_default_active_thread_percentage")) {
			char v[32] = "100";
			FILE *f = fopen(p, "r");
			if (f) {
				if (!fgets(v, sizeof(v), f))
					snprintf(v, sizeof(v), "100");
				fclose(f);
			}
			printf("%s.0\n", v);
		} else if (!strcmp(line, "quit")) {
			kill((pid_t)pid, SIGTERM);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	if (!dir)
		dir = "/tmp/nvidia-mps";
	if (argc > 1 && !strcmp(argv[1], "-d"))
		return start();
	return front_end();
}
