/* SPDX-License-Identifier: MIT */
/*
 * Enclave-mode events, all arriving as signals and classified first
 * (classify.c), whichever signal this host's vendor uses:
 *  - ENCLU (0f 01 d7) in the enclave, #UD on AMD hosts, #GP or #PF on
 *    Intel ones: EEXIT, or another user leaf done by the processor model
 *    (src/cpu/enclu.c);
 *  - a synchronous fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, and
 *    SIGSYS from syscall user dispatch = #UD): AEX with the exception,
 *    then a fixup or the application's handler at the AEP;
 *  - any other signal: AEX as an interrupt, then the application's handler
 *    at the AEP, whose ERESUME continues the enclave;
 * and host-code ENCLU[EENTER/ERESUME] (the slow entry path).
 *
 * The ucontext is the register file: an AEX rewrites it to the synthetic
 * state at the AEP, EEXIT to the host target, an entry to enclave state;
 * the sigreturn makes it real. FS/GS bases and the syscall selector go
 * back through struct sgxemu_sigsave, which the stub applies last.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu/encl_mem.h"
#include "engine/cpuid.h"
#include "engine/engine.h"

#define EFL_CF	0x0001
#define EFL_PF	0x0004
#define EFL_AF	0x0010
#define EFL_ZF	0x0040
#define EFL_SF	0x0080
#define EFL_TF	0x0100
#define EFL_DF	0x0400
#define EFL_OF	0x0800
#define EFL_RF	0x10000
#define EFL_AC	0x40000
#define EFL_ID	0x200000
#define EFL_ARITH (EFL_CF | EFL_PF | EFL_AF | EFL_ZF | EFL_SF | EFL_OF)

#define FP_XSTATE_MAGIC1_ 0x46505853U

/* The kernel's software-reserved bytes at 464 of the signal FP frame. */
struct fpx_sw {
	uint32_t magic1;
	uint32_t extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size;
	uint32_t padding[7];
};

static struct sgxemu_fixup_entry fixups[64];

int sgxemu_register_fixup(uintptr_t aep, uintptr_t fixup, unsigned flags)
{
	if (!aep || !fixup || flags > SGXEMU_FIXUP_ALL)
		return -EINVAL;
	for (int i = 0; i < 64; i++) {
		if (atomic_load(&fixups[i].aep) == aep) {
			fixups[i].fixup = fixup;
			fixups[i].flags = flags;
			return 0;
		}
	}
	for (int i = 0; i < 64; i++) {
		uintptr_t zero = 0;

		if (atomic_load(&fixups[i].aep))
			continue;
		fixups[i].fixup = fixup;
		fixups[i].flags = flags;
		if (atomic_compare_exchange_strong(&fixups[i].aep, &zero, aep))
			return 0;
	}
	return -ENOSPC;
}

int sgxemu_unregister_fixup(uintptr_t aep)
{
	for (int i = 0; i < 64; i++) {
		if (aep && atomic_load(&fixups[i].aep) == aep) {
			atomic_store(&fixups[i].aep, 0);
			return 0;
		}
	}
	return -ENOENT;
}

uintptr_t sgxemu__fixup_find(uintptr_t aep, unsigned vector)
{
	if (!aep)
		return 0;	/* free slots hold aep 0 */
	for (int i = 0; i < 64; i++) {
		if (atomic_load(&fixups[i].aep) != aep)
			continue;
		if (fixups[i].flags == SGXEMU_FIXUP_LINUX &&
		    (vector == X86_TRAP_DB || vector == X86_TRAP_BP))
			return 0;
		return fixups[i].fixup;
	}
	return 0;
}

/* The signal frame's FP/XSAVE area: its size and XSAVE features. */
static uint8_t *fp_area(ucontext_t *uc, uint32_t *size)
{
	uint8_t *fp = (uint8_t *)uc->uc_mcontext.fpregs;
	struct fpx_sw sw;

	if (!fp)
		return NULL;
	memcpy(&sw, fp + 464, sizeof(sw));
	*size = sw.magic1 == FP_XSTATE_MAGIC1_ && sw.xstate_size >= 576 ?
		sw.xstate_size : 512;
	return fp;
}

/*
 * AEX: the XFRM features of the interrupted context go to INIT, and so
 * does every other feature the enclave could use (XCR0 stays the host's
 * in enclave mode, so an XFRM without AVX does not keep it from the YMM
 * registers), PKRU aside, which is the host's unless XFRM holds it; then
 * to_host() gives the host back its values of the features beyond XFRM
 * that it had in use (xstate.c). INIT is written into the bytes as well
 * as XSTATE_BV: the frame is the host's to read, and a cleared bit alone
 * left the enclave's values there.
 */
static void fp_init(ucontext_t *uc, uint64_t xfrm)
{
	uint32_t size;
	uint8_t *fp = fp_area(uc, &size);
	uint16_t fcw = 0x037f;
	uint32_t mxcsr = 0x1f80;
	uint64_t bv, init = ~SGX_XFRM_LEGACY & (xfrm | ~SGX_XFRM_PKRU);

	if (!fp)
		return;
	memset(fp, 0, 24);
	memcpy(fp, &fcw, 2);
	memcpy(fp + 24, &mxcsr, 4);
	memset(fp + 32, 0, 464 - 32);
	if (size < 576)
		return;
	memcpy(&bv, fp + 512, 8);
	bv &= ~init;
	memcpy(fp + 512, &bv, 8);
	for (unsigned i = 2; i < 64; i++) {
		uint32_t off = sgx_xsave_layout.offset[i];
		uint32_t n = sgx_xsave_layout.size[i];

		if ((init & (1ULL << i)) && n && off >= 576 && off + n <= size)
			memset(fp + off, 0, n);
	}
}

