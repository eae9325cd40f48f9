/* SPDX-License-Identifier: MIT */
/*
 * The engine under signals and threads: asynchronous exits (setitimer
 * storm, pthread_kill), N threads in N TCSs, several enclaves at once,
 * host-code ENCLU, guard mode, exceptions delivered to the application's
 * handler when no fixup applies.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "../enclaves/encl_util.h"

#define LOAD(e, base) do { \
	const char *why_ = "?"; \
	(e) = tu_load_test_encl(&(base), &why_); \
	if (!(e)) { test_fail(__FILE__, __LINE__, "load: %s", why_); return; } \
} while (0)

static uint64_t lcg(uint64_t seed, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		seed = seed * 6364136223846793005ULL + i;
	return seed;
}

static volatile long alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

TEST(setitimer_storm_during_long_loop)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	uint64_t base, n = 400ULL * 1000 * 1000, aex0, aex;
	long calls;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGALRM, &sa, NULL), 0);
	aex0 = sgxemu_thread_aex_count();
	alarms = 0;
	REQUIRE_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_LOOP, n, 0, 42), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	calls = alarms;
	aex = sgxemu_thread_aex_count() - aex0;
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(42, n));
	/* Signals did land in enclave mode, and every one of them reached
	 * the application's handler (plus any that hit host code). */
	CHECK(aex > 10);
	CHECK(calls >= (long)aex);
	CHECK(calls <= (long)aex + 5);
	printf("    %ld SIGALRMs, %llu AEXs\n", calls, (unsigned long long)aex);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static volatile long usr1;
static volatile int kicker_stop;
static pthread_t target_thread;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	usr1++;
}

static void *kicker(void *arg)
{
	(void)arg;
	while (!kicker_stop) {
		pthread_kill(target_thread, SIGUSR1);
		usleep(500);
	}
	return NULL;
}

TEST(pthread_kill_aex_then_resume)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	pthread_t k;
	uint64_t base, n = 200ULL * 1000 * 1000, aex0;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &sa, NULL), 0);
	target_thread = pthread_self();
	kicker_stop = 0;
	usr1 = 0;
	aex0 = sgxemu_thread_aex_count();
	REQUIRE_EQ(pthread_create(&k, NULL, kicker, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_LOOP, n, 0, 7), 0);
	kicker_stop = 1;
	pthread_join(k, NULL);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(7, n));
	CHECK(sgxemu_thread_aex_count() - aex0 > 0);
	CHECK(usr1 >= (long)(sgxemu_thread_aex_count() - aex0));
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

struct worker {
	uint64_t tcs, seed, n, result;
	uint32_t exit_reason;
	int ret;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct sgxemu_run run;

	for (int i = 0; i < 3; i++) {
		w->ret = tu_call(&run, w->tcs, CMD_LOOP, w->n, 0, w->seed + i);
		w->exit_reason = run.exit_reason;
		if (w->ret || run.exit_reason != SGXEMU_EXIT_EEXIT ||
		    run.regs.rdx != lcg(w->seed + i, w->n)) {
			w->result = 0;
			return NULL;
		}
		w->result = run.regs.rdx;
	}
	return NULL;
}

TEST(two_threads_two_tcs_two_enclaves)
{
	struct sgxemu_enclave *e1, *e2;
	uint64_t b1, b2;
	struct worker w[4];
	pthread_t t[4];

	LOAD(e1, b1);
	LOAD(e2, b2);
	for (int i = 0; i < 4; i++) {
		w[i].tcs = (i < 2 ? b1 : b2) + (uint64_t)(i % 2) * 4096;
		w[i].seed = 1000 + (uint64_t)i * 17;
		w[i].n = 20ULL * 1000 * 1000;
		w[i].result = 0;
		REQUIRE_EQ(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(w[i].ret, 0);
		CHECK_EQ(w[i].exit_reason, SGXEMU_EXIT_EEXIT);
		CHECK_EQ(w[i].result, lcg(w[i].seed + 2, w[i].n));
	}
	CHECK_EQ(atomic_load(&e1->ctl->active_threads), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e1), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e2), 0);
}

