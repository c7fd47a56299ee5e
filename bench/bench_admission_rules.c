/*
 * bench_admission_rules: the admission decisions alone, in process (no
 * TLS, no HTTP): each route of kerf serve's webhook answering a review
 * file N times under the policy of an objects file, as
 * kerf_admission_answer does for every request (decode, decide, encode).
 * Prints the microseconds per review and reviews per second of one core.
 *
 *   bench_admission_rules OBJECTS.yaml REVIEW.json [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admission/decide.h"
#include "admission/review.h"
#include "format/file.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct kerf_admission_config cfg;
	struct kerf_admission_policy *p;
	struct kerf_err err = { 0 };
	struct kerf_file objs, rev;
	long n = argc > 3 ? atol(argv[3]) : 20000;

	if (argc < 3 || n <= 0) {
		fprintf(stderr, "usage: bench_admission_rules OBJECTS.yaml REVIEW.json [N]\n");
		return 2;
	}
	kerf_admission_config_default(&cfg);
	if (kerf_admission_policy_new(&cfg, &p) < 0 ||
	    kerf_file_read(&objs, argv[1], 16 << 20, &err) < 0 ||
	    kerf_admission_policy_add_yaml(p, argv[1], objs.data, objs.len, &err) < 0 ||
	    kerf_file_read(&rev, argv[2], 16 << 20, &err) < 0) {
		fprintf(stderr, "bench_admission_rules: %s\n", err.msg);
		return 1;
	}
	kerf_admission_policy_seal(p);
	/* the share of it that is the codec's: decode alone */
	{
		double t0 = now_s(), dt;

		for (long k = 0; k < n; k++) {
			struct kerf_admission_request req;

			if (kerf_admission_request_decode(rev.data, rev.len, &req, &err) < 0) {
				fprintf(stderr, "bench_admission_rules: %s\n", err.msg);
				return 1;
			}
			kerf_admission_request_release(&req);
		}
		dt = now_s() - t0;
		printf("bench_admission_rules decode only: %.1f us each\n",
		       dt * 1e6 / (double)n);
	}
	for (int r = 0; r < KERF_ROUTE_NR; r++) {
		const char *verdict = "";
		double t0 = now_s(), dt;

		for (long k = 0; k < n; k++) {
			struct kerf_admission_answer a;

			if (kerf_admission_answer(p, r, rev.data, rev.len, &a) < 0)
				return 1;
			verdict = a.verdict;
			kerf_admission_answer_release(&a);
		}
		dt = now_s() - t0;
		printf("bench_admission_rules %s: %ld reviews of %zu bytes, %.1f us each, %.0f/s on one core (%s)\n",
		       kerf_admission_route_path(r), n, rev.len, dt * 1e6 / (double)n,
		       (double)n / dt, verdict);
	}
	kerf_file_release(&objs);
	kerf_file_release(&rev);
	kerf_admission_policy_put(p);
	return 0;
}
