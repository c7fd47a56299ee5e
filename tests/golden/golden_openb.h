/*
 * golden_openb: what the golden tests on the openb trace share: where the
 * trace is ($KERF_OPENB_DIR, else ../shared/data/openb), whether a file of
 * it is there, loading a pod list with the GPU nodes, and the mean
 * unallocated GPU at 100 % arrival over seeds 42-51.
 */
#ifndef KERF_TESTS_GOLDEN_OPENB_H
#define KERF_TESTS_GOLDEN_OPENB_H

#include <stdbool.h>

#include "sim/openb.h"

const char *golden_openb_dir(void);

/* True when openb_pod_list_<trace>.csv is there. */
bool golden_openb_present(const char *trace);

/* The GPU nodes and openb_pod_list_<trace>.csv into t (asserts). */
void golden_openb_load(struct kerf_openb *t, const char *trace);

/* Unallocated GPU % at 100 % arrival, mean over seeds 42-51. */
double golden_openb_unalloc(const struct kerf_openb *t, const char *policy);

#endif /* KERF_TESTS_GOLDEN_OPENB_H */
