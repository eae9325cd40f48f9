/* SPDX-License-Identifier: MIT */
/*
 * Hex strings in configuration (environment variables, policy files):
 * exactly 2*n hex digits, nothing else. sscanf("%2x") is not fit for
 * this: it skips blanks, takes a sign ("-1" reads as ff) and "0x", and
 * reads past the end of a short string.
 */
#ifndef SGXEMU_BASE_HEX_H
#define SGXEMU_BASE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* @s is exactly 2*@n hex digits: 0 and @out filled, else -EINVAL
 * (@out untouched). */
int sgx_unhex(const char *s, uint8_t *out, size_t n);
/* The lower-case hex of @n bytes into @out (2*@n + 1 bytes, NUL-ended):
 * the form sgx_unhex() reads. */
void sgx_hex(char *out, const uint8_t *in, size_t n);

#endif /* SGXEMU_BASE_HEX_H */
