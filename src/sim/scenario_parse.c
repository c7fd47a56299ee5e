/*
 * scenario_parse: the YAML scenario reader, from text to struct
 * kerf_scenario (the format is docs/scenario.md; the build of the core
 * state is in scenario_build.c).
 *
 * The reader walks the tree of format/yaml_doc with a field path in hand
 * ("tenants[1].quota.H100-80GB.nominal", kept by format/yaml_read), so that
 * every error says "file:line: field: reason".  It checks everything the
 * core would refuse later, while the line is still known: names, references
 * between sections (tenants, classes, GPU models), the bounds of
 * core/model.h, children's nominal quotas within their parent's (and the
 * top level's within the cluster).  kerf_scenario_build validates again, for
 * scenarios made by hand.
 *
 * It also refuses what could only run forever or never: a run of more than
 * SCN_MAX_CYCLES scheduling cycles, more than SCN_MAX_TOTAL_WORKLOADS
 * workloads or SCN_MAX_TOTAL_PODS pods over all generators (the work and
 * memory of a run, bounded before anything is built), and a generator
 * whose pod or gang fits on no node or NVLink domain it may use.
 *
 * Numbers are decimals converted to the core's integer units exactly: the
 * written digits are multiplied by the unit (1000 milli-cores per core, 1024
 * MiB per GiB, 1000 ms per second, ...) digit by digit and rounded half up,
 * never through a double.
 *
 * GPU model i of the built cluster is the i-th distinct model in node group
 * order; the reader numbers models the same way, so the model masks of the
 * generators' pods are final.
 */
#include "sim/scenario.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "core/policy.h"
#include "core/resources.h"
#include "core/mig/geometry.h"
#include "core/sharing.h"
#include "format/file.h"
#include "format/yaml_doc.h"
#include "format/yaml_read.h"

enum {
	SCN_MAX_BYTES = 16 << 20,          /* the file */
	SCN_MAX_DEPTH = 32,                /* nested YAML collections */
	SCN_MAX_YAML_NODES = 1000000,
	SCN_MAX_NODES = 1 << 20,           /* cluster nodes, all groups */
	SCN_MAX_GROUPS = 4096,             /* node groups */
	SCN_MAX_TENANTS = 4096,            /* not counting the root */
	SCN_MAX_GENERATORS = 4096,
	SCN_MAX_WORKLOADS = 1000000,       /* per generator */
	/*
	 * The work and memory of a run, bounded up front: scheduling cycles
	 * (horizon / cycle), workloads and pods over all generators.  A
	 * workload costs the simulator about 2 KiB and a few events per run.
	 */
	SCN_MAX_CYCLES = 10000000,
	SCN_MAX_TOTAL_WORKLOADS = 1000000,
	SCN_MAX_TOTAL_PODS = 10000000,
	SCN_MIG_MAX_SLICES = 7,            /* compute slices of any MIG GPU */
	SCN_MAX_WEIGHT = 1000000,
	SCN_POLICY_MAX = 32,               /* sizeof(sc->policy) */
};

#define SCN_MAX_MS ((int64_t)3600000000000)      /* a million hours */
#define SCN_MAX_GPU_MEM_MIB ((int64_t)1 << 30)   /* per GPU */
#define SCN_MAX_QUOTA_GPU_MILLI ((int64_t)1000000000)
#define SCN_MAX_GPU_MILLI_HOURS ((int64_t)1000000000000)
#define NUM_LIMIT ((int64_t)1 << 62)            /* of any parsed value */

_Static_assert((int)KERF_SCN_MAX_QUOTAS == (int)KERF_MAX_RES,
	       "one quota line per resource dimension");
_Static_assert((int)KERF_SCN_NAME_MAX <= (int)KERF_TENANT_NAME_MAX &&
		       (int)KERF_SCN_NAME_MAX <= (int)KERF_CLASS_NAME_MAX &&
		       (int)KERF_SCN_NAME_MAX <= (int)KERF_WORKLOAD_KEY_MAX,
	       "scenario names fit the core's");

/* ---- limits on numbers ---------------------------------------------- */

struct qty {
	int64_t scale;          /* core units per unit written */
	int64_t min;            /* core units */
	int64_t max;
	bool integer;           /* no fractional part allowed */
	bool negative_ok;
	const char *expect;     /* "must be <expect>" */
	const char *unit;       /* "must be at most <max> <unit>"; NULL: expect */
};

/* clang-format off */
static const struct qty q_node_cpu = {
	1000, 0, KERF_MAX_CPU_MILLI, false, false, "a number of cores >= 0", "cores" };
static const struct qty q_node_mem = {
	1024, 0, KERF_MAX_MEM_MIB, false, false, "a number of GiB >= 0", "GiB" };
static const struct qty q_gpu_mem = {
	1024, 0, SCN_MAX_GPU_MEM_MIB, false, false, "a number of GiB >= 0", "GiB" };
static const struct qty q_quota_gpu = {
	1000, 0, SCN_MAX_QUOTA_GPU_MILLI, false, false, "a number of GPUs >= 0", "GPUs" };
static const struct qty q_seconds = {
	1000, 0, SCN_MAX_MS, false, false, "a number of seconds >= 0", "seconds" };
static const struct qty q_seconds_pos = {
	1000, 1, SCN_MAX_MS, false, false, "a number of seconds > 0", "seconds" };
static const struct qty q_hours_pos = {
	3600000, 1, SCN_MAX_MS, false, false, "a number of hours > 0", "hours" };
static const struct qty q_gpu_hours = {
	1000, 1, SCN_MAX_GPU_MILLI_HOURS, false, false, "a number of GPU-hours > 0", "GPU-hours" };
static const struct qty q_flavor_weight = {
	100, 0, 10000, false, false, "a weight from 0 to 100 (GPU-hours counted per GPU-hour)", NULL };
static const struct qty q_pct = {
	1, 0, 100, false, false, "a percentage from 0 to 100", NULL };
static const struct qty q_fraction = {
	1000, 1, KERF_GPU_MILLI - 1, false, false, "a fraction of one GPU from 0.001 to 0.999", NULL };
static const struct qty q_seed = {
	1, 0, NUM_LIMIT, true, false, "an integer from 0 to 2^62", NULL };
static const struct qty q_class_value = {
	1, INT32_MIN, INT32_MAX, true, true, "an integer from -2147483648 to 2147483647", NULL };
static const struct qty q_node_count = {
	1, 1, SCN_MAX_NODES, true, false, "an integer from 1 to 1048576", NULL };
static const struct qty q_node_gpus = {
	1, 0, KERF_NODE_MAX_GPUS, true, false, "an integer from 0 to 16", NULL };
static const struct qty q_domain = {
	1, 0, SCN_MAX_NODES, true, false, "an integer from 0 to 1048576", NULL };
static const struct qty q_weight = {
	1, 1, SCN_MAX_WEIGHT, true, false, "an integer from 1 to 1000000", NULL };
static const struct qty q_wl_count = {
	1, 1, SCN_MAX_WORKLOADS, true, false, "an integer from 1 to 1000000", NULL };
static const struct qty q_pods = {
	1, 1, KERF_MAX_GANG_PODS, true, false, "an integer from 1 to 4096", NULL };
/* clang-format on */

/* ---- the reader ----------------------------------------------------- */

struct reader {
	struct kerf_yread y;                /* the field path, messages */
	struct kerf_scenario *sc;
	size_t alloc_nodes;
	size_t alloc_tenants;
	size_t alloc_generators;
	bool *tenant_internal;              /* per tenant: has children */
	size_t alloc_internal;
	uint32_t nr_cluster_nodes;
	/* GPU models by first appearance: the cluster's model indices */
	char models[KERF_MAX_MODELS][KERF_MODEL_NAME_MAX];
	int32_t model_mem_mib[KERF_MAX_MODELS];   /* first stated; 0 = none */
	size_t model_mem_group[KERF_MAX_MODELS];  /* the group that stated it */
	int nr_models;
	int64_t capacity[KERF_MAX_RES];     /* of the cluster, per dimension */
	uint64_t total_workloads;           /* over the generators so far */
	uint64_t total_pods;
};

static int oom(struct reader *r)
{
	return kerf_err_set(r->y.err, -KERF_ENOMEM, "%s: out of memory",
			    r->y.path);
}

/* ---- scalars -------------------------------------------------------- */

/* One of words[]; returns its index. */
static int get_word(struct reader *r, const struct kerf_yaml_node *n,
		    const char *const *words, int nr_words)
{
	char list[160];
	size_t used = 0;

	if (n->kind == KERF_YAML_SCALAR)
		for (int i = 0; i < nr_words; i++)
			if (kerf_yread_key_is(n, words[i]))
				return i;
	list[0] = '\0';
	for (int i = 0; i < nr_words && used < sizeof(list); i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s",
				 i == 0 ? "" : i + 1 == nr_words ? " or " : ", ",
				 words[i]);

		if (w > 0)
			used += (size_t)w;
	}
	return kerf_yread_fail(&r->y, n, "must be %s", list);
}

enum num_rc {
	NUM_OK = 0,
	NUM_BAD,                /* not a decimal number */
	NUM_BIG,                /* beyond NUM_LIMIT after scaling */
	NUM_FRACTION,           /* has a fraction where an integer is wanted */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A plain scalar [+-]digits[.digits][(e|E)[+-]digits] times scale, rounded
 * half up, exactly.  The digits are D with the decimal point after digit p;
 * the integer part is at most 19 digits (else it is too big anyway) and the
 * fraction is multiplied by scale from its last digit up, as on paper, so
 * that the carry out is the integer part of fraction * scale and the last
 * digit written is the first one after the point: the rounding digit.
 */
static enum num_rc parse_number(const struct kerf_yaml_node *n, int64_t scale,
				bool integer, bool *neg, int64_t *out)
{
	const char *s, *end, *ip, *fp = NULL;
	size_t ni = 0, nf = 0, nd, k0, fstart;
	long exp10 = 0, p, zeros;
	bool exp_neg = false, frac_nonzero = false;
	uint64_t ipart = 0;
	int64_t carry = 0, last = 0;

	*neg = false;
	*out = 0;
	if (n->kind != KERF_YAML_SCALAR || !n->plain)
		return NUM_BAD;
	s = n->text;
	end = s + n->len;
	if (s < end && (*s == '+' || *s == '-'))
		*neg = *s++ == '-';
	ip = s;
	while (s < end && is_digit(*s))
		s++, ni++;
	if (s < end && *s == '.') {
		fp = ++s;
		while (s < end && is_digit(*s))
			s++, nf++;
	}
	if (ni + nf == 0)
		return NUM_BAD;
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < end && (*s == '+' || *s == '-'))
			exp_neg = *s++ == '-';
		if (s == end || !is_digit(*s))
			return NUM_BAD;
		for (; s < end && is_digit(*s); s++)
			if (exp10 < 1000000)
				exp10 = exp10 * 10 + (*s - '0');
		if (exp_neg)
			exp10 = -exp10;
	}
	if (s != end)
		return NUM_BAD;
	nd = ni + nf;
