#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>

#define KERF_ERR_TEXT(name, num, text) [num] = text,
static const char *const err_text[] = { KERF_ERRORS(KERF_ERR_TEXT) };
#undef KERF_ERR_TEXT

_Static_assert(sizeof(err_text) / sizeof(err_text[0]) == KERF_E_COUNT_,
	       "error table must cover every code");

const char *kerf_strerror(int code)
{
	if (code <= -KERF_E_COUNT_ || code >= KERF_E_COUNT_)
		return "unknown error";
	return err_text[code < 0 ? -code : code];
}

int kerf_err_set(struct kerf_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != 0)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void kerf_err_clear(struct kerf_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
