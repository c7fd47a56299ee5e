/*
 * fuzz_deviceplugin: libFuzzer target for what the device plugin decodes
 * from the kubelet's socket: the gRPC message reader (grpc/frame.h) and
 * the protobuf-c decoders of AllocateRequest and PreferredAllocationRequest
 * with the matching the plugin runs on them (deviceplugin/match.h).  The
 * first byte picks the decoder; the rest is its input.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - reader: the same messages, in the same order, whether the input is
 *    fed whole or in pieces of the sizes the input names, none over the
 *    bound; a refusal carries a message;
 *  - AllocateRequest: an accepted match names a pod in range, a refusal
 *    a message; the message re-encoded decodes to the same size;
 *  - PreferredAllocationRequest: at most allocation_size answers, each an
 *    index into available_deviceIDs, no device twice, every must_include
 *    device among them.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_deviceplugin"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "deviceplugin/match.h"
#include "deviceplugin/v1beta1/api.pb-c.h"
#include "grpc/frame.h"

/* A whole GPU, and a pod given whole GPUs. */
#define DEV(i, g, n, h) { .id = i, .gpu_index = g, .numa_node = n, .healthy = h }
#define POD(k, m) { .key = k, .gpu_mask = m }

static const struct kerf_dp_device devs[] = {
	DEV("GPU-0", 0, 0, 1), DEV("GPU-1", 1, 0, 1), DEV("GPU-2", 2, 1, 1),
	DEV("GPU-3", 3, 1, 0),
};
static const struct kerf_dp_pod_assign pods[] = {
	POD("a/one", 0x1), POD("a/two", 0x6), POD("b/all", 0xf),
};

enum { MAX_MSGS = 64, MSG_BOUND = 256 };

struct seen {
	size_t n;
	size_t len[MAX_MSGS];
	uint64_t sum[MAX_MSGS];
};

static int note(void *arg, const uint8_t *msg, size_t len)
{
	struct seen *s = arg;
	uint64_t h = 1469598103934665603u;
	CHECK(len <= MSG_BOUND);
	for (size_t i = 0; i < len; i++)
		h = (h ^ msg[i]) * 1099511628211u;
	if (s->n < MAX_MSGS) {
		s->len[s->n] = len;
		s->sum[s->n] = h;
	}
	s->n++;
	return 0;
}

static void fuzz_reader(const uint8_t *data, size_t size)
{
	struct kerf_grpc_reader a, b;
	struct seen sa = { 0 }, sb = { 0 };
	struct kerf_err ea = { 0 }, eb = { 0 };

	kerf_grpc_reader_init(&a, MSG_BOUND);
	int ra = kerf_grpc_reader_feed(&a, data, size, note, &sa, &ea);
	kerf_grpc_reader_init(&b, MSG_BOUND);
	int rb = 0;
	for (size_t off = 0, k = 0; off < size && rb == 0; k++) {
		size_t step = 1 + data[k % size] % 13;
		if (step > size - off)
			step = size - off;
		rb = kerf_grpc_reader_feed(&b, data + off, step, note, &sb, &eb);
		off += step;
	}
	CHECK(ra == rb);
	CHECK(sa.n == sb.n);
	for (size_t i = 0; i < sa.n && i < MAX_MSGS; i++)
		CHECK(sa.len[i] == sb.len[i] && sa.sum[i] == sb.sum[i]);
	if (ra < 0)
		CHECK(ea.msg[0] != '\0' && eb.msg[0] != '\0');
	kerf_grpc_reader_free(&a);
	kerf_grpc_reader_free(&b);
}

static void fuzz_allocate(const uint8_t *data, size_t size)
{
	V1beta1__AllocateRequest *req = v1beta1__allocate_request__unpack(NULL, size, data);
	if (!req)
		return;
	for (size_t c = 0; c < req->n_container_requests; c++) {
		const V1beta1__ContainerAllocateRequest *cr = req->container_requests[c];
		struct kerf_err err = { 0 };
		int rc = kerf_dp_allocate_match(devs, 4, cr->devices_ids, cr->n_devices_ids,
						pods, 3, &err);
		if (rc >= 0)
			CHECK(rc < 3);
		else
			CHECK(err.msg[0] != '\0');
	}
	/*
	 * The round trip is protobuf-c's, checked for messages it fully knows:
	 * one with unknown fields (field number 0 in a two-byte varint tag
	 * among them, which protobuf-c keeps but will not read back once
	 * re-encoded in one byte) is not round-tripped.  The plugin never
	 * re-encodes a request; it reads devices_ids, checked above.
	 */
	if (req->base.n_unknown_fields) {
		v1beta1__allocate_request__free_unpacked(req, NULL);
		return;
	}
	size_t len = v1beta1__allocate_request__get_packed_size(req);
	uint8_t *buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	CHECK(v1beta1__allocate_request__pack(req, buf) == len);
	V1beta1__AllocateRequest *again = v1beta1__allocate_request__unpack(NULL, len, buf);
	CHECK(again != NULL);
	CHECK(again->n_container_requests == req->n_container_requests);
	CHECK(v1beta1__allocate_request__get_packed_size(again) == len);
	v1beta1__allocate_request__free_unpacked(again, NULL);
	free(buf);
	v1beta1__allocate_request__free_unpacked(req, NULL);
}

static void fuzz_prefer(const uint8_t *data, size_t size)
{
	V1beta1__PreferredAllocationRequest *req =
		v1beta1__preferred_allocation_request__unpack(NULL, size, data);
	if (!req)
		return;
	for (size_t c = 0; c < req->n_container_requests; c++) {
		const V1beta1__ContainerPreferredAllocationRequest *cr = req->container_requests[c];
		if (cr->allocation_size < 0 || cr->allocation_size > 64)
			continue; /* the plugin refuses these before kerf_dp_prefer */
		size_t want = (size_t)cr->allocation_size;
		size_t out[64];
		struct kerf_err err = { 0 };
		int n = kerf_dp_prefer(devs, 4, cr->available_deviceids, cr->n_available_deviceids,
				       cr->must_include_deviceids, cr->n_must_include_deviceids,
				       want, pods, 3, out, &err);
		if (n < 0) {
			CHECK(err.msg[0] != '\0');
			continue;
		}
		CHECK((size_t)n <= want);
		for (int i = 0; i < n; i++) {
			CHECK(out[i] < cr->n_available_deviceids);
			for (int j = 0; j < i; j++)
				CHECK(strcmp(cr->available_deviceids[out[i]],
					     cr->available_deviceids[out[j]]) != 0);
		}
		for (size_t m = 0; m < cr->n_must_include_deviceids && (size_t)n == want; m++) {
			int found = 0;
			for (int i = 0; i < n; i++)
				found |= strcmp(cr->available_deviceids[out[i]],
						cr->must_include_deviceids[m]) == 0;
			CHECK(found);
		}
	}
	v1beta1__preferred_allocation_request__free_unpacked(req, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_reader(data + 1, size - 1);
		break;
	case 1:
		fuzz_allocate(data + 1, size - 1);
		break;
	default:
		fuzz_prefer(data + 1, size - 1);
		break;
	}
	return 0;
}
