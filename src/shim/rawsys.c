/* SPDX-License-Identifier: MIT */
/*
 * The program's own SYSCALL instructions: runtimes such as Gramine make
 * every system call of their loader with a `syscall` of their own, never
 * through libc, so the interposed libc functions never see them. Those
 * that concern SGX (device open, ioctl, the mappings of ELRANGE, the
 * descriptors, signal dispositions, fork, connect to the AESM socket) are
 * caught by a seccomp filter on the system call number and the
 * instruction pointer, and served here by the same code as the
 * libc-routed calls (interpose.c, stat.c, init.c, aesm.c):
 * the result goes back in RAX as the kernel would put it.
 *
 * Which code counts as the program's: the executable segments of every
 * loaded object except libc, the dynamic loader, the vDSO and
 * libsgxemu.so itself, and (SGXEMU_RAW_SYSCALLS=auto, the default) only
 * those holding the bytes of a SYSCALL at all, so that a program without
 * raw system calls gets no filter. Calls through libc and every other
 * system call run as before, with nothing but the filter's few BPF
 * instructions added to each.
 *
 * Seccomp filters outlive execve() and cannot be removed: the filter names
 * this image's address ranges, which a new image (its own random bases)
 * does not reuse, and a new image started under sgxemu installs its own.
 * An unprivileged process needs no_new_privs for a filter: it is set then
 * (setuid programs it executes later do not gain privileges), or with
 * SGXEMU_RAW_SYSCALLS=off nothing is installed.
 *
 * What is not served: clone3 answers ENOSYS (its flags are behind a
 * pointer the filter cannot read; callers fall back to clone, whose
 * thread-creating form runs natively: the engine sets such threads up at
 * their first ENCLU); vfork and execve run natively; objects loaded by
 * dlopen() after start-up are not covered.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/engine.h"
#include "sgxemu/sgxemu.h"
#include "shim/shim.h"

#define RAWSYS_MARK	0x5347		/* SECCOMP_RET_DATA of our traps */
#define MAX_RANGES	32
#define KSA_RESTORER	0x04000000UL	/* the kernel's SA_RESTORER */

#ifndef SYS_SECCOMP
#define SYS_SECCOMP	1
#endif

/* The numbers that concern SGX; every other one runs natively. */
static const unsigned trapped[] = {
	SYS_open, SYS_openat, SYS_openat2, SYS_close, SYS_close_range,
	SYS_dup, SYS_dup2, SYS_dup3, SYS_fcntl, SYS_ioctl,
	SYS_mmap, SYS_mprotect, SYS_munmap, SYS_mremap,
	SYS_stat, SYS_fstat, SYS_lstat, SYS_newfstatat, SYS_statx,
	SYS_access, SYS_faccessat, SYS_faccessat2,
	SYS_rt_sigaction, SYS_sigaltstack, SYS_fork, SYS_clone3,
	SYS_connect,
	SYS_execve, SYS_execveat, SYS_rt_sigprocmask, SYS_rt_sigsuspend,
	SYS_ppoll, SYS_pselect6, SYS_epoll_pwait, SYS_epoll_pwait2,
};

/*
 * The calls among them that take a signal mask only in one argument: they
 * run natively when it is NULL (a ppoll or epoll_pwait without a mask is a
 * plain wait, and common), and trap otherwise.
 */
static const struct {
	unsigned nr, arg;
} mask_arg[] = {
	{ SYS_ppoll, 3 }, { SYS_pselect6, 5 }, { SYS_epoll_pwait, 4 },
	{ SYS_epoll_pwait2, 4 },
};

#define NR_TRAPPED	(sizeof(trapped) / sizeof(trapped[0]))
#define NR_MASK_ARG	(sizeof(mask_arg) / sizeof(mask_arg[0]))
#define FILTER_MAX	(6 + NR_TRAPPED + 5 * NR_MASK_ARG + 2 + MAX_RANGES * 11)

struct xrange {
	uint64_t lo, hi;
};

static struct xrange ranges[MAX_RANGES];
static int nr_ranges;
static bool scan_all;			/* SGXEMU_RAW_SYSCALLS=on */
static bool armed;			/* our SIGSYS handler is in place */
static struct shim_disp app = SHIM_DISP_INIT;	/* the program's SIGSYS */

