/*
 * Unit tests for sim/gpuspec: the kinds of pods, what is learned from a
 * reference (rates and spec counts per kind, sorted, an error when nothing
 * names a model), the draws (deterministic per seed, only GPU pods, a kind's
 * specs only for that kind, the share and the kinds' relative rates kept,
 * shares 0 and 100) and the rewritten pod list (every other field kept, the
 * column added when missing, a file that does not match refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/gpuspec.h"

#define HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"

/* A pod list of n rows cycling CPU-only, fraction, one GPU, eight GPUs. */
static char *make_base(size_t n)
{
	size_t cap = 64 + n * 64, len;
	char *s = malloc(cap);

	assert_non_null(s);
	len = (size_t)snprintf(s, cap, "%s", HEADER);
	for (size_t i = 0; i < n; i++) {
		static const char *const shapes[] = {
			"4000,8192,0,0", "3152,5600,1,810", "11300,40000,1,1000",
			"88000,327680,8,1000",
		};

		len += (size_t)snprintf(s + len, cap - len, "p%zu,%s,,LS\n", i,
					shapes[i % 4]);
	}
	return s;
}

static void parse(struct kerf_openb *o, const char *text)
{
	struct kerf_err err = { 0 };

	kerf_openb_init(o);
	assert_int_equal(kerf_openb_parse_pods(o, "pods.csv", text,
					       strlen(text), &err), 0);
}

/*
 * Reference: 10 fractions (2 name T4, 1 names P100), 10 whole GPUs (4 name
 * G2 and 2 T4), 2 multi-GPU (1 names G2), 3 CPU-only pods.
 */
static const char reference[] =
	HEADER
	"c0,4000,8192,0,0,,BE\nc1,4000,8192,0,0,,BE\nc2,4000,8192,0,0,,BE\n"
	"f0,3152,5600,1,810,T4,BE\nf1,3152,5600,1,810,P100,BE\n"
	"f2,3152,5600,1,470,T4,BE\nf3,3152,5600,1,810,,BE\n"
	"f4,3152,5600,1,810,,BE\nf5,3152,5600,1,810,,BE\n"
	"f6,3152,5600,1,810,,BE\nf7,3152,5600,1,810,,BE\n"
	"f8,3152,5600,1,810,,BE\nf9,3152,5600,1,810,,BE\n"
	"w0,11300,40000,1,1000,G2,LS\nw1,11300,40000,1,1000,T4,LS\n"
	"w2,11300,40000,1,1000,G2,LS\nw3,11300,40000,1,1000,G2,LS\n"
	"w4,11300,40000,1,1000,T4,LS\nw5,11300,40000,1,1000,G2,LS\n"
	"w6,11300,40000,1,1000,,LS\nw7,11300,40000,1,1000,,LS\n"
	"w8,11300,40000,1,1000,,LS\nw9,11300,40000,1,1000,,LS\n"
	"m0,88000,327680,8,1000,G2,LS\nm1,88000,327680,8,1000,,LS\n";

static void learn(struct kerf_gpuspec_gen *g, const char *text)
{
	struct kerf_openb ref;
	struct kerf_err err = { 0 };

	parse(&ref, text);
	kerf_gpuspec_init(g);
	assert_int_equal(kerf_gpuspec_learn(g, &ref, &err), 0);
	kerf_openb_release(&ref);
}

static void test_kind_of(void **state)
{
	struct kerf_openb_pod p = { .nr_gpus = 0 };

	(void)state;
	assert_int_equal(kerf_gpuspec_kind_of(&p), -1);
	p = (struct kerf_openb_pod){ .nr_gpus = 1, .gpu_milli = 50 };
	assert_int_equal(kerf_gpuspec_kind_of(&p), KERF_GPUSPEC_FRACTION);
	p.gpu_milli = 999;
	assert_int_equal(kerf_gpuspec_kind_of(&p), KERF_GPUSPEC_FRACTION);
	p.gpu_milli = 1000;
	assert_int_equal(kerf_gpuspec_kind_of(&p), KERF_GPUSPEC_ONE);
	p.nr_gpus = 2;
	assert_int_equal(kerf_gpuspec_kind_of(&p), KERF_GPUSPEC_MULTI);
}

