/* SPDX-License-Identifier: MIT */
/*
 * libsgxemu.so's start-up and its signal functions.
 *
 * The constructor runs before main() (and before the constructors of the
 * program's own libraries that come later in the load order): it publishes
 * the vDSO image with __vdso_sgx_enter_enclave in the auxiliary vector,
 * where getauxval(AT_SYSINFO_EHDR) and programs walking the vector after
 * environ find it. Nothing else happens until the program opens an SGX
 * device: the emulated platform (EPC, the engine's signal handlers) comes
 * up then, so programs that never use SGX run as they would without the
 * shim.
 *
 * Environment:
 *   SGXEMU_DEBUG=1          each refusal's reason on stderr
 *   SGXEMU_VDSO=0           do not publish the vDSO image
 *   SGXEMU_VDSO_ABI=seed|mainline   force the vDSO entry's ABI
 *   SGXEMU_CPUID=auto|fault|rewrite|off   host CPUID (src/shim/cpuid.c)
 *   SGXEMU_FSGSBASE=0       do not offer FSGSBASE the host kernel lacks
 *   (the engine's variables: see include/sgxemu/sgxemu.h)
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cov/cov.h"
#include "driver/driver.h"
#include "lsm/hooks.h"
#include "sgxemu/sgxemu.h"
#include "shim/shim.h"

void shim_interpose_init(void);

static bool debug;

void shim_log(const char *fmt, ...)
{
	va_list ap;

	if (!debug)
		return;
	va_start(ap, fmt);
	sgx_drv_vlog(fmt, ap);
	va_end(ap);
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	static sigaction_fn fn;

	if (!fn)
		fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return fn(sig, act, old);
}

/* Signals whose handler the engine installs when the platform comes up. */
static bool engine_signal(int sig)
{
	return sig == SIGILL || sig == SIGSEGV || sig == SIGBUS ||
	       sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS ||
	       sig == SGXEMU_KICK_SIGNAL;
}

/*
 * The engine: reached once the platform is up (the first enclave device).
 * Until then signals are the program's own business.
 */
static atomic_bool engine_ready;

void shim_engine_start(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int ret;

	if (atomic_load(&engine_ready))
		return;
	pthread_mutex_lock(&lock);
	if (!atomic_load(&engine_ready)) {
		ret = sgxemu_register_fixup((uintptr_t)sgxemu_vdso_main_aep,
					    (uintptr_t)sgxemu_vdso_main_fixup,
					    SGXEMU_FIXUP_LINUX);
		if (!ret)
			ret = sgxemu_register_fixup((uintptr_t)sgxemu_vdso_seed_aep,
						    (uintptr_t)sgxemu_vdso_seed_fixup,
						    SGXEMU_FIXUP_LINUX);
		if (ret)
			shim_log("vDSO exception fixups not registered (%s): "
				 "enclave exceptions will arrive as signals",
				 strerror(-ret));
		/*
		 * Handlers the program installed before this point went
		 * straight to the kernel; hand them to the engine now, so a
		 * signal that arrives in enclave mode exits the enclave
		 * before the handler runs. (32 and 33 are glibc's own.)
		 */
		for (int sig = 1; sig < 65; sig++) {
			struct sigaction old;

			/* The fault signals and the kick are the engine's
			 * already: it took the program's dispositions of them
			 * when the platform came up, and what the kernel has
			 * now is the engine's own stub. */
			if (sig == SIGKILL || sig == SIGSTOP || sig == 32 ||
			    sig == 33 || engine_signal(sig) ||
			    real_sigaction(sig, NULL, &old))
				continue;
			if (old.sa_handler == SIG_DFL ||
			    old.sa_handler == SIG_IGN)
				continue;
			sgxemu_sigaction(sig, &old, NULL);
		}
		atomic_store(&engine_ready, true);
		shim_cpuid_platform_up();
		shim_power_start();
	}
	pthread_mutex_unlock(&lock);
}

/* --- signals --------------------------------------------------------------- */

static int do_sigaction(int sig, const struct sigaction *act,
			struct sigaction *old, bool internal)
{
	/* The CPUID trap's signal: the program's disposition is kept by
	 * cpuid.c, whose handler stays in front of it (behind the engine's
	 * once the platform is up). */
	if (!internal && shim_rawsys_owns(sig))
		return shim_rawsys_sigaction(sig, act, old);
	if (!internal && shim_cpuid_owns(sig)) {
		if (sig <= 0 || sig >= 65) {
			errno = EINVAL;
			return -1;
		}
		return shim_cpuid_sigaction(sig, act, old);
	}
	/* The engine's own handlers, and everything before the platform
	 * exists, go straight to the kernel. */
	if (internal || !atomic_load_explicit(&engine_ready, memory_order_acquire))
		return real_sigaction(sig, act, old);
	return sgxemu_sigaction(sig, act, old);
}

