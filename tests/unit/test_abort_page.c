/* SPDX-License-Identifier: MIT */
/*
 * Abort-page semantics for host instructions (src/driver/abort_page.c):
 * loads of all ones with each width's and each encoding's register rule,
 * stores dropped, ALU results and flags on all ones, string instructions
 * element by element, RIP moved past the instruction, and everything else
 * left alone. The instruction bytes were checked against objdump; the
 * expected values follow the x86 rules (32-bit writes zero the upper
 * half, 8/16-bit writes merge, VEX/EVEX loads clear above their width,
 * the flags worked out by hand in the comments), not the code under test.
 * The XSAVE frame uses the SDM's standard-format offsets, set here.
 */
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "test.h"
#include "cpu/enclu.h"
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
	ok = sgxemu__abort_page_emulate(&uc, bytes, n, NULL);
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
	CHECK(!RUN(0xa5));				/* movsl, no memory */
	CHECK(!RUN(0x8e, 0x19));			/* mov (%rcx),%ds */
	CHECK(!RUN(0x64, 0x48, 0x8b, 0x01));		/* mov %fs:(%rcx),%rax */
	CHECK(!RUN(0x48, 0x0f, 0xaf, 0x01));		/* imul (%rcx),%rax */
	CHECK(!RUN(0x48, 0x0f, 0xa3, 0x01));		/* bt %rax,(%rcx) */
	CHECK(!RUN(0x48, 0x8b));			/* truncated */
	CHECK(!RUN(0x0f, 0x0b));			/* ud2 */
}

/* --- vector loads into the XSAVE frame ------------------------------------------- */

/* A signal frame's XSAVE area with the AVX-512 components (XCR0 0xe7). */
static uint8_t xs[2688] __attribute__((aligned(64)));
static struct sgx_xsave_layout saved_layout;

static void xs_reset(void)
{
	uint32_t magic = 0x46505853, size = sizeof(xs);
	uint64_t xfeatures = 0xe7, bv = 0x7;	/* x87, SSE, YMM in use */

	saved_layout = sgx_xsave_layout;
	sgx_xsave_layout.offset[2] = 576;
	sgx_xsave_layout.size[2] = 256;
	sgx_xsave_layout.offset[5] = 1088;
	sgx_xsave_layout.size[5] = 64;
	sgx_xsave_layout.offset[6] = 1152;
	sgx_xsave_layout.size[6] = 512;
	sgx_xsave_layout.offset[7] = 1664;
	sgx_xsave_layout.size[7] = 1024;
	memset(xs, 0x5a, sizeof(xs));
	memcpy(xs + 464, &magic, 4);
	memcpy(xs + 472, &xfeatures, 8);
	memcpy(xs + 480, &size, 4);
	memset(xs + 512, 0, 64);
	memcpy(xs + 512, &bv, 8);
}

/* A zeroed context at RIP0 with @fpregs and the string registers. */
static void fresh(void *fpregs, uint64_t rsi, uint64_t rdi, uint64_t rcx)
{
	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.fpregs = fpregs;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)RIP0;
	uc.uc_mcontext.gregs[REG_RSI] = (greg_t)rsi;
	uc.uc_mcontext.gregs[REG_RDI] = (greg_t)rdi;
	uc.uc_mcontext.gregs[REG_RCX] = (greg_t)rcx;
	uc.uc_mcontext.gregs[REG_RAX] = (greg_t)FILL;
}

static bool xs_run(const uint8_t *bytes, size_t n)
{
	bool ok;

	fresh(xs, 0, 0, 0);
	ok = sgxemu__abort_page_emulate(&uc, bytes, n, NULL);
	if (ok)
		CHECK_EQ(G(REG_RIP), RIP0 + n);
	return ok;
}

#define XS_RUN(...) ({ static const uint8_t _b[] = { __VA_ARGS__ }; \
		       xs_run(_b, sizeof(_b)); })

/* All @n bytes at @p equal @v. */
static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static uint64_t xstate_bv(void)
{
	uint64_t bv;

	memcpy(&bv, xs + 512, 8);
	return bv;
}