/* The kernel's struct sigaction for rt_sigaction (x86-64). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/* --- which code is the program's ---------------------------------------- */

static bool system_object(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	/* The sanitizer runtimes make their own raw calls (LeakSanitizer's
	 * stop-the-world clone and ptrace at exit): trapped, they hang. */
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "ld-linux", 8) ||
	       !strncmp(base, "linux-vdso", 10) ||
	       !strncmp(base, "libasan.so", 10) ||
	       !strncmp(base, "libubsan.so", 11) ||
	       !strncmp(base, "liblsan.so", 10) ||
	       !strncmp(base, "libtsan.so", 10) ||
	       !strncmp(base, "libclang_rt.", 12);
}

static bool has_syscall_bytes(uint64_t lo, uint64_t hi)
{
	return memmem((const void *)(uintptr_t)lo, hi - lo, "\x0f\x05", 2);
}

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t self = (uintptr_t)&shim_rawsys_init;

	(void)size;
	(void)data;
	if (system_object(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;
		uint64_t hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (self >= lo && self < hi)
			return 0;		/* libsgxemu.so */
		if (!scan_all && !has_syscall_bytes(lo, hi))
			continue;
		if (nr_ranges == MAX_RANGES) {
			shim_log("rawsys: more than %d objects with SYSCALL; "
				 "%s not covered", MAX_RANGES, info->dlpi_name);
			return 0;
		}
		shim_log("rawsys: %s: SYSCALL range %#lx-%#lx",
			 *info->dlpi_name ? info->dlpi_name : "(program)",
			 (unsigned long)lo, (unsigned long)hi);
		ranges[nr_ranges].lo = lo;
		ranges[nr_ranges].hi = hi;
		nr_ranges++;
	}
	return 0;
}

/* --- the filter ------------------------------------------------------------ */

#define IP_LO	(offsetof(struct seccomp_data, instruction_pointer))
#define IP_HI	(offsetof(struct seccomp_data, instruction_pointer) + 4)

static void emit(struct sock_filter *f, int *n, uint16_t code, uint32_t k,
		 uint8_t jt, uint8_t jf)
{
	f[(*n)++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
}

#define ARG_LO(i)	(offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i)	(offsetof(struct seccomp_data, args) + 8 * (i) + 4)

/*
 * ALLOW unless the architecture is x86-64, the number is one of trapped[]
 * (with a non-NULL mask for those of mask_arg[]) and the instruction
 * pointer (the address after the SYSCALL) lies in (lo, hi] of a range.
 * Each range is a block of 11 instructions ending in its own TRAP, so that
 * every jump stays short; 64-bit values are compared as (high word, low
 * word). BPF jumps only forward: the mask checks come between the number
 * list and the ranges, with an ALLOW of their own.
 */
static int build_filter(struct sock_filter *f)
{
	const int nt = NR_TRAPPED, nm = NR_MASK_ARG;
	int n = 0;

	emit(f, &n, BPF_LD | BPF_W | BPF_ABS,
	     offsetof(struct seccomp_data, arch), 0, 0);
	emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	emit(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	emit(f, &n, BPF_LD | BPF_W | BPF_ABS,
	     offsetof(struct seccomp_data, nr), 0, 0);
	for (int i = 0; i < nt; i++)
		emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, trapped[i],
		     (uint8_t)(nt - i), 0);
	emit(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	for (int i = 0; i < nm; i++) {
		/* 5 instructions each, then JA, ALLOW, the ranges: from
		 * this entry's start the JA is @d ahead. */
		uint8_t d = (uint8_t)(5 * (nm - i));

		emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, mask_arg[i].nr, 0, 4);
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, ARG_LO(mask_arg[i].arg), 0, 0);
		emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, d - 1);
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, ARG_HI(mask_arg[i].arg), 0, 0);
		emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, 0, d - 4, d - 3);
	}
	emit(f, &n, BPF_JMP | BPF_JA, 1, 0, 0);
	emit(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	for (int r = 0; r < nr_ranges; r++) {
		uint64_t lo = ranges[r].lo + 2, hi = ranges[r].hi;

		/* IP >= lo */
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, IP_HI, 0, 0);
		emit(f, &n, BPF_JMP | BPF_JGT | BPF_K, (uint32_t)(lo >> 32), 3, 0);
		emit(f, &n, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(lo >> 32), 0, 8);
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, IP_LO, 0, 0);
		emit(f, &n, BPF_JMP | BPF_JGE | BPF_K, (uint32_t)lo, 0, 6);
		/* IP <= hi */
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, IP_HI, 0, 0);
		emit(f, &n, BPF_JMP | BPF_JGE | BPF_K, (uint32_t)(hi >> 32), 0, 3);
		emit(f, &n, BPF_JMP | BPF_JGT | BPF_K, (uint32_t)(hi >> 32), 3, 0);
		emit(f, &n, BPF_LD | BPF_W | BPF_ABS, IP_LO, 0, 0);
		emit(f, &n, BPF_JMP | BPF_JGT | BPF_K, (uint32_t)hi, 1, 0);
		emit(f, &n, BPF_RET | BPF_K, SECCOMP_RET_TRAP | RAWSYS_MARK, 0, 0);
	}
	emit(f, &n, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
	return n;
}