/* ERESUME: the frame's XSAVE image becomes the context's state. */
static void fp_load(struct sgx_lp *lp, ucontext_t *uc)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	uint64_t xfrm = lp->secs->attributes.xfrm;
	uint32_t size, mask, mxcsr;
	uint8_t *fp = fp_area(uc, &size);
	uint64_t bv, ssa_bv;

	if (!fp)
		return;
	memcpy(&mask, fp + 28, 4);
	sgx_encl_read(cpu, lp->ctl, lp->xsave, fp, 464);
	/* A bad MXCSR in the SSA must not make the sigreturn fail. */
	memcpy(&mxcsr, fp + 24, 4);
	mxcsr &= mask ? mask : 0xffbf;
	memcpy(fp + 24, &mxcsr, 4);
	memcpy(fp + 28, &mask, 4);
	if (size < 576)
		return;
	sgx_encl_read(cpu, lp->ctl, lp->xsave + 512, &ssa_bv, 8);
	memcpy(&bv, fp + 512, 8);
	bv = (bv & ~xfrm) | (ssa_bv & xfrm) | (xfrm & SGX_XFRM_LEGACY);
	memcpy(fp + 512, &bv, 8);
	for (unsigned i = 2; i < 64; i++) {
		uint32_t off = sgx_xsave_layout.offset[i];
		uint32_t n = sgx_xsave_layout.size[i];

		if ((ssa_bv & xfrm & (1ULL << i)) && n && off + n <= size)
			sgx_encl_read(cpu, lp->ctl, lp->xsave + off, fp + off, n);
	}
}

static void gregs_to_gpr(const greg_t *g, struct sgx_gprsgx *gpr)
{
	gpr->rax = g[REG_RAX]; gpr->rcx = g[REG_RCX];
	gpr->rdx = g[REG_RDX]; gpr->rbx = g[REG_RBX];
	gpr->rsp = g[REG_RSP]; gpr->rbp = g[REG_RBP];
	gpr->rsi = g[REG_RSI]; gpr->rdi = g[REG_RDI];
	gpr->r8 = g[REG_R8];   gpr->r9 = g[REG_R9];
	gpr->r10 = g[REG_R10]; gpr->r11 = g[REG_R11];
	gpr->r12 = g[REG_R12]; gpr->r13 = g[REG_R13];
	gpr->r14 = g[REG_R14]; gpr->r15 = g[REG_R15];
	gpr->rflags = g[REG_EFL];
	gpr->rip = g[REG_RIP];
}

/* Leave enclave mode in the saved state: host FS/GS, syscalls allowed. */
static void to_host(struct sgxemu_tcb *tcb, struct sgxemu_sigsave *save,
		    ucontext_t *uc)
{
	sgxemu__xstate_exit_frame(tcb, uc);
	sgxemu__kick_leave(tcb);
	sgxemu__tsc_leave();
	tcb->in_enclave = false;
	save->fs = tcb->host_fs;
	save->gs = tcb->host_gs;
	save->selector = SEL_ALLOW;
	sgxemu__guard_exit();
}

/*
 * The AEX itself: save into the SSA, load the synthetic state at the AEP.
 */
static uint32_t pf_errcd(struct sgxemu_tcb *tcb, uint64_t addr,
			 uint32_t kerr);

static void do_aex(struct sgxemu_tcb *tcb, ucontext_t *uc,
		   struct sgxemu_sigsave *save, bool exception,
		   unsigned vector, uint32_t errcd, uint64_t maddr,
		   uint64_t fault_rip)
{
	struct sgx_lp *lp = &tcb->lp;
	greg_t *g = uc->uc_mcontext.gregs;
	struct sgx_aex_event ev;
	uint32_t size = 0;

	memset(&ev, 0, sizeof(ev));
	gregs_to_gpr(g, &ev.gpr);
	ev.gpr.rip = fault_rip;
	ev.gpr.fsbase = save->fs;
	ev.gpr.gsbase = save->gs;
	ev.exception = exception;
	ev.vector = (uint8_t)vector;
	ev.error_code = errcd;
	ev.maddr = maddr;
	ev.xsave = fp_area(uc, &size);
	ev.xsave_size = size;
	sgxemu__resume_learn(tcb, uc);
	sgx_aex(sgxemu__cpu(), lp, &ev);
	tcb->aex_count++;
	SGXEMU_COUNT(tcb, SGXEMU_C_AEX);

	g[REG_RAX] = SGX_ERESUME;
	g[REG_RBX] = lp->tcs_linaddr;
	g[REG_RCX] = lp->aep;
	g[REG_RDX] = g[REG_RSI] = g[REG_RDI] = 0;
	g[REG_R8] = g[REG_R9] = g[REG_R10] = g[REG_R11] = 0;
	g[REG_R12] = g[REG_R13] = g[REG_R14] = g[REG_R15] = 0;
	g[REG_RSP] = lp->ursp;
	g[REG_RBP] = lp->urbp;
	g[REG_RIP] = lp->aep;
	g[REG_EFL] &= ~(EFL_ARITH | EFL_RF | EFL_TF);
	fp_init(uc, lp->secs->attributes.xfrm);
	sgxemu__altstack_fit(tcb, uc, lp->ursp);
	to_host(tcb, save, uc);
}

/*
 * After an AEX, when the thread is about to go on at an AEP and nothing
 * is to see it there first (the program's handler, if any, has run; no
 * fixup): go on at the AEP's trampoline (enclu_patch.c) on the AEP stack
 * instead, where the AEP has one, with URSP kept for the entry.
 * Not while the AEP stack is in use (an entry on it that a handler
 * interrupted, and which that handler's enclave entry would overwrite),
 * nor for a URSP on the alternate stack (frames the AEP stack's handlers
 * would not know about).
 */
static void aep_trampoline(struct sgxemu_tcb *tcb, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t t;

	if (tcb->aep_stack_busy ||
	    sgxemu__on_altstack(tcb, (uint64_t)g[REG_RSP]) ||
	    !(t = sgxemu__aep_trampoline((uintptr_t)g[REG_RIP])))
		return;
	tcb->aep_ursp = (uint64_t)g[REG_RSP];
	tcb->aep_stack_busy = true;
	g[REG_RSP] = (greg_t)sgxemu__aep_stack_top(tcb);
	g[REG_RIP] = (greg_t)t;
}

