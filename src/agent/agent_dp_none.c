/*
 * agent_dp_none: the agent built without the device plugin (nghttp2,
 * protobuf-c or protoc-c missing): asking for it is an error.
 */
#include "agent/agent_int.h"

int kerf_agent_dp_start(struct kerf_agent *a, struct kerf_err *err)
{
	if (!a->o.dp_dir)
		return 0;
	return kerf_err_set(err, -KERF_EINVAL,
			    "--device-plugin-dir: this kerf was built without the device plugin");
}

void kerf_agent_dp_step(struct kerf_agent *a)
{
	(void)a;
}

void kerf_agent_dp_stop(struct kerf_agent *a)
{
	(void)a;
}
