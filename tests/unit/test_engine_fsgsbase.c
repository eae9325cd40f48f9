/* SPDX-License-Identifier: MIT */
/*
 * RD/WR{FS,GS}BASE as the engine does them where the host kernel has them
 * off (src/engine/fsgsbase.c): the #UD path, run on every host whatever
 * it has, by feeding the emulation the instruction bytes and a ucontext.
 * Encodings are the SDM's (F3 [REX] 0F AE /0../3, mod = 11), written out
 * here by hand; objdump of the same bytes gives the same mnemonics.
 */
#include <string.h>
#include <ucontext.h>

#include "test.h"
#include "engine/engine.h"

struct text {
	uint64_t base;
	uint8_t bytes[8];
	size_t len;
};

static bool text_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	struct text *t = ctx;

	if (addr < t->base || addr - t->base > t->len ||
	    n > t->len - (addr - t->base))
		return false;
	memcpy(buf, t->bytes + (addr - t->base), n);
	return true;
}

/* Run the emulation on @bytes at RIP 0x401000 with @uc. */
static int emulate(ucontext_t *uc, const uint8_t *bytes, size_t len,
		   uint64_t *fs, uint64_t *gs)
{
	struct text t = { .base = 0x401000, .len = len };

	memcpy(t.bytes, bytes, len);
	uc->uc_mcontext.gregs[REG_RIP] = 0x401000;
	return sgxemu__fsgsbase_emulate(uc, text_read, &t, fs, gs);
}

TEST(wrfsbase_rax_and_rdfsbase_rdx)
{
	static const uint8_t wr[] = { 0xf3, 0x48, 0x0f, 0xae, 0xd0 };
	static const uint8_t rd[] = { 0xf3, 0x48, 0x0f, 0xae, 0xc2 };
	ucontext_t uc;
	uint64_t fs = 0x1000, gs = 0x2000;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RAX] = 0x7f1234567000LL;
	REQUIRE_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 0);
	CHECK_EQ(fs, 0x7f1234567000ULL);
	CHECK_EQ(gs, 0x2000);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], 0x401005);
	REQUIRE_EQ(emulate(&uc, rd, sizeof(rd), &fs, &gs), 0);
	CHECK_EQ((uint64_t)uc.uc_mcontext.gregs[REG_RDX], 0x7f1234567000ULL);
}

TEST(gs_forms_with_high_registers)
{
	/* wrgsbase %r13 (REX.WB), rdgsbase %r9 (REX.WB). */
	static const uint8_t wr[] = { 0xf3, 0x49, 0x0f, 0xae, 0xdd };
	static const uint8_t rd[] = { 0xf3, 0x49, 0x0f, 0xae, 0xc9 };
	ucontext_t uc;
	uint64_t fs = 0, gs = 0;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_R13] = 0x5a5a000;
	REQUIRE_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 0);
	CHECK_EQ(gs, 0x5a5a000);
	CHECK_EQ(fs, 0);
	REQUIRE_EQ(emulate(&uc, rd, sizeof(rd), &fs, &gs), 0);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_R9], 0x5a5a000);
}

TEST(operand_size_32_zero_extends)
{
	/* rdfsbase %eax and wrfsbase %ecx: no REX.W, 32 bits. */
	static const uint8_t rd[] = { 0xf3, 0x0f, 0xae, 0xc0 };
	static const uint8_t wr[] = { 0xf3, 0x0f, 0xae, 0xd1 };
	ucontext_t uc;
	uint64_t fs = 0x123456789abcULL, gs = 0;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RAX] = -1;
	REQUIRE_EQ(emulate(&uc, rd, sizeof(rd), &fs, &gs), 0);
	CHECK_EQ((uint64_t)uc.uc_mcontext.gregs[REG_RAX], 0x56789abcULL);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], 0x401004);
	uc.uc_mcontext.gregs[REG_RCX] = (greg_t)0xffffffff00001000ULL;
	REQUIRE_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 0);
	CHECK_EQ(fs, 0x1000);
}

TEST(non_canonical_write_is_gp_and_changes_nothing)
{
	static const uint8_t wr[] = { 0xf3, 0x48, 0x0f, 0xae, 0xd0 };
	ucontext_t uc;
	uint64_t fs = 0x1000, gs = 0x2000;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RAX] = (greg_t)0x0000800000000000ULL;
	CHECK_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 1);
	CHECK_EQ(fs, 0x1000);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], 0x401000);
	/* The top of the lower half and the bottom of the upper are fine. */
	uc.uc_mcontext.gregs[REG_RAX] = (greg_t)0x00007ffffffff000ULL;
	CHECK_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 0);
	uc.uc_mcontext.gregs[REG_RAX] = (greg_t)0xffff800000000000ULL;
	CHECK_EQ(emulate(&uc, wr, sizeof(wr), &fs, &gs), 0);
	CHECK_EQ(fs, 0xffff800000000000ULL);
}

TEST(other_instructions_are_not_taken)
{
	/* ud2; F3 0F AE /4 (ptwrite-like reg 4); a memory form (mod 00:
	 * fxsave); no F3 prefix (0F AE F0 is mfence-like). */
	static const uint8_t ud2[] = { 0x0f, 0x0b, 0x90, 0x90 };
	static const uint8_t reg4[] = { 0xf3, 0x48, 0x0f, 0xae, 0xe0 };
	static const uint8_t mem[] = { 0xf3, 0x48, 0x0f, 0xae, 0x00 };
	static const uint8_t nof3[] = { 0x48, 0x0f, 0xae, 0xd0 };
	ucontext_t uc;
	uint64_t fs = 1, gs = 2;

	memset(&uc, 0, sizeof(uc));
	CHECK_EQ(emulate(&uc, ud2, sizeof(ud2), &fs, &gs), -1);
	CHECK_EQ(emulate(&uc, reg4, sizeof(reg4), &fs, &gs), -1);
	CHECK_EQ(emulate(&uc, mem, sizeof(mem), &fs, &gs), -1);
	CHECK_EQ(emulate(&uc, nof3, sizeof(nof3), &fs, &gs), -1);
	/* Cut short by an unreadable page: not decodable, not taken. */
	CHECK_EQ(emulate(&uc, reg4, 3, &fs, &gs), -1);
	CHECK_EQ(fs, 1);
	CHECK_EQ(gs, 2);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], 0x401000);
}
