/*
 * e2e_agent_dp: an Allocate to the agent's device plugin (e2e_agent).
 */
#ifndef KERF_TESTS_E2E_AGENT_DP_H
#define KERF_TESTS_E2E_AGENT_DP_H

#include <stddef.h>

/* The gRPC status of Allocate(device) on sock (its message in msg), or < 0. */
int e2e_agent_allocate(const char *sock, const char *device, void (*tick)(void *),
		       char *msg, size_t size);

#endif
