/* SPDX-License-Identifier: MIT */
/*
 * ERESUME without a trap, from the fast path (entry.S, enter.c).
 *
 * ERESUME loads a whole context: every register, RFLAGS, the XSAVE state
 * of the SSA frame, and (with no FSGSBASE in the kernel) the bases by
 * arch_prctl. The trap path gets a kernel signal frame to write all that
 * into, and its rt_sigreturn loads it. Here the frame is built as the
 * trap's would be, at the top of the thread's alternate stack, the same
 * code as the trap's (sgxemu__entry_commit) turns it into the enclave's
 * context, and the fast path's tail (entry.S .Lresume) makes the
 * rt_sigreturn: one system call where the trap path takes the #UD or #GP,
 * a signal delivery and that same rt_sigreturn.
 *
 * Every asynchronous signal stays blocked from before the frame is built
 * until the rt_sigreturn, which puts back the caller's mask as it loads
 * the enclave's context, as a handler's mask does on the trap path: so no
 * handler runs on the alternate stack under the frame, and no signal can
 * land between the commit of enclave mode and the enclave's first
 * instruction. The synchronous ones (a fault of the engine's own code)
 * are left unblocked, as the caller had them: blocked, the kernel would
 * kill the process for them instead of reporting them; the frame lies
 * 64 KiB below the stack's top, where such a signal's frame and its
 * handler's stack would go.
 *
 * The frame repeats what the kernel wrote in this thread's last AEX
 * frame (uc_flags, CS/SS, the XSAVE image's size and features), which is
 * the AEX that this ERESUME resumes from: until there is one, and for
 * the unusual cases (a caller single-stepped by a debugger, one on the
 * alternate stack, no room there), the trap path does the ERESUME.
 */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

#define FP_XSTATE_MAGIC1 0x46505853U
#define FP_XSTATE_MAGIC2 0x46505845U
#define EFL_TF 0x100
#define FRAME_GAP (64 * 1024)

/* Offsets in the kernel's _fpx_sw_bytes (at byte 464 of the image). */
#define SW_EXTENDED_SIZE 4
#define SW_XFEATURES	 8
#define SW_XSTATE_SIZE	 16

void sgxemu__resume_learn(struct sgxemu_tcb *tcb, const ucontext_t *uc)
{
	const uint8_t *fp = (const uint8_t *)uc->uc_mcontext.fpregs;
	uint32_t magic = 0;

	tcb->frame_uc_flags = uc->uc_flags;
	tcb->frame_csgsfs = (uint64_t)uc->uc_mcontext.gregs[REG_CSGSFS];
	if (fp)
		memcpy(&magic, fp + 464, 4);
	if (magic == FP_XSTATE_MAGIC1)
		memcpy(tcb->frame_fpx_sw, fp + 464, sizeof(tcb->frame_fpx_sw));
	else
		memset(tcb->frame_fpx_sw, 0, sizeof(tcb->frame_fpx_sw));
}

/* Signals blocked while the frame exists: all but the synchronous. */
static void async_signals(sigset_t *set)
{
	static const int sync[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
				    SIGSYS };

	sigfillset(set);
	for (size_t i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		sigdelset(set, sync[i]);
}

/* The kernel's rt_sigprocmask, not an interposed sigprocmask(). */
static int raw_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, 8);
}

/*
 * The live XSAVE state as the kernel writes it in a signal frame
 * (standard format, the software bytes at 464 and the second magic after
 * the image), at @fp, 64-byte aligned and @size bytes long.
 */
