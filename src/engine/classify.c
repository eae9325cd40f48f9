/* SPDX-License-Identifier: MIT */
/*
 * What the thread did, from a signal: the classification every engine
 * handler starts with (DESIGN.md, "How an enclave runs").
 *
 * ENCLU on a processor without SGX (or with SGX off, or outside enclave
 * mode) does not raise one fixed signal: AMD parts raise #UD (SIGILL),
 * Intel parts #GP (SIGSEGV, SI_KERNEL, trap 13), and for EENTER/ERESUME
 * on a page that is not EPC a #PF with the SGX bit (SIGSEGV, trap 14) or,
 * on a PROT_NONE TCS, a plain #PF. So the signal number decides nothing:
 * a synchronous #UD, #GP or #PF that is not an instruction fetch, at an
 * address holding 0f 01 d7, is "ENCLU executed", whichever signal carried
 * it. The instruction bytes are read through a copy that cannot fault (the
 * EPC view in enclave mode, process_vm_readv in host mode), and the test
 * comes before any paging-fault handling, which would otherwise take an
 * ENCLU's #PF on a paged-out TCS for the host's own access.
 *
 * SGXEMU_FAULT_STYLE=ud|gp turns the ENCLU faults this host delivers into
 * the other vendor's before classification, so both kinds run through the
 * whole engine on either machine (tests/integration/test_fault_style.sh).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/engine.h"

#define SYS_USER_DISPATCH_CODE	2	/* si_code of a dispatched SYSCALL */

enum sgxemu_fault_style sgxemu__fault_style;

void sgxemu__fault_style_init(void)
{
	const char *v = getenv("SGXEMU_FAULT_STYLE");

	if (v && !strcmp(v, "ud"))
		sgxemu__fault_style = SGXEMU_STYLE_UD;
	else if (v && !strcmp(v, "gp"))
		sgxemu__fault_style = SGXEMU_STYLE_GP;
	else
		sgxemu__fault_style = SGXEMU_STYLE_NATIVE;
}

/*
 * Host memory that may be unmapped or PROT_NONE (the faulting RIP itself,
 * for an instruction-fetch fault): one system call, async-signal-safe.
 */
static int vm_readv_refused;

/*
 * Pages of code read safely before. A runtime that enters by its own
 * ENCLU traps at the same two or three instructions at every ECALL and
 * OCALL, and the read that tells an ENCLU from another #UD cost a system
 * call each time (the Intel SDK's urts without the vDSO: about a third of
 * an empty ECALL). A trap that comes after the instruction was fetched and
 * decoded (#UD, #GP) proves its page executable now, hence readable
 * (x86), and one read before proved it mapped at that address: such a
 * page is read directly (sgxemu__host_read_fetched). The one exception is
 * a page remapped execute-only with protection keys since, where the
 * direct read would fault.
 */
#define FETCHED_PAGES 16
static _Atomic uint64_t fetched_pages[FETCHED_PAGES];

static unsigned fetched_slot(uint64_t page)
{
	return (unsigned)((page >> 12) ^ (page >> 20)) % FETCHED_PAGES;
}

static void fetched_remember(uint64_t addr, size_t n)
{
	uint64_t page = addr & ~0xfffULL;

	if (((addr + n - 1) & ~0xfffULL) == page && page)
		atomic_store_explicit(&fetched_pages[fetched_slot(page)], page,
				      memory_order_relaxed);
}

bool sgxemu__host_read_fetched(void *ctx, uint64_t addr, uint8_t *buf,
			       size_t n)
{
	uint64_t page = addr & ~0xfffULL;

	if (n && ((addr + n - 1) & ~0xfffULL) == page && page &&
	    atomic_load_explicit(&fetched_pages[fetched_slot(page)],
				 memory_order_relaxed) == page) {
		memcpy(buf, (const void *)(uintptr_t)addr, n);
		return true;
	}
	return sgxemu__host_read(ctx, addr, buf, n);
}