/* ENCLU[EENTER] executed by host code: emulated through SIGILL. */
TEST(host_enclu_eenter)
{
	struct sgxemu_enclave *e;
	uint64_t base, fs = 0, gs = 0, magic = 0;
	register uint64_t tcs asm("r12");

	LOAD(e, base);
	tcs = base + L_TCS2;
	__asm__ volatile(
		"push %%rbx\n\t"
		"push %%rbp\n\t"
		"mov %%r12, %%rbx\n\t"
		"lea 0f(%%rip), %%rcx\n\t"
		"mov $2, %%eax\n\t"
		"mov $6, %%edi\n\t"		/* CMD_FSGS */
		"0: .byte 0x0f, 0x01, 0xd7\n\t"
		"pop %%rbp\n\t"
		"pop %%rbx\n\t"
		: "=d"(fs), "=S"(gs), "=D"(magic), "+r"(tcs)
		:
		: "rax", "rcx", "r8", "r9", "r10", "r11", "r13", "r14",
		  "r15", "memory", "cc");
	CHECK_EQ(fs, base + L_FSGS + 0x4000);
	CHECK_EQ(gs, base + L_FSGS + 0x5000);
	CHECK_EQ(magic, 0xf5f5f5f500000002ULL);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static sigjmp_buf jb;
static volatile uint64_t segv_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	segv_addr = (uint64_t)(uintptr_t)si->si_addr;
	siglongjmp(jb, 1);
}

TEST(guard_mode_blocks_host_access)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	uint64_t base;
	volatile uint64_t *p;

	LOAD(e, base);
	sgxemu_set_guard(false);	/* whatever SGXEMU_GUARD says */
	p = (volatile uint64_t *)(uintptr_t)(base + L_SCRATCH);
	/* Without guard mode host code sees the page (not a TEE). */
	CHECK_EQ(*p, 0);
	sgxemu_set_guard(true);
	CHECK(sgxemu_guard());
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGSEGV, &sa, NULL), 0);
	segv_addr = 0;
	if (!sigsetjmp(jb, 1)) {
		(void)*p;
		test_fail(__FILE__, __LINE__, "host read enclave memory in guard mode");
	}
	CHECK_EQ(segv_addr, base + L_SCRATCH);
	/* The enclave itself still runs, and faults still report. */
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_REGS, 5, 6, 0), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, 11);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_STORE, base + L_SCRATCH,
			   41, 0), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, 42);
	segv_addr = 0;
	if (!sigsetjmp(jb, 1)) {
		(void)*p;
		test_fail(__FILE__, __LINE__, "host read after EEXIT in guard mode");
	}
	CHECK_EQ(segv_addr, base + L_SCRATCH);
	sgxemu_set_guard(false);
	CHECK_EQ(*p, 41);		/* what the enclave stored */
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* Without a fixup (host ENCLU), an enclave exception reaches the
 * application's handler as if at the AEP. */
#define HW_UD_EXITINFO (SGX_EXITINFO_VALID | SGX_EXITINFO_TYPE_HW << 8 | X86_TRAP_UD)

static volatile int ill_seen;
static volatile uint64_t ill_rip, ill_rax;

static void on_ill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	ill_seen++;
	ill_rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	ill_rax = (uint64_t)uc->uc_mcontext.gregs[REG_RAX];
	siglongjmp(jb, 1);
}

static uint64_t host_aep;

/* EENTER by host code with CMD_UD2; no fixup covers this AEP. */
__attribute__((noinline)) static void host_enter_ud2(uint64_t tcs_addr)
{
	register uint64_t tcs asm("r12") = tcs_addr;

	__asm__ volatile(
		"push %%rbx\n\t"
		"push %%rbp\n\t"
		"mov %%r12, %%rbx\n\t"
		"lea 0f(%%rip), %%rcx\n\t"
		"mov %%rcx, %[aep]\n\t"
		"mov $2, %%eax\n\t"
		"mov $4, %%edi\n\t"		/* CMD_UD2 */
		"0: .byte 0x0f, 0x01, 0xd7\n\t"
		"pop %%rbp\n\t"
		"pop %%rbx\n\t"
		: [aep] "=m"(host_aep), "+r"(tcs)
		:
		: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
		  "r11", "r13", "r14", "r15", "memory", "cc");
}

TEST(exception_without_fixup_reaches_app_handler)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	uint64_t base;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_ill;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGILL, &sa, NULL), 0);
	ill_seen = 0;
	if (!sigsetjmp(jb, 1))
		host_enter_ud2(base + L_TCS0);
	CHECK_EQ(ill_seen, 1);
	CHECK_EQ(ill_rip, host_aep);
	CHECK_EQ(ill_rax, SGX_ERESUME);
	/* The AEX released the TCS (CSSA is 1 now): handler entry. */
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, 0, 2, 0, 0), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, HW_UD_EXITINFO);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * The arch_prctl path for FS/GS (machines without FSGSBASE): the same
 * tests again in a child told to ignore FSGSBASE.
 */
