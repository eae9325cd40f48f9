// SPDX-License-Identifier: MIT
/*
 * EPC paging leaves: EPA, EBLOCK, ETRACK, EWB, ELDB/ELDU — every check and
 * error code of sgx-facts.md §4.8-4.12, the round trip, and the integrity
 * and freshness guarantees (tamper and replay are refused by the MAC).
 */
#include "test_cpu_helpers.h"

#define SECS_I	0
#define PAGE_I	1
#define TCS_I	2
#define VA_I	3
#define FREE_I	4
#define FREE2_I	5

/* Host-side backing for one evicted page. */
struct backing {
	uint8_t *page;
	struct sgx_pcmd *pcmd;
	struct sgx_pageinfo *pi;
};

static void backing_init(struct backing *b)
{
	b->page = t_page();
	b->pcmd = aligned_alloc(128, sizeof(*b->pcmd));
	b->pi = aligned_alloc(32, sizeof(*b->pi));
	memset(b->pcmd, 0, sizeof(*b->pcmd));
	memset(b->pi, 0, sizeof(*b->pi));
	b->pi->srcpge = (uintptr_t)b->page;
	b->pi->secinfo = (uintptr_t)b->pcmd;
}

static uint64_t *va_slot(struct sgx_cpu *cpu, unsigned slot)
{
	return (uint64_t *)t_epc(cpu, VA_I) + slot;
}

