/* SPDX-License-Identifier: MIT */
/*
 * XSAVE state in enclave mode beyond the enclave's XFRM (issue 26).
 *
 * Hardware loads SECS.XFRM into XCR0 at EENTER and ERESUME, so enclave
 * code sees only the XFRM features: an all-ones XSAVE there writes an
 * XFRM-sized image and an all-ones XRSTOR reads one. Here XCR0 stays the
 * host's (XSETBV is privileged), so with XFRM smaller than XCR0 (Gramine's
 * default leaves PKRU out, and AVX-512 when a manifest disables it) the
 * runtime's XFRM-sized buffers meet the host's features. What user mode
 * can do, done here: at every entry the features XCR0 has and XFRM lacks
 * are put into their initial configuration (XINUSE = 0), the host's values
 * kept in the thread's stash; at every exit (EEXIT, AEX) the host's values
 * come back. So an enclave's all-ones XSAVE records those features as
 * "init" (XSTATE_BV bit 0), and its all-ones XRSTOR of such an image
 * initialises them instead of loading whatever lies past its buffer (a
 * PKRU loaded from there made every access of the enclave fault). The
 * SSA holds only XFRM features already (src/cpu/enclu.c). What remains
 * (docs/guide.md, "Differences from hardware"): XSAVE still writes the
 * initial values of those features at their offsets, past an XFRM-sized
 * buffer, and XGETBV reports the host's XCR0.
 *
 * Two kinds of entry: the trap paths change the signal frame the kernel
 * restores (its XSAVE image, standard format); the fast EENTER path
 * (enter.c) works on the live registers just before it jumps in. Exits
 * always come through a signal frame.
 */
#include <string.h>

#include "engine/engine.h"

/* The host's features that can be hidden from an enclave: beyond x87 and
 * SSE, with a known place in the image that fits the stash. Set once, so
 * that entries only mask it; 0: nothing to do (no XSAVE, too large). */
static uint64_t hideable;

void sgxemu__xstate_init(void)
{
	uint64_t xcr0 = sgx_host_xcr0();
	uint64_t mask = xcr0 & ~(uint64_t)SGX_XFRM_LEGACY;
	uint32_t end = 576;

	for (unsigned i = 2; i < 64; i++) {
		uint32_t e = sgx_xsave_layout.offset[i] +
			     sgx_xsave_layout.size[i];

		if (!(xcr0 & (1ULL << i)))
			continue;
		if (e > end)
			end = e;
		if (!sgx_xsave_layout.size[i] || e > SGXEMU_XSTASH_SIZE)
			mask &= ~(1ULL << i);
	}
	hideable = end <= SGXEMU_XSTASH_SIZE ? mask : 0;
}

/* The features to hide from an enclave with @xfrm. */
static uint64_t beyond_xfrm(uint64_t xfrm)
{
	return hideable & ~xfrm;
}

uint8_t *sgxemu__xsave_frame(ucontext_t *uc, uint32_t *size,
			     uint64_t *features)
{
	uint8_t *fp = (uint8_t *)uc->uc_mcontext.fpregs;
	uint32_t magic, xsize;

	*size = 0;
	if (!fp)
		return NULL;
	/* The kernel's software-reserved words at 464: magic1, then
	 * extended_size, xfeatures, xstate_size (fpx_sw_bytes). */
	memcpy(&magic, fp + 464, 4);
	memcpy(&xsize, fp + 464 + 16, 4);
	if (magic != 0x46505853U || xsize < 576)
		return NULL;
	if (features)
		memcpy(features, fp + 464 + 8, 8);
	*size = xsize;
	return fp;
}

/*
 * Copy the features of @mask that @bv says are in use from one standard
 * XSAVE image to another (same offsets); those not within @size bytes are
 * dropped from the mask returned.
 */