static void rerun_with(const char *var)
{
	static const char *const names[] = {
		"setitimer_storm_during_long_loop", "host_enclu_eenter",
		"exception_without_fixup_reaches_app_handler",
		"two_threads_two_tcs_two_enclaves",
		"pthread_kill_aex_then_resume",
	};
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	REQUIRE(n > 0);
	exe[n] = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		pid_t pid = fork();
		int status = -1;

		REQUIRE(pid >= 0);
		if (pid == 0) {
			setenv(var, "1", 1);
			execl(exe, exe, names[i], (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			test_fail(__FILE__, __LINE__, "%s with %s=1: status %d",
				  names[i], var, status);
	}
}

TEST(without_fsgsbase)
{
	rerun_with("SGXEMU_NO_FSGSBASE");
}

/* Guard mode from the environment: the same tests with ELRANGE shut
 * whenever no thread is inside. */
TEST(in_guard_mode)
{
	rerun_with("SGXEMU_GUARD");
}

/*
 * Host code with its own fixup, as the vDSO does: fixup_enter() executes
 * ENCLU[EENTER] at fixup_aep; EEXIT returns 0, the fixup 1 with the
 * exception in fix_vec/fix_err/fix_addr.
 */
uint64_t fixup_enter(uint64_t tcs, uint64_t cmd);
extern char fixup_aep[], fixup_land[];
uint64_t fix_vec, fix_err, fix_addr;
__asm__(
	".text\n"
	".globl fixup_enter\n"
	"fixup_enter:\n"
	"	push %rbx\n"
	"	push %rbp\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	mov %rdi, %rbx\n"
	"	mov %rsi, %rdi\n"
	"	lea fixup_aep(%rip), %rcx\n"
	"	mov $2, %eax\n"
	".globl fixup_aep\n"
	"fixup_aep:\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	xor %eax, %eax\n"
	"	jmp 1f\n"
	".globl fixup_land\n"
	"fixup_land:\n"
	"	mov %rdi, fix_vec(%rip)\n"
	"	mov %rsi, fix_err(%rip)\n"
	"	mov %rdx, fix_addr(%rip)\n"
	"	mov $1, %eax\n"
	"1:	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbp\n"
	"	pop %rbx\n"
	"	ret\n");

static volatile int trap_seen;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	trap_seen++;
	siglongjmp(jb, 1);
}

TEST(registered_fixup_linux_rules)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	uint64_t base;

	LOAD(e, base);
	CHECK_EQ(sgxemu_register_fixup(0, 1, 0), -EINVAL);
	CHECK_EQ(sgxemu_register_fixup(1, 1, 7), -EINVAL);
	CHECK_EQ(sgxemu_unregister_fixup(12345), -ENOENT);
	REQUIRE_EQ(sgxemu_register_fixup((uintptr_t)fixup_aep,
					 (uintptr_t)fixup_land,
					 SGXEMU_FIXUP_LINUX), 0);
	/* EEXIT: plain return. */
	CHECK_EQ(fixup_enter(base + L_TCS0, CMD_NOP), 0);
	/* #UD: the fixup, with the vector. */
	fix_vec = fix_err = fix_addr = 99;
	CHECK_EQ(fixup_enter(base + L_TCS0, CMD_UD2), 1);
	CHECK_EQ(fix_vec, X86_TRAP_UD);
	CHECK_EQ(fix_err, 0);
	CHECK_EQ(fix_addr, 0);
	/* EENTER itself faults (CSSA 1 of NSSA 1 on TCS2 after a fault). */
	CHECK_EQ(fixup_enter(base + L_TCS2, CMD_UD2), 1);
	CHECK_EQ(fixup_enter(base + L_TCS2, CMD_NOP), 1);
	CHECK_EQ(fix_vec, X86_TRAP_GP);
	/* #BP is never fixed up under the Linux rules: SIGTRAP. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGTRAP, &sa, NULL), 0);
	trap_seen = 0;
	if (!sigsetjmp(jb, 1))
		fixup_enter(base + L_TCS1, CMD_INT3);
	CHECK_EQ(trap_seen, 1);
	/* With every vector: the fixup. */
	REQUIRE_EQ(sgxemu_register_fixup((uintptr_t)fixup_aep,
					 (uintptr_t)fixup_land,
					 SGXEMU_FIXUP_ALL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, 0, 0, 0, 0), 0);	/* CSSA 1 -> handler */
	REQUIRE_EQ(tu_resume(&run, base + L_TCS1), 0);
	CHECK_EQ(run.regs.rdx, 0xbbbb);
	CHECK_EQ(fixup_enter(base + L_TCS1, CMD_INT3), 1);
	CHECK_EQ(fix_vec, X86_TRAP_BP);
	CHECK_EQ(sgxemu_unregister_fixup((uintptr_t)fixup_aep), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}
