#include "sim/openb.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "format/csv.h"
#include "format/file.h"

enum {
	OPENB_MAX_BYTES = 256 << 20,      /* one trace file */
	OPENB_MAX_ROWS = 4 << 20,
	OPENB_NAME_MAX = 253,             /* a Kubernetes object name */
};

#define OPENB_MAX_CPU_MILLI KERF_MAX_CPU_MILLI
#define OPENB_MAX_MEM_MIB KERF_MAX_MEM_MIB

void kerf_openb_init(struct kerf_openb *o)
{
	memset(o, 0, sizeof(*o));
	kerf_arena_init(&o->arena, 0);
}

void kerf_openb_release(struct kerf_openb *o)
{
	free(o->nodes);
	free(o->pods);
	kerf_arena_release(&o->arena);
	kerf_openb_init(o);
}

static const struct {
	const char *model;
	int32_t mem_mib;
} openb_models[] = {
	{ "P100", 16384 },  { "T4", 16384 },      { "V100M16", 16384 },
	{ "V100M32", 32768 }, { "A10", 24576 },
	/* models of the built-in demo */
	{ "H100-80GB", 81920 }, { "A100-80GB", 81920 }, { "L4", 24576 },
};

int32_t kerf_openb_model_mem_mib(const char *model)
{
	for (size_t i = 0; i < sizeof(openb_models) / sizeof(openb_models[0]); i++)
		if (strcmp(openb_models[i].model, model) == 0)
			return openb_models[i].mem_mib;
	return 0;
}

static int check_name(const struct kerf_csv *r, int col, const char *column,
		      size_t max, struct kerf_err *err)
{
	const char *s = r->fields[col];
	size_t n = strlen(s);

	if (n == 0)
		return kerf_err_set(err, -KERF_EPARSE, "%s:%u: column '%s' is empty",
				    r->path, r->line, column);
	if (n > max)
		return kerf_err_set(err, -KERF_EPARSE,
				    "%s:%u: column '%s': longer than %zu bytes",
				    r->path, r->line, column, max);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch <= ' ' || ch >= 0x7f)
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: column '%s': byte 0x%02x is not allowed",
					    r->path, r->line, column, ch);
	}
	return 0;
}

/* Checks each '|'-separated model name of a gpu_spec. */
static int check_spec(const struct kerf_csv *r, int col, struct kerf_err *err)
{
	const char *s = r->fields[col];

	if (*s == '\0')
		return 0;
	for (;;) {
		const char *bar = strchr(s, '|');
		size_t n = bar ? (size_t)(bar - s) : strlen(s);

		if (n == 0 || n >= KERF_MODEL_NAME_MAX)
			return kerf_err_set(err, -KERF_EPARSE,
					    "%s:%u: column 'gpu_spec': model names must be 1 to %d bytes",
					    r->path, r->line, KERF_MODEL_NAME_MAX - 1);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] <= ' ' ||
			    (unsigned char)s[i] >= 0x7f)
				return kerf_err_set(err, -KERF_EPARSE,
						    "%s:%u: column 'gpu_spec': bad byte in model name",
						    r->path, r->line);
		if (!bar)
			return 0;
		s = bar + 1;
	}
}

static int grow(void **arr, size_t *alloc, size_t need, size_t elem)
{
	if (need > OPENB_MAX_ROWS)
		return -KERF_ELIMIT;
	return kerf_grow_(arr, alloc, need, elem, false);
}

static const char *dup_field(struct kerf_openb *o, const char *s)
{
	return kerf_arena_strndup(&o->arena, s, strlen(s));
}

static int read_header(struct kerf_csv *r, struct kerf_err *err)
{
	int rc = kerf_csv_header(r, err);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return kerf_err_set(err, -KERF_EPARSE, "%s:1: empty file, no header",
				    r->path);
	return 0;
}

static int need_col(const struct kerf_csv *r, const char *name,
		    struct kerf_err *err)
{
	int i = kerf_csv_find(r, name);

	if (i < 0)
		return kerf_err_set(err, -KERF_EPARSE,
				    "%s:%u: header has no column '%s'", r->path,
				    r->line, name);
	return i;
}

static int node_name_cmp(const void *a, const void *b)
{
	const struct kerf_openb_node *x = *(const struct kerf_openb_node *const *)a;
	const struct kerf_openb_node *y = *(const struct kerf_openb_node *const *)b;

	return strcmp(x->name, y->name);
}

