/* SPDX-License-Identifier: MIT */
/*
 * The engine's test enclave: three TCSs, one entry point, commands chosen
 * by RDI (layout.h). Every result is computed inside the enclave from the
 * inputs, so a test that reads it proves the enclave ran.
 *
 * Entry with CSSA > 0 is the "exception handler" entry, as SGX runtimes
 * do it: it reports SSA frame CSSA-1 (EXITINFO, RIP, MISC.EXINFO, the
 * frame's RDX, URSP) and adds RSI to the saved RIP, so that the ERESUME
 * that follows skips the faulting instruction.
 */
#include "layout.h"

#define ENCLU .byte 0x0f, 0x01, 0xd7

	.section .tcs, "a"
	TCS L_SSA0, 2, L_FSGS + 0x0000, L_FSGS + 0x1000
	TCS L_SSA1, 2, L_FSGS + 0x2000, L_FSGS + 0x3000
	TCS L_SSA2, 1, L_FSGS + 0x4000, L_FSGS + 0x5000

	/* Per-TCS FS and GS pages. */
	.macro FSPAGE stack, tcs, magic, ssa
	.quad \stack - \tcs	/* FS_STACK */
	.quad \magic		/* FS_MAGIC */
	.fill 5, 8, 0		/* saved host state */
	.quad \ssa - \tcs	/* FS_SSA */
	.balign 4096, 0
	.endm
	.macro GSPAGE magic
	.quad 0
	.quad \magic
	.balign 4096, 0
	.endm

	.section .fsgs, "aw"
	FSPAGE L_STACK0, L_TCS0, 0xf5f5f5f500000000, L_SSA0
	GSPAGE 0x6565656500000000
	FSPAGE L_STACK1, L_TCS1, 0xf5f5f5f500000001, L_SSA1
	GSPAGE 0x6565656500000001
	FSPAGE L_STACK2, L_TCS2, 0xf5f5f5f500000002, L_SSA2
	GSPAGE 0x6565656500000002

	.section .ro_page, "a"
ro_data:
	.quad 0x0123456789abcdef
	.balign 4096, 0

	.section .scratch, "aw"
	.balign 512
scratch:
	.fill 4096, 1, 0

	.section .data.ssa, "aw"
	.fill 6 * 4096, 1, 0

	.section .text.entry, "ax"
	.globl encl_entry
encl_entry:
	/* RAX = CSSA, RBX = TCS, RCX = return address. Keep the host's
	 * stack for EEXIT in this TCS's FS page, then switch stacks. */
	mov	%rsp, %fs:FS_HOST_RSP
	mov	%rbp, %fs:FS_HOST_RBP
	mov	%rcx, %fs:FS_RET
	mov	%rax, %fs:FS_CSSA
	mov	%rbx, %fs:FS_TCS
	mov	%fs:FS_STACK, %rsp
	add	%rbx, %rsp
	test	%rax, %rax
	jnz	handler
	cmp	$CMD_REGS, %rdi
	je	cmd_regs
	cmp	$CMD_STORE, %rdi
	je	cmd_store
	cmp	$CMD_DIV0, %rdi
	je	cmd_div0
	cmp	$CMD_UD2, %rdi
	je	cmd_ud2
	cmp	$CMD_SYSCALL, %rdi
	je	cmd_syscall
	cmp	$CMD_FSGS, %rdi
	je	cmd_fsgs
	cmp	$CMD_XMM, %rdi
	je	cmd_xmm
	cmp	$CMD_LOOP, %rdi
	je	cmd_loop
	cmp	$CMD_SPIN, %rdi
	je	cmd_spin
	cmp	$CMD_INT3, %rdi
	je	cmd_int3
	cmp	$CMD_OUT, %rdi
	je	cmd_out
	cmp	$CMD_EREPORT, %rdi
	je	cmd_ereport
	cmp	$CMD_EACCEPT, %rdi
	je	cmd_eaccept
	cmp	$CMD_YMM, %rdi
	je	cmd_ymm
	cmp	$CMD_ZMM, %rdi
	je	cmd_zmm
	cmp	$CMD_WRFS, %rdi
	je	cmd_wrfs
	cmp	$CMD_BASES, %rdi
	je	cmd_bases
	cmp	$CMD_WRFS_HOLD, %rdi
	je	cmd_wrfs_hold
	cmp	$CMD_WRFS_STAY, %rdi
	je	cmd_wrfs_stay
	cmp	$CMD_EREPORT_GS, %rdi
	je	cmd_ereport_gs
	cmp	$CMD_RDTSC, %rdi
	je	cmd_rdtsc
	cmp	$CMD_RDTSCP, %rdi
	je	cmd_rdtscp
	cmp	$CMD_XSAVE, %rdi
	je	cmd_xsave
	cmp	$CMD_XSAVE_EDGE, %rdi
	je	cmd_xsave_edge
	cmp	$CMD_SECRETS, %rdi
	je	cmd_secrets
	cmp	$CMD_EREPORT_AT, %rdi
	je	cmd_ereport_at
	cmp	$CMD_EGETKEY_AT, %rdi
	je	cmd_egetkey_at
	cmp	$CMD_EEXIT_TO, %rdi
	je	cmd_eexit_to
	/* CMD_NOP and unknown commands: straight back. */