/* SECS, one REG RW page with a pattern at T_BASE, a TCS, a VA page. */
static void setup(struct sgx_cpu *cpu)
{
	uint8_t *src = t_page();

	for (int i = 0; i < 4096; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	if (t_cpu_init(cpu) || t_ecreate_std(cpu) ||
	    t_eadd(cpu, SECS_I, PAGE_I, T_BASE, SGX_SECINFO_REG | 3, src) ||
	    t_eadd(cpu, SECS_I, TCS_I, T_BASE + 0x1000, SGX_SECINFO_TCS, t_tcs()) ||
	    sgx_epa(cpu, SGX_PT_VA, t_epc(cpu, VA_I)))
		test_fail(__FILE__, __LINE__, "setup failed");
}

/* EBLOCK + ETRACK + EWB of @index into @b using VA slot @slot. */
static int evict(struct sgx_cpu *cpu, size_t index, struct backing *b, unsigned slot)
{
	int ret = sgx_eblock(cpu, t_epc(cpu, index));

	if (ret)
		return ret;
	ret = sgx_etrack(cpu, t_epc(cpu, SECS_I));
	if (ret)
		return ret;
	b->pi->linaddr = 0;
	b->pi->secs = 0;
	return sgx_ewb(cpu, b->pi, t_epc(cpu, index), va_slot(cpu, slot));
}

static int reload(struct sgx_cpu *cpu, size_t index, struct backing *b, unsigned slot)
{
	b->pi->secs = (uintptr_t)t_epc(cpu, SECS_I);
	return sgx_eldu(cpu, b->pi, t_epc(cpu, index), va_slot(cpu, slot));
}

TEST(epa_checks)
{
	struct sgx_cpu cpu;

	REQUIRE_EQ(t_cpu_init(&cpu), 0);
	CHECK_EQ(sgx_epa(&cpu, SGX_PT_REG, t_epc(&cpu, 1)), SGX_GP);
	CHECK_EQ(sgx_epa(&cpu, SGX_PT_VA, (uint8_t *)t_epc(&cpu, 1) + 8), SGX_GP);
	CHECK_EQ(sgx_epa(&cpu, SGX_PT_VA, t_page()), SGX_PF);
	memset(t_epc(&cpu, 1), 0xee, 4096);
	REQUIRE_EQ(sgx_epa(&cpu, SGX_PT_VA, t_epc(&cpu, 1)), 0);
	CHECK_EQ(cpu.epcm[1].page_type, SGX_PT_VA);
	CHECK_EQ(((uint64_t *)t_epc(&cpu, 1))[511], 0);	/* slots cleared */
	CHECK_EQ(sgx_epa(&cpu, SGX_PT_VA, t_epc(&cpu, 1)), SGX_PF);
	sgx_cpu_destroy(&cpu);
}

TEST(eblock_checks)
{
	struct sgx_cpu cpu;

	setup(&cpu);
	CHECK_EQ(sgx_eblock(&cpu, (uint8_t *)t_epc(&cpu, PAGE_I) + 64), SGX_GP);
	CHECK_EQ(sgx_eblock(&cpu, t_page()), SGX_PF);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, FREE_I)), SGX_PG_INVLD);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, SECS_I)), SGX_PG_IS_SECS);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, VA_I)), SGX_NOTBLOCKABLE);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, PAGE_I)), 0);
	CHECK_EQ(cpu.epcm[PAGE_I].blocked, 1);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, PAGE_I)), SGX_BLKSTATE);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, TCS_I)), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(etrack_checks)
{
	struct sgx_cpu cpu;
	struct sgx_encl_ctl *ctl;
	uint64_t e1, e2;

	setup(&cpu);
	ctl = t_ctl(&cpu, SECS_I);
	CHECK_EQ(sgx_etrack(&cpu, (uint8_t *)t_epc(&cpu, SECS_I) + 8), SGX_GP);
	CHECK_EQ(sgx_etrack(&cpu, t_page()), SGX_PF);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, PAGE_I)), SGX_PF);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, FREE_I)), SGX_PF);
	/* A thread inside during a cycle blocks the next ETRACK until it leaves. */
	e1 = sgx_track_enter(ctl);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), 0);
	e2 = sgx_track_enter(ctl);	/* enters in the new epoch */
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), SGX_PREV_TRK_INCMPL);
	sgx_track_exit(ctl, e1);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), 0);
	sgx_track_exit(ctl, e2);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(ewb_operand_checks)
{
	struct sgx_cpu cpu;
	struct backing b;
	struct sgx_pageinfo *bad;
	uint8_t *bad_bytes;

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(sgx_eblock(&cpu, t_epc(&cpu, PAGE_I)), 0);
	REQUIRE_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), 0);
	/* A misaligned copy, written bytewise; only the leaf sees it typed. */
	bad_bytes = (uint8_t *)aligned_alloc(32, 64) + 8;
	memcpy(bad_bytes, b.pi, sizeof(*b.pi));
	bad = (struct sgx_pageinfo *)(uintptr_t)bad_bytes;
	CHECK_EQ(sgx_ewb(&cpu, bad, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_GP);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, (uint8_t *)t_epc(&cpu, PAGE_I) + 8, va_slot(&cpu, 0)), SGX_GP);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), (uint64_t *)((uint8_t *)va_slot(&cpu, 0) + 4)), SGX_GP);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_page(), va_slot(&cpu, 0)), SGX_PF);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), (uint64_t *)t_page()), SGX_PF);
	/* Page and slot in the same EPC page. */
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), (uint64_t *)t_epc(&cpu, PAGE_I) + 1), SGX_GP);
	b.pi->linaddr = T_BASE;
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_GP);
	b.pi->linaddr = 0;
	b.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_GP);
	b.pi->secs = 0;
	b.pi->secinfo += 64;	/* PCMD not 128-aligned */
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_GP);
	b.pi->secinfo -= 64;
	b.pi->srcpge += 16;
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_GP);
	b.pi->srcpge -= 16;
	/* Invalid page; slot in a page that is not a VA page. */
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 0)), SGX_PF);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), (uint64_t *)t_epc(&cpu, TCS_I)), SGX_PF);
	/* All still intact: the page was not written back. */
	CHECK_EQ(cpu.epcm[PAGE_I].valid, 1);
	CHECK_EQ(*va_slot(&cpu, 0), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(ewb_needs_block_and_track)
{
	struct sgx_cpu cpu;
	struct backing b;
	struct sgx_encl_ctl *ctl;
	uint64_t e;

	setup(&cpu);
	backing_init(&b);
	ctl = t_ctl(&cpu, SECS_I);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_PAGE_NOT_BLOCKED);
	REQUIRE_EQ(sgx_eblock(&cpu, t_epc(&cpu, PAGE_I)), 0);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_NOT_TRACKED);
	/* A thread still inside since before the ETRACK: not tracked yet. */
	e = sgx_track_enter(ctl);
	REQUIRE_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), 0);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), SGX_NOT_TRACKED);
	sgx_track_exit(ctl, e);
	CHECK_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, PAGE_I), va_slot(&cpu, 0)), 0);
	CHECK_EQ(cpu.epcm[PAGE_I].valid, 0);
	CHECK_EQ(b.pi->linaddr, T_BASE);	/* written back */
	CHECK_EQ(b.pcmd->secinfo.flags, SGX_SECINFO_REG | 3);
	CHECK_EQ(b.pcmd->enclave_id, ctl->eid);
	CHECK(*va_slot(&cpu, 0) != 0);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE), -1);
	sgx_cpu_destroy(&cpu);
}

