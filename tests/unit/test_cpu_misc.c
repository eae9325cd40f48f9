/* SPDX-License-Identifier: MIT */
/*
 * The processor outside the leaves: error names, EPC set-up and sections,
 * CPUID leaf 0x12, XSAVE sizes and XFRM rules, launch-control MSRs.
 */
#include <cpuid.h>
#include <errno.h>
#include <sys/mman.h>

#include "test_cpu_helpers.h"
#include "cpu/internal.h"

TEST(error_names)
{
	static const struct { int code; const char *name; } names[] = {
		{ 0, "SGX_SUCCESS" }, { 1, "SGX_INVALID_SIG_STRUCT" },
		{ 2, "SGX_INVALID_ATTRIBUTE" }, { 3, "SGX_BLKSTATE" },
		{ 4, "SGX_INVALID_MEASUREMENT" }, { 5, "SGX_NOTBLOCKABLE" },
		{ 6, "SGX_PG_INVLD" }, { 7, "SGX_EPC_PAGE_CONFLICT" },
		{ 8, "SGX_INVALID_SIGNATURE" }, { 9, "SGX_MAC_COMPARE_FAIL" },
		{ 10, "SGX_PAGE_NOT_BLOCKED" }, { 11, "SGX_NOT_TRACKED" },
		{ 12, "SGX_VA_SLOT_OCCUPIED" }, { 13, "SGX_CHILD_PRESENT" },
		{ 14, "SGX_ENCLAVE_ACT" }, { 15, "SGX_ENTRYEPOCH_LOCKED" },
		{ 16, "SGX_INVALID_EINITTOKEN" }, { 17, "SGX_PREV_TRK_INCMPL" },
		{ 18, "SGX_PG_IS_SECS" }, { 19, "SGX_PAGE_ATTRIBUTES_MISMATCH" },
		{ 20, "SGX_PAGE_NOT_MODIFIABLE" }, { 21, "SGX_PAGE_NOT_DEBUGGABLE" },
		{ 32, "SGX_INVALID_CPUSVN" }, { 64, "SGX_INVALID_ISVSVN" },
		{ 128, "SGX_UNMASKED_EVENT" }, { 256, "SGX_INVALID_KEYNAME" },
		{ 22, "SGX_UNKNOWN" }, { 1000, "SGX_UNKNOWN" }, { -5, "SGX_UNKNOWN" },
		{ 0x4000000d, "#GP" }, { 0x4000000e, "#PF" }, { 0x40000006, "#UD" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(sgx_error_name(names[i].code), names[i].name))
			test_fail(__FILE__, __LINE__, "%d: %s != %s", names[i].code,
				  sgx_error_name(names[i].code), names[i].name);
}

TEST(epc_default_size)
{
	struct sgx_cpu cpu;

	REQUIRE_EQ(sgx_cpu_init(&cpu, NULL), 0);
	CHECK_EQ(cpu.nr_pages, 262144);	/* 1 GiB */
	CHECK_EQ(cpu.nr_sections, 1);
	CHECK(cpu.epc_fd >= 0);
	sgx_cpu_destroy(&cpu);
	CHECK_EQ(cpu.epc_fd, -1);
}

TEST(epc_bad_config)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config c1 = { .epc_size = 4096 * 3 + 1 };
	struct sgx_cpu_config c2 = { .epc_size = 4096 * 4, .nr_sections = 9 };
	struct sgx_cpu_config c3 = { .epc_size = 4096 * 2, .nr_sections = 3 };

	CHECK_EQ(sgx_cpu_init(&cpu, &c1), -EINVAL);
	CHECK_EQ(sgx_cpu_init(&cpu, &c2), -EINVAL);
	CHECK_EQ(sgx_cpu_init(&cpu, &c3), -EINVAL);
}

