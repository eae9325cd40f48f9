/* SPDX-License-Identifier: MIT */
/*
 * EADD and EEXTEND: one test per SDM check (sgx-facts.md §4.2, §4.3), the
 * TCS field forcing, the EPCM update, and the measurement records.
 */
#include "test_cpu_helpers.h"

#define SETUP(cpu) struct sgx_cpu cpu; REQUIRE_EQ(t_cpu_init(&cpu), 0); \
	REQUIRE_EQ(t_ecreate_std(&cpu), 0)
#define REG_RW	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)

/* A PAGEINFO that EADD accepts (SECS in page 0, target page 1). */
static struct sgx_secinfo g_si;
static struct sgx_pageinfo g_pi;

static struct sgx_pageinfo *good_pi(struct sgx_cpu *cpu)
{
	memset(&g_si, 0, sizeof(g_si));
	g_si.flags = REG_RW;
	memset(&g_pi, 0, sizeof(g_pi));
	g_pi.linaddr = T_BASE;
	g_pi.srcpge = (uintptr_t)t_page();
	g_pi.secinfo = (uintptr_t)&g_si;
	g_pi.secs = (uintptr_t)t_epc(cpu, 0);
	return &g_pi;
}

TEST(eadd_ok_reg)
{
	SETUP(cpu);
	uint8_t *src = t_page();

	memset(src, 0x5A, 4096);
	REQUIRE_EQ(t_eadd(&cpu, 0, 5, T_BASE + 0x3000, SGX_SECINFO_REG | 5, src), 0);
	CHECK(cpu.epcm[5].valid);
	CHECK_EQ(cpu.epcm[5].page_type, SGX_PT_REG);
	CHECK_EQ(cpu.epcm[5].r, 1);
	CHECK_EQ(cpu.epcm[5].w, 0);
	CHECK_EQ(cpu.epcm[5].x, 1);
	CHECK_EQ(cpu.epcm[5].enclave_address, T_BASE + 0x3000);
	CHECK_EQ(cpu.epcm[5].secs, 0);
	CHECK_EQ(cpu.epcm[5].pending | cpu.epcm[5].modified | cpu.epcm[5].blocked | cpu.epcm[5].pr, 0);
	CHECK_MEM(t_epc(&cpu, 5), src, 4096);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
	CHECK_EQ(t_ctl(&cpu, 0)->update_counter, 2);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE + 0x3FFF), 5);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE + 0x4000), -1);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE - 1), -1);
}

TEST(eadd_pageinfo_misaligned_gp)
{
	SETUP(cpu);
	static struct sgx_pageinfo pi[2];

	memcpy((uint8_t *)pi + 16, good_pi(&cpu), 32);
	CHECK_EQ(sgx_eadd(&cpu, (void *)((uint8_t *)pi + 16), t_epc(&cpu, 1)), SGX_GP);
	CHECK(!cpu.epcm[1].valid);
}

TEST(eadd_epc_misaligned_gp)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eadd(&cpu, good_pi(&cpu), (uint8_t *)t_epc(&cpu, 1) + 2048), SGX_GP);
}

TEST(eadd_target_not_epc_pf)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eadd(&cpu, good_pi(&cpu), t_page()), SGX_PF);
}

TEST(eadd_srcpge_misaligned_gp)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	pi->srcpge += 64;
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eadd_secs_misaligned_gp)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	pi->secs += 8;
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eadd_linaddr_misaligned_gp)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	pi->linaddr += 0x800;
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eadd_secinfo_misaligned_gp)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	pi->secinfo += 8;
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eadd_secs_not_epc_pf)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	pi->secs = (uintptr_t)t_page();
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_PF);
}

TEST(eadd_secinfo_reserved_flags_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW | SGX_SECINFO_PENDING, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW | SGX_SECINFO_MODIFIED, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW | (1ULL << 16), t_page()), SGX_GP);
	CHECK(!cpu.epcm[1].valid);
}

TEST(eadd_secinfo_reserved_bytes_gp)
{
	SETUP(cpu);
	struct sgx_pageinfo *pi = good_pi(&cpu);

	g_si.reserved[0] = 1;
	CHECK_EQ(sgx_eadd(&cpu, pi, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eadd_secinfo_bad_type_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_SECS, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_VA, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_TRIM, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, 7ULL << 8 | 3, t_page()), SGX_GP);
}

TEST(eadd_target_valid_pf)
{
	SETUP(cpu);

	/* page 0 is the SECS itself */
	CHECK_EQ(t_eadd(&cpu, 0, 0, T_BASE, REG_RW, t_page()), SGX_PF);
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE + 0x1000, REG_RW, t_page()), SGX_PF);
}

