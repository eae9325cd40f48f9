/* SPDX-License-Identifier: MIT */
/*
 * The engine's real signal handlers and the application's dispositions.
 *
 * The engine installs its stub (entry.S) with the raw rt_sigaction, so
 * that the restorer is its own (the syscall-user-dispatch exempt range),
 * for the synchronous fault signals and for every signal the application
 * handles through sgxemu_sigaction(). The application's handlers are kept
 * here and called from the engine's handler in host context: after the
 * AEX when the signal hit enclave mode, directly otherwise.
 *
 * Everything reachable from a handler is async-signal-safe: raw system
 * calls, no locks, no allocation, no stdio.
 */
#include <asm/prctl.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/cpuid.h"
#include "engine/engine.h"


#define NSIGS 65

static struct sigaction app_act[NSIGS];
static bool app_known[NSIGS];		/* app_act holds the app's view */
static bool owned[NSIGS];		/* our stub is the real handler */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;

static const int fault_signals[] = {
	SIGILL, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP, SIGSYS,
};

static bool is_fault_signal(int sig)
{
	for (size_t i = 0; i < sizeof(fault_signals) / sizeof(*fault_signals); i++)
		if (fault_signals[i] == sig)
			return true;
	return false;
}

/*
 * The signals the engine cannot do without in any thread at any time: the
 * fault ENCLU raises on this host (SIGILL for #UD, SIGSEGV for #GP and
 * #PF), the SIGSEGV of CPUID faulting, of the RDTSC trap and of enclave
 * pages the driver keeps inaccessible, the SIGSYS of the raw system call
 * filter, and the reclaimer's kick. The kernel kills a thread that raises
 * a synchronous fault signal it blocks, where on hardware ENCLU, CPUID and
 * an enclave page fault do not depend on the signal mask at all: so the
 * engine never lets these into the real mask, and a program's handler runs
 * with them open even when its sa_mask or the kernel's rule (the signal
 * being handled is blocked) would close them.
 */
uint64_t sgxemu__engine_sigs(void)
{
	return 1ULL << (SIGILL - 1) | 1ULL << (SIGSEGV - 1) |
	       1ULL << (SIGSYS - 1) | 1ULL << (SGXEMU_KICK_SIGNAL - 1);
}

/* The reserved signals the thread's program has blocked (its view). */
static __thread uint64_t app_blocked;

/* glibc's own SIGCANCEL (32) and SIGSETXID (33), which its sigprocmask()
 * never blocks either. */
#define GLIBC_SIGS	(1ULL << 31 | 1ULL << 32)

int sgxemu_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	uint64_t res = sgxemu__engine_sigs(), want = 0, real, prev = 0;
	uint64_t view = app_blocked;

	if (set && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK) {
		errno = EINVAL;
		return -1;
	}
	if (set)
		memcpy(&want, set, sizeof(want));
	real = want & ~res & ~GLIBC_SIGS;
	if (syscall(SYS_rt_sigprocmask, set ? how : SIG_BLOCK,
		    set ? &real : NULL, &prev, 8))
		return -1;
	if (set) {
		if (how == SIG_BLOCK)
			app_blocked |= want & res;
		else if (how == SIG_UNBLOCK)
			app_blocked &= ~(want & res);
		else
			app_blocked = want & res;
	}
	if (old) {
		memset(old, 0, sizeof(*old));
		prev = (prev & ~res) | view;
		memcpy(old, &prev, sizeof(prev));
	}
	return 0;
}

int sgxemu_sigmask_apply(int how, const uint64_t *set, uint64_t *mask,
			 uint64_t *old)
{
	uint64_t res = sgxemu__engine_sigs(), want;

	if (set && how != SIG_BLOCK && how != SIG_UNBLOCK &&
	    how != SIG_SETMASK)
		return -EINVAL;
	if (old)
		*old = (*mask & ~res) | app_blocked;
	if (!set)
		return 0;
	want = *set;
	if (how == SIG_BLOCK) {
		*mask |= want & ~res & ~GLIBC_SIGS;
		app_blocked |= want & res;
	} else if (how == SIG_UNBLOCK) {
		*mask &= ~want;
		app_blocked &= ~(want & res);
	} else {
		*mask = want & ~res & ~GLIBC_SIGS;
		app_blocked = want & res;
	}
	return 0;
}

