/* SPDX-License-Identifier: MIT */
/*
 * SGX2 leaves of the processor model: EAUG, EMODPR, EMODT (ENCLS) and
 * EACCEPT, EACCEPTCOPY, EMODPE (ENCLU), one test per SDM check and error
 * code (sgx-facts.md §4.13-4.15, §4.22-4.25), the ETRACK rule EACCEPT
 * applies after EMODPR/EMODT, and EREMOVE of trimmed pages.
 *
 * The expected results are the sheet's; the EPCM is inspected directly.
 */
#include "test_cpu_helpers.h"
#include "cpu/enclu.h"

#define REG_R	(SGX_SECINFO_REG | SGX_SECINFO_R)
#define REG_RW	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)
#define REG_RWX	(REG_RW | SGX_SECINFO_X)
#define SI_PAGE	(T_BASE)		/* holds the enclave's SECINFOs */
#define DATA	(T_BASE + 0x1000)	/* REG RW, EADDed */
#define TCS0	(T_BASE + 0x2000)	/* TCS, EADDed */
#define SRC	(T_BASE + 0x3000)	/* REG RWX, EADDed: EACCEPTCOPY source */
#define AUG	(T_BASE + 0x8000)	/* EAUGed by the tests */

struct fx {
	struct sgx_cpu cpu;
	struct sgx_encl_ctl *ctl;
	int notified;
	uint64_t notified_at;
};

static bool t_all_zero_page(const void *p)
{
	static const uint8_t zero[SGX_PAGE_SIZE];

	return memcmp(p, zero, sizeof(zero)) == 0;
}

static struct fx *fx_of(struct sgx_cpu *cpu)
{
	return (struct fx *)cpu;
}

static void on_change(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		      uint64_t linaddr)
{
	(void)ctl;
	fx_of(cpu)->notified++;
	fx_of(cpu)->notified_at = linaddr;
}

/* EPC pages: 0 SECS, 1 SI_PAGE, 2 DATA, 3 TCS0, 4 SRC; 10.. free. */
static bool setup(struct fx *f, bool sgx2, bool init)
{
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		.xfrm_supported = SGX_XFRM_LEGACY | SGX_XFRM_AVX,
		.sgx2 = sgx2,
	};
	uint8_t *src = t_page();

	memset(f, 0, sizeof(*f));
	if (sgx_cpu_init(&f->cpu, &cfg) || t_ecreate_std(&f->cpu) ||
	    t_eadd(&f->cpu, 0, 1, SI_PAGE, REG_RW, t_page()) ||
	    t_eadd(&f->cpu, 0, 2, DATA, REG_RW, t_page()) ||
	    t_eadd(&f->cpu, 0, 3, TCS0, SGX_SECINFO_TCS, t_tcs()))
		return false;
	memset(src, 0x5a, SGX_PAGE_SIZE);
	if (t_eadd(&f->cpu, 0, 4, SRC, REG_RWX, src))
		return false;
	f->ctl = t_ctl(&f->cpu, 0);
	f->ctl->initialized = init;
	f->cpu.epcm_changed = on_change;
	return true;
}

/* A SECINFO in enclave memory, at SI_PAGE + 64 * @slot; its address. */
static uint64_t si_at(struct fx *f, unsigned slot, uint64_t flags)
{
	struct sgx_secinfo *si = (struct sgx_secinfo *)
		((uint8_t *)t_epc(&f->cpu, 1) + 64 * slot);

	memset(si, 0, sizeof(*si));
	si->flags = flags;
	return SI_PAGE + 64 * slot;
}

/* A SECINFO in host memory for the ENCLS leaves. */
static struct sgx_secinfo *host_si(uint64_t flags)
{
	static _Thread_local struct sgx_secinfo si;

	memset(&si, 0, sizeof(si));
	si.flags = flags;
	return &si;
}

static int eaug(struct fx *f, size_t epc, uint64_t lin)
{
	static _Thread_local struct sgx_pageinfo pi;

	memset(&pi, 0, sizeof(pi));
	pi.linaddr = lin;
	pi.secs = (uintptr_t)t_epc(&f->cpu, 0);
	return sgx_eaug(&f->cpu, &pi, t_epc(&f->cpu, epc));
}

