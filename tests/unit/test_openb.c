/*
 * Unit tests for sim/openb: parsing node and pod lists (columns found by
 * header name, the full trace format and the 5-column multigpu one), every
 * malformed row rejected with "file:line" and the column in the message and
 * nothing of the failed file kept, duplicate node names, gpu_spec turned
 * into a model mask by kerf_openb_pod_request (unknown models fit nowhere),
 * kerf_openb_cluster with and without an order, and kerf_openb_load.
 * Times that would overflow in milliseconds and deletions before creation
 * are refused; a column named twice is refused and a UTF-8 byte order mark
 * skipped; fields and paths are escaped in messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/openb.h"

#define NODE_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"
#define POD_HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n"
#define FULL_HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

static int parse_nodes(struct kerf_openb *o, const char *text,
		       struct kerf_err *err)
{
	return kerf_openb_parse_nodes(o, "nodes.csv", text, strlen(text), err);
}

static int parse_pods(struct kerf_openb *o, const char *text,
		      struct kerf_err *err)
{
	return kerf_openb_parse_pods(o, "pods.csv", text, strlen(text), err);
}

static void test_parse_nodes(void **state)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_openb_init(&o);
	assert_int_equal(parse_nodes(&o, NODE_HEADER
				     "n0,32000,262144,0,\n"
				     "n1,64000,262144,2,P100\r\n"
				     "\n"
				     "n2,96000,786432,8,V100M32\n", &err), 0);
	assert_int_equal(err.code, 0);
	assert_int_equal(o.nr_nodes, 3);
	assert_string_equal(o.nodes[0].name, "n0");
	assert_string_equal(o.nodes[0].model, "");
	assert_int_equal(o.nodes[0].nr_gpus, 0);
	assert_int_equal(o.nodes[0].cpu_milli, 32000);
	assert_string_equal(o.nodes[1].model, "P100");
	assert_int_equal(o.nodes[1].nr_gpus, 2);
	assert_int_equal(o.nodes[2].mem_mib, 786432);
	assert_int_equal(o.nodes[2].nr_gpus, 8);
	/* Columns are found by name; a second file appends. */
	assert_int_equal(parse_nodes(&o, "model,extra,gpu,sn,memory_mib,cpu_milli\n"
				     "T4,x,1,m0,1000,2000\n", NULL), 0);
	assert_int_equal(o.nr_nodes, 4);
	assert_string_equal(o.nodes[3].name, "m0");
	assert_string_equal(o.nodes[3].model, "T4");
	assert_int_equal(o.nodes[3].cpu_milli, 2000);
	assert_int_equal(o.nodes[3].mem_mib, 1000);
	assert_int_equal(o.nodes[3].nr_gpus, 1);
	/* A header alone is an empty list. */
	assert_int_equal(parse_nodes(&o, NODE_HEADER, NULL), 0);
	assert_int_equal(o.nr_nodes, 4);
	kerf_openb_release(&o);
	assert_int_equal(o.nr_nodes, 0);
}

static void test_parse_pods_full(void **state)
{
	struct kerf_openb o;
	const struct kerf_openb_pod *p;

	(void)state;
	kerf_openb_init(&o);
	assert_int_equal(parse_pods(&o, FULL_HEADER
		"p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
		"p1,6000,12288,1,460,V100M16|V100M32,BE,Running,427061,,427061\n"
		"p2,4000,8192,0,0,,LS,Running,5,6,5\n"
		"p3,88000,327680,8,1000,A10,,Pending,7,8,\n", NULL), 0);
	assert_int_equal(o.nr_pods, 4);
	p = &o.pods[0];
	assert_string_equal(p->name, "p0");
	assert_int_equal(p->cpu_milli, 12000);
	assert_int_equal(p->mem_mib, 16384);
	assert_int_equal(p->nr_gpus, 1);
	assert_int_equal(p->gpu_milli, 1000);
	assert_string_equal(p->gpu_spec, "");
	assert_string_equal(p->qos, "LS");
	assert_int_equal(p->creation_s, 0);
	assert_int_equal(p->deletion_s, 12537496);
	p = &o.pods[1];
	assert_int_equal(p->gpu_milli, 460);
	assert_string_equal(p->gpu_spec, "V100M16|V100M32");
	assert_string_equal(p->qos, "BE");
	assert_int_equal(p->creation_s, 427061);
	assert_int_equal(p->deletion_s, -1);
	p = &o.pods[2];
	assert_int_equal(p->nr_gpus, 0);
	assert_int_equal(p->gpu_milli, 0);
	p = &o.pods[3];
	assert_int_equal(p->nr_gpus, 8);
	assert_string_equal(p->gpu_spec, "A10");
	assert_string_equal(p->qos, "");
	kerf_openb_release(&o);
}

