/* SPDX-License-Identifier: MIT */
/*
 * The emulated part's CPUID answers (src/engine/cpuid.c): leaf 7.0 SGX and
 * SGX_LC bits, leaf 0x12 in the SDM's encoding (sgx-facts.md §1.18) with
 * the values written out here by hand, the environment's configuration,
 * the trap's decoding of a ucontext, the rewritten-site table and the C
 * API's sgxemu_cpuid().
 */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

#include "cpu/enclu.h"
#include "engine/cpuid.h"
#include "sgxemu/sgxemu.h"
#include "test.h"

static void model_of(struct sgxemu_cpuid_model *m, size_t epc, unsigned n,
		     bool sgx2, bool lc)
{
	struct sgx_cpu_config cfg = { .epc_size = epc, .nr_sections = n,
				      .sgx2 = sgx2 };
	struct sgx_epc_section s[SGX_MAX_EPC_SECTIONS];

	REQUIRE_EQ(sgx_cpu_config_defaults(&cfg), 0);
	sgx_epc_layout(cfg.epc_size / 4096, cfg.nr_sections, s);
	sgxemu__cpuid_model_config(m, &cfg, s, cfg.nr_sections, lc);
}

static void answer(const struct sgxemu_cpuid_model *m, uint32_t leaf,
		   uint32_t sub, uint32_t r[4])
{
	r[0] = r[1] = r[2] = r[3] = 0x5a5a5a5a;
	sgxemu__cpuid_answer(m, leaf, sub, r);
}

TEST(cpuid_leaf12_two_sections_sdm_encoding)
{
	struct sgxemu_cpuid_model m;
	uint32_t r[4];

	model_of(&m, 64 << 20, 2, true, true);
	answer(&m, 0x12, 0, r);
	CHECK_EQ(r[0], 3);		/* SGX1 | SGX2, no EDECCSSA (bit 11) */
	CHECK_EQ(r[1], 1);		/* MISCSELECT: EXINFO */
	CHECK_EQ(r[2], 0);
	CHECK_EQ(r[3], 0x2f1f);		/* 2^31 outside 64-bit, 2^47 in it */
	/* Section 0: 32 MiB at 0x80200000; section 1 one GiB further. */
	answer(&m, 0x12, 2, r);
	CHECK_EQ(r[0], 0x80200001);
	CHECK_EQ(r[1], 0);
	CHECK_EQ(r[2], 0x02000001);
	CHECK_EQ(r[3], 0);
	answer(&m, 0x12, 3, r);
	CHECK_EQ(r[0], 0xc0200001);
	CHECK_EQ(r[2], 0x02000001);
	/* Then an invalid sub-leaf (EAX[3:0] = 0), and far beyond. */
	answer(&m, 0x12, 4, r);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
	answer(&m, 0x12, 1000, r);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
}

TEST(cpuid_leaf12_sgx1_only_and_large_epc)
{
	struct sgxemu_cpuid_model m;
	uint32_t r[4];

	model_of(&m, 6ULL << 30, 1, false, true);
	answer(&m, 0x12, 0, r);
	CHECK_EQ(r[0], 1);
	/* 6 GiB: size bits 51:32 in EDX. */
	answer(&m, 0x12, 2, r);
	CHECK_EQ(r[2], 0x80000001);
	CHECK_EQ(r[3], 1);
}

TEST(cpuid_leaf12_sub1_masks)
{
	struct sgxemu_cpuid_model m;
	uint32_t r[4];

	model_of(&m, 0, 0, true, true);
	answer(&m, 0x12, 1, r);
	/* INIT DEBUG MODE64BIT PROVISIONKEY EINITTOKENKEY KSS(bit 7) ... */
	CHECK((r[0] & 0x37) == 0x37);
	CHECK(r[0] & (1U << 7));
	/* XFRM: x87 and SSE always. */
	CHECK((r[2] & 3) == 3);
}

