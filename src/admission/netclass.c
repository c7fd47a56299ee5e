#include "admission/netclass.h"

#include <string.h>

static const struct kerf_netclass classes[] = {
	/* all RDMA of all tenants: lossless (PFC) at priority 3 */
	{ "rdma", 26, 106, -1, 3 },
	{ "bulk", 26, 106, -1, 3 },             /* the same, by its role */
	/* latency-sensitive RDMA: the second lossless class, priority 4 */
	{ "rdma-latency", 34, 138, 138, 4 },
	/* TCP classes: marked by the node, no NCCL settings */
	{ "latency-tcp", 46, -1, -1, -1 },
	{ "storage-tcp", 18, -1, -1, -1 },
	{ "best-effort", 0, -1, -1, -1 },
	{ "scavenger", 8, -1, -1, -1 },
};

const struct kerf_netclass *kerf_netclass_find(const char *name)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].name, name))
			return &classes[i];
	return NULL;
}

const char *kerf_netclass_names(void)
{
	return "rdma, bulk, rdma-latency, latency-tcp, storage-tcp, best-effort, scavenger";
}
