/*
 * deploy_load: every YAML file under deploy/ (KERF_SOURCE_ROOT/deploy, or
 * ./deploy), each loaded as one YAML mapping with the YAML document
 * reader, for the tests of the manifests (test_deploy_manifests,
 * test_deploy_webhook, test_deploy_agent), with the lookups they share.  A file that does not
 * load fails the test group's setup with the reader's message.
 *
 *	cmocka_run_group_tests(tests, deploy_load, deploy_release);
 */
#ifndef KERF_TESTS_UNIT_DEPLOY_LOAD_H
#define KERF_TESTS_UNIT_DEPLOY_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "format/yaml_doc.h"

enum { DEPLOY_MAX_FILES = 64, DEPLOY_PATH_LEN = 512 };

struct deploy_manifest {
	char rel[DEPLOY_PATH_LEN];      /* relative to deploy/ */
	struct kerf_yaml_doc doc;
};

extern struct deploy_manifest deploy_files[DEPLOY_MAX_FILES];
extern size_t deploy_nr_files;

/* cmocka group setup and teardown: load, release every file. */
int deploy_load(void **state);
int deploy_release(void **state);

/* The value of key in mapping n; NULL when n is no mapping or lacks it. */
const struct kerf_yaml_node *yget(const struct kerf_yaml_node *n, const char *key);
/* A scalar's text; NULL for anything else (NULL included). */
const char *ytext(const struct kerf_yaml_node *n);
/* n is a scalar whose text is s. */
bool yis(const struct kerf_yaml_node *n, const char *s);
/* The object of this kind (and metadata.name, unless NULL); fails the test without one. */
const struct kerf_yaml_node *find_kind(const char *kind, const char *name);

/* The root of the file at rel (relative to deploy/), or NULL. */
const struct kerf_yaml_node *deploy_file(const char *rel);
/*
 * A kustomization's resource entry that is a directory with its own
 * kustomization.yaml ("agent") stands for every file under it: rel is one
 * of them, or that kustomization.
 */
bool deploy_in_kustomized_dir(const char *rel, const char *entry);
/* seq is a sequence holding the scalar s. */
bool yseq_has(const struct kerf_yaml_node *seq, const char *s);
/*
 * Every (group|resource|name|verb) a Role or ClusterRole grants, sorted,
 * one a line, into out; fails the test on a wildcard or a
 * nonResourceURLs rule.
 */
void deploy_grants(const struct kerf_yaml_node *role, char *out, size_t size);

#endif