static int raw_sigaction(int sig, const struct kernel_sigaction *act,
			 struct kernel_sigaction *old)
{
	return (int)syscall(SYS_rt_sigaction, sig, act, old, 8);
}

static int raw_sigmask(int how, uint64_t set, uint64_t *old)
{
	return (int)syscall(SYS_rt_sigprocmask, how, &set, old, 8);
}

static int install_stub(int sig, int app_flags)
{
	struct kernel_sigaction ka = {
		.handler = (void *)sgxemu__sig_entry,
		.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTORER |
			 (app_flags & SA_RESTART),
		.restorer = (void *)sgxemu__restorer,
		/* Block everything while the stub runs: its state is the
		 * thread's, not reentrant. The application's own mask is
		 * applied around its handler. */
		.mask = ~0ULL,
	};

	return raw_sigaction(sig, &ka, NULL);
}

int sgxemu__signals_init(void)
{
	for (size_t i = 0; i < sizeof(fault_signals) / sizeof(*fault_signals); i++) {
		int sig = fault_signals[i];

		/* Whatever was there (a sanitizer's handler, the default) is
		 * the application's disposition from now on. */
		if (sigaction(sig, NULL, &app_act[sig]))
			return -errno;
		app_known[sig] = true;
		if (install_stub(sig, app_act[sig].sa_flags))
			return -errno;
		owned[sig] = true;
	}
	/* The kick (kick.c): the engine's alone, never chained. */
	if (install_stub(SGXEMU_KICK_SIGNAL, SA_RESTART))
		return -errno;
	owned[SGXEMU_KICK_SIGNAL] = true;
	return 0;
}

int sgxemu_sigaction(int sig, const struct sigaction *act,
		     struct sigaction *oldact)
{
	int ret = 0;

	if (sig <= 0 || sig >= NSIGS ||
	    (act && (sig == SIGKILL || sig == SIGSTOP ||
		     sig == SGXEMU_KICK_SIGNAL))) {
		errno = EINVAL;
		return -1;
	}
	if (sgxemu_platform_init()) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&sig_lock);
	if (!app_known[sig]) {
		if (sigaction(sig, NULL, &app_act[sig])) {
			ret = -1;
			goto out;
		}
		app_known[sig] = true;
	}
	if (oldact)
		*oldact = app_act[sig];
	if (!act)
		goto out;
	app_act[sig] = *act;
	/* SIG_DFL and SIG_IGN are the handler's value whatever the flags
	 * say, as for the kernel: a runtime may pass SA_SIGINFO with
	 * SIG_IGN (Gramine does for SIGCHLD). */
	if ((act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN) &&
	    !is_fault_signal(sig)) {
		/* Nothing to chain: the kernel does the default itself. */
		struct sigaction plain = *act;

		ret = sigaction(sig, &plain, NULL);
		owned[sig] = false;
	} else {
		ret = install_stub(sig, act->sa_flags);
		if (ret)
			ret = -1;
		else
			owned[sig] = true;
	}
out:
	pthread_mutex_unlock(&sig_lock);
	return ret;
}

int sgxemu_app_sigaction(int sig, struct sigaction *act)
{
	return sgxemu_sigaction(sig, NULL, act);
}

/* Async-signal-safe output for reports. */
void sgxemu__write_str(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

void sgxemu__write_hex(uint64_t v)
{
	char buf[19];
	int i = 18;

	buf[i] = 0;
	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && i > 2);
	buf[--i] = 'x';
	buf[--i] = '0';
	sgxemu__write_str(buf + i);
}

static bool default_ignores(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
	       sig == SIGCONT;
}

/* The default action: die of @signo. It stays pending until the
 * sigreturn to @uc unblocks it. */
static void die_of(int signo, ucontext_t *uc)
{
	struct kernel_sigaction dfl = { .handler = SIG_DFL };

	raw_sigaction(signo, &dfl, NULL);
	sigdelset(&uc->uc_sigmask, signo);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), signo);
}

