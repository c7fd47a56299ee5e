#include "sim/event_queue.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/grow.h"

void kerf_evq_init(struct kerf_event_queue *q)
{
	memset(q, 0, sizeof(*q));
}

void kerf_evq_release(struct kerf_event_queue *q)
{
	free(q->ev);
	kerf_evq_init(q);
}

static bool before(const struct kerf_event *a, const struct kerf_event *b)
{
	if (a->at_ms != b->at_ms)
		return a->at_ms < b->at_ms;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->seq < b->seq;
}

int kerf_evq_push(struct kerf_event_queue *q, struct kerf_event e)
{
	size_t i;

	if (KERF_GROW(q->ev, q->alloc, q->nr + 1) < 0)
		return -KERF_ENOMEM;
	e.seq = q->next_seq++;
	i = q->nr++;
	while (i > 0 && before(&e, &q->ev[(i - 1) / 2])) {
		q->ev[i] = q->ev[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->ev[i] = e;
	return 0;
}

int kerf_evq_pop(struct kerf_event_queue *q, struct kerf_event *e)
{
	struct kerf_event last;
	size_t i = 0;

	if (q->nr == 0)
		return 0;
	*e = q->ev[0];
	last = q->ev[--q->nr];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct kerf_event *best = &last;

		if (l < q->nr && before(&q->ev[l], best)) {
			m = l;
			best = &q->ev[l];
		}
		if (r < q->nr && before(&q->ev[r], best))
			m = r;
		if (m == i)
			break;
		q->ev[i] = q->ev[m];
		i = m;
	}
	if (q->nr > 0)
		q->ev[i] = last;
	return 1;
}