#define DIGIT(k) ((int64_t)(((k) < ni ? ip[(k)] : fp[(k) - ni]) - '0'))
	for (k0 = 0; k0 < nd && DIGIT(k0) == 0; k0++)
		;
	if (k0 == nd) {
		*neg = false;
		return NUM_OK;
	}
	/* the value is 0.D[k0..] x 10^p, with D[k0] != 0 */
	p = (long)ni + exp10 - (long)k0;
	if (p > 19)
		return NUM_BIG;
	for (long k = 0; k < p; k++)
		ipart = ipart * 10 +
			(uint64_t)(k0 + (size_t)k < nd ? DIGIT(k0 + (size_t)k) : 0);
	if (ipart > (uint64_t)(NUM_LIMIT / scale))
		return NUM_BIG;
	zeros = p < 0 ? -p : 0;
	fstart = k0 + (size_t)(p > 0 ? p : 0);
	if (zeros > 40) {
		/* below 1e-40: nothing of it survives the rounding */
		frac_nonzero = true;
	} else {
		for (size_t k = nd; k-- > fstart;) {
			int64_t d = DIGIT(k), t = d * scale + carry;

			frac_nonzero |= d != 0;
			last = t % 10;
			carry = t / 10;
		}
		for (long z = 0; z < zeros; z++) {
			last = carry % 10;
			carry /= 10;
		}
	}
#undef DIGIT
	if (integer && frac_nonzero)
		return NUM_FRACTION;
	*out = (int64_t)ipart * scale + carry + (last >= 5);
	return NUM_OK;
}

/* v / scale in decimal, exactly when it ends within 10 digits. */
static void fmt_qty(char *buf, size_t size, int64_t v, int64_t scale)
{
	int64_t rem = v % scale;
	size_t used;
	int n = snprintf(buf, size, "%" PRId64, v / scale);

	if (n < 0 || rem == 0)
		return;
	used = (size_t)n;
	if (rem < 0)
		rem = -rem;
	if (used + 1 < size)
		buf[used++] = '.';
	for (int i = 0; i < 10 && rem != 0 && used + 1 < size; i++) {
		rem *= 10;
		buf[used++] = (char)('0' + rem / scale);
		rem %= scale;
	}
	buf[used] = '\0';
}

static int get_qty(struct reader *r, const struct kerf_yaml_node *n,
		   const struct qty *q, int64_t *out)
{
	bool neg;
	int64_t v;
	enum num_rc rc = parse_number(n, q->scale, q->integer, &neg, &v);

	if (rc != NUM_BAD && neg && !q->negative_ok)
		rc = NUM_BAD;
	if (rc == NUM_OK && neg)
		v = -v;
	if (rc == NUM_OK && v >= q->min && v <= q->max) {
		*out = v;
		return 0;
	}
	if (q->unit && !neg && (rc == NUM_BIG || (rc == NUM_OK && v > q->max))) {
		char max[48];

		fmt_qty(max, sizeof(max), q->max, q->scale);
		return kerf_yread_fail(&r->y, n, "must be at most %s %s", max,
				       q->unit);
	}
	return kerf_yread_fail(&r->y, n, "must be %s", q->expect);
}

static int get_qty32(struct reader *r, const struct kerf_yaml_node *n,
		     const struct qty *q, int32_t *out)
{
	int64_t v = 0;
	int rc = get_qty(r, n, q, &v);

	*out = (int32_t)v;
	return rc;
}

static int get_qty_u32(struct reader *r, const struct kerf_yaml_node *n,
		       const struct qty *q, uint32_t *out)
{
	int64_t v = 0;
	int rc = get_qty(r, n, q, &v);

	*out = (uint32_t)v;
	return rc;
}