/* ETRACK with nobody inside: the cycle completes at once. */
static int track(struct fx *f)
{
	return sgx_etrack(&f->cpu, t_epc(&f->cpu, 0));
}

#define SETUP(f) struct fx f; REQUIRE(setup(&f, true, true))

/* --- EAUG ----------------------------------------------------------------- */

TEST(eaug_adds_pending_rw_reg_page)
{
	SETUP(f);
	struct sgx_epcm_entry *e = &f.cpu.epcm[10];
	uint32_t children = f.ctl->child_count;

	/* Junk the processor cannot know of (the memfd is another
	 * process's too after a fork), which EAUG must clear. */
	sgx_cpu_epc_shared(&f.cpu);
	memset(t_epc(&f.cpu, 10), 0xcc, SGX_PAGE_SIZE);
	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	CHECK(e->valid && e->pending && !e->modified && !e->pr && !e->blocked);
	CHECK(e->r && e->w && !e->x);
	CHECK_EQ(e->page_type, SGX_PT_REG);
	CHECK_EQ(e->enclave_address, AUG);
	CHECK_EQ(e->secs, 0);
	CHECK(t_all_zero_page(t_epc(&f.cpu, 10)));
	CHECK_EQ(f.ctl->child_count, children + 1);
	CHECK_EQ(sgx_cpu_lookup(&f.cpu, AUG), 10);
}

/* A page EAUG skips clearing (never held data) reads as zero; one that
 * held an enclave's data and was removed is cleared before reuse. */
TEST(eaug_fresh_and_reused_pages_read_zero)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 11, AUG), 0);
	CHECK(t_all_zero_page(t_epc(&f.cpu, 11)));
	/* What the enclave keeps in its page. */
	memset(t_epc(&f.cpu, 2), 0x5a, SGX_PAGE_SIZE);
	REQUIRE_EQ(sgx_eremove(&f.cpu, t_epc(&f.cpu, 2)), 0);
	REQUIRE_EQ(eaug(&f, 2, AUG + SGX_PAGE_SIZE), 0);
	CHECK(t_all_zero_page(t_epc(&f.cpu, 2)));
}

TEST(eaug_alignment_gp)
{
	SETUP(f);
	static uint8_t buf[128] __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_pageinfo *odd = (void *)(buf + 8);

	memset(&pi, 0, sizeof(pi));
	pi.linaddr = AUG;
	pi.secs = (uintptr_t)t_epc(&f.cpu, 0);
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, (uint8_t *)t_epc(&f.cpu, 10) + 64),
		 SGX_GP);
	memcpy(odd, &pi, sizeof(pi));
	CHECK_EQ(sgx_eaug(&f.cpu, odd, t_epc(&f.cpu, 10)), SGX_GP);
	pi.linaddr = AUG + 8;
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_GP);
	pi.linaddr = AUG;
	pi.secs += 64;
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_GP);
	CHECK(!f.cpu.epcm[10].valid);
}

TEST(eaug_srcpge_or_secinfo_gp)
{
	SETUP(f);
	struct sgx_pageinfo pi __attribute__((aligned(32)));

	memset(&pi, 0, sizeof(pi));
	pi.linaddr = AUG;
	pi.secs = (uintptr_t)t_epc(&f.cpu, 0);
	pi.srcpge = (uintptr_t)t_page();
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_GP);
	pi.srcpge = 0;
	pi.secinfo = (uintptr_t)host_si(REG_RW);
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_GP);
	CHECK(!f.cpu.epcm[10].valid);
}

TEST(eaug_not_epc_pf)
{
	SETUP(f);
	struct sgx_pageinfo pi __attribute__((aligned(32)));

	CHECK_EQ(sgx_eaug(&f.cpu, NULL, t_page()), SGX_PF);
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = AUG;
	pi.secs = (uintptr_t)t_page();
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_PF);
	pi.secs = (uintptr_t)t_epc(&f.cpu, 0);
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_page()), SGX_PF);
}

TEST(eaug_target_valid_pf)
{
	SETUP(f);

	CHECK_EQ(eaug(&f, 2, AUG), SGX_PF);	/* EPC page 2 is DATA */
	CHECK_EQ(f.cpu.epcm[2].enclave_address, DATA);
}

