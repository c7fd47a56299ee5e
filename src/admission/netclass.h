/*
 * netclass: the network QoS classes a Tenant's spec.networkClass names
 * (docs/admission.md "Network classes"): the DSCP its pods' traffic is
 * marked with and, for RDMA classes, the NCCL traffic class (the ToS byte,
 * DSCP << 2 | ECT(0)) and service level the webhook gives GPU containers.
 * RoCE profiles A and B of the network QoS design: one lossless class for
 * all RDMA (DSCP 26, priority 3) and an optional second one for
 * latency-sensitive RDMA (DSCP 34, priority 4).
 */
#ifndef KERF_ADMISSION_NETCLASS_H
#define KERF_ADMISSION_NETCLASS_H

#include <stdint.h>

struct kerf_netclass {
	const char *name;
	int32_t dscp;
	int32_t nccl_ib_tc;          /* -1: not an RDMA class */
	int32_t nccl_ib_fifo_tc;     /* -1: as nccl_ib_tc */
	int32_t nccl_ib_sl;          /* -1: not an RDMA class */
};

/* The class named name, or NULL. */
const struct kerf_netclass *kerf_netclass_find(const char *name);

/* "rdma, rdma-latency, ..." for messages. */
const char *kerf_netclass_names(void);

#endif