/* Deliver exception @vector (after its AEX) to a fixup or a handler. */
static void report(int signo, siginfo_t *orig, ucontext_t *uc,
		   unsigned vector, uint32_t errcd, uint64_t addr, uint64_t aep)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t fixup = sgxemu__fixup_find((uintptr_t)aep, vector);
	siginfo_t si;

	if (fixup) {
		g[REG_RIP] = fixup;
		g[REG_RDI] = vector;
		g[REG_RSI] = errcd;
		g[REG_RDX] = addr;
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_code = 0x80;		/* SI_KERNEL */
	si.si_addr = (void *)(uintptr_t)g[REG_RIP];
	switch (vector) {
	case X86_TRAP_DE:
		signo = SIGFPE;
		si.si_code = FPE_INTDIV;
		break;
	case X86_TRAP_MF:
	case X86_TRAP_XF:
		signo = SIGFPE;
		si.si_code = orig && orig->si_signo == SIGFPE ?
			     orig->si_code : FPE_FLTINV;
		break;
	case X86_TRAP_DB:
	case X86_TRAP_BP:
		signo = SIGTRAP;
		si.si_code = vector == X86_TRAP_DB ? TRAP_TRACE : 0x80;
		break;
	case X86_TRAP_UD:
		signo = SIGILL;
		si.si_code = ILL_ILLOPN;
		break;
	case X86_TRAP_AC:
		signo = SIGBUS;
		si.si_code = BUS_ADRALN;
		break;
	case X86_TRAP_PF:
		signo = SIGSEGV;
		si.si_code = (errcd & X86_PF_PROT) ? SEGV_ACCERR : SEGV_MAPERR;
		si.si_addr = (void *)(uintptr_t)addr;
		break;
	default:
		signo = SIGSEGV;
		si.si_addr = NULL;
		break;
	}
	si.si_signo = signo;
	g[REG_TRAPNO] = vector;
	g[REG_ERR] = errcd;
	uc->uc_mcontext.gregs[REG_CR2] = vector == X86_TRAP_PF ? addr : 0;
	sgxemu__chain(signo, &si, uc, true);
}

/*
 * Guard mode shuts every ELRANGE when the last thread leaves enclave mode
 * and opens them all at the next entry: one mprotect per run of pages,
 * thousands once the reclaimer has scattered protections. The exits of
 * paging (a fault-in, a kick) resume at once at the AEP, with only
 * sgxemu's code and the AEP's ERESUME in between, so they keep the guard's
 * reference instead; the next entry of this thread takes it over.
 */
static void keep_guard(struct sgxemu_tcb *tcb)
{
	if (!tcb->guard_kept) {
		sgxemu__guard_enter();
		tcb->guard_kept = true;
	}
}

static void drop_guard(struct sgxemu_tcb *tcb)
{
	if (tcb->guard_kept) {
		tcb->guard_kept = false;
		sgxemu__guard_exit();
	}
}

/* An entry: take over a kept reference, or open the guard. */
void sgxemu__guard_entry(struct sgxemu_tcb *tcb)
{
	if (tcb->guard_kept)
		tcb->guard_kept = false;
	else
		sgxemu__guard_enter();
}

/*
 * A page the driver could not load (ELDU refused its backing): the fault
 * the kernel gives, SIGBUS (BUS_ADRERR) at the address, or the exception
 * report of a fixup (vector 14) at the vDSO / C API.
 */
static void report_sigbus(ucontext_t *uc, uint32_t errcd, uint64_t addr,
			  uint64_t aep)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t fixup = sgxemu__fixup_find((uintptr_t)aep, X86_TRAP_PF);
	siginfo_t si;

	if (fixup) {
		g[REG_RIP] = fixup;
		g[REG_RDI] = X86_TRAP_PF;
		g[REG_RSI] = errcd;
		g[REG_RDX] = addr;
		return;
	}
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGBUS;
	si.si_code = BUS_ADRERR;
	si.si_addr = (void *)(uintptr_t)addr;
	g[REG_TRAPNO] = X86_TRAP_PF;
	g[REG_ERR] = errcd;
	g[REG_CR2] = addr;
	sgxemu__chain(SIGBUS, &si, uc, true);
}

/* What paging_fault() did. */
enum { PF_NOT_MINE, PF_RETRY, PF_EXITED };

/*
 * A #PF in enclave mode on a page the driver keeps inaccessible. What
 * needs no reclaim (an aging fault, an EAUG, a reload with EPC to spare,
 * a stale fault) is put right on the spot, with no exit: PF_RETRY, the
 * access may run again at once. Otherwise it is what Linux does: #PF, AEX
 * (SSA written, CSSA+1), the driver loads the page (ELDU) and maps it, and
 * the thread continues at the AEP, whose ERESUME resumes the enclave;
 * neither the application nor a fixup sees anything: PF_EXITED. The
 * enclave's own #PF is PF_NOT_MINE.
 */
static int paging_fault(struct sgxemu_tcb *tcb, ucontext_t *uc,
			struct sgxemu_sigsave *save, uint64_t addr,
			uint32_t kerr, uint64_t rip)
{
	struct sgxemu_enclave *e = tcb->encl;
	uint32_t errcd;

	switch (sgxemu__encl_fault_enclave(e, addr, kerr)) {
	case 1:
		tcb->stale_faults = 0;
		return PF_RETRY;
	case 2:
		tcb->stale_faults = 0;
		break;
	case 3:
		/* Bounded, in case the mapping disagrees for good. */
		return ++tcb->stale_faults < 1000 ? PF_RETRY : PF_NOT_MINE;
	default:
		tcb->stale_faults = 0;
		return PF_NOT_MINE;
	}
	errcd = pf_errcd(tcb, addr, kerr);
	keep_guard(tcb);
	do_aex(tcb, uc, save, true, X86_TRAP_PF, errcd, addr, rip);
	if (sgxemu__encl_fault(e, addr)) {
		drop_guard(tcb);
		report_sigbus(uc, errcd, addr & ~(uint64_t)(SGX_PAGE_SIZE - 1),
			      tcb->lp.aep);
	} else {
		aep_trampoline(tcb, uc);
	}
	return PF_EXITED;
}

/* Whether the EPCM refuses the access @kerr describes at @addr, so that
 * no mapping can let it run (the host's protection is EPCM AND the
 * mapping's, map.c). */
static bool epcm_refuses(struct sgxemu_tcb *tcb, uint64_t addr, uint32_t kerr)
{
	struct sgxemu_enclave *e = tcb->encl;
	int prot;

	if (!e || addr < e->base || addr - e->base >= e->size)
		return false;
	prot = sgxemu__epcm_prot(e, (addr - e->base) >> SGX_PAGE_SHIFT);
	if (kerr & X86_PF_INSTR)
		return !(prot & PROT_EXEC);
	if (kerr & X86_PF_WRITE)
		return !(prot & PROT_WRITE);
	return !(prot & PROT_READ);
}

/* Bytes at enclave address @addr, through the processor's EPC view (a
 * sgxemu_read_fn; @ctx is the thread's TCB). */
