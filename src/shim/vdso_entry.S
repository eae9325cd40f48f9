/* SPDX-License-Identifier: MIT */
/*
 * __vdso_sgx_enter_enclave as the published vDSO image exports it (the
 * image's trampoline jumps to sgxemu_vdso_sgx_enter_enclave).
 *
 * Two ABIs, told apart at every call (a process may hold a v22 enclave
 * and a mainline one at once): the first stack argument is a TCS, inside
 * an ELRANGE, for v22, and a struct sgx_enclave_run in the program's own
 * memory for mainline (sgxemu_vdso_seed_call in vdso.c).
 * SGXEMU_VDSO_ABI forces one (sgxemu_vdso_abi: 0 per call, 1 seed, 2
 * mainline).
 *
 *   mainline (Linux >= 5.11, linux-driver-facts.md §10):
 *     int fn(rdi, rsi, rdx, unsigned int function, r8, r9,
 *            struct sgx_enclave_run *run)
 *   seed (v22, seed 004):
 *     EAX = leaf, 8(%rsp) = tcs, 0x10(%rsp) = exception info,
 *     0x18(%rsp) = callback; every other register passes through.
 *
 * ENCLU itself is #UD on this machine, so where the kernel's vDSO executes
 * ENCLU these functions call the engine's sgxemu_enclu_entry through the
 * pointer sgxemu_vdso_enclu, with ENCLU's register contract (RAX = leaf,
 * RBX = TCS, RCX = AEP). The AEP is the call instruction itself, as the
 * kernel's AEP is its ENCLU: after an asynchronous exit the engine
 * continues there with RAX = ERESUME and the call resumes the enclave.
 *
 * Exceptions: the shim registers <abi>_aep -> <abi>_fixup with the
 * engine, which then continues at the fixup label (instead of raising a
 * signal) with RDI = vector, RSI = error code, RDX = address, RAX = the
 * leaf, and RSP/RBP as they were at the call: what Linux's vDSO exception
 * table does for its ENCLU.
 *
 * All symbols are hidden: only the image's trampoline reaches them, and
 * RIP-relative references need no GOT (they must not clobber registers
 * that pass through to the enclave).
 */

#define EENTER	2
#define ERESUME	3
#define EEXIT	4
#define EINVAL	22
#define EFAULT	14

/* struct sgx_enclave_run (mainline) */
#define RUN_TCS			0
#define RUN_FUNCTION		8
#define RUN_VECTOR		12
#define RUN_ERROR_CODE		14
#define RUN_ADDR		16
#define RUN_USER_HANDLER	24
#define RUN_RESERVED		40
#define RUN_SIZE		256

/* struct sgx_enclave_exception (seed) */
#define EX_LEAF		0
#define EX_TRAPNR	4
#define EX_ERROR_CODE	6
#define EX_ADDRESS	8

	.data
	.balign 8
	.globl	sgxemu_vdso_enclu
	.hidden	sgxemu_vdso_enclu
sgxemu_vdso_enclu:
	.quad	0
	.globl	sgxemu_vdso_abi
	.hidden	sgxemu_vdso_abi
sgxemu_vdso_abi:
	.byte	0

	.hidden	sgxemu_vdso_seed_call

	.text

/* The exported entry: pick the ABI; only the flags are touched. */
	.globl	sgxemu_vdso_sgx_enter_enclave
	.hidden	sgxemu_vdso_sgx_enter_enclave
	.type	sgxemu_vdso_sgx_enter_enclave, @function
	.balign	16
