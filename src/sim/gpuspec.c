#include "sim/gpuspec.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/rng.h"
#include "format/csv.h"

int kerf_gpuspec_kind_of(const struct kerf_openb_pod *p)
{
	if (p->nr_gpus <= 0)
		return -1;
	if (p->nr_gpus > 1)
		return KERF_GPUSPEC_MULTI;
	return p->gpu_milli < KERF_GPU_MILLI ? KERF_GPUSPEC_FRACTION
					     : KERF_GPUSPEC_ONE;
}

void kerf_gpuspec_init(struct kerf_gpuspec_gen *g)
{
	memset(g, 0, sizeof(*g));
	kerf_arena_init(&g->arena, 0);
}

void kerf_gpuspec_release(struct kerf_gpuspec_gen *g)
{
	for (int k = 0; k < KERF_GPUSPEC_KINDS; k++)
		free(g->kinds[k].choices);
	kerf_arena_release(&g->arena);
	kerf_gpuspec_init(g);
}

static int choice_cmp(const void *a, const void *b)
{
	const struct kerf_gpuspec_choice *x = a, *y = b;

	return strcmp(x->spec, y->spec);
}

/* Count one more pod of kind k naming spec (borrowed until copied). */
static int add_choice(struct kerf_gpuspec_gen *g, struct kerf_gpuspec_kind *k,
		      const char *spec)
{
	int rc;

	for (size_t i = 0; i < k->nr_choices; i++)
		if (strcmp(k->choices[i].spec, spec) == 0) {
			k->choices[i].count++;
			return 0;
		}
	if (k->nr_choices >= KERF_GPUSPEC_MAX_SPECS)
		return -KERF_ELIMIT;
	rc = KERF_GROW(k->choices, k->alloc_choices, k->nr_choices + 1);
	if (rc < 0)
		return rc;
	k->choices[k->nr_choices].spec =
		kerf_arena_strndup(&g->arena, spec, strlen(spec));
	if (!k->choices[k->nr_choices].spec)
		return -KERF_ENOMEM;
	k->choices[k->nr_choices++].count = 1;
	return 0;
}

int kerf_gpuspec_learn(struct kerf_gpuspec_gen *g, const struct kerf_openb *ref,
		       struct kerf_err *err)
{
	kerf_gpuspec_release(g);
	for (size_t i = 0; i < ref->nr_pods; i++) {
		const struct kerf_openb_pod *p = &ref->pods[i];
		int kind = kerf_gpuspec_kind_of(p), rc;

		if (kind < 0)
			continue;
		g->kinds[kind].nr_pods++;
		g->nr_pods++;
		if (p->gpu_spec[0] == '\0')
			continue;
		g->kinds[kind].nr_named++;
		g->nr_named++;
		rc = add_choice(g, &g->kinds[kind], p->gpu_spec);
		if (rc < 0) {
			kerf_gpuspec_release(g);
			return kerf_err_set(err, rc,
					    "gpuspec reference: %s (more than %d distinct specs?)",
					    kerf_strerror(rc), KERF_GPUSPEC_MAX_SPECS);
		}
	}
	if (g->nr_named == 0) {
		kerf_gpuspec_release(g);
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpuspec reference: no GPU pod names a model (gpu_spec is empty everywhere)");
	}
	/* Draws must not depend on the order of the reference's rows. */
	for (int k = 0; k < KERF_GPUSPEC_KINDS; k++)
		if (g->kinds[k].nr_choices > 1)
			qsort(g->kinds[k].choices, g->kinds[k].nr_choices,
			      sizeof(*g->kinds[k].choices), choice_cmp);
	return 0;
}