static bool enclave_bytes(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	struct sgxemu_tcb *tcb = ctx;
	struct sgx_encl_ctl *ctl = tcb->lp.ctl;

	if (addr < ctl->base || addr - ctl->base >= ctl->size ||
	    n > ctl->base + ctl->size - addr)
		return false;
	sgx_encl_read(sgxemu__cpu(), ctl, addr, buf, n);
	return true;
}

/* #PF error code as hardware would report it, with bit 15 for a fault
 * the mapping allows and the EPCM refuses. */
static uint32_t pf_errcd(struct sgxemu_tcb *tcb, uint64_t addr, uint32_t kerr)
{
	struct sgxemu_enclave *e = tcb->encl;
	uint32_t err = (kerr & (X86_PF_PROT | X86_PF_WRITE | X86_PF_INSTR |
				X86_PF_RSVD | X86_PF_PK)) | X86_PF_USER;
	int map, epcm;
	size_t page;
	bool allowed_map, allowed_epcm;

	if (!e || addr < e->base || addr - e->base >= e->size)
		return err;
	page = (addr - e->base) >> SGX_PAGE_SHIFT;
	if (!__atomic_load_n(&e->ctl->pages[page], __ATOMIC_ACQUIRE))
		return err;		/* no EPC page: not mapped */
	map = e->map_prot[page];
	if (map & SGXEMU_MAP_REFUSED)
		return err & ~X86_PF_PROT;	/* no PTE: not present */
	epcm = sgxemu__epcm_prot(e, page);
	if (kerr & X86_PF_INSTR) {
		allowed_map = map & PROT_EXEC;
		allowed_epcm = epcm & PROT_EXEC;
	} else if (kerr & X86_PF_WRITE) {
		allowed_map = map & PROT_WRITE;
		allowed_epcm = epcm & PROT_WRITE;
	} else {
		allowed_map = map != PROT_NONE;
		allowed_epcm = epcm & PROT_READ;
	}
	if (allowed_map && !allowed_epcm)
		err |= X86_PF_SGX | X86_PF_PROT;
	return err;
}

static void exception(struct sgxemu_tcb *tcb, int signo, siginfo_t *info,
		      ucontext_t *uc, struct sgxemu_sigsave *save,
		      unsigned vector, uint32_t errcd, uint64_t maddr,
		      uint64_t fault_rip)
{
	if (sgxemu__platform.debug) {
		sgxemu__write_str("sgxemu: exception in enclave mode: AEX, vector ");
		sgxemu__write_hex(vector);
		sgxemu__write_str(" err ");
		sgxemu__write_hex(errcd);
		sgxemu__write_str(" addr ");
		sgxemu__write_hex(maddr);
		sgxemu__write_str(" rip ");
		sgxemu__write_hex(fault_rip);
		sgxemu__write_str(" fs ");
		sgxemu__write_hex(save->fs);
		sgxemu__write_str(" gs ");
		sgxemu__write_hex(save->gs);
		{
			uint8_t b[8];

			if (enclave_bytes(tcb, fault_rip, b, sizeof(b))) {
				sgxemu__write_str(" bytes");
				for (size_t i = 0; i < sizeof(b); i++) {
					sgxemu__write_str(" ");
					sgxemu__write_hex(b[i]);
				}
			}
		}
		sgxemu__write_str("\n");
	}
	if (sgxemu__debug_refault(tcb, signo, info, uc, vector, fault_rip))
		return;		/* a debugger sees it fault first */
	do_aex(tcb, uc, save, true, vector, errcd, maddr, fault_rip);
	report(signo, info, uc, vector, errcd,
	       vector == X86_TRAP_PF ? maddr & ~(SGX_PAGE_SIZE - 1) : 0,
	       tcb->lp.aep);
}

static void copy_out(struct sgxemu_run *run, const greg_t *g)
{
	struct sgxemu_regs *r = &run->regs;

	r->rax = g[REG_RAX]; r->rbx = g[REG_RBX]; r->rcx = g[REG_RCX];
	r->rdx = g[REG_RDX]; r->rsi = g[REG_RSI]; r->rdi = g[REG_RDI];
	r->rbp = g[REG_RBP]; r->rsp = g[REG_RSP];
	r->r8 = g[REG_R8];   r->r9 = g[REG_R9];   r->r10 = g[REG_R10];
	r->r11 = g[REG_R11]; r->r12 = g[REG_R12]; r->r13 = g[REG_R13];
	r->r14 = g[REG_R14]; r->r15 = g[REG_R15];
	r->rflags = g[REG_EFL];
}

/* The registers through which @leaf addresses memory: RBX, RCX, RDX as
 * bits 0-2 (EREPORT's TARGETINFO, REPORTDATA, REPORT; EGETKEY's
 * KEYREQUEST and key; the SECINFO, page and source of the EACCEPTs and
 * EMODPE). */
static unsigned leaf_operands(uint32_t leaf)
{
	switch (leaf) {
	case SGX_EREPORT:
	case SGX_EACCEPTCOPY:
		return 7;
	case SGX_EGETKEY:
	case SGX_EACCEPT:
	case SGX_EMODPE:
		return 3;
	default:
		return 0;
	}
}

/* Of those, the data @leaf reads or (bits in *@writes: EREPORT's REPORT,
 * EGETKEY's key) writes through the page tables: all but the page the
 * EACCEPTs and EMODPE act on, of which they use the EPCM entry. */
static unsigned leaf_data_operands(uint32_t leaf, unsigned *writes)
{
	*writes = leaf == SGX_EREPORT ? 4 : leaf == SGX_EGETKEY ? 2 : 0;
	switch (leaf) {
	case SGX_EACCEPTCOPY:
		return 5;
	case SGX_EACCEPT:
	case SGX_EMODPE:
		return 1;
	default:
		return leaf_operands(leaf);
	}
}

/*
 * A data operand of @leaf whose mapping refuses the access (a read where
 * the window is PROT_NONE, a write where it lacks PROT_WRITE): hardware's
 * page walk faults before the EPCM is looked at, a #PF without the SGX
 * bit. The leaf reads and writes the EPC directly, so this is checked
 * first. Its address and *@errcd, or 0.
 */
