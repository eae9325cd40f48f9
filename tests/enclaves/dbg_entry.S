/* SPDX-License-Identifier: MIT */
/*
 * The debugger test enclave's entry (tests/enclaves/dbg_encl.c,
 * tests/integration/test_gdb.sh): the layout of test_encl.S (layout.h);
 * RDI = command, RSI = a struct dbg_args in host memory, handed to C.
 */
#include "layout.h"

#define ENCLU .byte 0x0f, 0x01, 0xd7

	.macro TCS ssa, nssa, fs
	.quad 0, 0, \ssa
	.long 0, \nssa
	.quad encl_entry, 0, \fs, \fs
	.long 0xffffffff, 0xffffffff
	.fill 4024, 1, 0
	.endm

	.section .tcs, "a"
	TCS L_SSA0, 2, L_FSGS + 0x0000
	TCS L_SSA1, 2, L_FSGS + 0x2000
	TCS L_SSA2, 1, L_FSGS + 0x4000

	.macro FSPAGE stack, tcs
	.quad \stack - \tcs
	.fill 7, 8, 0
	.balign 4096, 0
	.endm
	.section .fsgs, "aw"
	FSPAGE L_STACK0, L_TCS0
	.fill 4096, 1, 0
	FSPAGE L_STACK1, L_TCS1
	.fill 4096, 1, 0
	FSPAGE L_STACK2, L_TCS2
	.fill 4096, 1, 0

	.section .data.ssa, "aw"
	.fill 6 * 4096, 1, 0

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	mov	%rsp, %fs:FS_HOST_RSP
	mov	%rbp, %fs:FS_HOST_RBP
	mov	%rcx, %fs:FS_RET
	mov	%fs:FS_STACK, %rsp
	add	%rbx, %rsp
	xor	%ebp, %ebp		/* the end of the enclave's frames */
	call	encl_dispatch
	mov	%fs:FS_HOST_RSP, %rsp
	mov	%fs:FS_HOST_RBP, %rbp
	mov	%fs:FS_RET, %rbx
	mov	$4, %eax
	ENCLU
	ud2