static int install_filter(void)
{
	static struct sock_filter f[FILTER_MAX];
	struct sock_fprog prog = { .filter = f };

	prog.len = (unsigned short)build_filter(f);
	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return 0;
	if (errno != EACCES)
		return -errno;
	/* Not privileged: a filter needs no_new_privs. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	shim_log("rawsys: no_new_privs set for the raw system call filter");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		    SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return -errno;
	return 0;
}

/* --- serving a call ---------------------------------------------------- */

static long ret_of(long r)
{
	return r < 0 ? -errno : r;
}

static long ptr_ret(void *p)
{
	return p == MAP_FAILED ? -errno : (long)(uintptr_t)p;
}

static long raw_rt_sigaction(int sig, const struct ksigaction *kact,
			     struct ksigaction *kold, size_t setsize)
{
	struct sigaction act, old;

	if (setsize != sizeof(uint64_t))
		return -EINVAL;
	if (kact) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = (sighandler_t)kact->handler;
		/* libc supplies its own restorer, as for any sigaction(). */
		act.sa_flags = (int)(kact->flags & ~KSA_RESTORER);
		sigemptyset(&act.sa_mask);
		for (int s = 1; s <= 64; s++)
			if (kact->mask & (1ULL << (s - 1)))
				sigaddset(&act.sa_mask, s);
	}
	if (shim_app_sigaction(sig, kact ? &act : NULL, kold ? &old : NULL))
		return -errno;
	if (kold) {
		memset(kold, 0, sizeof(*kold));
		kold->handler = (void *)old.sa_handler;
		kold->flags = (unsigned long)(unsigned)old.sa_flags;
		kold->restorer = (void *)old.sa_restorer;
		for (int s = 1; s <= 64; s++)
			if (sigismember(&old.sa_mask, s) == 1)
				kold->mask |= 1ULL << (s - 1);
	}
	return 0;
}

static long raw_openat2(int dirfd, const char *path, const struct open_how *how,
			size_t size)
{
	if (shim_maybe_dev(path) && how && size >= sizeof(*how) &&
	    !how->resolve)
		return ret_of(openat(dirfd, path, (int)how->flags,
				     (mode_t)how->mode));
	return syscall(SYS_openat2, dirfd, path, how, size) < 0 ? -errno : 0;
}

/* Copy from or to the program's memory as the kernel would: -EFAULT
 * for a bad address rather than a fault in the handler. */
