// SPDX-License-Identifier: MIT
/* Strict hex-string parsing: see hex.h. */
#include <errno.h>
#include <string.h>

#include "base/hex.h"

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sgx_unhex(const char *s, uint8_t *out, size_t n)
{
	/* strnlen: never look further than one byte past the digits. */
	if (!s || strnlen(s, 2 * n + 1) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < 2 * n; i++)
		if (nibble(s[i]) < 0)
			return -EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)(nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]));
	return 0;
}

void sgx_hex(char *out, const uint8_t *in, size_t n)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}
