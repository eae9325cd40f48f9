/* SPDX-License-Identifier: MIT */
/*
 * XSAVE-family instructions of enclave code that fault only because XCR0
 * is the host's (issue 26's other half, found on an Intel host with AMX).
 *
 * Hardware loads SECS.XFRM into XCR0 for enclave mode, so an enclave's
 * XSAVE, XSAVEC, XSAVEOPT or XRSTOR with an all-ones mask (the Intel SDK's
 * trts: restore_xregs, save_and_clean_xfeature_regs) touches an image
 * sized for XFRM. Here XCR0 stays the host's, the requested-feature
 * bitmap (RFBM = EDX:EAX & XCR0) takes in the host's extra features, and
 * the processor checks the whole area those reach: with AMX in XCR0 that
 * is 11008 bytes where the enclave's buffer holds 2688 or 576, so the
 * instruction takes a #PF past the buffer (the SDK's OCALL return, its
 * exception handling: SGX_ERROR_ENCLAVE_CRASHED). The features beyond
 * XFRM are in their initial configuration in enclave mode (xstate.c), so
 * the enclave never sees their contents; only the reach is wrong.
 *
 * Such a #PF is taken here and the instruction done as hardware would do
 * it, with RFBM = EDX:EAX & XFRM: the enclave's operand is copied into a
 * scratch image through the processor's EPC view (after the checks the
 * processor makes: every page of the XFRM-sized area present and allowed
 * by the EPCM and the mapping, 64-byte alignment, the header and MXCSR
 * rules of XRSTOR), the instruction itself runs on the interrupted
 * context's XSAVE state (the signal frame's image, loaded, used, saved
 * back in one asm statement, so no compiled code touches the registers
 * between), and a store's bytes go back the same way. A fault the
 * XFRM-sized area would take too, or a #GP hardware would raise, is left
 * to the caller as the enclave's own exception.
 */
#include <string.h>
#include <sys/mman.h>

#include <Zydis/Zydis.h>

#include "base/x86_regs.h"
#include "engine/engine.h"

#define XRSTOR_GP	1	/* the caller delivers #GP(0) */
#define NOT_MINE	(-1)

enum xop { XOP_XSAVE, XOP_XSAVEOPT, XOP_XSAVEC, XOP_XRSTOR };

/* The scratch image: as large as any image the stash allows. */
#define SCRATCH_SIZE	SGXEMU_XSTASH_SIZE

/* The memory operand's linear address (64-bit addressing only), or
 * false for what this file does not take on. */
static bool operand_address(const ZydisDecodedInstruction *in,
			    const ZydisDecodedOperand *op, const greg_t *g,
			    uint64_t rip, const struct sgxemu_sigsave *save,
			    uint64_t *addr)
{
	uint64_t a = (uint64_t)op->mem.disp.value;
	int slot;

	if (in->address_width != 64)
		return false;
	if (op->mem.base == ZYDIS_REGISTER_RIP) {
		a += rip + in->length;
	} else if (op->mem.base != ZYDIS_REGISTER_NONE) {
		if ((slot = sgx_greg_slot(op->mem.base)) < 0)
			return false;
		a += (uint64_t)g[slot];
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		if ((slot = sgx_greg_slot(op->mem.index)) < 0)
			return false;
		a += (uint64_t)g[slot] * op->mem.scale;
	}
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		a += save->fs;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		a += save->gs;
	*addr = a;
	return true;
}

static bool classify(ZydisMnemonic m, enum xop *x, bool *rex_w)
{
	*rex_w = true;
	switch (m) {
	case ZYDIS_MNEMONIC_XSAVE:	*rex_w = false; /* fall through */
	case ZYDIS_MNEMONIC_XSAVE64:	*x = XOP_XSAVE; return true;
	case ZYDIS_MNEMONIC_XSAVEOPT:	*rex_w = false; /* fall through */
	case ZYDIS_MNEMONIC_XSAVEOPT64:	*x = XOP_XSAVEOPT; return true;
	case ZYDIS_MNEMONIC_XSAVEC:	*rex_w = false; /* fall through */
	case ZYDIS_MNEMONIC_XSAVEC64:	*x = XOP_XSAVEC; return true;
	case ZYDIS_MNEMONIC_XRSTOR:	*rex_w = false; /* fall through */
	case ZYDIS_MNEMONIC_XRSTOR64:	*x = XOP_XRSTOR; return true;
	default:			return false;
	}
}

/* Bytes of a standard-format image holding the features of @rfbm. */
static uint32_t standard_size(uint64_t rfbm)
{
	uint32_t end = 576;

	for (unsigned i = 2; i < 63; i++) {
		uint32_t e = sgx_xsave_layout.offset[i] + sgx_xsave_layout.size[i];

		if ((rfbm & (1ULL << i)) && e > end)
			end = e;
	}
	return end;
}