int shim_app_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old)
{
	return do_sigaction(sig, act, old, false);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return do_sigaction(sig, act, old,
			    shim_internal_caller(__builtin_return_address(0)));
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return do_sigaction(sig, act, old,
			    shim_internal_caller(__builtin_return_address(0)));
}

/*
 * The engine's handlers run on its own per-thread alternate stack (they
 * find the thread's state from their stack pointer), so a program that
 * sets its own after entering an enclave gets it recorded, not installed.
 */
int sigaltstack(const stack_t *ss, stack_t *old)
{
	return sgxemu_sigaltstack(ss, old);
}

/* The signals the engine must take stay out of the real mask (the kernel
 * would kill a thread whose ENCLU faults with them blocked). */
int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return sgxemu_sigprocmask(how, set, old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return sgxemu_sigprocmask(how, set, old) ? errno : 0;
}

static sighandler_t set_handler(int sig, sighandler_t h, int flags)
{
	struct sigaction act, old;

	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	if (do_sigaction(sig, &act, &old, false))
		return SIG_ERR;
	return old.sa_handler;
}

/* glibc's signal() has BSD semantics: restartable, handler stays. */
sighandler_t signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESTART);
}

sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return set_handler(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* --- start-up -------------------------------------------------------------- */

/*
 * Everything the program must find in force before any code of its own
 * runs: the security policy, host CPUID as the emulated part's, the raw
 * system call filter, the published vDSO. Reached from the audit module
 * (src/shim/audit/audit.c) before the first constructor when `sgxemu run`
 * started the program, else from this library's constructor; once.
 */
static void shim_start(char **envp)
{
	static bool started;
	const char *abi;
	void *image;
	int ret;

	if (started)
		return;
	started = true;
	abi = getenv("SGXEMU_VDSO_ABI");
	shim_interpose_init();
	/* The security policy first: nothing may run under a policy that
	 * could not be read whole. */
	{
		char why[512];

		if (lsm_init(NULL, why, sizeof(why))) {
			dprintf(STDERR_FILENO, "sgxemu: policy refused: %s\n", why);
			_exit(126);
		}
	}
	debug = env_true("SGXEMU_DEBUG");
	sgx_drv_debug = debug;
	/* Coverage of enclave code ($SGXEMU_COVERAGE): watches the
	 * driver's enclaves from their EINIT on. */
	sgxemu_cov_setup();
	/* Runtimes read CPUID before they open a device: from here on it
	 * answers as the emulated part. */
	shim_cpuid_init();
	/* Before main(): a runtime's loader opens the device with its own
	 * SYSCALL instructions (rawsys.c). */
	shim_rawsys_init();
	sgxemu_vdso_enclu = (void *)sgxemu_enclu_entry;
	if (sgxemu_fsgsbase_emulated() && shim_auxv_or(envp, AT_HWCAP2, 2))
		shim_log("HWCAP2_FSGSBASE not advertised: no AT_HWCAP2 entry");
	if (abi)
		sgxemu_vdso_abi = !strcmp(abi, "seed") || !strcmp(abi, "v22") ?
				  SGXEMU_VDSO_ABI_SEED :
				  !strcmp(abi, "mainline") ?
				  SGXEMU_VDSO_ABI_MAIN : SGXEMU_VDSO_ABI_CALL;
	if (getenv("SGXEMU_VDSO") && !env_true("SGXEMU_VDSO"))
		return;
	ret = shim_vdso_build((void *)sgxemu_vdso_sgx_enter_enclave, &image);
	if (!ret)
		ret = shim_vdso_publish(envp, image);
	if (ret)
		shim_log("vDSO with __vdso_sgx_enter_enclave not published: %s",
			 strerror(-ret));
}

/*
 * The audit module's call (@audit: its own path, which LD_AUDIT named).
 * It comes before libc's constructor, which is what sets environ: until
 * then getenv() would see nothing, so environ is the initial one here.
 */
static void audit_start(char **envp, const char *audit)
{
	if (!environ)
		environ = envp;
	shim_exec_init(audit);
	shim_start(envp);
}

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer (make asan) is set up by constructors too: before
 * instrumented code runs this early, its runtime must be. */
void __asan_init(void);

__attribute__((visibility("default"), no_sanitize("address")))
void sgxemu_shim_audit_start(char **envp, const char *audit)
{
	__asan_init();
	audit_start(envp, audit);
}
#else
__attribute__((visibility("default")))
void sgxemu_shim_audit_start(char **envp, const char *audit)
{
	audit_start(envp, audit);
}
#endif

__attribute__((constructor(101)))
static void shim_init(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	shim_exec_init(NULL);
	shim_start(envp);
	/* libc's constructor has set environ by now: from here on the
	 * program sees its own environment (exec.c). */
	shim_env_hide(envp);
}