static void test_parse_pods_multigpu_format(void **state)
{
	struct kerf_openb o;

	(void)state;
	kerf_openb_init(&o);
	assert_int_equal(parse_pods(&o, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
				    "openb-pod-0000,12000,16384,4,1000\n"
				    "openb-pod-0001,6000,12288,1,460\n", NULL), 0);
	assert_int_equal(o.nr_pods, 2);
	assert_string_equal(o.pods[0].name, "openb-pod-0000");
	assert_int_equal(o.pods[0].nr_gpus, 4);
	assert_int_equal(o.pods[0].gpu_milli, 1000);
	assert_int_equal(o.pods[1].gpu_milli, 460);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(o.pods[i].gpu_spec, "");
		assert_string_equal(o.pods[i].qos, "");
		assert_int_equal(o.pods[i].creation_s, -1);
		assert_int_equal(o.pods[i].deletion_s, -1);
	}
	kerf_openb_release(&o);
}

/*
 * Parse a node file of a good row then bad_row (line 3) on top of two
 * nodes already read; it must fail with msg and keep the two nodes.
 */
static void expect_bad_node(const char *bad_row, int code, const char *msg)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };
	char text[1024];

	kerf_openb_init(&o);
	assert_int_equal(parse_nodes(&o, NODE_HEADER "a,1,1,0,\nb,2,2,1,T4\n",
				     NULL), 0);
	snprintf(text, sizeof(text), NODE_HEADER "ok,1000,1000,1,T4\n%s\n",
		 bad_row);
	assert_int_equal(parse_nodes(&o, text, &err), code);
	assert_string_equal(err.msg, msg);
	assert_int_equal(o.nr_nodes, 2);
	assert_string_equal(o.nodes[0].name, "a");
	assert_string_equal(o.nodes[1].name, "b");
	assert_string_equal(o.nodes[1].model, "T4");
	kerf_openb_release(&o);
}

static void test_bad_nodes(void **state)
{
	char row[400], name[300];

	(void)state;
	expect_bad_node("n,1000,1000,1", -KERF_EPARSE,
			"nodes.csv:3: 4 fields, the header has 5");
	expect_bad_node(",1000,1000,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'sn' is empty");
	expect_bad_node("a b,1000,1000,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'sn': byte 0x20 is not allowed");
	expect_bad_node("a\x7f,1000,1000,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'sn': byte 0x7f is not allowed");
	expect_bad_node("\xc3\xa9,1000,1000,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'sn': byte 0xc3 is not allowed");
	memset(name, 'n', 254);
	name[254] = '\0';
	snprintf(row, sizeof(row), "%s,1000,1000,1,T4", name);
	expect_bad_node(row, -KERF_EPARSE,
			"nodes.csv:3: column 'sn': longer than 253 bytes");
	expect_bad_node("n,abc,1000,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'cpu_milli': 'abc' is not an integer");
	expect_bad_node("n,2147483649,1000,1,T4", -KERF_ERANGE,
			"nodes.csv:3: column 'cpu_milli': 2147483649 is outside 0..2147483648");
	expect_bad_node("n,1000,-1,1,T4", -KERF_ERANGE,
			"nodes.csv:3: column 'memory_mib': -1 is outside 0..1099511627776");
	expect_bad_node("n,1000,1099511627777,1,T4", -KERF_ERANGE,
			"nodes.csv:3: column 'memory_mib': 1099511627777 is outside 0..1099511627776");
	expect_bad_node("n,1000,,1,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'memory_mib' is empty");
	expect_bad_node("n,1000,1000,17,T4", -KERF_ERANGE,
			"nodes.csv:3: column 'gpu': 17 is outside 0..16");
	expect_bad_node("n,1000,1000,2,", -KERF_EPARSE,
			"nodes.csv:3: column 'model' is empty");
	expect_bad_node("n,1000,1000,0,T4", -KERF_EPARSE,
			"nodes.csv:3: column 'model': 'T4' given for a node with no GPUs");
	expect_bad_node("n,1000,1000,1,0123456789abcdef0123456789abcdef",
			-KERF_EPARSE,
			"nodes.csv:3: column 'model': longer than 31 bytes");
	expect_bad_node("n,1000,1000,1,T\"4\"", -KERF_EPARSE,
			"nodes.csv:3: quoted fields are not supported");
	/* Names unique across files and within one. */
	expect_bad_node("a,1000,1000,1,T4", -KERF_EEXIST,
			"nodes.csv: node 'a' is listed twice");
	expect_bad_node("ok,1000,1000,1,T4", -KERF_EEXIST,
			"nodes.csv: node 'ok' is listed twice");
}

