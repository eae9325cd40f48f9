/* SPDX-License-Identifier: MIT */
/*
 * The attestation and sealing test enclave: one TCS, commands in RDI
 * (layout.h numbers the pages; encl.lds places the sections):
 *
 *   K_REPORT  RSI = TARGETINFO (host), RDX = REPORTDATA (host, 64 bytes),
 *             R8 = REPORT out (host, 432 bytes): copies the inputs into
 *             enclave memory, runs EREPORT there, copies the REPORT out.
 *   K_GETKEY  RSI = KEYREQUEST (host), RDX = key out (host, 16 bytes):
 *             EGETKEY inside; RDX on exit = EGETKEY's RAX (error code).
 *
 * The operands of EREPORT/EGETKEY must be enclave memory, so everything
 * goes through the 512-aligned scratch page. The key is handed to the host
 * because this is a test enclave: the test checks MACs and seals with it
 * (a real enclave would never let its keys out).
 */
#include "layout.h"

#define ENCLU	.byte 0x0f, 0x01, 0xd7
#define K_REPORT	1
#define K_GETKEY	2

	.section .tcs, "a"
	.quad 0			/* STATE */
	.quad 0			/* FLAGS */
	.quad L_SSA0		/* OSSA */
	.long 0			/* CSSA */
	.long 2			/* NSSA */
	.quad encl_entry	/* OENTRY */
	.quad 0			/* AEP */
	.quad L_FSGS		/* OFSBASE */
	.quad L_FSGS + 0x1000	/* OGSBASE */
	.long 0xffffffff	/* FSLIMIT */
	.long 0xffffffff	/* GSLIMIT */
	.fill 4024, 1, 0

	.section .data.ssa, "aw"
	.fill 2 * 4096, 1, 0

	.section .data, "aw"
host_rsp:	.quad 0
host_rbp:	.quad 0
host_ret:	.quad 0

	.section .scratch, "aw"
	.balign 4096
scratch:
	.fill 4096, 1, 0

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	/* RBX = TCS = the enclave base (TCS 0 is page 0): offsets become
	 * addresses by adding it. */
	mov	%rsp, host_rsp(%rbx)
	mov	%rbp, host_rbp(%rbx)
	mov	%rcx, host_ret(%rbx)
	lea	L_STACK0(%rbx), %rsp
	mov	%rbx, %r15
	cld
	test	%rax, %rax		/* CSSA > 0: no handler here */
	jnz	exit
	cmp	$K_REPORT, %rdi
	je	k_report
	cmp	$K_GETKEY, %rdi
	je	k_getkey
	jmp	exit

k_report:
	mov	%rdx, %r12
	mov	%r8, %r13
	lea	scratch(%r15), %rdi	/* TARGETINFO -> scratch + 0 */
	mov	$512, %ecx
	rep movsb
	mov	%r12, %rsi		/* REPORTDATA -> scratch + 0x200 */
	lea	scratch + 0x200(%r15), %rdi
	mov	$64, %ecx
	rep movsb
	lea	scratch(%r15), %rbx
	lea	scratch + 0x200(%r15), %rcx
	lea	scratch + 0x400(%r15), %rdx
	xor	%eax, %eax		/* EREPORT */
	ENCLU
	lea	scratch + 0x400(%r15), %rsi
	mov	%r13, %rdi
	mov	$432, %ecx
	rep movsb
	xor	%edx, %edx
	jmp	exit

k_getkey:
	mov	%rdx, %r13
	lea	scratch(%r15), %rdi	/* KEYREQUEST -> scratch + 0 */
	mov	$512, %ecx
	rep movsb
	lea	scratch(%r15), %rbx
	lea	scratch + 0x800(%r15), %rcx
	mov	$1, %eax		/* EGETKEY */
	ENCLU
	mov	%rax, %r12
	lea	scratch + 0x800(%r15), %rsi
	mov	%r13, %rdi
	mov	$16, %ecx
	rep movsb
	movq	$0, scratch + 0x800(%r15)	/* no copy of the key stays */
	movq	$0, scratch + 0x808(%r15)
	mov	%r12, %rdx

exit:
	mov	host_rsp(%r15), %rsp
	mov	host_rbp(%r15), %rbp
	mov	host_ret(%r15), %rbx
	mov	$4, %eax		/* EEXIT */
	ENCLU
	ud2
