/* SPDX-License-Identifier: MIT */
/*
 * A host program that makes its SGX system calls with its own SYSCALL
 * instructions, as Gramine's loader does (src/shim/rawsys.c serves them):
 * the device opened, stat'ed, ioctl'ed and mapped, an ELRANGE at address
 * 0, signal dispositions and alternate stacks, with the kernel's errno for
 * bad input; and the FSGSBASE the platform offers (HWCAP2 in the
 * auxiliary vector, the instructions in host code).
 *
 * The binary re-executes itself through `sgxemu run` when started without
 * the shim (tests/run.sh starts it directly).
 */
#include <asm/sgx.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../enclaves/shim_encl.h"
#include "sgxemu/arch.h"
#include "test.h"

static const char *no_shim;
static char **initial_envp;

__attribute__((constructor))
static void under_shim(int argc, char **argv, char **envp)
{
	(void)argc;
	initial_envp = envp;
	no_shim = shim_reexec(argv);
}

#define NEED_SHIM() do { if (no_shim) test_skip("%s", no_shim); } while (0)

/* A system call from this program's own text, never through libc. */
static long raw(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

#define RAW2(nr, a, b) raw(nr, (long)(a), (long)(b), 0, 0, 0, 0)
#define RAW3(nr, a, b, c) raw(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define RAW4(nr, a, b, c, d) \
	raw(nr, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

static int raw_open_enclave(void)
{
	return (int)RAW4(SYS_openat, AT_FDCWD, "/dev/sgx_enclave", O_RDWR, 0);
}

TEST(raw_open_stat_ioctl_close_with_kernel_errnos)
{
	struct stat st;
	struct sgx_enclave_remove_pages rm = { 0 };
	int fd;

	NEED_SHIM();
	fd = raw_open_enclave();
	REQUIRE(fd >= 0);
	CHECK_EQ(RAW2(SYS_fstat, fd, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 10);
	memset(&st, 0, sizeof(st));
	CHECK_EQ(RAW4(SYS_newfstatat, AT_FDCWD, "/dev/sgx_enclave", &st, 0), 0);
	CHECK(S_ISCHR(st.st_mode));
	/* An ioctl the driver does not have, and bad arguments. */
	CHECK_EQ(RAW3(SYS_ioctl, fd, _IO('X', 0x7f), 0), -ENOTTY);
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_CREATE, 0), -EFAULT);
	/* Gramine's EDMM probe: a zero-length REMOVE_PAGES is EINVAL. */
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, &rm),
		 -EINVAL);
	CHECK_EQ(RAW2(SYS_close, fd, 0), 0);
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_CREATE, 0), -EBADF);
	/* A path that is not a device still opens as a file. */
	fd = (int)RAW4(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY, 0);
	REQUIRE(fd >= 0);
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_CREATE, 0), -ENOTTY);
	CHECK_EQ(RAW2(SYS_close, fd, 0), 0);
}

/*
 * Gramine's layout: ELRANGE [0, 256 MiB), the device mapped RWX shared
 * from 0x10000 (the first 64 KiB are below mmap_min_addr and never
 * added), then ECREATE with base 0.
 */
TEST(elrange_at_address_zero)
{
	static struct sgx_secs secs __attribute__((aligned(4096)));
	struct sgx_enclave_create create = { .src = (uint64_t)(uintptr_t)&secs };
	const uint64_t size = 256ULL << 20;
	long p;
	int fd;

	NEED_SHIM();
	fd = raw_open_enclave();
	REQUIRE(fd >= 0);
	p = raw(SYS_mmap, 0x10000, (long)(size - 0x10000),
		PROT_READ | PROT_WRITE | PROT_EXEC,
		MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	REQUIRE_EQ(p, 0x10000);
	memset(&secs, 0, sizeof(secs));
	secs.base = 0;
	secs.size = size;
	secs.ssa_frame_size = 1;
	secs.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs.attributes.xfrm = 3;
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_CREATE, &create), 0);
	/* Twice on one file: the kernel's EINVAL. */
	CHECK_EQ(RAW3(SYS_ioctl, fd, SGX_IOC_ENCLAVE_CREATE, &create), -EINVAL);
	CHECK_EQ(RAW2(SYS_munmap, 0x10000, size - 0x10000), 0);
	CHECK_EQ(RAW2(SYS_close, fd, 0), 0);
}

