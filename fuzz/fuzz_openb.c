/*
 * fuzz_openb: libFuzzer target for the openb trace readers, the decoders of
 * untrusted trace files (kerf_openb_parse_nodes, kerf_openb_parse_pods).
 *
 * Input: byte 0 chooses what the rest is.  Bit 0 clear: a node list, set: a
 * pod list.  Bit 1 set: parse it into a trace that already holds a small
 * valid node and pod list, so that appending, name clashes with earlier
 * nodes and "nothing of a failed file is kept" are tested against non-zero
 * counts.  The other bits are ignored.
 *
 * Beyond "no crash, no sanitizer report", each input checks properties and
 * abort()s when one fails:
 *  - on error: the code is negative and recorded, the message is printable
 *    ASCII and starts with the path given followed by ':', and the counts and earlier entries are
 *    unchanged;
 *  - on success: every new entry has sane values (non-empty names of
 *    printable bytes, nr_gpus 0..16, gpu_milli consistent with num_gpu,
 *    times within KERF_OPENB_MAX_TIME_S, deletion not before creation,
 *    node names unique), writing the entries back as CSV and parsing that
 *    gives the same entries (round trip), kerf_openb_cluster builds a
 *    cluster that matches and passes kerf_cluster_check, and the request of
 *    every pod from kerf_openb_pod_request passes kerf_pod_validate with a
 *    model mask that allows exactly the models its gpu_spec names.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_openb"
#include "check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "core/model.h"
#include "sim/openb.h"

/* The path handed to the parsers; every message must start with it. */
static const char input_path[] = "fuzz-input.csv";
static const char roundtrip_path[] = "roundtrip.csv";

/* The trace that bit 1 of the selector parses first. */
static const char base_nodes[] =
	"sn,cpu_milli,memory_mib,gpu,model\n"
	"base-0,96000,786432,8,V100M32\n"
	"base-1,64000,262144,0,\n"
	"base-2,32000,131072,2,T4\n";
static const char base_pods[] =
	"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
	"base-p0,8000,30000,1,500,\n"
	"base-p1,4000,1000,2,1000,V100M32|T4\n"
	"base-p2,1000,100,0,0,\n"
	"base-p3,2000,2000,1,1000,A10\n";

enum {
	OPENB_NAME_MAX = 253,
	OPENB_NR_BASE_NODES = 3,
	OPENB_NR_BASE_PODS = 4,
};

#define OPENB_MAX_VALUE ((int64_t)1 << 40)

/* ---- a growable text buffer for the round trip --------------------- */

struct text {
	char *data;
	size_t len;
	size_t alloc;
};

static void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	CHECK(n >= 0);
	if (t->len + (size_t)n + 1 > t->alloc) {
		size_t want = t->alloc ? t->alloc : 256;
		char *grown;

		while (want < t->len + (size_t)n + 1)
			want *= 2;
		grown = realloc(t->data, want);
		CHECK(grown != NULL);
		t->data = grown;
		t->alloc = want;
	}
	va_start(ap, fmt);
	vsnprintf(t->data + t->len, t->alloc - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* ---- value checks -------------------------------------------------- */

/* A name as check_name accepts it: 1..max bytes, printable, no ',' '"'. */
static bool is_name(const char *s, size_t max)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= ' ' || ch >= 0x7f || ch == ',' || ch == '"')
			return false;
	}
	return true;
}

static void check_node(const struct kerf_openb_node *n)
{
	CHECK(is_name(n->name, OPENB_NAME_MAX));
	CHECK(n->model != NULL);
	CHECK(n->nr_gpus >= 0 && n->nr_gpus <= KERF_NODE_MAX_GPUS);
	CHECK(n->cpu_milli >= 0 && n->cpu_milli <= OPENB_MAX_VALUE);
	CHECK(n->mem_mib >= 0 && n->mem_mib <= OPENB_MAX_VALUE);
	if (n->nr_gpus > 0)
		CHECK(is_name(n->model, KERF_MODEL_NAME_MAX - 1));
	else
		CHECK(n->model[0] == '\0');
}