static uint64_t unmapped_operand(struct sgxemu_tcb *tcb, const greg_t *g,
				 uint32_t leaf, uint32_t *errcd)
{
	const uint64_t ops[3] = { g[REG_RBX], g[REG_RCX], g[REG_RDX] };
	struct sgxemu_enclave *e = tcb->encl;
	unsigned writes, regs = leaf_data_operands(leaf, &writes);

	for (int i = 0; e && i < 3; i++) {
		bool w = writes & (1U << i);
		int map;

		if (!(regs & (1U << i)) || ops[i] < e->base ||
		    ops[i] - e->base >= e->size)
			continue;
		map = e->map_prot[(ops[i] - e->base) >> SGX_PAGE_SHIFT];
		if (map & SGXEMU_MAP_REFUSED)
			continue;	/* refused_operand()'s */
		map &= PROT_READ | PROT_WRITE | PROT_EXEC;
		if (w ? !(map & PROT_WRITE) : map == PROT_NONE) {
			*errcd = X86_PF_USER | (w ? X86_PF_WRITE : 0) |
				 (map ? X86_PF_PROT : 0);
			return ops[i];
		}
	}
	return 0;
}

/*
 * The operand of @leaf whose EPCM check refused it (SGX_PF on a resident
 * page): its address, and in *@kerr the access (write for the outputs),
 * for the #PF hardware would report there. 0 if none does.
 */
static uint64_t refused_epcm_operand(struct sgxemu_tcb *tcb, const greg_t *g,
				     uint32_t leaf, uint32_t *kerr)
{
	const uint64_t ops[3] = { g[REG_RBX], g[REG_RCX], g[REG_RDX] };
	unsigned regs = leaf_operands(leaf), writes;

	leaf_data_operands(leaf, &writes);

	for (int i = 0; i < 3; i++) {
		bool w = writes & (1U << i);
		void *p;

		if ((regs & (1U << i)) &&
		    sgx_encl_operand(sgxemu__cpu(), tcb->lp.ctl, ops[i], 1, 1,
				     w, &p) == SGX_PF) {
			/* The page is there (pf_errcd() knows when its
			 * mapping is not). */
			*kerr = X86_PF_USER | X86_PF_PROT |
				(w ? X86_PF_WRITE : 0);
			return ops[i];
		}
	}
	return 0;
}

/*
 * ENCLU's #PF on a memory operand of @leaf on a paged-out page, or on no
 * page at all where SGX2 adds one on fault (EACCEPT of a page not yet
 * there is how runtimes grow their heap, Gramine's included): the leaf's
 * #PF is the driver's to handle, as for any access. @pf_addr gets the
 * first operand in ELRANGE, for the #PF the enclave sees if nobody
 * handles it.
 */
static int operand_fault(struct sgxemu_tcb *tcb, ucontext_t *uc,
			 struct sgxemu_sigsave *save, uint32_t leaf,
			 uint64_t rip, uint64_t *pf_addr)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const uint64_t ops[3] = { g[REG_RBX], g[REG_RCX], g[REG_RDX] };
	struct sgxemu_enclave *e = tcb->encl;
	unsigned regs = leaf_operands(leaf);

	for (int i = 0; e && i < 3; i++) {
		int r;

		if (!(regs & (1U << i)) || ops[i] < e->base ||
		    ops[i] - e->base >= e->size)
			continue;
		/* A resident page the leaf faulted on for another reason is
		 * not the driver's. */
		if (sgx_cpu_lookup(sgxemu__cpu(), ops[i]) >= 0 &&
		    !sgxemu__encl_hidden(e, (ops[i] - e->base) >>
					    SGX_PAGE_SHIFT))
			continue;
		if (!*pf_addr)
			*pf_addr = ops[i];
		r = paging_fault(tcb, uc, save, ops[i], X86_PF_USER, rip);
		if (r != PF_NOT_MINE)
			return r;
	}
	return PF_NOT_MINE;
}

/*
 * An operand of @leaf on a page the driver refuses to map (map_prot's
 * SGXEMU_MAP_REFUSED): the leaf reads the EPC directly, but hardware
 * would take the page walk's #PF first, which the driver answers with
 * SIGBUS (linux-driver-facts §8.1 step 3.2).
 */
static int refused_operand(struct sgxemu_tcb *tcb, ucontext_t *uc,
			   struct sgxemu_sigsave *save, uint32_t leaf,
			   uint64_t rip)
{
	greg_t *g = uc->uc_mcontext.gregs;
	const uint64_t ops[3] = { g[REG_RBX], g[REG_RCX], g[REG_RDX] };
	struct sgxemu_enclave *e = tcb->encl;
	unsigned regs = leaf_operands(leaf);

	for (int i = 0; e && i < 3; i++)
		if ((regs & (1U << i)) && sgxemu__map_refused(e, ops[i]))
			return paging_fault(tcb, uc, save, ops[i], X86_PF_USER,
					    rip);
	return PF_NOT_MINE;
}

