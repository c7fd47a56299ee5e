/*
 * nic_qos: what a NIC's QoS is, against what kerf's network classes
 * expect of it (docs/agent.md "NIC QoS check"; network-qos design §2.1
 * and §3): DSCP trust, and PFC on exactly the lossless priorities of the
 * RoCE profile (A: the `rdma` class's priority 3; B: also `rdma-latency`'s
 * priority 4, both taken from admission/netclass.h).
 *
 * Reads go through struct kerf_sysfs_ops, over a root directory: the real
 * host is root "/", tests give a fake sysfs tree in a temporary directory.
 * What the driver does not expose is reported as "unknown", never guessed:
 *
 *   trust  <root>/sys/class/net/<if>/qos/trust   "dscp" or "pcp" (the
 *          NVIDIA driver; a label before the word, as in
 *          "Priority trust state: dscp", is allowed)
 *   pfc    <root>/sys/class/net/<if>/qos/pfc     8 flags, priority 0..7,
 *          separated by commas or blanks ("0,0,0,1,0,0,0,0", the mlnx_qos
 *          --pfc form).  Upstream drivers expose PFC only through DCB
 *          netlink, which this check does not read yet: unknown there.
 */
#ifndef KERF_NET_NIC_QOS_H
#define KERF_NET_NIC_QOS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct kerf_sysfs_ops {
	void *ctx;
	/* path is absolute ("/sys/..."); read at most size-1 bytes into out
	 * (NUL-terminated): the byte count, -KERF_ENOTFOUND when there is no
	 * such file, or another negative error. */
	int (*read)(void *ctx, const char *path, char *out, size_t size);
};

/* ops reading files below root (a directory; "/" for the host).  root
 * must outlive ops. */
void kerf_sysfs_root_ops(const char *root, struct kerf_sysfs_ops *ops);

enum kerf_roce_profile {
	KERF_ROCE_PROFILE_A = 0,   /* one lossless class: rdma */
	KERF_ROCE_PROFILE_B,       /* two: rdma and rdma-latency */
};

enum kerf_nic_verdict {
	KERF_NIC_OK = 0,
	KERF_NIC_MISMATCH,
	KERF_NIC_UNKNOWN,          /* the driver does not say */
};

struct kerf_nic_finding {
	const char *check;           /* "trust", "pfc" */
	enum kerf_nic_verdict verdict;
	char expected[64];
	char actual[64];             /* "" when unknown */
	char detail[160];            /* the file read, or why unknown */
};

enum { KERF_NIC_NR_CHECKS = 2 };

struct kerf_nic_report {
	char ifname[16];
	struct kerf_nic_finding findings[KERF_NIC_NR_CHECKS];
	size_t nr_findings;
	size_t nr_mismatches;
	size_t nr_unknown;
};

/* The PFC priorities profile needs, as a bit mask (bit p = priority p). */
uint8_t kerf_nic_expected_pfc_mask(enum kerf_roce_profile profile);

/*
 * Check ifname's QoS against profile into *report.  0 whatever the
 * findings say; -KERF_EINVAL for a bad interface name (naming the field),
 * -KERF_ENOTFOUND when there is no such interface.
 */
int kerf_nic_qos_check(const struct kerf_sysfs_ops *ops, const char *ifname,
		       enum kerf_roce_profile profile,
		       struct kerf_nic_report *report, struct kerf_err *err);

const char *kerf_nic_verdict_name(enum kerf_nic_verdict v);

#endif /* KERF_NET_NIC_QOS_H */