TEST(cpuid_leaf7_and_leaf0_and_passthrough)
{
	struct sgxemu_cpuid_model flex, locked;
	uint32_t r[4];

	model_of(&flex, 0, 0, true, true);
	model_of(&locked, 0, 0, true, false);
	answer(&flex, 7, 0, r);
	CHECK_EQ(r[0], 0x5a5a5a5a);
	CHECK_EQ(r[1], 0x5a5a5a5e);	/* | bit 2 */
	CHECK_EQ(r[2], 0x5a5a5a5a | (1U << 30));
	CHECK_EQ(r[3], 0x5a5a5a5a);
	answer(&locked, 7, 0, r);
	CHECK_EQ(r[2], 0x5a5a5a5a & ~(1U << 30));
	/* Sub-leaf 1 of leaf 7 is the host's. */
	answer(&flex, 7, 1, r);
	CHECK_EQ(r[1], 0x5a5a5a5a);
	/* Leaf 0: at least 0x16 (the TSC leaves); a higher host maximum
	 * stays. */
	r[0] = 0x10;
	sgxemu__cpuid_answer(&flex, 0, 0, r);
	CHECK_EQ(r[0], 0x16);
	r[0] = 0x20;
	sgxemu__cpuid_answer(&flex, 0, 0, r);
	CHECK_EQ(r[0], 0x20);
	const uint32_t leaves[] = { 1, 4, 0xb, 0xd, 0x80000000, 0x80000001 };
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		answer(&flex, leaves[i], 0, r);
		CHECK(r[0] == 0x5a5a5a5a && r[1] == 0x5a5a5a5a &&
		      r[2] == 0x5a5a5a5a && r[3] == 0x5a5a5a5a);
	}
}

/* ECX * EBX / EAX of a leaf 0x15, in Hz. */
static uint64_t leaf15_hz(const uint32_t r[4])
{
	return r[0] ? (uint64_t)r[2] * r[1] / r[0] : 0;
}

/*
 * Leaves 0x15 and 0x16 where the host has none (an AMD part, most
 * guests): a 25 MHz crystal and the ratio of the given TSC frequency, in
 * lowest terms, to 100 kHz; base and maximum frequency in MHz, a 100 MHz
 * bus. Leaves past the host's maximum read as 0; a host that enumerates
 * its own leaves keeps them.
 */
TEST(cpuid_tsc_leaves_from_frequency)
{
	struct sgxemu_cpuid_model m;
	uint32_t r[4];

	model_of(&m, 0, 0, true, true);
	m.host_max_leaf = 0x10;
	m.tsc_hz = 2994374000ULL;
	answer(&m, 0x15, 0, r);
	CHECK_EQ(r[2], 25000000);
	/* 2994.4 MHz / 25 MHz = 29944 / 250 = 14972 / 125. */
	CHECK_EQ(r[0], 125);
	CHECK_EQ(r[1], 14972);
	CHECK_EQ(r[3], 0);
	CHECK_EQ(leaf15_hz(r), 2994400000ULL);
	answer(&m, 0x16, 0, r);
	CHECK_EQ(r[0], 2994);
	CHECK_EQ(r[1], 2994);
	CHECK_EQ(r[2], 100);
	CHECK_EQ(r[3], 0);
	/* A round frequency: 2 GHz = 25 MHz * 80 / 1. */
	m.tsc_hz = 2000000000ULL;
	answer(&m, 0x15, 0, r);
	CHECK(r[0] == 1 && r[1] == 80 && r[2] == 25000000);
	/* Leaves between the host's maximum and 0x16 that the part does
	 * not model: zeros, whatever the CPU answered. */
	answer(&m, 0x13, 0, r);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
	answer(&m, 0x14, 1, r);
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
	/* Past 0x16 the host's again. */
	answer(&m, 0x17, 0, r);
	CHECK_EQ(r[0], 0x5a5a5a5a);
	/* A host with its own leaves keeps them. */
	m.host_max_leaf = 0x20;
	r[0] = 2, r[1] = 188, r[2] = 25000000, r[3] = 0;
	sgxemu__cpuid_answer(&m, 0x15, 0, r);
	CHECK(r[0] == 2 && r[1] == 188 && r[2] == 25000000);
	r[0] = 2100, r[1] = 3900, r[2] = 100, r[3] = 0;
	sgxemu__cpuid_answer(&m, 0x16, 0, r);
	CHECK(r[0] == 2100 && r[1] == 3900 && r[2] == 100);
	/* ... but not a leaf 0x15 without its crystal, nor an empty one. */
	r[0] = 2, r[1] = 188, r[2] = 0, r[3] = 0;
	sgxemu__cpuid_answer(&m, 0x15, 0, r);
	CHECK_EQ(leaf15_hz(r), 2000000000ULL);
	r[0] = r[1] = r[2] = r[3] = 0;
	sgxemu__cpuid_answer(&m, 0x16, 0, r);
	CHECK_EQ(r[0], 2000);
	/* No frequency at all (none found): zeros, not a division by 0. */
	uint32_t l15[4], l16[4];
	sgxemu__cpuid_tsc_leaves(0, l15, l16);
	CHECK(l15[0] == 0 && l15[1] == 0 && l15[2] == 0 && l16[0] == 0);
}