TEST(epc_index_and_page)
{
	struct sgx_cpu cpu;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	CHECK(sgx_epc_page(&cpu, 0) == (void *)cpu.epc);
	CHECK(sgx_epc_page(&cpu, 3) == (void *)(cpu.epc + 3 * 4096));
	CHECK(sgx_epc_page(&cpu, T_EPC_PAGES) == NULL);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc), 0);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc + 4095), 0);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc + 4096), 1);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc + T_EPC_PAGES * 4096 - 1), T_EPC_PAGES - 1);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc + T_EPC_PAGES * 4096), -1);
	CHECK_EQ(sgx_epc_index(&cpu, cpu.epc - 1), -1);
	CHECK_EQ(sgx_epc_index(&cpu, NULL), -1);
}

/* The memfd is the EPC: a second mapping of it sees the processor's writes. */
TEST(epc_memfd_shared)
{
	struct sgx_cpu cpu;
	uint8_t *view;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	view = mmap(NULL, 4096, PROT_READ, MAP_SHARED, cpu.epc_fd, 5 * 4096);
	REQUIRE(view != MAP_FAILED);
	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 5, T_BASE, SGX_SECINFO_REG | 3, t_tcs()), 0);
	CHECK_EQ(((struct sgx_tcs *)view)->ossa, 0x1000);
	munmap(view, 4096);
}

TEST(cpuid_subleaf0)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config cfg = { .epc_size = 64 * 4096, .sgx2 = true };
	uint32_t r[4];

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	sgx_cpu_cpuid(&cpu, 0, r);
	CHECK_EQ(r[0], 1);		/* SGX1 only */
	CHECK_EQ(r[1], 1);		/* MISCSELECT.EXINFO */
	CHECK_EQ(r[2], 0);
	CHECK_EQ(r[3], 0x2F1F);		/* 64-bit 2^47, 32-bit 2^31 */
	sgx_cpu_destroy(&cpu);
	REQUIRE_EQ(sgx_cpu_init(&cpu, &cfg), 0);
	sgx_cpu_cpuid(&cpu, 0, r);
	CHECK_EQ(r[0], 3);		/* SGX1 | SGX2 */
}

TEST(cpuid_subleaf1)
{
	struct sgx_cpu cpu;
	uint32_t r[4];

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	sgx_cpu_cpuid(&cpu, 1, r);
	/* INIT DEBUG MODE64BIT PROVISIONKEY EINITTOKEN_KEY KSS */
	CHECK_EQ(r[0], 0xB7);
	CHECK_EQ(r[1], 0);
	CHECK_EQ(r[2], 0x7);		/* configured XFRM: x87 SSE AVX */
	CHECK_EQ(r[3], 0);
}

/*
 * The default XFRM (CPUID.(12H,1):ECX:EDX) against the rules CPUID leaf
 * 0DH and XSETBV set for any XFRM (SDM vol. 1 13.2-13.3, vol. 3 37.7.2),
 * read from the CPU here, not from the code under test: x87 and SSE
 * always; only components CPUID.(0DH,0) enumerates for XCR0, each with a
 * state area (CPUID.(0DH,i).EAX != 0 for i >= 2); AVX needs SSE; the
 * three AVX-512 components all or none, and only with AVX; MPX's two
 * together; AMX's two together; and nothing the OS left out of XCR0
 * (an enclave cannot use state the OS does not save).
 */
