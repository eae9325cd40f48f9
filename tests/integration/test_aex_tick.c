/* SPDX-License-Identifier: MIT */
/*
 * The timer tick (src/engine/kick.c). Hardware takes an AEX at every
 * timer interrupt, so by default a thread in enclave mode takes one here
 * every 4 ms of its CPU time; SGXEMU_AEX_TICK sets the period and 0 turns
 * it off. A tick that finds the thread in host mode stops its timer until
 * the next entry, so host code pays for one signal at most.
 *
 * The platform reads SGXEMU_AEX_TICK once, when it is created: each
 * setting is tried in a process of its own (child_with).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "test.h"
#include "../enclaves/encl_util.h"

#define CHILD_MARK	"SGXEMU_TEST_AEX_TICK_CHILD"
/* Steps of CMD_LOOP in one call: a few ms. */
#define LOOP_N		(5 * 1000 * 1000)

/*
 * True in the child, which runs test @name with SGXEMU_AEX_TICK = @tick
 * (NULL: unset, the default), and SIGCHLD ignored where @no_sigchld says
 * (inherited through the execve, as by the processes Gramine's loader
 * starts). In the parent: start that child, check that it passed, and
 * return false.
 */
static bool child_with_sigchld(const char *name, const char *tick,
			       bool no_sigchld)
{
	pid_t pid;
	int status;

	if (getenv(CHILD_MARK))
		return true;
	pid = fork();
	if (pid < 0) {
		test_fail(__FILE__, __LINE__, "fork failed");
		return false;
	}
	if (pid == 0) {
		setenv(CHILD_MARK, "1", 1);
		if (no_sigchld)
			signal(SIGCHLD, SIG_IGN);
		if (tick)
			setenv("SGXEMU_AEX_TICK", tick, 1);
		else
			unsetenv("SGXEMU_AEX_TICK");
		execl("/proc/self/exe", "test_aex_tick", name, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid) {
		test_fail(__FILE__, __LINE__, "waitpid failed");
		return false;
	}
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	return false;
}

static bool child_with(const char *name, const char *tick)
{
	return child_with_sigchld(name, tick, false);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static uint64_t lcg(uint64_t seed, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		seed = seed * LCG_MUL + i;
	return seed;
}

/* Host code only, for @us of this thread's CPU time. */
static void host_spin_us(unsigned us)
{
	uint64_t t0 = thread_cpu_ns();
	volatile uint64_t x = 1;

	while (thread_cpu_ns() - t0 < (uint64_t)us * 1000)
		for (int i = 0; i < 1000; i++)
			x = x * LCG_MUL + (uint64_t)i;
}

struct loop_result {
	uint64_t cpu_ns;	/* the thread's CPU time in the calls */
	uint64_t aex;		/* this thread's AEXs */
	uint64_t ticks;		/* the tick's AEXs (the process's) */
	uint64_t host_ticks;	/* ticks that found host mode */
	unsigned calls;
	int wrong;		/* calls whose result was not the LCG's */
};

/*
 * Enclave calls of @n steps of CMD_LOOP until @cpu_ms of this thread's
 * CPU time, with @host_ms of host code after each; every call's result
 * is checked (against one computed before, so that the loop is enclave
 * code but for that).
 */
static struct loop_result enclave_loop(uint64_t tcs, unsigned cpu_ms,
				       uint64_t n, unsigned host_us)
{
	struct loop_result r;
	uint64_t aex0 = sgxemu_thread_aex_count();
	uint64_t ticks0 = sgxemu__count_total(SGXEMU_C_TICK_AEX);
	uint64_t host0 = sgxemu__count_total(SGXEMU_C_TICK_HOST);
	uint64_t want = lcg(3, n), t0 = thread_cpu_ns();

	memset(&r, 0, sizeof(r));
	while (thread_cpu_ns() - t0 < (uint64_t)cpu_ms * 1000000) {
		struct sgxemu_run run;

		if (tu_call(&run, tcs, CMD_LOOP, n, 0, 3) ||
		    run.exit_reason != SGXEMU_EXIT_EEXIT ||
		    run.regs.rdx != want)
			r.wrong++;
		r.calls++;
		if (host_us)
			host_spin_us(host_us);
	}
	r.cpu_ns = thread_cpu_ns() - t0;
	r.aex = sgxemu_thread_aex_count() - aex0;
	r.ticks = sgxemu__count_total(SGXEMU_C_TICK_AEX) - ticks0;
	r.host_ticks = sgxemu__count_total(SGXEMU_C_TICK_HOST) - host0;
	return r;
}

/*
 * The enclave loop under a tick of @tick_ns: about one AEX per tick of
 * CPU time, every one of them the tick's, and each resumed without a
 * register lost (the loop's results).
 */
static void check_rate(uint64_t tick_ns)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	struct loop_result r;
	uint64_t base, want;

	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	CHECK_EQ(sgxemu__platform.aex_tick_ns, tick_ns);
	r = enclave_loop(base + L_TCS0, 300, LOOP_N, 0);
	want = r.cpu_ns / tick_ns;
	printf("    %llu ms of CPU in %u enclave calls: %llu AEXs, %llu of "
	       "them ticks (%llu expected), %llu ticks in host mode\n",
	       (unsigned long long)(r.cpu_ns / 1000000), r.calls,
	       (unsigned long long)r.aex, (unsigned long long)r.ticks,
	       (unsigned long long)want, (unsigned long long)r.host_ticks);
	CHECK_EQ(r.wrong, 0);
	CHECK_EQ(r.aex, r.ticks);
	/* The timer counts the AEXs' own CPU time too, and a tick may
	 * land in the host code between two calls. */
	CHECK(r.ticks >= want / 2);
	CHECK(r.ticks <= want + 2);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

TEST(default_tick_is_4ms)
{
	if (child_with("default_tick_is_4ms", NULL))
		check_rate(4000000);
}

/* Longer than the host kernel's own tick, which is the finest a CPU-time
 * timer gets (it looks at them at its tick only). */
TEST(tick_of_20ms)
{
	if (child_with("tick_of_20ms", "20ms"))
		check_rate(20000000);
}

/*
 * Enclave calls shorter than a tick, with host code between them: the
 * ticks in host mode stop the timer, and each entry starts it again in
 * its old phase, so the enclave still takes about one AEX per tick of its
 * own CPU time (were each entry to start a fresh period, none would
 * expire in a call).
 */
TEST(calls_shorter_than_a_tick)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	struct loop_result r;
	uint64_t base, n, t0, one, enclave_ns, want;

	if (!child_with("calls_shorter_than_a_tick", NULL))
		return;
	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	/* Steps for about 2.5 ms: a third of a call of LOOP_N's share. */
	t0 = thread_cpu_ns();
	r = enclave_loop(base + L_TCS0, 20, LOOP_N, 0);
	one = (thread_cpu_ns() - t0) / (r.calls ? r.calls : 1);
	REQUIRE(one > 0);
	n = (uint64_t)LOOP_N * 2500000 / one;
	r = enclave_loop(base + L_TCS0, 400, n, 1500);
	enclave_ns = r.cpu_ns - (uint64_t)r.calls * 1500000;
	want = enclave_ns / 4000000;
	printf("    %u calls of %llu us with 1.5 ms of host code after each: "
	       "%llu tick AEXs (%llu expected), %llu ticks in host mode\n",
	       r.calls, (unsigned long long)(r.cpu_ns / 1000 / r.calls) - 1500,
	       (unsigned long long)r.ticks, (unsigned long long)want,
	       (unsigned long long)r.host_ticks);
	CHECK_EQ(r.wrong, 0);
	CHECK(r.host_ticks > 0);
	/*
	 * The share of the ticks that land in enclave mode follows the
	 * share of CPU time spent there (about 4 in 7 here; none if each
	 * entry started a fresh period). A loaded host coalesces expiries
	 * of a CPU-time timer (it looks at them only at its own tick while
	 * the thread runs: 37 of some 100 were delivered under load 9), so
	 * the shares are compared, not the count with the CPU time.
	 */
	CHECK(r.ticks * 3 * r.cpu_ns >= (r.ticks + r.host_ticks) * enclave_ns);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* SGXEMU_AEX_TICK=0: the old behaviour, not a single AEX. */
TEST(tick_0_is_off)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	struct loop_result r;
	uint64_t base, host0;

	if (!child_with("tick_0_is_off", "0"))
		return;
	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	CHECK_EQ(sgxemu__platform.aex_tick_ns, 0);
	host0 = sgxemu__count_total(SGXEMU_C_TICK_HOST);
	r = enclave_loop(base + L_TCS0, 300, LOOP_N, 0);
	printf("    %llu ms of CPU in the enclave: %llu AEXs\n",
	       (unsigned long long)(r.cpu_ns / 1000000),
	       (unsigned long long)r.aex);
	CHECK_EQ(r.wrong, 0);
	CHECK_EQ(r.aex, 0);
	CHECK_EQ(r.ticks, 0);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_TICK_HOST) - host0, 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static void *spinner(void *arg)
{
	(void)arg;
	host_spin_us(100000);
	return NULL;
}

/*
 * Host code pays nothing: a thread that never entered an enclave has no
 * timer, and one that left takes one tick at most, which stops its timer;
 * the next entry starts it again.
 */
TEST(host_mode_takes_one_tick_at_most)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	struct sgxemu_run run;
	struct loop_result r;
	uint64_t base, host0;
	pthread_t t;

	if (!child_with("host_mode_takes_one_tick_at_most", NULL))
		return;
	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	host0 = sgxemu__count_total(SGXEMU_C_TICK_HOST);
	REQUIRE_EQ(pthread_create(&t, NULL, spinner, NULL), 0);
	pthread_join(t, NULL);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_TICK_HOST) - host0, 0);

	for (int round = 0; round < 2; round++) {
		REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_NOP, 0, 0, 0), 0);
		host0 = sgxemu__count_total(SGXEMU_C_TICK_HOST);
		host_spin_us(100000);
		printf("    round %d: %llu ticks in 100 ms of host code\n",
		       round, (unsigned long long)
		       (sgxemu__count_total(SGXEMU_C_TICK_HOST) - host0));
		CHECK(sgxemu__count_total(SGXEMU_C_TICK_HOST) - host0 <= 1);
		/* Entered again, the thread has its tick again. */
		r = enclave_loop(base + L_TCS0, 60, LOOP_N, 0);
		CHECK_EQ(r.wrong, 0);
		CHECK(r.ticks >= 1);
	}
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * Entry with ENCLU's contract through sgxemu_enclu_entry, as the vDSO
 * calls it: RAX = EENTER, RBX = TCS, RCX = AEP, and the AEP is the call
 * itself, so after an AEX the same call runs again with RAX = ERESUME.
 * The test enclave takes RDI = command, RSI/RDX/R8 and returns RDX; it
 * leaves with RSP as it found it, so the pushes here survive.
 * uint64_t enclu_call(tcs, cmd, rsi, rdx, r8)
 */