bool sgxemu__host_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = n };
	int saved = errno;
	long r;

	(void)ctx;
	if (!__atomic_load_n(&vm_readv_refused, __ATOMIC_RELAXED)) {
		/* Any thread's id names the process: the TCB's saves the
		 * getpid() system call (after a fork that skipped the fork
		 * handlers it may be stale: then the pid). */
		r = syscall(SYS_process_vm_readv, (long)sgxemu__thread_tid(),
			    &local, 1UL, &remote, 1UL, 0UL);
		if (r < 0 && errno == ESRCH)
			r = syscall(SYS_process_vm_readv, (long)getpid(),
				    &local, 1UL, &remote, 1UL, 0UL);
		if (r == (long)n)
			fetched_remember(addr, n);
		if (r == (long)n || errno == EFAULT || errno == ESRCH ||
		    r >= 0) {
			errno = saved;
			return r == (long)n;
		}
		/* A seccomp profile without process_vm_readv (EPERM,
		 * ENOSYS): from now on read directly. */
		__atomic_store_n(&vm_readv_refused, 1, __ATOMIC_RELAXED);
	}
	errno = saved;
	/*
	 * Every read here is at the RIP of a fault that came after the
	 * instruction was fetched and decoded (#UD, #GP, a data #PF), so the
	 * bytes are mapped and executable, which on x86 means readable
	 * except for execute-only protection keys, where this is wrong.
	 */
	memcpy(buf, (const void *)(uintptr_t)addr, n);
	return true;
}

static bool is_enclu(sgxemu_read_fn read, void *ctx, uint64_t rip)
{
	uint8_t b[3];

	return read(ctx, rip, b, 3) && b[0] == 0x0f && b[1] == 0x01 &&
	       b[2] == 0xd7;
}

/*
 * Instructions illegal in enclave mode (sgx-facts.md §4.26) that user
 * mode runs into as #GP: hardware gives #UD for them in an enclave. The
 * ones user mode executes without a fault (far transfers to valid
 * selectors, IRET, MOV to a segment register, SGDT/SIDT/SLDT/STR under
 * the kernel's UMIP emulation) cannot be seen here and stay a documented
 * deviation; the ones that are #UD natively need nothing.
 */
static bool illegal_in_enclave(const uint8_t *b, size_t n)
{
	size_t i = 0;

	/* Legacy and REX prefixes. */
	while (i < n && i < 4 &&
	       (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 ||
		b[i] == 0xf3 || (b[i] & 0xf0) == 0x40))
		i++;
	if (i >= n)
		return false;
	switch (b[i]) {
	case 0xcd: case 0xce:				/* INT n, INTO */
	case 0xe4: case 0xe5: case 0xe6: case 0xe7:	/* IN/OUT imm8 */
	case 0xec: case 0xed: case 0xee: case 0xef:	/* IN/OUT DX */
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:	/* INS/OUTS */
	case 0xca: case 0xcb: case 0xcf:		/* far RET, IRET */
	case 0x8e:					/* MOV Sreg */
		return true;
	case 0xff: {					/* far CALL/JMP */
		unsigned reg = i + 1 < n ? (b[i + 1] >> 3) & 7 : 0;

		return reg == 3 || reg == 5;
	}
	case 0x0f:
		switch (i + 1 < n ? b[i + 1] : 0) {
		case 0xa2:	/* CPUID: #GP only under CPUID faulting */
		case 0x33:				/* RDPMC */
		case 0xa1: case 0xa9:			/* POP FS/GS */
		case 0xb2: case 0xb4: case 0xb5:	/* LSS/LFS/LGS */
			return true;
		default:
			return false;
		}
	default:
		return false;
	}
}

/* The vector of a synchronous fault signal, as the kernel recorded it. */
static unsigned fault_vector(int signo, unsigned trap)
{
	switch (signo) {
	case SIGILL:
		return X86_TRAP_UD;
	case SIGFPE:
		return trap == X86_TRAP_MF || trap == X86_TRAP_XF ? trap
								   : X86_TRAP_DE;
	case SIGTRAP:
		return trap == X86_TRAP_DB ? X86_TRAP_DB : X86_TRAP_BP;
	case SIGBUS:
		return trap == X86_TRAP_AC ? X86_TRAP_AC : X86_TRAP_PF;
	default: /* SIGSEGV */
		return trap ? trap : X86_TRAP_GP;
	}
}

static bool sync_signal(int signo, const siginfo_t *info)
{
	return info->si_code > 0 &&
	       (signo == SIGSEGV || signo == SIGBUS || signo == SIGFPE ||
		signo == SIGILL || signo == SIGTRAP);
}

void sgxemu__classify(int signo, const siginfo_t *info, const ucontext_t *uc,
		      bool enclave_mode, sgxemu_read_fn read, void *ctx,
		      struct sgxemu_event *ev)
{
	const greg_t *g = uc->uc_mcontext.gregs;
	unsigned trap = (unsigned)g[REG_TRAPNO];
	uint32_t err = (uint32_t)g[REG_ERR];

