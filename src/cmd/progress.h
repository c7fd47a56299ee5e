/*
 * progress: how far a long command is, on stderr (issue 13, friction 7).
 * Silent for the first two seconds, so fast runs print nothing; then at
 * most one report every two seconds: on a terminal one line rewritten
 * with \r (cleared at the end), otherwise plain lines such as
 *
 *   kerf sim openb: 35% (policy fgd, 4/10 seeds), 12 s elapsed
 *
 * never in colour.  --quiet turns it off.  The clock is passed in, so
 * tests drive it; updates may come from any thread (one lock).
 * KERF_PROGRESS_AFTER_MS, for tests only, sets both the delay and the
 * interval (milliseconds, 0..60000).
 */
#ifndef KERF_CMD_PROGRESS_H
#define KERF_CMD_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Milliseconds on a clock that never goes back. */
typedef int64_t (*kerf_progress_clock)(void *ctx);

struct kerf_progress {
	const char *prog;           /* "kerf sim openb", borrowed */
	FILE *out;                  /* borrowed */
	bool tty;                   /* rewrite one line */
	bool quiet;                 /* say nothing */
	kerf_progress_clock now_ms;
	void *clock_ctx;
	int64_t start_ms;
	int64_t last_ms;            /* last report; -1: none yet */
	int64_t after_ms;           /* first report no earlier; also the interval */
	bool line_open;             /* a \r line is on the terminal */
	pthread_mutex_t lock;
};

/* The monotonic clock, for kerf_progress_init. */
int64_t kerf_progress_monotonic_ms(void *ctx);

/*
 * Start: out is where lines go (stderr), tty whether it is a terminal.
 * now_ms NULL is the monotonic clock.  The delay is 2 s unless
 * KERF_PROGRESS_AFTER_MS says otherwise.
 */
void kerf_progress_init(struct kerf_progress *p, const char *prog, FILE *out,
			bool tty, bool quiet, kerf_progress_clock now_ms,
			void *clock_ctx);

/*
 * done_ppm (0..1000000) of the work is done; detail ("policy fgd, 4/10
 * seeds") or NULL goes in brackets.  Prints when due.  Thread-safe.
 */
void kerf_progress_update(struct kerf_progress *p, int64_t done_ppm,
			  const char *detail);

/*
 * Would an update print now?  For callers whose detail costs something to
 * write; kerf_progress_update decides again.  Thread-safe.
 */
bool kerf_progress_is_due(struct kerf_progress *p);

/*
 * Clear the terminal line (if one is shown) before other output, such as
 * a table row on stdout; the next report comes when due.  Thread-safe.
 */
void kerf_progress_clear(struct kerf_progress *p);

/* The work is over: the terminal line is cleared.  Releases the lock. */
void kerf_progress_end(struct kerf_progress *p);

#endif /* KERF_CMD_PROGRESS_H */
