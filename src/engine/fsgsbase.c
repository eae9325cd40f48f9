/* SPDX-License-Identifier: MIT */
/*
 * RDFSBASE, RDGSBASE, WRFSBASE, WRGSBASE where the host kernel has not
 * enabled them (CR4.FSGSBASE clear: no HWCAP2_FSGSBASE, the instructions
 * are #UD in user mode).
 *
 * An SGX platform under Linux 5.11 or later always has them: the kernel
 * enables FSGSBASE on every CPU that has it, and every SGX CPU does, so
 * SGX runtimes rely on them inside the enclave (Gramine's PAL loads the
 * application's TLS base with WRFSBASE after each OCALL) and check
 * AT_HWCAP2 for them before they start. Without them on the host, the
 * emulated platform still offers them: the #UD they raise is taken here
 * and the instruction is done on the thread's saved state, which the
 * engine's signal stub writes back with arch_prctl. One trap each, so only
 * the rare writes of a runtime are affordable, which is what runtimes do.
 *
 * Some hosts (paravirtualised guests) run the instructions without a
 * fault although their kernel does not support them: then the kernel
 * restores, at every context switch, the bases last set by arch_prctl.
 * There the engine reads the live bases whenever enclave mode is
 * interrupted and hands a changed one to the kernel when it returns, so
 * a base the enclave wrote survives every exit, AEX and later context
 * switch. At each entry (EENTER's fast path too) the register gets the
 * TCS's base, as the architecture says, and the kernel's copy the base
 * the enclave last ran with if that was one it wrote (the hint,
 * TCB_FS_HINT): runtimes that keep their TLS in FS write it again after
 * each entry (Gramine, at each OCALL's return), and a preemption after
 * that write restores it. A base written anew (a new thread's TLS) would
 * still be lost at a preemption before the next interruption, so there
 * the enclave's WRFSBASE/WRGSBASE are made to trap as their pages are
 * added, and their #UD is the write with the kernel's copy kept
 * (fsgs_sites.c; a site that only writes the base the kernel has runs
 * natively again). Code an enclave writes into its own pages later
 * keeps the window (`sgxemu info`).
 *
 * Encoding (SDM Vol. 2): F3 [REX] 0F AE /r with mod = 11; reg 0 RDFSBASE,
 * 1 RDGSBASE, 2 WRFSBASE, 3 WRGSBASE; REX.W selects 64-bit operands
 * (otherwise 32-bit, zero-extended), REX.B the high registers. A write of
 * a non-canonical address is #GP(0).
 */
#include <asm/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

/*
 * The one rule for both sides (the shim advertises HWCAP2_FSGSBASE in the
 * program's auxiliary vector, the engine emulates): the host kernel has
 * them off and SGXEMU_FSGSBASE is not "0". The host's own HWCAP2 is read
 * from glibc's copy, which the shim's change to the vector does not touch.
 */
/*
 * Whether RDFSBASE works in user mode although the kernel does not say so
 * (CR4.FSGSBASE set under a kernel without FSGSBASE support: some
 * paravirtualised guests). Then nothing traps, and the kernel keeps only
 * the bases set with arch_prctl across a context switch. Tried in a child
 * (sgxemu__probe_child), which #UD ends.
 */
static void try_rdfsbase(void)
{
	uint64_t v;

	__asm__ volatile("rdfsbase %0" : "=r"(v));
	(void)v;
}

bool sgxemu__fsgsbase_probe_unmanaged(void)
{
	return sgxemu__probe_child(try_rdfsbase) == 0;
}

/*
 * Untracked FSGSBASE makes every arch_prctl(ARCH_SET_GS) expensive (a
 * segment load and an MSR write: about one trap's worth on the PVM hosts
 * that have this), so the stub leaves the kernel's copy of GS at the
 * enclave's value when the program's GS is 0 and only the live register
 * goes back to 0 at an exit: a program that never set GS does not read
 * it, and its next entry needs no system call for GS. After a context
 * switch in host mode the live base is the kernel's copy again; that is
 * still the program's 0. A live value that is neither is the program's
 * own change: then the kernel's copy is not known any more.
 */