TEST(eadd_secs_invalid_pf)
{
	SETUP(cpu);

	CHECK_EQ(t_eadd(&cpu, 7, 1, T_BASE, REG_RW, t_page()), SGX_PF);
}

TEST(eadd_secs_not_secs_pf)
{
	SETUP(cpu);

	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	/* PAGEINFO.SECS names a REG page */
	CHECK_EQ(t_eadd(&cpu, 1, 2, T_BASE + 0x1000, REG_RW, t_page()), SGX_PF);
}

TEST(eadd_tcs_reserved_gp)
{
	SETUP(cpu);
	struct sgx_tcs *tcs = t_tcs();

	tcs->reserved[0] = 1;
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_TCS, tcs), SGX_GP);
	tcs = t_tcs();
	tcs->reserved[4023] = 0x80;
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_TCS, tcs), SGX_GP);
	CHECK(!cpu.epcm[1].valid);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 0);
}

/*
 * A zero source into a page never used needs no copy (the EPC memfd's
 * hole is zero); into a page that held data it must still be copied, and
 * a TCS that EADD refused leaves its bytes, so that page counts as used.
 */
TEST(eadd_zero_source_over_used_page)
{
	SETUP(cpu);
	uint8_t *src = t_page();
	struct sgx_tcs *tcs = t_tcs();

	memset(src, 0, 4096);
	REQUIRE_EQ(t_eadd(&cpu, 0, 5, T_BASE + 0x3000, REG_RW, src), 0);
	CHECK_MEM(t_epc(&cpu, 5), src, 4096);
	memset(src, 0xA5, 4096);
	REQUIRE_EQ(t_eadd(&cpu, 0, 6, T_BASE + 0x4000, REG_RW, src), 0);
	REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, 6)), 0);
	memset(src, 0, 4096);
	REQUIRE_EQ(t_eadd(&cpu, 0, 6, T_BASE + 0x4000, REG_RW, src), 0);
	CHECK_MEM(t_epc(&cpu, 6), src, 4096);
	/* Refused after its copy: page 7's next zero EADD clears it. */
	tcs->reserved[0] = 1;
	memset((uint8_t *)tcs + 0x800, 0x77, 16);
	CHECK_EQ(t_eadd(&cpu, 0, 7, T_BASE + 0x5000, SGX_SECINFO_TCS, tcs), SGX_GP);
	REQUIRE_EQ(t_eadd(&cpu, 0, 7, T_BASE + 0x5000, REG_RW, src), 0);
	CHECK_MEM(t_epc(&cpu, 7), src, 4096);
}

TEST(eadd_reg_w_without_r_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_REG | SGX_SECINFO_W, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_REG | SGX_SECINFO_W | SGX_SECINFO_X, t_page()), SGX_GP);
	/* X alone and no permission at all are fine */
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_REG | SGX_SECINFO_X, t_page()), 0);
	CHECK_EQ(t_eadd(&cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_REG, t_page()), 0);
}

TEST(eadd_outside_elrange_gp)
{
	SETUP(cpu);

	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE - 0x1000, REG_RW, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE + T_SIZE, REG_RW, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, 0, REG_RW, t_page()), SGX_GP);
	CHECK_EQ(t_eadd(&cpu, 0, 1, T_BASE + T_SIZE - 0x1000, REG_RW, t_page()), 0);
}

TEST(eadd_linaddr_taken_gp)
{
	SETUP(cpu);

	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE + 0x2000, REG_RW, t_page()), 0);
	CHECK_EQ(t_eadd(&cpu, 0, 2, T_BASE + 0x2000, REG_RW, t_page()), SGX_GP);
	CHECK(!cpu.epcm[2].valid);
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 1);
}

TEST(eadd_tcs_fields_forced)
{
	SETUP(cpu);
	struct sgx_tcs *tcs = t_tcs();
	struct sgx_tcs *epc;

	tcs->state = 0x1234;
	tcs->flags = SGX_TCS_DBGOPTIN | (1ULL << 5);
	tcs->cssa = 3;
	tcs->nssa = 2;
	tcs->aep = 0xdeadbeef;
	tcs->ofsbase = 0x5000;
	tcs->fslimit = 0xFFF;
	/* SECINFO permissions on a TCS are dropped */
	REQUIRE_EQ(t_eadd(&cpu, 0, 4, T_BASE, SGX_SECINFO_TCS | 7, tcs), 0);
	epc = t_epc(&cpu, 4);
	CHECK_EQ(epc->state, 0);
	CHECK_EQ(epc->flags, 1ULL << 5);
	CHECK_EQ(epc->cssa, 0);
	CHECK_EQ(epc->aep, 0);
	CHECK_EQ(epc->nssa, 2);
	CHECK_EQ(epc->ossa, 0x1000);
	CHECK_EQ(epc->oentry, 0x2000);
	CHECK_EQ(epc->ofsbase, 0x5000);
	CHECK_EQ(epc->fslimit, 0xFFF);
	CHECK_EQ(cpu.epcm[4].page_type, SGX_PT_TCS);
	CHECK_EQ(cpu.epcm[4].r | cpu.epcm[4].w | cpu.epcm[4].x, 0);
}

