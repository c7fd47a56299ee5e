/*
 * bench_place: placement decisions per second of the scheduler core.
 *
 * For each cluster size N (default 1000, 5000, 10000) a homogeneous cluster
 * of N nodes x 8 GPUs of one model (128 cores, 768 GiB each) is built, and a
 * workload is drawn uniformly with replacement from the openb default pod
 * list until its GPU request reaches 130 % of the cluster's GPU capacity
 * (seed 42).  Each policy (default first-fit, best-fit, fgd, kerf) then
 * places that sequence, one pod at a time, on a fresh copy of the cluster.
 * Only the placement loop (observe + select + reserve, kerf_sched_place) is
 * timed, with CLOCK_MONOTONIC; building the cluster, the requests, the
 * typical distribution and the policy is not.  A pod that fits nowhere is
 * dropped without the "0/N nodes are available" explanation (status NULL),
 * as the simulator does after its first failure.  fgd is given the typical
 * pods of the whole list (95 % coverage), as in `kerf sim openb`.
 *
 * The nodes' GPU model is A100-80GB.  A pod's gpu_spec is honoured: one that
 * names only other models fits nowhere (the default list has no gpu_spec;
 * the demo pins a few pods to L4|T4).
 *
 * The trace is read from $KERF_OPENB_DIR or ../shared/data/openb (relative
 * to the working directory, normally the repository root).  Without it the
 * built-in demo workload stands in, and the output says so.
 *
 * Decisions per second are pods submitted over the loop's wall time (a pod
 * that fits nowhere is a decision too); the CPU time of the loop is shown
 * beside it, so a loaded machine shows as wall > cpu.
 *
 * Peak RSS is the process's high-water mark (getrusage ru_maxrss) after the
 * row's run: it never goes down, so a row shows the largest footprint of
 * that run and of every run before it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/grow.h"
#include "base/parse.h"
#include "base/rng.h"
#include "cmd/opt.h"
#include "core/framework.h"
#include "core/frag.h"
#include "core/model.h"
#include "core/policy.h"
#include "format/file.h"
#include "sim/demo.h"
#include "sim/openb.h"

enum {
	MAX_SIZES = 16,
	MAX_POLICIES = 16,
	MAX_NODES = 1000000,
	NODE_GPUS = 8,
	INFLATE_PCT = 130,
	TYPICAL_PCT = 95,
	POD_FILE_MAX_BYTES = 256 << 20,
};

#define NODE_CPU_MILLI ((int64_t)128000)
#define NODE_MEM_MIB ((int64_t)786432)
#define NODE_MODEL "A100-80GB"
#define DEFAULT_OPENB_DIR "../shared/data/openb"
#define DEFAULT_POD_FILE "openb_pod_list_default.csv"

struct bench_opts {
	size_t sizes[MAX_SIZES];
	size_t nr_sizes;
	const char *policies[MAX_POLICIES];
	size_t nr_policies;
	const char *pods_path;      /* NULL = the default list of the trace */
	uint64_t seed;
	bool json;
};

struct bench_row {
	size_t nr_nodes;
	const char *policy;
	size_t nr_submitted;
	size_t nr_placed;
	double gpu_alloc_pct;
	double wall_s;
	double cpu_s;               /* CPU time of the process over the loop */
	struct kerf_sched_stats stats;
	long peak_rss_kib;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_place [options]\n"
		"  --nodes LIST    cluster sizes, comma-separated (default 1000,5000,10000)\n"
		"  --policy LIST   policies, comma-separated or 'all' (default first-fit,best-fit,fgd,kerf)\n"
		"  --pods FILE     pod list to resample (default $KERF_OPENB_DIR/%s,\n"
		"                  KERF_OPENB_DIR defaulting to %s)\n"
		"  --seed N        workload seed (default 42)\n"
		"  --json          one JSON object per row instead of the table\n",
		DEFAULT_POD_FILE, DEFAULT_OPENB_DIR);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss; /* KiB on Linux */
}

/* --nodes "N[,N...]"; -1 with the message in err. */
static int parse_sizes(const char *arg, struct bench_opts *o,
		       struct kerf_err *err)
{
	uint64_t v[MAX_SIZES];
	size_t n;

