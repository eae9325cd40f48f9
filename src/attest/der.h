/* SPDX-License-Identifier: MIT */
/*
 * Just enough DER for the SGX extension of PCK certificates
 * (attestation-facts.md §3.3): a bounds-checked TLV reader and a writer
 * into a growing buffer. OpenSSL builds and parses the certificates
 * themselves; this only handles the extension's inner SEQUENCEs, whose
 * rules (exact entry counts, two-element tuples) OpenSSL cannot check.
 */
#ifndef SGXEMU_ATTEST_DER_H
#define SGXEMU_ATTEST_DER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DER_INTEGER	0x02
#define DER_OCTETS	0x04
#define DER_OID		0x06
#define DER_ENUM	0x0a
#define DER_BOOLEAN	0x01
#define DER_SEQUENCE	0x30

/* A window of DER bytes; reading advances it. */
struct der {
	const uint8_t *p;
	size_t len;
};

/*
 * Take the next TLV off @cur: single-byte tag, definite length of at most
 * four bytes, content within @cur. 0, or -1 for anything malformed.
 */
int der_next(struct der *cur, uint8_t *tag, struct der *content);

/* Number of TLVs in @d, or -1 when one is malformed. */
int der_count(struct der d);

/* A non-negative INTEGER of at most @max; -1 otherwise. */
int der_uint(struct der content, uint32_t max, uint32_t *out);

/* A growing output buffer; a failed allocation sets @err and sticks. */
struct dbuf {
	uint8_t *p;
	size_t len, cap;
	bool err;
};

void dbuf_put(struct dbuf *b, const void *data, size_t n);
/* Append tag, length and @n bytes of content. */
void der_put(struct dbuf *b, uint8_t tag, const void *content, size_t n);
/* Append an INTEGER holding @v. */
void der_put_uint(struct dbuf *b, uint32_t v);
void dbuf_free(struct dbuf *b);

#endif /* SGXEMU_ATTEST_DER_H */
