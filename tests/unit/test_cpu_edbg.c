/* SPDX-License-Identifier: MIT */
/* EDBGRD / EDBGWR: one test per SDM check (sgx-facts.md §4.6, §4.7). */
#include <stddef.h>

#include "test_cpu_helpers.h"

#define REG_RW	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)

/* A DEBUG (or not) enclave: SECS page 0, REG page 1, TCS page 2. */
static bool encl(struct sgx_cpu *cpu, bool debug)
{
	struct sgx_secs *s = t_secs(T_BASE, T_SIZE);
	uint8_t *src = t_page();

	for (int i = 0; i < 4096; i++)
		src[i] = (uint8_t)i;
	if (!debug)
		s->attributes.flags &= ~SGX_ATTR_DEBUG;
	return t_cpu_init(cpu) == 0 && t_ecreate(cpu, s, 0) == 0 &&
	       t_eadd(cpu, 0, 1, T_BASE, SGX_SECINFO_REG, src) == 0 &&
	       t_eadd(cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_TCS, t_tcs()) == 0;
}

#define SETUP(dbg) struct sgx_cpu cpu; uint64_t v = 0; (void)v; REQUIRE(encl(&cpu, dbg))
#define AT(i, off) ((uint8_t *)t_epc(&cpu, i) + (off))

TEST(edbgrd_reg_ok_ignores_permissions)
{
	SETUP(true);

	/* page 1 has no R/W/X in its EPCM */
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 8), &v), 0);
	CHECK_EQ(v, 0x0f0e0d0c0b0a0908ULL);
}

TEST(edbgwr_reg_ok)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 4088), 0x1122334455667788ULL), 0);
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 4088), &v), 0);
	CHECK_EQ(v, 0x1122334455667788ULL);
}

TEST(edbg_misaligned_gp)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 4), &v), SGX_GP);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 1), 0), SGX_GP);
}

TEST(edbg_not_epc_pf)
{
	SETUP(true);
	uint64_t *host = t_page();

	CHECK_EQ(sgx_edbgrd(&cpu, host, &v), SGX_PF);
	CHECK_EQ(sgx_edbgwr(&cpu, host, 0), SGX_PF);
}

TEST(edbg_invalid_page_pf)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(20, 0), &v), SGX_PF);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(20, 0), 0), SGX_PF);
}

TEST(edbg_secs_pf)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(0, 0), &v), SGX_PF);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(0, 0), 0), SGX_PF);
}

TEST(edbg_pending_not_debuggable)
{
	SETUP(true);

	cpu.epcm[1].pending = 1;
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 0), &v), SGX_PAGE_NOT_DEBUGGABLE);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 0), 0), SGX_PAGE_NOT_DEBUGGABLE);
}

TEST(edbg_modified_not_debuggable)
{
	SETUP(true);

	cpu.epcm[1].modified = 1;
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 0), &v), SGX_PAGE_NOT_DEBUGGABLE);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 0), 0), SGX_PAGE_NOT_DEBUGGABLE);
}

/* Order: PENDING/MODIFIED is reported before the DEBUG attribute check. */
TEST(edbg_order_pending_before_debug)
{
	SETUP(false);

	cpu.epcm[1].pending = 1;
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 0), &v), SGX_PAGE_NOT_DEBUGGABLE);
}

TEST(edbg_not_debug_enclave_gp)
{
	SETUP(false);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 0), &v), SGX_GP);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 0), 5), SGX_GP);
	CHECK_EQ(sgx_edbgrd(&cpu, AT(2, 8), &v), SGX_GP);
	CHECK_EQ(((uint64_t *)t_epc(&cpu, 1))[0], 0x0706050403020100ULL);
}

TEST(edbgrd_tcs_fields_ok)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(2, offsetof(struct sgx_tcs, ossa)), &v), 0);
	CHECK_EQ(v, 0x1000);
	CHECK_EQ(sgx_edbgrd(&cpu, AT(2, 64), &v), 0);	/* FSLIMIT/GSLIMIT */
}

TEST(edbgrd_tcs_beyond_limit_gp)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgrd(&cpu, AT(2, 72), &v), SGX_GP);
	CHECK_EQ(sgx_edbgrd(&cpu, AT(2, 4088), &v), SGX_GP);
}

TEST(edbgwr_tcs_flags_ok)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgwr(&cpu, AT(2, 8), SGX_TCS_DBGOPTIN), 0);
	CHECK_EQ(((struct sgx_tcs *)t_epc(&cpu, 2))->flags, SGX_TCS_DBGOPTIN);
}

TEST(edbgwr_tcs_other_field_gp)
{
	SETUP(true);

	CHECK_EQ(sgx_edbgwr(&cpu, AT(2, 0), 1), SGX_GP);	/* STATE */
	CHECK_EQ(sgx_edbgwr(&cpu, AT(2, 16), 0), SGX_GP);	/* OSSA */
	CHECK_EQ(sgx_edbgwr(&cpu, AT(2, 24), 5), SGX_GP);	/* CSSA/NSSA */
	CHECK_EQ(sgx_edbgwr(&cpu, AT(2, 2048), 5), SGX_GP);
	CHECK_EQ(((struct sgx_tcs *)t_epc(&cpu, 2))->cssa, 0);
}

TEST(edbgrd_va_slots)
{
	SETUP(false);	/* VA pages belong to no enclave: DEBUG is irrelevant */

	memset(&cpu.epcm[9], 0, sizeof(cpu.epcm[9]));
	cpu.epcm[9].valid = 1;
	cpu.epcm[9].page_type = SGX_PT_VA;
	((uint64_t *)t_epc(&cpu, 9))[0] = 0;
	((uint64_t *)t_epc(&cpu, 9))[3] = 0x1234;
	CHECK_EQ(sgx_edbgrd(&cpu, AT(9, 0), &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(sgx_edbgrd(&cpu, AT(9, 24), &v), 0);
	CHECK_EQ(v, ~0ULL);
}

TEST(edbgwr_va_pf)
{
	SETUP(true);

	memset(&cpu.epcm[9], 0, sizeof(cpu.epcm[9]));
	cpu.epcm[9].valid = 1;
	cpu.epcm[9].page_type = SGX_PT_VA;
	CHECK_EQ(sgx_edbgwr(&cpu, AT(9, 0), 1), SGX_PF);
}

TEST(edbg_trim_pf)
{
	SETUP(true);

	cpu.epcm[1].page_type = SGX_PT_TRIM;
	CHECK_EQ(sgx_edbgrd(&cpu, AT(1, 0), &v), SGX_PF);
	CHECK_EQ(sgx_edbgwr(&cpu, AT(1, 0), 0), SGX_PF);
}