TEST(eaug_secs_not_secs_pf)
{
	SETUP(f);
	struct sgx_pageinfo pi __attribute__((aligned(32)));

	memset(&pi, 0, sizeof(pi));
	pi.linaddr = AUG;
	pi.secs = (uintptr_t)t_epc(&f.cpu, 2);		/* a REG page */
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_PF);
	pi.secs = (uintptr_t)t_epc(&f.cpu, 20);		/* free */
	CHECK_EQ(sgx_eaug(&f.cpu, &pi, t_epc(&f.cpu, 10)), SGX_PF);
}

TEST(eaug_uninitialised_gp)
{
	struct fx f;

	REQUIRE(setup(&f, true, false));
	CHECK_EQ(eaug(&f, 10, AUG), SGX_GP);
	CHECK(!f.cpu.epcm[10].valid);
}

TEST(eaug_outside_elrange_gp)
{
	SETUP(f);

	CHECK_EQ(eaug(&f, 10, T_BASE + T_SIZE), SGX_GP);
	CHECK_EQ(eaug(&f, 10, T_BASE - 0x1000), SGX_GP);
	CHECK(!f.cpu.epcm[10].valid);
}

TEST(eaug_address_taken_gp)
{
	SETUP(f);

	CHECK_EQ(eaug(&f, 10, DATA), SGX_GP);
	CHECK_EQ(sgx_cpu_lookup(&f.cpu, DATA), 2);
}

TEST(sgx2_leaves_undefined_on_sgx1)
{
	struct fx f;
	struct sgx_lp lp;
	uint64_t rax;
	bool zf;

	REQUIRE(setup(&f, false, true));
	CHECK_EQ(eaug(&f, 10, AUG), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(REG_R), t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		 SGX_GP);
	memset(&lp, 0, sizeof(lp));
	lp.ctl = f.ctl;
	for (uint64_t leaf = SGX_EACCEPT; leaf <= SGX_EACCEPTCOPY; leaf++)
		CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, leaf, si_at(&f, 0, REG_RW),
					DATA, SRC, &rax, &zf), SGX_GP);
	CHECK(!f.cpu.epcm[2].pr);
}

/* --- EMODPR --------------------------------------------------------------- */

TEST(emodpr_restricts_and_sets_pr)
{
	SETUP(f);
	struct sgx_epcm_entry *e = &f.cpu.epcm[4];

	/* SRC is RWX; asking for R|W (and nothing can be added) */
	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R | SGX_SECINFO_W),
			      t_epc(&f.cpu, 4)), 0);
	CHECK(e->pr && e->r && e->w && !e->x);
	/* extending through EMODPR does nothing */
	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R | SGX_SECINFO_X),
			      t_epc(&f.cpu, 4)), 0);
	CHECK(e->r && !e->w && !e->x);
	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(0), t_epc(&f.cpu, 4)), 0);
	CHECK(!e->r && !e->w && !e->x && e->pr);
}

TEST(emodpr_alignment_gp_and_not_epc_pf)
{
	SETUP(f);
	struct sgx_secinfo si[2] __attribute__((aligned(64)));

	memset(si, 0, sizeof(si));
	si[0].flags = SGX_SECINFO_R;
	CHECK_EQ(sgx_emodpr(&f.cpu, (void *)((uint8_t *)si + 32),
			    t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, si, (uint8_t *)t_epc(&f.cpu, 2) + 8), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, si, t_page()), SGX_PF);
	CHECK(!f.cpu.epcm[2].pr);
}

TEST(emodpr_secinfo_reserved_or_w_without_r_gp)
{
	SETUP(f);
	struct sgx_secinfo *si = host_si(SGX_SECINFO_R);

	si->reserved[5] = 1;
	CHECK_EQ(sgx_emodpr(&f.cpu, si, t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R | (1ULL << 6)),
			    t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R | (1ULL << 16)),
			    t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_W), t_epc(&f.cpu, 2)),
		 SGX_GP);
	CHECK(!f.cpu.epcm[2].pr && f.cpu.epcm[2].w);
}

TEST(emodpr_invalid_page_pf)
{
	SETUP(f);

	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 30)),
		 SGX_PF);
}

