/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the processor-model unit tests (test_cpu_*.c): a small
 * EPC, page-aligned host buffers, and one-call ECREATE/EADD wrappers that
 * build PAGEINFO/SECINFO the way a kernel does.
 */
#ifndef SGXEMU_TEST_CPU_HELPERS_H
#define SGXEMU_TEST_CPU_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "cpu/cpu.h"

#define T_EPC_PAGES	64
#define T_BASE		0x7f0000000000ULL	/* canonical, aligned to 1 MiB */
#define T_SIZE		0x10000ULL		/* 16 pages */

/* A page-aligned, zeroed host page (never freed: tests are short). */
static inline void *t_page(void)
{
	void *p = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);

	if (p)
		memset(p, 0, SGX_PAGE_SIZE);
	return p;
}

static inline int t_cpu_init(struct sgx_cpu *cpu)
{
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		/* Fixed so results do not depend on the host's XCR0. */
		.xfrm_supported = SGX_XFRM_LEGACY | SGX_XFRM_AVX,
	};

	return sgx_cpu_init(cpu, &cfg);
}

static inline void *t_epc(struct sgx_cpu *cpu, size_t i)
{
	return sgx_epc_page(cpu, i);
}

/* A valid 64-bit SECS source page for [base, base + size). */
static inline struct sgx_secs *t_secs(uint64_t base, uint64_t size)
{
	struct sgx_secs *secs = t_page();

	secs->base = base;
	secs->size = size;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	return secs;
}

static inline int t_ecreate_secinfo(struct sgx_cpu *cpu,
				    const struct sgx_secs *src, size_t epc_index,
				    uint64_t secinfo_flags)
{
	static struct sgx_secinfo secinfo;
	static struct sgx_pageinfo pi;

	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = secinfo_flags;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uintptr_t)src;
	pi.secinfo = (uintptr_t)&secinfo;
	return sgx_ecreate(cpu, &pi, t_epc(cpu, epc_index));
}

static inline int t_ecreate(struct sgx_cpu *cpu, const struct sgx_secs *src,
			    size_t epc_index)
{
	return t_ecreate_secinfo(cpu, src, epc_index, SGX_SECINFO_SECS);
}

/* The standard enclave: SECS in EPC page 0 at [T_BASE, T_BASE + T_SIZE). */
static inline int t_ecreate_std(struct sgx_cpu *cpu)
{
	return t_ecreate(cpu, t_secs(T_BASE, T_SIZE), 0);
}

static inline int t_eadd(struct sgx_cpu *cpu, size_t secs_index,
			 size_t epc_index, uint64_t linaddr,
			 uint64_t secinfo_flags, const void *src)
{
	static struct sgx_secinfo secinfo;
	static struct sgx_pageinfo pi;

	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = secinfo_flags;
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = linaddr;
	pi.srcpge = (uintptr_t)src;
	pi.secinfo = (uintptr_t)&secinfo;
	pi.secs = (uintptr_t)t_epc(cpu, secs_index);
	return sgx_eadd(cpu, &pi, t_epc(cpu, epc_index));
}

/* EEXTEND all 16 chunks of EPC page @epc_index. */
static inline int t_eextend_page(struct sgx_cpu *cpu, size_t secs_index,
				 size_t epc_index)
{
	for (int c = 0; c < 16; c++) {
		int ret = sgx_eextend(cpu, t_epc(cpu, secs_index),
				      (uint8_t *)t_epc(cpu, epc_index) + 256 * c);
		if (ret)
			return ret;
	}
	return 0;
}

/* A minimal valid TCS source page. */
static inline struct sgx_tcs *t_tcs(void)
{
	struct sgx_tcs *tcs = t_page();

	tcs->ossa = 0x1000;
	tcs->nssa = 1;
	tcs->oentry = 0x2000;
	return tcs;
}

/* The enclave whose SECS is EPC page @secs_index (NULL if none). */
static inline struct sgx_encl_ctl *t_ctl(struct sgx_cpu *cpu, size_t secs_index)
{
	return cpu->ctl[secs_index];
}

/*
 * MRENCLAVE as EINIT would finalise it now, from a copy of the running
 * hash (test-side OpenSSL, not the code under test).
 */
static inline bool t_mrenclave(struct sgx_cpu *cpu, size_t secs_index,
			       uint8_t out[32])
{
	struct sgx_encl_ctl *ctl = t_ctl(cpu, secs_index);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;
	bool ok = c && ctl && ctl->mrenclave &&
		  EVP_MD_CTX_copy_ex(c, ctl->mrenclave) &&
		  EVP_DigestFinal_ex(c, out, &len);

	EVP_MD_CTX_free(c);
	return ok;
}

static inline bool t_hex_eq(const uint8_t *got, const char *hex, size_t n)
{
	uint8_t want[512];

	return n <= sizeof(want) && test_unhex(hex, want, n) &&
	       memcmp(got, want, n) == 0;
}

#endif /* SGXEMU_TEST_CPU_HELPERS_H */