static int check_unique_nodes(const struct kerf_openb *o, const char *path,
			      struct kerf_err *err)
{
	size_t n = o->nr_nodes;
	const struct kerf_openb_node **v;
	int rc = 0;

	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = &o->nodes[i];
	qsort(v, n, sizeof(*v), node_name_cmp);
	for (size_t i = 1; i < n && rc == 0; i++)
		if (strcmp(v[i - 1]->name, v[i]->name) == 0)
			rc = kerf_err_set(err, -KERF_EEXIST,
					  "%s: node '%s' is listed twice", path,
					  v[i]->name);
	free(v);
	return rc;
}

int kerf_openb_parse_nodes(struct kerf_openb *o, const char *path,
			   const char *data, size_t len, struct kerf_err *err)
{
	struct kerf_csv *r = malloc(sizeof(*r));
	size_t before = o->nr_nodes;
	int c_sn, c_cpu, c_mem, c_gpu, c_model, rc, width;

	if (!r)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_csv_init(r, path, data, len);
	rc = read_header(r, err);
	if (rc < 0)
		goto out;
	width = r->nr_fields;
	if ((rc = c_sn = need_col(r, "sn", err)) < 0 ||
	    (rc = c_cpu = need_col(r, "cpu_milli", err)) < 0 ||
	    (rc = c_mem = need_col(r, "memory_mib", err)) < 0 ||
	    (rc = c_gpu = need_col(r, "gpu", err)) < 0 ||
	    (rc = c_model = need_col(r, "model", err)) < 0)
		goto out;
	while ((rc = kerf_csv_next(r, err)) > 0) {
		struct kerf_openb_node *n;
		int64_t cpu, mem, gpu;

		if (r->nr_fields != width) {
			rc = kerf_err_set(err, -KERF_EPARSE,
					  "%s:%u: %d fields, the header has %d",
					  r->path, r->line, r->nr_fields, width);
			break;
		}
		if ((rc = check_name(r, c_sn, "sn", OPENB_NAME_MAX, err)) < 0 ||
		    (rc = kerf_csv_int(r, c_cpu, "cpu_milli", 0,
				       OPENB_MAX_CPU_MILLI, &cpu, err)) < 0 ||
		    (rc = kerf_csv_int(r, c_mem, "memory_mib", 0,
				       OPENB_MAX_MEM_MIB, &mem, err)) < 0 ||
		    (rc = kerf_csv_int(r, c_gpu, "gpu", 0, KERF_NODE_MAX_GPUS,
				       &gpu, err)) < 0)
			break;
		if (gpu > 0 &&
		    (rc = check_name(r, c_model, "model", KERF_MODEL_NAME_MAX - 1,
				     err)) < 0)
			break;
		if (gpu == 0 && r->fields[c_model][0] != '\0') {
			char shown[64];

			rc = kerf_err_set(err, -KERF_EPARSE,
					  "%s:%u: column 'model': '%s' given for a node with no GPUs",
					  r->path, r->line,
					  kerf_escape(shown, sizeof(shown),
						      r->fields[c_model]));
			break;
		}
		if ((rc = grow((void **)&o->nodes, &o->alloc_nodes,
			       o->nr_nodes + 1, sizeof(*o->nodes))) < 0) {
			kerf_err_set(err, rc, "%s:%u: %s", r->path, r->line,
				     kerf_strerror(rc));
			break;
		}
		n = &o->nodes[o->nr_nodes];
		n->name = dup_field(o, r->fields[c_sn]);
		n->model = dup_field(o, r->fields[c_model]);
		if (!n->name || !n->model) {
			rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
			break;
		}
		n->cpu_milli = cpu;
		n->mem_mib = mem;
		n->nr_gpus = (int)gpu;
		o->nr_nodes++;
	}
	if (rc == 0)
		rc = check_unique_nodes(o, r->path, err);
out:
	if (rc < 0)
		o->nr_nodes = before;
	free(r);
	return rc < 0 ? rc : 0;
}

struct pod_cols {
	int name, cpu, mem, num_gpu, gpu_milli;
	int spec, qos, created, deleted;     /* -1 when absent */
};

