/* SPDX-License-Identifier: MIT */
/*
 * The scan that makes an executable page's WRFSBASE/WRGSBASE trap
 * (src/engine/fsgs_sites.c): which byte patterns it takes for the
 * instruction and changes (F3 -> F0), and which it must leave alone
 * because they are not one (inside another instruction, RDFSBASE, an
 * instruction that runs into the next page), with the page before as
 * the decode's lead-in where it exists.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "engine/engine.h"

#define PAGE 4096
#define LIN  0x7f0000000000ULL

/* nop-filled page with @n bytes of @code at @off. */
static void put(uint8_t *page, size_t off, const void *code, size_t n)
{
	memcpy(page + off, code, n);
}

static void fresh(uint8_t *page)
{
	memset(page, 0x90, PAGE);
}

static const uint8_t wrfs_rbx[] = { 0xf3, 0x48, 0x0f, 0xae, 0xd3 };
static const uint8_t wrgs_r9[] = { 0xf3, 0x49, 0x0f, 0xae, 0xd9 };
static const uint8_t wrfs32_eax[] = { 0xf3, 0x0f, 0xae, 0xd0 };
static const uint8_t rdfs_rax[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc0 };
/* movabs $0x00d3ae0f48f3, %rax: the pattern inside an immediate. */
static const uint8_t movabs[] = { 0x48, 0xb8, 0xf3, 0x48, 0x0f, 0xae,
				  0xd3, 0x00, 0x00, 0x00 };

static struct sgxemu_enclave encl;

static void reset(void)
{
	sgxemu__fsgs_free(&encl);
	memset(&encl, 0, sizeof(encl));
}

static void setup(void)
{
	setenv("SGXEMU_FSGS_SITES", "1", 1);
	reset();
}

TEST(writes_taken_and_made_to_trap)
{
	uint8_t *page = malloc(PAGE);

	REQUIRE(page);
	setup();
	fresh(page);
	put(page, 100, wrfs_rbx, sizeof(wrfs_rbx));
	put(page, 200, wrgs_r9, sizeof(wrgs_r9));
	put(page, 300, wrfs32_eax, sizeof(wrfs32_eax));
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN, page, NULL), 3);
	CHECK_EQ(page[100], 0xf0);
	CHECK_EQ(page[200], 0xf0);
	CHECK_EQ(page[300], 0xf0);
	/* Only the prefix byte changes. */
	CHECK(!memcmp(page + 101, wrfs_rbx + 1, sizeof(wrfs_rbx) - 1));
	REQUIRE_EQ(encl.nr_fsgs, 3);
	sgxemu__fsgs_seal(&encl);
	CHECK_EQ(encl.fsgs[0].addr, LIN + 100);
	CHECK_EQ(encl.fsgs[0].insn.op, 2);
	CHECK_EQ(encl.fsgs[0].insn.reg, REG_RBX);
	CHECK(encl.fsgs[0].insn.wide);
	CHECK_EQ(encl.fsgs[0].insn.len, 5);
	CHECK_EQ(encl.fsgs[1].insn.op, 3);
	CHECK_EQ(encl.fsgs[1].insn.reg, REG_R9);
	CHECK_EQ(encl.fsgs[2].insn.op, 2);
	CHECK(!encl.fsgs[2].insn.wide);
	CHECK_EQ(encl.fsgs[2].insn.len, 4);
	free(page);
	reset();
}

TEST(lookalikes_left_alone)
{
	uint8_t *page = malloc(PAGE), *copy = malloc(PAGE);

	REQUIRE(page && copy);
	setup();
	fresh(page);
	put(page, 64, movabs, sizeof(movabs));
	put(page, 400, rdfs_rax, sizeof(rdfs_rax));
	/* Runs into the next page: not decodable here, not taken. */
	put(page, PAGE - 3, wrfs_rbx, 3);
	memcpy(copy, page, PAGE);
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN, page, NULL), 0);
	CHECK(!memcmp(page, copy, PAGE));
	CHECK_EQ(encl.nr_fsgs, 0);
	free(page);
	free(copy);
	reset();
}

/*
 * A page that starts inside an instruction of the page before: decoded
 * from that page's start, the bytes of the pattern at its start are the
 * immediate's tail; decoded from its own start they would look like the
 * instruction.
 */
TEST(previous_page_leads_the_decode)
{
	uint8_t *prev = malloc(PAGE), *page = malloc(PAGE);

	REQUIRE(prev && page);
	setup();
	fresh(prev);
	fresh(page);
	/* movabs at the end of prev: 48 b8 and 8 immediate bytes, of which
	 * the last 5 are at the start of page. */
	prev[PAGE - 5] = 0x48;
	prev[PAGE - 4] = 0xb8;
	prev[PAGE - 3] = prev[PAGE - 2] = prev[PAGE - 1] = 0;
	put(page, 0, wrfs_rbx, sizeof(wrfs_rbx));
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN + PAGE, page, prev), 0);
	CHECK_EQ(page[0], 0xf3);
	/* Without the page before, the decode starts at the page. */
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN + PAGE, page, NULL), 1);
	CHECK_EQ(page[0], 0xf0);
	free(prev);
	free(page);
	reset();
}

/*
 * A page before that is still a hole (a zero page EADD left unwritten) is
 * skipped as the lead-in (src/driver/encl.c): its zeros decode as
 * two-byte ADDs that end at the page boundary, so the page's sites are
 * those of a decode from its own start. Odd offsets included.
 */
TEST(zero_page_before_is_no_lead_in)
{
	uint8_t *prev = calloc(1, PAGE), *a = malloc(PAGE), *b = malloc(PAGE);
	size_t with_prev, alone;

	REQUIRE(prev && a && b);
	setup();
	fresh(a);
	put(a, 0, wrfs_rbx, sizeof(wrfs_rbx));
	put(a, 7, wrgs_r9, sizeof(wrgs_r9));
	put(a, 301, movabs, sizeof(movabs));
	put(a, 1001, wrfs32_eax, sizeof(wrfs32_eax));
	memcpy(b, a, PAGE);
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN + PAGE, a, prev), 3);
	with_prev = encl.nr_fsgs;
	reset();
	setenv("SGXEMU_FSGS_SITES", "1", 1);
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN + PAGE, b, NULL), 3);
	alone = encl.nr_fsgs;
	CHECK_EQ(with_prev, alone);
	CHECK(memcmp(a, b, PAGE) == 0);
	CHECK_EQ(a[0], 0xf0);
	CHECK_EQ(a[303], 0xf3);
	free(prev);
	free(a);
	free(b);
	reset();
}

TEST(off_leaves_pages_as_they_are)
{
	uint8_t *page = malloc(PAGE);

	REQUIRE(page);
	setup();
	setenv("SGXEMU_FSGS_SITES", "0", 1);
	fresh(page);
	put(page, 100, wrfs_rbx, sizeof(wrfs_rbx));
	CHECK_EQ(sgxemu__fsgs_scan_page(&encl, LIN, page, NULL), 0);
	CHECK_EQ(page[100], 0xf3);
	CHECK_EQ(encl.nr_fsgs, 0);
	setenv("SGXEMU_FSGS_SITES", "1", 1);
	free(page);
	reset();
}