/*
 * Host ENCLU[EENTER/ERESUME] of a live enclave's TCS while the emulation
 * of host ENCLU is off (SGXEMU_HOST_ENCLU=0). The program believes it
 * runs on SGX (it built the enclave through the driver), so its own
 * handler cannot do anything useful with the fault: the Intel SDK's
 * takes it for an AEX and retries for ever. Say why, once, and end the
 * program with the fault's signal instead of hanging.
 */
static bool host_enclu_refused(int signo, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t leaf = (uint32_t)g[REG_RAX], tcs = (uint64_t)g[REG_RBX];

	if (!sgxemu__platform.ready ||
	    __atomic_load_n(&sgxemu__platform.host_enclu, __ATOMIC_ACQUIRE) ||
	    (leaf != SGX_EENTER && leaf != SGX_ERESUME) || (tcs & 0xfff) ||
	    !sgxemu__encl_find(tcs))
		return false;
	sgxemu__write_str(leaf == SGX_EENTER ? "sgxemu: host ENCLU[EENTER]" :
			  "sgxemu: host ENCLU[ERESUME]");
	sgxemu__write_str(" at ");
	sgxemu__write_hex((uint64_t)g[REG_RIP]);
	sgxemu__write_str(" on the TCS at ");
	sgxemu__write_hex(tcs);
	sgxemu__write_str(", but the emulation of host ENCLU is off "
			  "(SGXEMU_HOST_ENCLU=0): no enclave can be entered "
			  "this way; ending the program with the fault's "
			  "signal (enter through __vdso_sgx_enter_enclave, "
			  "or leave the emulation on)\n");
	die_of(signo, uc);
	return true;
}

/*
 * Run the application's disposition for @signo with @uc as the context it
 * interrupted (host context). Called with every signal blocked; applies
 * the application's mask around its handler, as the kernel would.
 */

void sgxemu__chain(int signo, siginfo_t *info, ucontext_t *uc, bool fault)
{
	struct sigaction a;
	uint64_t mask, all = ~0ULL;

	if (signo <= 0 || signo >= NSIGS)
		return;
	a = app_act[signo];
	if (a.sa_handler == SIG_IGN && !fault)
		return;
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		if (!fault && default_ignores(signo))
			return;
		if (sgxemu__debugger_sig(signo))
			sgxemu_debug_fatal(signo);
		die_of(signo, uc);
		return;
	}
	if (sgxemu__debugger_sig(signo) &&
	    !sgxemu__debug_own_code((uintptr_t)a.sa_handler))
		sgxemu_debug_signal(signo, info, uc);
	memcpy(&mask, &uc->uc_sigmask, sizeof(mask));
	{
		uint64_t m;

		memcpy(&m, &a.sa_mask, sizeof(m));
		mask |= m;
	}
	if (!(a.sa_flags & SA_NODEFER))
		mask |= 1ULL << (signo - 1);
	mask &= ~sgxemu__engine_sigs();
	if (a.sa_flags & SA_RESETHAND) {
		app_act[signo].sa_handler = SIG_DFL;
		app_act[signo].sa_flags &= ~SA_SIGINFO;
	}
	sgxemu__handler_gs_host(sgxemu__tcb_current());
	raw_sigmask(SIG_SETMASK, mask, NULL);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(signo, info, uc);
	else
		a.sa_handler(signo);
	raw_sigmask(SIG_SETMASK, all, NULL);
}

static bool sync_fault(int signo, const siginfo_t *info)
{
	return is_fault_signal(signo) && signo != SIGSYS && info->si_code > 0;
}

/* Host code touched ELRANGE while guard mode had it shut. */
static void guard_report(siginfo_t *info, ucontext_t *uc)
{
	uint64_t addr = (uint64_t)(uintptr_t)info->si_addr;
	struct sgxemu_enclave *e;

	if (!sgxemu__guard_closed() || !(e = sgxemu__encl_find(addr)))
		return;
	sgxemu__write_str("sgxemu: guard mode: host code accessed enclave "
			  "memory at ");
	sgxemu__write_hex(addr);
	sgxemu__write_str(" (ELRANGE ");
	sgxemu__write_hex(e->base);
	sgxemu__write_str("-");
	sgxemu__write_hex(e->base + e->size);
	sgxemu__write_str(") from rip ");
	sgxemu__write_hex((uint64_t)uc->uc_mcontext.gregs[REG_RIP]);
	sgxemu__write_str(" while no thread is in enclave mode "
			  "(hardware would read all ones)\n");
}

