/* SPDX-License-Identifier: MIT */
/*
 * The native engine's assembly: what cannot be written in C because it
 * runs with the enclave's FS base, with syscalls blocked, or with register
 * contents that belong to someone else.
 */
#include "engine/engine.h"

#define ENCLU	.byte 0x0f, 0x01, 0xd7
#define SGXEMU_EXIT_EEXIT_	1
#define SGXEMU_EXIT_EXCEPTION_	2

/* Offsets in struct sgxemu_run (checked by _Static_assert in enter.c). */
#define RUN_TCS		0
#define RUN_LEAF	8
#define RUN_EXIT	12
#define RUN_VECTOR	16
#define RUN_ERRCD	20
#define RUN_ADDR	24
#define RUN_REGS	32
#define R_RAX		(RUN_REGS + 0)
#define R_RBX		(RUN_REGS + 8)
#define R_RCX		(RUN_REGS + 16)
#define R_RDX		(RUN_REGS + 24)
#define R_RSI		(RUN_REGS + 32)
#define R_RDI		(RUN_REGS + 40)
#define R_RBP		(RUN_REGS + 48)
#define R_RSP		(RUN_REGS + 56)
#define R_R8		(RUN_REGS + 64)
#define R_R9		(RUN_REGS + 72)
#define R_R10		(RUN_REGS + 80)
#define R_R11		(RUN_REGS + 88)
#define R_R12		(RUN_REGS + 96)
#define R_R13		(RUN_REGS + 104)
#define R_R14		(RUN_REGS + 112)
#define R_R15		(RUN_REGS + 120)
#define R_RFLAGS	(RUN_REGS + 128)

	.text

/*
 * sgxemu_enclu_entry: ENCLU[EENTER/ERESUME] for host code, reached by
 * `call`. In: RAX = leaf, RBX = TCS, RCX = AEP, [RSP] = return address R.
 *
 * The C half (sgxemu__enter_fast) does every check and state change of
 * EENTER while this thread is still plainly in host mode, and returns the
 * TCB (or NULL: anything unusual — ERESUME, a fault of EENTER, a thread
 * that cannot be set up — takes the slow path, a real ENCLU that traps
 * into the SIGILL handler, which has a ucontext to work with).
 *
 * The saved frame (lowest address first; enter.c names its slots):
 *   r15 r14 r13 r12 rbx rbp r11 r10 r9 r8 rdi rsi rdx rcx(AEP) rax(leaf)
 *   rflags R
 * (the callee-saved registers too, so that the C half sees every register
 * the ENCLU would have: an ERESUME builds its trap frame from them).
 * On success the C half of an EENTER rewrote three slots: rcx := R (the
 * enclave's RCX), rax := CSSA, R := OENTRY, so that the last instructions
 * are a few pops and a `ret` into the enclave with RSP back at the
 * caller's value. An ERESUME's C half leaves TCB_RESUME_FRAME set: the
 * frame an rt_sigreturn loads (resume.c), at .Lresume below.
 */
	.globl	sgxemu_enclu_entry
	.type	sgxemu_enclu_entry, @function
	.hidden	sgxemu__enclu_entry_local
sgxemu_enclu_entry:
sgxemu__enclu_entry_local:
	pushfq
	push	%rax
	push	%rcx
	push	%rdx
	push	%rsi
	push	%rdi
	push	%r8
	push	%r9
	push	%r10
	push	%r11
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	%rsp, %rbp
	and	$-16, %rsp		/* the C ABI wants an aligned stack */
	cld				/* ... and DF clear; popfq restores it */
	mov	%rbp, %rdi		/* frame */
	mov	%rbx, %rsi		/* TCS */
	call	sgxemu__enter_fast
	test	%rax, %rax
	jz	1f
	cmpb	$0, sgxemu__have_fsgsbase(%rip)
	jne	1f
	/*
	 * No FSGSBASE: the enclave's bases by arch_prctl, before the commit
	 * and so still in host mode (a signal here is the host's, and the
	 * stub saves and puts back whatever FS and GS hold). Every register
	 * the system calls clobber is reloaded from the frame below.
	 */
	mov	%rax, %rdx			/* TCB */
	.globl	sgxemu__switch_start
	.hidden	sgxemu__switch_start