static void enclu_in_enclave(struct sgxemu_tcb *tcb, siginfo_t *info,
			     ucontext_t *uc, struct sgxemu_sigsave *save)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = g[REG_RIP];
	uint32_t leaf = (uint32_t)g[REG_RAX];
	uint64_t rax, pf_addr = 0;
	bool zf;
	int ret;

	SGXEMU_COUNT(tcb, SGXEMU_C_ENCLAVE_ENCLU);
	if (leaf == SGX_EEXIT) {
		uint64_t target = g[REG_RBX];

		if ((uint64_t)((int64_t)(target << 16) >> 16) != target) {
			exception(tcb, SIGSEGV, info, uc, save, X86_TRAP_GP, 0,
				  0, rip);
			return;
		}
		sgx_eexit(sgxemu__cpu(), &tcb->lp);
		g[REG_RCX] = tcb->lp.aep;
		g[REG_RIP] = target;
		sgxemu__altstack_fit(tcb, uc, (uint64_t)g[REG_RSP]);
		to_host(tcb, save, uc);
		if (target == (uint64_t)(uintptr_t)sgxemu__api_eexit &&
		    tcb->api_run) {
			/* sgxemu_enter(): hand the registers over and give
			 * the entry helper its stack back. */
			copy_out(tcb->api_run, g);
			g[REG_RSP] = tcb->lp.ursp;
		}
		return;
	}
	/*
	 * A leaf whose operand the driver brought in with no exit runs again
	 * here rather than by one more trap: on hardware that rerun is the
	 * instruction restarting, and an EACCEPT that grows a heap costs one
	 * trap a page, not two.
	 */
	if (refused_operand(tcb, uc, save, leaf, rip) == PF_EXITED)
		return;
	{
		uint32_t errcd;
		uint64_t addr = unmapped_operand(tcb, g, leaf, &errcd);

		if (addr) {
			exception(tcb, SIGSEGV, info, uc, save, X86_TRAP_PF,
				  errcd, addr, rip);
			return;
		}
	}
	for (int tries = 0;; tries++) {
		ret = sgx_enclu_user(sgxemu__cpu(), &tcb->lp, leaf, g[REG_RBX],
				     g[REG_RCX], g[REG_RDX], &rax, &zf);
		if (ret != SGX_PF || tries == 3)
			break;
		/* EDECCSSA's operand is an SSA frame of the thread's TCS. */
		if (leaf == SGX_EDECCSSA &&
		    sgxemu__encl_prefault_entry(tcb->encl, tcb->lp.tcs_linaddr))
			continue;
		switch (operand_fault(tcb, uc, save, leaf, rip, &pf_addr)) {
		case PF_RETRY:
			continue;
		case PF_EXITED:
			return;
		}
		break;
	}
	if (ret) {
		unsigned v = SGX_IS_FAULT(ret) ? SGX_FAULT_VECTOR(ret)
					       : X86_TRAP_GP;

		if (v == X86_TRAP_PF) {
			/* The operand's #PF, as hardware reports it. */
			uint32_t kerr = X86_PF_USER;

			if (!pf_addr)
				pf_addr = refused_epcm_operand(tcb, g, leaf,
							       &kerr);
			exception(tcb, SIGSEGV, info, uc, save, v,
				  pf_errcd(tcb, pf_addr, kerr), pf_addr, rip);
			return;
		}
		exception(tcb, v == X86_TRAP_UD ? SIGILL : SIGSEGV, info, uc,
			  save, v, 0, 0, rip);
		return;
	}
	g[REG_RAX] = rax;
	g[REG_EFL] &= ~EFL_ARITH;
	if (zf)
		g[REG_EFL] |= EFL_ZF;
	g[REG_RIP] = rip + 3;
}

void sgxemu__enclave_signal(int signo, siginfo_t *info, ucontext_t *uc,
			    struct sgxemu_tcb *tcb,
			    struct sgxemu_sigsave *save)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = g[REG_RIP];
	struct sgxemu_event ev;

	if (rip >= (uint64_t)(uintptr_t)sgxemu__commit_start &&
	    rip <= (uint64_t)(uintptr_t)sgxemu__commit_end) {
		/* In the fast path's last instructions: finish them here,
		 * then this is an interruption at OENTRY. */
		g[REG_RAX] = tcb->entry_rax;
		g[REG_RCX] = tcb->entry_rcx;
		g[REG_EFL] = tcb->entry_rflags;
		g[REG_RSP] = tcb->entry_rsp;
		g[REG_RIP] = tcb->entry_rip;
		save->fs = tcb->enc_fs;
		save->gs = tcb->enc_gs;
		rip = tcb->entry_rip;
	}
	if (signo == SGXEMU_KICK_SIGNAL) {
		/* The reclaimer's kick or the tick's timer (SI_TIMER): an
		 * interrupt, nothing to deliver. */
		if (info->si_code == SI_TIMER)
			SGXEMU_COUNT(tcb, SGXEMU_C_TICK_AEX);
		keep_guard(tcb);
		do_aex(tcb, uc, save, false, 0, 0, 0, rip);
		aep_trampoline(tcb, uc);
		return;
	}
	signo = sgxemu__fault_style_apply(signo, info, uc, true, enclave_bytes,
					  tcb);
	sgxemu__classify(signo, info, uc, true, enclave_bytes, tcb, &ev);
	switch (ev.kind) {
	case SGXEMU_EV_INTERRUPT:
		do_aex(tcb, uc, save, false, 0, 0, 0, rip);
		sgxemu__chain(signo, info, uc, false);
		/* The program's handler saw the AEP; it returned there. */
		aep_trampoline(tcb, uc);
		return;
	case SGXEMU_EV_SYSCALL:
		/* SYSCALL (or INT 0x80, SYSENTER: 2 bytes too) in enclave
		 * mode: #UD at the instruction. The CPU has already put the
		 * return address in RCX and RFLAGS in R11 (syscall only). */
		g[REG_RAX] = (greg_t)(uint64_t)(uint32_t)info->si_syscall;
		exception(tcb, SIGILL, info, uc, save, X86_TRAP_UD, 0, 0,
			  ev.rip);
		return;
	case SGXEMU_EV_ENCLU:
		enclu_in_enclave(tcb, info, uc, save);
		return;
	case SGXEMU_EV_CPUID:
		/* Answered as host CPUID is (sgxemu__cpuid_enclave says why),
		 * or the #UD below. */
		if (sgxemu__cpuid_enclave(uc, tcb->lp.secs->attributes.xfrm))
			return;
		break;
	case SGXEMU_EV_EXCEPTION:
		break;
	}
	if (ev.vector == X86_TRAP_GP && sgxemu__tsc_trapped) {
		uint8_t b[3];
		size_t n = sgxemu__tsc_read(enclave_bytes, tcb, rip, b);

		/* The #GP of CR4.TSD: the #UD of an SGX1 part (tsc.c). */
		if (sgxemu__tsc_is_trap(signo, info, b, n)) {
			exception(tcb, SIGILL, info, uc, save, X86_TRAP_UD, 0,
				  0, rip);
			return;
		}
	}
	if (ev.vector == X86_TRAP_UD && tcb->encl && tcb->encl->nr_fsgs) {
		/* A base write made to trap (fsgs_sites.c). */
		int r = sgxemu__fsgs_emulate(tcb, tcb->encl, uc, save);

		if (r == 0)
			return;
		if (r > 0) {
			exception(tcb, SIGSEGV, info, uc, save, X86_TRAP_GP, 0,
				  0, rip);
			return;
		}
	}
	if (ev.vector == X86_TRAP_UD && sgxemu__fsgsbase_emulated) {
		/* The platform's FSGSBASE, on a kernel that left it off. */
		int r = sgxemu__fsgsbase_emulate(uc, enclave_bytes, tcb,
						 &save->fs, &save->gs);

		if (r == 0) {
			tcb->enc_fs = save->fs;
			tcb->enc_gs = save->gs;
			return;
		}
		if (r > 0) {
			exception(tcb, SIGSEGV, info, uc, save, X86_TRAP_GP, 0,
				  0, rip);
			return;
		}
	}
	if (ev.vector != X86_TRAP_PF) {
		/* #DB and #BP are traps: RIP is already past them. */
		exception(tcb, signo, info, uc, save, ev.vector, ev.errcd, 0,
			  rip);
		return;
	}
	switch (paging_fault(tcb, uc, save, ev.addr, ev.errcd, rip)) {
	case PF_RETRY:
		/*
		 * The page the driver put there at once is one the EPCM
		 * still refuses this access (EAUG's pending page, until the
		 * enclave's EACCEPT): the access would only fault again, as
		 * the enclave's own #PF, so that #PF is taken now, not after
		 * one more signal. A page that may allow it runs again.
		 */
		if (!epcm_refuses(tcb, ev.addr, ev.errcd) ||
		    paging_fault(tcb, uc, save, ev.addr, ev.errcd, rip) !=
		    PF_NOT_MINE)
			return;
		break;
	case PF_NOT_MINE:
		break;
	default:
		return;
	}
	switch (sgxemu__xsave_replay(tcb, uc, save, rip)) {
	case 0:
		return;
	case 1:
		exception(tcb, SIGSEGV, info, uc, save, X86_TRAP_GP, 0, 0, rip);
		return;
	}
	exception(tcb, signo, info, uc, save, X86_TRAP_PF,
		  pf_errcd(tcb, ev.addr, ev.errcd), ev.addr, rip);
}

