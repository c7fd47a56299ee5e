#include "kube/incluster.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/parse.h"

static int check_env(const char *name, const char *val, bool port,
		     struct kerf_err *err)
{
	char shown[96];
	uint64_t n;
	size_t i;

	if (!val || !val[0])
		return kerf_err_set(err, -KERF_EINVAL, "in-cluster config: %s is not set (not running in a pod?)", name);
	kerf_escape(shown, sizeof(shown), val);
	if (port) {
		if (kerf_parse_u64(val, &n) < 0 || n == 0 || n > 65535)
			return kerf_err_set(err, -KERF_EINVAL, "in-cluster config: %s '%s': not a port number (1..65535)", name, shown);
		return 0;
	}
	for (i = 0; val[i]; i++)
		if (!(val[i] == '.' || val[i] == ':' || val[i] == '-' ||
		      (val[i] >= '0' && val[i] <= '9') ||
		      (val[i] >= 'a' && val[i] <= 'z') ||
		      (val[i] >= 'A' && val[i] <= 'Z')))
			return kerf_err_set(err, -KERF_EINVAL, "in-cluster config: %s '%s': not a host name or address", name, shown);
	return 0;
}

static int join(char **out, const char *dir, const char *name)
{
	struct kerf_buf b;

	kerf_buf_init(&b, 8192);
	if (kerf_buf_addf(&b, "%s/%s", dir, name) < 0) {
		kerf_buf_release(&b);
		return -KERF_ENOMEM;
	}
	*out = kerf_buf_detach(&b, NULL);
	return *out ? 0 : -KERF_ENOMEM;
}

static int load(struct kerf_kube_config *cfg, const char *host,
		const char *port, const char *sa_dir, struct kerf_err *err)
{
	struct kerf_buf b;
	char *path = NULL, *ns = NULL;
	size_t len;
	bool changed;
	int rc;

	rc = check_env("KUBERNETES_SERVICE_HOST", host, false, err);
	if (rc == 0)
		rc = check_env("KUBERNETES_SERVICE_PORT", port, true, err);
	if (rc < 0)
		return rc;
	kerf_buf_init(&b, 512);
	rc = kerf_buf_addf(&b, strchr(host, ':') ? "https://[%s]:%s" :
			   "https://%s:%s", host, port);
	if (rc == 0)
		cfg->server = kerf_buf_detach(&b, NULL);
	kerf_buf_release(&b);
	if (rc < 0 || !cfg->server)
		return kerf_err_set(err, -KERF_ENOMEM, "in-cluster config: out of memory");
	if (join(&cfg->token_path, sa_dir, "token") < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "in-cluster config: out of memory");
	rc = kerf_kube_config_token_refresh(cfg, &changed, err);
	if (rc < 0)
		return rc;
	if (join(&path, sa_dir, "ca.crt") < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "in-cluster config: out of memory");
	rc = kerf_kube_read_small_file("service-account CA", path,
				       KERF_KUBE_PEM_MAX_BYTES, &cfg->ca_pem,
				       &cfg->ca_pem_len, err);
	free(path);
	if (rc < 0)
		return rc;
	if (join(&path, sa_dir, "namespace") < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "in-cluster config: out of memory");
	if (access(path, F_OK) == 0) {
		rc = kerf_kube_read_small_file("service-account namespace",
					       path, 256, &ns, &len, err);
		while (rc == 0 && len > 0 && (ns[len - 1] == '\n' || ns[len - 1] == ' '))
			ns[--len] = '\0';
		if (rc == 0 && len > 0)
			cfg->namespace_name = ns;
		else
			free(ns);
	}
	free(path);
	return rc;
}

int kerf_kube_incluster_load(struct kerf_kube_config *cfg, const char *host,
			     const char *port, const char *sa_dir,
			     struct kerf_err *err)
{
	int rc;

	kerf_kube_config_init(cfg);
	rc = load(cfg, host, port, sa_dir ? sa_dir : KERF_KUBE_SA_DIR, err);
	if (rc < 0)
		kerf_kube_config_release(cfg);
	return rc;
}

int kerf_kube_incluster_from_env(struct kerf_kube_config *cfg,
				 const char *sa_dir, struct kerf_err *err)
{
	return kerf_kube_incluster_load(cfg, getenv("KUBERNETES_SERVICE_HOST"),
					getenv("KUBERNETES_SERVICE_PORT"),
					sa_dir, err);
}