/* gpu_spec: empty, or '|'-separated model names of 1..31 printable bytes. */
static bool is_spec(const char *s)
{
	if (!s)
		return false;
	if (*s == '\0')
		return true;
	for (;;) {
		const char *bar = strchr(s, '|');
		size_t n = bar ? (size_t)(bar - s) : strlen(s);

		if (n == 0 || n >= KERF_MODEL_NAME_MAX)
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] <= ' ' ||
			    (unsigned char)s[i] >= 0x7f || s[i] == ',' ||
			    s[i] == '"')
				return false;
		if (!bar)
			return true;
		s = bar + 1;
	}
}

static void check_pod(const struct kerf_openb_pod *p)
{
	CHECK(is_name(p->name, OPENB_NAME_MAX));
	CHECK(is_spec(p->gpu_spec));
	CHECK(p->qos != NULL);
	CHECK(strchr(p->qos, ',') == NULL && strchr(p->qos, '"') == NULL &&
	      strchr(p->qos, '\n') == NULL);
	CHECK(p->cpu_milli >= 0 && p->cpu_milli <= OPENB_MAX_VALUE);
	CHECK(p->mem_mib >= 0 && p->mem_mib <= OPENB_MAX_VALUE);
	CHECK(p->nr_gpus >= 0 && p->nr_gpus <= KERF_NODE_MAX_GPUS);
	CHECK(p->gpu_milli >= 0 && p->gpu_milli <= KERF_GPU_MILLI);
	if (p->nr_gpus == 0)
		CHECK(p->gpu_milli == 0);
	else
		CHECK(p->gpu_milli > 0);
	if (p->nr_gpus > 1)
		CHECK(p->gpu_milli == KERF_GPU_MILLI);
	CHECK(p->creation_s >= -1 && p->creation_s <= KERF_OPENB_MAX_TIME_S);
	CHECK(p->deletion_s >= -1 && p->deletion_s <= KERF_OPENB_MAX_TIME_S);
	CHECK(p->deletion_s < 0 || p->creation_s < 0 ||
	      p->deletion_s >= p->creation_s);
}

static bool same_node(const struct kerf_openb_node *a,
		      const struct kerf_openb_node *b)
{
	return strcmp(a->name, b->name) == 0 &&
	       strcmp(a->model, b->model) == 0 &&
	       a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib &&
	       a->nr_gpus == b->nr_gpus;
}

static bool same_pod(const struct kerf_openb_pod *a,
		     const struct kerf_openb_pod *b)
{
	return strcmp(a->name, b->name) == 0 &&
	       strcmp(a->gpu_spec, b->gpu_spec) == 0 &&
	       strcmp(a->qos, b->qos) == 0 && a->cpu_milli == b->cpu_milli &&
	       a->mem_mib == b->mem_mib && a->gpu_milli == b->gpu_milli &&
	       a->nr_gpus == b->nr_gpus && a->creation_s == b->creation_s &&
	       a->deletion_s == b->deletion_s;
}

/* A copy of the entries parsed before, to see that they stay intact. */
struct snapshot {
	struct kerf_openb_node nodes[OPENB_NR_BASE_NODES];
	size_t nr_nodes;
	struct kerf_openb_pod pods[OPENB_NR_BASE_PODS];
	size_t nr_pods;
};

static void snapshot_take(struct snapshot *s, const struct kerf_openb *o)
{
	CHECK(o->nr_nodes <= OPENB_NR_BASE_NODES &&
	      o->nr_pods <= OPENB_NR_BASE_PODS);
	s->nr_nodes = o->nr_nodes;
	s->nr_pods = o->nr_pods;
	if (o->nr_nodes)
		memcpy(s->nodes, o->nodes, o->nr_nodes * sizeof(*o->nodes));
	if (o->nr_pods)
		memcpy(s->pods, o->pods, o->nr_pods * sizeof(*o->pods));
}

