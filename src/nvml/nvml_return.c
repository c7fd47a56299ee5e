/*
 * nvml_return: names of NVML's return codes, both ways.  Compiled into
 * kerf and into the fake library (which reads the names from its script).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "nvml/nvml_load.h"

static const struct {
	int rc;
	const char *name;
} names[] = {
#define R(x) { NVML_##x, "NVML_" #x }
	R(SUCCESS), R(ERROR_UNINITIALIZED), R(ERROR_INVALID_ARGUMENT),
	R(ERROR_NOT_SUPPORTED), R(ERROR_NO_PERMISSION), R(ERROR_ALREADY_INITIALIZED),
	R(ERROR_NOT_FOUND), R(ERROR_INSUFFICIENT_SIZE), R(ERROR_INSUFFICIENT_POWER),
	R(ERROR_DRIVER_NOT_LOADED), R(ERROR_TIMEOUT), R(ERROR_IRQ_ISSUE),
	R(ERROR_LIBRARY_NOT_FOUND), R(ERROR_FUNCTION_NOT_FOUND),
	R(ERROR_CORRUPTED_INFOROM), R(ERROR_GPU_IS_LOST), R(ERROR_RESET_REQUIRED),
	R(ERROR_OPERATING_SYSTEM), R(ERROR_LIB_RM_VERSION_MISMATCH), R(ERROR_IN_USE),
	R(ERROR_MEMORY), R(ERROR_NO_DATA), R(ERROR_VGPU_ECC_NOT_SUPPORTED),
	R(ERROR_INSUFFICIENT_RESOURCES), R(ERROR_FREQ_NOT_SUPPORTED),
	R(ERROR_ARGUMENT_VERSION_MISMATCH), R(ERROR_DEPRECATED), R(ERROR_NOT_READY),
	R(ERROR_GPU_NOT_FOUND), R(ERROR_INVALID_STATE),
	R(ERROR_RESET_TYPE_NOT_SUPPORTED), R(ERROR_UNKNOWN),
#undef R
};

const char *kerf_nvml_return_name(int rc)
{
	static _Thread_local char other[32];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rc == rc)
			return names[i].name;
	snprintf(other, sizeof(other), "NVML_ERROR_%d", rc);
	return other;
}

int kerf_nvml_return_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *n = names[i].name;
		if (!strcasecmp(n, name))
			return names[i].rc;
		if (!strncmp(n, "NVML_ERROR_", 11) && !strcasecmp(n + 11, name))
			return names[i].rc;
	}
	return -1;
}