sgxemu__switch_start:
	mov	TCB_ENC_GS(%rdx), %rsi
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	14f
	mov	$1, %ecx			/* the kernel's copy too */
	call	sgxemu__gs_set
	jmp	2f
14:	cmp	TCB_HOST_GS(%rdx), %rsi
	je	2f
	mov	$158, %eax			/* arch_prctl */
	mov	$0x1001, %edi			/* ARCH_SET_GS */
	syscall
2:	mov	TCB_ENC_FS(%rdx), %rsi
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	15f
	/*
	 * Untracked FSGSBASE: as on the stub's way back into enclave mode,
	 * the kernel's copy (what a preemption restores) is the base the
	 * enclave wrote last if it wrote one, which runtimes write again
	 * after each entry (Gramine, at each OCALL's return), and the
	 * register the architectural one (fsgsbase.c).
	 */
	mov	TCB_FS_HINT(%rdx), %rax
	test	%rax, %rax
	jz	15f
	mov	%rax, %rsi
15:	mov	$158, %eax
	mov	$0x1002, %edi			/* ARCH_SET_FS */
	syscall
	mov	TCB_ENC_FS(%rdx), %rsi
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	16f
	wrfsbase %rsi
16:	mov	%rdx, %rax
1:	lea	40(%rbp), %rsp		/* past r15..rbx: unchanged */
	pop	%rbp
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rdi
	pop	%rsi
	pop	%rdx
	test	%rax, %rax
	jz	.Lslow
	cmpq	$0, TCB_RESUME_FRAME(%rax)	/* popfq restores flags */
	jne	.Lresume
	/*
	 * Commit. Once the selector says BLOCK this thread is in enclave
	 * mode as far as the signal handlers are concerned; a signal that
	 * lands between here and the `ret` is handled by completing these
	 * instructions in the ucontext (the "roll forward" in aex.c), using
	 * the values the C half left in the TCB.
	 */
	movb	$SEL_BLOCK, TCB_SELECTOR(%rax)
	.globl	sgxemu__commit_start
	.hidden	sgxemu__commit_start
sgxemu__commit_start:
	cmpb	$0, sgxemu__have_fsgsbase(%rip)	/* popfq restores flags */
	je	1f
	mov	TCB_ENC_FS(%rax), %rcx
	wrfsbase %rcx
	mov	TCB_ENC_GS(%rax), %rcx
	wrgsbase %rcx
1:	pop	%rcx			/* R: the enclave's RCX */
	pop	%rax			/* CSSA */
	popfq
	.globl	sgxemu__commit_end
	.hidden	sgxemu__commit_end
sgxemu__commit_end:
	ret				/* to OENTRY, RSP = caller's RSP */

.Lslow:
	/* Every register is as the caller left it again. */
	pop	%rcx
	pop	%rax
	popfq
	/*
	 * A real ENCLU: it faults here (#UD on AMD, #GP or #PF on Intel) and
	 * the handler emulates it (classify.c). It
	 * knows this address: the instruction that ENCLU stands for is the
	 * caller's `call`, its return point is [RSP], the caller's RSP is
	 * RSP + 8.
	 */
	.globl	sgxemu__enclu_trap
	.hidden	sgxemu__enclu_trap