/* The TCS is measured with FLAGS 0x100 whatever SECINFO said (§2). */
TEST(eadd_tcs_measured_without_perms)
{
	struct sgx_cpu a, b;
	uint8_t ha[32], hb[32];

	REQUIRE_EQ(t_cpu_init(&a), 0);
	REQUIRE_EQ(t_cpu_init(&b), 0);
	REQUIRE_EQ(t_ecreate_std(&a), 0);
	REQUIRE_EQ(t_ecreate_std(&b), 0);
	REQUIRE_EQ(t_eadd(&a, 0, 1, T_BASE, SGX_SECINFO_TCS | 7, t_tcs()), 0);
	REQUIRE_EQ(t_eadd(&b, 0, 1, T_BASE, SGX_SECINFO_TCS, t_tcs()), 0);
	REQUIRE(t_mrenclave(&a, 0, ha));
	REQUIRE(t_mrenclave(&b, 0, hb));
	CHECK_MEM(ha, hb, 32);
}

/* The EADD record covers the offset and the SECINFO flags. */
TEST(eadd_measures_offset_and_flags)
{
	struct sgx_cpu a, b, c;
	uint8_t ha[32], hb[32], hc[32];

	REQUIRE_EQ(t_cpu_init(&a), 0);
	REQUIRE_EQ(t_cpu_init(&b), 0);
	REQUIRE_EQ(t_cpu_init(&c), 0);
	REQUIRE_EQ(t_ecreate_std(&a), 0);
	REQUIRE_EQ(t_ecreate_std(&b), 0);
	REQUIRE_EQ(t_ecreate_std(&c), 0);
	REQUIRE_EQ(t_eadd(&a, 0, 1, T_BASE, REG_RW, t_page()), 0);
	REQUIRE_EQ(t_eadd(&b, 0, 1, T_BASE + 0x1000, REG_RW, t_page()), 0);
	REQUIRE_EQ(t_eadd(&c, 0, 1, T_BASE, REG_RW | SGX_SECINFO_X, t_page()), 0);
	REQUIRE(t_mrenclave(&a, 0, ha));
	REQUIRE(t_mrenclave(&b, 0, hb));
	REQUIRE(t_mrenclave(&c, 0, hc));
	CHECK(memcmp(ha, hb, 32) != 0);
	CHECK(memcmp(ha, hc, 32) != 0);
}

/* sgx-facts §6.5: the tiny enclave, self-computed from the rules. */
TEST(eadd_eextend_tiny_enclave_kat)
{
	struct sgx_cpu cpu;
	uint8_t h[32];

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x2000), 0), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, SGX_SECINFO_REG | 3, t_page()), 0);
	REQUIRE_EQ(t_eextend_page(&cpu, 0, 1), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_TCS, t_page()), 0);
	REQUIRE_EQ(t_eextend_page(&cpu, 0, 2), 0);
	REQUIRE(t_mrenclave(&cpu, 0, h));
	CHECK(t_hex_eq(h, "c62b62b99c4d540a66201bbee6db951fb2545b704bd85a8fa139362a91b2635b", 32));
	CHECK_EQ(t_ctl(&cpu, 0)->update_counter, 1 + 2 * (1 + 16 * 5));
	CHECK_EQ(t_ctl(&cpu, 0)->child_count, 2);
}

/* ---- EEXTEND ---- */

TEST(eextend_secs_misaligned_gp)
{
	SETUP(cpu);

	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	CHECK_EQ(sgx_eextend(&cpu, (uint8_t *)t_epc(&cpu, 0) + 256, t_epc(&cpu, 1)), SGX_GP);
}

TEST(eextend_secs_not_epc_pf)
{
	SETUP(cpu);

	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	CHECK_EQ(sgx_eextend(&cpu, t_page(), t_epc(&cpu, 1)), SGX_PF);
}

TEST(eextend_chunk_misaligned_gp)
{
	SETUP(cpu);

	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), (uint8_t *)t_epc(&cpu, 1) + 128), SGX_GP);
	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), (uint8_t *)t_epc(&cpu, 1) + 1), SGX_GP);
}