TEST(vex_and_evex_loads_clear_above_their_width)
{
	/* vmovdqu (%rcx),%xmm0: XMM0 ones, YMM0's upper half zero, the
	 * other registers' upper halves kept. */
	xs_reset();
	CHECK(XS_RUN(0xc5, 0xfa, 0x6f, 0x01));
	CHECK(all(xs + 160, 16, 0xff));
	CHECK(all(xs + 576, 16, 0));
	CHECK(all(xs + 576 + 16, 16, 0x5a));
	/* ZMM_Hi256 was in its initial state (bit 6 clear): stays so. */
	CHECK_EQ(xstate_bv(), 0x7);

	/* vmovdqu (%rcx),%ymm1: both halves of YMM1 ones. */
	xs_reset();
	CHECK(XS_RUN(0xc5, 0xfe, 0x6f, 0x09));
	CHECK(all(xs + 160 + 16, 16, 0xff));
	CHECK(all(xs + 576 + 16, 16, 0xff));
	CHECK(all(xs + 160, 16, 0x5a));

	/* vmovdqu64 (%rcx),%zmm2: ZMM_Hi256 leaves its initial state, all
	 * of it zero but ZMM2's 32 bytes. */
	xs_reset();
	CHECK(XS_RUN(0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x11));
	CHECK(all(xs + 160 + 32, 16, 0xff));
	CHECK(all(xs + 576 + 32, 16, 0xff));
	CHECK(all(xs + 1152 + 64, 32, 0xff));
	CHECK(all(xs + 1152, 64, 0));
	CHECK(all(xs + 1152 + 96, 512 - 96, 0));
	CHECK_EQ(xstate_bv(), 0x47);

	/* vmovdqu64 (%rcx),%ymm17: Hi16_ZMM's register 1, low 32 bytes
	 * ones, high 32 zero. */
	xs_reset();
	CHECK(XS_RUN(0x62, 0xe1, 0xfe, 0x28, 0x6f, 0x09));
	CHECK(all(xs + 1664 + 64, 32, 0xff));
	CHECK(all(xs + 1664 + 96, 32, 0));
	CHECK_EQ(xstate_bv(), 0x87);

	/* vmovq (%rcx),%xmm3: 8 bytes of ones, the rest of ZMM3 zero. */
	xs_reset();
	CHECK(XS_RUN(0xc5, 0xfa, 0x7e, 0x19));
	CHECK(all(xs + 160 + 48, 8, 0xff));
	CHECK(all(xs + 160 + 56, 8, 0));
	CHECK(all(xs + 576 + 48, 16, 0));
	sgx_xsave_layout = saved_layout;
}

TEST(vector_loads_the_frame_cannot_hold_are_left_to_fault)
{
	/* A masked EVEX load merges: not a plain move. */
	xs_reset();
	CHECK(!XS_RUN(0x62, 0xf1, 0xfe, 0x49, 0x6f, 0x11));
	/* A frame without an XSAVE area: no room for YMM1's upper half. */
	CHECK(!RUN(0xc5, 0xfe, 0x6f, 0x09));
	/* ...but a VEX XMM load needs none (the upper half is not there). */
	CHECK(RUN(0xc5, 0xfa, 0x6f, 0x01));
	CHECK_EQ(fp._xmm[0].element[3], 0xffffffffU);
	sgx_xsave_layout = saved_layout;
}

/* --- ALU instructions ------------------------------------------------------------ */

#define EFL(f)	(G(REG_EFL) & 0x8d5)
#define CF 0x001
#define PF 0x004
#define AF 0x010
#define ZF 0x040
#define SF 0x080
#define OF 0x800

TEST(alu_reads_all_ones_and_sets_flags)
{
	/* add (%rcx),%rax: FILL + ~0 = FILL - 1 = ...87, a carry out, a
	 * carry out of bit 3 (8 + f), low byte 0x87 has 4 ones (PF). */
	CHECK(RUN(0x48, 0x03, 0x01));
	CHECK_EQ(G(REG_RAX), FILL - 1);
	CHECK_EQ(EFL(), CF | AF | PF);
	/* lock add %rax,(%rcx): the same flags, the store dropped. */
	CHECK(RUN(0xf0, 0x48, 0x01, 0x01));
	CHECK_EQ(G(REG_RAX), FILL);
	CHECK_EQ(EFL(), CF | AF | PF);
	/* cmpb $1,(%rcx): 0xff - 1 = 0xfe: SF, 7 ones (no PF). */
	CHECK(RUN(0x80, 0x39, 0x01));
	CHECK_EQ(EFL(), SF);
	/* test %eax,(%rcx): 0x55667788, low byte 0x88 has 2 ones. */
	CHECK(RUN(0x85, 0x01));
	CHECK_EQ(EFL(), PF);
	CHECK_EQ(G(REG_RAX), FILL);
	/* incl (%rcx): 0xffffffff + 1 = 0: ZF, PF, AF; CF kept (FILL's
	 * bit 0 is 0 in the flags: 0x...88). */
	CHECK(RUN(0xff, 0x01));
	CHECK_EQ(EFL(), ZF | PF | AF);
	/* sub (%rcx),%al: 0x88 - 0xff borrows: 0x89 (SF, 3 ones), AF
	 * (8 < f), OF clear (negative minus negative). */
	CHECK(RUN(0x2a, 0x01));
	CHECK_EQ(G(REG_RAX), 0x1122334455667789ULL);
	CHECK_EQ(EFL(), CF | SF | AF);
	/* xor (%rcx),%ecx: ~0x55667788 = 0xaa998877, zero-extended. */
	CHECK(RUN(0x33, 0x09));
	CHECK_EQ(G(REG_RCX), 0xaa998877ULL);
	CHECK_EQ(EFL(), SF | PF);
	/* notq (%rcx): the store dropped, no flags. */
	CHECK(RUN(0x48, 0xf7, 0x11));
	CHECK_EQ(G(REG_EFL), FILL);
}