sgxemu__enclu_trap:
	ENCLU
	ud2				/* never resumed here */

	/*
	 * ERESUME without a trap: the C half has done the leaf on a frame
	 * it built as the trap's would be (resume.c), at the top of this
	 * thread's alternate stack, with every asynchronous signal blocked
	 * until the rt_sigreturn, which loads the enclave's registers, its
	 * XSAVE state and the caller's signal mask at once. So nothing can
	 * see the thread between here and the enclave: no roll forward as
	 * for EENTER's commit. The bases are loaded already without
	 * FSGSBASE (above); with it, here. The restorer's rt_sigreturn is
	 * exempt from syscall user dispatch, as for the handlers.
	 */
.Lresume:
	mov	TCB_RESUME_FRAME(%rax), %rsp
	movq	$0, TCB_RESUME_FRAME(%rax)
	cmpb	$0, sgxemu__have_fsgsbase(%rip)
	je	1f
	mov	TCB_ENC_FS(%rax), %rcx
	wrfsbase %rcx
	mov	TCB_ENC_GS(%rax), %rcx
	wrgsbase %rcx
1:	movb	$SEL_BLOCK, TCB_SELECTOR(%rax)
	jmp	sgxemu__restorer
	.size	sgxemu_enclu_entry, . - sgxemu_enclu_entry

/*
 * The stub every real handler of the engine points at (SA_SIGINFO,
 * SA_ONSTACK, every signal blocked while it runs).
 * In: RDI = signo, RSI = siginfo, RDX = ucontext, [RSP] = our restorer.
 *
 * A thread that has entered an enclave runs its handlers on its alternate
 * stack, at the top of its slot; the TCB is at the bottom of the slot. If
 * RSP is outside the slot region the thread has never been set up and FS
 * is the host's already.
 *
 * With a TCB: first the syscall selector goes to ALLOW (any syscall with
 * BLOCK would raise SIGSYS), then the interrupted FS/GS bases are saved
 * and the host's loaded, so that C code may use TLS. The C handler may
 * rewrite the saved {gs, fs, selector}; they are put back last, and the
 * `ret` goes to sgxemu__restorer, whose rt_sigreturn is exempt from
 * syscall user dispatch.
 */
	.globl	sgxemu__sig_entry
	.hidden	sgxemu__sig_entry
	.type	sgxemu__sig_entry, @function
sgxemu__sig_entry:
	mov	sgxemu__alt_base(%rip), %rax
	mov	%rsp, %rcx
	sub	%rax, %rcx
	cmp	sgxemu__alt_len(%rip), %rcx
	jae	.Lno_tcb
	and	$-SLOT_SIZE, %rcx
	add	%rax, %rcx
	mov	%rcx, %rbx			/* TCB */
	movzbl	TCB_SELECTOR(%rbx), %eax
	movb	$SEL_ALLOW, TCB_SELECTOR(%rbx)
	push	%rax				/* save.selector */
	mov	%rdi, %r12
	mov	%rsi, %r13
	mov	%rdx, %r14
	cmpb	$0, sgxemu__have_fsgsbase(%rip)
	je	1f
	rdfsbase %rax
	push	%rax				/* save.fs */
	rdgsbase %rax
	push	%rax				/* save.gs */
	mov	TCB_HOST_FS(%rbx), %rax
	wrfsbase %rax
	mov	TCB_HOST_GS(%rbx), %rax
	wrgsbase %rax
	jmp	2f
1:	/*
	 * No FSGSBASE: arch_prctl, each one a system call, so as few as
	 * the state allows. Interrupted in enclave mode, FS and GS hold the
	 * TCS's bases (enclave code cannot change them without FSGSBASE or
	 * system calls); in host mode they are read. The handler gets the
	 * host's FS; GS is left as it is (see TCB_HANDLER_GS below): the
	 * program's handlers, which run from here and may keep their thread
	 * data in GS (Gramine's loader), get the host's from the C half.
	 */
	sub	$16, %rsp
	cmpq	$SEL_BLOCK, 16(%rsp)		/* save.selector */
	jne	5f
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	10f
	/* The instructions run but the kernel does not track them: the
	 * enclave may have written its bases, so read the live ones. */
	rdfsbase %rax
	/* A base the enclave wrote itself (not the one the engine loaded)
	 * is the hint for its next entry. */
	cmp	TCB_ENC_FS(%rbx), %rax
	je	12f
	mov	%rax, TCB_FS_HINT(%rbx)