static long copy_user(void *to, const void *from, size_t n, bool in)
{
	struct iovec local = { .iov_base = in ? to : (void *)from, .iov_len = n };
	struct iovec remote = { .iov_base = in ? (void *)from : to, .iov_len = n };
	ssize_t r = in ? process_vm_readv(getpid(), &local, 1, &remote, 1, 0) :
			 process_vm_writev(getpid(), &local, 1, &remote, 1, 0);

	return r == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * rt_sigprocmask, as sigprocmask() is served (engine/signal.c): the
 * engine's signals stay out of the real mask, the program's view is kept.
 * The mask to change is the one this handler's return restores.
 */
static long raw_sigprocmask(ucontext_t *uc, int how, const uint64_t *set,
			    uint64_t *old, size_t size)
{
	uint64_t want, mask, prev;
	long ret;

	if (size != sizeof(uint64_t))
		return -EINVAL;
	if (set && (ret = copy_user(&want, set, sizeof(want), true)))
		return ret;
	memcpy(&mask, &uc->uc_sigmask, sizeof(mask));
	ret = sgxemu_sigmask_apply(how, set ? &want : NULL, &mask, &prev);
	if (ret)
		return ret;
	if (old && (ret = copy_user(old, &prev, sizeof(prev), false)))
		return ret;
	memcpy(&uc->uc_sigmask, &mask, sizeof(mask));
	return 0;
}

/*
 * The calls that wait with a temporary mask (rt_sigsuspend, ppoll,
 * pselect6, epoll_pwait, epoll_pwait2): made with the engine's signals
 * taken out of it, so a handler that runs when the wait ends does not run
 * with them blocked. The kernel checks the size; the call then fails as
 * it would have.
 */
static long raw_masked_wait(unsigned nr, const long *a)
{
	const uint64_t engine = sgxemu__engine_sigs();
	long b[6];
	uint64_t mask;
	struct { const uint64_t *ss; size_t len; } ps;
	int i = nr == SYS_rt_sigsuspend ? 0 : nr == SYS_ppoll ? 3 : 4;
	long r;

	memcpy(b, a, sizeof(b));
	if (nr == SYS_pselect6) {
		if (copy_user(&ps, (void *)a[5], sizeof(ps), true))
			return -EFAULT;
		if (ps.ss && ps.len == sizeof(mask)) {
			if (copy_user(&mask, ps.ss, sizeof(mask), true))
				return -EFAULT;
			mask &= ~engine;
			ps.ss = &mask;
		}
		b[5] = (long)&ps;
	} else if (b[i] && b[i + 1] == sizeof(mask)) {
		if (copy_user(&mask, (void *)b[i], sizeof(mask), true))
			return -EFAULT;
		mask &= ~engine;
		b[i] = (long)&mask;
	}
	r = syscall(nr, b[0], b[1], b[2], b[3], b[4], b[5]);
	return r < 0 ? -errno : r;
}

static long serve(unsigned nr, const long *a, ucontext_t *uc)
{
	void *p0 = (void *)a[0], *p1 = (void *)a[1];

	switch (nr) {
	case SYS_open:
		return ret_of(open(p0, (int)a[1], (mode_t)a[2]));
	case SYS_openat:
		return ret_of(openat((int)a[0], p1, (int)a[2], (mode_t)a[3]));
	case SYS_openat2:
		return raw_openat2((int)a[0], p1, (void *)a[2], (size_t)a[3]);
	case SYS_close:
		return ret_of(close((int)a[0]));
	case SYS_connect:	/* the AESM socket (aesm.c) */
		return ret_of(connect((int)a[0], p1, (socklen_t)a[2]));
	case SYS_close_range:
		return ret_of(close_range((unsigned)a[0], (unsigned)a[1],
					  (int)a[2]));
	case SYS_dup:
		return ret_of(dup((int)a[0]));
	case SYS_dup2:
		return ret_of(dup2((int)a[0], (int)a[1]));
	case SYS_dup3:
		return ret_of(dup3((int)a[0], (int)a[1], (int)a[2]));
	case SYS_fcntl:
		return ret_of(fcntl((int)a[0], (int)a[1], a[2]));
	case SYS_ioctl:
		return ret_of(ioctl((int)a[0], (unsigned long)a[1], a[2]));
	case SYS_mmap:
		return ptr_ret(shim_app_mmap(p0, (size_t)a[1], (int)a[2],
					     (int)a[3], (int)a[4], (off_t)a[5]));
	case SYS_mprotect:
		return ret_of(shim_app_mprotect(p0, (size_t)a[1], (int)a[2]));
	case SYS_munmap:
		return ret_of(shim_app_munmap(p0, (size_t)a[1]));
	case SYS_mremap:
		return ptr_ret(shim_app_mremap(p0, (size_t)a[1], (size_t)a[2],
					       (int)a[3], (void *)a[4], false));
	case SYS_stat:
		return ret_of(stat(p0, (void *)a[1]));
	case SYS_lstat:
		return ret_of(lstat(p0, (void *)a[1]));
	case SYS_fstat:
		return ret_of(fstat((int)a[0], (void *)a[1]));
	case SYS_newfstatat:
		return ret_of(fstatat((int)a[0], p1, (void *)a[2], (int)a[3]));
	case SYS_statx:
		return ret_of(statx((int)a[0], p1, (int)a[2], (unsigned)a[3],
				    (void *)a[4]));
	case SYS_access:
		return ret_of(access(p0, (int)a[1]));
	case SYS_faccessat:
		return ret_of(faccessat((int)a[0], p1, (int)a[2], 0));
	case SYS_faccessat2:
		return ret_of(faccessat((int)a[0], p1, (int)a[2], (int)a[3]));
	case SYS_rt_sigaction:
		return raw_rt_sigaction((int)a[0], p1, (void *)a[2],
					(size_t)a[3]);
	case SYS_sigaltstack:
		return ret_of(sigaltstack(p0, p1));
	case SYS_fork:
		return ret_of(fork());
	case SYS_clone3:
		return -ENOSYS;
	case SYS_execve:
		return ret_of(execve(p0, p1, (void *)a[2]));
	case SYS_execveat:
		return ret_of(execveat((int)a[0], p1, (void *)a[2],
				       (void *)a[3], (int)a[4]));
	case SYS_rt_sigprocmask:
		return raw_sigprocmask(uc, (int)a[0], p1, (void *)a[2],
				       (size_t)a[3]);
	case SYS_rt_sigsuspend:
	case SYS_ppoll:
	case SYS_pselect6:
	case SYS_epoll_pwait:
	case SYS_epoll_pwait2:
		return raw_masked_wait(nr, a);
	default:
		return -ENOSYS;
	}
}

/* --- SIGSYS -------------------------------------------------------------- */

static void rawsys_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	greg_t *g = uc->uc_mcontext.gregs;
	long a[6];
	int saved = errno;

	if (si->si_code != SYS_SECCOMP || si->si_errno != RAWSYS_MARK) {
		/* Not ours: the program's (the SYSCALL is behind). */
		shim_disp_chain(&app, sig, si, uc, false, shim_app_sigaction);
		errno = saved;
		return;
	}
	a[0] = g[REG_RDI];
	a[1] = g[REG_RSI];
	a[2] = g[REG_RDX];
	a[3] = g[REG_R10];
	a[4] = g[REG_R8];
	a[5] = g[REG_R9];
	/* The instruction pointer is past the SYSCALL already. */
	g[REG_RAX] = serve((unsigned)si->si_syscall, a, uc);
	/*
	 * The rt_sigreturn that ends this handler puts back the alternate
	 * stack recorded at its delivery: what sigaltstack() just set (or
	 * the engine's, for a thread it set up now) must be recorded there.
	 */
	if (si->si_syscall == SYS_sigaltstack && a[0] && !g[REG_RAX]) {
		stack_t cur;

		if (!syscall(SYS_sigaltstack, NULL, &cur)) {
			uc->uc_stack = cur;
			uc->uc_stack.ss_flags &= ~SS_ONSTACK;
		}
	}
	errno = saved;
}

