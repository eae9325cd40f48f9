/* SPDX-License-Identifier: MIT */
/*
 * A signal the shim takes for itself before the program (the CPUID trap's
 * SIGILL or SIGSEGV, rawsys.c's SIGSYS) keeps the program's disposition
 * here: sigaction() reads and writes it, and a signal that is not the
 * shim's goes to it as the kernel would have delivered it.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"
#include "shim/shim.h"

int shim_disp_sigaction(struct shim_disp *d, const struct sigaction *act,
			struct sigaction *old)
{
	pthread_mutex_lock(&d->lock);
	if (old)
		*old = d->act;
	if (act)
		d->act = *act;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/*
 * The program's handler with its mask (and SA_RESETHAND), or the default
 * action: death by the signal, core included. @reruns: the instruction
 * that raised it runs again on return (a fault), so SIG_DFL installed is
 * enough and SIG_IGN cannot be honoured; otherwise the signal is raised
 * again. @set installs SIG_DFL where the kernel's handler is.
 */
void shim_disp_chain(struct shim_disp *d, int sig, siginfo_t *si,
		     ucontext_t *uc, bool reruns,
		     int (*set)(int, const struct sigaction *,
				struct sigaction *))
{
	struct sigaction a;
	sigset_t mask;

	pthread_mutex_lock(&d->lock);
	a = d->act;
	if (a.sa_flags & SA_RESETHAND) {
		d->act.sa_handler = SIG_DFL;
		d->act.sa_flags &= ~SA_SIGINFO;
	}
	pthread_mutex_unlock(&d->lock);
	/* Whatever SA_SIGINFO says: the kernel's rule. */
	if (a.sa_handler == SIG_DFL || a.sa_handler == SIG_IGN) {
		struct sigaction dfl;

		if (a.sa_handler == SIG_IGN && !reruns)
			return;
		if (sgxemu__debugger_sig(sig))
			sgxemu_debug_fatal(sig);	/* sgxemu.gdb */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		set(sig, &dfl, NULL);
		if (!reruns) {
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
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (sgxemu__debugger_sig(sig))
		sgxemu_debug_signal(sig, si, uc);	/* sgxemu.gdb */
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, si, uc);
	else
		a.sa_handler(sig);
}
