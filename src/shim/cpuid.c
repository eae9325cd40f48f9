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
static struct shim_disp app = SHIM_DISP_INIT;	/* the program's, for trap_sig */

static void cpuid_handler(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;

	/* Not a CPUID: the program's (a fault, sent by the kernel, runs
	 * again on return). */
	if (!sgxemu__cpuid_trap(ctx))
		shim_disp_chain(&app, sig, si, ctx, si->si_code > 0,
				get_sigaction());
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
	return shim_disp_sigaction(&app, act, old);
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
	return get_sigaction()(sig, &sa, &app.act);
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
		prev = app.act;
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
	pthread_mutex_init(&app.lock, NULL);
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