static void test_learn(void **state)
{
	struct kerf_gpuspec_gen g;
	const struct kerf_gpuspec_kind *f, *w, *m;

	(void)state;
	learn(&g, reference);
	f = &g.kinds[KERF_GPUSPEC_FRACTION];
	w = &g.kinds[KERF_GPUSPEC_ONE];
	m = &g.kinds[KERF_GPUSPEC_MULTI];
	assert_int_equal(g.nr_pods, 22);
	assert_int_equal(g.nr_named, 10);
	assert_int_equal(f->nr_pods, 10);
	assert_int_equal(f->nr_named, 3);
	assert_int_equal(f->nr_choices, 2);
	/* sorted by spec: the draws do not depend on the reference's order */
	assert_string_equal(f->choices[0].spec, "P100");
	assert_int_equal(f->choices[0].count, 1);
	assert_string_equal(f->choices[1].spec, "T4");
	assert_int_equal(f->choices[1].count, 2);
	assert_int_equal(w->nr_pods, 10);
	assert_int_equal(w->nr_named, 6);
	assert_string_equal(w->choices[0].spec, "G2");
	assert_int_equal(w->choices[0].count, 4);
	assert_int_equal(m->nr_named, 1);
	kerf_gpuspec_release(&g);
}

static void test_learn_needs_specs(void **state)
{
	struct kerf_gpuspec_gen g;
	struct kerf_openb ref;
	struct kerf_err err = { 0 };

	(void)state;
	parse(&ref, HEADER "a,1000,1024,1,1000,,LS\nb,1000,1024,0,0,,LS\n");
	kerf_gpuspec_init(&g);
	assert_int_equal(kerf_gpuspec_learn(&g, &ref, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "no GPU pod names a model"));
	assert_int_equal(g.nr_pods, 0);
	kerf_gpuspec_release(&g);
	kerf_openb_release(&ref);
}

/* Draws share_pct of base with seed; counts by kind, checks kinds' specs. */
static int64_t draw_checked(const struct kerf_gpuspec_gen *g,
			    const struct kerf_openb *base, int share_pct,
			    uint64_t seed, const char **specs,
			    int64_t named_by_kind[KERF_GPUSPEC_KINDS])
{
	int64_t named = kerf_gpuspec_draw(g, base, share_pct, seed, specs), n = 0;

	for (int k = 0; k < KERF_GPUSPEC_KINDS; k++)
		named_by_kind[k] = 0;
	for (size_t i = 0; i < base->nr_pods; i++) {
		int kind = kerf_gpuspec_kind_of(&base->pods[i]);
		bool known = false;

		assert_non_null(specs[i]);
		if (specs[i][0] == '\0')
			continue;
		/* CPU-only pods never name a model */
		assert_true(kind >= 0);
		for (size_t c = 0; c < g->kinds[kind].nr_choices; c++)
			known |= strcmp(g->kinds[kind].choices[c].spec,
					specs[i]) == 0;
		/* a pod names only what its kind named in the reference */
		assert_true(known);
		named_by_kind[kind]++;
		n++;
	}
	assert_int_equal(n, named);
	return named;
}

