/* SPDX-License-Identifier: MIT */
/*
 * Host CPUID under `sgxemu run` (engine/cpuid.h): the mechanism is chosen
 * at start-up, before main() and before the program opens any device,
 * since runtimes read CPUID first.
 *
 * The trap's signal (SIGSEGV for faulting, SIGILL for rewriting) gets the
 * shim's handler from start-up on. The program's own dispositions for that
 * signal are kept here (sigaction() and signal() of the program land in
 * shim_cpuid_sigaction), and the handler passes every fault that is not a
 * CPUID on to them as the kernel would. When the platform comes up, the
 * engine finds this handler installed and treats it as the program's:
 * its stub runs first (enclave faults, host ENCLU) and chains here, so no
 * engine change is needed for host CPUID.
 *
 * Faulting is per thread; Linux keeps it across clone and fork and clears
 * it at execve (where the shim starts again). The fork child sets it once
 * more anyway.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/cpuid.h"
#include "sgxemu/sgxemu.h"
#include "shim/shim.h"

SHIM_REAL(int, sigaction, int, const struct sigaction *, struct sigaction *)
SHIM_REAL(void *, dlopen, const char *, int)
SHIM_REAL(void *, dlmopen, Lmid_t, const char *, int)
SHIM_REAL(int, dlclose, void *)

static int trap_sig;			/* 0: CPUID is native */
static struct sigaction app_act;	/* the program's, for trap_sig */
static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;

static bool sync_fault(const siginfo_t *si)
{
	return si->si_code > 0;	/* sent by the kernel for a fault */
}

/*
 * The program's disposition for a fault that is not a CPUID: its handler
 * with its mask, or the default action (death by the signal, core dump
 * included: the faulting instruction runs again with SIG_DFL).
 */
static void chain(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct sigaction a = app_act;	/* a copy: the program may change it */
	sigset_t mask;

	if (!(a.sa_flags & SA_SIGINFO) &&
	    (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN)) {
		struct sigaction dfl;

		if (a.sa_handler == SIG_IGN && !sync_fault(si))
			return;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		get_sigaction()(sig, &dfl, NULL);
		if (!sync_fault(si)) {
			sigdelset(&uc->uc_sigmask, sig);
			syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
		}
		return;
	}
	mask = uc->uc_sigmask;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&a.sa_mask, s))
			sigaddset(&mask, s);
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	if (a.sa_flags & SA_RESETHAND) {
		app_act.sa_handler = SIG_DFL;
		app_act.sa_flags &= ~SA_SIGINFO;
	}
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
}

static void cpuid_handler(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	if (!sgxemu__cpuid_trap(ctx))
		chain(sig, si, ctx);
	errno = saved;
}

bool shim_cpuid_owns(int sig)
{
	return trap_sig && sig == trap_sig;
}

int shim_cpuid_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old)
{
	if (sig != trap_sig) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&act_lock);
	if (old)
		*old = app_act;
	if (act)
		app_act = *act;
	pthread_mutex_unlock(&act_lock);
	return 0;
}

static int install_handler(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = cpuid_handler;
	/* On the alternate stack when the program has one (a stack
	 * overflow handler must still see its SIGSEGV). */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return get_sigaction()(sig, &sa, &app_act);
}

/*
 * The handler first, then the trapping: with faulting, a CPUID between
 * the two would kill the process. Faulting refused (it was available a
 * moment ago) falls back to rewriting.
 */
static int arm(enum sgxemu_cpuid_mech *mech)
{
	struct sigaction prev;

	if (*mech == SGXEMU_CPUID_FAULT) {
		if (install_handler(SIGSEGV))
			return -1;
		trap_sig = SIGSEGV;
		if (!sgxemu__cpuid_fault_enable())
			return 0;
		prev = app_act;
		trap_sig = 0;
		get_sigaction()(SIGSEGV, &prev, NULL);
		shim_log("cpuid: CPUID faulting refused; rewriting instead");
		*mech = SGXEMU_CPUID_REWRITE;
	}
	if (install_handler(SIGILL))
		return -1;
	trap_sig = SIGILL;
	return 0;
}

void shim_cpuid_init(void)
{
	struct sgxemu_cpuid_model m;
	enum sgxemu_cpuid_mech mech;
	const char *note;

	mech = sgxemu__cpuid_choose(&note);
	if (note)
		dprintf(STDERR_FILENO, "sgxemu: %s\n", note);
	if (mech == SGXEMU_CPUID_OFF)
		return;
	if (sgxemu__cpuid_model_env(&m)) {
		shim_log("cpuid: the platform configuration is invalid: CPUID "
			 "stays native");
		return;
	}
	sgxemu__cpuid_publish(&m);
	sgxemu__cpuid_set_mech(mech);
	if (arm(&mech)) {
		shim_log("cpuid: no handler for the trap's signal: CPUID stays "
			 "native");
		sgxemu__cpuid_set_mech(SGXEMU_CPUID_OFF);
		return;
	}
	sgxemu__cpuid_set_mech(mech);
	if (mech == SGXEMU_CPUID_REWRITE)
		shim_log("cpuid: rewrite: %zu CPUID instruction(s) rewritten",
			 shim_cpuid_rewrite_scan());
	else
		shim_log("cpuid: fault (CPUID faulting on, per thread)");
}

void shim_cpuid_platform_up(void)
{
	struct sgxemu_cpuid_model m;
	struct sgx_cpu *cpu;

	if (sgxemu__cpuid_mech() == SGXEMU_CPUID_OFF ||
	    !(cpu = sgxemu_platform_cpu()))
		return;
	/* The platform's own values from now on (the same configuration,
	 * read by the platform itself). */
	sgxemu__cpuid_model_cpu(&m, cpu);
	sgxemu__cpuid_publish(&m);
}

void shim_cpuid_fork_child(void)
{
	pthread_mutex_init(&act_lock, NULL);
	shim_cpuid_rewrite_fork_child();
	if (sgxemu__cpuid_mech() == SGXEMU_CPUID_FAULT &&
	    !sgxemu__cpuid_fault_enabled())
		sgxemu__cpuid_fault_enable();
}

void shim_cpuid_exec_mapped(void)
{
	if (sgxemu__cpuid_mech() == SGXEMU_CPUID_REWRITE)
		shim_cpuid_rewrite_scan();
}

/* --- the dynamic loader ------------------------------------------------ */

void *dlopen(const char *file, int mode)
{
	void *h = get_dlopen()(file, mode);

	if (h)
		shim_cpuid_exec_mapped();
	return h;
}

void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	void *h = get_dlmopen()(lmid, file, mode);

	if (h)
		shim_cpuid_exec_mapped();
	return h;
}

int dlclose(void *handle)
{
	int ret = get_dlclose()(handle);

	/* Forget the sites of what was unmapped. */
	if (!ret)
		shim_cpuid_exec_mapped();
	return ret;
}
