/*
 * The built-in plug-ins.  One file each; see the file header of each for the
 * policy in plain words.
 */
#ifndef KERF_CORE_PLUGINS_H
#define KERF_CORE_PLUGINS_H

#include "core/framework.h"

extern const struct kerf_plugin kerf_plugin_fit;            /* filter */
extern const struct kerf_plugin kerf_plugin_random;         /* score */
extern const struct kerf_plugin kerf_plugin_dotprod;        /* score */
extern const struct kerf_plugin kerf_plugin_gpu_packing;    /* score */
extern const struct kerf_plugin kerf_plugin_gpu_clustering; /* score */
extern const struct kerf_plugin kerf_plugin_best_fit;       /* score */
extern const struct kerf_plugin kerf_plugin_first_fit;      /* score */
extern const struct kerf_plugin kerf_plugin_fgd;            /* score */
extern const struct kerf_plugin kerf_plugin_kerf;           /* score */

/* Normalisation constants of the published baselines (one 8-GPU node). */
#define KERF_MAX_SPEC_CPU_MILLI 128000
#define KERF_MAX_SPEC_GPU_MILLI 8000

#endif /* KERF_CORE_PLUGINS_H */
