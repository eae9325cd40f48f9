/* SPDX-License-Identifier: MIT */
/*
 * The EPC-paging test enclave (tests/integration/test_paging*.c): the
 * layout of test_encl.S (layout.h) for its first pages, then a heap of any
 * size at PAGING_HEAP (paging_encl.h) that the loader adds. Commands
 * (RDI), on heap pages [RSI, RSI+RDX) with seed R8:
 *   P_FILL   write the pattern to every byte of those pages
 *   P_CHECK  read them back twice, forwards and in a strided order;
 *            RDX = checksum of every value read, in read order,
 *            RSI = values that differ from the pattern
 *   P_REPORT EREPORT with TARGETINFO, REPORTDATA and the REPORT in heap
 *            page RSI; RDX = the first 8 bytes of the REPORT's MRENCLAVE
 * The checksum is computed only here; the host recomputes it from the
 * formula (paging_encl.h) and compares.
 */
#include "layout.h"
#include "paging_encl.h"

#include "c_encl.inc"

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	ENCL_SWITCH_STACK
	cmp	$P_REPORT, %rdi
	je	p_report
	/* paging_cmd(cmd, first, count, seed, base) -> RAX checksum,
	 * RDX mismatches (a struct of two u64 returned in RAX:RDX). */
	mov	%r8, %r9		/* seed */
	lea	encl_base(%rip), %r8	/* base */
	mov	%rdx, %rcx		/* count */
	mov	%rsi, %rdx		/* first */
	mov	%rdi, %rsi		/* cmd */
	mov	%r9, %rdi		/* seed */
	/* C: paging_cmd(seed, cmd, first, count, base) */
	call	paging_cmd
	mov	%rdx, %rsi		/* mismatches */
	mov	%rax, %rdx		/* checksum */
p_exit:
	xor	%eax, %eax
	xor	%ecx, %ecx
	xor	%edi, %edi
	xor	%r8d, %r8d
	xor	%r9d, %r9d
	xor	%r10d, %r10d
	xor	%r11d, %r11d
	ENCL_EEXIT

	/* P_REPORT: EREPORT with every operand in heap page RSI. */
p_report:
	lea	encl_base(%rip), %rbx
	add	$PAGING_HEAP, %rbx
	shl	$12, %rsi
	add	%rsi, %rbx		/* TARGETINFO at +0 */
	lea	512(%rbx), %rcx		/* REPORTDATA at +512 */
	lea	1024(%rbx), %rdx	/* REPORT at +1024 */
	xor	%eax, %eax		/* EREPORT */
	ENCLU
	mov	64(%rdx), %rdx		/* REPORT.MRENCLAVE, first 8 bytes */
	xor	%esi, %esi
	jmp	p_exit