exit:
	ENCL_EEXIT

handler:
	mov	%rdi, %r12		/* 1: clobber the AVX-512 state too */
	/* GPRSGX of frame CSSA-1: SSA base + CSSA*4096 - 184. */
	mov	%fs:FS_SSA, %r11
	add	%rbx, %r11
	shl	$12, %rax
	lea	-184(%r11, %rax), %r10
	mov	160(%r10), %edx		/* EXITINFO */
	mov	136(%r10), %rcx		/* RIP */
	add	%rsi, 136(%r10)		/* skip the faulting instruction */
	mov	%rcx, %rsi
	mov	-16(%r10), %rdi		/* EXINFO.MADDR */
	mov	-8(%r10), %r8d		/* EXINFO.ERRCD */
	mov	16(%r10), %r9		/* the frame's RDX */
	mov	144(%r10), %r10		/* URSP */
	/* Clobber the vector registers: ERESUME must bring them back. */
	pxor	%xmm0, %xmm0
	pxor	%xmm1, %xmm1
	pxor	%xmm7, %xmm7
	pxor	%xmm8, %xmm8
	pxor	%xmm15, %xmm15
	/* (The upper halves too: every x86-64 machine sgxemu runs on has
	 * AVX, whatever the enclave's XFRM.) */
	vzeroall
	cmp	$1, %r12
	jne	exit
	.irp i, 16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	vpxorq	%zmm\i, %zmm\i, %zmm\i
	.endr
	kxorw	%k3, %k3, %k3
	jmp	exit

cmd_regs:
	add	%rsi, %rdx		/* rdx = rsi + rdx */
	not	%rsi
	mov	$0x1111, %edi
	shl	$1, %r8
	xor	$0x5555, %r9
	inc	%r10
	mov	%fs:FS_CSSA, %r11	/* RAX seen at EENTER */
	mov	%fs:FS_TCS, %r12	/* RBX seen */
	add	%r14, %r13
	mov	%fs:FS_RET, %r14	/* RCX seen */
	add	$7, %r15
	jmp	exit

cmd_store:
	.globl	store_insn
store_insn:
	mov	%rdx, (%rsi)		/* 3 bytes */
	mov	(%rsi), %rdx
	inc	%rdx
	jmp	exit

cmd_div0:
	mov	$7, %eax
	xor	%edx, %edx
	xor	%ecx, %ecx
	div	%ecx			/* 2 bytes */
	mov	$0xd1d1, %edx
	jmp	exit

cmd_ud2:
	ud2
	mov	$0x0d0d, %edx
	jmp	exit

cmd_rdtsc:
	rdtsc
	mov	$0x7575, %edx
	jmp	exit

cmd_rdtscp:
	rdtscp
	mov	$0x7676, %edx
	jmp	exit

/*
 * What a runtime with an XFRM-sized buffer meets (issue 26): an all-ones
 * XSAVE, then an all-ones XRSTOR of an image whose bytes past the legacy
 * area and header (576) are garbage. In enclave mode only XFRM features
 * exist, so neither XSTATE_BV may name another one. The AMX bits (17, 18)
 * stay out of the mask: their 8 KiB would not fit the scratch page.
 */
