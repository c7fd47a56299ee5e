/*
 * dscp_rules: the nftables ruleset text (input of `nft -f -`) that marks
 * each pod's egress with the DSCP of its tenant's network class
 * (docs/agent.md "DSCP marking").  Pure: text in a buffer, no I/O.
 *
 * Where the marking happens: the host side of the pod's veth.  A pod's
 * packets leave its network namespace through the veth and enter the
 * host's namespace on the host-side interface, so a prerouting chain in
 * the host namespace sees them, whatever the pod's cgroup or process.
 * `socket cgroupv2` cannot do this job from the host: the kernel allows it
 * only in prerouting/input/output and only for sockets of the ruleset's
 * own namespace, and a pod's sockets are in the pod's namespace (so it
 * would only work with rules loaded inside every pod's namespace).
 *
 * The layout, all in kerf's own table `inet kerf_dscp`:
 *
 *   map pods    { type ifname : verdict }      host veth -> jump pod_<uid>
 *   chain pod_<uid>  { ip dscp set N; ip6 dscp set N }   one per pod
 *   chain egress { type filter hook prerouting priority mangle;
 *                  iifname vmap @pods }
 *
 * A pod is added and removed by its UID (chain pod_<uid>, '-' written
 * '_'), so removal is exact and touches no other pod; both are idempotent
 * (adding again replaces the pod's marking, removing a pod that is not
 * there is not an error).  kerf_dscp_rules_resync replaces the whole
 * table in one nft transaction.  `ip dscp set` keeps the ECN bits.
 *
 * Every name is validated before it is written, so no input can inject
 * nft syntax: interface names are 1..15 of [A-Za-z0-9._-] (not "." or
 * ".."), pod UIDs 1..64 of [0-9a-f-], DSCP 0..63; a refusal names the
 * field and the reason.
 */
#ifndef KERF_NET_DSCP_RULES_H
#define KERF_NET_DSCP_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define KERF_DSCP_TABLE "kerf_dscp"

enum {
	KERF_DSCP_IFNAME_MAX = 15,   /* IFNAMSIZ - 1 */
	KERF_DSCP_UID_MAX = 64,
	KERF_DSCP_MAX = 63,
	KERF_DSCP_MAX_PODS = 4096,   /* a resync refuses more */
};

struct kerf_dscp_pod {
	const char *uid;        /* metadata.uid */
	const char *ifname;     /* the host side of the pod's veth */
	int32_t dscp;           /* 0..63 */
};

/* The DSCP of network class name (admission/netclass.h); -KERF_EINVAL
 * naming the class and the known ones when there is no such class. */
int kerf_dscp_of_class(const char *class_name, int32_t *dscp,
		       struct kerf_err *err);

/* 0, or -KERF_EINVAL naming field and the reason. */
int kerf_dscp_check_ifname(const char *ifname, const char *field,
			   struct kerf_err *err);
int kerf_dscp_check_uid(const char *uid, const char *field,
			struct kerf_err *err);
int kerf_dscp_check_pod(const struct kerf_dscp_pod *pod,
			struct kerf_err *err);

/*
 * Append to out the commands that mark pod's egress (the table must exist:
 * see kerf_dscp_rules_resync).  If pod->ifname already jumps to another
 * pod's chain, nft refuses the ruleset (File exists): resync then.
 */
int kerf_dscp_rules_add(struct kerf_buf *out, const struct kerf_dscp_pod *pod,
			struct kerf_err *err)
	__attribute__((warn_unused_result));

/* Append the commands that remove the pod uid whose host veth is ifname. */
int kerf_dscp_rules_remove(struct kerf_buf *out, const char *uid,
			   const char *ifname, struct kerf_err *err)
	__attribute__((warn_unused_result));

/*
 * Append the ruleset that replaces kerf's table with one marking exactly
 * pods[0..nr_pods) (none: the empty table, which is also how the table is
 * first made).  Duplicate UIDs or interfaces are refused.
 */
int kerf_dscp_rules_resync(struct kerf_buf *out,
			   const struct kerf_dscp_pod *pods, size_t nr_pods,
			   struct kerf_err *err)
	__attribute__((warn_unused_result));

#endif /* KERF_NET_DSCP_RULES_H */