/* The host's TSC frequency (sgxemu__tsc_hz) against one measured here,
 * independently, over 200 ms: within 1 %. Where this host's TSC has no
 * steady rate (two measurements disagree) there is nothing to match. */
TEST(cpuid_tsc_hz_matches_a_measurement)
{
	enum sgxemu_tsc_source src;
	uint64_t hz = sgxemu__tsc_hz(&src);
	const char *why;
	double measured, err;

	REQUIRE(hz > 0);
	CHECK_EQ(sgxemu__tsc_hz(NULL), hz);	/* cached */
	measured = test_tsc_hz(&why);
	if (!measured)
		test_skip("%s", why);
	err = (double)hz / measured - 1.0;
	if (err < -0.01 || err > 0.01)
		test_fail(__FILE__, __LINE__, "TSC %llu Hz (%s) but measured "
			  "%.0f Hz", (unsigned long long)hz,
			  sgxemu__tsc_source_name(src), measured);
}

/* The probe's skip path, on every host: the override turns it. */
TEST(tsc_probe_override_says_unsteady)
{
	const char *why = NULL;

	setenv("SGXEMU_TEST_UNSTEADY_TSC", "1", 1);
	CHECK(test_tsc_hz(&why) == 0);
	CHECK(why && strstr(why, "SGXEMU_TEST_UNSTEADY_TSC"));
	unsetenv("SGXEMU_TEST_UNSTEADY_TSC");
}

TEST(cpuid_model_from_environment)
{
	struct sgxemu_cpuid_model m;
	uint32_t r[4];

	setenv("SGXEMU_EPC_SIZE", "8M", 1);
	setenv("SGXEMU_EPC_SECTIONS", "2", 1);
	setenv("SGXEMU_SGX2", "0", 1);
	setenv("SGXEMU_LAUNCH_CONTROL", "locked", 1);
	REQUIRE_EQ(sgxemu__cpuid_model_env(&m), 0);
	CHECK(!m.lc_flexible);
	answer(&m, 0x12, 0, r);
	CHECK_EQ(r[0], 1 | 1U << 10 | 1U << 11);	/* SGX1, EUPDATESVN, EDECCSSA */
	answer(&m, 0x12, 1, r);
	CHECK_EQ(r[0] >> 10 & 1, 1);		/* AEXNOTIFY */
	setenv("SGXEMU_AEXNOTIFY", "0", 1);
	REQUIRE_EQ(sgxemu__cpuid_model_env(&m), 0);
	unsetenv("SGXEMU_AEXNOTIFY");
	answer(&m, 0x12, 0, r);
	CHECK_EQ(r[0], 1 | 1U << 10);
	answer(&m, 0x12, 1, r);
	CHECK_EQ(r[0] >> 10 & 1, 0);
	setenv("SGXEMU_EUPDATESVN", "0", 1);
	setenv("SGXEMU_AEXNOTIFY", "0", 1);
	REQUIRE_EQ(sgxemu__cpuid_model_env(&m), 0);
	unsetenv("SGXEMU_AEXNOTIFY");
	unsetenv("SGXEMU_EUPDATESVN");
	answer(&m, 0x12, 0, r);
	CHECK_EQ(r[0], 1);
	answer(&m, 0x12, 2, r);
	CHECK_EQ(r[2], 0x00400001);
	answer(&m, 0x12, 3, r);
	CHECK_EQ(r[0], 0xc0200001);
	CHECK_EQ(r[2], 0x00400001);
	answer(&m, 0x12, 4, r);
	CHECK_EQ(r[0], 0);
	/* Values the platform would refuse are refused here too. */
	setenv("SGXEMU_LAUNCH_CONTROL", "sometimes", 1);
	CHECK_EQ(sgxemu__cpuid_model_env(&m), -EINVAL);
	unsetenv("SGXEMU_LAUNCH_CONTROL");
	setenv("SGXEMU_EPC_SIZE", "lots", 1);
	CHECK_EQ(sgxemu__cpuid_model_env(&m), -EINVAL);
	setenv("SGXEMU_EPC_SIZE", "1M", 1);
	setenv("SGXEMU_EPC_SECTIONS", "9", 1);
	CHECK_EQ(sgxemu__cpuid_model_env(&m), -EINVAL);
}