static int parse_pod_row(struct kerf_openb *o, const struct kerf_csv *r,
			 const struct pod_cols *c, struct kerf_err *err)
{
	struct kerf_openb_pod *p;
	int64_t cpu, mem, num, milli, created = -1, deleted = -1;
	struct kerf_pod req;
	struct kerf_err why = { 0 };
	int rc;

	if ((rc = check_name(r, c->name, "name", OPENB_NAME_MAX, err)) < 0 ||
	    (rc = kerf_csv_int(r, c->cpu, "cpu_milli", 0, OPENB_MAX_CPU_MILLI,
			       &cpu, err)) < 0 ||
	    (rc = kerf_csv_int(r, c->mem, "memory_mib", 0, OPENB_MAX_MEM_MIB,
			       &mem, err)) < 0 ||
	    (rc = kerf_csv_int(r, c->num_gpu, "num_gpu", 0, KERF_NODE_MAX_GPUS,
			       &num, err)) < 0 ||
	    (rc = kerf_csv_int(r, c->gpu_milli, "gpu_milli", 0, KERF_GPU_MILLI,
			       &milli, err)) < 0)
		return rc;
	if (c->spec >= 0 && (rc = check_spec(r, c->spec, err)) < 0)
		return rc;
	if (c->created >= 0 &&
	    (rc = kerf_csv_int(r, c->created, "creation_time", 0,
			       KERF_OPENB_MAX_TIME_S, &created, err)) < 0)
		return rc;
	if (c->deleted >= 0 && r->fields[c->deleted][0] != '\0' &&
	    (rc = kerf_csv_int(r, c->deleted, "deletion_time", 0,
			       KERF_OPENB_MAX_TIME_S, &deleted, err)) < 0)
		return rc;
	if (deleted >= 0 && created >= 0 && deleted < created)
		return kerf_err_set(err, -KERF_ERANGE,
				    "%s:%u: column 'deletion_time': %lld is before the creation_time %lld",
				    r->path, r->line, (long long)deleted,
				    (long long)created);
	req = (struct kerf_pod){
		.cpu_milli = cpu,
		.mem_mib = mem,
		.nr_gpus = (uint8_t)num,
		.gpu_milli = (int32_t)milli,
	};
	if (num == 0 && milli != 0)
		return kerf_err_set(err, -KERF_EPARSE,
				    "%s:%u: column 'gpu_milli': %lld on a pod with num_gpu 0",
				    r->path, r->line, (long long)milli);
	if (kerf_pod_validate(&req, &why) < 0)
		return kerf_err_set(err, -KERF_EPARSE, "%s:%u: %s", r->path,
				    r->line, why.msg);
	if ((rc = grow((void **)&o->pods, &o->alloc_pods, o->nr_pods + 1,
		       sizeof(*o->pods))) < 0)
		return kerf_err_set(err, rc, "%s:%u: %s", r->path, r->line,
				    kerf_strerror(rc));
	p = &o->pods[o->nr_pods];
	p->name = dup_field(o, r->fields[c->name]);
	p->gpu_spec = dup_field(o, c->spec >= 0 ? r->fields[c->spec] : "");
	p->qos = dup_field(o, c->qos >= 0 ? r->fields[c->qos] : "");
	if (!p->name || !p->gpu_spec || !p->qos)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	p->cpu_milli = cpu;
	p->mem_mib = mem;
	p->nr_gpus = (int)num;
	p->gpu_milli = (int32_t)milli;
	p->creation_s = created;
	p->deletion_s = deleted;
	o->nr_pods++;
	return 0;
}

int kerf_openb_parse_pods(struct kerf_openb *o, const char *path,
			  const char *data, size_t len, struct kerf_err *err)
{
	struct kerf_csv *r = malloc(sizeof(*r));
	size_t before = o->nr_pods;
	struct pod_cols c;
	int rc, width;

	if (!r)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	kerf_csv_init(r, path, data, len);
	rc = read_header(r, err);
	if (rc < 0)
		goto out;
	width = r->nr_fields;
	if ((rc = c.name = need_col(r, "name", err)) < 0 ||
	    (rc = c.cpu = need_col(r, "cpu_milli", err)) < 0 ||
	    (rc = c.mem = need_col(r, "memory_mib", err)) < 0 ||
	    (rc = c.num_gpu = need_col(r, "num_gpu", err)) < 0 ||
	    (rc = c.gpu_milli = need_col(r, "gpu_milli", err)) < 0)
		goto out;
	c.spec = kerf_csv_find(r, "gpu_spec");
	c.qos = kerf_csv_find(r, "qos");
	c.created = kerf_csv_find(r, "creation_time");
	c.deleted = kerf_csv_find(r, "deletion_time");
	while ((rc = kerf_csv_next(r, err)) > 0) {
		if (r->nr_fields != width) {
			rc = kerf_err_set(err, -KERF_EPARSE,
					  "%s:%u: %d fields, the header has %d",
					  r->path, r->line, r->nr_fields, width);
			break;
		}
		rc = parse_pod_row(o, r, &c, err);
		if (rc < 0)
			break;
	}
out:
	if (rc < 0)
		o->nr_pods = before;
	else if (c.created < 0 || c.deleted < 0)
		o->untimed = true;
	free(r);
	return rc < 0 ? rc : 0;
}