TEST(ewb_eldu_round_trip)
{
	struct sgx_cpu cpu;
	struct backing b;
	uint8_t want[4096];

	setup(&cpu);
	backing_init(&b);
	memcpy(want, t_epc(&cpu, PAGE_I), sizeof(want));
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 7), 0);
	/* The backing holds ciphertext, and the freed EPC page no plaintext. */
	CHECK(memcmp(b.page, want, 4096) != 0);
	CHECK(memcmp(t_epc(&cpu, PAGE_I), want, 4096) != 0);
	/* Reload into a different EPC page. */
	REQUIRE_EQ(reload(&cpu, FREE_I, &b, 7), 0);
	CHECK_MEM(t_epc(&cpu, FREE_I), want, 4096);
	CHECK_EQ(*va_slot(&cpu, 7), 0);		/* version consumed */
	CHECK_EQ(cpu.epcm[FREE_I].valid, 1);
	CHECK_EQ(cpu.epcm[FREE_I].blocked, 0);
	CHECK_EQ(cpu.epcm[FREE_I].r, 1);
	CHECK_EQ(cpu.epcm[FREE_I].w, 1);
	CHECK_EQ(cpu.epcm[FREE_I].x, 0);
	CHECK_EQ(cpu.epcm[FREE_I].enclave_address, T_BASE);
	CHECK_EQ(sgx_cpu_lookup(&cpu, T_BASE), FREE_I);
	sgx_cpu_destroy(&cpu);
}

TEST(eldb_leaves_page_blocked)
{
	struct sgx_cpu cpu;
	struct backing b;

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(evict(&cpu, TCS_I, &b, 0), 0);
	b.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	REQUIRE_EQ(sgx_eldb(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 0)), 0);
	CHECK_EQ(cpu.epcm[FREE_I].blocked, 1);
	CHECK_EQ(cpu.epcm[FREE_I].page_type, SGX_PT_TCS);
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, FREE_I)), SGX_BLKSTATE);
	sgx_cpu_destroy(&cpu);
}