uint64_t sgxemu__host_gs(struct sgxemu_tcb *tcb, uint64_t live)
{
	if (!sgxemu__fsgsbase_unmanaged || live == 0)
		return live;
	if (live == tcb->kern_gs && tcb->host_gs == 0)
		return 0;
	if (live != tcb->kern_gs)
		tcb->kern_gs = KERN_GS_UNKNOWN;
	return live;
}

/*
 * A program's handler is about to run from an engine handler that
 * interrupted enclave mode on a host without FSGSBASE in its kernel,
 * which left GS at the enclave's base (entry.S, TCB_HANDLER_GS): the
 * program's handler gets the host's, written as the stub writes it
 * (sgxemu__gs_set's rule where the instructions run untracked), and the
 * stub's way out then knows what is live.
 */
void sgxemu__handler_gs_host(struct sgxemu_tcb *tcb)
{
	uint64_t gs;

	if (!tcb || !tcb->gs_deferred)
		return;
	tcb->gs_deferred = false;
	gs = tcb->host_gs;
	if (tcb->handler_gs == gs)
		return;
	if (sgxemu__fsgsbase_unmanaged && (gs == tcb->kern_gs || gs == 0))
		__asm__ volatile("wrgsbase %0" : : "r"(gs) : "memory");
	else if (syscall(SYS_arch_prctl, ARCH_SET_GS, gs))
		return;
	else if (sgxemu__fsgsbase_unmanaged)
		tcb->kern_gs = gs;
	tcb->handler_gs = gs;
}

bool sgxemu_fsgsbase_emulated(void)
{
	const char *v = getenv("SGXEMU_FSGSBASE");

	if (getauxval(AT_HWCAP2) & 2)
		return false;
	return !v || strcmp(v, "0") != 0;
}

/* ucontext register index for ModRM.rm | REX.B << 3. */
static const int gpr_index[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

int sgxemu__fsgsbase_decode(const uint8_t *b, size_t n,
			    struct sgxemu_fsgsbase_insn *insn)
{
	size_t i = 0;
	uint8_t rex = 0;

	if (n < 4 || b[i++] != 0xf3)
		return -1;
	if ((b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i + 3 > n || b[i] != 0x0f || b[i + 1] != 0xae)
		return -1;
	i += 2;
	if ((b[i] >> 6) != 3 || ((b[i] >> 3) & 7) > 3)
		return -1;
	insn->op = (b[i] >> 3) & 7;
	insn->reg = gpr_index[(b[i] & 7) | ((rex & 1) << 3)];
	insn->wide = (rex & 8) != 0;
	insn->len = (unsigned)i + 1;
	return 0;
}

static bool canonical(uint64_t v)
{
	return (uint64_t)((int64_t)(v << 16) >> 16) == v;
}

int sgxemu__fsgsbase_apply(ucontext_t *uc,
			   const struct sgxemu_fsgsbase_insn *insn,
			   uint64_t *fs, uint64_t *gs)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t v;

	switch (insn->op) {
	case 0:
	case 1:
		v = insn->op == 0 ? *fs : *gs;
		g[insn->reg] = (greg_t)(insn->wide ? v : (uint32_t)v);
		break;
	default:
		v = (uint64_t)g[insn->reg];
		if (!insn->wide)
			v = (uint32_t)v;
		if (!canonical(v))
			return 1;	/* #GP(0) */
		if (insn->op == 2)
			*fs = v;
		else
			*gs = v;
		break;
	}
	g[REG_RIP] += (greg_t)insn->len;
	return 0;
}

int sgxemu__fsgsbase_emulate(ucontext_t *uc, sgxemu_read_fn read, void *ctx,
			     uint64_t *fs, uint64_t *gs)
{
	struct sgxemu_fsgsbase_insn insn;
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	uint8_t b[5];
	size_t n = sizeof(b);

	/* The instruction may end just before an unreadable page. */
	while (n >= 4 && !read(ctx, rip, b, n))
		n--;
	if (n < 4 || sgxemu__fsgsbase_decode(b, n, &insn))
		return -1;
	return sgxemu__fsgsbase_apply(uc, &insn, fs, gs);
}

const char *sgxemu_fsgsbase_mode(void)
{
	if (getauxval(AT_HWCAP2) & 2)
		return "kernel";
	if (!sgxemu_fsgsbase_emulated())
		return "off";
	return sgxemu__fsgsbase_probe_unmanaged() ? "untracked" : "emulated";
}
