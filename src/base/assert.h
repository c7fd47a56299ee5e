/*
 * assert: KERF_ASSERT, always compiled in (release builds too), for states
 * that must not happen whatever the input: a broken internal invariant.
 * Crashing with the expression and place beats acting on corrupt state;
 * the process is restarted and rebuilds its state.  Never use it on input
 * (anything a user, the API server or a node sends is validated and
 * returned as an error).
 */
#ifndef KERF_BASE_ASSERT_H
#define KERF_BASE_ASSERT_H

/* Print "kerf: assertion failed: expr (file:line)" to stderr and abort. */
_Noreturn void kerf_assert_fail(const char *expr, const char *file, int line);

#define KERF_ASSERT(expr)                                                      \
	((expr) ? (void)0 : kerf_assert_fail(#expr, __FILE__, __LINE__))

#endif /* KERF_BASE_ASSERT_H */