TEST(emodpr_pending_or_modified_not_modifiable)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 10)),
		 SGX_PAGE_NOT_MODIFIABLE);
	CHECK(!f.cpu.epcm[10].pr && f.cpu.epcm[10].w);
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM),
			     t_epc(&f.cpu, 2)), 0);
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 2)),
		 SGX_PAGE_NOT_MODIFIABLE);
}

TEST(emodpr_not_reg_pf)
{
	SETUP(f);

	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 3)),
		 SGX_PF);				/* TCS */
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 0)),
		 SGX_PF);				/* SECS */
}

TEST(emodpr_uninitialised_gp)
{
	struct fx f;

	REQUIRE(setup(&f, true, false));
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 2)),
		 SGX_GP);
	CHECK(!f.cpu.epcm[2].pr);
}

/* --- EMODT ---------------------------------------------------------------- */

TEST(emodt_reg_to_tcs_and_trim)
{
	SETUP(f);
	struct sgx_epcm_entry *e = &f.cpu.epcm[2];

	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 4)),
		   0);
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TCS),
			     t_epc(&f.cpu, 2)), 0);
	CHECK(e->modified && !e->pr && !e->r && !e->w && !e->x);
	CHECK_EQ(e->page_type, SGX_PT_TCS);
	/* EMODT clears PR */
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM),
			     t_epc(&f.cpu, 4)), 0);
	CHECK(!f.cpu.epcm[4].pr && f.cpu.epcm[4].modified);
	CHECK_EQ(f.cpu.epcm[4].page_type, SGX_PT_TRIM);
}

TEST(emodt_tcs_to_trim_only)
{
	SETUP(f);

	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TCS), t_epc(&f.cpu, 3)),
		 SGX_PF);
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM),
			     t_epc(&f.cpu, 3)), 0);
	CHECK_EQ(f.cpu.epcm[3].page_type, SGX_PT_TRIM);
}

TEST(emodt_bad_type_or_reserved_gp)
{
	SETUP(f);
	struct sgx_secinfo *si;

	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_REG), t_epc(&f.cpu, 2)),
		 SGX_GP);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_SECS), t_epc(&f.cpu, 2)),
		 SGX_GP);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_VA), t_epc(&f.cpu, 2)),
		 SGX_GP);
	si = host_si(SGX_SECINFO_TRIM);
	si->reserved[0] = 1;
	CHECK_EQ(sgx_emodt(&f.cpu, si, t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM | (1ULL << 7)),
			   t_epc(&f.cpu, 2)), SGX_GP);
	CHECK_EQ(f.cpu.epcm[2].page_type, SGX_PT_REG);
}

TEST(emodt_alignment_gp_invalid_pf)
{
	SETUP(f);

	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM),
			   (uint8_t *)t_epc(&f.cpu, 2) + 4), SGX_GP);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_page()), SGX_PF);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 30)),
		 SGX_PF);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 0)),
		 SGX_PF);
}

TEST(emodt_pending_or_modified_not_modifiable)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 10)),
		 SGX_PAGE_NOT_MODIFIABLE);
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TCS), t_epc(&f.cpu, 2)),
		   0);
	/* a TCS not yet accepted cannot be trimmed */
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		 SGX_PAGE_NOT_MODIFIABLE);
	CHECK_EQ(f.cpu.epcm[2].page_type, SGX_PT_TCS);
}

TEST(emodt_uninitialised_gp)
{
	struct fx f;

	REQUIRE(setup(&f, true, false));
	CHECK_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		 SGX_GP);
}

/* --- EACCEPT -------------------------------------------------------------- */

TEST(eaccept_completes_eaug)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_RW | SGX_SECINFO_PENDING);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	REQUIRE_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG), 0);
	CHECK(!f.cpu.epcm[10].pending && f.cpu.epcm[10].r && f.cpu.epcm[10].w);
	CHECK_EQ(f.notified, 1);
	CHECK_EQ(f.notified_at, AUG);
	/* twice: the page is no longer pending */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK_EQ(f.notified, 1);
}