TEST(eldu_operand_checks)
{
	struct sgx_cpu cpu;
	struct backing b;

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 1), 0);
	b.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	CHECK_EQ(sgx_eldu(&cpu, b.pi, (uint8_t *)t_epc(&cpu, FREE_I) + 64, va_slot(&cpu, 1)), SGX_GP);
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), (uint64_t *)((uint8_t *)va_slot(&cpu, 1) + 2)), SGX_GP);
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_page(), va_slot(&cpu, 1)), SGX_PF);
	/* Target already valid. */
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, TCS_I), va_slot(&cpu, 1)), SGX_PF);
	/* Slot not in a VA page. */
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), (uint64_t *)t_epc(&cpu, TCS_I)), SGX_PF);
	/* SECS operand: misaligned, not EPC, not a SECS. */
	b.pi->secs += 8;
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 1)), SGX_GP);
	b.pi->secs = (uintptr_t)t_page();
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 1)), SGX_PF);
	b.pi->secs = (uintptr_t)t_epc(&cpu, TCS_I);
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 1)), SGX_PF);
	/* PCMD / SRCPGE alignment. */
	b.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	b.pi->secinfo += 32;
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 1)), SGX_GP);
	b.pi->secinfo -= 32;
	/* Still loadable after all the refusals. */
	CHECK_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 1)), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(tampered_backing_refused)
{
	struct sgx_cpu cpu;
	struct backing b;
	size_t offsets[] = { 0, 1, 2047, 4095 };

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 2), 0);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		b.page[offsets[i]] ^= 0x40;
		CHECK_EQ(reload(&cpu, FREE_I, &b, 2), SGX_MAC_COMPARE_FAIL);
		CHECK_EQ(cpu.epcm[FREE_I].valid, 0);
		b.page[offsets[i]] ^= 0x40;
	}
	/* PCMD fields: SECINFO, ENCLAVEID, MAC; and the linear address. */
	b.pcmd->secinfo.flags |= SGX_SECINFO_X;
	CHECK_EQ(reload(&cpu, FREE_I, &b, 2), SGX_MAC_COMPARE_FAIL);
	b.pcmd->secinfo.flags &= ~SGX_SECINFO_X;
	b.pcmd->enclave_id ^= 1;
	CHECK_EQ(reload(&cpu, FREE_I, &b, 2), SGX_MAC_COMPARE_FAIL);
	b.pcmd->enclave_id ^= 1;
	b.pcmd->mac[15] ^= 1;
	CHECK_EQ(reload(&cpu, FREE_I, &b, 2), SGX_MAC_COMPARE_FAIL);
	b.pcmd->mac[15] ^= 1;
	b.pi->linaddr += 0x2000;
	CHECK_EQ(reload(&cpu, FREE_I, &b, 2), SGX_MAC_COMPARE_FAIL);
	b.pi->linaddr -= 0x2000;
	/* A wrong slot (another version) fails too. */
	*va_slot(&cpu, 3) = *va_slot(&cpu, 2) + 1;
	CHECK_EQ(reload(&cpu, FREE_I, &b, 3), SGX_MAC_COMPARE_FAIL);
	/* The untouched copy still loads: nothing was corrupted meanwhile. */
	CHECK_EQ(reload(&cpu, FREE_I, &b, 2), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(replayed_backing_refused)
{
	struct sgx_cpu cpu;
	struct backing b, old;
	uint8_t *p;

	setup(&cpu);
	backing_init(&b);
	backing_init(&old);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 4), 0);
	memcpy(old.page, b.page, 4096);
	memcpy(old.pcmd, b.pcmd, sizeof(*old.pcmd));
	old.pi->linaddr = b.pi->linaddr;
	REQUIRE_EQ(reload(&cpu, PAGE_I, &b, 4), 0);
	/* The enclave changes the page; it is evicted again. */
	p = t_epc(&cpu, PAGE_I);
	p[0] = 0x99;
	b.pi->linaddr = 0;
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 4), 0);
	/* Replay the first copy into the slot: refused. */
	old.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	CHECK_EQ(sgx_eldu(&cpu, old.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 4)), SGX_MAC_COMPARE_FAIL);
	/* And once the current copy is loaded, the slot is empty: no replay. */
	REQUIRE_EQ(reload(&cpu, FREE_I, &b, 4), 0);
	CHECK_EQ(((uint8_t *)t_epc(&cpu, FREE_I))[0], 0x99);
	b.pi->linaddr = T_BASE;
	CHECK_EQ(reload(&cpu, FREE2_I, &b, 4), SGX_MAC_COMPARE_FAIL);
	sgx_cpu_destroy(&cpu);
}

TEST(va_slot_occupied_reported)
{
	struct sgx_cpu cpu;
	struct backing b;

	setup(&cpu);
	backing_init(&b);
	*va_slot(&cpu, 5) = 12345;
	CHECK_EQ(evict(&cpu, PAGE_I, &b, 5), SGX_VA_SLOT_OCCUPIED);
	/* The eviction completed all the same. */
	CHECK_EQ(cpu.epcm[PAGE_I].valid, 0);
	CHECK(*va_slot(&cpu, 5) != 12345);
	CHECK_EQ(reload(&cpu, FREE_I, &b, 5), 0);
	sgx_cpu_destroy(&cpu);
}

TEST(secs_eviction_after_children)
{
	struct sgx_cpu cpu;
	struct backing bp, bt, bs;
	struct sgx_encl_ctl *ctl;
	uint8_t want[4096];

	setup(&cpu);
	backing_init(&bp);
	backing_init(&bt);
	backing_init(&bs);
	ctl = t_ctl(&cpu, SECS_I);
	memcpy(want, t_epc(&cpu, PAGE_I), 4096);
	CHECK_EQ(sgx_ewb(&cpu, bs.pi, t_epc(&cpu, SECS_I), va_slot(&cpu, 10)), SGX_CHILD_PRESENT);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &bp, 11), 0);
	CHECK_EQ(sgx_ewb(&cpu, bs.pi, t_epc(&cpu, SECS_I), va_slot(&cpu, 10)), SGX_CHILD_PRESENT);
	REQUIRE_EQ(evict(&cpu, TCS_I, &bt, 12), 0);
	REQUIRE_EQ(sgx_ewb(&cpu, bs.pi, t_epc(&cpu, SECS_I), va_slot(&cpu, 10)), 0);
	CHECK_EQ(bs.pcmd->enclave_id, ctl->eid);
	CHECK_EQ(cpu.epcm[SECS_I].valid, 0);
	/* VA pages cannot be blocked (and the reclaimer never evicts them). */
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, VA_I)), SGX_NOTBLOCKABLE);
	/* A child cannot come back before its SECS. */
	bp.pi->secs = (uintptr_t)t_epc(&cpu, SECS_I);
	CHECK_EQ(sgx_eldu(&cpu, bp.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 11)), SGX_PF);
	/* SECS back into another EPC page, then the child under it. */
	bs.pi->secs = 0;
	REQUIRE_EQ(sgx_eldu(&cpu, bs.pi, t_epc(&cpu, FREE2_I), va_slot(&cpu, 10)), 0);
	CHECK(t_ctl(&cpu, FREE2_I) == ctl);
	CHECK_EQ(ctl->secs_index, FREE2_I);
	bp.pi->secs = (uintptr_t)t_epc(&cpu, FREE2_I);
	REQUIRE_EQ(sgx_eldu(&cpu, bp.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 11)), 0);
	CHECK_MEM(t_epc(&cpu, FREE_I), want, 4096);
	CHECK_EQ(cpu.epcm[FREE_I].secs, FREE2_I);
	sgx_cpu_destroy(&cpu);
}