uint64_t enclu_call(uint64_t tcs, uint64_t cmd, uint64_t rsi, uint64_t rdx,
		    uint64_t r8);
__asm__(
	".text\n"
	".type enclu_call, @function\n"
	"enclu_call:\n"
	"	push %rbp\n"
	"	push %rbx\n"
	"	push %r12\n"
	"	push %r13\n"
	"	push %r14\n"
	"	push %r15\n"
	"	mov %rdi, %rbx\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	mov $2, %eax\n"			/* EENTER */
	"	lea 1f(%rip), %rcx\n"
	"1:	call sgxemu_enclu_entry\n"	/* the AEP too */
	"	mov %rdx, %rax\n"
	"	pop %r15\n"
	"	pop %r14\n"
	"	pop %r13\n"
	"	pop %r12\n"
	"	pop %rbx\n"
	"	pop %rbp\n"
	"	ret\n"
	".size enclu_call, . - enclu_call\n");

/*
 * The tick's AEX of a thread that entered through the engine's own entry
 * (the vDSO's way) resumes it there with ERESUME, also with the emulation
 * of host ENCLU off: that resume is the vDSO's, not the program's ENCLU
 * (the Intel SDK's SampleEnclave under SGXEMU_HOST_ENCLU=0 was ended by it
 * once the tick was on by default).
 */