sgxemu_vdso_sgx_enter_enclave:
	.cfi_startproc
	cmpb	$1, sgxemu_vdso_abi(%rip)
	je	sgxemu_vdso_seed
	cmpb	$2, sgxemu_vdso_abi(%rip)
	je	sgxemu_vdso_main
	/*
	 * Per call. Every register may carry an argument (v22 passes them
	 * all through), so the C test runs between saves of the
	 * caller-saved ones; 9 pushes leave RSP 16-byte aligned for the
	 * call, and the first stack argument at 80(%rsp). POP keeps the
	 * flags of the TEST.
	 */
	push	%rax
	.cfi_adjust_cfa_offset	8
	push	%rcx
	.cfi_adjust_cfa_offset	8
	push	%rdx
	.cfi_adjust_cfa_offset	8
	push	%rsi
	.cfi_adjust_cfa_offset	8
	push	%rdi
	.cfi_adjust_cfa_offset	8
	push	%r8
	.cfi_adjust_cfa_offset	8
	push	%r9
	.cfi_adjust_cfa_offset	8
	push	%r10
	.cfi_adjust_cfa_offset	8
	push	%r11
	.cfi_adjust_cfa_offset	8
	mov	80(%rsp), %rdi
	call	sgxemu_vdso_seed_call
	test	%al, %al
	pop	%r11
	.cfi_adjust_cfa_offset	-8
	pop	%r10
	.cfi_adjust_cfa_offset	-8
	pop	%r9
	.cfi_adjust_cfa_offset	-8
	pop	%r8
	.cfi_adjust_cfa_offset	-8
	pop	%rdi
	.cfi_adjust_cfa_offset	-8
	pop	%rsi
	.cfi_adjust_cfa_offset	-8
	pop	%rdx
	.cfi_adjust_cfa_offset	-8
	pop	%rcx
	.cfi_adjust_cfa_offset	-8
	pop	%rax
	.cfi_adjust_cfa_offset	-8
	jnz	sgxemu_vdso_seed
	jmp	sgxemu_vdso_main
	.cfi_endproc
	.size	sgxemu_vdso_sgx_enter_enclave, .-sgxemu_vdso_sgx_enter_enclave

/* ---------------------------------------------------------------------- */
/* Mainline ABI                                                             */
/* ---------------------------------------------------------------------- */

	.type	sgxemu_vdso_main, @function
	.balign	16
sgxemu_vdso_main:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset	8
	.cfi_rel_offset		%rbp, 0
	mov	%rsp, %rbp
	.cfi_def_cfa_register	%rbp
	push	%rbx
	.cfi_offset		%rbx, -24

	mov	%ecx, %eax		/* the leaf is the 4th argument */

.Lmain_check:
	/* Only EENTER and ERESUME (unsigned compare), before touching run. */
	cmp	$EENTER, %eax
	jb	.Lmain_einval
	cmp	$ERESUME, %eax
	ja	.Lmain_einval

	/* run is the 7th argument: 16(%rbp). Its reserved bytes must be 0. */
	mov	16(%rbp), %rbx
	mov	$RUN_RESERVED, %ecx
.Lmain_rsvd:
	cmpq	$0, (%rbx, %rcx)
	jne	.Lmain_einval
	add	$8, %ecx
	cmp	$RUN_SIZE, %ecx
	jb	.Lmain_rsvd

	mov	RUN_TCS(%rbx), %rbx
	lea	sgxemu_vdso_main_aep(%rip), %rcx

	/* ENCLU[EENTER/ERESUME]; also the AEP. */
	.globl	sgxemu_vdso_main_aep
	.hidden	sgxemu_vdso_main_aep
sgxemu_vdso_main_aep:
	call	*sgxemu_vdso_enclu(%rip)

	/* EEXIT came back here. The enclave must have kept RBP. */
	mov	16(%rbp), %rbx
	movl	$EEXIT, RUN_FUNCTION(%rbx)
	jmp	.Lmain_handler

	/* The engine's exception fixup continues here (see above). */
	.globl	sgxemu_vdso_main_fixup
	.hidden	sgxemu_vdso_main_fixup
sgxemu_vdso_main_fixup:
	mov	16(%rbp), %rbx
	mov	%eax, RUN_FUNCTION(%rbx)
	mov	%di, RUN_VECTOR(%rbx)
	mov	%si, RUN_ERROR_CODE(%rbx)
	mov	%rdx, RUN_ADDR(%rbx)

.Lmain_handler:
	/* No handler: 0, after EEXIT and after an exception alike. */
	cmpq	$0, RUN_USER_HANDLER(%rbx)
	jne	.Lmain_call
	xor	%eax, %eax
	jmp	.Lmain_out

