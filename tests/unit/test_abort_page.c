/* SPDX-License-Identifier: MIT */
/*
 * Abort-page semantics for host instructions (src/driver/abort_page.c):
 * loads of all ones with each width's register rule, stores dropped, RIP
 * moved past the instruction, and everything else left alone. The
 * instruction bytes were checked against objdump; the expected register
 * values follow the x86 rules for each operand size (32-bit writes zero
 * the upper half, 8/16-bit writes merge), not the code under test.
 */
#include <string.h>
#include <ucontext.h>

#include "test.h"
#include "driver/abort_page.h"

#define RIP0	0x401000ULL
#define FILL	0x1122334455667788ULL

static ucontext_t uc;
static struct _libc_fpstate fp;

static void reset(void)
{
	memset(&uc, 0, sizeof(uc));
	memset(&fp, 0x5a, sizeof(fp));
	uc.uc_mcontext.fpregs = &fp;
	for (int i = 0; i < NGREG; i++)
		uc.uc_mcontext.gregs[i] = (greg_t)FILL;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)RIP0;
}

#define G(r) ((uint64_t)uc.uc_mcontext.gregs[r])

/* Emulate @bytes; true with RIP advanced by their length, or false with
 * nothing changed. */
static bool run(const uint8_t *bytes, size_t n)
{
	ucontext_t before;
	struct _libc_fpstate fp_before;
	bool ok;

	reset();
	before = uc;
	fp_before = fp;
	ok = sgxemu__abort_page_emulate(&uc, bytes, n);
	if (ok) {
		CHECK_EQ(G(REG_RIP), RIP0 + n);
	} else {
		CHECK(!memcmp(uc.uc_mcontext.gregs, before.uc_mcontext.gregs,
			      sizeof(before.uc_mcontext.gregs)));
		CHECK(!memcmp(&fp, &fp_before, sizeof(fp)));
	}
	return ok;
}

#define RUN(...) ({ static const uint8_t _b[] = { __VA_ARGS__ }; \
		    run(_b, sizeof(_b)); })

TEST(gpr_loads_read_all_ones_per_width)
{
	CHECK(RUN(0x48, 0x8b, 0x01));			/* mov (%rcx),%rax */
	CHECK_EQ(G(REG_RAX), ~0ULL);
	CHECK_EQ(G(REG_RCX), FILL);
	CHECK(RUN(0x8b, 0x01));				/* mov (%rcx),%eax */
	CHECK_EQ(G(REG_RAX), 0xffffffffULL);
	CHECK(RUN(0x66, 0x8b, 0x01));			/* mov (%rcx),%ax */
	CHECK_EQ(G(REG_RAX), 0x112233445566ffffULL);
	CHECK(RUN(0x8a, 0x21));				/* mov (%rcx),%ah */
	CHECK_EQ(G(REG_RAX), 0x112233445566ff88ULL);
	CHECK(RUN(0x8a, 0x01));				/* mov (%rcx),%al */
	CHECK_EQ(G(REG_RAX), 0x11223344556677ffULL);
	CHECK(RUN(0x44, 0x8b, 0x41, 0x08));		/* mov 8(%rcx),%r8d */
	CHECK_EQ(G(REG_R8), 0xffffffffULL);
}

TEST(extending_loads)
{
	CHECK(RUN(0x0f, 0xb6, 0x01));			/* movzbl (%rcx),%eax */
	CHECK_EQ(G(REG_RAX), 0xffULL);
	CHECK(RUN(0x48, 0x0f, 0xbf, 0x01));		/* movswq (%rcx),%rax */
	CHECK_EQ(G(REG_RAX), ~0ULL);
	CHECK(RUN(0x48, 0x63, 0x01));			/* movslq (%rcx),%rax */
	CHECK_EQ(G(REG_RAX), ~0ULL);
}

TEST(stores_are_dropped)
{
	CHECK(RUN(0x48, 0x89, 0x01));			/* mov %rax,(%rcx) */
	CHECK_EQ(G(REG_RAX), FILL);
	CHECK(RUN(0x48, 0xc7, 0x01, 0x78, 0x56, 0x34, 0x12)); /* movq $imm */
	CHECK(RUN(0xc5, 0xfe, 0x7f, 0x01));		/* vmovdqu %ymm0,(%rcx) */
}

TEST(sse_loads_fill_xmm)
{
	CHECK(RUN(0xf3, 0x0f, 0x6f, 0x01));		/* movdqu (%rcx),%xmm0 */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(fp._xmm[0].element[i], 0xffffffffU);
	CHECK(RUN(0x66, 0x0f, 0x6e, 0x09));		/* movd (%rcx),%xmm1 */
	CHECK_EQ(fp._xmm[1].element[0], 0xffffffffU);
	CHECK_EQ(fp._xmm[1].element[1], 0);
	CHECK_EQ(fp._xmm[1].element[3], 0);
	CHECK(RUN(0xf3, 0x0f, 0x7e, 0x11));		/* movq (%rcx),%xmm2 */
	CHECK_EQ(fp._xmm[2].element[1], 0xffffffffU);
	CHECK_EQ(fp._xmm[2].element[2], 0);
}

TEST(other_instructions_are_left_to_fault)
{
	CHECK(!RUN(0x48, 0x03, 0x01));			/* add (%rcx),%rax */
	CHECK(!RUN(0xf0, 0x48, 0x01, 0x01));		/* lock add %rax,(%rcx) */
	CHECK(!RUN(0x48, 0x87, 0x01));			/* xchg %rax,(%rcx) */
	CHECK(!RUN(0xa5));				/* movsl */
	CHECK(!RUN(0xc5, 0xfa, 0x6f, 0x01));		/* vmovdqu (%rcx),%xmm0 */
	CHECK(!RUN(0x8e, 0x19));			/* mov (%rcx),%ds */
	CHECK(!RUN(0x48, 0x8b));			/* truncated */
	CHECK(!RUN(0x0f, 0x0b));			/* ud2 */
}
