/* SPDX-License-Identifier: MIT */
/* Flat images and .sgxs streams, and their MRENCLAVE: see image.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "cpu/measure.h"
#include "image.h"

#define PAGE		SGX_PAGE_SIZE
#define CHUNKS_PER_PAGE	(PAGE / SGX_EEXTEND_CHUNK)

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

uint64_t image_enclave_size(size_t image_size)
{
	uint64_t size = PAGE;

	while (size < image_size)
		size <<= 1;
	return size;
}

uint64_t image_page_flags(size_t index)
{
	return index ? IMAGE_REG_FLAGS : IMAGE_TCS_FLAGS;
}

static uint64_t load_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t load_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * EADD clears the TCS fields the processor owns before any EEXTEND reads the
 * page (sgx-facts.md §4.2 step 7), so the measured bytes are the cleared
 * ones. Doing the same here keeps the tools' MRENCLAVE equal to what EINIT
 * computes even for an image whose TCS has junk in those fields.
 */
static void force_tcs_fields(uint8_t page[PAGE])
{
	struct sgx_tcs tcs;

	memcpy(&tcs, page, sizeof(tcs));
	tcs.state = 0;
	tcs.flags &= ~SGX_TCS_DBGOPTIN;
	tcs.cssa = 0;
	tcs.aep = 0;
	memcpy(page, &tcs, sizeof(tcs));
}

int image_measure_flat(const uint8_t *image, size_t size,
		       uint8_t mrenclave[SGX_HASH_SIZE],
		       char *err, size_t errlen)
{
	uint8_t block[SGX_MEAS_BLOCK];
	uint8_t tcs[PAGE];
	EVP_MD_CTX *ctx;
	int ok;

	if (size == 0 || size % PAGE) {
		set_err(err, errlen,
			"image size %zu is not a non-zero multiple of 4096",
			size);
		return -1;
	}
	/*
	 * One page would give SIZE 4096, which ECREATE refuses (SIZE must be
	 * at least two pages): no SIGSTRUCT or measurement could ever be used.
	 */
	if (size < 2 * PAGE) {
		set_err(err, errlen, "image is one page (the TCS); an enclave "
			"needs at least two");
		return -1;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		set_err(err, errlen, "cannot set up SHA-256");
		EVP_MD_CTX_free(ctx);
		return -1;
	}
	sgx_meas_ecreate(block, IMAGE_SSAFRAMESIZE, image_enclave_size(size));
	ok = EVP_DigestUpdate(ctx, block, sizeof(block));
	for (size_t off = 0; ok && off < size; off += PAGE) {
		const uint8_t *page = image + off;

		if (off == 0) {
			memcpy(tcs, page, PAGE);
			force_tcs_fields(tcs);
			page = tcs;
		}
		sgx_meas_eadd(block, off, image_page_flags(off / PAGE));
		ok = EVP_DigestUpdate(ctx, block, sizeof(block));
		for (size_t c = 0; ok && c < PAGE; c += SGX_EEXTEND_CHUNK) {
			sgx_meas_eextend(block, off + c);
			ok = EVP_DigestUpdate(ctx, block, sizeof(block)) &&
			     EVP_DigestUpdate(ctx, page + c, SGX_EEXTEND_CHUNK);
		}
	}
	ok = ok && EVP_DigestFinal_ex(ctx, mrenclave, NULL);
	EVP_MD_CTX_free(ctx);
	if (!ok) {
		set_err(err, errlen, "SHA-256 failed");
		return -1;
	}
	return 0;
}

bool image_is_sgxs(const uint8_t *data, size_t size)
{
	return size >= SGX_MEAS_BLOCK && load_u64(data) == SGX_MEAS_ECREATE;
}

/* Pages seen so far, so that EEXTEND of a page never added is refused. */
struct page_set {
	uint8_t *bits;
	uint64_t nr_pages;
};

static bool page_test(const struct page_set *s, uint64_t page)
{
	return page < s->nr_pages && (s->bits[page / 8] >> (page % 8)) & 1;
}

static void page_set(struct page_set *s, uint64_t page)
{
	s->bits[page / 8] |= 1 << (page % 8);
}

