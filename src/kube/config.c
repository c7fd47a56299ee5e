#include "kube/config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "format/file.h"

void kerf_kube_config_init(struct kerf_kube_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

void kerf_kube_config_release(struct kerf_kube_config *cfg)
{
	free(cfg->server);
	free(cfg->tls_server_name);
	free(cfg->ca_pem);
	free(cfg->cert_pem);
	free(cfg->key_pem);
	free(cfg->token);
	free(cfg->token_path);
	free(cfg->namespace_name);
	kerf_kube_config_init(cfg);
}

static int dup_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = kerf_strdup(src);
	return *dst ? 0 : -KERF_ENOMEM;
}

static int dup_mem(char **dst, const char *src, size_t len)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = malloc(len + 1);
	if (!*dst)
		return -KERF_ENOMEM;
	memcpy(*dst, src, len);
	(*dst)[len] = '\0';
	return 0;
}

int kerf_kube_config_copy(struct kerf_kube_config *dst,
			  const struct kerf_kube_config *src)
{
	int rc = 0;

	*dst = *src;
	rc |= dup_str(&dst->server, src->server);
	rc |= dup_str(&dst->tls_server_name, src->tls_server_name);
	rc |= dup_mem(&dst->ca_pem, src->ca_pem, src->ca_pem_len);
	rc |= dup_mem(&dst->cert_pem, src->cert_pem, src->cert_pem_len);
	rc |= dup_mem(&dst->key_pem, src->key_pem, src->key_pem_len);
	rc |= dup_str(&dst->token, src->token);
	rc |= dup_str(&dst->token_path, src->token_path);
	rc |= dup_str(&dst->namespace_name, src->namespace_name);
	if (rc) {
		kerf_kube_config_release(dst);
		return -KERF_ENOMEM;
	}
	return 0;
}

int kerf_kube_read_small_file(const char *what, const char *path,
			      size_t max_bytes, char **out, size_t *out_len,
			      struct kerf_err *err)
{
	struct kerf_file f;
	struct kerf_err ferr = { 0 };
	int rc;

	rc = kerf_file_read(&f, path, max_bytes, &ferr);
	if (rc < 0)
		return kerf_err_set(err, rc, "%s: %s", what, ferr.msg);
	*out = f.data;
	*out_len = f.len;
	return 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int kerf_kube_config_token_refresh(struct kerf_kube_config *cfg,
				   bool *changed, struct kerf_err *err)
{
	struct stat st;
	char *text, *start, *end, *tok;
	size_t len;
	int64_t mtime_ns;
	int rc;

	*changed = false;
	if (!cfg->token_path)
		return 0;
	if (stat(cfg->token_path, &st) != 0) {
		char shown[160];

		return kerf_err_set(err, -KERF_EIO, "token file '%s': cannot stat it",
				    kerf_escape(shown, sizeof(shown),
						cfg->token_path));
	}
	mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		   st.st_mtim.tv_nsec;
	if (cfg->token && mtime_ns == cfg->token_mtime_ns &&
	    (uint64_t)st.st_ino == cfg->token_ino &&
	    (int64_t)st.st_size == cfg->token_size)
		return 0;
	rc = kerf_kube_read_small_file("token file", cfg->token_path,
				       KERF_KUBE_TOKEN_MAX_BYTES, &text, &len,
				       err);
	if (rc < 0)
		return rc;
	start = text;
	end = text + len;
	while (start < end && is_space(*start))
		start++;
	while (end > start && is_space(end[-1]))
		end--;
	if (start == end || memchr(start, '\0', (size_t)(end - start))) {
		char shown[160];

		free(text);
		return kerf_err_set(err, -KERF_EPARSE,
				    "token file '%s': empty or not text",
				    kerf_escape(shown, sizeof(shown),
						cfg->token_path));
	}
	*end = '\0';
	tok = kerf_strdup(start);
	free(text);
	if (!tok)
		return kerf_err_set(err, -KERF_ENOMEM, "token file: out of memory");
	free(cfg->token);
	cfg->token = tok;
	cfg->token_mtime_ns = mtime_ns;
	cfg->token_ino = (uint64_t)st.st_ino;
	cfg->token_size = (int64_t)st.st_size;
	*changed = true;
	return 0;
}
