#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

const char *kerf_code_name(enum kerf_code code)
{
	switch (code) {
	case KERF_FIT:
		return "Fit";
	case KERF_UNSCHEDULABLE:
		return "Unschedulable";
	case KERF_UNRESOLVABLE:
		return "UnschedulableAndUnresolvable";
	case KERF_SKIP:
		return "Skip";
	case KERF_WAIT:
		return "Wait";
	case KERF_INTERNAL:
		return "Internal";
	}
	return "Unknown";
}

void kerf_status_fixed(struct kerf_status *st, enum kerf_code code,
		       const char *plugin, const char *text)
{
	size_t i = 0;

	if (!st)
		return;
	st->code = code;
	st->plugin = plugin;
	st->fixed = text;
	for (; text[i] && i < sizeof(st->reason) - 1; i++)
		st->reason[i] = text[i];
	st->reason[i] = '\0';
}

void kerf_status_set(struct kerf_status *st, enum kerf_code code,
		     const char *plugin, const char *fmt, ...)
{
	va_list ap;

	if (!st)
		return;
	st->code = code;
	st->plugin = plugin;
	st->fixed = NULL;
	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof(st->reason), fmt, ap);
	va_end(ap);
}
