/*
 * fuzz_kubeconfig: libFuzzer target for the kubeconfig reader
 * (kube/kubeconfig.c), input that an operator or a tool writes and kerf
 * must not trust.  The input is the file's text; file references are
 * refused (no base directory), so nothing touches the disk.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - on error: the code is negative and recorded, the message is not
 *    empty and holds no control character (values are escaped), and the
 *    config is left empty;
 *  - on success: the server is an https:// URL, a client certificate comes
 *    with its key, and there is no token file.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_kubeconfig"
#include "check.h"

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_kube_config cfg;
	struct kerf_err err = { 0 };
	const char *context = NULL;
	size_t i;
	int rc;

	/* a first byte 'N' names the context "dev" instead of current-context */
	if (size > 0 && data[0] == 'N') {
		context = "dev";
		data++;
		size--;
	}
	rc = kerf_kubeconfig_parse(&cfg, (const char *)data, size, "kc", NULL,
				   context, &err);
	if (rc < 0) {
		CHECK(err.code < 0 && err.msg[0]);
		for (i = 0; err.msg[i]; i++)
			CHECK_MSG((unsigned char)err.msg[i] >= 0x20 &&
				  (unsigned char)err.msg[i] != 0x7f, err.msg);
		CHECK(!cfg.server && !cfg.token && !cfg.ca_pem);
		return 0;
	}
	CHECK(cfg.server && strncmp(cfg.server, "https://", 8) == 0);
	CHECK(!cfg.cert_pem == !cfg.key_pem);
	CHECK(!cfg.token_path);
	kerf_kube_config_release(&cfg);
	return 0;
}