cmd_xsave:
	lea	scratch(%rip), %rsi
	xor	%eax, %eax
	mov	$64, %ecx
	lea	512(%rsi), %rdi
	rep stosq				/* a clean header */
	mov	$0xfff9ffff, %eax
	mov	$0xffffffff, %edx
	xsave64	(%rsi)
	mov	512(%rsi), %r9
	lea	576(%rsi), %rdi
	mov	$-1, %rax
	mov	$(4096 - 576) / 8, %ecx
	rep stosq				/* the poison */
	mov	$0xfff9ffff, %eax
	mov	$0xffffffff, %edx
	xrstor64 (%rsi)
	xsave64	(%rsi)
	mov	512(%rsi), %r8
	mov	%r9, %rdx
	jmp	exit

	/* With XCR0 = XFRM = x87|SSE (hardware's enclave mode) an all-ones
	 * XSAVE-family instruction reaches 576 bytes; the image here ends
	 * where ELRANGE's pages do, so a reach of the host's XCR0 faults. */
cmd_xsave_edge:
	lea	scratch + 4096 - 576(%rip), %rdi
	mov	%rdi, %r11
	movq	%rsi, %xmm0
	xor	%eax, %eax
	add	$512, %rdi
	mov	$8, %ecx
	rep stosq				/* a clean header */
	mov	%r11, %rsi
	mov	$-1, %eax
	mov	$-1, %edx
	xsave64	(%rsi)
	mov	512(%rsi), %r9
	pxor	%xmm0, %xmm0
	mov	$-1, %eax
	mov	$-1, %edx
	xrstor64 (%rsi)
	mov	$-1, %eax
	mov	$-1, %edx
	xsavec64 (%rsi)
	mov	512(%rsi), %r8
	pxor	%xmm0, %xmm0
	mov	$-1, %eax
	mov	$-1, %edx
	xrstor64 (%rsi)
	movq	%xmm0, %r10
	mov	%r9, %rdx
	mov	520(%rsi), %r9
	jmp	exit

cmd_syscall:
	mov	$39, %eax		/* getpid, if it were allowed */
	syscall
	mov	$0x5c5c, %edx
	jmp	exit

cmd_int3:
	int3
	mov	$0xbbbb, %edx
	jmp	exit

cmd_out:
	out	%al, $0x80		/* 2 bytes */
	mov	$0x0e0e, %edx
	jmp	exit

	/* WRFSBASE then RDFSBASE of what it wrote (a non-canonical RSI is
	 * #GP(0)); the TCS's FS is put back for the exit path. */
cmd_wrfs:
	rdfsbase %r9
	wrfsbase %rsi
	rdfsbase %rdx
	wrfsbase %r9
	mov	%fs:FS_MAGIC, %rdi
	jmp	exit

	/* A base the enclave wrote must stay through every AEX (the
	 * tick's, a signal's) and every preemption: count the rounds that
	 * find another one. Only RDFSBASE in the loop: FS is no TLS here. */
cmd_wrfs_hold:
	rdfsbase %r9
	wrfsbase %rsi
	xor	%r8d, %r8d
1:	test	%rdx, %rdx
	jz	3f
	dec	%rdx
	rdfsbase %rax
	cmp	%rsi, %rax
	je	1b
	inc	%r8
	wrfsbase %rsi
	jmp	1b
3:	wrfsbase %r9
	jmp	exit

	/* As a runtime that keeps its own TLS across exits (Gramine writes
	 * it after each entry): the exit path reads the copy. */
cmd_wrfs_stay:
	xor	%ecx, %ecx
1:	mov	%fs:(%rcx), %rax
	mov	%rax, (%rsi, %rcx)
	add	$8, %rcx
	cmp	$64, %rcx
	jb	1b
	wrfsbase %rsi
	xor	%r8d, %r8d
1:	test	%rdx, %rdx
	jz	exit
	dec	%rdx
	rdfsbase %rax
	cmp	%rsi, %rax
	je	1b
	inc	%r8
	wrfsbase %rsi
	jmp	1b

	/* Loads through both bases, rsi rounds long: a base lost at a
	 * context switch shows as a round whose values differ (FS: the
	 * host's TLS; GS: 0, which faults). */