static void snapshot_check(const struct snapshot *s, const struct kerf_openb *o)
{
	for (size_t i = 0; i < s->nr_nodes; i++)
		CHECK(same_node(&s->nodes[i], &o->nodes[i]));
	for (size_t i = 0; i < s->nr_pods; i++)
		CHECK(same_pod(&s->pods[i], &o->pods[i]));
}

/* ---- round trips --------------------------------------------------- */

/*
 * Write nodes from.. back as CSV and parse it.  The sn column goes last and
 * numbers are written canonically, so no written row is longer than the row
 * it came from.
 */
static void roundtrip_nodes(const struct kerf_openb *o, size_t from)
{
	struct text t = { 0 };
	struct kerf_openb back;
	struct kerf_err err = { 0 };
	int rc;

	text_add(&t, "model,cpu_milli,memory_mib,gpu,sn\n");
	for (size_t i = from; i < o->nr_nodes; i++) {
		const struct kerf_openb_node *n = &o->nodes[i];

		text_add(&t, "%s,%" PRId64 ",%" PRId64 ",%d,%s\r\n", n->model,
			 n->cpu_milli, n->mem_mib, n->nr_gpus, n->name);
	}
	kerf_openb_init(&back);
	rc = kerf_openb_parse_nodes(&back, roundtrip_path, t.data, t.len,
				    &err);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(back.nr_nodes == o->nr_nodes - from);
	for (size_t i = 0; i < back.nr_nodes; i++)
		CHECK(same_node(&back.nodes[i], &o->nodes[from + i]));
	kerf_openb_release(&back);
	free(t.data);
}

/*
 * The same for pods.  Optional columns are written only when some pod has
 * a value, and name (always checked, so never ending in '\r') goes last.
 */
static void roundtrip_pods(const struct kerf_openb *o, size_t from)
{
	struct text t = { 0 };
	struct kerf_openb back;
	struct kerf_err err = { 0 };
	bool qos = false, spec = false, created = false, deleted = false;
	int rc;

	for (size_t i = from; i < o->nr_pods; i++) {
		const struct kerf_openb_pod *p = &o->pods[i];

		qos |= p->qos[0] != '\0';
		spec |= p->gpu_spec[0] != '\0';
		created |= p->creation_s >= 0;
		deleted |= p->deletion_s >= 0;
	}
	/* creation_time is per file: all pods have it or none. */
	for (size_t i = from; i < o->nr_pods; i++)
		CHECK((o->pods[i].creation_s >= 0) == created);
	text_add(&t, "%s%scpu_milli,memory_mib,num_gpu,gpu_milli,%s%sname\n",
		 qos ? "qos," : "", spec ? "gpu_spec," : "",
		 created ? "creation_time," : "",
		 deleted ? "deletion_time," : "");
	for (size_t i = from; i < o->nr_pods; i++) {
		const struct kerf_openb_pod *p = &o->pods[i];

		if (qos)
			text_add(&t, "%s,", p->qos);
		if (spec)
			text_add(&t, "%s,", p->gpu_spec);
		text_add(&t, "%" PRId64 ",%" PRId64 ",%d,%" PRId32 ",",
			 p->cpu_milli, p->mem_mib, p->nr_gpus, p->gpu_milli);
		if (created)
			text_add(&t, "%" PRId64 ",", p->creation_s);
		if (deleted && p->deletion_s >= 0)
			text_add(&t, "%" PRId64 ",", p->deletion_s);
		else if (deleted)
			text_add(&t, ",");
		text_add(&t, "%s\n", p->name);
	}
	kerf_openb_init(&back);
	rc = kerf_openb_parse_pods(&back, roundtrip_path, t.data, t.len, &err);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(back.nr_pods == o->nr_pods - from);
	for (size_t i = 0; i < back.nr_pods; i++) {
		const struct kerf_openb_pod *a = &back.pods[i];
		const struct kerf_openb_pod *b = &o->pods[from + i];

		CHECK(same_pod(a, b));
	}
	kerf_openb_release(&back);
	free(t.data);
}