int64_t kerf_gpuspec_draw(const struct kerf_gpuspec_gen *g,
			  const struct kerf_openb *base, int share_pct,
			  uint64_t seed, const char **specs)
{
	const uint64_t one = (uint64_t)1 << 32;
	uint64_t threshold[KERF_GPUSPEC_KINDS];
	int64_t total[KERF_GPUSPEC_KINDS] = { 0 }, named = 0;
	struct kerf_rng rng;

	if (share_pct < 0)
		share_pct = 0;
	if (share_pct > 100)
		share_pct = 100;
	/*
	 * P(chosen) = share * (named_k / pods_k) / (named / pods), as a
	 * fraction of 2^32; a kind the reference never names is never chosen.
	 */
	for (int k = 0; k < KERF_GPUSPEC_KINDS; k++) {
		const struct kerf_gpuspec_kind *kd = &g->kinds[k];
		unsigned __int128 t;

		threshold[k] = 0;
		for (size_t i = 0; i < kd->nr_choices; i++)
			total[k] += kd->choices[i].count;
		if (kd->nr_named == 0 || g->nr_named == 0)
			continue;
		t = (unsigned __int128)one * (uint64_t)share_pct *
		    (uint64_t)kd->nr_named * (uint64_t)g->nr_pods /
		    ((unsigned __int128)100 * (uint64_t)kd->nr_pods *
		     (uint64_t)g->nr_named);
		threshold[k] = t > one ? one : (uint64_t)t;
	}
	kerf_rng_seed(&rng, seed);
	for (size_t i = 0; i < base->nr_pods; i++) {
		int kind = kerf_gpuspec_kind_of(&base->pods[i]);
		const struct kerf_gpuspec_kind *kd;
		uint64_t x;

		specs[i] = "";
		if (kind < 0)
			continue;
		/* one draw per GPU pod, so a pod's choice does not shift others' */
		x = kerf_rng_next(&rng);
		if ((x >> 32) >= threshold[kind])
			continue;
		kd = &g->kinds[kind];
		x = kerf_rng_below(&rng, (uint64_t)total[kind]);
		for (size_t c = 0; c < kd->nr_choices; c++) {
			if (x < (uint64_t)kd->choices[c].count) {
				specs[i] = kd->choices[c].spec;
				break;
			}
			x -= (uint64_t)kd->choices[c].count;
		}
		named++;
	}
	return named;
}

int kerf_gpuspec_write(FILE *out, const char *path, const char *data,
		       size_t len, size_t nr_pods, const char *const *specs,
		       struct kerf_err *err)
{
	struct kerf_csv *r = malloc(sizeof(*r));
	size_t row = 0;
	int rc, col, width;

	if (!r)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_csv_init(r, path, data, len);
	rc = kerf_csv_next(r, err);
	if (rc == 0)
		rc = kerf_err_set(err, -KERF_EPARSE, "%s:1: empty file, no header",
				  path);
	if (rc < 0)
		goto out;
	width = r->nr_fields;
	col = kerf_csv_find(r, "gpu_spec");
	for (int i = 0; i < width; i++)
		fprintf(out, "%s%s", i ? "," : "", r->fields[i]);
	fputs(col < 0 ? ",gpu_spec\n" : "\n", out);
	while ((rc = kerf_csv_next(r, err)) > 0) {
		if (row >= nr_pods || r->nr_fields != width) {
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "%s:%u: the file does not match the trace it was read as",
					  path, r->line);
			goto out;
		}
		for (int i = 0; i < width; i++)
			fprintf(out, "%s%s", i ? "," : "",
				i == col ? specs[row] : r->fields[i]);
		if (col < 0)
			fprintf(out, ",%s", specs[row]);
		fputc('\n', out);
		row++;
	}
	if (rc == 0 && row != nr_pods)
		rc = kerf_err_set(err, -KERF_EINVAL,
				  "%s: %zu rows, the trace has %zu pods", path,
				  row, nr_pods);
	if (rc == 0 && ferror(out))
		rc = kerf_err_set(err, -KERF_EIO, "write error");
out:
	free(r);
	return rc < 0 ? rc : 0;
}