/* Exactly one of two keys giving a time in different units. */
static int get_time_either(struct reader *r, const struct kerf_yaml_node *map,
			   const struct kerf_yaml_node *a, const char *a_key,
			   const struct qty *qa, const struct kerf_yaml_node *b,
			   const char *b_key, const struct qty *qb,
			   int64_t *out)
{
	size_t mark;
	int rc;

	if (a && b) {
		char reason[96];

		snprintf(reason, sizeof(reason), "give %s or %s, not both",
			 a_key, b_key);
		return kerf_yread_fail_key(&r->y, b, b_key, reason);
	}
	if (!a && !b) {
		char reason[96];

		snprintf(reason, sizeof(reason), "missing (or %s)", b_key);
		return kerf_yread_fail_key(&r->y, map, a_key, reason);
	}
	mark = kerf_yread_push_key(&r->y, a ? a_key : b_key);
	rc = get_qty(r, a ? a : b, a ? qa : qb, out);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

static int key_qty(struct reader *r, const struct kerf_yaml_node *v,
		   const char *key, const struct qty *q, int64_t *out)
{
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = kerf_yread_push_key(&r->y, key);
	rc = get_qty(r, v, q, out);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

static int key_qty32(struct reader *r, const struct kerf_yaml_node *v,
		     const char *key, const struct qty *q, int32_t *out)
{
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = kerf_yread_push_key(&r->y, key);
	rc = get_qty32(r, v, q, out);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

static int key_qty_u32(struct reader *r, const struct kerf_yaml_node *v,
		       const char *key, const struct qty *q, uint32_t *out)
{
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = kerf_yread_push_key(&r->y, key);
	rc = get_qty_u32(r, v, q, out);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

/* Returns the index of the word, or the default when v is NULL. */
static int key_word(struct reader *r, const struct kerf_yaml_node *v,
		    const char *key, const char *const *words, int nr_words,
		    int dflt)
{
	size_t mark;
	int rc;

	if (!v)
		return dflt;
	mark = kerf_yread_push_key(&r->y, key);
	rc = get_word(r, v, words, nr_words);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

static int grow(struct reader *r, void **arr, size_t *alloc, size_t need,
		size_t elem)
{
	return kerf_grow_(arr, alloc, need, elem, false) < 0 ? oom(r) : 0;
}

/* ---- references ----------------------------------------------------- */

static int find_model(const struct reader *r, const char *name)
{
	for (int i = 0; i < r->nr_models; i++)
		if (strcmp(r->models[i], name) == 0)
			return i;
	return -1;
}

static int find_tenant(const struct kerf_scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->nr_tenants; i++)
		if (strcmp(sc->tenants[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The quota dimension of a resource name, or -1 (after an error). */
static int resource_dim(struct reader *r, const struct kerf_yaml_node *key)
{
	int m;

	if (kerf_yread_key_is(key, "cpu"))
		return KERF_RES_CPU;
	if (kerf_yread_key_is(key, "memory"))
		return KERF_RES_MEM;
	m = key->len < KERF_MODEL_NAME_MAX && strlen(key->text) == key->len
		    ? find_model(r, key->text)
		    : -1;
	if (m < 0) {
		char shown[KERF_YREAD_SHOWN_SIZE];

		kerf_yread_show(shown, sizeof(shown), key);
		kerf_yread_fail(&r->y, key,
				"'%s' is not cpu, memory or the GPU model of a node group",
				shown);
		return -1;
	}
	return kerf_res_gpu(m);
}

static const struct qty *dim_qty(int dim)
{
	return dim == KERF_RES_CPU ? &q_node_cpu
	       : dim == KERF_RES_MEM ? &q_node_mem
				     : &q_quota_gpu;
}

/* A list of priority class names, each defined, none twice. */
static int get_class_list(struct reader *r, const struct kerf_yaml_node *n,
			  char (*out)[KERF_CLASS_NAME_MAX], int *nr_out)
{
	*nr_out = 0;
	if (n->kind != KERF_YAML_SEQ || n->nr == 0)
		return kerf_yread_fail(&r->y, n,
				       "must be a list of priority class names");
	for (size_t i = 0; i < n->nr; i++) {
		const struct kerf_yaml_node *item = n->items[i];
		char name[KERF_CLASS_NAME_MAX];
		size_t mark = kerf_yread_push_index(&r->y, i);
		int rc = kerf_yread_get_name(&r->y, item,
					     KERF_CLASS_NAME_MAX - 1, name);

		if (rc == 0 && kerf_classes_find(&r->sc->classes, name) < 0)
			rc = kerf_yread_fail(&r->y, item,
					     "no priority class '%s'", name);
		for (int j = 0; rc == 0 && j < *nr_out; j++)
			if (strcmp(out[j], name) == 0)
				rc = kerf_yread_fail(&r->y, item,
						     "'%s' is listed twice",
						     name);
		kerf_yread_pop(&r->y, mark);
		if (rc < 0)
			return rc;
		memcpy(out[(*nr_out)++], name, sizeof(name));
	}
	return 0;
}

/* ---- cluster -------------------------------------------------------- */

enum {
	G_PREFIX, G_COUNT, G_CPU, G_MEMORY, G_GPUS, G_MODEL, G_GPU_MEMORY,
	G_DOMAIN, G_MIG, G_NR_
};
static const char *const group_keys[G_NR_] = {
	[G_PREFIX] = "prefix",
	[G_COUNT] = "count",
	[G_CPU] = "cpu",
	[G_MEMORY] = "memory_gib",
	[G_GPUS] = "gpus",
	[G_MODEL] = "model",
	[G_GPU_MEMORY] = "gpu_memory_gib",
	[G_DOMAIN] = "nvlink_domain_nodes",
	[G_MIG] = "mig_gpus",
};

/*
 * Would nodes "<a><i>" (i < count_a) and "<b><j>" (j >= 0) share a name?
 * Only if b is a followed by digits s, not starting with 0: then the first
 * clash is i = s followed by 0.
 */
static bool names_clash(const char *a, uint32_t count_a, const char *b,
			uint64_t *clash)
{
	size_t la = strlen(a), lb = strlen(b);
	uint64_t s = 0;

	if (lb <= la || memcmp(a, b, la) != 0 || b[la] == '0' || lb - la > 7)
		return false;
	for (size_t k = la; k < lb; k++) {
		if (!is_digit(b[k]))
			return false;
		s = s * 10 + (uint64_t)(b[k] - '0');
	}
	*clash = s * 10;
	return *clash < count_a;
}

static int check_prefix(struct reader *r, const struct kerf_yaml_node *at,
			size_t g)
{
	const struct kerf_scn_nodes *n = &r->sc->nodes[g];

	for (size_t h = 0; h < g; h++) {
		const struct kerf_scn_nodes *o = &r->sc->nodes[h];
		uint64_t i;

		if (strcmp(o->prefix, n->prefix) == 0)
			return kerf_yread_fail(&r->y, at,
					       "'%s' is also the prefix of cluster.nodes[%zu]",
					       n->prefix, h);
		if (names_clash(o->prefix, o->count, n->prefix, &i))
			return kerf_yread_fail(&r->y, at,
					       "node name '%s0' would also be made by cluster.nodes[%zu]",
					       n->prefix, h);
		if (names_clash(n->prefix, n->count, o->prefix, &i))
			return kerf_yread_fail(&r->y, at,
					       "node name '%s%" PRIu64 "' would also be made by cluster.nodes[%zu]",
					       n->prefix, i, h);
	}
	return 0;
}

static int group_model(struct reader *r, const struct kerf_yaml_node *map,
		       const struct kerf_yaml_node **v, size_t g)
{
	struct kerf_scn_nodes *n = &r->sc->nodes[g];
	int m, rc;

	if (n->gpus == 0) {
		if (v[G_MODEL])
			return kerf_yread_fail_key(&r->y, v[G_MODEL], "model",
						   "given for nodes without GPUs (gpus is 0)");
		if (v[G_GPU_MEMORY])
			return kerf_yread_fail_key(&r->y, v[G_GPU_MEMORY],
						   "gpu_memory_gib",
						   "given for nodes without GPUs (gpus is 0)");
		if (n->domain_nodes)
			return kerf_yread_fail_key(&r->y, v[G_DOMAIN],
						   "nvlink_domain_nodes",
						   "given for nodes without GPUs (gpus is 0)");
		if (n->mig_gpus)
			return kerf_yread_fail_key(&r->y, v[G_MIG], "mig_gpus",
						   "given for nodes without GPUs (gpus is 0)");
		return 0;
	}
	if ((rc = kerf_yread_need(&r->y, map, v[G_MODEL], "model")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[G_MODEL], "model",
				      KERF_MODEL_NAME_MAX - 1, n->model)) < 0)
		return rc;
	if (strcmp(n->model, "cpu") == 0 || strcmp(n->model, "memory") == 0)
		return kerf_yread_fail_key(&r->y, v[G_MODEL], "model",
					   "'cpu' and 'memory' are quota resources, not GPU models");
	if (n->mig_gpus > n->gpus)
		return kerf_yread_fail_key(&r->y, v[G_MIG], "mig_gpus",
					   "more than the node's gpus");
	if (n->mig_gpus && !kerf_mig_model_find(n->model))
		return kerf_yread_fail_key(&r->y, v[G_MIG], "mig_gpus",
					   "the model has no MIG profiles (A30-24GB, A100-40GB, A100-80GB, H100-80GB, H100-94GB, H100-96GB, GH200-144GB, H200-141GB, B200-180GB and their aliases have)");
	m = find_model(r, n->model);
	if (m < 0) {
		if (r->nr_models == KERF_MAX_MODELS)
			return kerf_yread_fail_key(&r->y, v[G_MODEL], "model",
						   "more than 64 GPU models");
		m = r->nr_models++;
		memcpy(r->models[m], n->model, sizeof(r->models[m]));
		r->model_mem_mib[m] = 0;
	}
	if (n->gpu_mem_mib == 0)
		return 0;
	if (r->model_mem_mib[m] == 0) {
		r->model_mem_mib[m] = n->gpu_mem_mib;
		r->model_mem_group[m] = g;
	} else if (r->model_mem_mib[m] != n->gpu_mem_mib) {
		char had[48];
		size_t mark = kerf_yread_push_key(&r->y, "gpu_memory_gib");

		fmt_qty(had, sizeof(had), r->model_mem_mib[m], 1024);
		rc = kerf_yread_fail(&r->y, v[G_GPU_MEMORY],
				     "model '%s' has %s GiB in cluster.nodes[%zu]",
				     n->model, had, r->model_mem_group[m]);
		kerf_yread_pop(&r->y, mark);
		return rc;
	}
	return 0;
}

static int parse_group(struct reader *r, const struct kerf_yaml_node *map,
		       size_t g)
{
	const struct kerf_yaml_node *v[G_NR_];
	struct kerf_scn_nodes *n = &r->sc->nodes[g];
	int64_t gpus = 0, mig = 0;
	int rc;

	memset(n, 0, sizeof(*n));
	if ((rc = kerf_yread_take_map(&r->y, map, group_keys, G_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[G_PREFIX], "prefix")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[G_COUNT], "count")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[G_CPU], "cpu")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[G_MEMORY], "memory_gib")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[G_PREFIX], "prefix",
				      KERF_SCN_NAME_MAX - 1, n->prefix)) < 0 ||
	    (rc = key_qty_u32(r, v[G_COUNT], "count", &q_node_count,
			      &n->count)) < 0 ||
	    (rc = key_qty(r, v[G_CPU], "cpu", &q_node_cpu, &n->cpu_milli)) < 0 ||
	    (rc = key_qty(r, v[G_MEMORY], "memory_gib", &q_node_mem,
			  &n->mem_mib)) < 0 ||
	    (rc = key_qty(r, v[G_GPUS], "gpus", &q_node_gpus, &gpus)) < 0 ||
	    (rc = key_qty32(r, v[G_GPU_MEMORY], "gpu_memory_gib", &q_gpu_mem,
			    &n->gpu_mem_mib)) < 0 ||
	    (rc = key_qty_u32(r, v[G_DOMAIN], "nvlink_domain_nodes", &q_domain,
			      &n->domain_nodes)) < 0 ||
	    (rc = key_qty(r, v[G_MIG], "mig_gpus", &q_node_gpus, &mig)) < 0)
		return rc;
	n->gpus = (int)gpus;
	n->mig_gpus = (int)mig;
	if (n->count > SCN_MAX_NODES - r->nr_cluster_nodes)
		return kerf_yread_fail_key(&r->y, v[G_COUNT], "count",
					   "more than 1048576 nodes in the cluster");
	r->nr_cluster_nodes += n->count;
	KERF_YREAD_UNDER_KEY(rc, &r->y, "prefix",
			     check_prefix(r, v[G_PREFIX], g));
	if (rc < 0 || (rc = group_model(r, map, v, g)) < 0)
		return rc;
	r->capacity[KERF_RES_CPU] = kerf_qty_add(
		r->capacity[KERF_RES_CPU], kerf_qty_mul(n->count, n->cpu_milli));
	r->capacity[KERF_RES_MEM] = kerf_qty_add(
		r->capacity[KERF_RES_MEM], kerf_qty_mul(n->count, n->mem_mib));
	if (n->gpus > 0) {
		int d = kerf_res_gpu(find_model(r, n->model));

		r->capacity[d] = kerf_qty_add(
			r->capacity[d],
			kerf_qty_mul(n->count, (int64_t)n->gpus * KERF_GPU_MILLI));
	}
	return 0;
}

static int parse_cluster(struct reader *r, const struct kerf_yaml_node *map)
{
	static const char *const keys[] = { "nodes" };
	const struct kerf_yaml_node *v[1], *seq;
	struct kerf_scenario *sc = r->sc;
	size_t mark;
	int rc;

	if ((rc = kerf_yread_take_map(&r->y, map, keys, 1, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[0], "nodes")) < 0)
		return rc;
	seq = v[0];
	mark = kerf_yread_push_key(&r->y, "nodes");
	if (seq->kind != KERF_YAML_SEQ || seq->nr == 0)
		rc = kerf_yread_fail(&r->y, seq,
				     "must be a list of node groups");
	else if (seq->nr > SCN_MAX_GROUPS)
		rc = kerf_yread_fail(&r->y, seq->items[SCN_MAX_GROUPS],
				     "more than %d node groups",
				     SCN_MAX_GROUPS);
	else
		rc = grow(r, (void **)&sc->nodes, &r->alloc_nodes, seq->nr,
			  sizeof(*sc->nodes));
	for (size_t i = 0; rc == 0 && i < seq->nr; i++) {
		size_t m = kerf_yread_push_index(&r->y, i);

		rc = parse_group(r, seq->items[i], i);
		kerf_yread_pop(&r->y, m);
		if (rc == 0)
			sc->nr_nodes++;
	}
	kerf_yread_pop(&r->y, mark);
	return rc;
}

/* ---- priority classes ----------------------------------------------- */

enum { C_NAME, C_VALUE, C_PREEMPTIBLE, C_GRACE, C_MIN_RUNTIME, C_NR_ };
static const char *const class_keys[C_NR_] = {
	[C_NAME] = "name",
	[C_VALUE] = "value",
	[C_PREEMPTIBLE] = "preemptible",
	[C_GRACE] = "checkpoint_grace_s",
	[C_MIN_RUNTIME] = "min_runtime_s",
};

static int parse_class(struct reader *r, const struct kerf_yaml_node *map)
{
	const struct kerf_yaml_node *v[C_NR_];
	struct kerf_priority_class pc = { .preemptible = true };
	int64_t value = 0;
	int rc;

	if ((rc = kerf_yread_take_map(&r->y, map, class_keys, C_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[C_NAME], "name")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[C_VALUE], "value")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[C_NAME], "name",
				      KERF_CLASS_NAME_MAX - 1, pc.name)) < 0 ||
	    (rc = key_qty(r, v[C_VALUE], "value", &q_class_value, &value)) < 0 ||
	    (rc = kerf_yread_key_bool(&r->y, v[C_PREEMPTIBLE], "preemptible",
				      &pc.preemptible)) < 0 ||
	    (rc = key_qty(r, v[C_GRACE], "checkpoint_grace_s", &q_seconds,
			  &pc.checkpoint_grace_ms)) < 0 ||
	    (rc = key_qty(r, v[C_MIN_RUNTIME], "min_runtime_s", &q_seconds,
			  &pc.min_runtime_ms)) < 0)
		return rc;
	pc.value = (int32_t)value;
	if (kerf_classes_find(&r->sc->classes, pc.name) >= 0)
		return kerf_yread_fail_key(&r->y, v[C_NAME], "name",
					   "defined twice");
	if (kerf_classes_add(&r->sc->classes, &pc, NULL) < 0)
		return kerf_yread_fail_key(&r->y, v[C_NAME], "name",
					   "cannot be added");
	return 0;
}

static int parse_classes(struct reader *r, const struct kerf_yaml_node *seq)
{
	int rc = 0;

	if (seq->kind != KERF_YAML_SEQ)
		return kerf_yread_fail(&r->y, seq,
				       "must be a list of priority classes");
	for (size_t i = 0; rc == 0 && i < seq->nr; i++) {
		size_t mark = kerf_yread_push_index(&r->y, i);

		if (i >= KERF_MAX_CLASSES)
			rc = kerf_yread_fail(&r->y, seq->items[i],
					     "more than %d priority classes",
					     KERF_MAX_CLASSES);
		else
			rc = parse_class(r, seq->items[i]);
		kerf_yread_pop(&r->y, mark);
	}
	return rc;
}

/* ---- tenants -------------------------------------------------------- */

enum {
	T_NAME, T_WEIGHT, T_QUOTA, T_ALLOWED, T_ISOLATION, T_NETWORK, T_BUDGET,
	T_IDLE, T_CHILDREN, T_NR_
};
static const char *const tenant_keys[T_NR_] = {
	[T_NAME] = "name",
	[T_WEIGHT] = "weight",
	[T_QUOTA] = "quota",
	[T_ALLOWED] = "allowed_classes",
	[T_ISOLATION] = "isolation",
	[T_NETWORK] = "network_class",
	[T_BUDGET] = "budget",
	[T_IDLE] = "idle",
	[T_CHILDREN] = "children",
};

enum { Q_NOMINAL, Q_BORROWING, Q_LENDING, Q_NR_ };
static const char *const quota_keys[Q_NR_] = {
	[Q_NOMINAL] = "nominal",
	[Q_BORROWING] = "borrowing_limit",
	[Q_LENDING] = "lending_limit",
};

/* Where a tenant's nominal quotas must fit: its parent or the cluster. */
struct siblings {
	const char *parent;                 /* NULL: the top level */
	const int64_t *nominal;             /* the parent's, per dimension */
	int64_t sum[KERF_MAX_RES];          /* the siblings' so far */
};

static int check_sum(struct reader *r, const struct kerf_yaml_node *at,
		     struct siblings *sib, int dim, int64_t nominal)
{
	const struct qty *q = dim_qty(dim);
	const char *unit = q->unit;
	char sum[48], limit[48];

	sib->sum[dim] = kerf_qty_add(sib->sum[dim], nominal);
	if (sib->sum[dim] <= sib->nominal[dim])
		return 0;
	fmt_qty(sum, sizeof(sum), sib->sum[dim], q->scale);
	fmt_qty(limit, sizeof(limit), sib->nominal[dim], q->scale);
	if (!sib->parent)
		return kerf_yread_fail(&r->y, at,
				       "the top-level tenants' nominal quotas sum to %s %s, more than the cluster's %s",
				       sum, unit, limit);
	return kerf_yread_fail(&r->y, at,
			       "the nominal quotas of the children of '%s' sum to %s %s, more than its nominal %s",
			       sib->parent, sum, unit, limit);
}

static int parse_quota_line(struct reader *r, const struct kerf_yaml_node *map,
			    int dim, struct kerf_scn_quota *line,
			    struct siblings *sib)
{
	const struct kerf_yaml_node *v[Q_NR_];
	const struct qty *q = dim_qty(dim);
	int rc;

	line->nominal = 0;
	line->borrowing_limit = KERF_QTY_INF;
	line->lending_limit = KERF_QTY_INF;
	if ((rc = kerf_yread_take_map(&r->y, map, quota_keys, Q_NR_, v)) < 0 ||
	    (rc = key_qty(r, v[Q_NOMINAL], "nominal", q, &line->nominal)) < 0 ||
	    (rc = key_qty(r, v[Q_BORROWING], "borrowing_limit", q,
			  &line->borrowing_limit)) < 0 ||
	    (rc = key_qty(r, v[Q_LENDING], "lending_limit", q,
			  &line->lending_limit)) < 0)
		return rc;
	if (v[Q_LENDING] && line->lending_limit > line->nominal) {
		char nom[48], reason[96];

		fmt_qty(nom, sizeof(nom), line->nominal, q->scale);
		snprintf(reason, sizeof(reason), "must not be more than nominal (%s %s)",
			 nom, q->unit);
		return kerf_yread_fail_key(&r->y, v[Q_LENDING], "lending_limit",
					   reason);
	}
	if (v[Q_NOMINAL])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "nominal",
				     check_sum(r, v[Q_NOMINAL], sib, dim,
					       line->nominal));
	return rc;
}

