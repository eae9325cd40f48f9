/* SPDX-License-Identifier: MIT */
/* EREMOVE: one test per SDM check (sgx-facts.md §4.5). */
#include "test_cpu_helpers.h"

#define REG_RW	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)
#define SETUP(cpu) struct sgx_cpu cpu; REQUIRE_EQ(t_cpu_init(&cpu), 0); \
	REQUIRE_EQ(t_ecreate_std(&cpu), 0); \
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0); \
	REQUIRE_EQ(t_eadd(&cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_TCS, t_tcs()), 0)

TEST(eremove_misaligned_gp)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eremove(&cpu, (uint8_t *)t_epc(&cpu, 1) + 8), SGX_GP);
	CHECK(cpu.epcm[1].valid);
}

TEST(eremove_not_epc_pf)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eremove(&cpu, t_page()), SGX_PF);
	CHECK_EQ(sgx_eremove(&cpu, (uint8_t *)t_epc(&cpu, 0) - 4096), SGX_PF);
}

TEST(eremove_free_page_ok)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 30)), 0);
	CHECK(!cpu.epcm[30].valid);
}

TEST(eremove_reg_ok)
{
	SETUP(cpu);

	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	CHECK(!cpu.epcm[1].valid);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE), -1);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE + 0x1000), 2);
	/* the address is free again, and so is the EPC page */
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	/* removing twice: the second time the page is already free */
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
}

TEST(eremove_tcs_ok)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 2)), 0);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
}

TEST(eremove_secs_child_present)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 0)), SGX_CHILD_PRESENT);
	CHECK(cpu.epcm[0].valid);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 0)), SGX_CHILD_PRESENT);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 2)), 0);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 0)), 0);
}

TEST(eremove_secs_last_frees_enclave)
{
	SETUP(cpu);

	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 2)), 0);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 0)), 0);
	CHECK(!cpu.epcm[0].valid);
	CHECK(cpu.ctl[0] == NULL);
	CHECK(cpu.enclaves == NULL);
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE) == NULL);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE), -1);
	/* the page and the ELRANGE can be used again */
	CHECK_EQ(t_ecreate_std(&cpu), 0);
}

TEST(eremove_secs_keeps_other_enclaves)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE, T_SIZE), 5), 0);
	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE + 2 * T_SIZE, T_SIZE), 6), 0);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 5)), 0);
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE) == t_ctl(&cpu, 0));
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE + T_SIZE) == NULL);
	CHECK(sgx_cpu_find_enclave(&cpu, T_BASE + 2 * T_SIZE) == t_ctl(&cpu, 6));
}

TEST(eremove_reg_enclave_active)
{
	SETUP(cpu);

	atomic_store(&t_ctl(&cpu, 0)->active_threads, 1);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), SGX_ENCLAVE_ACT);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 2)), SGX_ENCLAVE_ACT);
	CHECK(cpu.epcm[1].valid);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 2);
	atomic_store(&t_ctl(&cpu, 0)->active_threads, 0);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
}

/* Threads in another enclave do not matter. */
TEST(eremove_other_enclave_active_ok)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE, T_SIZE), 5), 0);
	atomic_store(&t_ctl(&cpu, 5)->active_threads, 3);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
}

TEST(eremove_va_ok)
{
	SETUP(cpu);

	/* a VA page as EPA leaves it */
	memset(&cpu.epcm[10], 0, sizeof(cpu.epcm[10]));
	cpu.epcm[10].valid = 1;
	cpu.epcm[10].page_type = SGX_PT_VA;
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 10)), 0);
	CHECK(!cpu.epcm[10].valid);
}

TEST(eremove_trim_accepted_while_active_ok)
{
	SETUP(cpu);

	/* EMODT to TRIM, then EACCEPT (MODIFIED cleared) */
	cpu.epcm[1].page_type = SGX_PT_TRIM;
	cpu.epcm[1].modified = 0;
	atomic_store(&t_ctl(&cpu, 0)->active_threads, 1);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), 0);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
}

TEST(eremove_trim_modified_while_active)
{
	SETUP(cpu);

	cpu.epcm[1].page_type = SGX_PT_TRIM;
	cpu.epcm[1].modified = 1;
	atomic_store(&t_ctl(&cpu, 0)->active_threads, 1);
	CHECK_EQ(sgx_eremove(&cpu, t_epc(&cpu, 1)), SGX_ENCLAVE_ACT);
}
