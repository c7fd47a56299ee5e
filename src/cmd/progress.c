/*
 * progress: the reports of a long command on stderr.  Only the printing
 * decision is under the lock; the line is formatted and written while
 * holding it, so two threads never interleave half lines.
 */
#include "cmd/progress.h"

#include <stdlib.h>
#include <time.h>

#include "base/parse.h"
#include "base/units.h"

enum { DEFAULT_AFTER_MS = 2000, MAX_AFTER_MS = 60000 };

int64_t kerf_progress_monotonic_ms(void *ctx)
{
	struct timespec t;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void kerf_progress_init(struct kerf_progress *p, const char *prog, FILE *out,
			bool tty, bool quiet, kerf_progress_clock now_ms,
			void *clock_ctx)
{
	const char *env = getenv("KERF_PROGRESS_AFTER_MS");
	uint64_t v;

	p->prog = prog;
	p->out = out;
	p->tty = tty;
	p->quiet = quiet;
	p->now_ms = now_ms ? now_ms : kerf_progress_monotonic_ms;
	p->clock_ctx = clock_ctx;
	p->after_ms = DEFAULT_AFTER_MS;
	if (env && kerf_parse_u64(env, &v) == 0 && v <= MAX_AFTER_MS)
		p->after_ms = (int64_t)v;
	p->start_ms = p->now_ms(p->clock_ctx);
	p->last_ms = -1;
	p->line_open = false;
	pthread_mutex_init(&p->lock, NULL);
}

/* Under the lock: has the delay passed, and the interval since the last? */
static bool due(const struct kerf_progress *p, int64_t now)
{
	return now - p->start_ms >= p->after_ms &&
	       (p->last_ms < 0 || now - p->last_ms >= p->after_ms);
}

bool kerf_progress_is_due(struct kerf_progress *p)
{
	bool yes;

	if (p->quiet)
		return false;
	pthread_mutex_lock(&p->lock);
	yes = due(p, p->now_ms(p->clock_ctx));
	pthread_mutex_unlock(&p->lock);
	return yes;
}

static void clear_locked(struct kerf_progress *p)
{
	if (p->line_open) {
		fputs("\r\033[K", p->out);
		fflush(p->out);
		p->line_open = false;
	}
}

void kerf_progress_clear(struct kerf_progress *p)
{
	pthread_mutex_lock(&p->lock);
	clear_locked(p);
	pthread_mutex_unlock(&p->lock);
}

void kerf_progress_update(struct kerf_progress *p, int64_t done_ppm,
			  const char *detail)
{
	int64_t now;
	char elapsed[32];

	if (p->quiet)
		return;
	pthread_mutex_lock(&p->lock);
	now = p->now_ms(p->clock_ctx);
	if (!due(p, now)) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	p->last_ms = now;
	if (done_ppm < 0)
		done_ppm = 0;
	if (done_ppm > 1000000)
		done_ppm = 1000000;
	/* whole seconds elapsed, as every duration kerf prints (base/units.h) */
	kerf_units_duration((now - p->start_ms) / 1000 * 1000, elapsed, sizeof(elapsed));
	fprintf(p->out, "%s%s: %d%%%s%s%s, %s elapsed%s", p->tty ? "\r" : "",
		p->prog, (int)(done_ppm / 10000), detail ? " (" : "",
		detail ? detail : "", detail ? ")" : "", elapsed,
		p->tty ? "\033[K" : "\n");
	fflush(p->out);
	p->line_open = p->tty;
	pthread_mutex_unlock(&p->lock);
}

void kerf_progress_end(struct kerf_progress *p)
{
	kerf_progress_clear(p);
	pthread_mutex_destroy(&p->lock);
}
