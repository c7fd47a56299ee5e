/*
 * events: the NVML event thread and its queue (events.h).
 */
#include "agent/events.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml/health.h"

enum {
	QUEUE_MAX = 1024,
	MAX_GPUS = 64,
	WAIT_MS = 1000,
	BACKOFF_MIN_MS = 1000,
	BACKOFF_MAX_MS = 30000,
};

struct kerf_agent_events {
	const struct kerf_nvml *nv;
	nvmlEventSet_t set;
	nvmlDevice_t handles[MAX_GPUS];
	unsigned nr;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	bool stop;                    /* under mu */
	struct kerf_agent_event q[QUEUE_MAX];
	size_t head, len;             /* under mu */
	struct kerf_agent_event overflow[MAX_GPUS];
	uint64_t overflow_mask;       /* under mu */
	struct kerf_agent_event_stats st;  /* under mu */
};

int64_t kerf_agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool takes_out(const struct kerf_agent_event *ev)
{
	struct kerf_health_verdict v;

	if (ev->kind != KERF_AGENT_EV_NVML)
		return true;
	kerf_health_decide(NVML_SUCCESS, &ev->ev, &v);
	return v.actions & (KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_INSTANCE_UNHEALTHY |
			    KERF_HEALTH_CORDON_NODE | KERF_HEALTH_KILL_POD);
}

static void push(struct kerf_agent_events *e, const struct kerf_agent_event *ev)
{
	pthread_mutex_lock(&e->mu);
	if (e->len < QUEUE_MAX) {
		e->q[(e->head + e->len) % QUEUE_MAX] = *ev;
		e->len++;
	} else if (ev->gpu >= 0 && ev->gpu < MAX_GPUS && takes_out(ev) &&
		   !(e->overflow_mask >> ev->gpu & 1)) {
		e->overflow[ev->gpu] = *ev;
		e->overflow_mask |= 1ull << ev->gpu;
	} else {
		e->st.dropped++;
	}
	pthread_mutex_unlock(&e->mu);
}

static bool stopping(struct kerf_agent_events *e)
{
	pthread_mutex_lock(&e->mu);
	bool s = e->stop;
	pthread_mutex_unlock(&e->mu);
	return s;
}

static void count(struct kerf_agent_events *e, uint64_t *field)
{
	pthread_mutex_lock(&e->mu);
	(*field)++;
	pthread_mutex_unlock(&e->mu);
}

/* Sleep ms in 100 ms steps; false when asked to stop. */
static bool pause_ms(struct kerf_agent_events *e, int ms)
{
	for (int slept = 0; slept < ms; slept += 100) {
		if (stopping(e))
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
	}
	return !stopping(e);
}

static int gpu_of(const struct kerf_agent_events *e, nvmlDevice_t dev)
{
	for (unsigned i = 0; i < e->nr; i++)
		if (e->handles[i] == dev)
			return (int)i;
	return -1;
}

static void *run(void *arg)
{
	struct kerf_agent_events *e = arg;
	int backoff_ms = 0;

	while (!stopping(e)) {
		struct kerf_agent_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.rc = e->nv->event_set_wait_v2(e->set, &ev.ev, WAIT_MS);
		ev.at_ms = kerf_agent_now_ms();
		ev.gpu = -1;
		count(e, &e->st.waits);
		if (ev.rc == NVML_SUCCESS || ev.rc == NVML_ERROR_TIMEOUT) {
			if (backoff_ms) {
				struct kerf_agent_event rec = { .kind = KERF_AGENT_EV_RECOVERED,
								.gpu = -1, .at_ms = ev.at_ms };
				push(e, &rec);
				backoff_ms = 0;
			}
			if (ev.rc == NVML_SUCCESS) {
				ev.kind = KERF_AGENT_EV_NVML;
				ev.gpu = gpu_of(e, ev.ev.device);
				count(e, &e->st.events);
				push(e, &ev);
			}
			continue;
		}
		count(e, &e->st.wait_errors);
		if (ev.rc == NVML_ERROR_GPU_IS_LOST) {
			ev.kind = KERF_AGENT_EV_NVML;   /* the verdict: a lost GPU */
			push(e, &ev);
		} else if (!backoff_ms) {
			ev.kind = KERF_AGENT_EV_WAIT_FAILED;
			push(e, &ev);
		}
		backoff_ms = backoff_ms ? backoff_ms * 2 : BACKOFF_MIN_MS;
		if (backoff_ms > BACKOFF_MAX_MS)
			backoff_ms = BACKOFF_MAX_MS;
		if (!pause_ms(e, backoff_ms))
			break;
	}
	return NULL;
}