TEST(exchanges_give_the_register_all_ones)
{
	/* xchg %rax,(%rcx) */
	CHECK(RUN(0x48, 0x87, 0x01));
	CHECK_EQ(G(REG_RAX), ~0ULL);
	/* xadd %rdx,(%rcx): RDX gets the old value, flags of ~0 + FILL. */
	CHECK(RUN(0x48, 0x0f, 0xc1, 0x11));
	CHECK_EQ(G(REG_RDX), ~0ULL);
	CHECK_EQ(EFL(), CF | AF | PF);
	/* cmpxchg %rdx,(%rcx): RAX (FILL) differs: RAX loads, ZF clear. */
	CHECK(RUN(0x48, 0x0f, 0xb1, 0x11));
	CHECK_EQ(G(REG_RAX), ~0ULL);
	CHECK_EQ(EFL() & ZF, 0);
}

/* --- string instructions ---------------------------------------------------------- */

#define ABORT_LO 0x10000ULL
#define ABORT_HI 0x11000ULL

/* The abort page's range: ABORT_LO.. by default (never dereferenced). */
static uint64_t abort_lo = ABORT_LO, abort_hi = ABORT_HI;

static bool t_is_abort(void *ctx, uint64_t addr, size_t n, bool write)
{
	(void)ctx;
	(void)n;
	(void)write;
	return addr >= abort_lo && addr < abort_hi;
}

static bool t_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, n);
	return true;
}

static unsigned t_writes;

static bool t_write(void *ctx, uint64_t addr, const void *buf, size_t n)
{
	(void)ctx;
	t_writes++;
	memcpy((void *)(uintptr_t)addr, buf, n);
	return true;
}

static const struct sgxemu_abort_mem t_mem = {
	.read = t_read, .write = t_write, .is_abort = t_is_abort,
};

static bool str_run(const uint8_t *b, size_t n, uint64_t rsi, uint64_t rdi,
		    uint64_t rcx)
{
	fresh(NULL, rsi, rdi, rcx);
	return sgxemu__abort_page_emulate(&uc, b, n, &t_mem);
}

TEST(rep_movs_from_an_abort_page_copies_ones_then_hands_back)
{
	static const uint8_t movsb[] = { 0xf3, 0xa4 };	/* rep movsb */
	uint8_t buf[32];
	uint64_t dst = (uint64_t)(uintptr_t)buf;

	memset(buf, 0x11, sizeof(buf));
	/* 16 bytes left on the abort page, 32 to copy: 16 done here, the
	 * CPU runs the instruction again for the rest. */
	CHECK(str_run(movsb, 2, ABORT_HI - 16, dst, 32));
	CHECK(all(buf, 16, 0xff));
	CHECK(all(buf + 16, 16, 0x11));
	CHECK_EQ(G(REG_RCX), 16);
	CHECK_EQ(G(REG_RSI), ABORT_HI);
	CHECK_EQ(G(REG_RDI), dst + 16);
	CHECK_EQ(G(REG_RIP), RIP0);
	/* Neither operand on an abort page: not this file's. */
	CHECK(!str_run(movsb, 2, dst, dst + 8, 4));
}

TEST(rep_stos_and_lods_on_an_abort_page)
{
	static const uint8_t stosq[] = { 0xf3, 0x48, 0xab };	/* rep stosq */
	static const uint8_t lodsl[] = { 0xad };		/* lodsl */

	CHECK(str_run(stosq, 3, 0, ABORT_LO, 3));
	CHECK_EQ(G(REG_RDI), ABORT_LO + 24);
	CHECK_EQ(G(REG_RCX), 0);
	CHECK_EQ(G(REG_RIP), RIP0 + 3);
	CHECK(str_run(lodsl, 1, ABORT_LO + 4, 0, 7));
	CHECK_EQ(G(REG_RAX), 0xffffffffULL);
	CHECK_EQ(G(REG_RSI), ABORT_LO + 8);
	CHECK_EQ(G(REG_RCX), 7);
	CHECK_EQ(G(REG_RIP), RIP0 + 1);
}

/*
 * Elements that cross from ordinary memory into the abort page (an
 * inaccessible page here, so a byte written there would crash the test):
 * the ordinary bytes are read and written for real, the abort page's read
 * as ones and take nothing. Found by fuzz_abort_page.
 */