/*
 * Host code touched an enclave page the driver keeps inaccessible (aging,
 * paged out): as the kernel's fault handler, bring it back and let the
 * access run again (1). Not while guard mode has ELRANGE shut (that fault
 * is the guard's report). A page that cannot be brought back is the
 * kernel's VM_FAULT_SIGBUS: the access gets SIGBUS, BUS_ADRERR (-1).
 */
static int host_paging_fault(int signo, siginfo_t *info, ucontext_t *uc)
{
	uint64_t addr = (uint64_t)(uintptr_t)info->si_addr;
	struct sgxemu_enclave *e;

	if ((signo != SIGSEGV && signo != SIGBUS) || !sync_fault(signo, info) ||
	    sgxemu__guard_closed() || !(e = sgxemu__encl_find(addr)))
		return 0;
	if (e->ops && e->ops->host_access)
		return e->ops->host_access(e, addr, uc);
	if (!sgxemu__encl_hidden(e, (addr - e->base) >> SGX_PAGE_SHIFT))
		return 0;
	return sgxemu__encl_fault(e, addr) == 0 ? 1 : -1;
}

/*
 * Host code's RD/WR{FS,GS}BASE without kernel FSGSBASE (fsgsbase.c). With
 * a TCB the stub saved the interrupted bases and writes @save back; a
 * thread never set up runs its handler on the interrupted bases, so they
 * are read and written here. A non-canonical write stays the #UD it was
 * (there is no clean way to turn it into the #GP it would be).
 */
static bool host_fsgsbase(ucontext_t *uc, struct sgxemu_sigsave *save)
{
	uint64_t fs, gs, fs0, gs0;

	if (save)
		return sgxemu__fsgsbase_emulate(uc, sgxemu__host_read, NULL,
						&save->fs, &save->gs) == 0;
	if (syscall(SYS_arch_prctl, ARCH_GET_FS, &fs) ||
	    syscall(SYS_arch_prctl, ARCH_GET_GS, &gs))
		return false;
	fs0 = fs;
	gs0 = gs;
	if (sgxemu__fsgsbase_emulate(uc, sgxemu__host_read, NULL, &fs, &gs))
		return false;
	if (fs != fs0)
		syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
	if (gs != gs0)
		syscall(SYS_arch_prctl, ARCH_SET_GS, gs);
	return true;
}

/*
 * The program's handler for a signal in host mode. Inside the fast path's
 * switch to the enclave's bases (no FSGSBASE) GS may be the enclave's
 * already: the handler gets the host's, and the switch its own back.
 */
static void chain_host(int signo, siginfo_t *info, ucontext_t *uc,
		       struct sgxemu_tcb *tcb, struct sgxemu_sigsave *save)
{
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	bool window = tcb && save && !sgxemu__have_fsgsbase &&
		      ((rip >= (uint64_t)(uintptr_t)sgxemu__switch_start &&
			rip < (uint64_t)(uintptr_t)sgxemu__commit_start) ||
		       (rip >= (uint64_t)(uintptr_t)sgxemu__gs_set &&
			rip < (uint64_t)(uintptr_t)sgxemu__gs_set_end)) &&
		      save->gs != tcb->host_gs;

	if (window)
		syscall(SYS_arch_prctl, ARCH_SET_GS, tcb->host_gs);
	sgxemu__chain(signo, info, uc, sync_fault(signo, info));
	if (window)
		syscall(SYS_arch_prctl, ARCH_SET_GS, save->gs);
}

/*
 * Every signal in host mode, on a thread with a TCB (@tcb, @save) or one
 * never set up (both NULL). ENCLU is recognised first, by instruction and
 * not by signal, so that an Intel host's #PF for an EENTER on a paged-out
 * TCS is not taken for the host's own access to that page.
 */
