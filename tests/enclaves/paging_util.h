/* SPDX-License-Identifier: MIT */
/*
 * Loading the EPC-paging test enclave (paging_encl.*) with a heap of any
 * size, and the checksum its P_CHECK must return, for the paging tests
 * and bench/paging. Needs encl_util.h (and what it needs) first.
 */
#ifndef SGXEMU_TEST_PAGING_UTIL_H
#define SGXEMU_TEST_PAGING_UTIL_H

#include "encl_util.h"
#include "paging_encl.h"

#define MiB		(1024 * 1024ULL)

struct pencl {
	struct sgxemu_enclave *e;
	uint64_t base;
	uint64_t heap_pages;
};

/* The layout image, then @heap_mib of RW heap at PAGING_HEAP, EINIT. */
static inline const char *pload(struct pencl *p, uint64_t heap_mib)
{
	uint64_t size = 2 * MiB, heap = heap_mib * MiB;
	struct sgx_sigstruct *sig = NULL;
	struct sgx_secinfo si;
	struct sgx_secs secs;
	char path[512];
	uint8_t *img, page[4096], mr[32];
	struct tm_log log = { 0 };
	const char *why = NULL;
	size_t isize = 0;
	int err = 0;

	while (size < PAGING_HEAP + heap)
		size <<= 1;
	snprintf(path, sizeof(path), "%s/enclaves/paging_encl.bin",
		 test_build_dir());
	img = tu_read(path, &isize);
	if (!img)
		return "cannot read paging_encl.bin";
	memset(p, 0, sizeof(*p));
	memset(&secs, 0, sizeof(secs));
	secs.size = size;
	secs.base = tu_free_base(size);
	secs.ssa_frame_size = 1;
	secs.miscselect = SGX_MISC_EXINFO;
	secs.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs.attributes.xfrm = SGX_XFRM_LEGACY;
	if (sgxemu_enclave_create(&secs, 0, &p->e, &err)) {
		why = "ECREATE failed";
		goto out;
	}
	tm_init(&log, 1, size);
	for (size_t i = 0; i < L_PAGES; i++) {
		memset(&si, 0, sizeof(si));
		si.flags = tu_layout_secinfo(i);
		memset(page, 0, sizeof(page));
		if ((i + 1) * 4096 <= isize)
			memcpy(page, img + i * 4096, 4096);
		tm_add(&log, i * 4096, si.flags, page, 0xffff);
		if (sgxemu_enclave_add_page(p->e, secs.base + i * 4096, page,
					    &si, 0xffff, tu_prot(si.flags),
					    &err)) {
			why = "EADD of the image failed";
			goto out;
		}
	}
	memset(page, 0, sizeof(page));
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;
	for (uint64_t off = 0; off < heap; off += 4096) {
		tm_add(&log, PAGING_HEAP + off, si.flags, page, 0);
		if (sgxemu_enclave_add_page(p->e, secs.base + PAGING_HEAP + off,
					    page, &si, 0, PROT_READ | PROT_WRITE,
					    &err)) {
			why = "EADD of the heap failed";
			goto out;
		}
	}
	if (tm_final(&log, mr)) {
		why = "out of memory for the measurement log";
		goto out;
	}
	sig = aligned_alloc(4096, 4096);
	if (!sig || tu_sigstruct(mr, &secs, sig, test_signing_key())) {
		why = "signing failed";
		goto out;
	}
	if (sgxemu_enclave_init(p->e, sig, NULL, &err))
		why = err == SGX_INVALID_MEASUREMENT ? "EINIT: MRENCLAVE differs "
		      "from the test's own measurement" : "EINIT failed";
out:
	free(log.buf);
	free(sig);
	free(img);
	p->base = secs.base;
	p->heap_pages = heap / 4096;
	return why;
}

static inline uint64_t expected_checksum(uint64_t seed, uint64_t first,
				  uint64_t count)
{
	uint64_t c = 0;

	for (uint64_t k = 0; k < count; k++)
		for (uint64_t j = 0; j < 512; j++)
			c = paging_fold(c, paging_value(seed, first + k, j));
	for (uint64_t k = 0; k < count; k++) {
		uint64_t pg = first + paging_second(k, count);

		for (uint64_t j = 0; j < 512; j++)
			c = paging_fold(c, paging_value(seed, pg, j));
	}
	return c;
}

#endif