TEST(string_elements_straddling_an_abort_page)
{
	static const uint8_t movsw[] = { 0xf3, 0x66, 0xa5 };	/* rep movsw */
	uint8_t *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t page1;
	uint8_t out[8];

	REQUIRE(two != MAP_FAILED);
	REQUIRE_EQ(mprotect(two + 4096, 4096, PROT_NONE), 0);
	page1 = (uint64_t)(uintptr_t)(two + 4096);
	abort_lo = page1;
	abort_hi = page1 + 4096;
	memset(two, 0x33, 4096);

	/* Stores: the first element's low byte lands, its high byte and
	 * the later elements (all on the abort page) are dropped. */
	CHECK(str_run(movsw, 3, page1 + 0x100, page1 - 1, 4));
	CHECK_EQ(two[4095], 0xff);
	CHECK_EQ(two[4094], 0x33);
	CHECK_EQ(G(REG_RCX), 0);
	CHECK_EQ(G(REG_RDI), page1 - 1 + 8);
	CHECK_EQ(G(REG_RIP), RIP0 + 3);

	/* A load: 0x33 from memory, 0xff from the abort page. */
	memset(two, 0x33, 4096);
	memset(out, 0, sizeof(out));
	CHECK(str_run(movsw, 3, page1 - 1, (uint64_t)(uintptr_t)out, 1));
	CHECK_EQ(out[0], 0x33);
	CHECK_EQ(out[1], 0xff);
	CHECK_EQ(out[2], 0);

	abort_lo = ABORT_LO;
	abort_hi = ABORT_HI;
	munmap(two, 8192);
}

/* A whole page copied out of an abort page by REP MOVSB, and a REP STOSQ
 * across it: a copy per page run, not one per element. */
TEST(rep_movs_and_stos_go_by_page_runs)
{
	static const uint8_t movsb[] = { 0xf3, 0xa4 };		/* rep movsb */
	static const uint8_t stosq[] = { 0xf3, 0x48, 0xab };	/* rep stosq */
	uint8_t *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static uint8_t out[4096 + 64];
	uint64_t page1, dst = (uint64_t)(uintptr_t)out;

	REQUIRE(two != MAP_FAILED);
	REQUIRE_EQ(mprotect(two + 4096, 4096, PROT_NONE), 0);
	page1 = (uint64_t)(uintptr_t)(two + 4096);
	abort_lo = page1;
	abort_hi = page1 + 4096;

	memset(out, 0, sizeof(out));
	t_writes = 0;
	CHECK(str_run(movsb, 2, page1, dst, 4096));
	CHECK(all(out, 4096, 0xff));
	CHECK(all(out + 4096, 64, 0));
	CHECK_EQ(G(REG_RCX), 0);
	CHECK_EQ(G(REG_RIP), RIP0 + 2);
	/* At most one write per page of the destination. */
	CHECK(t_writes <= 2);

	/* 1024 quadwords from the abort page's start: its 512 dropped at
	 * once, then the CPU has the rest (RIP stays, RCX 512 left). */
	t_writes = 0;
	CHECK(str_run(stosq, 3, 0, page1, 1024));
	CHECK_EQ(G(REG_RCX), 512);
	CHECK_EQ(G(REG_RDI), page1 + 4096);
	CHECK_EQ(G(REG_RIP), RIP0);
	CHECK_EQ(t_writes, 0);

	abort_lo = ABORT_LO;
	abort_hi = ABORT_HI;
	munmap(two, 8192);
}

/* A load or store whose operand crosses from ordinary memory into the
 * abort page is left to fault (its ordinary bytes would have to be read
 * or written for real); one inside the abort page is carried out. */
TEST(operands_crossing_into_ordinary_memory_are_left_to_fault)
{
	static const uint8_t load[] = { 0x48, 0x8b, 0x01 };	/* mov (%rcx),%rax */
	static const uint8_t store[] = { 0x48, 0x89, 0x41, 0xfc }; /* mov %rax,-4(%rcx) */
	uint8_t *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t page1;

	REQUIRE(two != MAP_FAILED);
	REQUIRE_EQ(mprotect(two + 4096, 4096, PROT_NONE), 0);
	page1 = (uint64_t)(uintptr_t)(two + 4096);
	abort_lo = page1;
	abort_hi = page1 + 4096;

	/* RCX as the operand's base; str_run puts it in RCX. */
	CHECK(!str_run(load, 3, 0, 0, page1 - 4));
	CHECK(str_run(load, 3, 0, 0, page1 + 8));
	CHECK_EQ(G(REG_RAX), ~0ULL);
	CHECK(!str_run(store, 4, 0, 0, page1 + 2));
	CHECK(str_run(store, 4, 0, 0, page1 + 4));

	abort_lo = ABORT_LO;
	abort_hi = ABORT_HI;
	munmap(two, 8192);
}
