/* SPDX-License-Identifier: MIT */
/* ECREATE: one test per SDM check (sgx-facts.md §4.1), exact fault asserted. */
#include "test_cpu_helpers.h"

#define SETUP(cpu) struct sgx_cpu cpu; REQUIRE_EQ(t_cpu_init(&cpu), 0)

TEST(ecreate_ok_std)
{
	SETUP(cpu);
	struct sgx_secs *src = t_secs(T_BASE, T_SIZE);

	memset(src->mrenclave, 0xAA, 32);	/* output fields: overwritten */
	REQUIRE_EQ(t_ecreate(&cpu, src, 3), 0);
	CHECK(cpu.epcm[3].valid);
	CHECK_EQ(cpu.epcm[3].page_type, SGX_PT_SECS);
	CHECK_EQ(cpu.epcm[3].r | cpu.epcm[3].w | cpu.epcm[3].x, 0);
	CHECK_EQ(cpu.epcm[3].enclave_address, 0);
	REQUIRE(t_ctl(&cpu, 3) != NULL);
	CHECK_EQ(t_ctl(&cpu, 3)->base, T_BASE);
	CHECK_EQ(t_ctl(&cpu, 3)->size, T_SIZE);
	CHECK_EQ(t_ctl(&cpu, 3)->child_count, 0);
	CHECK(!t_ctl(&cpu, 3)->initialized);
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE + T_SIZE - 1) == t_ctl(&cpu, 3));
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE + T_SIZE) == NULL);
	CHECK_EQ(((struct sgx_secs *)t_epc(&cpu, 3))->mrenclave[0], 0);
	CHECK_EQ(((struct sgx_secs *)t_epc(&cpu, 3))->size, T_SIZE);
	sgx_cpu_destroy(&cpu);
}

/* sgx-facts §6.5: the ECREATE block alone (SSAFRAMESIZE 1, SIZE 0x2000). */
TEST(ecreate_measures_ecreate_block)
{
	SETUP(cpu);
	uint8_t h[32];

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x2000), 0), 0);
	REQUIRE(t_mrenclave(&cpu, 0, h));
	CHECK(t_hex_eq(h, "9e197c8837c6d65632dbdd59cd7df4f1a25b68d8e4e5eb6ca3b20b05311fecb8", 32));
	CHECK_EQ(t_ctl(&cpu, 0)->update_counter, 1);
}

TEST(ecreate_eids_unique)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE, T_SIZE), 0), 0);
	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE, T_SIZE), 1), 0);
	CHECK(t_ctl(&cpu, 0)->eid != 0);
	CHECK(t_ctl(&cpu, 1)->eid != t_ctl(&cpu, 0)->eid);
}

TEST(ecreate_pageinfo_misaligned_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi[2];
	static struct sgx_secinfo si;
	struct sgx_pageinfo good = {0};

	good.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	good.secinfo = (uintptr_t)&si;
	memcpy((uint8_t *)pi + 8, &good, 32);
	CHECK_EQ(sgx_ecreate(&cpu, (void *)((uint8_t *)pi + 8), t_epc(&cpu, 0)), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_epc_misaligned_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)&si;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, (uint8_t *)t_epc(&cpu, 0) + 64), SGX_GP);
}

TEST(ecreate_not_epc_pf)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)&si;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_page()), SGX_PF);
	/* one page past the end of the EPC */
	CHECK_EQ(sgx_ecreate(&cpu, &pi, (uint8_t *)t_epc(&cpu, T_EPC_PAGES - 1) + 4096), SGX_PF);
}

TEST(ecreate_srcpge_misaligned_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE) + 8;
	pi.secinfo = (uintptr_t)&si;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_epc(&cpu, 0)), SGX_GP);
}

TEST(ecreate_secinfo_misaligned_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si[2];

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)si + 32;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_epc(&cpu, 0)), SGX_GP);
}

