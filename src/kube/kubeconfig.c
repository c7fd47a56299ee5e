#include "kube/kubeconfig.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "format/file.h"
#include "format/yaml_doc.h"
#include "format/yaml_read.h"
#include "base/base64.h"

static const struct kerf_yaml_limits kubeconfig_limits = {
	.max_bytes = KERF_KUBECONFIG_MAX_BYTES,
	.max_depth = 32,
	.max_nodes = 100000,
};

struct reader {
	struct kerf_yread y;
	const char *base_dir;        /* NULL: no file references */
};

/* The value of key in mapping map, NULL when absent; a duplicate fails. */
static int find(struct kerf_yread *r, const struct kerf_yaml_node *map,
		const char *key, const struct kerf_yaml_node **val)
{
	size_t i;

	*val = NULL;
	for (i = 0; i < map->nr; i++) {
		if (!kerf_yread_key_is(map->pairs[i].key, key))
			continue;
		if (*val)
			return kerf_yread_fail(r, map->pairs[i].key,
					       "key '%s' given twice", key);
		*val = map->pairs[i].value;
	}
	if (*val && kerf_yaml_is_null(*val))
		*val = NULL;
	return 0;
}

static int need_map(struct kerf_yread *r, const struct kerf_yaml_node *n)
{
	if (n->kind != KERF_YAML_MAP)
		return kerf_yread_fail(r, n, "must be a mapping");
	return 0;
}

/* The text of scalar v (under key) as a malloc'd string. */
static int get_text(struct kerf_yread *r, const struct kerf_yaml_node *v,
		    const char *key, char **out)
{
	size_t mark = kerf_yread_push_key(r, key);
	int rc = 0;

	if (!kerf_yread_is_text(v))
		rc = kerf_yread_fail(r, v, "must be a non-empty string");
	else if (!(*out = kerf_strdup(v->text)))
		rc = kerf_yread_fail(r, v, "out of memory");
	kerf_yread_pop(r, mark);
	return rc;
}

/* The value under key when it is text, else NULL with no error. */
static int opt_text(struct kerf_yread *r, const struct kerf_yaml_node *map,
		    const char *key, const struct kerf_yaml_node **v)
{
	int rc = find(r, map, key, v);

	if (rc < 0 || !*v)
		return rc;
	if (!kerf_yread_is_text(*v)) {
		size_t mark = kerf_yread_push_key(r, key);

		rc = kerf_yread_fail(r, *v, "must be a non-empty string");
		kerf_yread_pop(r, mark);
	}
	return rc;
}

/* The entry of list key (a sequence of {name, <kind>}) named name. */
static int find_named(struct kerf_yread *r, const struct kerf_yaml_node *root,
		      const char *list_key, const char *kind, const char *name,
		      const struct kerf_yaml_node **body, size_t *mark)
{
	const struct kerf_yaml_node *list, *n, *v;
	char shown[KERF_YREAD_SHOWN_SIZE];
	size_t i, m;
	int rc;

	*body = NULL;
	rc = find(r, root, list_key, &list);
	if (rc < 0)
		return rc;
	m = kerf_yread_push_key(r, list_key);
	if (list && list->kind != KERF_YAML_SEQ) {
		rc = kerf_yread_fail(r, list, "must be a list");
		kerf_yread_pop(r, m);
		return rc;
	}
	for (i = 0; list && i < list->nr; i++) {
		size_t mi = kerf_yread_push_index(r, i);

		n = list->items[i];
		rc = need_map(r, n);
		if (rc == 0)
			rc = find(r, n, "name", &v);
		if (rc < 0) {
			kerf_yread_pop(r, m);
			return rc;
		}
		if (v && v->kind == KERF_YAML_SCALAR && strcmp(v->text, name) == 0) {
			rc = find(r, n, kind, body);
			if (rc == 0 && !*body)
				rc = kerf_yread_fail(r, n, "%s: missing", kind);
			if (rc == 0) {
				kerf_yread_push_key(r, kind);
				rc = need_map(r, *body);
			}
			if (rc < 0)
				kerf_yread_pop(r, m);
			*mark = m;
			return rc;
		}
		kerf_yread_pop(r, mi);
	}
	kerf_yread_pop(r, m);
	kerf_escape(shown, sizeof(shown), name);
	return kerf_yread_fail(r, list ? list : root,
			       "%s: no %s named '%s'", list_key, kind, shown);
}

