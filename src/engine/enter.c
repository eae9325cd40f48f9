/* SPDX-License-Identifier: MIT */
/*
 * The C half of the fast EENTER path (entry.S) and sgxemu_enter().
 *
 * The fast path does EENTER without a trap: this thread is in host mode
 * until the assembly flips the syscall selector, so everything here may
 * use TLS, take locks and make system calls (set-up on the first entry,
 * guard-mode mprotect).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "engine/engine.h"

_Static_assert(offsetof(struct sgxemu_run, tcs) == 0, "run");
_Static_assert(offsetof(struct sgxemu_run, leaf) == 8, "run");
_Static_assert(offsetof(struct sgxemu_run, exit_reason) == 12, "run");
_Static_assert(offsetof(struct sgxemu_run, exception) == 16, "run");
_Static_assert(offsetof(struct sgxemu_run, exception.address) == 24, "run");
_Static_assert(offsetof(struct sgxemu_run, regs) == 32, "run");
_Static_assert(offsetof(struct sgxemu_run, regs.rflags) == 32 + 128, "run");

/* Slots of the frame entry.S saves (lowest address first). */
enum { F_R15, F_R14, F_R13, F_R12, F_RBX, F_RBP, F_R11, F_R10, F_R9, F_R8,
       F_RDI, F_RSI, F_RDX, F_RCX, F_RAX, F_RFLAGS, F_RET, F_END };

#define EFL_TF 0x100

/*
 * The calling thread's TCB when TLS holds @tcb, which a thread made by a
 * raw clone() on its creator's TLS cannot tell from TLS: on the stack of
 * the thread that owns the TLS it is @tcb (thread.c learns that stack),
 * with no system call; on one of the engine's alternate stacks (a
 * program's handler) the slot it is in; elsewhere the kernel's alternate
 * stack, which the engine made the thread's own slot, says which (NULL: a
 * thread not set up yet, which the trap path sets up). The stack is learned at an entry
 * made off the engine's alternate stack: not from the engine's handlers,
 * nor from a program's handler they call, since learning allocates.
 */
static struct sgxemu_tcb *tcb_of_caller(struct sgxemu_tcb *tcb, uint64_t rsp)
{
	struct sgxemu_tcb *own;

	if (sgxemu__thread_on_own_stack(rsp))
		return tcb;
	/* A handler's call: its alternate stack is its thread's slot. */
	own = sgxemu__tcb_of_altstack(rsp);
	if (own)
		return own == tcb || own->foreign ? own : NULL;
	own = sgxemu__tcb_by_altstack();
	if (own != tcb)
		return own && own->foreign ? own : NULL;
	if (!sgxemu__on_altstack(tcb, rsp))
		sgxemu__thread_learn(true);
	return tcb;
}

/* The caller's registers at the ENCLU, in a trap frame's order. */
static struct sgxemu_tcb *resume(struct sgxemu_tcb *tcb,
				 struct sgxemu_enclave *e, const uint64_t *f,
				 uint64_t rsp)
{
	greg_t g[NGREG];

	memset(g, 0, sizeof(g));
	g[REG_R8] = f[F_R8];   g[REG_R9] = f[F_R9];   g[REG_R10] = f[F_R10];
	g[REG_R11] = f[F_R11]; g[REG_R12] = f[F_R12]; g[REG_R13] = f[F_R13];
	g[REG_R14] = f[F_R14]; g[REG_R15] = f[F_R15]; g[REG_RDI] = f[F_RDI];
	g[REG_RSI] = f[F_RSI]; g[REG_RBP] = f[F_RBP]; g[REG_RBX] = f[F_RBX];
	g[REG_RDX] = f[F_RDX]; g[REG_RAX] = f[F_RAX]; g[REG_RCX] = f[F_RCX];
	g[REG_EFL] = f[F_RFLAGS];
	return sgxemu__resume_fast(tcb, e, g, f[F_RET], rsp);
}

struct sgxemu_tcb *sgxemu__enter_fast(uint64_t *f, uint64_t tcs)
{
	struct sgxemu_tcb *tcb;
	struct sgxemu_enclave *e;
	struct sgx_lp *lp;
	uint64_t rsp = (uint64_t)(uintptr_t)(f + F_END);
	uint64_t rflags;