static void test_bad_node_files(void **state)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_openb_init(&o);
	assert_int_equal(parse_nodes(&o, "", &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "nodes.csv:1: empty file, no header");
	kerf_err_clear(&err);
	assert_int_equal(parse_nodes(&o, "sn,cpu_milli,memory_mib,gpu\nx,1,1,0\n",
				     &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "nodes.csv:1: header has no column 'model'");
	kerf_err_clear(&err);
	assert_int_equal(parse_nodes(&o, "\nname,cpu_milli,memory_mib,gpu,model\n",
				     &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "nodes.csv:2: header has no column 'sn'");
	assert_int_equal(o.nr_nodes, 0);
	kerf_openb_release(&o);
}

/* As expect_bad_node, for a pod file with creation and deletion times. */
static void expect_bad_pod(const char *bad_row, int code, const char *msg)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };
	char text[1024];

	kerf_openb_init(&o);
	assert_int_equal(parse_pods(&o, POD_HEADER "a,1,1,1,500,T4,1,2\n",
				    NULL), 0);
	snprintf(text, sizeof(text), POD_HEADER "ok,1000,1000,1,500,,1,2\n%s\n",
		 bad_row);
	assert_int_equal(parse_pods(&o, text, &err), code);
	assert_string_equal(err.msg, msg);
	assert_int_equal(o.nr_pods, 1);
	assert_string_equal(o.pods[0].name, "a");
	assert_string_equal(o.pods[0].gpu_spec, "T4");
	kerf_openb_release(&o);
}

