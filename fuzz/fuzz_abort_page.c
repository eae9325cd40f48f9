/* SPDX-License-Identifier: MIT */
/*
 * The abort-page emulator (src/driver/abort_page.c), which decodes and
 * carries out whatever host instruction faulted on an EPC page, inside a
 * signal handler. Input: one byte of switches, the XSAVE frame's size
 * (u16, at most the buffer) and XSTATE_BV (u64), RSI, RDI, RCX, RAX and
 * RFLAGS (u64 each), then up to 15 instruction bytes. Memory is a 64 KiB
 * arena; its middle 4 KiB page is the abort page; addresses outside the
 * arena fault (the callbacks say so). Checked beyond "no crash":
 *  - a refused instruction leaves the context and the frame unchanged;
 *  - no store goes through to the abort page;
 *  - the frame's bytes past the size it declares are never touched.
 */
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "fuzz.h"
#include "cpu/enclu.h"
#include "driver/abort_page.h"

#define ARENA		(64 * 1024)
#define ABORT_OFF	(32 * 1024)
#define XS_MAX		8192

static uint8_t *arena;
static uint8_t xs[XS_MAX + 64] __attribute__((aligned(64)));

static bool in_arena(uint64_t a, size_t n)
{
	uint64_t lo = (uint64_t)(uintptr_t)arena;

	return a >= lo && n <= ARENA && a - lo <= ARENA - n;
}

static bool on_abort(uint64_t a)
{
	uint64_t lo = (uint64_t)(uintptr_t)arena + ABORT_OFF;

	return a >= lo && a - lo < 4096;
}

static bool m_read(void *ctx, uint64_t a, uint8_t *buf, size_t n)
{
	(void)ctx;
	if (!in_arena(a, n) || on_abort(a))
		return false;
	memcpy(buf, (const void *)(uintptr_t)a, n);
	return true;
}

static bool m_write(void *ctx, uint64_t a, const void *buf, size_t n)
{
	(void)ctx;
	if (!in_arena(a, n))
		return false;	/* unmapped: the store faults */
	if (on_abort(a) || on_abort(a + n - 1))
		abort();	/* a store through to the abort page */
	memcpy((void *)(uintptr_t)a, buf, n);
	return true;
}

static bool m_is_abort(void *ctx, uint64_t a, size_t n, bool write)
{
	(void)ctx;
	(void)n;
	(void)write;
	return on_abort(a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	arena = aligned_alloc(4096, ARENA);
	if (!arena)
		abort();
	sgx_xsave_layout_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sgxemu_abort_mem mem = {
		.read = m_read, .write = m_write, .is_abort = m_is_abort,
	};
	struct fuzz_in in = { data, size };
	uint8_t sw = fuzz_u8(&in), insn[15], xs_before[sizeof(xs)];
	uint16_t xsize = fuzz_u16(&in) % XS_MAX;
	uint64_t bv = fuzz_u64(&in), base = (uint64_t)(uintptr_t)arena;
	uint32_t magic = 0x46505853, size32 = xsize;
	uint64_t xfeatures = 0xe7;
	ucontext_t uc, before;
	size_t len;
	bool ok;

	memset(arena, 0x11, ARENA);
	memset(xs, 0x5a, sizeof(xs));
	if (sw & 1) {			/* an XSAVE frame as the kernel writes */
		memcpy(xs + 464, &magic, 4);
		memcpy(xs + 472, &xfeatures, 8);
		memcpy(xs + 480, &size32, 4);
		memset(xs + 512, 0, 64);
		memcpy(xs + 512, &bv, 8);
	}
	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.fpregs = (sw & 2) ? NULL : (void *)xs;
	/* RSI/RDI/RCX as offsets into the arena (or raw with switch 4). */
	uc.uc_mcontext.gregs[REG_RSI] = (greg_t)(sw & 4 ? fuzz_u64(&in) :
					 base + fuzz_u16(&in) % ARENA);
	uc.uc_mcontext.gregs[REG_RDI] = (greg_t)(sw & 4 ? fuzz_u64(&in) :
					 base + fuzz_u16(&in) % ARENA);
	uc.uc_mcontext.gregs[REG_RCX] = (greg_t)(sw & 8 ? fuzz_u64(&in) :
					 fuzz_u16(&in));
	uc.uc_mcontext.gregs[REG_RAX] = (greg_t)fuzz_u64(&in);
	uc.uc_mcontext.gregs[REG_EFL] = (greg_t)(fuzz_u64(&in) & 0x8d5);
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)0x7ff0000000ULL;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)0x401000ULL;
	len = in.left < sizeof(insn) ? in.left : sizeof(insn);
	fuzz_bytes(&in, insn, len);
	before = uc;
	memcpy(xs_before, xs, sizeof(xs));

	ok = sgxemu__abort_page_emulate(&uc, insn, len, &mem);
	if (!ok && (memcmp(uc.uc_mcontext.gregs, before.uc_mcontext.gregs,
			   sizeof(uc.uc_mcontext.gregs)) ||
		    memcmp(xs, xs_before, sizeof(xs))))
		abort();	/* refused, yet something changed */
	/* Nothing past what the frame declares (or the legacy region). */
	if (memcmp(xs + (sw & 1 ? (xsize > 576 ? xsize : 576) : 512),
		   xs_before + (sw & 1 ? (xsize > 576 ? xsize : 576) : 512),
		   sizeof(xs) - (sw & 1 ? (xsize > 576 ? xsize : 576) : 512)))
		abort();
	return 0;
}