cmd_bases:
	mov	%fs:FS_MAGIC, %r8
	mov	%gs:8, %r9
	xor	%edx, %edx
1:	test	%rsi, %rsi
	jz	exit
	dec	%rsi
	xor	%ecx, %ecx
	cmp	%fs:FS_MAGIC, %r8
	setne	%cl
	cmp	%gs:8, %r9
	setne	%al
	or	%al, %cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	jmp	1b

cmd_fsgs:
	rdfsbase %rdx
	rdgsbase %rsi
	mov	%fs:FS_MAGIC, %rdi
	mov	%gs:8, %r8
	jmp	exit

	/* xmm<i> := (rsi ^ (i+1) * 0x0101010101010101) in both halves */
	.macro XLOAD i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	movq	%rax, %xmm\i
	pinsrq	$1, %rax, %xmm\i
	.endm
	.macro XCHECK i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	movq	%xmm\i, %rcx
	cmp	%rax, %rcx
	setne	%cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	pextrq	$1, %xmm\i, %rcx
	cmp	%rax, %rcx
	setne	%cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	.endm
cmd_xmm:
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	XLOAD \i
	.endr
	ud2				/* AEX; the handler clobbers xmm */
	xor	%edx, %edx
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	XCHECK \i
	.endr
	movq	%xmm3, %rsi
	jmp	exit

cmd_loop:
	/* rdx = LCG over rsi steps, seeded with r8. */
	mov	%r8, %rdx
	movabs	$LCG_MUL, %rcx
	xor	%eax, %eax
1:	cmp	%rsi, %rax
	jae	2f
	imul	%rcx, %rdx
	add	%rax, %rdx
	inc	%rax
	jmp	1b
2:	jmp	exit

cmd_spin:
1:	pause
	cmpq	$0, (%rsi)
	je	1b
	mov	$0x5151, %edx
	jmp	exit

cmd_ereport:
	/* TARGETINFO = zeros at scratch, REPORTDATA at scratch+512,
	 * output at scratch+1024 (512-aligned). */
	lea	scratch(%rip), %rbx
	lea	512(%rbx), %rcx
	lea	1024(%rbx), %rdx
	xor	%eax, %eax		/* EREPORT */
	ENCLU
	mov	%rax, %rdx
	lea	scratch(%rip), %rsi
	mov	1024+64(%rsi), %rsi	/* REPORT.MRENCLAVE first qword */
	jmp	exit

	/* An ENCLU the engine completes inside enclave mode: GS (the
	 * TCS's) is the same after it. */
cmd_ereport_gs:
	mov	%gs:8, %r9
	lea	scratch(%rip), %rbx
	lea	512(%rbx), %rcx
	lea	1024(%rbx), %rdx
	xor	%eax, %eax		/* EREPORT */
	ENCLU
	mov	%rax, %rdx
	xor	%r8d, %r8d
	cmp	%gs:8, %r9
	setne	%r8b
	jmp	exit

cmd_eaccept:
	lea	scratch(%rip), %rbx
	lea	ro_data(%rip), %rcx
	mov	$5, %eax		/* EACCEPT */
	ENCLU
	mov	$0xacac, %edx
	jmp	exit

	.macro YLOAD i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	vmovq	%rax, %xmm\i
	vpbroadcastq %xmm\i, %ymm\i
	.endm
	.macro YCHECK i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	vmovdqu	%ymm\i, (%rsp)
	.irp q, 0, 8, 16, 24
	cmp	%rax, \q(%rsp)
	setne	%cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	.endr
	.endm
cmd_ymm:
	sub	$64, %rsp
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	YLOAD \i
	.endr
	ud2				/* AEX; the handler clobbers ymm */
	xor	%edx, %edx
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	YCHECK \i
	.endr
	vextracti128 $1, %ymm5, %xmm0
	movq	%xmm0, %rsi
	vzeroupper
	jmp	exit

	/* AVX-512 (XFRM 0xe7): zmm0-31 and an opmask across an AEX. */
	.macro ZLOAD i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	vpbroadcastq %rax, %zmm\i
	.endm
	.macro ZCHECK i
	mov	$((\i + 1) * 0x0101010101010101), %rax
	xor	%rsi, %rax
	vmovdqu64 %zmm\i, (%rsp)
	.irp q, 0, 8, 16, 24, 32, 40, 48, 56
	cmp	%rax, \q(%rsp)
	setne	%cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	.endr
	.endm
