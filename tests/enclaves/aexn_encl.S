/* SPDX-License-Identifier: MIT */
/*
 * AEX-Notify test enclave (layout.h, built with the AEXNOTIFY attribute
 * by tests/integration/test_aexnotify.c). TCS 0 and TCS 2 have
 * TCS.FLAGS.AEXNOTIFY, TCS 1 has not.
 *
 * CSSA 0 entry, RDI = command:
 *  AEXN_LOOP: SSA[0].AEXNOTIFY := DL, then an LCG (seed R8) runs until
 *    *(u64 *)RSI != 0. EEXIT with RDX = LCG state, R8 = steps,
 *    R9 = notifications counted, R10 = SSA[0].AEXNOTIFY as it is now.
 *    The loop keeps its state in RBX, RBP, R12-R15 and the flags, so a
 *    resume that loses a register shows as a wrong RDX for R8 steps.
 *  AEXN_EDECCSSA: EDECCSSA at CSSA 0 (#GP).
 * CSSA > 0 entry: an AEX notification (ERESUME entering at OENTRY),
 *    handled as trusted runtimes do: count it, copy the interrupted
 *    context out of SSA[0], EDECCSSA back to frame 0, restore that context
 *    by hand and jump to its RIP. An exception AEX (EXITINFO.VALID) is
 *    not expected here: EEXIT with RDX = 0xe0e0.
 *
 * An AEX can hit the restore itself, after EDECCSSA: SSA[0] then holds
 * the restore's own state, with a RIP in [restore_start, restore_end),
 * and the copy of the interrupted context is still intact in the FS page,
 * so the next notification restores from it again instead of copying.
 */
#include "layout.h"

#define ENCLU .byte 0x0f, 0x01, 0xd7

/* GPRSGX, at the end of the one-page SSA frame. */
#define GPRSGX		(4096 - 184)
#define G_RSP		32
#define G_RFLAGS	128
#define G_RIP		136
#define G_EXITINFO	160
#define G_AEXNOTIFY	167

/* FS page: the interrupted context (RAX..R15, RFLAGS, RIP: GPRSGX's
 * first 18 quads), and the host stack of the CSSA 0 entry. */
#define BUF		128
#define B_RSP		(BUF + G_RSP)
#define B_RFLAGS	(BUF + G_RFLAGS)
#define B_RIP		(BUF + G_RIP)

#define AEXN_LOOP	1
#define AEXN_EDECCSSA	2

	.section .tcs, "a"
	TCS L_SSA0, 2, L_FSGS + 0x0000, L_FSGS + 0x1000, 2
	TCS L_SSA1, 2, L_FSGS + 0x2000, L_FSGS + 0x3000, 0
	TCS L_SSA2, 1, L_FSGS + 0x4000, L_FSGS + 0x5000, 2

	.macro FSPAGE stack, tcs, ssa
	.quad \stack - \tcs	/* FS_STACK */
	.quad 0			/* FS_MAGIC */
	.fill 5, 8, 0		/* saved host state */
	.quad \ssa - \tcs	/* FS_SSA */
	.balign 4096, 0
	.endm

	.section .fsgs, "aw"
	FSPAGE L_STACK0, L_TCS0, L_SSA0
	.fill 4096, 1, 0
	FSPAGE L_STACK1, L_TCS1, L_SSA1
	.fill 4096, 1, 0
	FSPAGE L_STACK2, L_TCS2, L_SSA2
	.fill 4096, 1, 0

	.section .ro_page, "a"
	.fill 4096, 1, 0

	.section .scratch, "aw"