TEST(cpuid_default_xfrm_is_xcr0)
{
	struct sgx_cpu cpu;
	unsigned int a, b, c, d;
	uint32_t lo, hi, r[4];
	uint64_t xfrm, supported, xcr0, avx512 = 0xe0, mpx = 0x18,
		 amx = 3ULL << 17;

	REQUIRE(__get_cpuid(1, &a, &b, &c, &d));
	if (!(c & (1U << 27)))
		test_skip("no OSXSAVE");
	REQUIRE(__get_cpuid_max(0, NULL) >= 0xd);
	__cpuid_count(0xd, 0, a, b, c, d);
	supported = (uint64_t)d << 32 | a;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	xcr0 = (uint64_t)hi << 32 | lo;

	REQUIRE_EQ(sgx_cpu_init(&cpu, NULL), 0);
	sgx_cpu_cpuid(&cpu, 1, r);
	xfrm = (uint64_t)r[3] << 32 | r[2];
	CHECK_EQ(xfrm & 3, 3);
	CHECK_EQ(xfrm & ~supported, 0);
	CHECK_EQ(xfrm & ~xcr0, 0);
	for (unsigned i = 2; i < 63; i++) {
		if (!(xfrm & (1ULL << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		if (!a)
			test_fail(__FILE__, __LINE__, "XFRM bit %u has no state area", i);
	}
	if (xfrm & 4)
		CHECK(xfrm & 2);
	CHECK((xfrm & avx512) == 0 || (xfrm & avx512) == avx512);
	if (xfrm & avx512)
		CHECK(xfrm & 4);
	CHECK((xfrm & mpx) == 0 || (xfrm & mpx) == mpx);
	CHECK((xfrm & amx) == 0 || (xfrm & amx) == amx);
	/* The OS's user states of this host are all offered to enclaves. */
	CHECK_EQ(xfrm, xcr0 & supported);
	sgx_cpu_destroy(&cpu);
}

TEST(cpuid_epc_sections)
{
	struct sgx_cpu cpu;
	struct sgx_cpu_config cfg = { .epc_size = 100 * 4096, .nr_sections = 3 };
	uint64_t total = 0;
	uint32_t r[4];

	REQUIRE_EQ(sgx_cpu_init(&cpu, &cfg), 0);
	for (uint32_t i = 2; i < 5; i++) {
		uint64_t base, size;

		sgx_cpu_cpuid(&cpu, i, r);
		CHECK_EQ(r[0] & 0xF, 1);
		CHECK_EQ(r[2] & 0xF, 1);
		base = (r[0] & 0xFFFFF000ULL) | ((uint64_t)(r[1] & 0xFFFFF) << 32);
		size = (r[2] & 0xFFFFF000ULL) | ((uint64_t)(r[3] & 0xFFFFF) << 32);
		CHECK_EQ(size, (i < 4 ? 33 : 34) * 4096ULL);
		if (i == 2)
			CHECK_EQ(base, 0x80200000ULL);
		else
			CHECK(base >= 0x80200000ULL + (i - 2) * (1ULL << 30));
		total += size;
	}
	CHECK_EQ(total, 100 * 4096);
	sgx_cpu_cpuid(&cpu, 5, r);
	CHECK_EQ(r[0] | r[1] | r[2] | r[3], 0);
	CHECK_EQ(cpu.sections[1].first_page, 33);
	CHECK_EQ(cpu.sections[2].first_page, 66);
}

TEST(xsave_size_legacy_and_avx)
{
	unsigned int a, b, c, d;

	CHECK_EQ(sgx_xsave_size(SGX_XFRM_LEGACY), 576);
	/* AVX state: offset 576, 256 bytes, on every CPU that has it */
	__cpuid_count(0xD, 0, a, b, c, d);
	if (!(a & SGX_XFRM_AVX))
		test_skip("no AVX state");
	CHECK_EQ(sgx_xsave_size(SGX_XFRM_LEGACY | SGX_XFRM_AVX), 832);
}

TEST(ssa_frame_min)
{
	CHECK_EQ(sgx_ssa_frame_min(SGX_XFRM_LEGACY, 0), 576 + 184);
	CHECK_EQ(sgx_ssa_frame_min(SGX_XFRM_LEGACY, SGX_MISC_EXINFO), 576 + 16 + 184);
}

TEST(xfrm_legal_rules)
{
	CHECK(sgx_xfrm_legal(0x3));
	CHECK(sgx_xfrm_legal(0x7));
	CHECK(sgx_xfrm_legal(0xE7));
	CHECK(sgx_xfrm_legal(0x1F));
	CHECK(sgx_xfrm_legal(0x60003));
	CHECK(sgx_xfrm_legal(0x203));
	CHECK(!sgx_xfrm_legal(0x2));		/* no x87 */
	CHECK(!sgx_xfrm_legal(0x5));		/* AVX without SSE */
	CHECK(!sgx_xfrm_legal(0xE3));		/* AVX-512 without AVX */
	CHECK(!sgx_xfrm_legal(0x67));		/* partial AVX-512 */
	CHECK(!sgx_xfrm_legal(0xB));		/* one MPX bit */
	CHECK(!sgx_xfrm_legal(0x13));
	CHECK(!sgx_xfrm_legal(0x20003));	/* one AMX bit */
}

TEST(msr_default_lehash)
{
	struct sgx_cpu cpu;
	uint64_t v;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8C, &v), 0);
	CHECK_EQ(v, 0xa6053e051270b7acULL);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8D, &v), 0);
	CHECK_EQ(v, 0x6cfbe8ba8b3b413dULL);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8E, &v), 0);
	CHECK_EQ(v, 0xc4916d99f2b3735dULL);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8F, &v), 0);
	CHECK_EQ(v, 0xd4f8c05909f9bb3bULL);
	/* the byte view is Intel's LE MRSIGNER */
	{
		uint8_t h[32];

		sgx_lehash_bytes(&cpu, h);
		CHECK(t_hex_eq(h, "acb77012053e05a63d413b8bbae8fb6c5d73b3f2996d91c43bbbf90959c0f8d4", 32));
	}
}