TEST(eaccept_secinfo_operand_checks)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	si_at(&f, 0, REG_RW | SGX_SECINFO_PENDING);
	/* misaligned, outside ELRANGE: #GP */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, SI_PAGE + 32, AUG), SGX_GP);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, T_BASE + T_SIZE, AUG), SGX_GP);
	/* on a page that is absent, pending, or a TCS: #PF */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, T_BASE + 0x9000, AUG), SGX_PF);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, AUG, AUG), SGX_PF);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, TCS0, AUG), SGX_PF);
	/* on a page without R: #PF */
	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(0), t_epc(&f.cpu, 4)), 0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, SRC, AUG), SGX_PF);
	CHECK(f.cpu.epcm[10].pending);
}

TEST(eaccept_secinfo_reserved_gp)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_RW | SGX_SECINFO_PENDING);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	((uint8_t *)t_epc(&f.cpu, 1))[63] = 1;
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG), SGX_GP);
	si = si_at(&f, 1, REG_RW | SGX_SECINFO_PENDING | (1ULL << 6));
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG), SGX_GP);
	si = si_at(&f, 2, REG_RW | SGX_SECINFO_PENDING | (1ULL << 40));
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG), SGX_GP);
	CHECK(f.cpu.epcm[10].pending);
}

TEST(eaccept_target_alignment_range_gp_missing_pf)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_RW | SGX_SECINFO_PENDING);

	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG + 64), SGX_GP);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, T_BASE + T_SIZE), SGX_GP);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, AUG), SGX_PF);
}

TEST(eaccept_disallowed_requests_gp)
{
	SETUP(f);
	static const uint64_t bad[] = {
		REG_RW,					/* REG, neither */
		REG_RW | SGX_SECINFO_PENDING | SGX_SECINFO_MODIFIED,
		SGX_SECINFO_TCS,			/* TCS without MODIFIED */
		SGX_SECINFO_TCS | SGX_SECINFO_MODIFIED | SGX_SECINFO_PR,
		SGX_SECINFO_TRIM | SGX_SECINFO_MODIFIED | SGX_SECINFO_PENDING,
		SGX_SECINFO_SECS | SGX_SECINFO_MODIFIED,
		SGX_SECINFO_VA | SGX_SECINFO_PENDING,
	};

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si_at(&f, i, bad[i]), AUG),
			 SGX_GP);
	CHECK(f.cpu.epcm[10].pending);
}

TEST(eaccept_blocked_target_pf)
{
	SETUP(f);

	/* a blocked target (EBLOCK, as the reclaimer does) */
	REQUIRE_EQ(sgx_eblock(&f.cpu, t_epc(&f.cpu, 2)), 0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl,
			     si_at(&f, 0, REG_RW | SGX_SECINFO_PR), DATA),
		 SGX_PF);
}

TEST(eaccept_attribute_mismatch)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	/* permissions differ from the EPCM's RW */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl,
			     si_at(&f, 0, REG_R | SGX_SECINFO_PENDING), AUG),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl,
			     si_at(&f, 1, REG_RWX | SGX_SECINFO_PENDING), AUG),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	/* PR instead of PENDING: allowed request, but the state differs */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl,
			     si_at(&f, 2, REG_RW | SGX_SECINFO_PR), AUG),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	/* type differs: a modified TCS request on a pending REG page */
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl,
			     si_at(&f, 3, SGX_SECINFO_TRIM | SGX_SECINFO_MODIFIED),
			     AUG), SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK(f.cpu.epcm[10].pending);
	CHECK_EQ(f.notified, 0);
}

TEST(eaccept_after_emodpr_needs_etrack)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_R | SGX_SECINFO_PR);

	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 2)),
		   0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), SGX_NOT_TRACKED);
	REQUIRE_EQ(track(&f), 0);
	REQUIRE_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), 0);
	CHECK(!f.cpu.epcm[2].pr && f.cpu.epcm[2].r && !f.cpu.epcm[2].w);
}

TEST(eaccept_not_tracked_while_old_thread_inside)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_R | SGX_SECINFO_PR);
	uint64_t ep;

	/* a logical processor entered before the change and the ETRACK */
	ep = sgx_track_enter(f.ctl);
	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 2)),
		   0);
	REQUIRE_EQ(track(&f), 0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), SGX_NOT_TRACKED);
	sgx_track_exit(f.ctl, ep);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), 0);
}