/* The trampoline's caller is a host ENCLU that enclu_patch.c rewrote. */
static bool from_rewritten_site(const greg_t *g)
{
	uint64_t next;

	memcpy(&next, (void *)(uintptr_t)g[REG_RSP], 8);
	return sgxemu__enclu_fault_rip(next, 0) != 0;
}

/*
 * Enclave mode after a successful EENTER or ERESUME in tcb->lp, written
 * into @uc (the trap's frame, or the one the fast ERESUME builds as it
 * would be: resume.c) and @save (which holds the interrupted host bases).
 */
void sgxemu__entry_commit(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e,
			  ucontext_t *uc, struct sgxemu_sigsave *save,
			  uint32_t leaf, uint64_t next, uint64_t rsp)
{
	greg_t *g = uc->uc_mcontext.gregs;
	struct sgx_lp *lp = &tcb->lp;

	tcb->encl = e;
	tcb->in_enclave = true;
	/* Entered from a handler on this alternate stack: its frames stay. */
	sgxemu__altstack_fit(tcb, uc, rsp);
	sgxemu__kick_enter(tcb, e);
	sgxemu__tsc_enter();
	/* The interrupted host bases, as the stub saved them (the handler
	 * itself may run on the TCB's recorded ones). */
	tcb->host_fs = save->fs;
	tcb->host_gs = sgxemu__host_gs(tcb, save->gs);
	if (leaf == SGX_EENTER || lp->notify) {
		/* An AEX notification enters as EENTER does (enclu.h). */
		g[REG_RAX] = lp->cssa;
		g[REG_RCX] = next;
		g[REG_RIP] = lp->rip;
		g[REG_RSP] = rsp;
		if (!(lp->tcs->flags & SGX_TCS_DBGOPTIN))
			g[REG_EFL] &= ~EFL_TF;
	} else {
		struct sgx_gprsgx *r = lp->gpr;
		const uint64_t keep = EFL_ARITH | EFL_DF | EFL_AC | EFL_ID;

		g[REG_RAX] = r->rax; g[REG_RBX] = r->rbx; g[REG_RCX] = r->rcx;
		g[REG_RDX] = r->rdx; g[REG_RSI] = r->rsi; g[REG_RDI] = r->rdi;
		g[REG_RSP] = r->rsp; g[REG_RBP] = r->rbp;
		g[REG_R8] = r->r8;   g[REG_R9] = r->r9;   g[REG_R10] = r->r10;
		g[REG_R11] = r->r11; g[REG_R12] = r->r12; g[REG_R13] = r->r13;
		g[REG_R14] = r->r14; g[REG_R15] = r->r15;
		g[REG_RIP] = r->rip;
		g[REG_EFL] = (g[REG_EFL] & ~(keep | EFL_TF)) | (r->rflags & keep);
		fp_load(lp, uc);
	}
	sgxemu__xstate_enter_frame(tcb, uc, lp->secs->attributes.xfrm);
	tcb->enc_fs = lp->fsbase;
	tcb->enc_gs = lp->gsbase;
	save->fs = lp->fsbase;
	save->gs = lp->gsbase;
	save->selector = SEL_BLOCK;
	sgxemu__guard_entry(tcb);
}

/*
 * Host ENCLU[EENTER/ERESUME]. @tcb is NULL on a thread that was never set
 * up: set it up and let the instruction trap again, now on the alternate
 * stack with the stub's full save/restore around us.
 */
