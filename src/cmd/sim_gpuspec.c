/*
 * kerf sim openb-gpuspec: write a pod list of the gpuspecXX family for any
 * share XX, from the base trace and one published file of the family (see
 * sim/gpuspec.h for the method).  The output is a pod list that kerf sim
 * openb reads like any other; it is derived from the trace, so it belongs
 * in a temporary or build directory, never in the repository.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "base/units.h"
#include "cmd/cmd.h"
#include "cmd/opt.h"
#include "cmd/spec.h"
#include "format/file.h"
#include "sim/gpuspec.h"
#include "sim/openb.h"

enum { GPUSPEC_MAX_BYTES = 256 << 20 };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: kerf sim openb-gpuspec --pods BASE --like REF --share PCT\n"
		"                              [--seed S] [--out FILE]\n"
		"\n"
		"  --pods BASE   the base pod list (openb_pod_list_default.csv)\n"
		"  --like REF    a published gpuspec file to learn from\n"
		"                (openb_pod_list_gpuspec10.csv)\n"
		"  --share PCT   percent of GPU pods that name a model, 0..100\n"
		"  --seed S      generator seed (default 1)\n"
		"  --out FILE    where to write the pod list (default: stdout)\n");
}

static int load_pods(struct kerf_openb *o, struct kerf_file *f,
		     const char *path, struct kerf_err *err)
{
	int rc = kerf_file_read(f, path, GPUSPEC_MAX_BYTES, err);

	if (rc < 0)
		return rc;
	rc = kerf_openb_parse_pods(o, path, f->data, f->len, err);
	if (rc == 0 && o->nr_pods == 0)
		rc = kerf_openb_no_rows(path, "pods", err);
	return rc;
}

const struct option kerf_sim_gpuspec_longopts[] = {
	{ "pods", required_argument, NULL, 'p' },
	{ "like", required_argument, NULL, 'l' },
	{ "share", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, 'S' },
	{ "out", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int kerf_cmd_sim_gpuspec(int argc, char **argv)
{
	static const char prog[] = "kerf sim openb-gpuspec";
	const char *base_path = NULL, *ref_path = NULL, *out_path = NULL;
	uint64_t share = 0, seed = 1;
	bool have_share = false;
	struct kerf_openb base, ref;
	struct kerf_file base_file = { 0 }, ref_file = { 0 };
	struct kerf_gpuspec_gen gen;
	struct kerf_err err = { 0 };
	const char **specs = NULL;
	int64_t named, gpu_pods = 0;
	char named_pct[32];
	FILE *out = stdout;
	int opt, rc, status = 1;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", kerf_sim_gpuspec_longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			base_path = optarg;
			break;
		case 'l':
			ref_path = optarg;
			break;
		case 's':
			if (kerf_parse_u64_opt("--share", optarg, 0, 100, &share,
					       &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			have_share = true;
			break;
		case 'S':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					       &seed, &err) < 0) {
				fprintf(stderr, "%s: %s\n", prog, err.msg);
				return 2;
			}
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			kerf_opt_error(prog, opt, argv);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected(prog, argv[optind], NULL);
		return 2;
	}
	if (!base_path || !ref_path || !have_share) {
		usage(stderr);
		return 2;
	}
	kerf_openb_init(&base);
	kerf_openb_init(&ref);
	kerf_gpuspec_init(&gen);
	if ((rc = load_pods(&base, &base_file, base_path, &err)) < 0 ||
	    (rc = load_pods(&ref, &ref_file, ref_path, &err)) < 0 ||
	    (rc = kerf_gpuspec_learn(&gen, &ref, &err)) < 0)
		goto out;
	specs = calloc(base.nr_pods ? base.nr_pods : 1, sizeof(*specs));
	if (!specs) {
		kerf_err_set(&err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	named = kerf_gpuspec_draw(&gen, &base, (int)share, seed, specs);
	for (size_t i = 0; i < base.nr_pods; i++)
		gpu_pods += kerf_gpuspec_kind_of(&base.pods[i]) >= 0;
	if (out_path && !(out = fopen(out_path, "w"))) {
		kerf_err_set(&err, -KERF_EIO, "cannot write '%s': %s", out_path,
			     strerror(errno));
		goto out;
	}
	rc = kerf_gpuspec_write(out, base_path, base_file.data, base_file.len,
				base.nr_pods, specs, &err);
	if (out != stdout && fclose(out) != 0 && rc == 0)
		rc = kerf_err_set(&err, -KERF_EIO, "cannot write '%s': %s",
				  out_path, strerror(errno));
	if (rc < 0)
		goto out;
	kerf_units_percent(gpu_pods ? 100.0 * (double)named / (double)gpu_pods : 0.0, 1,
			   named_pct, sizeof(named_pct));
	fprintf(stderr, "openb-gpuspec: %lld of %lld GPU pods (%s) name a model; share %llu%%, seed %llu\n",
		(long long)named, (long long)gpu_pods, named_pct,
		(unsigned long long)share, (unsigned long long)seed);
	status = 0;
out:
	if (status)
		fprintf(stderr, "%s: %s\n", prog, err.msg);
	free(specs);
	kerf_gpuspec_release(&gen);
	kerf_openb_release(&ref);
	kerf_openb_release(&base);
	kerf_file_release(&ref_file);
	kerf_file_release(&base_file);
	return status;
}