TEST(va_page_eviction)
{
	struct sgx_cpu cpu;
	struct backing b;
	uint64_t *slots;

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(sgx_epa(&cpu, SGX_PT_VA, t_epc(&cpu, FREE_I)), 0);
	slots = t_epc(&cpu, FREE_I);
	slots[9] = 0xabcdef;
	/* A VA page is written back into a slot of another VA page. */
	REQUIRE_EQ(sgx_ewb(&cpu, b.pi, t_epc(&cpu, FREE_I), va_slot(&cpu, 20)), 0);
	CHECK_EQ(b.pcmd->enclave_id, 0);
	CHECK_EQ(cpu.epcm[FREE_I].valid, 0);
	REQUIRE_EQ(sgx_eldu(&cpu, b.pi, t_epc(&cpu, FREE2_I), va_slot(&cpu, 20)), 0);
	CHECK_EQ(cpu.epcm[FREE2_I].page_type, SGX_PT_VA);
	CHECK_EQ(((uint64_t *)t_epc(&cpu, FREE2_I))[9], 0xabcdef);
	sgx_cpu_destroy(&cpu);
}

/*
 * A page written back before a power loss never loads again: its VA page
 * and its SECS were in the EPC (ELDU faults on them), and the paging key
 * is the next power-up's.
 */
TEST(eldu_after_power_loss_faults)
{
	struct sgx_cpu cpu;
	struct backing b;
	uint8_t key[16];

	setup(&cpu);
	backing_init(&b);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 5), 0);
	REQUIRE(cpu.paging_key_set);
	memcpy(key, cpu.paging_key, sizeof(key));
	CHECK_EQ(sgx_power_loss(&cpu), 1);
	CHECK(!cpu.paging_key_set);
	CHECK_EQ(reload(&cpu, FREE_I, &b, 5), SGX_PF);
	CHECK_EQ(cpu.epcm[FREE_I].valid, 0);
	/* What the kernel's reclaimer meets on the lost pages: EBLOCK's
	 * SGX_PG_INVLD, ETRACK's #PF on the SECS. */
	CHECK_EQ(sgx_eblock(&cpu, t_epc(&cpu, TCS_I)), SGX_PG_INVLD);
	CHECK_EQ(sgx_etrack(&cpu, t_epc(&cpu, SECS_I)), SGX_PF);
	/* A new enclave's write-back uses a new key. */
	for (size_t i = 0; i < cpu.nr_pages; i++)
		REQUIRE_EQ(sgx_eremove(&cpu, t_epc(&cpu, i)), 0);
	REQUIRE(cpu.lost == NULL);
	REQUIRE_EQ(t_ecreate_std(&cpu), 0);
	REQUIRE_EQ(t_eadd(&cpu, SECS_I, PAGE_I, T_BASE, SGX_SECINFO_REG | 3,
			  t_page()), 0);
	REQUIRE_EQ(sgx_epa(&cpu, SGX_PT_VA, t_epc(&cpu, VA_I)), 0);
	REQUIRE_EQ(evict(&cpu, PAGE_I, &b, 5), 0);
	CHECK(cpu.paging_key_set);
	CHECK(memcmp(key, cpu.paging_key, sizeof(key)) != 0);
	CHECK_EQ(reload(&cpu, FREE_I, &b, 5), 0);
	sgx_cpu_destroy(&cpu);
}