12:	mov	%rax, TCB_ENC_FS(%rbx)
	rdgsbase %rax
	mov	%rax, TCB_ENC_GS(%rbx)
	mov	TCB_ENC_FS(%rbx), %rcx
	mov	%rcx, 8(%rsp)
	mov	%rax, (%rsp)
	jmp	6f
10:	mov	TCB_ENC_FS(%rbx), %rax
	mov	%rax, 8(%rsp)
	mov	TCB_ENC_GS(%rbx), %rax
	mov	%rax, (%rsp)
	/* GS stays the enclave's (TCB_HANDLER_GS below). */
	jmp	6f
5:	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	13f
	/* The instructions run here: reading costs no system call (the
	 * live values are the kernel's too, unless code wrote them). */
	rdfsbase %rax
	mov	%rax, 8(%rsp)
	rdgsbase %rax
	mov	%rax, (%rsp)
	jmp	6f
13:	mov	$158, %eax			/* arch_prctl */
	mov	$0x1003, %edi			/* ARCH_GET_FS */
	lea	8(%rsp), %rsi
	syscall
	mov	$158, %eax
	mov	$0x1004, %edi			/* ARCH_GET_GS */
	mov	%rsp, %rsi
	syscall
6:	mov	TCB_HOST_FS(%rbx), %rsi
	cmp	8(%rsp), %rsi
	je	2f
	mov	$158, %eax
	mov	$0x1002, %edi			/* ARCH_SET_FS */
	syscall
2:
	mov	%r12, %rdi
	mov	%r13, %rsi
	mov	%r14, %rdx
	/*
	 * The bases loaded now, to skip rewriting them unchanged below. GS
	 * is the interrupted one without FSGSBASE, in enclave mode too: the
	 * engine's C code does not use GS, so it is the host's only once a
	 * program's handler is to run (sgxemu__handler_gs_host, which says
	 * so in TCB_HANDLER_GS) or the return is to host mode, and an
	 * interruption the engine completes inside enclave mode (EACCEPT,
	 * the EAUG of a fault) writes no GS at all.
	 */
	mov	(%rsp), %r13			/* GS */
	cmpb	$0, sgxemu__have_fsgsbase(%rip)
	je	9f
	mov	TCB_HOST_GS(%rbx), %r13		/* loaded above */
9:	mov	TCB_HOST_FS(%rbx), %r14		/* FS */
	mov	%r13, TCB_HANDLER_GS(%rbx)
	mov	%rbx, %rcx			/* tcb */
	mov	%rsp, %r8			/* save */
	mov	%rsp, %r15
	and	$-16, %rsp
	call	sgxemu__signal
	mov	%r15, %rsp
	mov	TCB_HANDLER_GS(%rbx), %r13
	cmpb	$0, sgxemu__have_fsgsbase(%rip)
	je	3f
	pop	%rax
	wrgsbase %rax
	pop	%rax
	wrfsbase %rax
	jmp	4f
3:
	mov	(%rsp), %rsi
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	14f
	/* Into enclave mode the kernel's copy must be the enclave's GS
	 * too, even where the live base is already. */
	xor	%ecx, %ecx
	cmpq	$SEL_BLOCK, 16(%rsp)
	sete	%cl
	cmp	%r13, %rsi
	jne	15f
	test	%ecx, %ecx
	jz	7f
	cmp	TCB_KERN_GS(%rbx), %rsi
	je	7f
15:	mov	%rbx, %rdx
	call	sgxemu__gs_set
	jmp	7f
14:	cmp	%r13, %rsi
	je	7f
	mov	$158, %eax
	mov	$0x1001, %edi			/* ARCH_SET_GS */
	syscall
	/* Live now, for the handler this one interrupted, if any. */