TEST(ecreate_linaddr_nonzero_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)&si;
	pi.linaddr = T_BASE;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_epc(&cpu, 0)), SGX_GP);
}

TEST(ecreate_pageinfo_secs_nonzero_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)&si;
	pi.secs = (uintptr_t)t_epc(&cpu, 1);
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_epc(&cpu, 0)), SGX_GP);
}

TEST(ecreate_secinfo_reserved_flags_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, 1ULL << 16), SGX_GP);
	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, 1ULL << 63), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_secinfo_reserved_bytes_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi;
	static struct sgx_secinfo si;

	si.reserved[55] = 1;
	pi.srcpge = (uintptr_t)t_secs(T_BASE, T_SIZE);
	pi.secinfo = (uintptr_t)&si;
	CHECK_EQ(sgx_ecreate(&cpu, &pi, t_epc(&cpu, 0)), SGX_GP);
}

TEST(ecreate_secinfo_not_secs_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, SGX_SECINFO_REG | 3), SGX_GP);
	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, SGX_SECINFO_TCS), SGX_GP);
	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, SGX_SECINFO_VA), SGX_GP);
}

TEST(ecreate_page_valid_pf)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE, T_SIZE), 0), SGX_PF);
}

TEST(ecreate_xfrm_legacy_missing_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.xfrm = SGX_XFRM_X87;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->attributes.xfrm = SGX_XFRM_SSE;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->attributes.xfrm = 0;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_xfrm_illegal_gp)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		.xfrm_supported = 0x600FF,	/* claims everything up to AMX */
	};
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	REQUIRE_EQ(sgx_cpu_init(&cpu, &cfg), 0);
	/* AVX-512 without AVX */
	s->attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_AVX512;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	/* only part of AVX-512 */
	s->attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_AVX | (1ULL << 5);
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	/* one MPX bit */
	s->attributes.xfrm = SGX_XFRM_LEGACY | (1ULL << 3);
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	/* one AMX bit */
	s->attributes.xfrm = SGX_XFRM_LEGACY | (1ULL << 18);
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_xfrm_unsupported_gp)
{
	SETUP(cpu);	/* supports x87, SSE, AVX */
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_PKRU;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_MPX;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_xfrm_avx_ok)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_AVX;
	CHECK_EQ(t_ecreate(&cpu, s, 0), 0);
}

TEST(ecreate_miscselect_unsupported_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->miscselect = 1U << 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->miscselect = SGX_MISC_EXINFO;
	CHECK_EQ(t_ecreate(&cpu, s, 0), 0);
}

TEST(ecreate_miscselect_exinfo_unsupported_gp)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		.miscselect_supported = 1U << 31,	/* anything but EXINFO */
	};
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	REQUIRE_EQ(sgx_cpu_init(&cpu, &cfg), 0);
	s->miscselect = SGX_MISC_EXINFO;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_ssaframesize_too_small_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->ssa_frame_size = 0;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->miscselect = SGX_MISC_EXINFO;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_ssaframesize_huge_no_overflow)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	/* 0xFFFFFFFF * 4096 must not wrap to a small frame size */
	s->ssa_frame_size = 0xFFFFFFFF;
	CHECK_EQ(t_ecreate(&cpu, s, 0), 0);
}

/* This processor runs 64-bit enclaves only (see ecreate.c). */
TEST(ecreate_32bit_enclave_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(0x10000000, T_SIZE);

	s->attributes.flags &= ~SGX_ATTR_MODE64BIT;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_noncanonical_base_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate(&cpu, t_secs(0x0000800000000000ULL, T_SIZE), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(0x8000000000000000ULL, T_SIZE), 0), SGX_GP);
	/* upper half, canonical */
	CHECK_EQ(t_ecreate(&cpu, t_secs(0xFFFF800000000000ULL, T_SIZE), 0), 0);
}