static void save_xstate(struct sgxemu_tcb *tcb, uint8_t *fp, uint32_t size)
{
	uint64_t features;

	memcpy(&features, tcb->frame_fpx_sw + SW_XFEATURES, 8);
	/* XSAVE writes no XSAVE header field but XSTATE_BV, and XRSTOR
	 * refuses an image whose other header bytes are not zero. */
	memset(fp + 512, 0, 64);
	__asm__ volatile("xsave64 (%0)"
			 : : "r"(fp), "a"((uint32_t)features),
			   "d"((uint32_t)(features >> 32))
			 : "memory");
	memcpy(fp + 464, tcb->frame_fpx_sw, sizeof(tcb->frame_fpx_sw));
	memcpy(fp + size, &(uint32_t){ FP_XSTATE_MAGIC2 }, 4);
}

struct sgxemu_tcb *sgxemu__resume_fast(struct sgxemu_tcb *tcb,
				       struct sgxemu_enclave *e,
				       const greg_t *regs, uint64_t next,
				       uint64_t rsp)
{
	uintptr_t top = (uintptr_t)tcb + SLOT_SIZE, fp_at, uc_at;
	struct sgxemu_sigsave save;
	uint32_t magic, xsize, ext;
	sigset_t async, old;
	ucontext_t *uc;
	stack_t ss;

	memcpy(&magic, tcb->frame_fpx_sw, 4);
	memcpy(&ext, tcb->frame_fpx_sw + SW_EXTENDED_SIZE, 4);
	memcpy(&xsize, tcb->frame_fpx_sw + SW_XSTATE_SIZE, 4);
	if (magic != FP_XSTATE_MAGIC1 || xsize < 576 || ext < xsize + 4 ||
	    (regs[REG_EFL] & EFL_TF) || sgxemu__on_altstack(tcb, rsp) ||
	    !sgxemu__altstack_for(tcb, rsp, &ss))
		return NULL;
	/* Below where the kernel would put the frame of a signal the
	 * engine's own code raised meanwhile (a synchronous one, not
	 * blocked), with room for its handler's stack. */
	fp_at = (top - FRAME_GAP - ext - 64) & ~(uintptr_t)63;
	uc_at = (fp_at - sizeof(ucontext_t)) & ~(uintptr_t)63;
	if (uc_at - 8 < (uintptr_t)ss.ss_sp + 4096)
		return NULL;

	async_signals(&async);
	if (raw_sigmask(SIG_BLOCK, &async, &old))
		return NULL;
	/* A failing ERESUME changes nothing: the trap path repeats it and
	 * reports the fault with a proper context. */
	if (sgx_eresume(sgxemu__cpu(), e->ctl, (uint64_t)regs[REG_RBX],
			(uint64_t)regs[REG_RCX], rsp, (uint64_t)regs[REG_RBP],
			&tcb->lp)) {
		raw_sigmask(SIG_SETMASK, &old, NULL);
		return NULL;
	}

	/* The frame of a trap at the trampoline's ENCLU (entry.S), whose
	 * RSP points at the caller's return address. */
	uc = (ucontext_t *)uc_at;
	memset(uc, 0, sizeof(*uc));
	uc->uc_flags = tcb->frame_uc_flags;
	uc->uc_stack = ss;
	memcpy(uc->uc_mcontext.gregs, regs, sizeof(uc->uc_mcontext.gregs));
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)sgxemu__enclu_trap;
	uc->uc_mcontext.gregs[REG_RSP] = (greg_t)(rsp - 8);
	uc->uc_mcontext.gregs[REG_CSGSFS] = (greg_t)tcb->frame_csgsfs;
	uc->uc_mcontext.fpregs = (fpregset_t)fp_at;
	uc->uc_sigmask = old;
	save_xstate(tcb, (uint8_t *)fp_at, xsize);

	save.fs = sgxemu__rdfsbase();
	save.gs = sgxemu__rdgsbase();
	save.selector = SEL_ALLOW;
	sgxemu__entry_commit(tcb, e, uc, &save, SGX_ERESUME, next, rsp);
	SGXEMU_COUNT(tcb, SGXEMU_C_FAST_ERESUME);
	tcb->resume_frame = (uint64_t)uc_at;
	return tcb;
}