static void test_draw(void **state)
{
	enum { N = 40000 };
	struct kerf_gpuspec_gen g;
	struct kerf_openb base;
	char *text = make_base(N);
	const char **a = calloc(N, sizeof(*a)), **b = calloc(N, sizeof(*b));
	int64_t ka[KERF_GPUSPEC_KINDS], kb[KERF_GPUSPEC_KINDS], named;
	size_t same = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	learn(&g, reference);
	parse(&base, text);
	/*
	 * 30000 GPU pods, 10000 per kind.  Reference rates: 3/10, 6/10, 1/2
	 * against 10/22 overall, so at 30 % the kinds are chosen with
	 * probability 19.8 %, 39.6 % and 33 %.
	 */
	named = draw_checked(&g, &base, 30, 7, a, ka);
	assert_in_range(named, 30000 * 28 / 100, 30000 * 32 / 100);
	assert_in_range(ka[KERF_GPUSPEC_FRACTION], 1880, 2080);
	assert_in_range(ka[KERF_GPUSPEC_ONE], 3860, 4060);
	assert_in_range(ka[KERF_GPUSPEC_MULTI], 3200, 3400);
	/* the same seed draws the same trace; another seed another one */
	draw_checked(&g, &base, 30, 7, b, kb);
	for (size_t i = 0; i < N; i++)
		assert_ptr_equal(a[i], b[i]);
	draw_checked(&g, &base, 30, 8, b, kb);
	for (size_t i = 0; i < N; i++)
		same += a[i] == b[i];
	assert_true(same < N);
	/* among whole GPUs, G2 : T4 is 4 : 2 */
	{
		int64_t g2 = 0, t4 = 0;

		for (size_t i = 0; i < N; i++)
			if (kerf_gpuspec_kind_of(&base.pods[i]) == KERF_GPUSPEC_ONE) {
				g2 += !strcmp(a[i], "G2");
				t4 += !strcmp(a[i], "T4");
			}
		assert_in_range(g2 * 100 / (g2 + t4), 63, 70);
	}
	/* share 0: nothing; share 100: capped at every pod of a kind */
	assert_int_equal(draw_checked(&g, &base, 0, 7, a, ka), 0);
	draw_checked(&g, &base, 100, 7, a, ka);
	assert_int_equal(ka[KERF_GPUSPEC_ONE], 10000);
	assert_in_range(ka[KERF_GPUSPEC_FRACTION], 6400, 6800);
	kerf_openb_release(&base);
	kerf_gpuspec_release(&g);
	free(text);
	free(a);
	free(b);
}

/* The text written for base with specs, as a string (caller frees). */
static char *write_str(const char *text, size_t nr_pods,
		       const char *const *specs, int *rc, struct kerf_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*rc = kerf_gpuspec_write(f, "pods.csv", text, strlen(text), nr_pods,
				 specs, err);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_write(void **state)
{
	const char text[] = HEADER "a,1000,1024,1,1000,V100M32,LS\r\n\n"
			    "b,2000,2048,0,0,,BE\nc,3000,4096,1,500,,LS\n";
	const char *specs[] = { "", "", "T4|P100" };
	struct kerf_err err = { 0 };
	struct kerf_openb o;
	char *out;
	int rc;

	(void)state;
	out = write_str(text, 3, specs, &rc, &err);
	assert_int_equal(rc, 0);
	assert_string_equal(out, HEADER "a,1000,1024,1,1000,,LS\n"
				 "b,2000,2048,0,0,,BE\n"
				 "c,3000,4096,1,500,T4|P100,LS\n");
	parse(&o, out);
	assert_int_equal(o.nr_pods, 3);
	assert_string_equal(o.pods[2].gpu_spec, "T4|P100");
	assert_int_equal(o.pods[2].gpu_milli, 500);
	kerf_openb_release(&o);
	free(out);

	/* a file without the column (the multigpu form) gets it last */
	out = write_str("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
			"a,1000,1024,1,1000\n", 1, specs + 2, &rc, &err);
	assert_int_equal(rc, 0);
	assert_string_equal(out, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
				 "a,1000,1024,1,1000,T4|P100\n");
	free(out);

	/* rows and pods must match */
	out = write_str(text, 2, specs, &rc, &err);
	assert_int_equal(rc, -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "pods.csv:"));
	free(out);
	err = (struct kerf_err){ 0 };
	out = write_str(text, 4, specs, &rc, &err);
	assert_int_equal(rc, -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "3 rows, the trace has 4 pods"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_of),
		cmocka_unit_test(test_learn),
		cmocka_unit_test(test_learn_needs_specs),
		cmocka_unit_test(test_draw),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