/* A ucontext as the kernel gives it for a trap at @code. */
static void fake_trap(ucontext_t *uc, const uint8_t *code, int trapno,
		      uint64_t rax, uint64_t rcx)
{
	memset(uc, 0, sizeof(*uc));
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)code;
	uc->uc_mcontext.gregs[REG_TRAPNO] = trapno;
	uc->uc_mcontext.gregs[REG_RAX] = (greg_t)rax;
	uc->uc_mcontext.gregs[REG_RCX] = (greg_t)rcx;
	uc->uc_mcontext.gregs[REG_RBX] = (greg_t)0xdeadbeefcafef00dULL;
}

/*
 * A CPUID in enclave mode that faulting stopped is answered in place as
 * the part (as it runs natively on a host without faulting), unless
 * SGXEMU_CPUID_ENCLAVE=ud asks for hardware's #UD; never under rewrite or
 * off, where enclave CPUID does not fault.
 */
TEST(cpuid_in_enclave_answered_unless_ud)
{
	static const uint8_t cpuid_insn[] = { 0x0f, 0xa2, 0x90, 0x90 };
	struct sgxemu_cpuid_model m;
	ucontext_t uc;

	model_of(&m, 64 << 20, 1, true, true);
	sgxemu__cpuid_publish(&m);
	unsetenv("SGXEMU_CPUID_ENCLAVE");
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_FAULT);
	CHECK(!sgxemu__cpuid_enclave_ud());
	fake_trap(&uc, cpuid_insn, 13, 0x12, 2);
	REQUIRE(sgxemu__cpuid_enclave(&uc, 3));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP],
		 (greg_t)(uintptr_t)(cpuid_insn + 2));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RAX], 0x80200001);	/* section 0 */
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RCX], 0x04000001);
	fake_trap(&uc, cpuid_insn, 13, 7, 0);
	REQUIRE(sgxemu__cpuid_enclave(&uc, 3));
	CHECK(uc.uc_mcontext.gregs[REG_RBX] & 4);		/* SGX */
	/* Leaf 0xD.0's EBX is the size for XFRM, as XCR0 is XFRM in
	 * enclave mode: 576 for x87|SSE, the host's for the host's XCR0. */
	sgx_xsave_layout_init();
	fake_trap(&uc, cpuid_insn, 13, 0xd, 0);
	REQUIRE(sgxemu__cpuid_enclave(&uc, 3));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RBX], 576);
	{
		unsigned a, b, c, d;

		__cpuid_count(0xd, 0, a, b, c, d);
		fake_trap(&uc, cpuid_insn, 13, 0xd, 0);
		REQUIRE(sgxemu__cpuid_enclave(&uc, sgx_host_xcr0()));
		CHECK_EQ(uc.uc_mcontext.gregs[REG_RBX], b);
		CHECK_EQ(uc.uc_mcontext.gregs[REG_RAX], a);
	}

	setenv("SGXEMU_CPUID_ENCLAVE", "ud", 1);
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_FAULT);
	CHECK(sgxemu__cpuid_enclave_ud());
	fake_trap(&uc, cpuid_insn, 13, 0x12, 2);
	CHECK(!sgxemu__cpuid_enclave(&uc, 3));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], (greg_t)(uintptr_t)cpuid_insn);
	unsetenv("SGXEMU_CPUID_ENCLAVE");
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_REWRITE);
	CHECK(!sgxemu__cpuid_enclave(&uc, 3));
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_OFF);
	CHECK(!sgxemu__cpuid_enclave(&uc, 3));
}