int kerf_agent_events_start(struct kerf_agent_events **out, const struct kerf_nvml *nv,
			    const nvmlDevice_t *handles, unsigned nr, struct kerf_err *err)
{
	struct kerf_agent_events *e;
	const unsigned long long types = nvmlEventTypeXidCriticalError |
					 nvmlEventTypeDoubleBitEccError |
					 nvmlEventTypeSingleBitEccError;
	nvmlReturn_t rc;
	size_t used = 0;

	*out = NULL;
	if (!kerf_nvml_has(nv, KERF_NVML_F_EVENTS))
		return kerf_err_set(err, -KERF_ENOTFOUND, "NVML events are off: %s", nv->off);
	if (!(e = calloc(1, sizeof(*e))))
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	e->nv = nv;
	e->nr = nr < MAX_GPUS ? nr : MAX_GPUS;
	memcpy(e->handles, handles, e->nr * sizeof(*handles));
	pthread_mutex_init(&e->mu, NULL);
	if ((rc = nv->event_set_create(&e->set)) != NVML_SUCCESS) {
		pthread_mutex_destroy(&e->mu);
		free(e);
		return kerf_err_set(err, -KERF_EIO, "nvmlEventSetCreate: %s",
				    kerf_nvml_return_name((int)rc));
	}
	for (unsigned i = 0; i < e->nr; i++) {
		rc = nv->register_events(e->handles[i], types, e->set);
		if (rc != NVML_SUCCESS && used < sizeof(e->st.registered_off))
			used += (size_t)snprintf(e->st.registered_off + used,
						 sizeof(e->st.registered_off) - used,
						 "%sGPU %u: %s", used ? "; " : "", i,
						 kerf_nvml_return_name((int)rc));
	}
	if (pthread_create(&e->thread, NULL, run, e) != 0) {
		nv->event_set_free(e->set);
		pthread_mutex_destroy(&e->mu);
		free(e);
		return kerf_err_set(err, -KERF_EIO, "cannot start the NVML event thread");
	}
	e->started = true;
	*out = e;
	return 0;
}

size_t kerf_agent_events_take(struct kerf_agent_events *e, struct kerf_agent_event *out,
			      size_t max)
{
	size_t n = 0;

	if (!e)
		return 0;
	pthread_mutex_lock(&e->mu);
	while (n < max && e->len) {
		out[n++] = e->q[e->head];
		e->head = (e->head + 1) % QUEUE_MAX;
		e->len--;
	}
	for (int g = 0; g < MAX_GPUS && n < max && e->overflow_mask; g++)
		if (e->overflow_mask >> g & 1) {
			out[n++] = e->overflow[g];
			e->overflow_mask &= ~(1ull << g);
		}
	pthread_mutex_unlock(&e->mu);
	return n;
}

void kerf_agent_events_stats(struct kerf_agent_events *e, struct kerf_agent_event_stats *s)
{
	if (!e) {
		memset(s, 0, sizeof(*s));
		return;
	}
	pthread_mutex_lock(&e->mu);
	*s = e->st;
	pthread_mutex_unlock(&e->mu);
}

void kerf_agent_events_stop(struct kerf_agent_events *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = true;
	pthread_mutex_unlock(&e->mu);
	if (e->started)
		pthread_join(e->thread, NULL);
	e->nv->event_set_free(e->set);
	pthread_mutex_destroy(&e->mu);
	free(e);
}