/*
 * Bytes of a compacted-format image whose XCOMP_BV is @bv that hold the
 * components of @want (SDM 13.4.3: components in order, each aligned to
 * 64 where CPUID says so).
 */
static uint32_t compacted_size(uint64_t bv, uint64_t want)
{
	uint32_t end = 576, at = 576;

	for (unsigned i = 2; i < 63; i++) {
		if (!(bv & (1ULL << i)))
			continue;
		if (sgx_xsave_layout.align & (1ULL << i))
			at = (at + 63) & ~63U;
		at += sgx_xsave_layout.size[i];
		if (want & (1ULL << i))
			end = at;
	}
	return end;
}

/*
 * Every page of [addr, addr + len) as the enclave may touch it: an EPC
 * page of this enclave, allowed by the EPCM and the mapping for reading
 * and, with @write, writing.
 */
static bool reachable(struct sgxemu_enclave *e, uint64_t addr, uint32_t len,
		      bool write)
{
	uint64_t first, last;

	if (addr < e->base || addr - e->base >= e->size ||
	    len > e->base + e->size - addr)
		return false;
	first = (addr - e->base) >> SGX_PAGE_SHIFT;
	last = (addr + len - 1 - e->base) >> SGX_PAGE_SHIFT;
	for (uint64_t p = first; p <= last; p++) {
		int map = e->map_prot[p], prot;

		if (map & SGXEMU_MAP_REFUSED)
			return false;
		prot = sgxemu__epcm_prot(e, p) & map;
		if (!(prot & PROT_READ) || (write && !(prot & PROT_WRITE)))
			return false;
	}
	return true;
}

/*
 * XRSTOR's #GP checks (SDM Vol. 2, XRSTOR "Protected Mode Exceptions")
 * against XCR0 = @xfrm, on the image at @img; true when it would fault.
 * Also gives the bytes of the image that restoring @rfbm reads. An
 * XCOMP_BV naming features of the host's XCR0 beyond XFRM is taken: only
 * an XSAVEC of enclave code here, under the host's XCR0, writes one
 * (hardware's would name XFRM's), and those features come after XFRM's
 * in the image, so the offsets of XFRM's are as hardware's.
 */
static bool xrstor_gp(const uint8_t *img, uint64_t rfbm, uint64_t xfrm,
		      uint64_t host, uint32_t mxcsr_mask, uint32_t *len)
{
	uint64_t xstate_bv, xcomp_bv, rest[5];
	uint32_t mxcsr;

	memcpy(&xstate_bv, img + 512, 8);
	memcpy(&xcomp_bv, img + 520, 8);
	memcpy(rest, img + 528, sizeof(rest));
	memcpy(&mxcsr, img + 24, 4);
	if ((xstate_bv & ~xfrm))
		return true;
	if (xcomp_bv >> 63) {
		uint64_t comp = xcomp_bv & ~(1ULL << 63);

		if ((comp & ~host) || (xstate_bv & ~comp) ||
		    (rest[0] | rest[1] | rest[2] | rest[3] | rest[4]))
			return true;
		*len = compacted_size(comp, rfbm);
	} else {
		if (xcomp_bv || rest[0])
			return true;
		*len = standard_size(rfbm);
	}
	/* MXCSR is loaded with SSE or AVX requested; reserved bits set
	 * are #GP. */
	if ((rfbm & 6) && (mxcsr & ~mxcsr_mask))
		return true;
	return false;
}

static uint32_t host_mxcsr_mask(void)
{
	static uint32_t mask;
	uint8_t fx[512] __attribute__((aligned(16)));

	if (!mask) {
		memset(fx, 0, sizeof(fx));
		__asm__ volatile("fxsave64 %0" : "=m"(fx));
		memcpy(&mask, fx + 28, 4);
		if (!mask)
			mask = 0xffbf;	/* SDM 11.6.6: the default */
	}
	return mask;
}

/* XCR0 itself: sgx_host_xcr0() asks CPUID first, which faults in host
 * mode where CPUID faulting is on, and this runs in a signal handler.
 * An XSAVE instruction got here, so XGETBV is enabled. */
static uint64_t xcr0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * The instruction on the interrupted context's state: the frame's image
 * becomes the live state, the instruction runs on the scratch image with
 * @rfbm, and a restore's result goes back into the frame. One statement
 * each, so that no compiled code runs between.
 */