.Lmain_call:
	/*
	 * handler(rdi, rsi, rdx, rsp at exit, r8, r9, run): RDI..R9 as the
	 * enclave left them. RBX keeps the exit RSP (callee-saved), RSP is
	 * aligned for the call, run goes on the stack twice (padding + the
	 * 7th argument), DF is cleared as the ABI requires.
	 */
	mov	%rsp, %rcx
	mov	%rbx, %rax
	mov	%rsp, %rbx
	and	$-16, %rsp
	push	%rax
	push	%rax
	cld
	call	*RUN_USER_HANDLER(%rax)
	mov	%rbx, %rsp
	/* <= 0: the result. > 0: the next leaf (2 or 3, else -EINVAL). */
	cmp	$0, %eax
	jle	.Lmain_out
	jmp	.Lmain_check

.Lmain_einval:
	mov	$-EINVAL, %eax
.Lmain_out:
	/* RBX from its save slot (the kernel pops it from wherever RSP is;
	 * reloading it from the frame is the same when RSP is intact and
	 * safer when the enclave moved it). */
	mov	-8(%rbp), %rbx
	leave
	.cfi_def_cfa		%rsp, 8
	ret
	.cfi_endproc
	.size	sgxemu_vdso_main, .-sgxemu_vdso_main

/* ---------------------------------------------------------------------- */
/* Seed (v22) ABI                                                           */
/* ---------------------------------------------------------------------- */

	.type	sgxemu_vdso_seed, @function
	.balign	16
sgxemu_vdso_seed:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset	8
	.cfi_rel_offset		%rbp, 0
	mov	%rsp, %rbp
	.cfi_def_cfa_register	%rbp

	/* Stack arguments: 0x10(%rbp) tcs, 0x18 exinfo, 0x20 callback. */
.Lseed_check:
	cmp	$EENTER, %eax
	jb	.Lseed_bad
	cmp	$ERESUME, %eax
	ja	.Lseed_bad

	mov	0x10(%rbp), %rbx
	lea	sgxemu_vdso_seed_aep(%rip), %rcx

	.globl	sgxemu_vdso_seed_aep
	.hidden	sgxemu_vdso_seed_aep
sgxemu_vdso_seed_aep:
	call	*sgxemu_vdso_enclu(%rip)

	/* EEXIT: result 0 (kept in EBX); exinfo->leaf = EAX (EEXIT). */
	xor	%ebx, %ebx
	mov	0x18(%rbp), %rcx
	jrcxz	.Lseed_cb
	mov	%eax, EX_LEAF(%rcx)
	jmp	.Lseed_cb

	.globl	sgxemu_vdso_seed_fixup
	.hidden	sgxemu_vdso_seed_fixup
sgxemu_vdso_seed_fixup:
	/* Exception: result -EFAULT, and the report in *exinfo if given. */
	mov	$-EFAULT, %ebx
	mov	0x18(%rbp), %rcx
	jrcxz	.Lseed_cb
	mov	%eax, EX_LEAF(%rcx)
	mov	%di, EX_TRAPNR(%rcx)
	mov	%si, EX_ERROR_CODE(%rcx)
	mov	%rdx, EX_ADDRESS(%rcx)

.Lseed_cb:
	/* RCX = exinfo is the callback's 4th argument. */
	mov	0x20(%rbp), %rax
	test	%rax, %rax
	jnz	.Lseed_call
	mov	%ebx, %eax
	jmp	.Lseed_out

.Lseed_call:
	/*
	 * callback(rdi, rsi, rdx, exinfo, r8, r9, tcs, ursp): RBX keeps the
	 * RSP at exit (ursp), RSP is aligned, ursp and tcs are pushed as the
	 * 8th and 7th arguments.
	 */
	mov	%rsp, %rbx
	and	$-16, %rsp
	push	%rbx
	push	0x10(%rbp)
	cld
	call	*%rax
	mov	%rbx, %rsp
	jmp	.Lseed_check

.Lseed_bad:
	/* A non-positive value (from the callback) is the result; a positive
	 * one that is no ENCLU leaf we take is -EINVAL. */
	cmp	$0, %eax
	jle	.Lseed_out
	mov	$-EINVAL, %eax
.Lseed_out:
	leave
	.cfi_def_cfa		%rsp, 8
	ret
	.cfi_endproc
	.size	sgxemu_vdso_seed, .-sgxemu_vdso_seed

	.section .note.GNU-stack, "", @progbits