TEST(cpuid_trap_fault_and_rewrite)
{
	static const uint8_t cpuid_insn[] = { 0x0f, 0xa2, 0x90, 0x90 };
	static const uint8_t ud2_insn[] = { 0x0f, 0x0b, 0x90, 0x90 };
	static const uint8_t other[] = { 0x0f, 0x01, 0xd7, 0x90 };
	struct sgxemu_cpuid_model m;
	ucontext_t uc;

	model_of(&m, 64 << 20, 1, true, true);
	fake_trap(&uc, cpuid_insn, 13, 0x12, 2);
	CHECK(!sgxemu__cpuid_trap(&uc));	/* nothing published yet */
	sgxemu__cpuid_publish(&m);
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_OFF);
	CHECK(!sgxemu__cpuid_trap(&uc));

	sgxemu__cpuid_set_mech(SGXEMU_CPUID_FAULT);
	fake_trap(&uc, cpuid_insn, 13, 0xffffffff00000012ULL, 0xabcd00000002ULL);
	CHECK(sgxemu__cpuid_faulted(&uc));	/* what enclave mode would ask */
	REQUIRE(sgxemu__cpuid_trap(&uc));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], (greg_t)(uintptr_t)(cpuid_insn + 2));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RAX], 0x80200001);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RBX], 0);	/* upper half cleared */
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RCX], 0x04000001);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RDX], 0);
	/* A #GP elsewhere, a #UD at ENCLU, a page fault: not ours. */
	fake_trap(&uc, other, 13, 0x12, 0);
	CHECK(!sgxemu__cpuid_trap(&uc));
	CHECK(!sgxemu__cpuid_faulted(&uc));
	fake_trap(&uc, other, 6, 0x12, 0);
	CHECK(!sgxemu__cpuid_trap(&uc));
	fake_trap(&uc, cpuid_insn, 14, 0x12, 0);
	CHECK(!sgxemu__cpuid_trap(&uc));

	/* UD2 only at a recorded site. */
	sgxemu__cpuid_set_mech(SGXEMU_CPUID_REWRITE);
	fake_trap(&uc, ud2_insn, 6, 7, 0);
	CHECK(!sgxemu__cpuid_trap(&uc));
	REQUIRE_EQ(sgxemu__cpuid_site_add((uintptr_t)ud2_insn), 0);
	fake_trap(&uc, ud2_insn, 6, 7, 0);
	REQUIRE(sgxemu__cpuid_trap(&uc));
	CHECK(uc.uc_mcontext.gregs[REG_RBX] & 4);	/* SGX */
	CHECK(uc.uc_mcontext.gregs[REG_RCX] & (1U << 30));	/* SGX_LC */
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], (greg_t)(uintptr_t)(ud2_insn + 2));
	sgxemu__cpuid_site_del((uintptr_t)ud2_insn);
	fake_trap(&uc, ud2_insn, 6, 7, 0);
	CHECK(!sgxemu__cpuid_trap(&uc));
}