static void show(char *out, size_t size, const struct kerf_yaml_node *v)
{
	kerf_yread_show(out, size, v);
}

/* base64 value v of key into *out. */
static int get_data(struct kerf_yread *r, const struct kerf_yaml_node *v,
		    const char *key, char **out, size_t *out_len)
{
	char shown[KERF_YREAD_SHOWN_SIZE];
	size_t mark = kerf_yread_push_key(r, key);
	int rc;

	rc = kerf_base64_decode(v->text, v->len, out, out_len);
	if (rc == -KERF_EPARSE) {
		show(shown, sizeof(shown), v);
		rc = kerf_yread_fail(r, v, "not base64 '%s'", shown);
	} else if (rc < 0) {
		rc = kerf_yread_fail(r, v, "out of memory");
	} else if (*out_len == 0 || *out_len > KERF_KUBE_PEM_MAX_BYTES) {
		free(*out);
		*out = NULL;
		rc = kerf_yread_fail(r, v, "decodes to %zu bytes (expected 1..%d)",
				     *out_len, KERF_KUBE_PEM_MAX_BYTES);
	}
	kerf_yread_pop(r, mark);
	return rc;
}

/* The path in v (under key), made absolute against the base directory. */
static int get_path(struct reader *rd, const struct kerf_yaml_node *v,
		    const char *key, char **out)
{
	struct kerf_yread *r = &rd->y;
	struct kerf_buf b;
	size_t mark = kerf_yread_push_key(r, key);
	int rc = 0;

	kerf_buf_init(&b, 8192);
	if (!rd->base_dir)
		rc = kerf_yread_fail(r, v, "file references are not allowed here");
	else if (v->text[0] == '/')
		rc = kerf_buf_add_str(&b, v->text);
	else
		rc = kerf_buf_addf(&b, "%s/%s", rd->base_dir, v->text);
	if (rc == 0) {
		*out = kerf_buf_detach(&b, NULL);
		if (!*out)
			rc = kerf_yread_fail(r, v, "out of memory");
	} else if (r->err->code == 0) {
		rc = kerf_yread_fail(r, v, "path too long");
	}
	kerf_buf_release(&b);
	kerf_yread_pop(r, mark);
	return rc;
}

/* A file (key) or its inline form (key-data) into *pem; both is an error. */
static int get_pem(struct reader *rd, const struct kerf_yaml_node *map,
		   const char *key, char **pem, size_t *pem_len)
{
	struct kerf_yread *r = &rd->y;
	const struct kerf_yaml_node *file = NULL, *data = NULL;
	char data_key[64], *path = NULL;
	char shown[KERF_YREAD_SHOWN_SIZE];
	size_t mark;
	int rc;

	snprintf(data_key, sizeof(data_key), "%s-data", key);
	rc = opt_text(r, map, key, &file);
	if (rc == 0)
		rc = opt_text(r, map, data_key, &data);
	if (rc < 0)
		return rc;
	if (file && data)
		return kerf_yread_fail(r, file, "%s and %s: give one, not both",
				       key, data_key);
	if (data)
		return get_data(r, data, data_key, pem, pem_len);
	if (!file)
		return 0;
	rc = get_path(rd, file, key, &path);
	if (rc < 0)
		return rc;
	mark = kerf_yread_push_key(r, key);
	show(shown, sizeof(shown), file);
	{
		struct kerf_err ferr = { 0 };

		rc = kerf_kube_read_small_file("file", path,
					       KERF_KUBE_PEM_MAX_BYTES, pem,
					       pem_len, &ferr);
		if (rc < 0)
			rc = kerf_yread_fail(r, file, "cannot read '%s': %s",
					     shown, ferr.msg);
	}
	kerf_yread_pop(r, mark);
	free(path);
	return rc;
}