static void run_on_frame(enum xop x, bool rex_w, uint8_t *frame,
			 uint64_t frame_features, uint8_t *scratch,
			 uint64_t rfbm)
{
	uint32_t flo = (uint32_t)frame_features, fhi = frame_features >> 32;
	uint32_t rlo = (uint32_t)rfbm, rhi = rfbm >> 32;
	uint32_t a = flo, d = fhi;

#define SAVE_ON_FRAME(insn)						\
	__asm__ volatile("xrstor64 (%2)\n\t"				\
			 "mov %4, %%eax\n\t"				\
			 "mov %5, %%edx\n\t"				\
			 insn " (%3)"					\
			 : "+a"(a), "+d"(d)				\
			 : "r"(frame), "r"(scratch), "r"(rlo), "r"(rhi)	\
			 : "memory")
#define RESTORE_INTO_FRAME(insn)					\
	__asm__ volatile("xrstor64 (%2)\n\t"				\
			 "mov %4, %%eax\n\t"				\
			 "mov %5, %%edx\n\t"				\
			 insn " (%3)\n\t"				\
			 "mov %6, %%eax\n\t"				\
			 "mov %7, %%edx\n\t"				\
			 "xsave64 (%2)"					\
			 : "+a"(a), "+d"(d)				\
			 : "r"(frame), "r"(scratch), "r"(rlo), "r"(rhi),	\
			   "r"(flo), "r"(fhi)				\
			 : "memory")
	switch (x) {
	case XOP_XSAVE:
		if (rex_w)
			SAVE_ON_FRAME("xsave64");
		else
			SAVE_ON_FRAME("xsave");
		break;
	case XOP_XSAVEOPT:
		if (rex_w)
			SAVE_ON_FRAME("xsaveopt64");
		else
			SAVE_ON_FRAME("xsaveopt");
		break;
	case XOP_XSAVEC:
		if (rex_w)
			SAVE_ON_FRAME("xsavec64");
		else
			SAVE_ON_FRAME("xsavec");
		break;
	case XOP_XRSTOR:
		if (rex_w)
			RESTORE_INTO_FRAME("xrstor64");
		else
			RESTORE_INTO_FRAME("xrstor");
		break;
	}
#undef SAVE_ON_FRAME
#undef RESTORE_INTO_FRAME
}

int sgxemu__xsave_replay(struct sgxemu_tcb *tcb, ucontext_t *uc,
			 const struct sgxemu_sigsave *save, uint64_t rip)
{
	uint8_t scratch[SCRATCH_SIZE + 64], insn[15], *img, *frame;
	ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
	struct sgxemu_enclave *e = tcb->encl;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t xfrm, asked, rfbm, addr, features;
	ZydisDecodedInstruction in;
	ZydisDecoder dec;
	uint32_t len, fsize;
	enum xop x;
	bool rex_w;
	size_t n;

	if (!e || !tcb->lp.secs)
		return NOT_MINE;
	xfrm = tcb->lp.secs->attributes.xfrm;
	/* The instruction's bytes, up to the end of ELRANGE. */
	if (rip < e->base || rip - e->base >= e->size)
		return NOT_MINE;
	n = e->base + e->size - rip < sizeof(insn) ? e->base + e->size - rip
						   : sizeof(insn);
	sgx_encl_read(sgxemu__cpu(), tcb->lp.ctl, rip, insn, n);
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, insn, n, &in, op)) ||
	    !classify(in.mnemonic, &x, &rex_w) ||
	    op[0].type != ZYDIS_OPERAND_TYPE_MEMORY)
		return NOT_MINE;
	asked = ((uint64_t)(uint32_t)g[REG_RDX] << 32) |
		(uint32_t)g[REG_RAX];
	/* Nothing of the host's beyond XFRM asked: the fault is the
	 * enclave's own. */
	if (!(asked & xcr0() & ~xfrm))
		return NOT_MINE;
	rfbm = asked & xfrm;
	if (!operand_address(&in, &op[0], g, rip, save, &addr) ||
	    !(frame = sgxemu__xsave_frame(uc, &fsize, &features)))
		return NOT_MINE;
	if (addr & 63)
		return XRSTOR_GP;	/* the alignment #GP(0) */
	img = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
	memset(img, 0, SCRATCH_SIZE);
	if (x == XOP_XRSTOR) {
		/* The header first, then the image it describes. */
		if (!reachable(e, addr, 576, false))
			return NOT_MINE;
		sgx_encl_read(sgxemu__cpu(), tcb->lp.ctl, addr, img, 576);
		if (xrstor_gp(img, rfbm, xfrm, xcr0(), host_mxcsr_mask(),
			      &len))
			return XRSTOR_GP;
	} else {
		len = x == XOP_XSAVEC ? compacted_size(rfbm, rfbm)
				      : standard_size(rfbm);
	}
	if (len > SCRATCH_SIZE || !reachable(e, addr, len, x != XOP_XRSTOR))
		return NOT_MINE;
	/* A store leaves what it does not write as it was. */
	sgx_encl_read(sgxemu__cpu(), tcb->lp.ctl, addr, img, len);
	run_on_frame(x, rex_w, frame, features, img, rfbm);
	if (x != XOP_XRSTOR)
		sgx_encl_write(sgxemu__cpu(), tcb->lp.ctl, addr, img, len);
	g[REG_RIP] = (greg_t)(rip + in.length);
	return 0;
}