TEST(eaccept_etrack_before_change_does_not_count)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, SGX_SECINFO_TRIM | SGX_SECINFO_MODIFIED);

	REQUIRE_EQ(track(&f), 0);
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		   0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), SGX_NOT_TRACKED);
	REQUIRE_EQ(track(&f), 0);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), 0);
	CHECK(!f.cpu.epcm[2].modified);
	CHECK_EQ(f.cpu.epcm[2].page_type, SGX_PT_TRIM);
}

TEST(eaccept_tcs_checks)
{
	SETUP(f);
	struct sgx_tcs *tcs = t_epc(&f.cpu, 2);
	uint64_t si = si_at(&f, 0, SGX_SECINFO_TCS | SGX_SECINFO_MODIFIED);
	static const struct { size_t off; uint64_t v; size_t n; } bad[] = {
		{ 0, 1, 8 },		/* STATE */
		{ 8, 1, 8 },		/* FLAGS.DBGOPTIN */
		{ 24, 2, 4 },		/* CSSA >= NSSA (1) */
		{ 40, 0x1000, 8 },	/* AEP */
		{ 80, 1, 1 },		/* reserved */
		{ 4095, 1, 1 },		/* reserved, last byte */
	};

	/* the enclave wrote a TCS into its REG page */
	tcs->ossa = 0x4000;
	tcs->nssa = 1;
	tcs->oentry = 0x3000;
	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TCS), t_epc(&f.cpu, 2)),
		   0);
	REQUIRE_EQ(track(&f), 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t save[8];

		memcpy(save, (uint8_t *)tcs + bad[i].off, bad[i].n);
		memcpy((uint8_t *)tcs + bad[i].off, &bad[i].v, bad[i].n);
		CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), SGX_GP);
		memcpy((uint8_t *)tcs + bad[i].off, save, bad[i].n);
	}
	CHECK(f.cpu.epcm[2].modified);
	REQUIRE_EQ(sgx_eaccept(&f.cpu, f.ctl, si, DATA), 0);
	CHECK(!f.cpu.epcm[2].modified);
	CHECK_EQ(f.cpu.epcm[2].page_type, SGX_PT_TCS);
}

TEST(eaccept_via_enclu_dispatch_sets_zf)
{
	SETUP(f);
	struct sgx_lp lp;
	uint64_t rax;
	bool zf;

	memset(&lp, 0, sizeof(lp));
	lp.ctl = f.ctl;
	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	REQUIRE_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EACCEPT,
				  si_at(&f, 0, REG_R | SGX_SECINFO_PENDING),
				  AUG, 0, &rax, &zf), 0);
	CHECK_EQ(rax, SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK(zf);
	REQUIRE_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EACCEPT,
				  si_at(&f, 1, REG_RW | SGX_SECINFO_PENDING),
				  AUG, 0, &rax, &zf), 0);
	CHECK_EQ(rax, 0);
	CHECK(!zf);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EACCEPT, SI_PAGE + 8, AUG, 0,
				&rax, &zf), SGX_GP);
}

/* --- EACCEPTCOPY ---------------------------------------------------------- */

TEST(eacceptcopy_copies_and_sets_permissions)
{
	SETUP(f);
	uint8_t want[SGX_PAGE_SIZE];

	memset(want, 0x5a, sizeof(want));
	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	REQUIRE_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_REG |
				   SGX_SECINFO_R | SGX_SECINFO_X), AUG, SRC), 0);
	CHECK_MEM(t_epc(&f.cpu, 10), want, sizeof(want));
	CHECK(!f.cpu.epcm[10].pending);
	CHECK(f.cpu.epcm[10].r && !f.cpu.epcm[10].w && f.cpu.epcm[10].x);
	CHECK_EQ(f.notified_at, AUG);
}

TEST(eacceptcopy_operand_checks)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_RW);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si + 8, AUG, SRC), SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG + 8, SRC), SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, SRC + 8), SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, T_BASE + T_SIZE, SRC),
		 SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, T_BASE - 0x1000),
		 SGX_GP);
	/* SECINFO page absent: #PF */
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, T_BASE + 0x9000, AUG, SRC),
		 SGX_PF);
	/* SECINFO reserved, W without R, type not REG: #GP */
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl,
				 si_at(&f, 1, REG_RW | (1ULL << 20)), AUG, SRC),
		 SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl,
				 si_at(&f, 2, SGX_SECINFO_REG | SGX_SECINFO_W),
				 AUG, SRC), SGX_GP);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl,
				 si_at(&f, 3, SGX_SECINFO_TCS | SGX_SECINFO_R),
				 AUG, SRC), SGX_GP);
	/* source absent, pending, a TCS: #PF */
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, T_BASE + 0x9000),
		 SGX_PF);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, AUG), SGX_PF);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, TCS0), SGX_PF);
	/* destination absent: #PF */
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, T_BASE + 0x9000, SRC),
		 SGX_PF);
	CHECK(f.cpu.epcm[10].pending);
}

