/*
 * DSCP marking for real, in network namespaces this test makes: a "pod"
 * namespace and a "host" namespace joined by a veth pair.  kerf's ruleset
 * is applied in the host namespace for the host end of the veth (as the
 * agent does for a pod's veth); a UDP packet sent from the pod is received
 * in the host with IP_RECVTOS / IPV6_RECVTCLASS and its DSCP checked
 * against the class; after the pod is removed the next packet is
 * unmarked.  Registered only where ip and nft exist and a namespace can be
 * made (root); the namespaces are deleted even when a check fails.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "net/dscp_rules.h"
#include "net/nft.h"

#define POD_UID "5f0c2a3e-7b1d-4c2e-9a10-0123456789ab"
#define HOST_IF "kdh0"      /* the host end of the pod's veth */
#define POD_IF "kdp0"
#define PORT 47000

struct fx {
	char pod_ns[48];
	char host_ns[48];
	int self_fd;            /* the test's own namespace */
	int pod_fd, host_fd;
	int rx4, tx4, rx6, tx6;
	struct kerf_nft_exec exec;
	struct kerf_nft_ops nft;
};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "# failed (%d): %s\n", rc, cmd);
	return rc;
}

/* Namespaces a killed earlier run left (its pid is gone). */
static void clean_stale(void)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid = 0;
		char side = 0;
		if (sscanf(e->d_name, "kerfdscp-%c-%d", &side, &pid) == 2 &&
		    pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
			sh("ip netns del '%s' 2>/dev/null", e->d_name);
	}
	closedir(d);
}