static void test_bad_pods(void **state)
{
	(void)state;
	expect_bad_pod("p,1,1", -KERF_EPARSE,
		       "pods.csv:3: 3 fields, the header has 8");
	expect_bad_pod(",1,1,0,0,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'name' is empty");
	expect_bad_pod("p q,1,1,0,0,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'name': byte 0x20 is not allowed");
	expect_bad_pod("p,x,1,0,0,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'cpu_milli': 'x' is not an integer");
	expect_bad_pod("p,1,1.5,0,0,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'memory_mib': '1.5' is not an integer");
	expect_bad_pod("p,1,1,17,1000,,1,2", -KERF_ERANGE,
		       "pods.csv:3: column 'num_gpu': 17 is outside 0..16");
	expect_bad_pod("p,1,1,-1,1000,,1,2", -KERF_ERANGE,
		       "pods.csv:3: column 'num_gpu': -1 is outside 0..16");
	expect_bad_pod("p,1,1,1,1001,,1,2", -KERF_ERANGE,
		       "pods.csv:3: column 'gpu_milli': 1001 is outside 0..1000");
	expect_bad_pod("p,1,1,0,500,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_milli': 500 on a pod with num_gpu 0");
	expect_bad_pod("p,1,1,2,500,,1,2", -KERF_EPARSE,
		       "pods.csv:3: gpu_milli 500: a fraction is only allowed with num_gpu 1");
	expect_bad_pod("p,1,1,1,0,,1,2", -KERF_EPARSE,
		       "pods.csv:3: gpu_milli 0: must be 1..1000 for a GPU pod");
	expect_bad_pod("p,1,1,1,500,T4||P100,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_spec': model names must be 1 to 31 bytes");
	expect_bad_pod("p,1,1,1,500,T4|,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_spec': model names must be 1 to 31 bytes");
	expect_bad_pod("p,1,1,1,500,|T4,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_spec': model names must be 1 to 31 bytes");
	expect_bad_pod("p,1,1,1,500,0123456789abcdef0123456789abcdef,1,2",
		       -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_spec': model names must be 1 to 31 bytes");
	expect_bad_pod("p,1,1,1,500,T 4,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'gpu_spec': bad byte in model name");
	expect_bad_pod("p,1,1,1,500,,,2", -KERF_EPARSE,
		       "pods.csv:3: column 'creation_time' is empty");
	expect_bad_pod("p,1,1,1,500,,x,2", -KERF_EPARSE,
		       "pods.csv:3: column 'creation_time': 'x' is not an integer");
	expect_bad_pod("p,1,1,1,500,,1,-2", -KERF_ERANGE,
		       "pods.csv:3: column 'deletion_time': -2 is outside 0..1000000000000");
	/* escaped: a control byte in a field cannot forge output */
	expect_bad_pod("p,1,1,1,500,,1,2\x01", -KERF_EPARSE,
		       "pods.csv:3: column 'deletion_time': '2\\x01' is not an integer");
	expect_bad_pod("p,\x1b[2J,1,1,500,,1,2", -KERF_EPARSE,
		       "pods.csv:3: column 'cpu_milli': '\\x1b[2J' is not an integer");
	/* times that would overflow in milliseconds (2^63 - 1 s x 1000) */
	expect_bad_pod("p,1,1,1,500,,9223372036854775807,9223372036854775807",
		       -KERF_ERANGE,
		       "pods.csv:3: column 'creation_time': 9223372036854775807 is outside 0..1000000000000");
	expect_bad_pod("p,1,1,1,500,,0,9223372036854775807", -KERF_ERANGE,
		       "pods.csv:3: column 'deletion_time': 9223372036854775807 is outside 0..1000000000000");
	expect_bad_pod("p,1,1,1,500,,1000000000001,1000000000001", -KERF_ERANGE,
		       "pods.csv:3: column 'creation_time': 1000000000001 is outside 0..1000000000000");
	expect_bad_pod("p,1,1,1,500,,10,9", -KERF_ERANGE,
		       "pods.csv:3: column 'deletion_time': 9 is before the creation_time 10");
}

static void test_columns(void **state)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_openb_init(&o);
	/* a column named twice is refused, with its name and line */
	assert_int_equal(parse_pods(&o, "name,cpu_milli,memory_mib,num_gpu,gpu_milli,cpu_milli\n"
				    "p,1,1,0,0,2\n", &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "pods.csv:1: column 'cpu_milli' is named twice (fields 2 and 6)");
	kerf_err_clear(&err);
	assert_int_equal(parse_nodes(&o, "\nsn,cpu_milli,memory_mib,gpu,model,gpu\n"
				     "n,1,1,0,,0\n", &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "nodes.csv:2: column 'gpu' is named twice (fields 4 and 6)");
	assert_int_equal(o.nr_nodes, 0);
	assert_int_equal(o.nr_pods, 0);
	/* a UTF-8 byte order mark before the header is skipped */
	kerf_err_clear(&err);
	assert_int_equal(parse_nodes(&o, "\xef\xbb\xbf" NODE_HEADER
				     "n0,1000,1024,1,T4\n", &err), 0);
	assert_int_equal(o.nr_nodes, 1);
	assert_string_equal(o.nodes[0].name, "n0");
	assert_int_equal(parse_pods(&o, "\xef\xbb\xbf" POD_HEADER
				    "p,1,1,1,500,,1,2\n", &err), 0);
	assert_int_equal(o.nr_pods, 1);
	assert_false(o.untimed);
	/* the 5-column lists have no times: marked, for the replay to refuse */
	assert_int_equal(parse_pods(&o, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
				    "q,1,1,1,500\n", &err), 0);
	assert_true(o.untimed);
	assert_int_equal(o.pods[1].creation_s, -1);
	kerf_openb_release(&o);
	/* a path with control characters is escaped in messages */
	kerf_openb_init(&o);
	kerf_err_clear(&err);
	assert_int_equal(kerf_openb_parse_pods(&o, "p\x1b[2J\n.csv", "x\n", 2, &err),
			 -KERF_EPARSE);
	assert_string_equal(err.msg, "p\\x1b[2J\\x0a.csv:1: header has no column 'name'");
	kerf_openb_release(&o);
}

static void test_bad_pod_files(void **state)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };

	(void)state;
	kerf_openb_init(&o);
	assert_int_equal(parse_pods(&o, "\n\n", &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "pods.csv:1: empty file, no header");
	kerf_err_clear(&err);
	assert_int_equal(parse_pods(&o, "name,cpu_milli,memory_mib,num_gpu\n",
				    &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "pods.csv:1: header has no column 'gpu_milli'");
	kerf_err_clear(&err);
	/* Empty deletion time is allowed (still running). */
	assert_int_equal(parse_pods(&o, POD_HEADER "p,1,1,1,500,,1,\n", &err),
			 0);
	assert_int_equal(o.nr_pods, 1);
	assert_int_equal(o.pods[0].deletion_s, -1);
	kerf_openb_release(&o);
}

static void test_many_rows_then_error(void **state)
{
	struct kerf_openb o;
	struct kerf_err err = { 0 };
	size_t cap = 64 * 5000, n = 0;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(text);
	/* More rows than the first allocation, then a bad one at the end. */
	n += (size_t)snprintf(text + n, cap - n, NODE_HEADER);
	for (int i = 0; i < 3000; i++)
		n += (size_t)snprintf(text + n, cap - n, "node-%d,1000,1000,1,T4\n",
				      i);
	n += (size_t)snprintf(text + n, cap - n, "last,1000,1000,1,\n");
	kerf_openb_init(&o);
	assert_int_equal(parse_nodes(&o, "sn,cpu_milli,memory_mib,gpu,model\n"
				     "first,1,1,0,\n", NULL), 0);
	assert_int_equal(kerf_openb_parse_nodes(&o, "big.csv", text, n, &err),
			 -KERF_EPARSE);
	assert_string_equal(err.msg, "big.csv:3002: column 'model' is empty");
	assert_int_equal(o.nr_nodes, 1);
	assert_string_equal(o.nodes[0].name, "first");
	/* Without the bad row the whole file is taken. */
	text[n - strlen("last,1000,1000,1,\n")] = '\0';
	assert_int_equal(parse_nodes(&o, text, NULL), 0);
	assert_int_equal(o.nr_nodes, 3001);
	assert_string_equal(o.nodes[3000].name, "node-2999");
	kerf_openb_release(&o);
	free(text);
}

static void test_model_mem(void **state)
{
	(void)state;
	assert_int_equal(kerf_openb_model_mem_mib("P100"), 16384);
	assert_int_equal(kerf_openb_model_mem_mib("T4"), 16384);
	assert_int_equal(kerf_openb_model_mem_mib("V100M16"), 16384);
	assert_int_equal(kerf_openb_model_mem_mib("V100M32"), 32768);
	assert_int_equal(kerf_openb_model_mem_mib("A10"), 24576);
	assert_int_equal(kerf_openb_model_mem_mib("H100-80GB"), 81920);
	assert_int_equal(kerf_openb_model_mem_mib("G2"), 0);
	assert_int_equal(kerf_openb_model_mem_mib("t4"), 0);
	assert_int_equal(kerf_openb_model_mem_mib(""), 0);
}

static void load_small_trace(struct kerf_openb *o)
{
	kerf_openb_init(o);
	assert_int_equal(parse_nodes(o, NODE_HEADER
				     "cpu0,32000,65536,0,\n"
				     "p100,64000,131072,2,P100\n"
				     "t4,32000,65536,1,T4\n"
				     "v100,96000,393216,8,V100M16\n", NULL), 0);
	assert_int_equal(parse_pods(o, POD_HEADER
				    "any,1000,1000,1,500,,0,1\n"
				    "two,1000,1000,1,1000,T4|V100M16,0,1\n"
				    "new,1000,1000,1,1000,A100,0,1\n"
				    "v32,1000,1000,2,1000,V100M32,0,1\n"
				    "cpu,1000,1000,0,0,T4,0,1\n"
				    "p100,4000,2000,1,250,P100,0,1\n", NULL), 0);
}

static void test_cluster_file_order(void **state)
{
	struct kerf_openb o;
	struct kerf_cluster c;

	(void)state;
	load_small_trace(&o);
	assert_int_equal(kerf_openb_cluster(&o, NULL, &c, NULL), 0);
	assert_int_equal(c.nr_nodes, 4);
	assert_int_equal(c.nr_models, 3);
	assert_string_equal(c.models[0].name, "P100");
	assert_string_equal(c.models[1].name, "T4");
	assert_string_equal(c.models[2].name, "V100M16");
	assert_int_equal(c.models[2].mem_mib, 16384);
	assert_string_equal(c.nodes[0].name, "cpu0");
	assert_int_equal(c.nodes[0].model, KERF_MODEL_NONE);
	assert_int_equal(c.nodes[0].cpu_milli, 32000);
	assert_string_equal(c.nodes[3].name, "v100");
	assert_int_equal(c.nodes[3].model, 2);
	assert_int_equal(c.nodes[3].nr_gpus, 8);
	assert_int_equal(c.nodes[3].mem_mib, 393216);
	assert_int_equal(c.nodes[3].gpu_mem_mib[7], 16384);
	assert_int_equal(kerf_cluster_check(&c, NULL), 0);
	kerf_cluster_release(&c);
	kerf_openb_release(&o);
}

static void test_cluster_with_order(void **state)
{
	static const uint32_t order[] = { 3, 0, 2, 1 };
	struct kerf_openb o;
	struct kerf_cluster c;

	(void)state;
	load_small_trace(&o);
	assert_int_equal(kerf_openb_cluster(&o, order, &c, NULL), 0);
	assert_int_equal(c.nr_nodes, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct kerf_openb_node *src = &o.nodes[order[i]];

		assert_string_equal(c.nodes[i].name, src->name);
		assert_int_equal(c.nodes[i].cpu_milli, src->cpu_milli);
		assert_int_equal(c.nodes[i].nr_gpus, src->nr_gpus);
	}
	/* Models are numbered in rank order of first use. */
	assert_string_equal(c.models[0].name, "V100M16");
	assert_string_equal(c.models[1].name, "T4");
	assert_string_equal(c.models[2].name, "P100");
	assert_int_equal(c.nodes[3].model, 2);
	kerf_cluster_release(&c);
	kerf_openb_release(&o);
}

static void test_cluster_too_many_models(void **state)
{
	struct kerf_openb o;
	struct kerf_cluster c;
	struct kerf_err err = { 0 };
	char text[8192];
	size_t n = 0;

	(void)state;
	n += (size_t)snprintf(text + n, sizeof(text) - n, NODE_HEADER);
	for (int i = 0; i <= KERF_MAX_MODELS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "n%d,1,1,1,m%d\n", i, i);
	kerf_openb_init(&o);
	assert_int_equal(parse_nodes(&o, text, NULL), 0);
	assert_int_equal(kerf_openb_cluster(&o, NULL, &c, &err), -KERF_ELIMIT);
	assert_string_equal(err.msg, "GPU model 'm64': more than 64 models");
	assert_int_equal(c.nr_nodes, 0);
	assert_null(c.nodes);
	kerf_openb_release(&o);
}

static void test_pod_request(void **state)
{
	struct kerf_openb o;
	struct kerf_cluster c;
	struct kerf_pod p;

	(void)state;
	load_small_trace(&o);
	assert_int_equal(kerf_openb_cluster(&o, NULL, &c, NULL), 0);
	/* no spec: any model */
	assert_int_equal(kerf_openb_pod_request(&o, 0, &c, &p, NULL), 0);
	assert_int_equal(p.model_mask, 0);
	assert_int_equal(p.cpu_milli, 1000);
	assert_int_equal(p.mem_mib, 1000);
	assert_int_equal(p.nr_gpus, 1);
	assert_int_equal(p.gpu_milli, 500);
	assert_int_equal(p.gpu_mem_mib, 0);
	/* two known models */
	assert_int_equal(kerf_openb_pod_request(&o, 1, &c, &p, NULL), 0);
	assert_int_equal(p.model_mask, (1u << 1) | (1u << 2));
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[1], &p), KERF_MISFIT_MODEL);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[2], &p), KERF_MISFIT_NONE);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[3], &p), KERF_MISFIT_NONE);
	assert_int_equal(c.nr_models, 3);
	/* an unknown model is added, and then fits nowhere */
	assert_int_equal(kerf_openb_pod_request(&o, 2, &c, &p, NULL), 0);
	assert_int_equal(c.nr_models, 4);
	assert_string_equal(c.models[3].name, "A100");
	assert_int_equal(c.models[3].mem_mib, 0);
	assert_int_equal(p.model_mask, 1u << 3);
	for (size_t i = 0; i < c.nr_nodes; i++)
		assert_int_equal(kerf_node_misfit(&c, &c.nodes[i], &p),
				 KERF_MISFIT_MODEL);
	/* asking again adds nothing */
	assert_int_equal(kerf_openb_pod_request(&o, 2, &c, &p, NULL), 0);
	assert_int_equal(c.nr_models, 4);
	assert_int_equal(p.model_mask, 1u << 3);
	/* a model known to openb but not in the cluster gets its memory */
	assert_int_equal(kerf_openb_pod_request(&o, 3, &c, &p, NULL), 0);
	assert_string_equal(c.models[4].name, "V100M32");
	assert_int_equal(c.models[4].mem_mib, 32768);
	assert_int_equal(p.model_mask, 1u << 4);
	assert_int_equal(p.nr_gpus, 2);
	/* a CPU-only pod ignores gpu_spec */
	assert_int_equal(kerf_openb_pod_request(&o, 4, &c, &p, NULL), 0);
	assert_int_equal(p.model_mask, 0);
	assert_int_equal(p.nr_gpus, 0);
	assert_int_equal(c.nr_models, 5);
	assert_int_equal(kerf_openb_pod_request(&o, 5, &c, &p, NULL), 0);
	assert_int_equal(p.model_mask, 1u << 0);
	assert_int_equal(kerf_node_misfit(&c, &c.nodes[1], &p), KERF_MISFIT_NONE);
	kerf_cluster_release(&c);
	kerf_openb_release(&o);
}

