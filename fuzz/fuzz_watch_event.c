/*
 * fuzz_watch_event: libFuzzer target for the watch-line decoder
 * (kube/watch_event.c) and what the informer does with the lines
 * (kube/informer.c, kube/informer_store.c): the API server's stream, cut
 * into lines by kube/lines.c, is untrusted input.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks:
 *  - each line decodes or fails with -KERF_EPARSE and a "watch event: "
 *    message; a decoded event has an object and, unless it is an ERROR, a
 *    resourceVersion;
 *  - fed to an informer (on the fake ops), the cache holds exactly the
 *    compact objects not yet freed, adds minus deletes, and freeing the
 *    informer frees them all.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_watch_event"
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/rng.h"
#include "kube/fake.h"
#include "kube/informer.h"
#include "kube/lines.h"
#include "kube/watch_event.h"

static long live;

static void *decode(void *arg, const json_t *obj)
{
	(void)arg;
	if (json_object_get(obj, "skip"))
		return NULL;
	live++;
	return malloc(1);
}

static void free_compact(void *arg, void *p)
{
	(void)arg;
	live--;
	free(p);
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct kerf_informer *inf = arg;
	struct kerf_kube_event ev;
	struct kerf_err err = { 0 };

	if (kerf_kube_event_decode(&ev, line, len, &err) == 0) {
		CHECK(ev.object);
		CHECK(ev.type == KERF_KUBE_ERROR || ev.resource_version);
		kerf_kube_event_release(&ev);
	} else {
		CHECK(err.code == -KERF_EPARSE);
		CHECK(strncmp(err.msg, "watch event: ", 13) == 0);
		CHECK(!ev.object);
	}
	kerf_informer_apply_line(inf, line, len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_kube_fake *fake = kerf_kube_fake_new();
	struct kerf_kube_ops ops;
	struct kerf_rng rng;
	struct kerf_informer_handlers h = { .decode = decode, .free = free_compact };
	struct kerf_informer_opts o = { .path = "/api/v1/pods", .rng = &rng };
	const struct kerf_informer_stats *st;
	struct kerf_informer *inf;
	struct kerf_kube_lines lines;

	CHECK(fake);
	kerf_kube_fake_ops(fake, &ops);
	kerf_rng_seed(&rng, 1);
	inf = kerf_informer_new(&ops, &o, &h, NULL);
	CHECK(inf);
	kerf_kube_lines_init(&lines, 1 << 16);
	kerf_kube_lines_feed(&lines, (const char *)data, size, on_line, inf);
	kerf_kube_lines_release(&lines);
	st = kerf_informer_stats(inf);
	CHECK((long)kerf_informer_size(inf) == live);
	CHECK(st->adds - st->deletes == kerf_informer_size(inf));
	kerf_informer_free(inf);
	CHECK(live == 0);
	kerf_kube_fake_free(fake);
	return 0;
}