	if (kerf_parse_u64_list_opt("--nodes", arg, 1, MAX_NODES, false, v,
				    MAX_SIZES, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		o->sizes[i] = (size_t)v[i];
	o->nr_sizes = n;
	return 0;
}

/*
 * Load the pods to resample into trace.  *source names where they came
 * from: a string literal, o->pods_path or path_buf.
 */
static int load_pods(const struct bench_opts *o, struct kerf_openb *trace,
		     char *path_buf, size_t path_len, const char **source,
		     struct kerf_err *err)
{
	const char *path = o->pods_path;
	struct kerf_file f;
	int rc;

	if (!path) {
		const char *dir = getenv("KERF_OPENB_DIR");

		if (!dir || !*dir)
			dir = DEFAULT_OPENB_DIR;
		if ((size_t)snprintf(path_buf, path_len, "%s/%s", dir,
				     DEFAULT_POD_FILE) >= path_len)
			return kerf_err_set(err, -KERF_ELIMIT,
					    "trace path too long");
		path = path_buf;
		if (access(path, R_OK) != 0) {
			fprintf(stderr,
				"bench_place: openb trace not found ('%s'); set KERF_OPENB_DIR\n"
				"bench_place: FALLING BACK to the built-in demo workload (%d pods, seed %" PRIu64 ")\n",
				path, KERF_DEMO_PODS, o->seed);
			*source = "the built-in demo (no openb trace)";
			return kerf_demo_trace(trace, o->seed, err);
		}
	}
	rc = kerf_file_read(&f, path, POD_FILE_MAX_BYTES, err);
	if (rc < 0)
		return rc;
	rc = kerf_openb_parse_pods(trace, path, f.data, f.len, err);
	kerf_file_release(&f);
	*source = path;
	return rc;
}

static int build_cluster(struct kerf_cluster *c, size_t nr_nodes,
			 struct kerf_err *err)
{
	int model;

	kerf_cluster_init(c);
	model = kerf_cluster_model(c, NODE_MODEL,
				   kerf_openb_model_mem_mib(NODE_MODEL), err);
	if (model < 0)
		goto fail;
	for (size_t i = 0; i < nr_nodes; i++) {
		char name[24];
		int rc;

		snprintf(name, sizeof(name), "n%05zu", i + 1);
		rc = kerf_cluster_add_node(c, name, NODE_CPU_MILLI,
					   NODE_MEM_MIB, model, NODE_GPUS, err);
		if (rc < 0) {
			model = rc;
			goto fail;
		}
	}
	return 0;
fail:
	kerf_cluster_release(c);
	return model;
}

/* The trace's requests in cluster c (models named by gpu_spec are added). */
static int build_requests(const struct kerf_openb *trace,
			  struct kerf_cluster *c, struct kerf_pod **out,
			  struct kerf_err *err)
{
	struct kerf_pod *reqs = calloc(trace->nr_pods, sizeof(*reqs));

	if (!reqs)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < trace->nr_pods; i++) {
		int rc = kerf_openb_pod_request(trace, i, c, &reqs[i], err);

		if (rc < 0) {
			free(reqs);
			return rc;
		}
	}
	*out = reqs;
	return 0;
}

/*
 * Draw pods uniformly with replacement until their GPU request reaches
 * INFLATE_PCT percent of capacity.  *seq holds indices into reqs.
 */
static int draw_sequence(const struct kerf_pod *reqs, size_t nr_reqs,
			 int64_t capacity, uint64_t seed, uint32_t **seq,
			 size_t *nr_seq, struct kerf_err *err)
{
	int64_t target = capacity * INFLATE_PCT / 100, total = 0;
	size_t n = 0, alloc = 1024;
	struct kerf_rng rng;
	uint32_t *s;
	bool has_gpu = false;

	for (size_t i = 0; i < nr_reqs; i++)
		has_gpu |= reqs[i].nr_gpus > 0;
	if (!has_gpu || nr_reqs >= UINT32_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload: the pod list has no GPU request to resample");
	s = malloc(alloc * sizeof(*s));
	if (!s)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_rng_seed(&rng, seed);
	while (total < target) {
		uint32_t k = (uint32_t)kerf_rng_below(&rng, nr_reqs);

		if (KERF_GROW(s, alloc, n + 1) < 0) {
			free(s);
			return kerf_err_set(err, -KERF_ENOMEM,
						    "out of memory");
		}
		s[n++] = k;
		total += kerf_pod_gpu_milli_total(&reqs[k]);
	}
	*seq = s;
	*nr_seq = n;
	return 0;
}

/* Place seq on a copy of base under one policy; fills row. */
static int run_policy(const struct kerf_cluster *base, const char *policy,
		      const struct kerf_pod_dist *dist,
		      const struct kerf_pod *reqs, const uint32_t *seq,
		      size_t nr_seq, uint64_t seed, struct bench_row *row,
		      struct kerf_err *err)
{
	struct kerf_cluster c;
	struct kerf_policy pol;
	struct kerf_sched sched;
	double t0, t1, c0, c1;
	int rc;

	if (kerf_cluster_copy(&c, base) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	rc = kerf_policy_build(&pol, policy,
			       &(struct kerf_policy_args){
				       .cluster = &c,
				       .dist = dist,
				       .seed = seed,
			       },
			       err);
	if (rc < 0)
		goto out_cluster;
	kerf_sched_init(&sched, &pol);
	row->nr_placed = 0;
	c0 = cpu_now_s();
	t0 = now_s();
	for (size_t i = 0; i < nr_seq; i++) {
		struct kerf_binding b;
		enum kerf_code code;

		code = kerf_sched_place(&sched, &c, &reqs[seq[i]], &b, NULL);
		if (code == KERF_FIT) {
			row->nr_placed++;
		} else if (code == KERF_INTERNAL) {
			rc = kerf_err_set(err, -KERF_EINVAL,
					  "policy '%s' produced an invalid binding",
					  policy);
			break;
		}
	}
	t1 = now_s();
	c1 = cpu_now_s();
	row->wall_s = t1 - t0;
	row->cpu_s = c1 - c0;
	row->stats = sched.stats;
	row->nr_submitted = nr_seq;
	row->gpu_alloc_pct = 100.0 *
			     (double)kerf_cluster_gpu_milli_used(&c) /
			     (double)kerf_cluster_gpu_milli_capacity(&c);
	kerf_sched_release(&sched);
	kerf_policy_release(&pol);
	row->peak_rss_kib = peak_rss_kib();
out_cluster:
	kerf_cluster_release(&c);
	return rc;
}

static double cache_hit_ratio(const struct kerf_sched_stats *st)
{
	uint64_t visits = st->nr_cache_hits + st->nr_node_evals;

	return visits ? (double)st->nr_cache_hits / (double)visits : 0.0;
}

static void print_head(void)
{
	printf("%6s  %-10s %9s %9s %7s %9s %8s %12s %9s %9s %9s\n", "nodes",
	       "policy", "submitted", "placed", "alloc%", "wall s", "cpu s",
	       "decisions/s", "us/dec", "cache hit", "peak RSS");
}

static void print_row(const struct bench_row *r)
{
	double n = (double)r->nr_submitted;

	printf("%6zu  %-10s %9zu %9zu %7.2f %9.3f %8.3f %12.0f %9.2f %8.1f%% %5ld MiB\n",
	       r->nr_nodes, r->policy, r->nr_submitted, r->nr_placed,
	       r->gpu_alloc_pct, r->wall_s, r->cpu_s,
	       r->wall_s > 0 ? n / r->wall_s : 0,
	       n > 0 ? r->wall_s * 1e6 / n : 0,
	       100.0 * cache_hit_ratio(&r->stats),
	       r->peak_rss_kib / 1024);
	fflush(stdout);
}

static int print_json(const struct bench_row *r, const char *workload,
		      uint64_t seed)
{
	json_t *o = json_object();
	double n = (double)r->nr_submitted;
	int rc;

	if (!o)
		return -1;
	json_object_set_new(o, "nodes", json_integer((json_int_t)r->nr_nodes));
	json_object_set_new(o, "gpus_per_node", json_integer(NODE_GPUS));
	json_object_set_new(o, "policy", json_string(r->policy));
	json_object_set_new(o, "workload", json_string(workload));
	json_object_set_new(o, "seed", json_integer((json_int_t)seed));
	json_object_set_new(o, "pods_submitted",
			    json_integer((json_int_t)r->nr_submitted));
	json_object_set_new(o, "pods_placed",
			    json_integer((json_int_t)r->nr_placed));
	json_object_set_new(o, "gpu_alloc_pct", json_real(r->gpu_alloc_pct));
	json_object_set_new(o, "wall_s", json_real(r->wall_s));
	json_object_set_new(o, "cpu_s", json_real(r->cpu_s));
	json_object_set_new(o, "decisions_per_s",
			    json_real(r->wall_s > 0 ? n / r->wall_s : 0));
	json_object_set_new(o, "us_per_decision",
			    json_real(n > 0 ? r->wall_s * 1e6 / n : 0));
	json_object_set_new(o, "node_evals",
			    json_integer((json_int_t)r->stats.nr_node_evals));
	json_object_set_new(o, "cache_hits",
			    json_integer((json_int_t)r->stats.nr_cache_hits));
	json_object_set_new(o, "cache_hit_ratio",
			    json_real(cache_hit_ratio(&r->stats)));
	json_object_set_new(o, "peak_rss_kib",
			    json_integer((json_int_t)r->peak_rss_kib));
	rc = json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
	fputc('\n', stdout);
	fflush(stdout);
	json_decref(o);
	return rc;
}

/* Everything for one cluster size: cluster, requests, workload, policies. */
static int bench_size(const struct bench_opts *o,
		      const struct kerf_openb *trace, const char *workload,
		      size_t nr_nodes, struct kerf_err *err)
{
	struct kerf_cluster base;
	struct kerf_pod_dist dist;
	struct kerf_pod *reqs = NULL;
	uint32_t *seq = NULL;
	size_t nr_seq = 0;
	int rc;

	kerf_pod_dist_init(&dist);
	rc = build_cluster(&base, nr_nodes, err);
	if (rc < 0)
		return rc;
	rc = build_requests(trace, &base, &reqs, err);
	if (rc < 0)
		goto out;
	rc = kerf_pod_dist_typical(&dist, reqs, trace->nr_pods, TYPICAL_PCT, 0,
				   err);
	if (rc < 0)
		goto out;
	rc = draw_sequence(reqs, trace->nr_pods,
			   kerf_cluster_gpu_milli_capacity(&base), o->seed,
			   &seq, &nr_seq, err);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < o->nr_policies; i++) {
		struct bench_row row = { .nr_nodes = nr_nodes,
					 .policy = o->policies[i] };

		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r%zu nodes, %s ...", nr_nodes,
				o->policies[i]);
		rc = run_policy(&base, o->policies[i], &dist, reqs, seq, nr_seq,
				o->seed, &row, err);
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "\r\033[K");
		if (rc < 0)
			goto out;
		if (o->json)
			print_json(&row, workload, o->seed);
		else
			print_row(&row);
	}
out:
	free(seq);
	free(reqs);
	kerf_pod_dist_release(&dist);
	kerf_cluster_release(&base);
	return rc;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option longopts[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'P' },
		{ "pods", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct kerf_err err = { 0 };
	int c;

	parse_sizes("1000,5000,10000", o, NULL);
	kerf_opt_policies("bench_place", "--policy", "first-fit,best-fit,fgd,kerf",
			  o->policies, MAX_POLICIES, &o->nr_policies);
	o->seed = 42;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_sizes(optarg, o, &err) < 0) {
				fprintf(stderr, "bench_place: %s\n", err.msg);
				return 2;
			}
			break;
		case 'P':
			if (kerf_opt_policies("bench_place", "--policy", optarg,
					      o->policies, MAX_POLICIES,
					      &o->nr_policies) < 0)
				return 2;
			break;
		case 'p':
			o->pods_path = optarg;
			break;
		case 's':
			if (kerf_parse_u64_opt("--seed", optarg, 0, UINT64_MAX,
					       &o->seed, &err) < 0) {
				fprintf(stderr, "bench_place: %s\n", err.msg);
				return 2;
			}
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			kerf_opt_error("bench_place", c, argv);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		kerf_opt_unexpected("bench_place", argv[optind], NULL);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = { 0 };
	struct kerf_openb trace;
	struct kerf_err err = { 0 };
	const char *workload = NULL;
	char path[4096];
	int rc = parse_args(argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	kerf_openb_init(&trace);
	if (load_pods(&o, &trace, path, sizeof(path), &workload, &err) < 0) {
		fprintf(stderr, "bench_place: %s\n", err.msg);
		kerf_openb_release(&trace);
		return 1;
	}
	if (trace.nr_pods == 0) {
		fprintf(stderr, "bench_place: '%s' has no pods\n", workload);
		kerf_openb_release(&trace);
		return 1;
	}
	fprintf(o.json ? stderr : stdout,
		"bench_place: workload %s (%zu pods), resampled with replacement to %d%% of GPU capacity, seed %" PRIu64 "\n"
		"bench_place: homogeneous nodes of %d x %s, %" PRId64 " cpu_milli, %" PRId64 " MiB; timed: kerf_sched_place loop only\n",
		workload, trace.nr_pods, INFLATE_PCT, o.seed, NODE_GPUS,
		NODE_MODEL, NODE_CPU_MILLI, NODE_MEM_MIB);
	if (!o.json)
		print_head();
	rc = 0;
	for (size_t i = 0; i < o.nr_sizes && rc == 0; i++)
		rc = bench_size(&o, &trace, workload, o.sizes[i], &err);
	if (rc < 0)
		fprintf(stderr, "bench_place: %s\n", err.msg);
	if (!o.json)
		printf("(peak RSS: process high-water mark after the row's run)\n");
	kerf_openb_release(&trace);
	return rc < 0 ? 1 : 0;
}
