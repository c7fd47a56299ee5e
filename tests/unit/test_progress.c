/*
 * Unit tests for cmd/progress on a clock the test moves: nothing in the
 * first two seconds, then at most one line every two seconds, in the
 * plain form when not a terminal and rewritten with \r (cleared at the
 * end) on one; --quiet says nothing; KERF_PROGRESS_AFTER_MS sets the
 * delay; updates from several threads never interleave half lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/progress.h"

struct fake_clock {
	int64_t now_ms;
};

static int64_t fake_now(void *ctx)
{
	struct fake_clock *c = ctx;

	return __atomic_load_n(&c->now_ms, __ATOMIC_SEQ_CST);
}

static void advance(struct fake_clock *c, int64_t ms)
{
	__atomic_add_fetch(&c->now_ms, ms, __ATOMIC_SEQ_CST);
}

struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static void capture_open(struct capture *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
}

static const char *capture_text(struct capture *c)
{
	fflush(c->f);
	return c->text ? c->text : "";
}

static void capture_close(struct capture *c)
{
	fclose(c->f);
	free(c->text);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A progress on clk into out, with the default delay. */
static void start(struct kerf_progress *p, struct capture *out,
		  struct fake_clock *clk, const char *prog, bool tty, bool quiet)
{
	unsetenv("KERF_PROGRESS_AFTER_MS");
	capture_open(out);
	kerf_progress_init(p, prog, out->f, tty, quiet, fake_now, clk);
}

static void test_silent_then_every_two_seconds(void **state)
{
	struct fake_clock clk = { .now_ms = 1000 };
	struct kerf_progress p;
	struct capture out;

	(void)state;
	start(&p, &out, &clk, "kerf sim openb", false, false);
	kerf_progress_update(&p, 100000, "policy fgd, 1/10 seeds");
	advance(&clk, 1999);
	kerf_progress_update(&p, 200000, "policy fgd, 2/10 seeds");
	assert_string_equal(capture_text(&out), "");
	advance(&clk, 1);   /* 2 s: the first line */
	kerf_progress_update(&p, 350000, "policy fgd, 4/10 seeds");
	assert_string_equal(capture_text(&out),
			    "kerf sim openb: 35% (policy fgd, 4/10 seeds), 2s elapsed\n");
	advance(&clk, 1999);   /* too soon for the next */
	kerf_progress_update(&p, 400000, NULL);
	assert_int_equal(count(capture_text(&out), "\n"), 1);
	advance(&clk, 10001);
	kerf_progress_update(&p, 1500000, NULL);   /* clamped to 100 % */
	assert_non_null(strstr(capture_text(&out),
			       "kerf sim openb: 100%, 14s elapsed\n"));
	assert_int_equal(count(capture_text(&out), "\n"), 2);
	assert_null(strchr(capture_text(&out), '\r'));
	assert_null(strchr(capture_text(&out), '\033'));
	kerf_progress_end(&p);
	assert_int_equal(count(capture_text(&out), "\n"), 2);
	capture_close(&out);
}

static void test_terminal_rewrites_one_line(void **state)
{
	struct fake_clock clk = { .now_ms = 0 };
	struct kerf_progress p;
	struct capture out;

	(void)state;
	start(&p, &out, &clk, "kerf sim", true, false);
	advance(&clk, 2500);
	kerf_progress_update(&p, 500000, NULL);
	assert_false(kerf_progress_is_due(&p));
	advance(&clk, 2500);
	assert_true(kerf_progress_is_due(&p));
	kerf_progress_update(&p, 700000, NULL);
	kerf_progress_clear(&p);   /* a table row goes below */
	kerf_progress_clear(&p);   /* nothing shown: nothing to clear */
	advance(&clk, 2000);
	kerf_progress_update(&p, 800000, NULL);
	kerf_progress_end(&p);
	assert_string_equal(capture_text(&out),
			    "\rkerf sim: 50%, 2s elapsed\033[K"
			    "\rkerf sim: 70%, 5s elapsed\033[K"
			    "\r\033[K"
			    "\rkerf sim: 80%, 7s elapsed\033[K"
			    "\r\033[K");
	capture_close(&out);
}

