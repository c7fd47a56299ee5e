/*
 * yaml_out: a JSON value as a YAML document through libyaml's emitter
 * (kerf get -o yaml).  Strings stay strings when read back: one that a
 * YAML 1.1 reader would take for a number, a boolean or null is quoted.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "cmd/output.h"

/* Would a plain scalar s read back as something else than a string? */
static bool plain_is_not_string(const char *s)
{
	static const char *const words[] = {
		"", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false",
		"False", "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On",
		"ON", "off", "Off", "OFF", "y", "Y", "n", "N",
	};
	const char *p = s;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(s, words[i]))
			return true;
	/* anything starting like a number (1, -1, .5, +1e3, 0x1f, 1:30) */
	if (*p == '-' || *p == '+')
		p++;
	if (*p == '.')
		p++;
	return (*p >= '0' && *p <= '9') || !strcmp(p, "inf") || !strcmp(p, "Inf") ||
	       !strcmp(p, "nan") || !strcmp(p, "NaN");
}

static int scalar(yaml_emitter_t *e, const char *text, bool is_string)
{
	yaml_event_t ev;
	bool plain = !is_string || !plain_is_not_string(text);

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text,
					  (int)strlen(text), plain, 1,
					  YAML_ANY_SCALAR_STYLE))
		return -1;
	return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int emit(yaml_emitter_t *e, const json_t *j)
{
	yaml_event_t ev;
	char num[64];
	const char *k;
	json_t *v;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return -1;
		json_object_foreach((json_t *)j, k, v)
			if (scalar(e, k, true) < 0 || emit(e, v) < 0)
				return -1;
		return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? 0 : -1;
	case JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return -1;
		json_array_foreach(j, i, v)
			if (emit(e, v) < 0)
				return -1;
		return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) ? 0 : -1;
	case JSON_STRING:
		return scalar(e, json_string_value(j), true);
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		return scalar(e, num, false);
	case JSON_REAL:
		/* 15 significant digits at most, as -o json (cmd/output.c) */
		snprintf(num, sizeof(num), "%.15g", json_real_value(j));
		/* 1.5 stays 1.5: shortest text that reads back the same */
		for (int prec = 1; prec < 15; prec++) {
			double r = json_real_value(j), mag = r < 0 ? -r : r;
			char t[64];
			double d;

			snprintf(t, sizeof(t), "%.*g", prec, r);
			/* 120 stays 120.0, not 1.2e+02: exponents only far from 1 */
			if (strchr(t, 'e') && mag >= 1e-4 && mag < 1e15)
				continue;
			if (sscanf(t, "%lf", &d) == 1 && d == r) {
				memcpy(num, t, strlen(t) + 1);
				break;
			}
		}
		/* a whole number stays a float when read back */
		if (strspn(num, "-0123456789") == strlen(num))
			memcpy(num + strlen(num), ".0", 3);
		return scalar(e, num, false);
	case JSON_TRUE:
		return scalar(e, "true", false);
	case JSON_FALSE:
		return scalar(e, "false", false);
	default:
		return scalar(e, "null", false);
	}
}

static int write_file(void *data, unsigned char *buf, size_t size)
{
	return fwrite(buf, 1, size, data) == size;
}

int kerf_cli_yaml(const json_t *j, FILE *out)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	int rc = -1;

	if (!yaml_emitter_initialize(&e))
		return -1;
	yaml_emitter_set_output(&e, write_file, out);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	    yaml_emitter_emit(&e, &ev) &&
	    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
	    yaml_emitter_emit(&e, &ev) && emit(&e, j) == 0 &&
	    yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
	    yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev))
		rc = 0;
	yaml_emitter_delete(&e);
	return rc;
}