static int parse_quota(struct reader *r, const struct kerf_yaml_node *map,
		       struct kerf_scn_tenant *t, int64_t *nominal,
		       struct siblings *sib)
{
	bool seen[KERF_MAX_RES] = { false };
	int rc = 0;

	if (map->kind != KERF_YAML_MAP)
		return kerf_yread_fail(&r->y, map,
				       "must be a mapping of resources to quotas");
	for (size_t i = 0; rc == 0 && i < map->nr; i++) {
		const struct kerf_yaml_node *key = map->pairs[i].key;
		size_t mark = kerf_yread_push_key_node(&r->y, key);
		struct kerf_scn_quota *line;
		int dim = resource_dim(r, key);

		if (dim < 0) {
			rc = -KERF_EPARSE;
		} else if (seen[dim]) {
			rc = kerf_yread_fail(&r->y, key, "given twice");
		} else if (t->nr_quotas >= KERF_SCN_MAX_QUOTAS) {
			rc = kerf_yread_fail(&r->y, key,
					     "more than %d quota lines",
					     KERF_SCN_MAX_QUOTAS);
		} else {
			seen[dim] = true;
			line = &t->quotas[t->nr_quotas++];
			memcpy(line->resource, key->text, key->len + 1);
			rc = parse_quota_line(r, map->pairs[i].value, dim, line,
					      sib);
			nominal[dim] = line->nominal;
		}
		kerf_yread_pop(&r->y, mark);
	}
	return rc;
}

enum { B_GPU_HOURS, B_WINDOW, B_ACTION, B_WEIGHTS, B_NR_ };
static const char *const budget_keys[B_NR_] = {
	[B_GPU_HOURS] = "gpu_hours",
	[B_WINDOW] = "window_h",
	[B_ACTION] = "on_exhaustion",
	[B_WEIGHTS] = "flavor_weights",
};

/* flavor_weights: {model: weight}; an hour of that model counts weight. */
static int parse_flavor_weights(struct reader *r,
				const struct kerf_yaml_node *map,
				struct kerf_scn_tenant *t)
{
	bool seen[KERF_MAX_RES] = { false };
	int rc = 0;

	if (map->kind != KERF_YAML_MAP)
		return kerf_yread_fail(&r->y, map,
				       "must be a mapping of GPU models to weights");
	for (size_t i = 0; rc == 0 && i < map->nr; i++) {
		const struct kerf_yaml_node *key = map->pairs[i].key;
		size_t mark = kerf_yread_push_key_node(&r->y, key);
		int dim = resource_dim(r, key);
		int64_t pct;

		if (dim < 0)
			rc = -KERF_EPARSE;
		else if (dim < KERF_RES_GPU0)
			rc = kerf_yread_fail(&r->y, key,
					     "budgets count GPU-hours: '%s' is not a GPU model",
					     key->text);   /* cpu or memory */
		else if (seen[dim])
			rc = kerf_yread_fail(&r->y, key, "given twice");
		else if ((rc = get_qty(r, map->pairs[i].value, &q_flavor_weight,
				       &pct)) == 0) {
			seen[dim] = true;
			t->budget_weight_pct[dim - KERF_RES_GPU0] = (int32_t)pct;
		}
		kerf_yread_pop(&r->y, mark);
	}
	return rc;
}
static const char *const budget_actions[] = { "hold", "preemptible-only" };

static int parse_budget(struct reader *r, const struct kerf_yaml_node *map,
			struct kerf_scn_tenant *t)
{
	const struct kerf_yaml_node *v[B_NR_];
	int rc, action;

	if ((rc = kerf_yread_take_map(&r->y, map, budget_keys, B_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[B_GPU_HOURS],
				  "gpu_hours")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[B_WINDOW], "window_h")) < 0 ||
	    (rc = key_qty(r, v[B_GPU_HOURS], "gpu_hours", &q_gpu_hours,
			  &t->budget_gpu_milli_hours)) < 0 ||
	    (rc = key_qty(r, v[B_WINDOW], "window_h", &q_hours_pos,
			  &t->budget_window_ms)) < 0)
		return rc;
	action = key_word(r, v[B_ACTION], "on_exhaustion", budget_actions, 2,
			  KERF_BUDGET_HOLD);
	if (action < 0)
		return action;
	t->budget_action = (enum kerf_budget_action)action;
	if (v[B_WEIGHTS])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "flavor_weights",
				     parse_flavor_weights(r, v[B_WEIGHTS], t));
	return rc;
}

enum { I_BELOW, I_FOR, I_ACTION, I_EXEMPT, I_NR_ };
static const char *const idle_keys[I_NR_] = {
	[I_BELOW] = "below_pct",
	[I_FOR] = "for_s",
	[I_ACTION] = "action",
	[I_EXEMPT] = "exempt_classes",
};
static const char *const idle_actions[] = { "notify", "checkpoint-evict" };

static int parse_idle(struct reader *r, const struct kerf_yaml_node *map,
		      struct kerf_scn_tenant *t)
{
	const struct kerf_yaml_node *v[I_NR_];
	size_t mark;
	int rc, action;

	if ((rc = kerf_yread_take_map(&r->y, map, idle_keys, I_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[I_BELOW], "below_pct")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[I_FOR], "for_s")) < 0 ||
	    (rc = key_qty32(r, v[I_BELOW], "below_pct", &q_pct,
			    &t->idle_threshold_pct)) < 0 ||
	    (rc = key_qty(r, v[I_FOR], "for_s", &q_seconds_pos,
			  &t->idle_after_ms)) < 0)
		return rc;
	action = key_word(r, v[I_ACTION], "action", idle_actions, 2, 0);
	if (action < 0)
		return action;
	t->idle_action = action == 0 ? KERF_IDLE_NOTIFY
				     : KERF_IDLE_CHECKPOINT_EVICT;
	if (!v[I_EXEMPT])
		return 0;
	mark = kerf_yread_push_key(&r->y, "exempt_classes");
	rc = get_class_list(r, v[I_EXEMPT], t->idle_exempt_classes,
			    &t->nr_idle_exempt_classes);
	kerf_yread_pop(&r->y, mark);
	return rc;
}