static void test_quiet_and_short_runs_say_nothing(void **state)
{
	struct fake_clock clk = { .now_ms = 0 };
	struct kerf_progress p;
	struct capture out;

	(void)state;
	start(&p, &out, &clk, "kerf sim", true, true);
	advance(&clk, 60000);
	assert_false(kerf_progress_is_due(&p));
	kerf_progress_update(&p, 500000, NULL);
	kerf_progress_end(&p);
	/* not quiet, but over before two seconds: nothing, not even \r */
	kerf_progress_init(&p, "kerf sim", out.f, true, false, fake_now, &clk);
	advance(&clk, 1500);
	kerf_progress_update(&p, 900000, NULL);
	kerf_progress_end(&p);
	assert_string_equal(capture_text(&out), "");
	capture_close(&out);
}

static void test_delay_from_environment(void **state)
{
	struct fake_clock clk = { .now_ms = 0 };
	struct kerf_progress p;
	struct capture out;

	(void)state;
	capture_open(&out);
	setenv("KERF_PROGRESS_AFTER_MS", "100", 1);
	kerf_progress_init(&p, "kerf sim", out.f, false, false, fake_now, &clk);
	advance(&clk, 100);
	kerf_progress_update(&p, 10000, NULL);
	advance(&clk, 100);
	kerf_progress_update(&p, 20000, NULL);
	kerf_progress_end(&p);
	assert_int_equal(count(capture_text(&out), "\n"), 2);
	/* out of range or not a number: the default two seconds */
	setenv("KERF_PROGRESS_AFTER_MS", "-5", 1);
	kerf_progress_init(&p, "kerf sim", out.f, false, false, fake_now, &clk);
	assert_int_equal(p.after_ms, 2000);
	kerf_progress_end(&p);
	setenv("KERF_PROGRESS_AFTER_MS", "60001", 1);
	kerf_progress_init(&p, "kerf sim", out.f, false, false, fake_now, &clk);
	assert_int_equal(p.after_ms, 2000);
	kerf_progress_end(&p);
	unsetenv("KERF_PROGRESS_AFTER_MS");
	capture_close(&out);
}

struct worker_arg {
	struct kerf_progress *p;
	struct fake_clock *clk;
	int id;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;
	char detail[32];

	for (int i = 0; i < 2000; i++) {
		snprintf(detail, sizeof(detail), "thread %d step %d", w->id, i);
		advance(w->clk, 1);
		kerf_progress_update(w->p, i * 500, detail);
	}
	return NULL;
}

/* Four threads at once: whole lines only, and never two within 10 ms. */
static void test_threads(void **state)
{
	struct fake_clock clk = { .now_ms = 0 };
	struct kerf_progress p;
	struct capture out;
	pthread_t th[4];
	struct worker_arg args[4];
	const char *s;
	int lines = 0;

	(void)state;
	setenv("KERF_PROGRESS_AFTER_MS", "10", 1);
	capture_open(&out);
	kerf_progress_init(&p, "kerf sim openb", out.f, false, false, fake_now, &clk);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct worker_arg){ &p, &clk, i };
		assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	kerf_progress_end(&p);
	unsetenv("KERF_PROGRESS_AFTER_MS");
	s = capture_text(&out);
	while (*s) {
		const char *nl = strchr(s, '\n');
		int pct, id, step;
		long long el;

		assert_non_null(nl);
		assert_int_equal(sscanf(s, "kerf sim openb: %d%% (thread %d step %d), %llds elapsed",
					&pct, &id, &step, &el), 4);
		lines++;
		s = nl + 1;
	}
	assert_true(lines >= 2);
	assert_true(lines <= 8000 / 10 + 1);
	capture_close(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silent_then_every_two_seconds),
		cmocka_unit_test(test_terminal_rewrites_one_line),
		cmocka_unit_test(test_quiet_and_short_runs_say_nothing),
		cmocka_unit_test(test_delay_from_environment),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
