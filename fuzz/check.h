/*
 * check: how a fuzz target states the properties it checks.  CHECK and
 * CHECK_MSG abort() with the target's name (FUZZ_TARGET, defined before
 * this header), the line and the condition, so libFuzzer and the corpus
 * replay both stop on a broken property.
 */
#ifndef KERF_FUZZ_CHECK_H
#define KERF_FUZZ_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#ifndef FUZZ_TARGET
#error "define FUZZ_TARGET (the target's name) before including check.h"
#endif

static inline void fuzz_violated(int line, const char *what, const char *msg)
{
	fprintf(stderr, FUZZ_TARGET ": property violated (line %d): %s%s%s\n",
		line, what, msg ? ": " : "", msg ? msg : "");
	abort();
}

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond))                                            \
			fuzz_violated(__LINE__, #cond, NULL);           \
	} while (0)
#define CHECK_MSG(cond, msg)                                            \
	do {                                                            \
		if (!(cond))                                            \
			fuzz_violated(__LINE__, #cond, (msg));          \
	} while (0)

/*
 * A decoder refused its input: the code is negative and recorded, the
 * message is a string of printable ASCII only (whatever of the input it
 * quotes is escaped, so no input can forge output), and it starts with
 * "path:" (out of memory may name no file when named_oom is false).
 */
static inline void fuzz_check_refusal(int rc, const struct kerf_err *err,
				      const char *path, bool named_oom)
{
	size_t len = strlen(path);

	CHECK(rc < 0 && err->code == rc);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
	for (const char *p = err->msg; *p; p++)
		CHECK_MSG(*p >= ' ' && *p < 0x7f, err->msg);
	if (rc == -KERF_ENOMEM && !named_oom)
		return;
	CHECK_MSG(strncmp(err->msg, path, len) == 0 && err->msg[len] == ':',
		  err->msg);
}

#endif /* KERF_FUZZ_CHECK_H */