static const char *const isolations[] = { "shared", "tenant", "hardware" };

static int parse_tenants(struct reader *r, const struct kerf_yaml_node *seq,
			 const char *parent, const int64_t *parent_nominal);

/* The tenant's own fields; t is sc->tenants[idx], valid until children. */
static int parse_tenant_fields(struct reader *r,
			       const struct kerf_yaml_node **v,
			       struct kerf_scn_tenant *t, int64_t *nominal,
			       struct siblings *sib)
{
	int rc, iso;

	if ((rc = key_qty_u32(r, v[T_WEIGHT], "weight", &q_weight,
			      &t->weight)) < 0)
		return rc;
	if (v[T_QUOTA])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "quota",
				     parse_quota(r, v[T_QUOTA], t, nominal,
						 sib));
	if (rc < 0)
		return rc;
	if (v[T_ALLOWED])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "allowed_classes",
				     get_class_list(r, v[T_ALLOWED],
						    t->allowed_classes,
						    &t->nr_allowed_classes));
	if (rc < 0)
		return rc;
	iso = key_word(r, v[T_ISOLATION], "isolation", isolations, 3,
		       KERF_ISOLATION_SHARED);
	if (iso < 0)
		return iso;
	t->isolation = (enum kerf_isolation)iso;
	if ((rc = kerf_yread_key_name(&r->y, v[T_NETWORK], "network_class",
				      KERF_SCN_NAME_MAX - 1,
				      t->network_class)) < 0)
		return rc;
	if (v[T_BUDGET])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "budget",
				     parse_budget(r, v[T_BUDGET], t));
	if (rc < 0)
		return rc;
	if (v[T_IDLE])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "idle",
				     parse_idle(r, v[T_IDLE], t));
	return rc;
}

static int parse_tenant(struct reader *r, const struct kerf_yaml_node *map,
			const char *parent, struct siblings *sib)
{
	const struct kerf_yaml_node *v[T_NR_];
	struct kerf_scenario *sc = r->sc;
	struct kerf_scn_tenant *t;
	int64_t nominal[KERF_MAX_RES] = { 0 };
	char name[KERF_SCN_NAME_MAX];
	size_t idx;
	int rc;

	if ((rc = kerf_yread_take_map(&r->y, map, tenant_keys, T_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[T_NAME], "name")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[T_NAME], "name",
				      KERF_SCN_NAME_MAX - 1, name)) < 0)
		return rc;
	if (strcmp(name, "cluster") == 0)
		return kerf_yread_fail_key(&r->y, v[T_NAME], "name",
					   "'cluster' is the root of the tenant tree");
	if (find_tenant(sc, name) >= 0)
		return kerf_yread_fail_key(&r->y, v[T_NAME], "name",
					   "tenant defined twice");
	if (sc->nr_tenants >= SCN_MAX_TENANTS)
		return kerf_yread_fail(&r->y, map, "more than %d tenants",
				       SCN_MAX_TENANTS);
	if ((rc = grow(r, (void **)&sc->tenants, &r->alloc_tenants,
		       sc->nr_tenants + 1, sizeof(*sc->tenants))) < 0 ||
	    (rc = grow(r, (void **)&r->tenant_internal, &r->alloc_internal,
		       sc->nr_tenants + 1, sizeof(*r->tenant_internal))) < 0)
		return rc;
	idx = sc->nr_tenants++;
	t = &sc->tenants[idx];
	memset(t, 0, sizeof(*t));
	r->tenant_internal[idx] = false;
	memcpy(t->name, name, sizeof(name));
	if (parent)
		snprintf(t->parent, sizeof(t->parent), "%s", parent);
	t->weight = 1;
	for (int m = 0; m < KERF_MAX_MODELS; m++)
		t->budget_weight_pct[m] = 100;
	if ((rc = parse_tenant_fields(r, v, t, nominal, sib)) < 0)
		return rc;
	if (!v[T_CHILDREN])
		return 0;
	if (v[T_CHILDREN]->kind == KERF_YAML_SEQ && v[T_CHILDREN]->nr > 0)
		r->tenant_internal[idx] = true;
	/* t may move from here on */
	KERF_YREAD_UNDER_KEY(rc, &r->y, "children",
			     parse_tenants(r, v[T_CHILDREN], name, nominal));
	return rc;
}

static int parse_tenants(struct reader *r, const struct kerf_yaml_node *seq,
			 const char *parent, const int64_t *parent_nominal)
{
	struct siblings sib = { .parent = parent, .nominal = parent_nominal };
	int rc = 0;

	if (seq->kind != KERF_YAML_SEQ)
		return kerf_yread_fail(&r->y, seq, "must be a list of tenants");
	for (size_t i = 0; rc == 0 && i < seq->nr; i++) {
		size_t mark = kerf_yread_push_index(&r->y, i);

		rc = parse_tenant(r, seq->items[i], parent, &sib);
		kerf_yread_pop(&r->y, mark);
	}
	return rc;
}

/* ---- workload generators -------------------------------------------- */

enum {
	W_NAME, W_TENANT, W_CLASS, W_COUNT, W_START, W_EVERY, W_ARRIVAL,
	W_DURATION_S, W_DURATION_H, W_DURATION, W_PODS, W_GPUS, W_FRACTION,
	W_GPU_MEMORY, W_CPU, W_MEMORY, W_MODELS, W_MIN_COUNT, W_TOPOLOGY,
	W_CHECKPOINT, W_UTILISATION, W_PROFILE, W_SHARING, W_MIG, W_NR_
};
static const char *const generator_keys[W_NR_] = {
	[W_NAME] = "name",
	[W_TENANT] = "tenant",
	[W_CLASS] = "class",
	[W_COUNT] = "count",
	[W_START] = "start_s",
	[W_EVERY] = "every_s",
	[W_ARRIVAL] = "arrival",
	[W_DURATION_S] = "duration_s",
	[W_DURATION_H] = "duration_h",
	[W_DURATION] = "duration",
	[W_PODS] = "pods",
	[W_GPUS] = "gpus",
	[W_FRACTION] = "gpu_fraction",
	[W_GPU_MEMORY] = "gpu_memory_gib",
	[W_CPU] = "cpu",
	[W_MEMORY] = "memory_gib",
	[W_MODELS] = "models",
	[W_MIN_COUNT] = "min_count",
	[W_TOPOLOGY] = "topology",
	[W_CHECKPOINT] = "checkpoint_every_s",
	[W_UTILISATION] = "utilisation_pct",
	[W_PROFILE] = "profile",
	[W_SHARING] = "sharing",
	[W_MIG] = "mig",
};
static const char *const dists[] = { "fixed", "exponential" };
static const char *const topologies[] = { "any", "node", "nvlink", "pack" };

static int gen_references(struct reader *r, const struct kerf_yaml_node **v,
			  struct kerf_scn_generator *g)
{
	const struct kerf_scenario *sc = r->sc;
	int t;
	int rc;

	if ((rc = kerf_yread_key_name(&r->y, v[W_TENANT], "tenant",
				      KERF_SCN_NAME_MAX - 1, g->tenant)) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[W_CLASS], "class",
				      KERF_CLASS_NAME_MAX - 1,
				      g->class_name)) < 0)
		return rc;
	t = find_tenant(sc, g->tenant);
	if (t < 0) {
		char reason[96];

		snprintf(reason, sizeof(reason), "no tenant '%s'", g->tenant);
		return kerf_yread_fail_key(&r->y, v[W_TENANT], "tenant",
					   reason);
	}
	if (r->tenant_internal[t]) {
		char reason[128];

		snprintf(reason, sizeof(reason),
			 "'%s' has children; work goes to leaf tenants only",
			 g->tenant);
		return kerf_yread_fail_key(&r->y, v[W_TENANT], "tenant",
					   reason);
	}
	if (kerf_classes_find(&sc->classes, g->class_name) < 0) {
		char reason[96];

		snprintf(reason, sizeof(reason), "no priority class '%s'",
			 g->class_name);
		return kerf_yread_fail_key(&r->y, v[W_CLASS], "class", reason);
	}
	return 0;
}

static int gen_models(struct reader *r, const struct kerf_yaml_node *seq,
		      struct kerf_pod *pod)
{
	if (seq->kind != KERF_YAML_SEQ || seq->nr == 0)
		return kerf_yread_fail(&r->y, seq,
				       "must be a list of GPU models");
	if (pod->nr_gpus == 0)
		return kerf_yread_fail(&r->y, seq,
				       "given for pods without GPUs");
	for (size_t i = 0; i < seq->nr; i++) {
		const struct kerf_yaml_node *item = seq->items[i];
		char name[KERF_MODEL_NAME_MAX];
		size_t mark = kerf_yread_push_index(&r->y, i);
		int m = -1;
		int rc = kerf_yread_get_name(&r->y, item,
					     KERF_MODEL_NAME_MAX - 1, name);

		if (rc == 0 && (m = find_model(r, name)) < 0)
			rc = kerf_yread_fail(&r->y, item,
					     "'%s' is not the GPU model of a node group",
					     name);
		if (rc == 0 && (pod->model_mask >> m & 1))
			rc = kerf_yread_fail(&r->y, item,
					     "'%s' is listed twice", name);
		kerf_yread_pop(&r->y, mark);
		if (rc < 0)
			return rc;
		pod->model_mask |= (uint64_t)1 << m;
	}
	return 0;
}

static int gen_pod(struct reader *r, const struct kerf_yaml_node **v,
		   struct kerf_scn_generator *g)
{
	struct kerf_pod *pod = &g->set.req;
	int64_t gpus = 0;
	int rc;