static void host_signal(int signo, siginfo_t *info, ucontext_t *uc,
			struct sgxemu_tcb *tcb, struct sgxemu_sigsave *save)
{
	struct sgxemu_event ev;
	sgxemu_read_fn read;

	if (signo == SGXEMU_KICK_SIGNAL) {
		/* The thread left enclave mode meanwhile. The tick's timer
		 * (SI_TIMER; a reclaimer's kick is SI_TKILL) waits for the
		 * next entry. */
		if (tcb && info->si_code == SI_TIMER)
			sgxemu__tick_pause(tcb);
		return;
	}
	if (sgxemu__tsc_emulate_host(signo, info, uc))
		return;
	/* After a #UD or #GP the instruction was fetched: its page may be
	 * read directly once read safely (classify.c). */
	read = signo == SIGILL || info->si_code == SI_KERNEL ?
	       sgxemu__host_read_fetched : sgxemu__host_read;
	signo = sgxemu__fault_style_apply(signo, info, uc, false, read, NULL);
	sgxemu__classify(signo, info, uc, false, read, NULL, &ev);
	if (ev.kind == SGXEMU_EV_ENCLU &&
	    (sgxemu__host_enclu(&ev, info, uc, tcb, save) ||
	     host_enclu_refused(signo, uc)))
		return;
	if (ev.kind == SGXEMU_EV_EXCEPTION) {
		int pf = host_paging_fault(signo, info, uc);

		if (pf > 0)
			return;
		if (pf < 0) {
			void *addr = info->si_addr;

			memset(info, 0, sizeof(*info));
			info->si_signo = signo = SIGBUS;
			info->si_code = BUS_ADRERR;
			info->si_addr = addr;
		}
	}
	if (ev.kind == SGXEMU_EV_EXCEPTION && ev.vector == X86_TRAP_UD &&
	    sgxemu__fsgsbase_emulated && host_fsgsbase(uc, save))
		return;
	/* Host CPUID under faulting or at a rewritten site (cpuid.c). */
	if (ev.kind == SGXEMU_EV_EXCEPTION &&
	    (ev.vector == X86_TRAP_GP || ev.vector == X86_TRAP_UD) &&
	    sgxemu__cpuid_trap(uc))
		return;
	if ((signo == SIGSEGV || signo == SIGBUS) && sync_fault(signo, info))
		guard_report(info, uc);
	chain_host(signo, info, uc, tcb, save);
}

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>

/*
 * A program's handler that left by siglongjmp left its frames' redzones
 * poisoned on the engine's alternate stack: AddressSanitizer unpoisons
 * only stacks it knows (google/sanitizers#189). Clear the shadow of the
 * slot's stack below this frame, which nothing uses now.
 */
static void asan_fresh_altstack(struct sgxemu_tcb *tcb)
{
	uintptr_t lo = (uintptr_t)tcb + sizeof(*tcb);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0) - 256;

	if (tcb && sp > lo && sp - (uintptr_t)tcb < SLOT_SIZE)
		__asan_unpoison_memory_region((void *)lo, sp - lo);
}
#else
static void asan_fresh_altstack(struct sgxemu_tcb *tcb)
{
	(void)tcb;
}
#endif

void sgxemu__signal(int signo, siginfo_t *info, ucontext_t *uc,
		    struct sgxemu_tcb *tcb, struct sgxemu_sigsave *save)
{
	asan_fresh_altstack(tcb);
	SGXEMU_COUNT(tcb, sgxemu__count_of_signal(signo));
	tcb->gs_deferred = save->selector == SEL_BLOCK &&
			   !sgxemu__have_fsgsbase;
	if (save->selector == SEL_BLOCK)
		sgxemu__enclave_signal(signo, info, uc, tcb, save);
	else
		host_signal(signo, info, uc, tcb, save);
}

/* A thread that never entered an enclave (no TCB, host FS). */
void sgxemu__signal_plain(int signo, siginfo_t *info, void *ctx)
{
	SGXEMU_COUNT((struct sgxemu_tcb *)NULL,
		     sgxemu__count_of_signal(signo));
	host_signal(signo, info, ctx, NULL, NULL);
}