cmd_zmm:
	sub	$64, %rsp
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	ZLOAD \i
	.endr
	mov	%esi, %eax
	kmovw	%eax, %k3
	ud2				/* AEX; the handler clobbers zmm16-31, k3 */
	xor	%edx, %edx
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	ZCHECK \i
	.endr
	kmovw	%k3, %eax
	cmp	%si, %ax
	setne	%cl
	movzbl	%cl, %ecx
	add	%rcx, %rdx
	vextracti64x4 $1, %zmm21, %ymm0
	vextracti128 $1, %ymm0, %xmm0
	movq	%xmm0, %rsi
	vzeroupper
	jmp	exit

	/* Everything an AEX must not show the host (layout.h CMD_SECRETS). */
	/* Everything an AEX must not show the host (layout.h CMD_SECRETS);
	 * GPR n (the ModRM number) holds SECRET | 0x100 | n. */
	.macro GPRS_SECRET
	movabs	$(SECRET | 0x100), %rax
	movabs	$(SECRET | 0x101), %rcx
	movabs	$(SECRET | 0x102), %rdx
	movabs	$(SECRET | 0x103), %rbx
	movabs	$(SECRET | 0x105), %rbp
	movabs	$(SECRET | 0x106), %rsi
	movabs	$(SECRET | 0x107), %rdi
	movabs	$(SECRET | 0x108), %r8
	movabs	$(SECRET | 0x109), %r9
	movabs	$(SECRET | 0x10a), %r10
	movabs	$(SECRET | 0x10b), %r11
	movabs	$(SECRET | 0x10c), %r12
	movabs	$(SECRET | 0x10d), %r13
	movabs	$(SECRET | 0x10e), %r14
	movabs	$(SECRET | 0x10f), %r15
	.endm
cmd_secrets:
	sub	$16, %rsp
	movl	$0x027f, (%rsp)		/* FCW: 53-bit precision */
	fldcw	(%rsp)
	movl	$0x3f80, (%rsp)		/* MXCSR: round down */
	ldmxcsr	(%rsp)
	add	$16, %rsp
	fld1
	fldpi
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	movabs	$(SECRET | 0x200 | \i), %rax
	movq	%rax, %xmm\i
	pinsrq	$1, %rax, %xmm\i
	.endr
	test	$2, %rsi
	jz	1f
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	vpbroadcastq %xmm\i, %ymm\i
	.endr
1:	test	$4, %rsi
	jz	2f
	.irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	movabs	$(SECRET | 0x200 | \i), %rax
	vpbroadcastq %rax, %zmm\i
	.endr
	.irp i, 1,2,3,4,5,6,7
	mov	$(0x300 | \i), %eax
	kmovw	%eax, %k\i
	.endr
2:	test	$1, %rsi
	jnz	3f
	pushq	$0x8d7			/* CF PF AF ZF SF OF */
	popfq
	GPRS_SECRET
	ud2
	jmp	exit
	/* The spin keeps its flag pointer in RSP, which an AEX replaces
	 * anyway (URSP); every other GPR is the enclave's. */
3:	mov	%rdx, %rsp
	movq	$1, 8(%rsp)
	GPRS_SECRET
4:	pause
	cmpq	$0, (%rsp)
	je	4b
	jmp	exit

cmd_ereport_at:
	lea	scratch(%rip), %rbx
	lea	512(%rbx), %rcx
	mov	%rsi, %rdx
	xor	%eax, %eax		/* EREPORT */
	ENCLU
	mov	$0xe0e0, %edx
	jmp	exit

cmd_egetkey_at:
	/* KEYREQUEST at scratch + 2048: KEYNAME = REPORT, all else 0. */
	lea	scratch + 2048(%rip), %rbx
	movw	$3, (%rbx)
	mov	%rsi, %rcx
	mov	$1, %eax		/* EGETKEY */
	ENCLU
	mov	%rax, %rdx
	jmp	exit

cmd_eexit_to:
	mov	%rsi, %rbx
	mov	$4, %eax		/* EEXIT */
	ENCLU
	jmp	exit