	if (v[W_GPUS] && v[W_FRACTION])
		return kerf_yread_fail_key(&r->y, v[W_FRACTION], "gpu_fraction",
					   "give gpus or gpu_fraction, not both");
	if (v[W_MIG] && (v[W_GPUS] || v[W_FRACTION]))
		return kerf_yread_fail_key(&r->y, v[W_MIG], "mig",
					   "a MIG profile is the pod's GPU: give mig or gpus/gpu_fraction, not both");
	if ((rc = key_qty_u32(r, v[W_PODS], "pods", &q_pods, &g->set.count)) < 0 ||
	    (rc = key_qty(r, v[W_GPUS], "gpus", &q_node_gpus, &gpus)) < 0 ||
	    (rc = key_qty32(r, v[W_FRACTION], "gpu_fraction", &q_fraction,
			    &pod->gpu_milli)) < 0 ||
	    (rc = key_qty(r, v[W_CPU], "cpu", &q_node_cpu, &pod->cpu_milli)) < 0 ||
	    (rc = key_qty(r, v[W_MEMORY], "memory_gib", &q_node_mem,
			  &pod->mem_mib)) < 0 ||
	    (rc = key_qty32(r, v[W_GPU_MEMORY], "gpu_memory_gib", &q_gpu_mem,
			    &pod->gpu_mem_mib)) < 0)
		return rc;
	if (v[W_FRACTION]) {
		pod->nr_gpus = 1;
	} else if (v[W_MIG]) {
		pod->nr_gpus = 1;
		pod->gpu_milli = KERF_GPU_MILLI;   /* the profile's share: gen_sharing */
	} else {
		pod->nr_gpus = (uint8_t)gpus;
		pod->gpu_milli = gpus > 0 ? KERF_GPU_MILLI : 0;
	}
	if (v[W_GPU_MEMORY] && pod->nr_gpus == 0)
		return kerf_yread_fail_key(&r->y, v[W_GPU_MEMORY],
					   "gpu_memory_gib",
					   "given for pods without GPUs");
	if (v[W_MODELS])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "models",
				     gen_models(r, v[W_MODELS], pod));
	if (rc < 0)
		return rc;
	if ((rc = key_qty_u32(r, v[W_MIN_COUNT], "min_count", &q_pods,
			      &g->min_count)) < 0)
		return rc;
	if (g->min_count > g->set.count) {
		char reason[64];

		snprintf(reason, sizeof(reason), "must be at most pods (%" PRIu32 ")",
			 g->set.count);
		return kerf_yread_fail_key(&r->y, v[W_MIN_COUNT], "min_count",
					   reason);
	}
	return 0;
}

/*
 * The MIG table a pod's MIG request is sized on: the model of the first
 * node group with GPUs in MIG mode that the pod may use; NULL when none.
 */
static const struct kerf_mig_model *mig_table_for(struct reader *r,
						  uint64_t model_mask)
{
	for (size_t i = 0; i < r->sc->nr_nodes; i++) {
		const struct kerf_scn_nodes *n = &r->sc->nodes[i];
		int m;

		if (!n->mig_gpus)
			continue;
		m = find_model(r, n->model);
		if (m >= 0 && (!model_mask || (model_mask >> m & 1)))
			return kerf_mig_model_find(n->model);
	}
	return NULL;
}

/*
 * Make pod a request for profile pi of mm: its compute slices and at
 * least its memory, so that every model serves it with the same profile
 * or the smallest one as large; charged the profile's share (the state
 * charges the largest over the models it may run on).
 */
static void set_mig(struct kerf_pod *pod, const struct kerf_mig_model *mm,
		    unsigned pi)
{
	int32_t mem = (int32_t)kerf_mig_profile_mem_mib(mm, pi);

	pod->mig_slices = mm->profiles[pi].compute_slices;
	if (pod->gpu_mem_mib < mem)
		pod->gpu_mem_mib = mem;
	pod->gpu_milli = kerf_mig_gpu_milli(mm, pi);
	pod->share = KERF_SHARE_DEFAULT;
}

/* `mig: <profile>`: the pod asks for one MIG instance of that profile. */
static int gen_mig(struct reader *r, const struct kerf_yaml_node **v,
		   const struct kerf_mig_model *mm, int mech,
		   struct kerf_scn_generator *g)
{
	char name[32];
	int pi, rc;

	if (mech != KERF_MECH_AUTO && mech != KERF_MECH_MIG)
		return kerf_yread_fail_key(&r->y, v[W_SHARING], "sharing",
					   "a pod asking a MIG profile is shared by MIG only");
	if ((rc = kerf_yread_key_name(&r->y, v[W_MIG], "mig", sizeof(name) - 1,
				      name)) < 0)
		return rc;
	if (!mm)
		return kerf_yread_fail_key(&r->y, v[W_MIG], "mig",
					   "no node group the pod may use has GPUs in MIG mode (mig_gpus)");
	pi = kerf_mig_profile_find(mm, name);
	if (pi < 0)
		return kerf_yread_fail_key(&r->y, v[W_MIG], "mig",
					   "not a MIG profile of the model the pod runs on");
	if (mm->profiles[pi].media_ext)
		return kerf_yread_fail_key(&r->y, v[W_MIG], "mig",
					   "media-extension (+me) profiles are not placed by the scheduler");
	set_mig(&g->set.req, mm, (unsigned)pi);
	return 0;
}

/*
 * How a GPU pod shares its GPU: the pod's `mig` profile, its `sharing`,
 * else the choice for its `profile` (core/sharing.h) under its tenant's
 * isolation.  MIG is chosen or allowed where a node group the pod may use
 * has GPUs in MIG mode (`mig_gpus`); the request is sized on that model.
 */
static int gen_sharing(struct reader *r, const struct kerf_yaml_node **v,
		       struct kerf_scn_generator *g)
{
	const char *profiles[KERF_PROFILE_COUNT_], *mechs[KERF_MECH_COUNT_];
	struct kerf_sharing_choice c;
	struct kerf_err why = { 0 };
	const struct kerf_mig_model *mm;
	const struct kerf_yaml_node *at = v[W_SHARING] ? v[W_SHARING] : v[W_PROFILE];
	const char *key = v[W_SHARING] ? "sharing" : "profile";
	int prof, mech, t;

	for (int i = 0; i < KERF_PROFILE_COUNT_; i++)
		profiles[i] = kerf_profile_name((enum kerf_wl_profile)i);
	for (int i = 0; i < KERF_MECH_COUNT_; i++)
		mechs[i] = kerf_mechanism_name((enum kerf_mechanism)i);
	if ((prof = key_word(r, v[W_PROFILE], "profile", profiles,
			     KERF_PROFILE_COUNT_, KERF_PROFILE_NONE)) < 0)
		return prof;
	if ((mech = key_word(r, v[W_SHARING], "sharing", mechs, KERF_MECH_COUNT_,
			     KERF_MECH_AUTO)) < 0)
		return mech;
	mm = mig_table_for(r, g->set.req.model_mask);
	if (v[W_MIG])
		return gen_mig(r, v, mm, mech, g);
	if (!at || g->set.req.nr_gpus == 0) {
		if (at)
			return kerf_yread_fail_key(&r->y, at, key,
						   "given for pods without GPUs");
		return 0;
	}
	if (mech == KERF_MECH_MIG && !mm)
		return kerf_yread_fail_key(&r->y, at, key,
					   "no node group the pod may use has GPUs in MIG mode (mig_gpus)");
	t = find_tenant(r->sc, g->tenant);
	if (kerf_sharing_choose(&g->set.req, (enum kerf_wl_profile)prof,
				(enum kerf_mechanism)mech,
				r->sc->tenants[t].isolation, mm, 0, &c, &why) < 0)
		return kerf_yread_fail_key(&r->y, at, key, why.msg);
	if (c.mech == KERF_MECH_MIG) {
		set_mig(&g->set.req, mm, (unsigned)c.mig_profile);
		return 0;
	}
	g->set.req.share = (uint8_t)c.share;
	if (c.nvlink_domain && g->topology == KERF_TOPO_ANY && g->set.count > 1)
		g->topology = KERF_TOPO_NVLINK;
	return 0;
}

static int gen_times(struct reader *r, const struct kerf_yaml_node *map,
		     const struct kerf_yaml_node **v,
		     struct kerf_scn_generator *g)
{
	int rc, arrival, duration, topo;

	if ((rc = key_qty(r, v[W_START], "start_s", &q_seconds,
			  &g->start_ms)) < 0 ||
	    (rc = key_qty(r, v[W_EVERY], "every_s", &q_seconds,
			  &g->interarrival_ms)) < 0 ||
	    (rc = get_time_either(r, map, v[W_DURATION_S], "duration_s",
				  &q_seconds_pos, v[W_DURATION_H], "duration_h",
				  &q_hours_pos, &g->duration_ms)) < 0 ||
	    (rc = key_qty(r, v[W_CHECKPOINT], "checkpoint_every_s", &q_seconds,
			  &g->checkpoint_every_ms)) < 0 ||
	    (rc = key_qty32(r, v[W_UTILISATION], "utilisation_pct", &q_pct,
			    &g->utilisation_pct)) < 0)
		return rc;
	if ((arrival = key_word(r, v[W_ARRIVAL], "arrival", dists, 2,
				KERF_DIST_FIXED)) < 0)
		return arrival;
	if ((duration = key_word(r, v[W_DURATION], "duration", dists, 2,
				 KERF_DIST_FIXED)) < 0)
		return duration;
	if ((topo = key_word(r, v[W_TOPOLOGY], "topology", topologies, 4,
			     KERF_TOPO_ANY)) < 0)
		return topo;
	g->arrival = (enum kerf_scn_dist)arrival;
	g->duration = (enum kerf_scn_dist)duration;
	g->topology = (enum kerf_topology)topo;
	return 0;
}

/* ---- impossible work ------------------------------------------------ */

/*
 * A generator's pods must fit the cluster, or its work waits forever with
 * no reason shown.  The checks are necessary conditions only, so a
 * scenario they pass may still leave work waiting (quotas, other work,
 * fragmentation), but one they refuse can never run:
 *  - one pod fits on some node the pods may use: its GPUs, cores, memory
 *    and GPU memory, each alone and all together;
 *  - the gang (min_count, else all pods) fits on the nodes the pods may
 *    use at once, counting how many such pods each node could hold;
 *  - topology node: the gang fits on one node; nvlink: in one NVLink
 *    domain (nodes outside any domain are domains of one).
 */

#define POD_NO_LIMIT UINT64_MAX