static int refuse_if_set(struct kerf_yread *r, const struct kerf_yaml_node *map,
			 const char *key, const char *why)
{
	const struct kerf_yaml_node *v;
	int rc = find(r, map, key, &v);

	if (rc < 0 || !v)
		return rc;
	return kerf_yread_fail(r, v, "%s: %s", key, why);
}

static int read_cluster(struct reader *rd, const struct kerf_yaml_node *c,
			struct kerf_kube_config *cfg)
{
	struct kerf_yread *r = &rd->y;
	const struct kerf_yaml_node *v;
	char shown[KERF_YREAD_SHOWN_SIZE];
	int rc;

	rc = find(r, c, "insecure-skip-tls-verify", &v);
	if (rc == 0 && v) {
		bool skip = false;
		size_t mark = kerf_yread_push_key(r, "insecure-skip-tls-verify");

		rc = kerf_yread_get_bool(r, v, &skip);
		if (rc == 0 && skip)
			rc = kerf_yread_fail(r, v, "refused: kerf always verifies the API server's certificate; give certificate-authority(-data) instead");
		kerf_yread_pop(r, mark);
	}
	if (rc == 0)
		rc = refuse_if_set(r, c, "proxy-url", "proxies are not supported");
	if (rc == 0)
		rc = find(r, c, "server", &v);
	if (rc < 0)
		return rc;
	if (!v)
		return kerf_yread_fail(r, c, "server: missing");
	rc = get_text(r, v, "server", &cfg->server);
	if (rc < 0)
		return rc;
	if (strncmp(cfg->server, "https://", 8) != 0 || !cfg->server[8]) {
		size_t mark = kerf_yread_push_key(r, "server");

		show(shown, sizeof(shown), v);
		rc = kerf_yread_fail(r, v, "'%s': must be an https:// URL", shown);
		kerf_yread_pop(r, mark);
		return rc;
	}
	rc = opt_text(r, c, "tls-server-name", &v);
	if (rc == 0 && v)
		rc = get_text(r, v, "tls-server-name", &cfg->tls_server_name);
	if (rc == 0)
		rc = get_pem(rd, c, "certificate-authority", &cfg->ca_pem,
			     &cfg->ca_pem_len);
	return rc;
}

static int read_user(struct reader *rd, const struct kerf_yaml_node *u,
		     struct kerf_kube_config *cfg)
{
	struct kerf_yread *r = &rd->y;
	const struct kerf_yaml_node *tok = NULL, *tok_file = NULL;
	int rc;

	rc = refuse_if_set(r, u, "exec", "credential plugins are not supported (kerf runs no programs); use a token, tokenFile or a client certificate");
	if (rc == 0)
		rc = refuse_if_set(r, u, "auth-provider", "auth-provider plugins are not supported; use a token, tokenFile or a client certificate");
	if (rc == 0)
		rc = refuse_if_set(r, u, "username", "basic authentication is not supported");
	if (rc == 0)
		rc = refuse_if_set(r, u, "password", "basic authentication is not supported");
	if (rc == 0)
		rc = opt_text(r, u, "token", &tok);
	if (rc == 0)
		rc = opt_text(r, u, "tokenFile", &tok_file);
	if (rc < 0)
		return rc;
	if (tok && tok_file)
		return kerf_yread_fail(r, tok, "token and tokenFile: give one, not both");
	if (tok)
		rc = get_text(r, tok, "token", &cfg->token);
	if (rc == 0 && tok_file) {
		rc = get_path(rd, tok_file, "tokenFile", &cfg->token_path);
		if (rc == 0) {
			bool changed;
			struct kerf_err terr = { 0 };
			size_t mark = kerf_yread_push_key(r, "tokenFile");

			rc = kerf_kube_config_token_refresh(cfg, &changed, &terr);
			if (rc < 0)
				rc = kerf_yread_fail(r, tok_file, "%s", terr.msg);
			kerf_yread_pop(r, mark);
		}
	}
	if (rc == 0)
		rc = get_pem(rd, u, "client-certificate", &cfg->cert_pem,
			     &cfg->cert_pem_len);
	if (rc == 0)
		rc = get_pem(rd, u, "client-key", &cfg->key_pem,
			     &cfg->key_pem_len);
	if (rc == 0 && !cfg->cert_pem != !cfg->key_pem)
		rc = kerf_yread_fail(r, u, cfg->cert_pem ?
				     "client-certificate without client-key" :
				     "client-key without client-certificate");
	return rc;
}

