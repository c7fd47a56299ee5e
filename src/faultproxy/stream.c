/*
 * stream: a watch answer on its way down to kerf, one line at a time, and
 * the faults that happen to streams: an ERROR 410 after N events (then
 * the clean end the real server gives), a stream cut after N events or T
 * ms (the connection dropped without the last chunk).
 *
 * libmicrohttpd calls the reader on the connection's thread; it waits for
 * the upstream transfer's bytes in short steps, so a stopping proxy or a
 * drop deadline is noticed within 100 ms.
 */
#include "faultproxy/faultproxy_int.h"

#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

struct fp_stream *kerf_fp_stream_new(struct kerf_fault_proxy *p,
				     struct fp_upstream *up,
				     const struct kerf_fault_rates *rates,
				     const char *start_rv, char *text,
				     size_t len)
{
	struct fp_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->p = p;
	s->up = up;
	s->rates = *rates;
	snprintf(s->start_rv, sizeof(s->start_rv), "%s", start_rv);
	snprintf(s->last_rv, sizeof(s->last_rv), "%s", start_rv);
	kerf_buf_init(&s->line, 64 << 20);
	kerf_buf_init(&s->out, 0);
	s->start_ms = kerf_fp_now_ms();
	if (text) {
		s->out.data = text;
		s->out.len = s->out.alloc = len;
		s->end_after_out = true;
	}
	return s;
}

static void count(struct fp_stream *s, uint64_t *counter)
{
	pthread_mutex_lock(&s->p->mu);
	(*counter)++;
	pthread_mutex_unlock(&s->p->mu);
}

/* A whole line from upstream: passed down, and maybe a fault after it. */
static void on_line(struct fp_stream *s, const char *line, size_t len)
{
	json_t *ev = json_loadb(line, len, 0, NULL);
	const char *type = json_string_value(json_object_get(ev, "type"));
	const char *rv = json_string_value(json_object_get(
		json_object_get(json_object_get(ev, "object"), "metadata"),
		"resourceVersion"));
	bool event = type && strcmp(type, "BOOKMARK") && strcmp(type, "ERROR");

	if (rv)
		snprintf(s->last_rv, sizeof(s->last_rv), "%s", rv);
	json_decref(ev);
	if (kerf_buf_add(&s->out, line, len) < 0 ||
	    kerf_buf_add(&s->out, "\n", 1) < 0) {
		s->drop_after_out = true;
		return;
	}
	count(s, &s->p->counts.watch_events);
	if (!event)
		return;
	s->events++;
	if (s->rates.gone_after_events && s->events == s->rates.gone_after_events) {
		size_t n;
		char *err = kerf_fp_expired_line(s->start_rv, s->last_rv, &n);

		if (err && kerf_buf_add(&s->out, err, n) == 0) {
			count(s, &s->p->counts.gone_mid_stream);
			s->end_after_out = true;
		} else {
			s->drop_after_out = true;
		}
		free(err);
		return;
	}
	if (s->rates.drop_after_events && s->events == s->rates.drop_after_events) {
		s->drop_after_out = true;
		count(s, &s->p->counts.drops);
	}
}

/* Take what upstream sent (waiting up to 100 ms for some) into lines. */
static void pull(struct fp_stream *s)
{
	struct fp_upstream *u = s->up;
	char *data = NULL;
	size_t len = 0, i, start = 0;
	bool finished;

	pthread_mutex_lock(&u->mu);
	if (u->body.len == 0 && !u->finished) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&u->cond, &u->mu, &ts);
	}
	if (u->body.len)
		data = kerf_buf_detach(&u->body, &len);
	finished = u->finished && u->body.len == 0;
	pthread_cond_broadcast(&u->cond);
	pthread_mutex_unlock(&u->mu);
	for (i = 0; i < len && !s->end_after_out && !s->drop_after_out; i++) {
		if (data[i] != '\n')
			continue;
		if (s->line.len) {
			if (kerf_buf_add(&s->line, data + start, i - start) < 0) {
				s->drop_after_out = true;
				break;
			}
			on_line(s, s->line.data, s->line.len);
			kerf_buf_reset(&s->line);
		} else {
			on_line(s, data + start, i - start);
		}
		start = i + 1;
	}
	if (start < len && !s->end_after_out && !s->drop_after_out &&
	    kerf_buf_add(&s->line, data + start, len - start) < 0)
		s->drop_after_out = true;
	free(data);
	if (finished && !s->end_after_out && !s->drop_after_out) {
		/* the server ended it: cleanly, or it dropped */
		if (u->result == CURLE_OK)
			s->end_after_out = true;
		else
			s->drop_after_out = true;
	}
}

ssize_t kerf_fp_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct fp_stream *s = cls;
	size_t n;

	(void)pos;
	for (;;) {
		if (s->out_off < s->out.len) {
			n = s->out.len - s->out_off;
			if (n > max)
				n = max;
			memcpy(buf, s->out.data + s->out_off, n);
			s->out_off += n;
			if (s->out_off == s->out.len) {
				kerf_buf_reset(&s->out);
				s->out_off = 0;
			}
			return (ssize_t)n;
		}
		if (s->drop_after_out)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (s->end_after_out || !s->up)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (s->p->stopping)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (s->rates.drop_after_ms &&
		    kerf_fp_now_ms() - s->start_ms >= s->rates.drop_after_ms) {
			count(s, &s->p->counts.drops);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		pull(s);
	}
}

void kerf_fp_stream_free(void *cls)
{
	struct fp_stream *s = cls;

	if (!s)
		return;
	if (s->up) {
		kerf_fp_upstream_release(s->up);
		free(s->up);
	}
	kerf_buf_release(&s->line);
	kerf_buf_release(&s->out);
	free(s);
}