/*
 * After INIT, a window anywhere outside ELRANGE is the kernel's EACCES
 * (linux-driver-facts.md §2.4 step 1): below the base, across either end,
 * wherever the kernel would place a hint; growing one with mremap is
 * EFAULT (§2.6). Through the program's own SYSCALL instructions, as the
 * libc-routed calls are checked in test_shim_mainline's mmap_rules.
 */
TEST(raw_windows_keep_to_elrange_after_init)
{
	struct shim_encl e;
	EVP_PKEY *key;
	uint64_t below, end;
	int r;

	NEED_SHIM();
	key = shim_load_key(test_signing_key());
	if (!key)
		test_abort("%s", shim_key_why);
	r = shim_encl_build(&e, key);
	REQUIRE_EQ(r, 0);
	below = e.base - 4096;
	end = e.base + SHIM_ENCL_SIZE;
	/* The page below is the ELRANGE reservation's (shim_encl_create). */
	REQUIRE(below >= (uint64_t)(uintptr_t)e.reserve);
	CHECK_EQ(raw(SYS_mmap, (long)below, 4096, PROT_NONE,
		     MAP_SHARED | MAP_FIXED, e.fd, 0), -EACCES);
	CHECK_EQ(raw(SYS_mmap, (long)below, 4096, PROT_READ,
		     MAP_SHARED | MAP_FIXED, e.fd, 0), -EACCES);
	CHECK_EQ(raw(SYS_mmap, (long)below, 8192, PROT_READ,
		     MAP_SHARED | MAP_FIXED, e.fd, 0), -EACCES);
	CHECK_EQ(raw(SYS_mmap, (long)(end - 4096), 8192, PROT_READ,
		     MAP_SHARED | MAP_FIXED, e.fd, 0), -EACCES);
	CHECK_EQ(raw(SYS_mmap, 0, 4096, PROT_NONE, MAP_SHARED, e.fd, 0),
		 -EACCES);
	/* Inside, the same call maps. */
	CHECK_EQ(raw(SYS_mmap, (long)(e.base + SHIM_ENCL_DATA), 4096,
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, e.fd, 0),
		 (long)(e.base + SHIM_ENCL_DATA));
	CHECK_EQ(raw(SYS_mremap, (long)(e.base + SHIM_ENCL_DATA), 4096, 8192,
		     0, 0, 0), -EFAULT);
	/* The enclave still works through its windows. */
	{
		struct sgx_enclave_run run;
		uint64_t out[2];

		CHECK_EQ(shim_ecall(&e, 0, 0, out, 1, &run), 0);
		CHECK_EQ(out[0], 2);
	}
	close(e.fd);
}

/* The kernel's struct sigaction for rt_sigaction. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	usr1_seen = sig;
}

/* Never reached: the program's restorer is libc's once served. */
static void bogus_restorer(void)
{
	_exit(99);
}

TEST(raw_sigaction_goes_through_the_engine)
{
	struct ksigaction ka = {
		.handler = (void *)on_usr1,
		.flags = SA_SIGINFO | 0x04000000UL /* SA_RESTORER */,
		.restorer = (void *)bogus_restorer,
	}, old;
	struct sigaction back;

	NEED_SHIM();
	CHECK_EQ(RAW4(SYS_rt_sigaction, SIGUSR1, &ka, NULL, 4), -EINVAL);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR1, &ka, &old, 8), 0);
	REQUIRE_EQ(sigaction(SIGUSR1, NULL, &back), 0);
	CHECK(back.sa_sigaction == on_usr1);
	CHECK(back.sa_flags & SA_SIGINFO);
	usr1_seen = 0;
	raise(SIGUSR1);
	CHECK_EQ(usr1_seen, SIGUSR1);
	memset(&old, 0, sizeof(old));
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR1, NULL, &old, 8), 0);
	CHECK(old.handler == (void *)on_usr1);
	signal(SIGUSR1, SIG_DFL);
}

