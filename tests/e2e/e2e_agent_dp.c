/*
 * e2e_agent_dp: one Allocate call to the agent's device plugin, as the
 * kubelet makes it (v1beta1 over gRPC on the plugin's unix socket), for
 * e2e_agent.  Built where the device plugin is.
 */
#include "e2e_agent_dp.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/buf.h"
#include "deviceplugin/v1beta1/api.pb-c.h"
#include "grpc/client.h"

int e2e_agent_allocate(const char *sock, const char *device, void (*tick)(void *),
		       char *msg, size_t size)
{
	char *ids[1] = { (char *)device };
	V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
	V1beta1__ContainerAllocateRequest *cs[1] = { &c };
	V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
	struct kerf_grpc_client_opts o = { .timeout_ms = 5000, .tick = tick,
					   .max_msg_bytes = 4u << 20 };
	struct kerf_err err = { 0 };
	struct kerf_buf resp;
	uint8_t *buf;
	size_t len;
	int rc;

	c.n_devices_ids = 1;
	c.devices_ids = ids;
	req.n_container_requests = 1;
	req.container_requests = cs;
	len = v1beta1__allocate_request__get_packed_size(&req);
	if (!(buf = malloc(len ? len : 1)))
		return -1;
	v1beta1__allocate_request__pack(&req, buf);
	kerf_buf_init(&resp, 1u << 20);
	rc = kerf_grpc_unary_call(sock, "/v1beta1.DevicePlugin/Allocate", buf, len, &resp, &o,
				  &err);
	snprintf(msg, size, "%s", err.msg);
	kerf_buf_release(&resp);
	free(buf);
	return rc;
}
