/* deploy_load: every manifest under deploy/ loaded (deploy_load.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>

#include "deploy_load.h"
#include "format/file.h"

struct deploy_manifest deploy_files[DEPLOY_MAX_FILES];
size_t deploy_nr_files;
static char root[DEPLOY_PATH_LEN];

static void scan(const char *rel)
{
	char dir[DEPLOY_PATH_LEN * 2];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/%s", root, rel);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[DEPLOY_PATH_LEN * 3], sub[DEPLOY_PATH_LEN];
		struct stat sb;
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		/* The Helm chart is Go templates, not manifests; it has its
		 * own test (tests/cli/test_helm_chart.py). */
		if (!rel[0] && !strcmp(e->d_name, "helm"))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
		snprintf(path, sizeof(path), "%s/%s", root, sub);
		assert_int_equal(stat(path, &sb), 0);
		if (S_ISDIR(sb.st_mode)) {
			scan(sub);
		} else if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
			struct deploy_manifest *m = &deploy_files[deploy_nr_files];
			struct kerf_file f;
			struct kerf_err err = { 0 };
			struct kerf_yaml_limits lim = { 1 << 20, 64, 100000 };

			assert_true(deploy_nr_files < DEPLOY_MAX_FILES);
			snprintf(m->rel, sizeof(m->rel), "%s", sub);
			if (kerf_file_read(&f, path, 1 << 20, &err) < 0 ||
			    kerf_yaml_load(&m->doc, sub, f.data, f.len, &lim, &err) < 0)
				fail_msg("%s", err.msg);
			kerf_file_release(&f);
			if (!m->doc.root || m->doc.root->kind != KERF_YAML_MAP)
				fail_msg("%s: not one YAML mapping", sub);
			deploy_nr_files++;
		}
	}
	closedir(d);
}

int deploy_load(void **state)
{
	const char *src = getenv("KERF_SOURCE_ROOT");

	(void)state;
	snprintf(root, sizeof(root), "%s/deploy", src ? src : ".");
	scan("");
	return 0;
}

int deploy_release(void **state)
{
	(void)state;
	for (size_t i = 0; i < deploy_nr_files; i++)
		kerf_yaml_release(&deploy_files[i].doc);
	return 0;
}

const struct kerf_yaml_node *yget(const struct kerf_yaml_node *n, const char *key)
{
	if (!n || n->kind != KERF_YAML_MAP)
		return NULL;
	for (size_t i = 0; i < n->nr; i++)
		if (!strcmp(n->pairs[i].key->text, key))
			return n->pairs[i].value;
	return NULL;
}

const char *ytext(const struct kerf_yaml_node *n)
{
	return n && n->kind == KERF_YAML_SCALAR ? n->text : NULL;
}

bool yis(const struct kerf_yaml_node *n, const char *s)
{
	return ytext(n) && !strcmp(ytext(n), s);
}

const struct kerf_yaml_node *find_kind(const char *kind, const char *name)
{
	for (size_t i = 0; i < deploy_nr_files; i++) {
		const struct kerf_yaml_node *r = deploy_files[i].doc.root;

		if (yis(yget(r, "kind"), kind) &&
		    (!name || yis(yget(yget(r, "metadata"), "name"), name)))
			return r;
	}
	fail_msg("no %s %s under deploy/", kind, name ? name : "");
	return NULL;
}

const struct kerf_yaml_node *deploy_file(const char *rel)
{
	for (size_t i = 0; i < deploy_nr_files; i++)
		if (!strcmp(deploy_files[i].rel, rel))
			return deploy_files[i].doc.root;
	return NULL;
}

bool deploy_in_kustomized_dir(const char *rel, const char *entry)
{
	char k[DEPLOY_PATH_LEN + 32];
	size_t len = entry ? strlen(entry) : 0;

	if (!len || strncmp(rel, entry, len) || rel[len] != '/')
		return false;
	snprintf(k, sizeof(k), "%s/kustomization.yaml", entry);
	return deploy_file(k) != NULL;
}

bool yseq_has(const struct kerf_yaml_node *seq, const char *s)
{
	if (!seq || seq->kind != KERF_YAML_SEQ)
		return false;
	for (size_t i = 0; i < seq->nr; i++)
		if (yis(seq->items[i], s))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void deploy_grants(const struct kerf_yaml_node *role, char *out, size_t size)
{
	const struct kerf_yaml_node *rules = yget(role, "rules");
	char *v[256];
	size_t n = 0, len = 0;

	assert_non_null(rules);
	for (size_t r = 0; r < rules->nr; r++) {
		const struct kerf_yaml_node *x = rules->items[r];
		const struct kerf_yaml_node *g = yget(x, "apiGroups"), *res = yget(x, "resources");
		const struct kerf_yaml_node *verbs = yget(x, "verbs"), *names = yget(x, "resourceNames");

		assert_null(yget(x, "nonResourceURLs"));
		assert_true(g && res && verbs);
		for (size_t a = 0; a < g->nr; a++)
			for (size_t b = 0; b < res->nr; b++)
				for (size_t c = 0; c < verbs->nr; c++) {
					char buf[256];

					if (yis(g->items[a], "*") || yis(res->items[b], "*") ||
					    yis(verbs->items[c], "*") || strchr(ytext(res->items[b]), '*'))
						fail_msg("a wildcard in %s",
							 ytext(yget(yget(role, "metadata"), "name")));
					snprintf(buf, sizeof(buf), "%s|%s|%s|%s", ytext(g->items[a]),
						 ytext(res->items[b]),
						 names ? ytext(names->items[0]) : "", ytext(verbs->items[c]));
					assert_true(n < 256);
					v[n] = strdup(buf);
					assert_non_null(v[n]);
					n++;
				}
	}
	qsort(v, n, sizeof(v[0]), cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(out + len, size - len, "%s\n", v[i]);
		free(v[i]);
	}
}