/* The kernel's own set of ignored signals (SigIgn in /proc/self/status). */
static uint64_t kernel_ignored(void)
{
	char line[256];
	uint64_t mask = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigIgn: %" SCNx64, &mask) == 1)
			break;
	if (f)
		fclose(f);
	return mask;
}

/* Ignored for real: the kernel's disposition, a raise() survived, and
 * SIGCHLD's reaping (wait() finds no child). */
static void check_ignored(void)
{
	uint64_t ign = kernel_ignored();
	pid_t pid;

	CHECK(ign & (1ULL << (SIGCHLD - 1)));
	CHECK(ign & (1ULL << (SIGUSR2 - 1)));
	/* SIGUSR2's default would end the process. */
	raise(SIGUSR2);
	raise(SIGCHLD);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(0);
	errno = 0;
	CHECK_EQ(wait(NULL), -1);
	CHECK_EQ(errno, ECHILD);
}

/*
 * SIG_IGN and SIG_DFL are the handler's value whatever SA_SIGINFO says,
 * as for the kernel: Gramine's loader ignores SIGCHLD with SA_SIGINFO
 * set, and the engine once took that 1 for a handler and jumped there at
 * the first child's exit. Set before the engine comes up (the first
 * enclave device opened takes the program's dispositions over) and after.
 */
TEST(raw_sigaction_sig_ign_with_siginfo_is_ignored)
{
	struct ksigaction ka = {
		.handler = (void *)SIG_IGN,
		.flags = SA_SIGINFO | SA_ONSTACK | 0x04000000UL /* SA_RESTORER */,
		.restorer = (void *)bogus_restorer,
	}, dfl = { .handler = (void *)SIG_DFL };
	struct sigaction back;
	int fd;

	NEED_SHIM();
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGCHLD, &ka, NULL, 8), 0);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR2, &ka, NULL, 8), 0);
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	close(fd);
	REQUIRE_EQ(sigaction(SIGCHLD, NULL, &back), 0);
	CHECK(back.sa_handler == SIG_IGN);
	check_ignored();
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGCHLD, &dfl, NULL, 8), 0);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR2, &dfl, NULL, 8), 0);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGCHLD, &ka, NULL, 8), 0);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR2, &ka, NULL, 8), 0);
	check_ignored();
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGCHLD, &dfl, NULL, 8), 0);
	REQUIRE_EQ(RAW4(SYS_rt_sigaction, SIGUSR2, &dfl, NULL, 8), 0);
}

TEST(raw_sigaltstack_and_clone3)
{
	static char stack[64 * 1024];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) }, cur;
	struct clone_args ca = { .flags = CLONE_VM, .exit_signal = 0 };

	NEED_SHIM();
	REQUIRE_EQ(RAW2(SYS_sigaltstack, &ss, NULL), 0);
	memset(&cur, 0, sizeof(cur));
	REQUIRE_EQ(RAW2(SYS_sigaltstack, NULL, &cur), 0);
	CHECK(cur.ss_sp == stack);
	CHECK_EQ(cur.ss_size, sizeof(stack));
	ss.ss_flags = SS_DISABLE;
	CHECK_EQ(RAW2(SYS_sigaltstack, &ss, NULL), 0);
	/* Its flags are out of the filter's reach: ENOSYS, and callers fall
	 * back to clone (a size of 0, which the kernel itself would refuse
	 * with EINVAL, so that a clone3 not served creates nothing). */
	CHECK_EQ(RAW2(SYS_clone3, &ca, 0), -ENOSYS);
}

