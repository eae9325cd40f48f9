// SPDX-License-Identifier: MIT
/*
 * ENCLS[EUPDATESVN] (Intel document 648682; the kernel's sgx_update_svn):
 * each check in its order (#GP without the leaf, SGX_EPC_NOT_READY with any
 * valid EPC page, SGX_INSUFFICIENT_ENTROPY, SGX_NO_UPDATE when the loaded
 * microcode is not newer), what the commit changes (CPUSVN, the paging
 * key) and what it leaves (everything on failure), CPUID's bit 10, and the
 * keys EGETKEY derives across an update.
 */
#include <limits.h>

#include "test_cpu_helpers.h"

static const uint8_t old_svn[16] = { 2, 2, 2, 2, 2, 2, 2, 2,
				     2, 2, 2, 2, 2, 2, 2, 2 };
static const uint8_t new_svn[16] = { 2, 3, 2, 2, 2, 2, 2, 2,
				     2, 2, 2, 2, 2, 2, 2, 2 };

/* A processor with the leaf, CPUSVN 0202.., and microcode @ucode loaded. */
static void setup(struct sgx_cpu *cpu, const uint8_t *ucode)
{
	REQUIRE_EQ(t_cpu_init(cpu), 0);
	cpu->config.eupdatesvn = true;
	memcpy(cpu->keys.cpusvn, old_svn, 16);
	if (ucode)
		sgx_cpu_load_microcode(cpu, ucode);
}

TEST(without_the_leaf_it_is_gp)
{
	struct sgx_cpu cpu;

	setup(&cpu, new_svn);
	cpu.config.eupdatesvn = false;
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_GP);
	CHECK_MEM(cpu.keys.cpusvn, old_svn, 16);
	sgx_cpu_destroy(&cpu);
}

TEST(cpuid_bit_10_enumerates_it)
{
	struct sgx_cpu_config cfg = { .epc_size = 1 << 20 };
	struct sgx_epc_section s[SGX_MAX_EPC_SECTIONS];
	uint32_t r[4];

	REQUIRE_EQ(sgx_cpu_config_defaults(&cfg), 0);
	sgx_epc_layout(256, 1, s);
	cfg.eupdatesvn = true;
	sgx_cpuid_leaf12(&cfg, s, 1, 0, r);
	CHECK(r[0] & (1U << 10));
	cfg.eupdatesvn = false;
	sgx_cpuid_leaf12(&cfg, s, 1, 0, r);
	CHECK(!(r[0] & (1U << 10)));
	CHECK(r[0] & 1U);
}

TEST(newer_microcode_raises_cpusvn_once)
{
	struct sgx_cpu cpu;

	setup(&cpu, new_svn);
	CHECK_EQ(sgx_eupdatesvn(&cpu), 0);
	CHECK_MEM(cpu.keys.cpusvn, new_svn, 16);
	/* Taken: the next one has nothing to do. */
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	CHECK_MEM(cpu.keys.cpusvn, new_svn, 16);
	sgx_cpu_destroy(&cpu);
}

TEST(microcode_not_newer_is_no_update)
{
	static const uint8_t zero[16];
	uint8_t lower[16], mixed[16];
	struct sgx_cpu cpu;

	memcpy(lower, old_svn, 16);
	lower[3] = 1;
	memcpy(mixed, new_svn, 16);
	mixed[0] = 1;			/* one component up, one down */
	setup(&cpu, NULL);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);	/* none loaded */
	sgx_cpu_load_microcode(&cpu, old_svn);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	sgx_cpu_load_microcode(&cpu, lower);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	sgx_cpu_load_microcode(&cpu, mixed);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	sgx_cpu_load_microcode(&cpu, zero);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	CHECK_MEM(cpu.keys.cpusvn, old_svn, 16);
	sgx_cpu_destroy(&cpu);
}

TEST(any_valid_epc_page_is_epc_not_ready)
{
	struct sgx_cpu cpu;

	setup(&cpu, new_svn);
	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_EPC_NOT_READY);
	CHECK_MEM(cpu.keys.cpusvn, old_svn, 16);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 0)), 0);
	/* A version-array page is a valid page too, in any section. */
	REQUIRE_EQ(sgx_epa(&cpu, SGX_PT_VA, t_epc(&cpu, T_EPC_PAGES - 1)), 0);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_EPC_NOT_READY);
	CHECK_MEM(cpu.keys.cpusvn, old_svn, 16);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, T_EPC_PAGES - 1)), 0);
	CHECK_EQ(sgx_eupdatesvn(&cpu), 0);
	CHECK_MEM(cpu.keys.cpusvn, new_svn, 16);
	sgx_cpu_destroy(&cpu);
}