bool shim_rawsys_owns(int sig)
{
	return armed && sig == SIGSYS;
}

int shim_rawsys_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	if (sig != SIGSYS) {
		errno = EINVAL;
		return -1;
	}
	return shim_disp_sigaction(&app, act, old);
}

void shim_rawsys_init(void)
{
	const char *mode = getenv("SGXEMU_RAW_SYSCALLS");
	struct sigaction sa;
	int ret;

	if (mode && !strcmp(mode, "off"))
		return;
	scan_all = mode && !strcmp(mode, "on");
	dl_iterate_phdr(collect, NULL);
	if (!nr_ranges)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rawsys_handler;
	/* SA_NODEFER: a raw call in the program's own SIGSYS handler. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (shim_app_sigaction(SIGSYS, NULL, &app.act) ||
	    sigaction(SIGSYS, &sa, NULL)) {
		shim_log("rawsys: SIGSYS handler not installed: %s",
			 strerror(errno));
		return;
	}
	armed = true;
	ret = install_filter();
	if (ret) {
		armed = false;
		sigaction(SIGSYS, &app.act, NULL);
		shim_log("rawsys: raw system calls not served (seccomp: %s)",
			 strerror(-ret));
		return;
	}
	shim_log("rawsys: raw system calls of %d code range%s served",
		 nr_ranges, nr_ranges == 1 ? "" : "s");
}