/* Text of the scalar under key in map; absent or empty: NULL. */
static const char *scalar_of(const struct kerf_yaml_node *map, const char *key)
{
	size_t i;

	for (i = 0; i < map->nr; i++)
		if (kerf_yread_key_is(map->pairs[i].key, key) &&
		    kerf_yread_is_text(map->pairs[i].value))
			return map->pairs[i].value->text;
	return NULL;
}

static int read_root(struct reader *rd, const struct kerf_yaml_node *root,
		     const char *context, struct kerf_kube_config *cfg)
{
	struct kerf_yread *r = &rd->y;
	const struct kerf_yaml_node *cur, *ctx, *body;
	const char *cluster, *user, *ns;
	size_t mark;
	int rc;

	if (!root)
		return kerf_err_set(r->err, -KERF_EPARSE, "%s: empty kubeconfig", r->path);
	rc = need_map(r, root);
	if (rc < 0)
		return rc;
	if (!context) {
		rc = find(r, root, "current-context", &cur);
		if (rc < 0)
			return rc;
		if (!cur || !kerf_yread_is_text(cur))
			return kerf_yread_fail(r, cur ? cur : root, "current-context: missing or empty, and no context was named");
		context = cur->text;
	}
	rc = find_named(r, root, "contexts", "context", context, &ctx, &mark);
	if (rc < 0)
		return rc;
	cluster = scalar_of(ctx, "cluster");
	user = scalar_of(ctx, "user");
	ns = scalar_of(ctx, "namespace");
	if (!cluster)
		rc = kerf_yread_fail(r, ctx, "cluster: missing");
	if (rc == 0 && ns && !(cfg->namespace_name = kerf_strdup(ns)))
		rc = kerf_yread_fail(r, ctx, "out of memory");
	kerf_yread_pop(r, mark);
	if (rc < 0)
		return rc;
	rc = find_named(r, root, "clusters", "cluster", cluster, &body, &mark);
	if (rc < 0)
		return rc;
	rc = read_cluster(rd, body, cfg);
	kerf_yread_pop(r, mark);
	if (rc < 0 || !user)
		return rc;
	rc = find_named(r, root, "users", "user", user, &body, &mark);
	if (rc < 0)
		return rc;
	rc = read_user(rd, body, cfg);
	kerf_yread_pop(r, mark);
	return rc;
}

int kerf_kubeconfig_parse(struct kerf_kube_config *cfg, const char *text,
			  size_t len, const char *name, const char *base_dir,
			  const char *context, struct kerf_err *err)
{
	struct kerf_yaml_doc doc;
	struct reader rd = { .base_dir = base_dir };
	struct kerf_err local = { 0 };
	int rc;

	kerf_kube_config_init(cfg);
	if (!err)
		err = &local;
	rc = kerf_yaml_load(&doc, name, text, len, &kubeconfig_limits, err);
	if (rc < 0)
		return rc;
	kerf_yread_init(&rd.y, name, err);
	rc = read_root(&rd, doc.root, context, cfg);
	kerf_yaml_release(&doc);
	if (rc < 0)
		kerf_kube_config_release(cfg);
	return rc;
}

int kerf_kubeconfig_load(struct kerf_kube_config *cfg, const char *path,
			 const char *context, struct kerf_err *err)
{
	struct kerf_file f;
	char *dir, *slash;
	int rc;

	kerf_kube_config_init(cfg);
	rc = kerf_file_read(&f, path, KERF_KUBECONFIG_MAX_BYTES, err);
	if (rc < 0)
		return rc;
	slash = strrchr(path, '/');
	dir = kerf_strdup(!slash ? "." : path);
	if (!dir) {
		kerf_file_release(&f);
		return kerf_err_set(err, -KERF_ENOMEM, "kubeconfig: out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	rc = kerf_kubeconfig_parse(cfg, f.data, f.len, path, dir, context, err);
	free(dir);
	kerf_file_release(&f);
	return rc;
}