	if (!__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		return NULL;
	if ((tcb = sgxemu__aep_stack_owner(rsp))) {
		/* An AEP's trampoline after an AEX (aex.c): the thread is
		 * the stack's, the caller's RSP is URSP. Only ERESUME, whose
		 * way into the enclave leaves this stack; anything else
		 * traps at the program's ENCLU, on URSP. */
		if ((uint32_t)f[F_RAX] != SGX_ERESUME)
			return NULL;
		rsp = tcb->aep_ursp;
		goto leaf;
	}
	/* Set the thread up here, outside any signal handler, even when
	 * the trap path does the entry: it needs the alternate stack. */
	tcb = sgxemu__tcb_self();
	if (!tcb && !(tcb = sgxemu__tcb_prepare()))
		return NULL;
	/* A thread made by a raw clone() on its creator's TLS finds the
	 * creator's TCB there (possible only with sites rewritten by
	 * enclu_patch.c; vDSO callers are libc threads). */
	if (sgxemu__enclu_patched_any() && !(tcb = tcb_of_caller(tcb, rsp)))
		return NULL;
leaf:
	if ((uint32_t)f[F_RAX] != SGX_EENTER &&
	    (uint32_t)f[F_RAX] != SGX_ERESUME)
		return NULL;
	e = sgxemu__encl_find(tcs);
	if (!e || sgxemu__map_refused(e, tcs))
		return NULL;
	/* ERESUME loads a whole context, XSAVE state included: a signal
	 * frame's rt_sigreturn is the tool for that (resume.c). */
	if ((uint32_t)f[F_RAX] == SGX_ERESUME) {
		struct sgxemu_tcb *t = resume(tcb, e, f, rsp);

		/* Off the AEP stack from here on, with every asynchronous
		 * signal blocked until then (resume.c). */
		if (t)
			t->aep_stack_busy = false;
		return t;
	}
	/* Called from a handler on this thread's alternate stack: its
	 * frames stay out of the way of the signal frames enclave mode
	 * takes there, as on the trap path (sgxemu__altstack_fit). */
	if (sgxemu__on_altstack(tcb, rsp) &&
	    !sgxemu__altstack_fit_live(tcb, rsp))
		return NULL;
	lp = &tcb->lp;
	/* A failing EENTER changes nothing; the trap path repeats it and
	 * reports the fault with a proper context. */
	if (sgx_eenter(sgxemu__cpu(), e->ctl, tcs, f[F_RCX], rsp, f[F_RBP], lp))
		return NULL;
	tcb->encl = e;
	tcb->in_enclave = true;
	sgxemu__kick_enter(tcb, e);
	sgxemu__tsc_enter();
	tcb->host_fs = sgxemu__rdfsbase();
	tcb->host_gs = sgxemu__host_gs(tcb, sgxemu__rdgsbase());
	tcb->enc_fs = lp->fsbase;
	tcb->enc_gs = lp->gsbase;
	rflags = f[F_RFLAGS];
	if (!(lp->tcs->flags & SGX_TCS_DBGOPTIN))
		rflags &= ~(uint64_t)EFL_TF;
	tcb->entry_rip = lp->rip;
	tcb->entry_rax = lp->cssa;
	tcb->entry_rcx = f[F_RET];
	tcb->entry_rsp = rsp;
	tcb->entry_rflags = rflags;
	sgxemu__guard_entry(tcb);
	f[F_RCX] = f[F_RET];
	f[F_RAX] = lp->cssa;
	f[F_RFLAGS] = rflags;
	f[F_RET] = lp->rip;
	SGXEMU_COUNT(tcb, SGXEMU_C_FAST_EENTER);
	/* Last: nothing after it may use the features it initialises. */
	sgxemu__xstate_enter_live(tcb, lp->secs->attributes.xfrm);
	return tcb;
}

int sgxemu_enter(struct sgxemu_run *run)
{
	struct sgxemu_run *prev;
	struct sgxemu_tcb *tcb;
	int ret;

	if (!run || (run->leaf != SGX_EENTER && run->leaf != SGX_ERESUME))
		return -EINVAL;
	ret = sgxemu_platform_init();
	if (ret)
		return ret;
	tcb = sgxemu__tcb_prepare();
	if (!tcb)
		return -sgxemu__tcb_errno();
	if (!sgxemu__encl_find(run->tcs))
		return -EFAULT;
	run->exit_reason = SGXEMU_EXIT_NONE;
	/* Only the arithmetic flags and DF are the caller's to choose. */
	run->regs.rflags = (run->regs.rflags & 0x8d5) | 0x2;
	prev = tcb->api_run;
	tcb->api_run = run;
	sgxemu__api_enter(run);
	tcb->api_run = prev;
	if (run->exit_reason == SGXEMU_EXIT_EXCEPTION) {
		struct sgxemu_regs *r = &run->regs;

		/* RAX, RBX, RCX, RBP, RSP were stored by the fixup. */
		r->rdx = r->rsi = r->rdi = 0;
		r->r8 = r->r9 = r->r10 = r->r11 = 0;
		r->r12 = r->r13 = r->r14 = r->r15 = 0;
	}
	return 0;
}