TEST(eextend_chunk_not_epc_pf)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), t_page()), SGX_PF);
}

TEST(eextend_chunk_invalid_pf)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), t_epc(&cpu, 9)), SGX_PF);
}

TEST(eextend_chunk_secs_pf)
{
	SETUP(cpu);

	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), t_epc(&cpu, 0)), SGX_PF);
}

TEST(eextend_wrong_secs_gp)
{
	SETUP(cpu);

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE + T_SIZE, T_SIZE), 2), 0);
	REQUIRE_EQ(t_eadd(&cpu, 0, 1, T_BASE, REG_RW, t_page()), 0);
	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 2), t_epc(&cpu, 1)), SGX_GP);
	/* RBX naming a non-SECS EPC page */
	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 1), t_epc(&cpu, 1)), SGX_GP);
	CHECK_EQ(t_ctl(&cpu, 2)->update_counter, 1);
}

TEST(eextend_counts_and_offsets)
{
	struct sgx_cpu a, b;
	uint8_t ha[32], hb[32];
	uint8_t *src = t_page();

	/* same page content, chunks measured at different offsets differ */
	memset(src, 0x11, 4096);
	REQUIRE_EQ(t_cpu_init(&a), 0);
	REQUIRE_EQ(t_cpu_init(&b), 0);
	REQUIRE_EQ(t_ecreate_std(&a), 0);
	REQUIRE_EQ(t_ecreate_std(&b), 0);
	REQUIRE_EQ(t_eadd(&a, 0, 1, T_BASE, REG_RW, src), 0);
	REQUIRE_EQ(t_eadd(&b, 0, 1, T_BASE, REG_RW, src), 0);
	REQUIRE_EQ(sgx_eextend(&a, t_epc(&a, 0), (uint8_t *)t_epc(&a, 1) + 0x100), 0);
	REQUIRE_EQ(sgx_eextend(&b, t_epc(&b, 0), (uint8_t *)t_epc(&b, 1) + 0x200), 0);
	CHECK_EQ(t_ctl(&a, 0)->update_counter, 1 + 1 + 5);
	REQUIRE(t_mrenclave(&a, 0, ha));
	REQUIRE(t_mrenclave(&b, 0, hb));
	CHECK(memcmp(ha, hb, 32) != 0);
}

/* ---- concurrency: leaves on different enclaves of one processor ---- */

struct builder {
	struct sgx_cpu *cpu;
	size_t first;		/* EPC pages first .. first+2 */
	uint64_t base;
	int bad;
};

/* Build, check and tear down the §6.5 tiny enclave, many times. */
static void *build_loop(void *arg)
{
	struct builder *b = arg;
	uint8_t *zero = t_page();

	for (int i = 0; i < 200; i++) {
		uint8_t h[32];

		if (t_ecreate(b->cpu, t_secs(b->base, 0x2000), b->first) ||
		    t_eadd(b->cpu, b->first, b->first + 1, b->base, SGX_SECINFO_REG | 3, zero) ||
		    t_eextend_page(b->cpu, b->first, b->first + 1) ||
		    t_eadd(b->cpu, b->first, b->first + 2, b->base + 0x1000, SGX_SECINFO_TCS, zero) ||
		    t_eextend_page(b->cpu, b->first, b->first + 2) ||
		    !t_mrenclave(b->cpu, b->first, h) ||
		    !t_hex_eq(h, "c62b62b99c4d540a66201bbee6db951fb2545b704bd85a8fa139362a91b2635b", 32) ||
		    sgx_cpu_lookup(b->cpu, b->base + 0x1000) != (long)b->first + 2 ||
		    sgx_eremove(b->cpu, t_epc(b->cpu, b->first + 1)) ||
		    sgx_eremove(b->cpu, t_epc(b->cpu, b->first + 2)) ||
		    sgx_eremove(b->cpu, t_epc(b->cpu, b->first)))
			b->bad++;
	}
	free(zero);
	return NULL;
}

TEST(eadd_eextend_parallel_enclaves)
{
	struct sgx_cpu cpu;
	struct builder b[3];
	pthread_t th[3];

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	for (int i = 0; i < 3; i++) {
		b[i] = (struct builder){ &cpu, 10 + 3 * (size_t)i, T_BASE + 0x100000 * (uint64_t)i, 0 };
		REQUIRE(pthread_create(&th[i], NULL, build_loop, &b[i]) == 0);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(b[i].bad, 0);
	CHECK(cpu.enclaves == NULL);
	sgx_cpu_destroy(&cpu);
}