/* Check one record after the ECREATE; returns its length or 0 on error. */
static size_t sgxs_record(const uint8_t *rec, size_t left, uint64_t encl_size,
			  struct page_set *pages, size_t pos,
			  char *err, size_t errlen)
{
	uint64_t tag = load_u64(rec), off = load_u64(rec + 8);

	switch (tag) {
	case SGX_MEAS_EADD: {
		uint64_t flags = load_u64(rec + 16), pt;

		if (off % PAGE || off >= encl_size) {
			set_err(err, errlen, "EADD record at byte %zu: offset "
				"0x%llx is not a page inside the enclave",
				pos, (unsigned long long)off);
			return 0;
		}
		pt = (flags & SGX_SECINFO_PT_MASK) >> SGX_SECINFO_PT_SHIFT;
		if (pt != SGX_PT_REG && pt != SGX_PT_TCS) {
			set_err(err, errlen, "EADD record at byte %zu: page "
				"type %llu cannot be added", pos,
				(unsigned long long)pt);
			return 0;
		}
		if (page_test(pages, off / PAGE)) {
			set_err(err, errlen, "EADD record at byte %zu: page "
				"0x%llx added twice", pos,
				(unsigned long long)off);
			return 0;
		}
		page_set(pages, off / PAGE);
		return SGX_MEAS_BLOCK;
	}
	case SGX_MEAS_EEXTEND:
	case SGX_MEAS_UNMEASURED:
		if (off % SGX_EEXTEND_CHUNK || off >= encl_size ||
		    !page_test(pages, off / PAGE)) {
			set_err(err, errlen, "%s record at byte %zu: offset "
				"0x%llx is not a 256-byte chunk of an added page",
				tag == SGX_MEAS_EEXTEND ? "EEXTEND" : "UNMEASRD",
				pos, (unsigned long long)off);
			return 0;
		}
		if (left < SGX_MEAS_BLOCK + SGX_EEXTEND_CHUNK) {
			set_err(err, errlen, "truncated %s record at byte %zu",
				tag == SGX_MEAS_EEXTEND ? "EEXTEND" : "UNMEASRD",
				pos);
			return 0;
		}
		return SGX_MEAS_BLOCK + SGX_EEXTEND_CHUNK;
	case SGX_MEAS_ECREATE:
		set_err(err, errlen, "second ECREATE record at byte %zu", pos);
		return 0;
	default:
		set_err(err, errlen, "unknown record tag 0x%016llx at byte %zu",
			(unsigned long long)tag, pos);
		return 0;
	}
}

int image_measure_sgxs(const uint8_t *data, size_t size,
		       uint8_t mrenclave[SGX_HASH_SIZE],
		       char *err, size_t errlen)
{
	struct page_set pages = { 0 };
	uint64_t encl_size;
	EVP_MD_CTX *ctx = NULL;
	size_t pos;
	int ret = -1;

	if (!image_is_sgxs(data, size)) {
		set_err(err, errlen, "not a .sgxs stream (no ECREATE record)");
		return -1;
	}
	encl_size = load_u64(data + 12);
	/* The processor's ECREATE rules (sgx-facts.md §4.1) on SECS.SIZE. */
	if (encl_size < 2 * PAGE || (encl_size & (encl_size - 1)) ||
	    encl_size > (1ULL << 36)) {
		set_err(err, errlen, "ECREATE record: enclave size 0x%llx is "
			"not a power of two between 8 KiB and 64 GiB",
			(unsigned long long)encl_size);
		return -1;
	}
	if (load_u32(data + 8) == 0) {
		set_err(err, errlen, "ECREATE record: SSAFRAMESIZE is 0");
		return -1;
	}
	pages.nr_pages = encl_size / PAGE;
	pages.bits = calloc(pages.nr_pages / 8 + 1, 1);
	ctx = EVP_MD_CTX_new();
	if (!pages.bits || !ctx ||
	    !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(ctx, data, SGX_MEAS_BLOCK)) {
		set_err(err, errlen, "out of memory");
		goto out;
	}
	for (pos = SGX_MEAS_BLOCK; pos < size; ) {
		size_t len;

		if (size - pos < SGX_MEAS_BLOCK) {
			set_err(err, errlen, "truncated record at byte %zu "
				"(%zu bytes left)", pos, size - pos);
			goto out;
		}
		len = sgxs_record(data + pos, size - pos, encl_size, &pages,
				  pos, err, errlen);
		if (!len)
			goto out;
		/* UNMEASRD: loaded, not measured; everything else is hashed. */
		if (load_u64(data + pos) != SGX_MEAS_UNMEASURED &&
		    !EVP_DigestUpdate(ctx, data + pos, len)) {
			set_err(err, errlen, "SHA-256 failed");
			goto out;
		}
		pos += len;
	}
	if (!EVP_DigestFinal_ex(ctx, mrenclave, NULL)) {
		set_err(err, errlen, "SHA-256 failed");
		goto out;
	}
	ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	free(pages.bits);
	return ret;
}