/* Write text to a new temporary file; its name goes to path. */
static void write_temp(char *path, size_t size, const char *text)
{
	const char *dir = getenv("TMPDIR");
	FILE *fp;
	int fd;

	snprintf(path, size, "%s/kerf-openb-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
}

static void test_load(void **state)
{
	char nodes[512], pods[512], missing[600];
	struct kerf_openb o;
	struct kerf_err err = { 0 };

	(void)state;
	write_temp(nodes, sizeof(nodes), NODE_HEADER "a,1000,1000,1,T4\n");
	write_temp(pods, sizeof(pods), POD_HEADER "p,1,1,1,300,,1,2\n");
	kerf_openb_init(&o);
	assert_int_equal(kerf_openb_load(&o, nodes, pods, &err), 0);
	assert_int_equal(o.nr_nodes, 1);
	assert_int_equal(o.nr_pods, 1);
	assert_int_equal(o.pods[0].gpu_milli, 300);
	kerf_openb_release(&o);
	snprintf(missing, sizeof(missing), "%s.missing", nodes);
	kerf_openb_init(&o);
	assert_int_equal(kerf_openb_load(&o, missing, pods, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "cannot open '"));
	assert_non_null(strstr(err.msg, ".missing': "));
	assert_int_equal(o.nr_nodes, 0);
	assert_int_equal(o.nr_pods, 0);
	kerf_openb_release(&o);
	/* A parse error names the file it was in. */
	kerf_err_clear(&err);
	kerf_openb_init(&o);
	assert_int_equal(kerf_openb_load(&o, pods, nodes, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, pods));
	assert_non_null(strstr(err.msg, ":1: header has no column 'sn'"));
	kerf_openb_release(&o);
	/* A list with a header and no rows is refused, naming the file. */
	write_temp(pods, sizeof(pods), POD_HEADER);
	kerf_err_clear(&err);
	kerf_openb_init(&o);
	assert_int_equal(kerf_openb_load(&o, nodes, pods, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, pods));
	assert_non_null(strstr(err.msg, ": no pods after the header; a trace needs at least one"));
	kerf_openb_release(&o);
	unlink(pods);
	unlink(nodes);
	write_temp(nodes, sizeof(nodes), NODE_HEADER);
	write_temp(pods, sizeof(pods), POD_HEADER "p,1,1,1,300,,1,2\n");
	kerf_err_clear(&err);
	kerf_openb_init(&o);
	assert_int_equal(kerf_openb_load(&o, nodes, pods, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, ": no nodes after the header; a trace needs at least one"));
	kerf_openb_release(&o);
	unlink(nodes);
	unlink(pods);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_nodes),
		cmocka_unit_test(test_parse_pods_full),
		cmocka_unit_test(test_parse_pods_multigpu_format),
		cmocka_unit_test(test_bad_nodes),
		cmocka_unit_test(test_bad_node_files),
		cmocka_unit_test(test_bad_pods),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_bad_pod_files),
		cmocka_unit_test(test_many_rows_then_error),
		cmocka_unit_test(test_model_mem),
		cmocka_unit_test(test_cluster_file_order),
		cmocka_unit_test(test_cluster_with_order),
		cmocka_unit_test(test_cluster_too_many_models),
		cmocka_unit_test(test_pod_request),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