int kerf_openb_no_rows(const char *path, const char *what, struct kerf_err *err)
{
	char shown[KERF_CSV_PATH_SHOWN];

	return kerf_err_set(err, -KERF_EPARSE,
			    "%s: no %s after the header; a trace needs at least one",
			    kerf_escape(shown, sizeof(shown), path), what);
}

int kerf_openb_load(struct kerf_openb *o, const char *nodes_path,
		    const char *pods_path, struct kerf_err *err)
{
	struct kerf_file f;
	int rc = kerf_file_read(&f, nodes_path, OPENB_MAX_BYTES, err);

	if (rc < 0)
		return rc;
	rc = kerf_openb_parse_nodes(o, nodes_path, f.data, f.len, err);
	kerf_file_release(&f);
	if (rc == 0 && o->nr_nodes == 0)
		rc = kerf_openb_no_rows(nodes_path, "nodes", err);
	if (rc < 0)
		return rc;
	rc = kerf_file_read(&f, pods_path, OPENB_MAX_BYTES, err);
	if (rc < 0)
		return rc;
	rc = kerf_openb_parse_pods(o, pods_path, f.data, f.len, err);
	kerf_file_release(&f);
	if (rc == 0 && o->nr_pods == 0)
		rc = kerf_openb_no_rows(pods_path, "pods", err);
	return rc;
}

int kerf_openb_cluster(const struct kerf_openb *o, const uint32_t *order,
		       struct kerf_cluster *c, struct kerf_err *err)
{
	kerf_cluster_init(c);
	for (size_t i = 0; i < o->nr_nodes; i++) {
		const struct kerf_openb_node *n =
			&o->nodes[order ? order[i] : i];
		int model = KERF_MODEL_NONE, rc;

		if (n->nr_gpus > 0) {
			model = kerf_cluster_model(
				c, n->model, kerf_openb_model_mem_mib(n->model),
				err);
			if (model < 0) {
				kerf_cluster_release(c);
				return model;
			}
		}
		rc = kerf_cluster_add_node(c, n->name, n->cpu_milli, n->mem_mib,
					   model, n->nr_gpus, err);
		if (rc < 0) {
			kerf_cluster_release(c);
			return rc;
		}
	}
	return 0;
}

int kerf_openb_pod_request(const struct kerf_openb *o, size_t i,
			   struct kerf_cluster *c, struct kerf_pod *p,
			   struct kerf_err *err)
{
	const struct kerf_openb_pod *src = &o->pods[i];
	const char *s = src->gpu_spec;

	*p = (struct kerf_pod){
		.cpu_milli = src->cpu_milli,
		.mem_mib = src->mem_mib,
		.gpu_milli = src->gpu_milli,
		.nr_gpus = (uint8_t)src->nr_gpus,
	};
	while (*s && src->nr_gpus > 0) {
		char name[KERF_MODEL_NAME_MAX];
		const char *bar = strchr(s, '|');
		size_t n = bar ? (size_t)(bar - s) : strlen(s);
		int m;

		if (n == 0 || n >= sizeof(name))
			return kerf_err_set(err, -KERF_EPARSE,
					    "pod '%s': bad gpu_spec", src->name);
		memcpy(name, s, n);
		name[n] = '\0';
		m = kerf_cluster_model(c, name, kerf_openb_model_mem_mib(name),
				       err);
		if (m < 0)
			return m;
		p->model_mask |= (uint64_t)1 << m;
		s = bar ? bar + 1 : s + n;
	}
	return 0;
}