/* Does group n take pods like p at all (GPUs, model, MIG mode)? */
static bool group_eligible(const struct reader *r,
			   const struct kerf_scn_nodes *n,
			   const struct kerf_pod *p)
{
	int m;

	if (p->nr_gpus == 0)
		return true;
	if (n->gpus == 0 || (kerf_pod_is_mig(p) && n->mig_gpus == 0))
		return false;
	m = find_model(r, n->model);
	return !p->model_mask || (m >= 0 && (p->model_mask >> m & 1));
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* At most how many pods like p one node of group n holds (0: none). */
static uint64_t pods_per_node(const struct reader *r,
			      const struct kerf_scn_nodes *n,
			      const struct kerf_pod *p)
{
	uint64_t k = POD_NO_LIMIT;
	int m;

	if (!group_eligible(r, n, p))
		return 0;
	if (p->cpu_milli > 0)
		k = min_u64(k, (uint64_t)(n->cpu_milli / p->cpu_milli));
	if (p->mem_mib > 0)
		k = min_u64(k, (uint64_t)(n->mem_mib / p->mem_mib));
	if (p->nr_gpus == 0)
		return k;
	m = find_model(r, n->model);
	if (!kerf_pod_is_mig(p) && p->gpu_mem_mib > 0 && m >= 0 &&
	    r->model_mem_mib[m] > 0 && p->gpu_mem_mib > r->model_mem_mib[m])
		return 0;
	if (kerf_pod_is_mig(p))
		return min_u64(k, (uint64_t)n->mig_gpus *
					  (SCN_MIG_MAX_SLICES / p->mig_slices));
	if (kerf_pod_is_fraction(p))
		return min_u64(k, (uint64_t)n->gpus *
					  (uint64_t)(KERF_GPU_MILLI / p->gpu_milli));
	return min_u64(k, (uint64_t)(n->gpus / p->nr_gpus));
}

enum { POD_TEXT_SIZE = 160 };

/* "8 GPUs, 32 cores, 256 GiB" (what one pod asks) into buf. */
static void pod_text(char buf[POD_TEXT_SIZE], const struct kerf_pod *p)
{
	char gpu[48] = "", cpu[48], mem[48];

	if (kerf_pod_is_mig(p))
		snprintf(gpu, sizeof(gpu), "a MIG instance of %u slices, ",
			 (unsigned)p->mig_slices);
	else if (kerf_pod_is_fraction(p))
		snprintf(gpu, sizeof(gpu), "%d/1000 of a GPU, ", (int)p->gpu_milli);
	else if (p->nr_gpus)
		snprintf(gpu, sizeof(gpu), "%u GPU%s, ", (unsigned)p->nr_gpus,
			 p->nr_gpus == 1 ? "" : "s");
	fmt_qty(cpu, sizeof(cpu), p->cpu_milli, 1000);
	fmt_qty(mem, sizeof(mem), p->mem_mib, 1024);
	snprintf(buf, POD_TEXT_SIZE, "%s%s cores, %s GiB", gpu, cpu, mem);
}

/* One pod: some node the pods may use must hold it, each need alone first. */
static int gen_fits_one(struct reader *r, const struct kerf_yaml_node *map,
			const struct kerf_yaml_node **v,
			const struct kerf_scn_generator *g)
{
	const struct kerf_pod *p = &g->set.req;
	const char *what = p->nr_gpus ? "node with GPUs the pods may use" : "node";
	int64_t max_cpu = 0, max_mem = 0;
	int32_t max_gpu_mem = 0;
	int max_gpus = 0;
	bool any = false, untracked = false;
	char reason[256], a[48], b[48], pod[POD_TEXT_SIZE];

	for (size_t i = 0; i < r->sc->nr_nodes; i++) {
		const struct kerf_scn_nodes *n = &r->sc->nodes[i];
		int m;

		if (!group_eligible(r, n, p))
			continue;
		if (pods_per_node(r, n, p) > 0)
			return 0;
		any = true;
		max_cpu = n->cpu_milli > max_cpu ? n->cpu_milli : max_cpu;
		max_mem = n->mem_mib > max_mem ? n->mem_mib : max_mem;
		if (p->nr_gpus == 0)
			continue;
		max_gpus = n->gpus > max_gpus ? n->gpus : max_gpus;
		m = find_model(r, n->model);
		if (m < 0 || r->model_mem_mib[m] == 0)
			untracked = true;
		else if (r->model_mem_mib[m] > max_gpu_mem)
			max_gpu_mem = r->model_mem_mib[m];
	}
	if (!any)
		return kerf_yread_fail_key(&r->y, v[W_MODELS] ? v[W_MODELS] : map,
					   v[W_MODELS] ? "models" : "gpus",
					   kerf_pod_is_mig(p)
						   ? "the pods ask for a MIG instance, but no node group they may use has GPUs in MIG mode"
						   : "the pods ask for GPUs, but no node group they may use has any");
	if (!kerf_pod_is_mig(p) && !kerf_pod_is_fraction(p) && p->nr_gpus > max_gpus) {
		snprintf(reason, sizeof(reason),
			 "%u GPUs per pod, but the largest %s has %d",
			 (unsigned)p->nr_gpus, what, max_gpus);
		return kerf_yread_fail_key(&r->y, v[W_GPUS], "gpus", reason);
	}
	if (p->cpu_milli > max_cpu) {
		fmt_qty(a, sizeof(a), p->cpu_milli, 1000);
		fmt_qty(b, sizeof(b), max_cpu, 1000);
		snprintf(reason, sizeof(reason),
			 "%s cores per pod, but the largest %s has %s", a, what, b);
		return kerf_yread_fail_key(&r->y, v[W_CPU], "cpu", reason);
	}
	if (p->mem_mib > max_mem) {
		fmt_qty(a, sizeof(a), p->mem_mib, 1024);
		fmt_qty(b, sizeof(b), max_mem, 1024);
		snprintf(reason, sizeof(reason),
			 "%s GiB per pod, but the largest %s has %s", a, what, b);
		return kerf_yread_fail_key(&r->y, v[W_MEMORY], "memory_gib",
					   reason);
	}
	if (!kerf_pod_is_mig(p) && !untracked && p->gpu_mem_mib > max_gpu_mem) {
		fmt_qty(a, sizeof(a), p->gpu_mem_mib, 1024);
		fmt_qty(b, sizeof(b), max_gpu_mem, 1024);
		snprintf(reason, sizeof(reason),
			 "%s GiB per GPU, but the largest GPU the pods may use has %s",
			 a, b);
		return kerf_yread_fail_key(&r->y, v[W_GPU_MEMORY],
					   "gpu_memory_gib", reason);
	}
	pod_text(pod, p);
	return kerf_yread_fail(&r->y, map,
			       "no %s fits one pod (%s): each node group falls short in some of it",
			       what, pod);
}

/* The gang, min_count pods at once: on the cluster, on a node, a domain. */
static int gen_fits_gang(struct reader *r, const struct kerf_yaml_node *map,
			 const struct kerf_yaml_node **v,
			 const struct kerf_scn_generator *g)
{
	const struct kerf_pod *p = &g->set.req;
	uint64_t gang = g->min_count ? g->min_count : g->set.count;
	uint64_t total = 0, node_max = 0, domain_max = 0;
	const struct kerf_yaml_node *at = v[W_MIN_COUNT] ? v[W_MIN_COUNT] : v[W_PODS];
	const char *key = v[W_MIN_COUNT] ? "min_count" : "pods";
	char what[POD_TEXT_SIZE], reason[400];

	if (!at)
		at = map;
	for (size_t i = 0; i < r->sc->nr_nodes; i++) {
		const struct kerf_scn_nodes *n = &r->sc->nodes[i];
		uint64_t k = pods_per_node(r, n, p);
		uint64_t dom = n->domain_nodes ? min_u64(n->domain_nodes, n->count) : 1;

		if (k == 0)
			continue;
		if (k >= gang)
			return 0;   /* one node holds it: so do a domain and the cluster */
		node_max = k > node_max ? k : node_max;
		domain_max = k * dom > domain_max ? k * dom : domain_max;
		total += k * n->count;   /* k < gang <= 4096, count <= 2^20 */
	}
	pod_text(what, p);
	if (total < gang) {
		snprintf(reason, sizeof(reason),
			 "a gang of %" PRIu64 " pods (%s each), but the nodes the pods may use hold at most %" PRIu64 " such pods at once",
			 gang, what, total);
		return kerf_yread_fail_key(&r->y, at, key, reason);
	}
	if (g->topology == KERF_TOPO_NODE) {
		snprintf(reason, sizeof(reason),
			 "node: all %" PRIu64 " pods of the gang on one node, but a node the pods may use holds at most %" PRIu64 " such pods (%s each)",
			 gang, node_max, what);
		return kerf_yread_fail_key(&r->y, v[W_TOPOLOGY] ? v[W_TOPOLOGY] : map,
					   "topology", reason);
	}
	if (g->topology == KERF_TOPO_NVLINK && domain_max < gang) {
		snprintf(reason, sizeof(reason),
			 "nvlink: all %" PRIu64 " pods of the gang in one NVLink domain, but a domain the pods may use holds at most %" PRIu64 " such pods (%s each; nodes outside any domain are domains of one)",
			 gang, domain_max, what);
		return kerf_yread_fail_key(&r->y, v[W_TOPOLOGY] ? v[W_TOPOLOGY] : v[W_PROFILE] ? v[W_PROFILE] : map,
					   v[W_TOPOLOGY] || !v[W_PROFILE] ? "topology" : "profile",
					   reason);
	}
	return 0;
}

/* The run's size over all generators so far (SCN_MAX_TOTAL_*). */
static int gen_totals(struct reader *r, const struct kerf_yaml_node *map,
		      const struct kerf_yaml_node **v,
		      const struct kerf_scn_generator *g)
{
	char reason[160];

	r->total_workloads += g->count;
	r->total_pods += (uint64_t)g->count * g->set.count;
	if (r->total_workloads > SCN_MAX_TOTAL_WORKLOADS) {
		snprintf(reason, sizeof(reason),
			 "the generators make %" PRIu64 " workloads in all, more than %d",
			 r->total_workloads, SCN_MAX_TOTAL_WORKLOADS);
		return kerf_yread_fail_key(&r->y, v[W_COUNT] ? v[W_COUNT] : map,
					   "count", reason);
	}
	if (r->total_pods > SCN_MAX_TOTAL_PODS) {
		snprintf(reason, sizeof(reason),
			 "the generators make %" PRIu64 " pods in all (count x pods), more than %d",
			 r->total_pods, SCN_MAX_TOTAL_PODS);
		return kerf_yread_fail_key(&r->y, v[W_PODS] ? v[W_PODS] : map,
					   "pods", reason);
	}
	return 0;
}

static int parse_generator(struct reader *r, const struct kerf_yaml_node *map,
			   struct kerf_scn_generator *g)
{
	const struct kerf_yaml_node *v[W_NR_];
	struct kerf_err why = { 0 };
	int rc;

	memset(g, 0, sizeof(*g));
	g->count = 1;
	g->set.count = 1;
	g->utilisation_pct = 100;
	if ((rc = kerf_yread_take_map(&r->y, map, generator_keys,
				      W_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[W_NAME], "name")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[W_TENANT], "tenant")) < 0 ||
	    (rc = kerf_yread_need(&r->y, map, v[W_CLASS], "class")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[W_NAME], "name",
				      KERF_SCN_NAME_MAX - 1, g->name)) < 0 ||
	    (rc = key_qty_u32(r, v[W_COUNT], "count", &q_wl_count,
			      &g->count)) < 0)
		return rc;
	/* g is the next generator, not yet counted */
	for (size_t i = 0; i < r->sc->nr_generators; i++)
		if (strcmp(r->sc->generators[i].name, g->name) == 0)
			return kerf_yread_fail_key(&r->y, v[W_NAME], "name",
						   "another generator has this name");
	/* keys "<name>-<i>": a name of KERF_SCN_NAME_MAX always fits a key */
	_Static_assert(KERF_SCN_NAME_MAX + 11 <= KERF_WORKLOAD_KEY_MAX,
		       "generator keys fit the core's");
	if ((rc = gen_references(r, v, g)) < 0 ||
	    (rc = gen_times(r, map, v, g)) < 0 || (rc = gen_pod(r, v, g)) < 0 ||
	    (rc = gen_sharing(r, v, g)) < 0)
		return rc;
	if (kerf_pod_validate(&g->set.req, &why) < 0)
		return kerf_yread_fail(&r->y, map,
				       "the pod request is invalid: %s",
				       why.msg);
	if ((rc = gen_totals(r, map, v, g)) < 0 ||
	    (rc = gen_fits_one(r, map, v, g)) < 0)
		return rc;
	return gen_fits_gang(r, map, v, g);
}