/* ---- what the core makes of a parsed trace ------------------------- */

/* Does the '|'-separated spec name model (exactly)? */
static bool spec_names(const char *spec, const char *model)
{
	size_t len = strlen(model);

	while (*spec) {
		const char *bar = strchr(spec, '|');
		size_t n = bar ? (size_t)(bar - spec) : strlen(spec);

		if (n == len && memcmp(spec, model, n) == 0)
			return true;
		spec = bar ? bar + 1 : spec + n;
	}
	return false;
}

static void check_cluster(const struct kerf_openb *o, const uint32_t *order)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	int rc = kerf_openb_cluster(o, order, &c, &err);

	/* The only input-driven failure: more than 64 distinct models. */
	if (rc == -KERF_ELIMIT) {
		CHECK(err.code == rc && err.msg[0] != '\0');
		return;
	}
	CHECK_MSG(rc == 0, err.msg);
	CHECK(c.nr_nodes == o->nr_nodes);
	for (size_t i = 0; i < c.nr_nodes; i++) {
		const struct kerf_node *n = &c.nodes[i];
		const struct kerf_openb_node *src = &o->nodes[order ? order[i] : i];

		CHECK(strcmp(n->name, src->name) == 0);
		CHECK(n->cpu_milli == src->cpu_milli &&
		      n->cpu_free_milli == src->cpu_milli);
		CHECK(n->mem_mib == src->mem_mib &&
		      n->mem_free_mib == src->mem_mib);
		CHECK(n->nr_gpus == src->nr_gpus &&
		      n->nr_gpus_idle == src->nr_gpus);
		if (n->nr_gpus > 0) {
			CHECK(n->model < c.nr_models);
			CHECK(strcmp(c.models[n->model].name, src->model) == 0);
		} else {
			CHECK(n->model == KERF_MODEL_NONE);
		}
	}
	rc = kerf_cluster_check(&c, &err);
	CHECK_MSG(rc == 0, err.msg);
	kerf_cluster_release(&c);
}