static uint64_t copy_features(uint8_t *dst, const uint8_t *src,
			      uint64_t mask, uint64_t bv, uint32_t size)
{
	for (unsigned i = 2; i < 64; i++) {
		uint32_t off = sgx_xsave_layout.offset[i];
		uint32_t n = sgx_xsave_layout.size[i];

		if (!(mask & (1ULL << i)))
			continue;
		if (off + n > size)
			mask &= ~(1ULL << i);
		else if (bv & (1ULL << i))
			memcpy(dst + off, src + off, n);
	}
	return mask;
}

/* The stash is emptied; the frame's image, its size and XSTATE_BV when
 * there is something to do for @mask, else NULL. */
static uint8_t *frame_open(struct sgxemu_tcb *tcb, ucontext_t *uc,
			   uint64_t mask, uint32_t *size, uint64_t *bv)
{
	uint8_t *fp = sgxemu__xsave_frame(uc, size, NULL);

	tcb->xstash_mask = 0;
	if (!mask || !fp)
		return NULL;
	memcpy(bv, fp + 512, 8);
	return fp;
}

void sgxemu__xstate_enter_frame(struct sgxemu_tcb *tcb, ucontext_t *uc,
				uint64_t xfrm)
{
	uint64_t mask = beyond_xfrm(xfrm), bv;
	uint32_t size;
	uint8_t *fp = frame_open(tcb, uc, mask, &size, &bv);

	if (!fp)
		return;
	mask = copy_features(tcb->xstash, fp, mask, bv, size);
	tcb->xstash_mask = mask;
	tcb->xstash_bv = bv & mask;
	bv &= ~mask;
	memcpy(fp + 512, &bv, 8);
}

/*
 * An all-zero standard-format image as large as the stash, never written:
 * XRSTOR of it with XSTATE_BV 0 initialises the features of its mask. It
 * must be that large and mapped: the processor checks the whole area the
 * mask reaches, not only the header it reads (Intel with AMX in XCR0: a
 * 576-byte image at the top of a stack faulted, #GP, at every EENTER).
 */
static const uint8_t xinit_image[SGXEMU_XSTASH_SIZE] __attribute__((aligned(64)));

void sgxemu__xstate_enter_live(struct sgxemu_tcb *tcb, uint64_t xfrm)
{
	uint64_t mask = beyond_xfrm(xfrm), bv;
	uint32_t mxcsr;

	tcb->xstash_mask = 0;
	if (!mask)
		return;
	/* XSAVE changes only the XSTATE_BV bits it saves: start clean. */
	memset(tcb->xstash + 512, 0, 64);
	__asm__ volatile("xsave64 (%0)"
			 : : "r"(tcb->xstash), "a"((uint32_t)mask),
			   "d"((uint32_t)(mask >> 32))
			 : "memory");
	memcpy(&bv, tcb->xstash + 512, 8);
	/* With AVX (bit 2) in the mask XRSTOR loads MXCSR from the image
	 * (0 there): the current one is put back in the same statement,
	 * before any compiled code can run an SSE instruction. */
	__asm__ volatile("stmxcsr %0\n\t"
			 "xrstor64 (%1)\n\t"
			 "ldmxcsr %0"
			 : "+m"(mxcsr)
			 : "r"(xinit_image), "a"((uint32_t)mask),
			   "d"((uint32_t)(mask >> 32))
			 : "memory");
	tcb->xstash_mask = mask;
	tcb->xstash_bv = bv & mask;
}

void sgxemu__xstate_exit_frame(struct sgxemu_tcb *tcb, ucontext_t *uc)
{
	uint64_t mask = tcb->xstash_mask, bv;
	uint32_t size;
	uint8_t *fp = frame_open(tcb, uc, mask, &size, &bv);

	if (!fp)
		return;
	copy_features(fp, tcb->xstash, mask, tcb->xstash_bv, size);
	bv = (bv & ~mask) | tcb->xstash_bv;
	memcpy(fp + 512, &bv, 8);
}