bool sgxemu__host_enclu(const struct sgxemu_event *ev, siginfo_t *info,
			ucontext_t *uc, struct sgxemu_tcb *tcb,
			struct sgxemu_sigsave *save)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = g[REG_RIP], rsp, next, tcs, aep, last_aep;
	bool trampoline = rip == (uint64_t)(uintptr_t)sgxemu__enclu_trap;
	struct sgxemu_enclave *e;
	struct sgx_lp *lp;
	uint32_t leaf = (uint32_t)g[REG_RAX];
	int ret;

	(void)info;
	if (ev->kind != SGXEMU_EV_ENCLU || !sgxemu__platform.ready)
		return false;
	if (trampoline && tcb &&
	    sgxemu__aep_stack_owner((uint64_t)g[REG_RSP] + 8) == tcb) {
		/*
		 * From an AEP's trampoline on the AEP stack (aep_trampoline):
		 * this is the program's own ENCLU after its AEP, on URSP, and
		 * the AEP stack is free again.
		 */
		memcpy(&next, (void *)(uintptr_t)g[REG_RSP], 8);
		g[REG_RSP] = (greg_t)tcb->aep_ursp;
		g[REG_RIP] = (greg_t)(next - 3);
		tcb->aep_stack_busy = false;
		rip = next - 3;
		trampoline = false;
	}
	/*
	 * The entry's own ENCLU (its slow path: ERESUME after an AEX, a
	 * thread's first entry) is the vDSO's or the API's, not the
	 * program's, and stays on with the emulation of host ENCLU off;
	 * unless it was reached from a site rewritten while it was on.
	 */
	if (!__atomic_load_n(&sgxemu__platform.host_enclu, __ATOMIC_ACQUIRE) &&
	    (!trampoline || from_rewritten_site(g)))
		return false;
	SGXEMU_COUNT(tcb, SGXEMU_C_HOST_ENCLU);
	if (leaf != SGX_EENTER && leaf != SGX_ERESUME) {
		/*
		 * Outside enclave mode every other leaf (EEXIT, EREPORT,
		 * EGETKEY, an unknown one) is #GP(0) on SGX hardware: the
		 * program sees SIGSEGV, SI_KERNEL, trap 13, whatever this
		 * host raised for it.
		 */
		if (trampoline) {
			/* The caller's `call` stands for the ENCLU: the
			 * fault is seen at its return point. */
			memcpy(&next, (void *)(uintptr_t)g[REG_RSP], 8);
			g[REG_RSP] += 8;
			g[REG_RIP] = (greg_t)next;
		}
		report(SIGSEGV, NULL, uc, X86_TRAP_GP, 0, 0, 0);
		return true;
	}
	if (!tcb) {
		/*
		 * A thread that was never set up (and whose handler may be
		 * running on someone else's alternate stack, where
		 * sigaltstack() cannot be changed): continue in host mode as
		 * if the program had called the fast path at the ENCLU, with
		 * the return point after it. The fast path sets the thread up
		 * and enters (or traps here again, now with a TCB). The push
		 * uses the 8 bytes below RSP, as the call of the vDSO entry
		 * would.
		 */
		uint64_t ret = rip + 3, sp = (uint64_t)g[REG_RSP] - 8;

		/*
		 * TLS says set up, the stack says not: a thread made by a raw
		 * clone() on another thread's FS base (Gramine's host
		 * threads). The fast path would take the other thread's TCB,
		 * so set this one up here, without TLS (this handler is on
		 * the thread's own stack, so sigaltstack() may change), and
		 * let the ENCLU trap again on the new alternate stack. (Also
		 * at the fast path's own ENCLU, which such a thread reaches
		 * from a rewritten site: enclu_patch.c.)
		 */
		if (sgxemu__tcb_foreign()) {
			if (!sgxemu__tcb_prepare_foreign())
				return false;
			sgxemu__sigreturn_altstack(uc);
			return true;
		}
		if (trampoline)
			return false;
		memcpy((void *)(uintptr_t)sp, &ret, 8);
		g[REG_RSP] = (greg_t)sp;
		g[REG_RIP] = (greg_t)(uintptr_t)sgxemu_enclu_entry;
		return true;
	}

	if (trampoline) {
		rsp = g[REG_RSP] + 8;
		memcpy(&next, (void *)(uintptr_t)g[REG_RSP], 8);
	} else {
		rsp = g[REG_RSP];
		next = rip + 3;
	}
	tcs = g[REG_RBX];
	aep = g[REG_RCX];
	e = sgxemu__encl_find(tcs);
	lp = &tcb->lp;
	if (e && sgxemu__map_refused(e, tcs)) {
		/* The TCS's page walk: #PF, which the driver answers with
		 * SIGBUS (§8.1 step 3.2), at the ENCLU as below. */
		drop_guard(tcb);
		g[REG_RSP] = rsp;
		if (trampoline)
			g[REG_RIP] = sgxemu__enclu_fault_rip(next, aep);
		report_sigbus(uc, X86_PF_USER, tcs & ~(SGX_PAGE_SIZE - 1), aep);
		return true;
	}
	/* Where this thread's last AEX went (its AEP), before ERESUME
	 * takes the new one from RCX. */
	last_aep = lp->aep;
	for (int tries = 0;; tries++) {
		if (leaf == SGX_EENTER)
			ret = sgx_eenter(sgxemu__cpu(), e ? e->ctl : NULL, tcs,
					 aep, rsp, g[REG_RBP], lp);
		else
			ret = sgx_eresume(sgxemu__cpu(), e ? e->ctl : NULL,
					  tcs, aep, rsp, g[REG_RBP], lp);
		/*
		 * A paged-out TCS or SSA page: as on Linux, the ENCLU's #PF
		 * is the kernel's to handle (it loads the page and the
		 * instruction runs again); only a fault that stands after
		 * that reaches the program.
		 */
		if (ret != SGX_PF || tries >= 8 ||
		    !sgxemu__encl_prefault_entry(e, tcs))
			break;
	}
	if (ret) {
		unsigned v = SGX_IS_FAULT(ret) ? SGX_FAULT_VECTOR(ret)
					       : X86_TRAP_GP;
		uint32_t err = v == X86_TRAP_PF ?
			X86_PF_PROT | X86_PF_USER | X86_PF_SGX : 0;
		uint64_t addr = v == X86_TRAP_PF ?
			tcs & ~(SGX_PAGE_SIZE - 1) : 0;

		drop_guard(tcb);
		if (sgxemu__platform.debug) {
			sgxemu__write_str("sgxemu: ENCLU leaf ");
			sgxemu__write_hex(leaf);
			sgxemu__write_str(" at TCS ");
			sgxemu__write_hex(tcs);
			sgxemu__write_str(" refused (SGX fault/error ");
			sgxemu__write_hex((uint64_t)ret);
			sgxemu__write_str(")\n");
		}
		/* The fault is the ENCLU's: as if at the AEP for the
		 * trampoline (whose "ENCLU" is the caller's call), at the
		 * program's own ENCLU for a rewritten site. */
		g[REG_RSP] = rsp;
		if (trampoline)
			g[REG_RIP] = sgxemu__enclu_fault_rip(next, aep);
		report(SIGSEGV, NULL, uc, v, err, addr, aep);
		return true;
	}
	sgxemu__entry_commit(tcb, e, uc, save, leaf, next, rsp);
	/* The program's own ENCLU: enter or resume without a trap next
	 * time where it can be rewritten (enclu_patch.c). */
	if (leaf == SGX_EENTER && !trampoline)
		sgxemu__enclu_patch(rip);
	else if (leaf == SGX_ERESUME && !trampoline && aep == last_aep)
		/* From the AEP the AEX went to (RCX unchanged there). */
		sgxemu__enclu_patch_resume(rip, aep);
	return true;
}