	memset(ev, 0, sizeof(*ev));
	ev->rip = (uint64_t)g[REG_RIP];
	ev->addr = (uint64_t)(uintptr_t)info->si_addr;
	if (signo == SIGSYS && info->si_code == SYS_USER_DISPATCH_CODE) {
		/* The CPU has executed the 2-byte SYSCALL already. */
		ev->kind = SGXEMU_EV_SYSCALL;
		ev->vector = X86_TRAP_UD;
		ev->rip -= 2;
		return;
	}
	if (signo == SGXEMU_KICK_SIGNAL || !sync_signal(signo, info)) {
		ev->kind = SGXEMU_EV_INTERRUPT;
		return;
	}
	ev->kind = SGXEMU_EV_EXCEPTION;
	ev->vector = fault_vector(signo, trap);
	if (ev->vector == X86_TRAP_GP || ev->vector == 11 || ev->vector == 12 ||
	    ev->vector == X86_TRAP_PF)
		ev->errcd = err;
	if ((ev->vector == X86_TRAP_UD || ev->vector == X86_TRAP_GP ||
	     (ev->vector == X86_TRAP_PF && !(err & X86_PF_INSTR))) &&
	    is_enclu(read, ctx, ev->rip)) {
		ev->kind = SGXEMU_EV_ENCLU;
		return;
	}
	if (enclave_mode && ev->vector == X86_TRAP_GP) {
		uint8_t b[15];
		/* The instruction may end just before an unreadable page. */
		size_t tail = SGX_PAGE_SIZE - (ev->rip & (SGX_PAGE_SIZE - 1));
		size_t n = read(ctx, ev->rip, b, sizeof(b)) ? sizeof(b) :
			   tail < sizeof(b) && read(ctx, ev->rip, b, tail) ?
			   tail : 0;

		if (illegal_in_enclave(b, n)) {
			ev->vector = X86_TRAP_UD;
			ev->errcd = 0;
			if (b[0] == 0x0f && b[1] == 0xa2)
				ev->kind = SGXEMU_EV_CPUID;
		}
	}
}

/*
 * SGXEMU_FAULT_STYLE: rewrite an ENCLU fault into what the other vendor's
 * kernel would have delivered: #UD is SIGILL/ILL_ILLOPN at RIP; #GP is
 * SIGSEGV/SI_KERNEL with no address, and for host EENTER/ERESUME a #PF
 * with the SGX bit at the last byte of the TCS page, as Intel parts do.
 * Returns the signal to handle.
 */
int sgxemu__fault_style_apply(int signo, siginfo_t *info, ucontext_t *uc,
			      bool enclave_mode, sgxemu_read_fn read,
			      void *ctx)
{
	greg_t *g = uc->uc_mcontext.gregs;
	struct sgxemu_event ev;
	uint32_t leaf = (uint32_t)g[REG_RAX];

	if (sgxemu__fault_style == SGXEMU_STYLE_NATIVE)
		return signo;
	sgxemu__classify(signo, info, uc, enclave_mode, read, ctx, &ev);
	if (ev.kind != SGXEMU_EV_ENCLU)
		return signo;
	memset(info, 0, sizeof(*info));
	if (sgxemu__fault_style == SGXEMU_STYLE_UD) {
		info->si_signo = SIGILL;
		info->si_code = ILL_ILLOPN;
		info->si_addr = (void *)(uintptr_t)ev.rip;
		g[REG_TRAPNO] = X86_TRAP_UD;
		g[REG_ERR] = 0;
		return SIGILL;
	}
	info->si_signo = SIGSEGV;
	if (!enclave_mode && (leaf == SGX_EENTER || leaf == SGX_ERESUME)) {
		info->si_code = SEGV_ACCERR;
		info->si_addr = (void *)(uintptr_t)((uint64_t)g[REG_RBX] |
						    (SGX_PAGE_SIZE - 1));
		g[REG_TRAPNO] = X86_TRAP_PF;
		g[REG_ERR] = X86_PF_SGX | X86_PF_USER | X86_PF_WRITE |
			     X86_PF_PROT;
		g[REG_CR2] = (greg_t)(uintptr_t)info->si_addr;
	} else {
		info->si_code = 0x80;	/* SI_KERNEL */
		g[REG_TRAPNO] = X86_TRAP_GP;
		g[REG_ERR] = 0;
	}
	return SIGSEGV;
}