TEST(eacceptcopy_destination_not_pending_mismatch)
{
	SETUP(f);
	uint64_t si = si_at(&f, 0, REG_RW);

	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, DATA, SRC),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, TCS0, SRC),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	/* Each of the SDM's conditions on the destination (sgx-facts.md
	 * §4.23: R, W, X=0, MODIFIED=0), on an EAUG'd page with one EPCM bit
	 * changed: no leaf makes these states, the check is the SDM's. */
	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	for (int c = 0; c < 4; c++) {
		struct sgx_epcm_entry *e = &f.cpu.epcm[10];

		e->r = c != 0;
		e->w = c != 1;
		e->x = c == 2;
		e->modified = c == 3;
		CHECK_EQ(sgx_eacceptcopy(&f.cpu, f.ctl, si, AUG, SRC),
			 SGX_PAGE_ATTRIBUTES_MISMATCH);
		CHECK(e->pending);
	}
	CHECK_EQ(f.notified, 0);
}

/* --- EMODPE --------------------------------------------------------------- */

TEST(emodpe_extends_permissions)
{
	SETUP(f);
	struct sgx_epcm_entry *e = &f.cpu.epcm[2];

	REQUIRE_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_X), DATA),
		   0);
	CHECK(e->r && e->w && e->x && !e->pr);
	CHECK_EQ(f.notified_at, DATA);
}

TEST(emodpe_back_after_emodpr)
{
	SETUP(f);
	struct sgx_epcm_entry *e = &f.cpu.epcm[2];

	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(0), t_epc(&f.cpu, 2)), 0);
	REQUIRE_EQ(track(&f), 0);
	REQUIRE_EQ(sgx_eaccept(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_REG |
			       SGX_SECINFO_PR), DATA), 0);
	CHECK(!e->r && !e->w && !e->x && !e->pr);
	/* W alone on a page without R: #GP */
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 1, SGX_SECINFO_W), DATA),
		 SGX_GP);
	REQUIRE_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 2, SGX_SECINFO_R |
			      SGX_SECINFO_W), DATA), 0);
	CHECK(e->r && e->w && !e->x);
}

TEST(emodpe_checks)
{
	SETUP(f);

	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, SI_PAGE + 16, DATA), SGX_GP);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_X),
			    DATA + 16), SGX_GP);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_X),
			    T_BASE + T_SIZE), SGX_GP);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, T_BASE + 0x9000, DATA), SGX_PF);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl,
			    si_at(&f, 1, SGX_SECINFO_X | (1ULL << 16)), DATA),
		 SGX_GP);
	/* targets: pending, TCS, absent */
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 2, SGX_SECINFO_X), AUG),
		 SGX_PF);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 2, SGX_SECINFO_X), TCS0),
		 SGX_PF);
	CHECK_EQ(sgx_emodpe(&f.cpu, f.ctl, si_at(&f, 2, SGX_SECINFO_X),
			    T_BASE + 0x9000), SGX_PF);
	CHECK(!f.cpu.epcm[2].x && !f.cpu.epcm[10].x);
	CHECK_EQ(f.notified, 0);
}

/* --- EREMOVE of trimmed pages --------------------------------------------- */

