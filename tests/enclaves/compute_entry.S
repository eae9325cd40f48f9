/* SPDX-License-Identifier: MIT */
/*
 * The compute test enclave (bench/compute): the layout of test_encl.S
 * (layout.h), one command: RDI = CMD_COMPUTE, SHA-256 of [RSI, RSI+RDX)
 * (host memory, as SGX enclaves may read it) into the 32 bytes at R8.
 * CMD_NOP returns at once (bench/ecall).
 */
#include "layout.h"
#include "c_encl.inc"

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	ENCL_SWITCH_STACK
	cmp	$CMD_COMPUTE, %rdi
	jne	1f
	mov	%rsi, %rdi
	mov	%rdx, %rsi
	mov	%r8, %rdx
	call	sgxemu_test_sha256
1:	ENCL_EEXIT