TEST(ecreate_size_too_large_gp)
{
	SETUP(cpu);

	/* CPUID.(12H,0):EDX[15:8] = 47 by default (server parts with EDMM,
	 * where runtimes ask for 1 TiB and more): SIZE must be < 2^47 */
	CHECK_EQ(t_ecreate(&cpu, t_secs(1ULL << 47, 0), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(1ULL << 48, 0), 0), SGX_GP);
}

TEST(ecreate_size_largest_ok)
{
	SETUP(cpu);
	long idx;

	/* 32 GiB ELRANGE: the page map must be lazily committed */
	REQUIRE_EQ(t_ecreate(&cpu, t_secs(1ULL << 35, 1ULL << 35), 0), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, (1ULL << 36) - 4096, SGX_SECINFO_REG | 3, t_page()), 0);
	idx = sgx_cpu_lookup(&cpu, (1ULL << 36) - 1);
	CHECK_EQ(idx, 1);
	sgx_cpu_destroy(&cpu);
}

TEST(ecreate_size_max_config_gp)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		.max_enclave_size_64 = 20,
	};

	REQUIRE_EQ(sgx_cpu_init(&cpu, &cfg), 0);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 1ULL << 20), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 1ULL << 19), 0), 0);
}

TEST(ecreate_size_too_small_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x1000), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x2000), 0), 0);
}

TEST(ecreate_size_not_pow2_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x3000), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x11000), 0), SGX_GP);
}

TEST(ecreate_base_misaligned_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE + 0x1000, T_SIZE), 0), SGX_GP);
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE / 2, T_SIZE), 0), SGX_GP);
}

TEST(ecreate_attributes_reserved_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.flags |= 1ULL << 3;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->attributes.flags = SGX_ATTR_MODE64BIT | (1ULL << 63);
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_attributes_unsupported_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	/* CET and AEXNOTIFY are not in CPUID.(12H,1) of this processor */
	s->attributes.flags |= SGX_ATTR_CET;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_AEXNOTIFY;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_attributes_supported_ok)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG |
			      SGX_ATTR_PROVISIONKEY | SGX_ATTR_EINITTOKENKEY |
			      SGX_ATTR_KSS;
	CHECK_EQ(t_ecreate(&cpu, s, 0), 0);
}

TEST(ecreate_init_set_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->attributes.flags |= SGX_ATTR_INIT;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
}

TEST(ecreate_secs_reserved_gp)
{
	SETUP(cpu);
	struct sgx_secs *s;

	s = t_secs(T_BASE, T_SIZE);
	s->reserved1[0] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s = t_secs(T_BASE, T_SIZE);
	s->reserved2[31] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s = t_secs(T_BASE, T_SIZE);
	s->reserved3[5] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s = t_secs(T_BASE, T_SIZE);
	((uint8_t *)s)[4095] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s = t_secs(T_BASE, T_SIZE);
	((uint8_t *)s)[262] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	CHECK(!cpu.epcm[0].valid);
}

TEST(ecreate_kss_fields_without_kss_gp)
{
	SETUP(cpu);
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);

	s->config_id[63] = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->config_id[63] = 0;
	s->config_svn = 1;
	CHECK_EQ(t_ecreate(&cpu, s, 0), SGX_GP);
	s->config_id[0] = 7;
	s->attributes.flags |= SGX_ATTR_KSS;
	CHECK_EQ(t_ecreate(&cpu, s, 0), 0);
	CHECK_EQ(((struct sgx_secs *)t_epc(&cpu, 0))->config_svn, 1);
	CHECK_EQ(((struct sgx_secs *)t_epc(&cpu, 0))->config_id[0], 7);
}

/* Order: SECINFO is checked before the EPCM (a used page with a bad SECINFO). */
TEST(ecreate_order_secinfo_before_epcm)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	CHECK_EQ(t_ecreate_secinfo(&cpu, t_secs(T_BASE, T_SIZE), 0, SGX_SECINFO_REG), SGX_GP);
	/* and the EPCM before the SECS content */
	CHECK_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x1000), 0), SGX_PF);
}