/* The real mask of the calling thread, from the kernel's own report. */
static uint64_t real_sigblk(void)
{
	char line[256];
	unsigned long long v = 0;
	FILE *f = fopen("/proc/thread-self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

#define SIGBIT(s)	(1ULL << ((s) - 1))

/*
 * What Gramine's RPC threads do: block every signal by a raw
 * rt_sigprocmask, then make raw calls the filter traps (a mmap here).
 * Returns a bit per failed check; runs in a thread of a forked child,
 * since before the fix the kernel kills the process at the trapped call.
 */
static void *block_all_then_trap(void *arg)
{
	uint64_t all = ~0ULL, view = 0, none = 0;
	struct timespec ts = { 0, 1000000 };
	long bad = 0, p;

	(void)arg;
	if (RAW4(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, 8))
		bad |= 1;
	if (RAW4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &view, 8) ||
	    !(view & SIGBIT(SIGSYS)) || !(view & SIGBIT(SIGSEGV)) ||
	    !(view & SIGBIT(SIGUSR1)))
		bad |= 2;	/* the program's view: what it set */
	if (real_sigblk() & (SIGBIT(SIGSYS) | SIGBIT(SIGSEGV) | SIGBIT(SIGILL)))
		bad |= 4;	/* the engine's signals stay open */
	if (!(real_sigblk() & SIGBIT(SIGUSR1)))
		bad |= 8;
	p = raw(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p < 0 && p > -4096)
		bad |= 16;
	else
		*(volatile char *)p = 1;
	/* A wait with a mask of everything, as ppoll from raw code. */
	if (raw(SYS_ppoll, 0, 0, (long)&ts, (long)&all, 8, 0) != 0)
		bad |= 32;
	if (RAW4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, 8) ||
	    RAW4(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &view, 8) || view)
		bad |= 64;
	if (RAW4(SYS_rt_sigprocmask, 7, &all, NULL, 8) != -EINVAL ||
	    RAW4(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 4) != -EINVAL ||
	    RAW4(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, 8) != -EFAULT)
		bad |= 128;
	return (void *)bad;
}

/* @fn's result as the exit status of a forked child (-signal if killed). */
static int in_child(int (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1000;
	if (!pid)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid)
		return -1001;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

static int thread_blocks_all(void)
{
	pthread_t t;
	void *bad = (void *)100L;

	if (pthread_create(&t, NULL, block_all_then_trap, NULL) ||
	    pthread_join(t, &bad))
		return 100;
	return (int)(long)bad;
}

TEST(raw_sigprocmask_of_everything_keeps_trapped_calls_alive)
{
	NEED_SHIM();
	CHECK_EQ(in_child(thread_blocks_all), 0);
}

/* A raw execve with an empty environment still starts the child under
 * the shim (which the child's environment does not show). */
static int raw_exec_sh(void)
{
	char *argv[] = { (char *)"sh", (char *)"-c",
		(char *)"[ -z \"$LD_PRELOAD$LD_AUDIT\" ] && "
			"grep -q /libsgxemu.so /proc/self/maps", NULL };
	char *envp[] = { NULL };

	RAW3(SYS_execve, "/bin/sh", argv, envp);
	return 99;
}

TEST(raw_execve_carries_the_shim)
{
	NEED_SHIM();
#if defined(__SANITIZE_ADDRESS__)
	/* The emptied environment loses the ASAN_OPTIONS an ASan build's
	 * shim needs to load into /bin/sh; make test runs this. */
	test_skip("sanitizer build: raw execve with an empty environment");
#endif
	CHECK_EQ(in_child(raw_exec_sh), 0);
}

TEST(fsgsbase_offered_to_the_program)
{
	Elf64_auxv_t *av;
	uint64_t hwcap2 = 0, saved, v = 0;
	size_t i;

	NEED_SHIM();
	REQUIRE(initial_envp != NULL);
	for (i = 0; initial_envp[i]; i++)
		;
	for (av = (Elf64_auxv_t *)&initial_envp[i + 1]; av->a_type != AT_NULL;
	     av++)
		if (av->a_type == AT_HWCAP2)
			hwcap2 = av->a_un.a_val;
	/* Every Linux SGX machine has it: the host's, or the platform's. */
	CHECK(hwcap2 & 2);
	/*
	 * And host code may use it (natively or one trap each). Where the
	 * instructions run without kernel support, a context switch between
	 * the write and the read loses the value (fsgsbase.c): three tries.
	 */
	__asm__ volatile("rdgsbase %0" : "=r"(saved));
	for (int t = 0; t < 3 && v != 0x5a5a000ULL; t++) {
		__asm__ volatile("wrgsbase %0" : : "r"(0x5a5a000ULL));
		__asm__ volatile("rdgsbase %0" : "=r"(v));
	}
	__asm__ volatile("wrgsbase %0" : : "r"(saved));
	CHECK_EQ(v, 0x5a5a000ULL);
}
