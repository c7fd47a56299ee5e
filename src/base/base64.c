#include "base/base64.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int kerf_base64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
	size_t nr = 0, n = 0, pad = 0, i;
	uint32_t group = 0;
	unsigned in_group = 0;
	char *o;

	for (i = 0; i < len; i++) {
		if (in[i] == '\n' || in[i] == '\r')
			continue;
		if (in[i] == '=')
			pad++;
		else if (pad || value_of(in[i]) < 0)
			return -KERF_EPARSE;
		nr++;
	}
	if (nr % 4 != 0 || pad > 2)
		return -KERF_EPARSE;
	o = malloc(nr / 4 * 3 + 1);
	if (!o)
		return -KERF_ENOMEM;
	for (i = 0; i < len; i++) {
		if (in[i] == '\n' || in[i] == '\r' || in[i] == '=')
			continue;
		group = group << 6 | (uint32_t)value_of(in[i]);
		if (++in_group == 4) {
			o[n++] = (char)(group >> 16);
			o[n++] = (char)(group >> 8);
			o[n++] = (char)group;
			group = 0;
			in_group = 0;
		}
	}
	/* pad 1: 3 symbols = 18 bits, 2 bytes; pad 2: 2 symbols, 1 byte */
	if ((pad == 1 && (group & 0x3)) || (pad == 2 && (group & 0xf))) {
		free(o);
		return -KERF_EPARSE;
	}
	if (pad == 1) {
		o[n++] = (char)(group >> 10);
		o[n++] = (char)(group >> 2);
	} else if (pad == 2) {
		o[n++] = (char)(group >> 4);
	}
	o[n] = '\0';
	*out = o;
	*out_len = n;
	return 0;
}

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int kerf_base64_encode(const void *in, size_t len, char **out, size_t *out_len)
{
	const unsigned char *p = in;
	size_t n = 0, i;
	uint32_t group;
	char *o;

	if (len / 3 >= (SIZE_MAX - 1) / 4 - 1)
		return -KERF_ENOMEM;
	o = malloc((len + 2) / 3 * 4 + 1);
	if (!o)
		return -KERF_ENOMEM;
	for (i = 0; i + 2 < len; i += 3) {
		group = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		o[n++] = alphabet[group >> 18];
		o[n++] = alphabet[group >> 12 & 0x3f];
		o[n++] = alphabet[group >> 6 & 0x3f];
		o[n++] = alphabet[group & 0x3f];
	}
	if (len - i == 1) {
		group = (uint32_t)p[i] << 16;
		o[n++] = alphabet[group >> 18];
		o[n++] = alphabet[group >> 12 & 0x3f];
		o[n++] = '=';
		o[n++] = '=';
	} else if (len - i == 2) {
		group = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		o[n++] = alphabet[group >> 18];
		o[n++] = alphabet[group >> 12 & 0x3f];
		o[n++] = alphabet[group >> 6 & 0x3f];
		o[n++] = '=';
	}
	o[n] = '\0';
	*out = o;
	*out_len = n;
	return 0;
}