7:	mov	(%rsp), %rax
	mov	%rax, TCB_HANDLER_GS(%rbx)
	mov	8(%rsp), %rsi
	cmpb	$0, sgxemu__fsgsbase_unmanaged(%rip)
	je	11f
	cmpq	$SEL_BLOCK, 16(%rsp)
	jne	11f
	mov	TCB_FS_HINT(%rbx), %rax
	test	%rax, %rax
	jz	11f
	cmp	%rax, %rsi
	je	11f
	/*
	 * Into enclave mode on an untracked FSGSBASE, with an architectural
	 * FS (the TCS's, at EENTER) other than the one the enclave last ran
	 * with: the register gets the architectural value, the kernel (which
	 * restores its own copy at every context switch) the one the enclave
	 * is about to write again, as runtimes do after each entry
	 * (fsgsbase.c).
	 */
	mov	%rax, %rsi
	mov	$158, %eax
	mov	$0x1002, %edi			/* ARCH_SET_FS */
	syscall
	mov	8(%rsp), %rax
	wrfsbase %rax
	jmp	8f
11:	cmp	%r14, %rsi
	je	8f
	mov	$158, %eax
	mov	$0x1002, %edi			/* ARCH_SET_FS */
	syscall
8:	add	$16, %rsp
4:
	pop	%rax
	movb	%al, TCB_SELECTOR(%rbx)		/* BLOCK again if returning
						 * into enclave mode */
	ret					/* to sgxemu__restorer */
.Lno_tcb:
	/* FS is the host's: plain C (keeps the restorer as return). */
	jmp	sgxemu__signal_plain
	.size	sgxemu__sig_entry, . - sgxemu__sig_entry

/*
 * sgxemu__gs_set, for untracked FSGSBASE only (fsgsbase.c, sgxemu__host_gs): GS
 * base := RSI. The kernel's copy, which it loads at every context switch,
 * follows by arch_prctl where ECX = 1 (enclave mode, or a host GS the
 * program set) and it differs; a host GS of 0 with ECX = 0 is written to
 * the register alone. In: RDX = TCB. Clobbers RAX, RCX, RDI, R11.
 */
	.globl	sgxemu__gs_set
	.hidden	sgxemu__gs_set
	.type	sgxemu__gs_set, @function
sgxemu__gs_set:
	cmp	TCB_KERN_GS(%rdx), %rsi
	je	1f
	test	%rsi, %rsi
	jnz	2f
	test	%ecx, %ecx
	jz	1f
2:	mov	$158, %eax			/* arch_prctl */
	mov	$0x1001, %edi			/* ARCH_SET_GS */
	syscall
	test	%rax, %rax
	jnz	3f
	mov	%rsi, TCB_KERN_GS(%rdx)
	ret
1:	wrgsbase %rsi
3:	ret
	.globl	sgxemu__gs_set_end
	.hidden	sgxemu__gs_set_end
sgxemu__gs_set_end:
	.size	sgxemu__gs_set, . - sgxemu__gs_set

/*
 * The restorer of every engine handler, and the whole range exempt from
 * syscall user dispatch: the sigreturn that goes back into enclave mode
 * runs with the selector at BLOCK. The kernel tests the address after the
 * syscall instruction, so the range ends past it.
 */
	.p2align 4
	.globl	sgxemu__restorer
	.hidden	sgxemu__restorer
sgxemu__restorer:
	mov	$15, %eax			/* rt_sigreturn */
	syscall
	.globl	sgxemu__restorer_end
	.hidden	sgxemu__restorer_end
sgxemu__restorer_end:
	ud2
	.p2align 4