TEST(entropy_failure_changes_nothing_and_can_be_retried)
{
	struct sgx_cpu cpu;
	uint8_t pk[16];

	setup(&cpu, new_svn);
	memset(cpu.paging_key, 0x5a, 16);
	cpu.paging_key_set = true;
	memcpy(pk, cpu.paging_key, 16);
	atomic_store(&cpu.rdseed_failures, 2);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_INSUFFICIENT_ENTROPY);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_INSUFFICIENT_ENTROPY);
	CHECK_MEM(cpu.keys.cpusvn, old_svn, 16);
	CHECK_MEM(cpu.paging_key, pk, 16);
	CHECK_EQ(sgx_eupdatesvn(&cpu), 0);
	CHECK_MEM(cpu.keys.cpusvn, new_svn, 16);
	/* A source that never recovers. */
	atomic_store(&cpu.rdseed_failures, UINT_MAX);
	for (int i = 0; i < 20; i++)
		CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_INSUFFICIENT_ENTROPY);
	sgx_cpu_destroy(&cpu);
}

TEST(epc_is_checked_before_entropy)
{
	struct sgx_cpu cpu;

	setup(&cpu, new_svn);
	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	atomic_store(&cpu.rdseed_failures, 1);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_EPC_NOT_READY);
	/* RDSEED was not reached: the injected failure is still due. */
	CHECK_EQ(atomic_load(&cpu.rdseed_failures), 1u);
	sgx_cpu_destroy(&cpu);
}

TEST(every_commit_draws_a_new_paging_key)
{
	struct sgx_cpu cpu;
	uint8_t pk[16];

	setup(&cpu, old_svn);
	memset(cpu.paging_key, 0x5a, 16);
	cpu.paging_key_set = true;
	memcpy(pk, cpu.paging_key, 16);
	CHECK_EQ(sgx_eupdatesvn(&cpu), SGX_NO_UPDATE);
	CHECK(memcmp(cpu.paging_key, pk, 16) != 0);
	memcpy(pk, cpu.paging_key, 16);
	sgx_cpu_load_microcode(&cpu, new_svn);
	CHECK_EQ(sgx_eupdatesvn(&cpu), 0);
	CHECK(memcmp(cpu.paging_key, pk, 16) != 0);
	sgx_cpu_destroy(&cpu);
}

/*
 * After an update EGETKEY still derives the keys of the older CPUSVN,
 * identical to those derived before it (sealed data migrates), and
 * refuses a CPUSVN newer than the new one.
 */
TEST(egetkey_across_an_update)
{
	struct sgx_key_identity id = { 0 };
	struct sgx_keyrequest req = { 0 };
	uint8_t before[16], after[16], k[16], newer[16];
	struct sgx_cpu cpu;

	setup(&cpu, new_svn);
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	memset(id.mrsigner, 0x11, 32);
	req.keyname = SGX_KEYNAME_SEAL;
	req.keypolicy = SGX_KEYPOLICY_MRSIGNER;
	memcpy(req.cpusvn, old_svn, 16);
	REQUIRE_EQ(sgx_derive_key(&cpu.keys, &id, &req, before), 0);
	memcpy(req.cpusvn, new_svn, 16);
	CHECK_EQ(sgx_derive_key(&cpu.keys, &id, &req, k), SGX_INVALID_CPUSVN);

	REQUIRE_EQ(sgx_eupdatesvn(&cpu), 0);
	memcpy(req.cpusvn, old_svn, 16);
	REQUIRE_EQ(sgx_derive_key(&cpu.keys, &id, &req, after), 0);
	CHECK_MEM(after, before, 16);
	memcpy(req.cpusvn, new_svn, 16);
	REQUIRE_EQ(sgx_derive_key(&cpu.keys, &id, &req, k), 0);
	CHECK(memcmp(k, before, 16) != 0);
	memcpy(newer, new_svn, 16);
	newer[1]++;
	memcpy(req.cpusvn, newer, 16);
	CHECK_EQ(sgx_derive_key(&cpu.keys, &id, &req, k), SGX_INVALID_CPUSVN);
	sgx_cpu_destroy(&cpu);
}
