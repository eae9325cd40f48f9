/* SPDX-License-Identifier: MIT */
/*
 * The tests' own MRENCLAVE: the measurement log (the 64-byte ECREATE and
 * EADD records and the 320-byte EEXTEND records of sgx-facts.md §2, i.e.
 * a .sgxs stream) built here from the architecture's description, and
 * its SHA-256. Nothing of src/cpu is used, so a loader that signs this
 * value gets SGX_INVALID_MEASUREMENT from EINIT whenever the processor
 * model measures differently — the expected value can disagree with the
 * code under test, which is what makes those tests able to fail.
 */
#ifndef SGXEMU_TEST_MEAS_LOG_H
#define SGXEMU_TEST_MEAS_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

struct tm_log {
	uint8_t *buf;
	size_t len, cap;
	bool failed;		/* out of memory: tm_final() refuses */
};

static inline void tm_put(struct tm_log *l, const void *p, size_t n)
{
	if (l->failed)
		return;
	if (l->len + n > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1 << 16;
		uint8_t *b;

		while (cap < l->len + n)
			cap *= 2;
		b = realloc(l->buf, cap);
		if (!b) {
			l->failed = true;
			return;
		}
		l->buf = b;
		l->cap = cap;
	}
	memcpy(l->buf + l->len, p, n);
	l->len += n;
}

/* A 64-byte record: 8-byte tag, u64 (or u32) fields, zeros. */
static inline void tm_record(struct tm_log *l, const char tag[8],
			     const void *fields, size_t n)
{
	uint8_t r[64] = { 0 };

	memcpy(r, tag, 8);
	memcpy(r + 8, fields, n);
	tm_put(l, r, sizeof(r));
}

/* "ECREATE\0", SSAFRAMESIZE (u32 at 8), SIZE (u64 at 12). */
static inline void tm_init(struct tm_log *l, uint32_t ssaframesize,
			   uint64_t size)
{
	uint8_t f[12];

	memset(l, 0, sizeof(*l));
	memcpy(f, &ssaframesize, 4);
	memcpy(f + 4, &size, 8);
	tm_record(l, "ECREATE\0", f, sizeof(f));
}

/*
 * EADD of @page at @offset with SECINFO @flags, then EEXTEND of the
 * 256-byte chunks whose bit is set in @mask. A TCS is measured with its
 * permission bits clear and with the fields EADD clears (STATE,
 * FLAGS.DBGOPTIN, CSSA, AEP) zero, as the processor sees the page.
 */
static inline void tm_add(struct tm_log *l, uint64_t offset, uint64_t flags,
			  const uint8_t page[4096], uint16_t mask)
{
	const uint64_t pt_tcs = 1ULL << 8;
	uint8_t copy[4096], f[16];
	uint64_t x;

	if ((flags & (0xffULL << 8)) == pt_tcs) {
		flags &= ~7ULL;
		memcpy(copy, page, sizeof(copy));
		memset(copy, 0, 8);			/* STATE */
		copy[8] &= ~1;				/* FLAGS.DBGOPTIN */
		memset(copy + 24, 0, 4);		/* CSSA */
		memset(copy + 40, 0, 8);		/* AEP */
		page = copy;
	}
	memcpy(f, &offset, 8);
	memcpy(f + 8, &flags, 8);
	tm_record(l, "EADD\0\0\0\0", f, sizeof(f));
	for (unsigned c = 0; c < 16; c++) {
		if (!(mask & (1u << c)))
			continue;
		x = offset + 256 * c;
		tm_record(l, "EEXTEND\0", &x, sizeof(x));
		tm_put(l, page + 256 * c, 256);
	}
}

/* MRENCLAVE = SHA-256 of the whole log; frees it. 0 or -1. */
static inline int tm_final(struct tm_log *l, uint8_t out[32])
{
	int ok = !l->failed &&
		 EVP_Digest(l->buf, l->len, out, NULL, EVP_sha256(), NULL);

	free(l->buf);
	memset(l, 0, sizeof(*l));
	return ok ? 0 : -1;
}

#endif /* SGXEMU_TEST_MEAS_LOG_H */