TEST(eremove_trimmed_page)
{
	SETUP(f);
	uint32_t children = f.ctl->child_count;

	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		   0);
	REQUIRE_EQ(track(&f), 0);
	REQUIRE_EQ(sgx_eaccept(&f.cpu, f.ctl, si_at(&f, 0, SGX_SECINFO_TRIM |
			       SGX_SECINFO_MODIFIED), DATA), 0);
	/* the kernel's probe: EMODPR on an accepted TRIM page faults #PF */
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(REG_RWX & 7), t_epc(&f.cpu, 2)),
		 SGX_PF);
	/* an accepted TRIM page goes even while a thread is inside */
	atomic_fetch_add(&f.ctl->active_threads, 1);
	CHECK_EQ(sgx_eremove(&f.cpu, t_epc(&f.cpu, 2)), 0);
	atomic_fetch_sub(&f.ctl->active_threads, 1);
	CHECK(!f.cpu.epcm[2].valid);
	CHECK_EQ(f.ctl->child_count, children - 1);
	CHECK_EQ(sgx_cpu_lookup(&f.cpu, DATA), -1);
	/* and the address can be EAUGed again */
	CHECK_EQ(eaug(&f, 11, DATA), 0);
}

TEST(eremove_unaccepted_trim_with_thread_inside)
{
	SETUP(f);

	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		   0);
	/* not yet accepted: the probe sees SGX_PAGE_NOT_MODIFIABLE */
	CHECK_EQ(sgx_emodpr(&f.cpu, host_si(7), t_epc(&f.cpu, 2)),
		 SGX_PAGE_NOT_MODIFIABLE);
	atomic_fetch_add(&f.ctl->active_threads, 1);
	CHECK_EQ(sgx_eremove(&f.cpu, t_epc(&f.cpu, 2)), SGX_ENCLAVE_ACT);
	atomic_fetch_sub(&f.ctl->active_threads, 1);
	CHECK(f.cpu.epcm[2].valid);
}

/* --- EPC paging keeps the SGX2 state ---------------------------------------- */

/* EBLOCK, ETRACK, EWB of EPC page @index into host memory, ELDU into @to. */
static int evict_reload(struct fx *f, size_t index, size_t to)
{
	struct sgx_pcmd *pcmd = aligned_alloc(128, sizeof(*pcmd));
	struct sgx_pageinfo *pi = aligned_alloc(32, sizeof(*pi));
	uint64_t *slot = t_epc(&f->cpu, 20);
	int r;

	memset(pcmd, 0, sizeof(*pcmd));
	memset(pi, 0, sizeof(*pi));
	pi->srcpge = (uintptr_t)t_page();
	pi->secinfo = (uintptr_t)pcmd;
	if ((r = sgx_eblock(&f->cpu, t_epc(&f->cpu, index))) || (r = track(f)) ||
	    (r = sgx_ewb(&f->cpu, pi, t_epc(&f->cpu, index), slot)))
		return r;
	pi->secs = (uintptr_t)t_epc(&f->cpu, 0);
	return sgx_eldu(&f->cpu, pi, t_epc(&f->cpu, to), slot);
}

TEST(paging_keeps_pending_and_modified)
{
	SETUP(f);

	REQUIRE_EQ(sgx_epa(&f.cpu, SGX_PT_VA, t_epc(&f.cpu, 20)), 0);
	REQUIRE_EQ(eaug(&f, 10, AUG), 0);
	REQUIRE_EQ(evict_reload(&f, 10, 11), 0);
	CHECK(f.cpu.epcm[11].pending && f.cpu.epcm[11].r && f.cpu.epcm[11].w);
	CHECK_EQ(sgx_cpu_lookup(&f.cpu, AUG), 11);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si_at(&f, 0, REG_RW |
			     SGX_SECINFO_PENDING), AUG), 0);

	REQUIRE_EQ(sgx_emodt(&f.cpu, host_si(SGX_SECINFO_TRIM), t_epc(&f.cpu, 2)),
		   0);
	REQUIRE_EQ(evict_reload(&f, 2, 12), 0);
	CHECK(f.cpu.epcm[12].modified);
	CHECK_EQ(f.cpu.epcm[12].page_type, SGX_PT_TRIM);
	CHECK_EQ(sgx_eaccept(&f.cpu, f.ctl, si_at(&f, 1, SGX_SECINFO_TRIM |
			     SGX_SECINFO_MODIFIED), DATA), 0);

	REQUIRE_EQ(sgx_emodpr(&f.cpu, host_si(SGX_SECINFO_R), t_epc(&f.cpu, 4)),
		   0);
	REQUIRE_EQ(evict_reload(&f, 4, 13), 0);
	CHECK(f.cpu.epcm[13].pr && f.cpu.epcm[13].r && !f.cpu.epcm[13].w);
}