TEST(tick_resumes_through_the_vdso_entry_with_host_enclu_off)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	uint64_t base, aex0, t0, want = lcg(3, LOOP_N);
	unsigned calls = 0, wrong = 0;

	if (!child_with("tick_resumes_through_the_vdso_entry_with_host_enclu_off",
			NULL))
		return;
	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	sgxemu_set_host_enclu(false);
	aex0 = sgxemu_thread_aex_count();
	t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < 100 * 1000000ULL) {
		if (enclu_call(base + L_TCS0, CMD_LOOP, LOOP_N, 0, 3) != want)
			wrong++;
		calls++;
	}
	printf("    %u calls through the entry: %llu AEXs resumed\n", calls,
	       (unsigned long long)(sgxemu_thread_aex_count() - aex0));
	CHECK_EQ(wrong, 0);
	CHECK(sgxemu_thread_aex_count() - aex0 >= 1);
	sgxemu_set_host_enclu(true);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* The spellings SGXEMU_AEX_TICK and --aex-tick take, and those refused. */
TEST(tick_values)
{
	static const struct { const char *v; uint64_t ns; } good[] = {
		{ "4ms", 4000000 }, { "4", 4000000 }, { "250us", 250000 },
		{ "100000ns", 100000 }, { "100us", 100000 }, { "1s", 1000000000 },
		{ "60s", 60000000000ULL }, { "60000ms", 60000000000ULL },
		{ "0", 0 }, { "0ms", 0 }, { "0ns", 0 },
	};
	static const char *const bad[] = {
		"", "x", "ms", "4x", "4msx", "4 ms", " 4", "-4", "+4", "1.5ms",
		"99us", "99999ns", "61s", "60001ms", "0x10",
		"18446744073709551616", "99999999999999999999s",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t ns = 12345;

		CHECK_EQ(sgxemu__parse_tick(good[i].v, &ns), 0);
		CHECK_EQ(ns, good[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ns = 12345;

		if (sgxemu__parse_tick(bad[i], &ns) != -EINVAL)
			test_fail(__FILE__, __LINE__, "'%s' taken", bad[i]);
		CHECK_EQ(ns, 12345);
	}
}

/* A bad SGXEMU_AEX_TICK: the platform is not created (and says why). */
TEST(bad_tick_fails_the_platform)
{
	if (!child_with("bad_tick_fails_the_platform", "4x"))
		return;
	CHECK_EQ(sgxemu_platform_init(), -EINVAL);
}

static long thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nivcsw + ru.ru_nvcsw;
}

/*
 * A base the enclave wrote with WRFSBASE stays through the tick's AEXs:
 * each AEX saves it in the SSA and ERESUME loads it again. Calls of
 * CMD_WRFS_HOLD for 300 ms of CPU time, with the finest tick. Where the
 * host kernel does not track FSGSBASE ("untracked", fsgsbase.c) a context
 * switch restores the base the kernel last set (a documented deviation
 * sgxemu cannot remove), so there only the calls the thread ran through
 * without one are counted; everywhere else, every call.
 */
static void check_fs_held(void)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	uint64_t base, lost = 0, t0, ticks0;
	/* Where the host has them off each RDFSBASE is a trap. */
	uint64_t rounds = sgxemu__fsgsbase_emulated ? 2000 : 2000000;
	unsigned calls = 0, counted = 0;
	int wrong = 0;

	e = tu_load_test_encl(&base, &why);
	REQUIRE(e != NULL);
	ticks0 = sgxemu__count_total(SGXEMU_C_TICK_AEX);
	t0 = thread_cpu_ns();
	/*
	 * 300 ms of CPU time, and on untracked hosts until some call ran
	 * without a context switch: on a busy host (CI's) every long call
	 * is preempted, so there each call starts on a fresh time slice
	 * (a sleep first) and a preempted call halves the next one's
	 * rounds; 60 s of CPU time at most.
	 */
	while (thread_cpu_ns() - t0 < 300000000ULL ||
	       (!counted && thread_cpu_ns() - t0 < 60000000000ULL)) {
		struct sgxemu_run run;
		long sw;

		if (sgxemu__fsgsbase_unmanaged)
			usleep(1000);
		sw = thread_switches();
		calls++;
		if (tu_call(&run, base + L_TCS0, CMD_WRFS_HOLD,
			    0x7f00deadb000ULL, rounds, 0) ||
		    run.exit_reason != SGXEMU_EXIT_EEXIT) {
			wrong++;
			continue;
		}
		if (sgxemu__fsgsbase_unmanaged && thread_switches() != sw) {
			if (rounds > 1000)
				rounds /= 2;
			continue;
		}
		counted++;
		lost += run.regs.r8;
	}
	printf("    %u calls (%u without a context switch or counted), %llu "
	       "tick AEXs: %llu rounds found another FS\n", calls, counted,
	       (unsigned long long)(sgxemu__count_total(SGXEMU_C_TICK_AEX) - ticks0),
	       (unsigned long long)lost);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(lost, 0);
	CHECK(counted > 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

TEST(enclave_written_fs_survives_ticks)
{
	if (child_with("enclave_written_fs_survives_ticks", "200us"))
		check_fs_held();
}

/*
 * The same in a process that ignores SIGCHLD: the platform's CPU probes
 * (a child process each) must find what they find elsewhere. They once
 * found nothing there, took this kind of host's untracked FSGSBASE for
 * none at all, and the AEX then saved the FS the engine had loaded, not
 * the one the enclave wrote: Gramine's child processes lost their TLS.
 */
TEST(enclave_written_fs_survives_ticks_with_sigchld_ignored)
{
	if (child_with_sigchld("enclave_written_fs_survives_ticks_with_sigchld_ignored",
			       "200us", true))
		check_fs_held();
}
