// SPDX-License-Identifier: MIT
/* DER reading and writing for the SGX extension (see der.h). */
#include <stdlib.h>
#include <string.h>

#include "attest/der.h"

int der_next(struct der *cur, uint8_t *tag, struct der *content)
{
	size_t len, hdr = 2;

	if (cur->len < 2)
		return -1;
	*tag = cur->p[0];
	len = cur->p[1];
	if (len & 0x80) {
		size_t n = len & 0x7f;

		/* Long form: 1..4 length bytes, minimal, not indefinite. */
		if (n == 0 || n > 4 || cur->len < 2 + n || cur->p[2] == 0)
			return -1;
		len = 0;
		for (size_t i = 0; i < n; i++)
			len = len << 8 | cur->p[2 + i];
		if (len < 0x80)
			return -1;
		hdr += n;
	}
	if (len > cur->len - hdr)
		return -1;
	content->p = cur->p + hdr;
	content->len = len;
	cur->p += hdr + len;
	cur->len -= hdr + len;
	return 0;
}

int der_count(struct der d)
{
	struct der c;
	uint8_t tag;
	int n = 0;

	while (d.len) {
		if (der_next(&d, &tag, &c))
			return -1;
		n++;
	}
	return n;
}

int der_uint(struct der c, uint32_t max, uint32_t *out)
{
	uint64_t v = 0;

	/* Non-empty, non-negative, at most 4 value bytes after a 00 pad. */
	if (c.len == 0 || c.len > 5 || (c.p[0] & 0x80))
		return -1;
	if (c.len > 1 && c.p[0] == 0 && !(c.p[1] & 0x80))
		return -1;		/* not minimal */
	for (size_t i = 0; i < c.len; i++)
		v = v << 8 | c.p[i];
	if (v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

void dbuf_put(struct dbuf *b, const void *data, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

void der_put(struct dbuf *b, uint8_t tag, const void *content, size_t n)
{
	uint8_t hdr[6] = { tag };
	size_t h = 2;

	if (n < 0x80) {
		hdr[1] = (uint8_t)n;
	} else if (n <= 0xff) {
		hdr[1] = 0x81;
		hdr[2] = (uint8_t)n;
		h = 3;
	} else if (n <= 0xffff) {
		hdr[1] = 0x82;
		hdr[2] = (uint8_t)(n >> 8);
		hdr[3] = (uint8_t)n;
		h = 4;
	} else {
		b->err = true;		/* nothing here is that large */
		return;
	}
	dbuf_put(b, hdr, h);
	dbuf_put(b, content, n);
}

void der_put_uint(struct dbuf *b, uint32_t v)
{
	uint8_t be[5];
	size_t i = 0;

	be[0] = 0;
	be[1] = (uint8_t)(v >> 24);
	be[2] = (uint8_t)(v >> 16);
	be[3] = (uint8_t)(v >> 8);
	be[4] = (uint8_t)v;
	/* Minimal two's complement: drop leading zeros unless the next
	 * byte's top bit would make the number negative. */
	while (i < 4 && be[i] == 0 && !(be[i + 1] & 0x80))
		i++;
	der_put(b, DER_INTEGER, be + i, 5 - i);
}

void dbuf_free(struct dbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