TEST(cpuid_site_table)
{
	size_t base = sgxemu__cpuid_nr_sites();

	CHECK_EQ(sgxemu__cpuid_site_add(0), -EINVAL);
	for (uintptr_t a = 0x400000; a < 0x400000 + 4000 * 16; a += 16)
		REQUIRE_EQ(sgxemu__cpuid_site_add(a), 0);
	CHECK_EQ(sgxemu__cpuid_nr_sites(), base + 4000);
	CHECK_EQ(sgxemu__cpuid_site_add(0x400000), 0);	/* once */
	CHECK_EQ(sgxemu__cpuid_nr_sites(), base + 4000);
	CHECK(sgxemu__cpuid_site_known(0x400000 + 16 * 1234));
	CHECK(!sgxemu__cpuid_site_known(0x400000 + 16 * 1234 + 1));
	for (uintptr_t a = 0x400000; a < 0x400000 + 4000 * 16; a += 32)
		sgxemu__cpuid_site_del(a);
	CHECK_EQ(sgxemu__cpuid_nr_sites(), base + 2000);
	CHECK(!sgxemu__cpuid_site_known(0x400000));
	CHECK(sgxemu__cpuid_site_known(0x400010));
	/* The table refuses rather than overflows. */
	int ret = 0;
	for (uintptr_t a = 0x10000000; !ret && a < 0x10000000 + 20000 * 8; a += 8)
		ret = sgxemu__cpuid_site_add(a);
	CHECK_EQ(ret, -ENOSPC);
}

TEST(cpuid_api_matches_platform)
{
	uint32_t r[4], p[4];
	unsigned a, b, c, d;

	REQUIRE_EQ(sgxemu_cpuid(7, 0, r), 0);
	CHECK(r[1] & 4);
	CHECK(r[2] & (1U << 30));	/* flexible launch control default */
	__cpuid_count(7, 0, a, b, c, d);
	CHECK_EQ(r[0], a);
	CHECK_EQ(r[1], b | 4);
	CHECK_EQ(r[3], d);
	for (uint32_t s = 0; s < 4; s++) {
		REQUIRE_EQ(sgxemu_cpuid(0x12, s, r), 0);
		sgxemu_platform_cpuid(s, p);
		CHECK_MEM(r, p, sizeof(r));
	}
	REQUIRE_EQ(sgxemu_cpuid(0, 0, r), 0);
	CHECK(r[0] >= 0x16);
	__cpuid(0, a, b, c, d);
	CHECK_EQ(r[1], b);	/* the vendor string stays the host's */
	CHECK_EQ(r[2], c);
	CHECK_EQ(r[3], d);
	CHECK_EQ(sgxemu_cpuid(0, 0, NULL), -EINVAL);
}

TEST(cpuid_mechanism_choice)
{
	const char *note;
	bool fault = sgxemu__cpuid_fault_available();

	unsetenv("SGXEMU_CPUID");
	CHECK_EQ(sgxemu__cpuid_choose(&note),
		 fault ? SGXEMU_CPUID_FAULT : SGXEMU_CPUID_REWRITE);
	setenv("SGXEMU_CPUID", "rewrite", 1);
	CHECK_EQ(sgxemu__cpuid_choose(&note), SGXEMU_CPUID_REWRITE);
	CHECK(!note);
	setenv("SGXEMU_CPUID", "off", 1);
	CHECK_EQ(sgxemu__cpuid_choose(&note), SGXEMU_CPUID_OFF);
	CHECK(!strcmp(sgxemu_cpuid_mechanism(), "off"));
	setenv("SGXEMU_CPUID", "fault", 1);
	CHECK_EQ(sgxemu__cpuid_choose(&note),
		 fault ? SGXEMU_CPUID_FAULT : SGXEMU_CPUID_REWRITE);
	CHECK(fault ? !note : note != NULL);
	setenv("SGXEMU_CPUID", "sideways", 1);
	sgxemu__cpuid_choose(&note);
	CHECK(note != NULL);
	/* Probing leaves this thread's CPUID as it was. */
	CHECK(!sgxemu__cpuid_fault_enabled());
}