TEST(msr_write_read)
{
	struct sgx_cpu cpu;
	uint64_t v;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(sgx_wrmsr(&cpu, 0x8E, 0x0123456789abcdefULL), 0);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8E, &v), 0);
	CHECK_EQ(v, 0x0123456789abcdefULL);
	REQUIRE(t_set_lehash(&cpu, T_SIG1_MRSIGNER));
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8C, &v), 0);
	CHECK_EQ(v, 0x14caea7de719d783ULL);
}

TEST(msr_locked_gp)
{
	struct sgx_cpu cpu;
	uint64_t v;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	cpu.lc_locked = true;
	CHECK_EQ(sgx_wrmsr(&cpu, 0x8C, 1), SGX_GP);
	REQUIRE_EQ(sgx_rdmsr(&cpu, 0x8C, &v), 0);
	CHECK_EQ(v, 0xa6053e051270b7acULL);
}

TEST(msr_unknown_gp)
{
	struct sgx_cpu cpu;
	uint64_t v;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	CHECK_EQ(sgx_wrmsr(&cpu, 0x8B, 1), SGX_GP);
	CHECK_EQ(sgx_wrmsr(&cpu, 0x90, 1), SGX_GP);
	CHECK_EQ(sgx_rdmsr(&cpu, 0x3A, &v), SGX_GP);
}

/* Bad operands never crash: NULL and wild EPC-looking pointers. */
TEST(leaves_survive_null_operands)
{
	struct sgx_cpu cpu;
	uint64_t v;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	CHECK_EQ(sgx_ecreate(&cpu, NULL, t_epc(&cpu, 0)), SGX_PF);
	CHECK_EQ(sgx_eadd(&cpu, NULL, t_epc(&cpu, 1)), SGX_PF);
	CHECK_EQ(sgx_eextend(&cpu, NULL, NULL), SGX_PF);
	CHECK_EQ(sgx_einit(&cpu, NULL, t_epc(&cpu, 0), NULL), SGX_PF);
	CHECK_EQ(sgx_eremove(&cpu, NULL), SGX_PF);
	CHECK_EQ(sgx_edbgrd(&cpu, NULL, &v), SGX_PF);
	CHECK_EQ(sgx_edbgwr(&cpu, (void *)~7UL, 0), SGX_PF);
	CHECK_EQ(sgx_ecreate(&cpu, (void *)1, NULL), SGX_GP);
}