/*
 * void sgxemu__api_enter(struct sgxemu_run *run): the C API's way in,
 * built like the Linux vDSO entry: load the caller's registers, then an
 * "ENCLU" (the call of the fast path) at sgxemu__api_aep, which is also
 * the AEP. After an AEX caused by a signal the thread continues at the
 * AEP with RAX = ERESUME, so the same call resumes the enclave.
 *
 * EEXIT to sgxemu__api_eexit: the EEXIT handler has already stored the
 * enclave's registers in the run and put RSP back to its value at the
 * call. Exceptions go to sgxemu__api_fixup (registered as a fixup for
 * the AEP) with RSP = URSP, the same value.
 */
	.globl	sgxemu__api_enter
	.hidden	sgxemu__api_enter
	.type	sgxemu__api_enter, @function
sgxemu__api_enter:
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	push	%rdi				/* run, at 8(%rsp) below */
	sub	$8, %rsp
	pushq	R_RFLAGS(%rdi)
	popfq
	mov	R_RDX(%rdi), %rdx
	mov	R_RSI(%rdi), %rsi
	mov	R_RBP(%rdi), %rbp
	mov	R_R8(%rdi), %r8
	mov	R_R9(%rdi), %r9
	mov	R_R10(%rdi), %r10
	mov	R_R11(%rdi), %r11
	mov	R_R12(%rdi), %r12
	mov	R_R13(%rdi), %r13
	mov	R_R14(%rdi), %r14
	mov	R_R15(%rdi), %r15
	mov	RUN_LEAF(%rdi), %eax
	mov	RUN_TCS(%rdi), %rbx
	lea	sgxemu__api_aep(%rip), %rcx
	mov	R_RDI(%rdi), %rdi
	.globl	sgxemu__api_aep
	.hidden	sgxemu__api_aep
sgxemu__api_aep:
	call	sgxemu__enclu_entry_local
	.globl	sgxemu__api_eexit
	.hidden	sgxemu__api_eexit
sgxemu__api_eexit:
	mov	8(%rsp), %rdi
	movl	$SGXEMU_EXIT_EEXIT_, RUN_EXIT(%rdi)
	movl	$4, RUN_LEAF(%rdi)
	jmp	.Lapi_out

	.globl	sgxemu__api_fixup
	.hidden	sgxemu__api_fixup
sgxemu__api_fixup:
	/* RDI = vector, RSI = error code, RDX = address, RAX = leaf. */
	mov	8(%rsp), %r8
	movl	$SGXEMU_EXIT_EXCEPTION_, RUN_EXIT(%r8)
	movl	%eax, RUN_LEAF(%r8)
	movl	%edi, RUN_VECTOR(%r8)
	movl	%esi, RUN_ERRCD(%r8)
	mov	%rdx, RUN_ADDR(%r8)
	mov	%rax, R_RAX(%r8)
	mov	%rbx, R_RBX(%r8)
	mov	%rcx, R_RCX(%r8)
	mov	%rbp, R_RBP(%r8)
	mov	%rsp, R_RSP(%r8)
.Lapi_out:
	cld
	add	$16, %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret
	.size	sgxemu__api_enter, . - sgxemu__api_enter


/*
 * The trap probe (probe.c): one ENCLU, whose fault the probe's handler
 * skips. It needs a fixed address for the handler to recognise and the
 * exact registers ENCLU reads. In: EDI = leaf, RSI = RBX operand.
 */
	.text
	.globl	sgxemu__probe_enclu
	.hidden	sgxemu__probe_enclu
	.type	sgxemu__probe_enclu, @function
sgxemu__probe_enclu:
	push	%rbx
	mov	%edi, %eax
	mov	%rsi, %rbx
	xor	%ecx, %ecx
	.globl	sgxemu__probe_enclu_insn
	.hidden	sgxemu__probe_enclu_insn
sgxemu__probe_enclu_insn:
	ENCLU
	pop	%rbx
	ret
	.size	sgxemu__probe_enclu, . - sgxemu__probe_enclu

	.section .note.GNU-stack, "", @progbits