/* The requests of pods from.. in the cluster of the trace's nodes. */
static void check_requests(const struct kerf_openb *o, size_t from)
{
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	int rc = kerf_openb_cluster(o, NULL, &c, &err);

	if (rc == -KERF_ELIMIT)
		return;
	CHECK_MSG(rc == 0, err.msg);
	for (size_t i = from; i < o->nr_pods; i++) {
		const struct kerf_openb_pod *src = &o->pods[i];
		struct kerf_pod p;
		uint64_t named = 0;

		kerf_err_clear(&err);
		rc = kerf_openb_pod_request(o, i, &c, &p, &err);
		if (rc == -KERF_ELIMIT) {
			/* Its gpu_spec named models past the 64 a cluster has. */
			CHECK(c.nr_models == KERF_MAX_MODELS);
			continue;
		}
		CHECK_MSG(rc == 0, err.msg);
		rc = kerf_pod_validate(&p, &err);
		CHECK_MSG(rc == 0, err.msg);
		CHECK(p.cpu_milli == src->cpu_milli && p.mem_mib == src->mem_mib);
		CHECK(p.nr_gpus == src->nr_gpus && p.gpu_milli == src->gpu_milli);
		CHECK(p.gpu_mem_mib == 0);
		if (p.nr_gpus == 0 || src->gpu_spec[0] == '\0') {
			CHECK(p.model_mask == 0);
			continue;
		}
		/* The mask allows exactly the models the spec names. */
		for (size_t m = 0; m < c.nr_models; m++)
			if (spec_names(src->gpu_spec, c.models[m].name))
				named |= (uint64_t)1 << m;
		CHECK(p.model_mask == named && named != 0);
		for (size_t k = 0; k < c.nr_nodes; k++) {
			const struct kerf_node *n = &c.nodes[k];
			enum kerf_misfit why = kerf_node_misfit(&c, n, &p);

			if (n->nr_gpus == 0 || !(named >> n->model & 1))
				CHECK(why == KERF_MISFIT_MODEL);
			else
				CHECK(why != KERF_MISFIT_MODEL);
		}
	}
	rc = kerf_cluster_check(&c, &err);
	CHECK_MSG(rc == 0, err.msg);
	kerf_cluster_release(&c);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void check_nodes_parsed(const struct kerf_openb *o, size_t from)
{
	const char **names;
	uint32_t *order;

	for (size_t i = from; i < o->nr_nodes; i++)
		check_node(&o->nodes[i]);
	/* Names are unique over the whole trace. */
	names = malloc((o->nr_nodes ? o->nr_nodes : 1) * sizeof(*names));
	CHECK(names != NULL);
	for (size_t i = 0; i < o->nr_nodes; i++)
		names[i] = o->nodes[i].name;
	qsort(names, o->nr_nodes, sizeof(*names), name_cmp);
	for (size_t i = 1; i < o->nr_nodes; i++)
		CHECK(strcmp(names[i - 1], names[i]) != 0);
	free(names);
	roundtrip_nodes(o, from);
	check_cluster(o, NULL);
	/* The same nodes in reverse rank order. */
	order = malloc((o->nr_nodes ? o->nr_nodes : 1) * sizeof(*order));
	CHECK(order != NULL);
	for (size_t i = 0; i < o->nr_nodes; i++)
		order[i] = (uint32_t)(o->nr_nodes - 1 - i);
	check_cluster(o, order);
	free(order);
	/* The pods parsed before, in a cluster of these nodes. */
	check_requests(o, 0);
}

static void check_pods_parsed(const struct kerf_openb *o, size_t from)
{
	for (size_t i = from; i < o->nr_pods; i++)
		check_pod(&o->pods[i]);
	roundtrip_pods(o, from);
	check_requests(o, from);
}

static void check_failure(int rc, const struct kerf_err *err)
{
	/* "out of memory" names no file */
	fuzz_check_refusal(rc, err, input_path, false);
}

static void parse_base(struct kerf_openb *o)
{
	struct kerf_err err = { 0 };
	int rc = kerf_openb_parse_nodes(o, "base-nodes.csv", base_nodes,
					sizeof(base_nodes) - 1, &err);

	CHECK_MSG(rc == 0, err.msg);
	rc = kerf_openb_parse_pods(o, "base-pods.csv", base_pods,
				   sizeof(base_pods) - 1, &err);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(o->nr_nodes == OPENB_NR_BASE_NODES &&
	      o->nr_pods == OPENB_NR_BASE_PODS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };
	struct snapshot before;
	const char *text = (const char *)data + 1;
	bool pods;
	int rc;

	if (size < 1)
		return 0;
	pods = data[0] & 1;
	kerf_openb_init(&o);
	if (data[0] & 2)
		parse_base(&o);
	snapshot_take(&before, &o);
	if (pods)
		rc = kerf_openb_parse_pods(&o, input_path, text, size - 1, &err);
	else
		rc = kerf_openb_parse_nodes(&o, input_path, text, size - 1, &err);
	snapshot_check(&before, &o);
	if (rc < 0) {
		check_failure(rc, &err);
		CHECK(o.nr_nodes == before.nr_nodes &&
		      o.nr_pods == before.nr_pods);
	} else {
		CHECK(rc == 0 && err.code == 0);
		if (pods) {
			CHECK(o.nr_nodes == before.nr_nodes);
			check_pods_parsed(&o, before.nr_pods);
		} else {
			CHECK(o.nr_pods == before.nr_pods);
			check_nodes_parsed(&o, before.nr_nodes);
		}
	}
	kerf_openb_release(&o);
	return 0;
}