notifications:
	.quad 0
	.balign 4096, 0

	.section .data.ssa, "aw"
	.fill 6 * 4096, 1, 0

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	/* RAX = CSSA, RBX = TCS, RCX = return address. */
	test	%rax, %rax
	jnz	notification
	mov	%rsp, %fs:FS_HOST_RSP
	mov	%rbp, %fs:FS_HOST_RBP
	mov	%rcx, %fs:FS_RET
	mov	%rbx, %fs:FS_TCS
	mov	%fs:FS_STACK, %rsp
	add	%rbx, %rsp
	cmp	$AEXN_LOOP, %rdi
	je	cmd_loop
	cmp	$AEXN_EDECCSSA, %rdi
	je	cmd_edeccssa
exit:
	ENCL_EEXIT

/* RAX = SSA[0]'s GPRSGX, from the TCS in %fs:FS_TCS. */
	.macro GPR0
	mov	%fs:FS_TCS, %rax
	add	%fs:FS_SSA, %rax
	add	$GPRSGX, %rax
	.endm

cmd_loop:
	GPR0
	movb	%dl, G_AEXNOTIFY(%rax)
	movq	$0, notifications(%rip)
	mov	%r8, %r12		/* state */
	xor	%r13d, %r13d		/* steps */
	movabs	$LCG_MUL, %r14
	mov	$1, %r15d
	mov	%rsi, %rbx		/* the host's flag */
	mov	%rsp, %rbp
1:	imul	%r14, %r12
	add	%r13, %r12
	add	%r15, %r13
	cmp	%rsp, %rbp		/* the stack pointer came back */
	jne	2f
	cmpq	$0, (%rbx)
	je	1b
	mov	%r12, %rdx
	mov	%r13, %r8
	mov	notifications(%rip), %r9
	GPR0
	movzbl	G_AEXNOTIFY(%rax), %r10d
	jmp	exit
2:	mov	$0xbad5, %edx		/* RSP not restored */
	jmp	exit

cmd_edeccssa:
	mov	$9, %eax		/* EDECCSSA */
	ENCLU
	mov	$0xdecc, %edx		/* not reached: CSSA is 0 */
	jmp	exit

notification:
	/* Entered by an ERESUME that delivers a notification; RSP is the
	 * host's, so no stack is used until the interrupted one is back. */
	lock incq notifications(%rip)
	mov	%fs:FS_TCS, %rdx
	add	%fs:FS_SSA, %rdx
	add	$GPRSGX, %rdx		/* RDX: SSA[0]'s GPRSGX */
	testl	$0x80000000, G_EXITINFO(%rdx)
	jnz	unexpected_exception
	mov	G_RIP(%rdx), %rcx
	lea	restore_start(%rip), %rsi
	cmp	%rsi, %rcx
	jb	copy
	lea	restore_end(%rip), %rsi
	cmp	%rsi, %rcx
	jb	decrement		/* interrupted in the restore */
copy:
	xor	%ecx, %ecx
3:	mov	(%rdx, %rcx, 8), %rsi
	mov	%rsi, %fs:BUF(, %rcx, 8)
	inc	%ecx
	cmp	$18, %ecx
	jb	3b
decrement:
	mov	$9, %eax		/* EDECCSSA: frame 0 is current again */
	ENCLU
restore_start:
	mov	%fs:B_RSP, %rsp
	pushq	%fs:B_RIP
	pushq	%fs:B_RFLAGS
	mov	%fs:BUF + 0, %rax
	mov	%fs:BUF + 8, %rcx
	mov	%fs:BUF + 16, %rdx
	mov	%fs:BUF + 24, %rbx
	mov	%fs:BUF + 40, %rbp
	mov	%fs:BUF + 48, %rsi
	mov	%fs:BUF + 56, %rdi
	mov	%fs:BUF + 64, %r8
	mov	%fs:BUF + 72, %r9
	mov	%fs:BUF + 80, %r10
	mov	%fs:BUF + 88, %r11
	mov	%fs:BUF + 96, %r12
	mov	%fs:BUF + 104, %r13
	mov	%fs:BUF + 112, %r14
	mov	%fs:BUF + 120, %r15
	popfq
	ret
restore_end:

unexpected_exception:
	mov	$0xe0e0, %edx
	ENCL_EEXIT
