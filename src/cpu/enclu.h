/* SPDX-License-Identifier: MIT */
/*
 * The enclave-mode half of the processor: EENTER, ERESUME, EEXIT and AEX as
 * state changes of the TCS and its SSA frames (sgx-facts.md §1.10, §1.11,
 * §4.16-4.19), and the dispatch of the other ENCLU leaves.
 *
 * These functions decide what the architecture says; the engine
 * (src/engine/) moves registers between them and the real CPU. They are
 * lock-free and allocation-free: the engine calls them from signal
 * handlers of a thread that has just left enclave mode.
 */
#ifndef SGXEMU_CPU_ENCLU_H
#define SGXEMU_CPU_ENCLU_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

/* What one logical processor holds about the enclave it is in. */
struct sgx_lp {
	struct sgx_encl_ctl *ctl;	/* current enclave */
	struct sgx_secs *secs;		/* its SECS (EPC) */
	struct sgx_tcs *tcs;		/* the TCS (EPC) */
	uint64_t tcs_linaddr;
	uint64_t aep;			/* AEP recorded by EENTER/ERESUME */
	uint64_t entry_epoch;		/* for sgx_track_exit */
	/* Set by EENTER/ERESUME for the engine. */
	uint64_t rip;			/* where enclave execution starts */
	uint64_t fsbase, gsbase;
	uint32_t cssa;			/* EENTER: CSSA (the new RAX) */
	bool     notify;		/* ERESUME entered at OENTRY as EENTER
					 * does (an AEX notification) */
	struct sgx_gprsgx *gpr;		/* ERESUME: GPRSGX to restore */
	uint64_t xsave;			/* ERESUME: linear address of the
					 * frame's XSAVE area */
	uint64_t ursp, urbp;		/* AEX: the synthetic RSP/RBP */
};

/* XSAVE layout of this CPU (CPUID leaf 0xD), filled once at start-up. */
struct sgx_xsave_layout {
	uint32_t offset[64];
	uint32_t size[64];
	uint64_t align;		/* 64-byte aligned when compacted (ECX[1]) */
};
extern struct sgx_xsave_layout sgx_xsave_layout;
void sgx_xsave_layout_init(void);

/*
 * EENTER of the TCS at @tcs (linear) in enclave @ctl with AEP @aep and the
 * outside RSP/RBP @rsp/@rbp. 0 (lp filled, TCS active, CSSA frame's
 * URSP/URBP written) or SGX_GP / SGX_PF.
 */
int sgx_eenter(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl, uint64_t tcs,
	       uint64_t aep, uint64_t rsp, uint64_t rbp, struct sgx_lp *lp);

/*
 * ERESUME: the same checks with CSSA > 0 and frame CSSA-1 (its XSAVE
 * header is validated). When that frame asks for an AEX notification
 * (AEX-Notify) ERESUME is an EENTER instead: lp->notify is set and lp is
 * filled as sgx_eenter fills it. Otherwise CSSA is decremented, lp->gpr and
 * lp->xsave point at the frame to restore, lp->fsbase/gsbase are the
 * frame's. The outside RSP/RBP are recorded in that frame for the next
 * AEX (see enclu.c). 0, SGX_GP or SGX_PF.
 */
int sgx_eresume(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl, uint64_t tcs,
		uint64_t aep, uint64_t rsp, uint64_t rbp, struct sgx_lp *lp);

/* EEXIT (the target checks are the engine's): leave enclave mode. */
void sgx_eexit(struct sgx_cpu *cpu, struct sgx_lp *lp);

/* An event that causes an AEX. */
struct sgx_aex_event {
	struct sgx_gprsgx gpr;		/* GPRs, RFLAGS, RIP, FS/GS bases */
	bool     exception;		/* false: interrupt / signal */
	uint8_t  vector;
	uint32_t error_code;
	uint64_t maddr;			/* #PF: full linear address */
	/* Standard-format XSAVE image of the interrupted state, or NULL. */
	const uint8_t *xsave;
	uint32_t xsave_size;
};

/*
 * AEX: save the state into SSA frame CSSA (GPRSGX, EXITINFO, MISC EXINFO,
 * XSAVE per XFRM), CSSA+1, TCS inactive, leave enclave mode.
 * lp->ursp/urbp receive the synthetic RSP/RBP.
 */
void sgx_aex(struct sgx_cpu *cpu, struct sgx_lp *lp,
	     const struct sgx_aex_event *ev);

/*
 * ENCLU leaves other than EENTER/ERESUME/EEXIT executed in enclave mode.
 * @regs: RAX (leaf), RBX, RCX, RDX in, RAX out. Returns 0 (the leaf
 * completed: *rax_out and *zf_out give RAX and ZF) or SGX_FAULT(vector).
 */
int sgx_enclu_user(struct sgx_cpu *cpu, struct sgx_lp *lp, uint64_t rax,
		   uint64_t rbx, uint64_t rcx, uint64_t rdx,
		   uint64_t *rax_out, bool *zf_out);

/*
 * Copy between ordinary memory and enclave pages by linear address,
 * through the processor's view of the EPC (the enclave's own mapping may
 * be inaccessible). Pages that are not there read as zero and are not
 * written.
 */
void sgx_encl_read(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		   uint64_t linaddr, void *buf, size_t n);
void sgx_encl_write(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		    uint64_t linaddr, const void *buf, size_t n);

/*
 * Validate a standard-format XSAVE header (ERESUME): XSTATE_BV a subset of
 * @xfrm, XCOMP_BV and the reserved bytes zero.
 */
bool sgx_xsave_header_ok(const uint8_t *xsave, uint64_t xfrm);

#endif /* SGXEMU_CPU_ENCLU_H */
