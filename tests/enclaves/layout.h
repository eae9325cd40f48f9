/* SPDX-License-Identifier: MIT */
/*
 * Layout of the engine's test enclaves (tests/enclaves/), shared
 * by their assembly, the linker script (encl.lds repeats the numbers) and
 * the loader in the tests (encl_util.h). Offsets from the enclave base.
 */
#ifndef SGXEMU_TEST_ENCL_LAYOUT_H
#define SGXEMU_TEST_ENCL_LAYOUT_H

#define L_TCS0		0x00000		/* NSSA 2 */
#define L_TCS1		0x01000		/* NSSA 2 */
#define L_TCS2		0x02000		/* NSSA 1 */
#define L_TEXT		0x04000		/* RX up to L_DATA */
#define L_DATA		0x10000		/* RW: SSA frames, stacks, data */
#define L_SSA0		0x10000		/* 2 frames */
#define L_SSA1		0x12000		/* 2 frames */
#define L_SSA2		0x14000		/* 1 frame */
#define L_STACK0	0x17000		/* stack tops */
#define L_STACK1	0x19000
#define L_STACK2	0x1b000
#define L_FSGS		0x20000		/* RW: FS, GS page of TCS 0, 1, 2 */
#define L_RO		0x26000		/* EPCM read-only page */
#define L_SCRATCH	0x27000		/* RW */
#define L_PAGES		0x28		/* image pages */
#define L_SIZE		0x40000		/* ELRANGE */

/* FS page fields (per TCS). */
#define FS_STACK	0	/* stack top - TCS offset */
#define FS_MAGIC	8
#define FS_HOST_RSP	16
#define FS_HOST_RBP	24
#define FS_RET		32
#define FS_CSSA		40
#define FS_TCS		48
#define FS_SSA		56	/* SSA offset - TCS offset */

/* Commands (RDI at EENTER). */
#define CMD_NOP		0
#define CMD_REGS	1
#define CMD_STORE	2	/* mov %rdx,(%rsi) [3 bytes]; rdx = (%rsi)+1 */
#define CMD_DIV0	3	/* div by zero [2 bytes]; rdx = 0xd1d1 */
#define CMD_UD2		4	/* ud2 [2 bytes]; rdx = 0x0d0d */
#define CMD_SYSCALL	5	/* syscall [2 bytes]; rdx = 0x5c5c */
#define CMD_FSGS	6
#define CMD_XMM		7	/* load xmm0-15 from rsi, ud2, check: rdx = errors */
#define CMD_LOOP	8	/* rsi iterations of an LCG: rdx = result */
#define CMD_SPIN	9	/* spin until *(u64 *)rsi != 0 */
#define CMD_INT3	10	/* int3; rdx = 0xbbbb */
#define CMD_OUT		11	/* out %al,$0x80 [2 bytes]; rdx = 0x0e0e */
#define CMD_EREPORT	12	/* EREPORT to scratch; rdx = RAX after */
#define CMD_EACCEPT	13	/* EACCEPT, zero SECINFO on ro_data: #GP */
#define CMD_COMPUTE	14	/* compute enclave: sha256(rsi, rdx) -> (r8) */
#define CMD_YMM		15	/* like CMD_XMM for all 256 bits of ymm0-15 */
#define CMD_ZMM		16	/* zmm0-31 and k3 (AVX-512) across a ud2 */
#define CMD_WRFS	17	/* wrfsbase %rsi; rdx = rdfsbase; FS put back */
#define CMD_BASES	18	/* rsi rounds of loads through FS and GS: rdx =
				 * rounds that differ from the first; r8, r9 =
				 * its values */
#define CMD_RDTSC	19	/* rdtsc [2 bytes]; rdx = 0x7575 */
#define CMD_RDTSCP	20	/* rdtscp [3 bytes]; rdx = 0x7676 */
#define CMD_XSAVE	21	/* XSAVE (all ones but AMX) to scratch, poison
				 * what follows its legacy area and header,
				 * XRSTOR all ones, XSAVE again: rdx, r8 =
				 * the two XSTATE_BVs */
#define CMD_SECRETS	22	/* every GPR but RSP, x87, FCW, MXCSR, xmm0-15
				 * (rsi bit 1: all of ymm0-15; bit 2: zmm0-31
				 * and k1-7) hold SECRET | n and the arithmetic
				 * flags are set, then: ud2 [2 bytes] (rsi bit
				 * 0 clear), or (bit 0 set) 1 stored at rdx + 8
				 * and a spin until *(u64 *)rdx != 0 */
#define CMD_EREPORT_AT	23	/* EREPORT (TARGETINFO, REPORTDATA in scratch)
				 * with its output at rsi */
#define CMD_EGETKEY_AT	24	/* EGETKEY of the REPORT key into rsi;
				 * rdx = RAX */
#define CMD_EEXIT_TO	25	/* EEXIT to rsi */
#define CMD_WRFS_HOLD	26	/* wrfsbase %rsi, then rdx rounds of rdfsbase:
				 * r8 = rounds that read another base (each
				 * one written again); FS put back */
#define CMD_WRFS_STAY	27	/* the FS page's fields copied to rsi, then as
				 * CMD_WRFS_HOLD at rsi, and FS left there for
				 * the exit (as runtimes leave their TLS) */
#define CMD_EREPORT_GS	28	/* as CMD_EREPORT, with r8 = 1 if %gs:8 read
				 * another value after it than before */
#define CMD_XSAVE_EDGE	29	/* all-ones XSAVE, XRSTOR, XSAVEC, XRSTOR of
				 * an x87|SSE-sized image ending at the last
				 * page's end, xmm0 = rsi across them: rdx,
				 * r8 = XSTATE_BVs, r9 = XCOMP_BV, r10 = xmm0
				 * after the last XRSTOR */

/* What CMD_SECRETS puts in registers: SECRET | 0x1nn in GPRs, | 0x2nn in
 * vector registers, | 0x3nn in opmasks. */
#define SECRET		0x5ec2e75ec2e70000
#define SECRET_MASK	0xffffffffffff0000

#define LCG_MUL		6364136223846793005ULL

#ifdef __ASSEMBLER__
/* A TCS page (sgx-facts.md TCS layout) entering at encl_entry. */
	.macro TCS ssa, nssa, fs, gs, flags=0
	.quad 0			/* STATE */
	.quad \flags		/* FLAGS: bit 0 DBGOPTIN, bit 1 AEXNOTIFY */
	.quad \ssa		/* OSSA */
	.long 0			/* CSSA */
	.long \nssa		/* NSSA */
	.quad encl_entry	/* OENTRY */
	.quad 0			/* AEP */
	.quad \fs		/* OFSBASE */
	.quad \gs		/* OGSBASE */
	.long 0xffffffff	/* FSLIMIT */
	.long 0xffffffff	/* GSLIMIT */
	.fill 4024, 1, 0
	.endm

/* Back to the host's stack (saved in the FS page at entry) and EEXIT to
 * the return address. */
	.macro ENCL_EEXIT
	mov	%fs:FS_HOST_RSP, %rsp
	mov	%fs:FS_HOST_RBP, %rbp
	mov	%fs:FS_RET, %rbx
	mov	$4, %eax		/* EEXIT */
	.byte 0x0f, 0x01, 0xd7		/* ENCLU */
	ud2
	.endm
#endif

#endif