static int ns_fd(const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int enter(int fd)
{
	return setns(fd, CLONE_NEWNET);
}

static int make_sockets(struct fx *f)
{
	int one = 1;
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(PORT),
				   .sin6_addr = IN6ADDR_ANY_INIT };

	if (enter(f->host_fd))
		return -1;
	f->rx4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	f->rx6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->rx4 < 0 || f->rx6 < 0)
		return -1;
	setsockopt(f->rx6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (setsockopt(f->rx4, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) ||
	    setsockopt(f->rx6, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) ||
	    setsockopt(f->rx4, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(f->rx6, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(f->rx4, (struct sockaddr *)&a4, sizeof(a4)) ||
	    bind(f->rx6, (struct sockaddr *)&a6, sizeof(a6)))
		return -1;
	if (enter(f->pod_fd))
		return -1;
	f->tx4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	f->tx6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->tx4 < 0 || f->tx6 < 0)
		return -1;
	return enter(f->self_fd);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	*state = f;
	f->self_fd = f->pod_fd = f->host_fd = -1;
	f->rx4 = f->tx4 = f->rx6 = f->tx6 = -1;
	clean_stale();
	snprintf(f->pod_ns, sizeof(f->pod_ns), "kerfdscp-p-%d", (int)getpid());
	snprintf(f->host_ns, sizeof(f->host_ns), "kerfdscp-h-%d", (int)getpid());
	f->exec.nft_path = getenv("KERF_NFT");
	kerf_nft_exec_ops(&f->exec, &f->nft);
	f->self_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (f->self_fd < 0 ||
	    sh("ip netns add %s", f->pod_ns) ||
	    sh("ip netns add %s", f->host_ns) ||
	    sh("ip -n %s link add " POD_IF " type veth peer name " HOST_IF
	       " netns %s", f->pod_ns, f->host_ns) ||
	    sh("ip -n %s addr add 10.77.0.1/24 dev " POD_IF, f->pod_ns) ||
	    sh("ip -n %s addr add fd77::1/64 dev " POD_IF " nodad", f->pod_ns) ||
	    sh("ip -n %s addr add 10.77.0.2/24 dev " HOST_IF, f->host_ns) ||
	    sh("ip -n %s addr add fd77::2/64 dev " HOST_IF " nodad", f->host_ns) ||
	    sh("ip -n %s link set " POD_IF " up", f->pod_ns) ||
	    sh("ip -n %s link set " HOST_IF " up", f->host_ns) ||
	    sh("ip -n %s link set lo up", f->host_ns))
		return -1;
	f->pod_fd = ns_fd(f->pod_ns);
	f->host_fd = ns_fd(f->host_ns);
	if (f->pod_fd < 0 || f->host_fd < 0 || make_sockets(f)) {
		fprintf(stderr, "# sockets in the namespaces: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int fds[] = { f->rx4, f->tx4, f->rx6, f->tx6, f->pod_fd, f->host_fd };
	if (f->self_fd >= 0)
		enter(f->self_fd);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (f->self_fd >= 0)
		close(f->self_fd);
	/* deleting a namespace deletes its end of the veth, so both go */
	sh("ip netns del %s 2>/dev/null", f->pod_ns);
	sh("ip netns del %s 2>/dev/null", f->host_ns);
	int left = access("/run/netns/", F_OK) == 0 &&
		   (ns_fd(f->pod_ns) >= 0 || ns_fd(f->host_ns) >= 0);
	free(f);
	return left ? -1 : 0;
}

/* Apply text in the host namespace (nft runs as a child, inheriting it). */
static int apply(struct fx *f, struct kerf_buf *b)
{
	struct kerf_err err = { 0 };
	assert_int_equal(enter(f->host_fd), 0);
	int rc = kerf_nft_apply(&f->nft, b->data ? b->data : "", b->len, &err);
	assert_int_equal(enter(f->self_fd), 0);
	if (rc)
		fprintf(stderr, "# nft: %s\n", err.msg);
	kerf_buf_reset(b);
	return rc;
}

/* Send one datagram pod -> host with sender ToS tos_in; the ToS byte (v4)
 * or traffic class (v6) as received. */
static int round_trip(struct fx *f, int v6, int tos_in)
{
	static unsigned seq;
	char msg[32], buf[64], cbuf[CMSG_SPACE(sizeof(int)) * 2];
	int n = snprintf(msg, sizeof(msg), "kerf %u", ++seq);
	ssize_t w;
	if (v6) {
		struct sockaddr_in6 to = { .sin6_family = AF_INET6,
					   .sin6_port = htons(PORT) };
		inet_pton(AF_INET6, "fd77::2", &to.sin6_addr);
		setsockopt(f->tx6, IPPROTO_IPV6, IPV6_TCLASS, &tos_in, sizeof(tos_in));
		w = sendto(f->tx6, msg, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to));
	} else {
		struct sockaddr_in to = { .sin_family = AF_INET,
					  .sin_port = htons(PORT) };
		inet_pton(AF_INET, "10.77.0.2", &to.sin_addr);
		setsockopt(f->tx4, IPPROTO_IP, IP_TOS, &tos_in, sizeof(tos_in));
		w = sendto(f->tx4, msg, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to));
	}
	assert_int_equal(w, n);

	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t r = recvmsg(v6 ? f->rx6 : f->rx4, &mh, 0);
	if (r < 0)
		fail_msg("no datagram (%s): %s", v6 ? "IPv6" : "IPv4", strerror(errno));
	assert_memory_equal(buf, msg, (size_t)n);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (!v6 && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			return *(unsigned char *)CMSG_DATA(c);
		if (v6 && c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
			int tc;
			memcpy(&tc, CMSG_DATA(c), sizeof(tc));
			return tc;
		}
	}
	fail_msg("no ToS/traffic class control message");
	return -1;
}

static int32_t class_dscp(const char *name)
{
	int32_t d = -1;
	assert_int_equal(kerf_dscp_of_class(name, &d, NULL), 0);
	return d;
}

static void test_mark_and_unmark(void **state)
{
	struct fx *f = *state;
	struct kerf_buf b;
	struct kerf_err err = { 0 };
	kerf_buf_init(&b, 0);

	/* the empty table: nothing marked */
	assert_int_equal(kerf_dscp_rules_resync(&b, NULL, 0, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0), 0);

	/* the pod in class rdma: DSCP 26 on IPv4 and IPv6 */
	struct kerf_dscp_pod pod = { POD_UID, HOST_IF, class_dscp("rdma") };
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0) >> 2, 26);
	assert_int_equal(round_trip(f, 1, 0) >> 2, 26);
	/* the ECN bits the sender set survive (ECT(0) = 2) */
	assert_int_equal(round_trip(f, 0, 2), 26 << 2 | 2);
	assert_int_equal(round_trip(f, 1, 2), 26 << 2 | 2);
	/* the pod's own DSCP is overwritten */
	assert_int_equal(round_trip(f, 0, 46 << 2) >> 2, 26);

	/* added again, now latency-tcp: replaced, not doubled */
	pod.dscp = class_dscp("latency-tcp");
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0) >> 2, 46);
	assert_int_equal(round_trip(f, 1, 0) >> 2, 46);

	/* removed: unmarked; removing again is no error */
	assert_int_equal(kerf_dscp_rules_remove(&b, POD_UID, HOST_IF, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0), 0);
	assert_int_equal(round_trip(f, 1, 0), 0);
	assert_int_equal(kerf_dscp_rules_remove(&b, POD_UID, HOST_IF, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0), 0);

	/* a resync marks; a resync without the pod unmarks */
	pod.dscp = class_dscp("rdma-latency");
	assert_int_equal(kerf_dscp_rules_resync(&b, &pod, 1, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0) >> 2, 34);
	assert_int_equal(kerf_dscp_rules_resync(&b, NULL, 0, &err), 0);
	assert_int_equal(apply(f, &b), 0);
	assert_int_equal(round_trip(f, 0, 0), 0);

	/* nft's refusal comes back: a per-pod add before the table exists */
	assert_int_equal(sh("ip netns exec %s nft delete table inet kerf_dscp",
			    f->host_ns), 0);
	assert_int_equal(kerf_dscp_rules_add(&b, &pod, &err), 0);
	assert_int_equal(enter(f->host_fd), 0);
	int rc = kerf_nft_apply(&f->nft, b.data, b.len, &err);
	assert_int_equal(enter(f->self_fd), 0);
	assert_int_equal(rc, -KERF_EIO);
	assert_non_null(strstr(err.msg, "nft -f - failed"));
	kerf_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mark_and_unmark, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