static int parse_workload(struct reader *r, const struct kerf_yaml_node *seq)
{
	struct kerf_scenario *sc = r->sc;
	int rc = 0;

	if (seq->kind != KERF_YAML_SEQ)
		return kerf_yread_fail(&r->y, seq,
				       "must be a list of workload generators");
	if (seq->nr > SCN_MAX_GENERATORS)
		return kerf_yread_fail(&r->y, seq->items[SCN_MAX_GENERATORS],
				       "more than %d workload generators",
				       SCN_MAX_GENERATORS);
	if (seq->nr && (rc = grow(r, (void **)&sc->generators,
				  &r->alloc_generators, seq->nr,
				  sizeof(*sc->generators))) < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < seq->nr; i++) {
		size_t mark = kerf_yread_push_index(&r->y, i);

		rc = parse_generator(r, seq->items[i], &sc->generators[i]);
		kerf_yread_pop(&r->y, mark);
		if (rc == 0)
			sc->nr_generators++;
	}
	return rc;
}

/* ---- the document --------------------------------------------------- */

enum {
	S_NAME, S_SEED, S_HORIZON_H, S_HORIZON_S, S_CYCLE, S_POLICY, S_CLUSTER,
	S_CLASSES, S_TENANTS, S_WORKLOAD, S_NR_
};
static const char *const scenario_keys[S_NR_] = {
	[S_NAME] = "name",
	[S_SEED] = "seed",
	[S_HORIZON_H] = "horizon_h",
	[S_HORIZON_S] = "horizon_s",
	[S_CYCLE] = "cycle_s",
	[S_POLICY] = "policy",
	[S_CLUSTER] = "cluster",
	[S_CLASSES] = "priority_classes",
	[S_TENANTS] = "tenants",
	[S_WORKLOAD] = "workload",
};

static int parse_policy(struct reader *r, const struct kerf_yaml_node *n)
{
	char name[SCN_POLICY_MAX], known[256];
	size_t used = 0;
	int rc = kerf_yread_get_name(&r->y, n, SCN_POLICY_MAX - 1, name);

	if (rc < 0)
		return rc;
	if (kerf_policy_lookup(name)) {
		memcpy(r->sc->policy, name, sizeof(name));
		return 0;
	}
	known[0] = '\0';
	for (size_t i = 0; i < kerf_policy_count(); i++)
		kerf_yread_add_list(known, sizeof(known), &used,
				    kerf_policy_at(i)->name);
	return kerf_yread_fail(&r->y, n,
			       "unknown placement policy '%s' (known: %s)",
			       name, known);
}

/* horizon / cycle: the scheduling cycles of the run, SCN_MAX_CYCLES at most. */
static int check_cycles(struct reader *r, const struct kerf_yaml_node *root,
			const struct kerf_yaml_node **v)
{
	const struct kerf_scenario *sc = r->sc;
	int64_t cycles = sc->horizon_ms / sc->cycle_ms;
	char horizon[48], cycle[48], reason[256];
	const char *key;
	const struct kerf_yaml_node *at;

	if (cycles <= SCN_MAX_CYCLES)
		return 0;
	/* the horizon in the unit it was given in */
	fmt_qty(horizon, sizeof(horizon), sc->horizon_ms,
		v[S_HORIZON_S] ? 1000 : 3600000);
	fmt_qty(cycle, sizeof(cycle), sc->cycle_ms, 1000);
	snprintf(reason, sizeof(reason),
		 "a horizon of %s %s in cycles of %s seconds is %" PRId64 " scheduling cycles, more than %d (a longer cycle_s or a shorter horizon)",
		 horizon, v[S_HORIZON_S] ? "seconds" : "hours", cycle, cycles,
		 SCN_MAX_CYCLES);
	if (v[S_CYCLE]) {
		key = "cycle_s";
		at = v[S_CYCLE];
	} else {
		key = v[S_HORIZON_H] ? "horizon_h" : "horizon_s";
		at = v[S_HORIZON_H] ? v[S_HORIZON_H] : v[S_HORIZON_S];
	}
	return kerf_yread_fail_key(&r->y, at ? at : root, key, reason);
}

static int parse_top(struct reader *r, const struct kerf_yaml_node *root)
{
	const struct kerf_yaml_node *v[S_NR_];
	struct kerf_scenario *sc = r->sc;
	int64_t seed = 1;
	int rc;

	if (root->kind != KERF_YAML_MAP)
		return kerf_yread_fail(&r->y, root,
				       "a scenario must be a mapping");
	if ((rc = kerf_yread_take_map(&r->y, root, scenario_keys,
				      S_NR_, v)) < 0 ||
	    (rc = kerf_yread_need(&r->y, root, v[S_CLUSTER], "cluster")) < 0 ||
	    (rc = kerf_yread_key_name(&r->y, v[S_NAME], "name",
				      KERF_SCN_NAME_MAX - 1, sc->name)) < 0 ||
	    (rc = key_qty(r, v[S_SEED], "seed", &q_seed, &seed)) < 0 ||
	    (rc = get_time_either(r, root, v[S_HORIZON_H], "horizon_h",
				  &q_hours_pos, v[S_HORIZON_S], "horizon_s",
				  &q_seconds_pos, &sc->horizon_ms)) < 0)
		return rc;
	sc->seed = (uint64_t)seed;
	sc->cycle_ms = 10000;
	if ((rc = key_qty(r, v[S_CYCLE], "cycle_s", &q_seconds_pos,
			  &sc->cycle_ms)) < 0)
		return rc;
	if ((rc = check_cycles(r, root, v)) < 0)
		return rc;
	snprintf(sc->policy, sizeof(sc->policy), "%s", KERF_POLICY_DEFAULT);
	if (v[S_POLICY])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "policy",
				     parse_policy(r, v[S_POLICY]));
	if (rc < 0)
		return rc;
	KERF_YREAD_UNDER_KEY(rc, &r->y, "cluster",
			     parse_cluster(r, v[S_CLUSTER]));
	if (rc < 0)
		return rc;
	if (v[S_CLASSES])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "priority_classes",
				     parse_classes(r, v[S_CLASSES]));
	if (rc < 0)
		return rc;
	if (v[S_TENANTS])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "tenants",
				     parse_tenants(r, v[S_TENANTS], NULL,
						   r->capacity));
	if (rc < 0)
		return rc;
	if (v[S_WORKLOAD])
		KERF_YREAD_UNDER_KEY(rc, &r->y, "workload",
				     parse_workload(r, v[S_WORKLOAD]));
	return rc;
}

void kerf_scenario_init(struct kerf_scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
}

void kerf_scenario_release(struct kerf_scenario *sc)
{
	free(sc->nodes);
	free(sc->tenants);
	free(sc->generators);
	free(sc->arrivals);
	kerf_scenario_init(sc);
}

int kerf_scenario_parse(struct kerf_scenario *sc, const char *path,
			const char *yaml, size_t len, struct kerf_err *err)
{
	static const struct kerf_yaml_limits limits = {
		.max_bytes = SCN_MAX_BYTES,
		.max_depth = SCN_MAX_DEPTH,
		.max_nodes = SCN_MAX_YAML_NODES,
	};
	struct kerf_yaml_doc doc;
	struct reader *r;
	int rc;

	kerf_scenario_init(sc);
	rc = kerf_yaml_load(&doc, path, yaml, len, &limits, err);
	if (rc < 0)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r) {
		char shown[KERF_YREAD_PATH_SHOWN];

		kerf_yaml_release(&doc);
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory",
				    kerf_escape(shown, sizeof(shown), path));
	}
	kerf_yread_init(&r->y, path, err);
	r->sc = sc;
	kerf_classes_init(&sc->classes);
	if (!doc.root || kerf_yaml_is_null(doc.root))
		rc = kerf_err_set(err, -KERF_EPARSE,
				  "%s:%u: the scenario is empty", r->y.path,
				  doc.root ? doc.root->line : 1);
	else
		rc = parse_top(r, doc.root);
	free(r->tenant_internal);
	free(r);
	kerf_yaml_release(&doc);
	if (rc < 0)
		kerf_scenario_release(sc);
	return rc;
}

int kerf_scenario_load(struct kerf_scenario *sc, const char *path,
		       struct kerf_err *err)
{
	struct kerf_file f;
	int rc;

	kerf_scenario_init(sc);
	rc = kerf_file_read(&f, path, SCN_MAX_BYTES, err);
	if (rc < 0)
		return rc;
	rc = kerf_scenario_parse(sc, path, f.data, f.len, err);
	kerf_file_release(&f);
	return rc;
}
