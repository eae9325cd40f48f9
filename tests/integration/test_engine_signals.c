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
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <asm/prctl.h>
#include <linux/futex.h>

#include "engine/engine.h"
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

/* AEXs of the timer tick (on by default, kick.c) in this process: they
 * deliver no signal, so the counts below leave them out. */
static uint64_t tick_aexs(void)
{
	return sgxemu__count_total(SGXEMU_C_TICK_AEX);
}

static volatile long alarms, alarms_after_aex, aex_skipped;
static volatile uint64_t alarm_aex_seen;

/*
 * Each AEX of this loop is a SIGALRM's, a reclaimer kick's (counted by
 * the platform) or a tick's (tick_aexs), so between two AEXs the handler
 * runs once: it sees the thread's AEX count grown by one since its last
 * call (the signal hit enclave mode) or not at all (it hit host code).
 * Grown by more means an AEX with no handler call: a kick's, a tick's, or
 * a lost signal.
 */
static void on_alarm(int sig)
{
	uint64_t now = sgxemu_thread_aex_count();

	(void)sig;
	alarms++;
	/* Grown by more than one: this signal's AEX and others (a tick's
	 * may come just before it). */
	if (now - alarm_aex_seen >= 1) {
		alarms_after_aex++;
		aex_skipped += (long)(now - alarm_aex_seen - 1);
	}
	alarm_aex_seen = now;
}

TEST(setitimer_storm_during_long_loop)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct sgxemu_platform_stats ps0, ps1;
	uint64_t base, n = 400ULL * 1000 * 1000, aex0, aex, ticks0;
	long calls, kicks;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGALRM, &sa, NULL), 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps0), 0);
	aex0 = alarm_aex_seen = sgxemu_thread_aex_count();
	ticks0 = tick_aexs();
	alarms = alarms_after_aex = aex_skipped = 0;
	REQUIRE_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_LOOP, n, 0, 42), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	calls = alarms;
	aex = sgxemu_thread_aex_count() - aex0;
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(42, n));
	/* Signals did land in enclave mode; each of those AEXs delivered its
	 * signal exactly once, at the AEP (how many hit host code instead
	 * depends on the host's speed and is not checked). */
	REQUIRE_EQ(sgxemu_platform_stats(&ps1), 0);
	/* AEXs that deliver no signal: kicks, ticks, and #PFs of the
	 * paging code (reloads, aging faults taken with an exit). */
	kicks = (long)(ps1.kicks - ps0.kicks) +
		(long)(tick_aexs() - ticks0) +
		(long)(ps1.pages_reloaded - ps0.pages_reloaded) +
		(long)(ps1.aging_faults - ps0.aging_faults);
	CHECK(aex > 10);
	CHECK(aex_skipped <= kicks);
	CHECK(alarms_after_aex <= (long)aex);
	CHECK(alarms_after_aex + kicks >= (long)aex);
	CHECK(calls >= alarms_after_aex);
	printf("    %ld SIGALRMs, %ld after an AEX, %llu AEXs, %ld kicks, "
	       "ticks or paging (%llu ticks)\n",
	       calls, (long)alarms_after_aex, (unsigned long long)aex, kicks,
	       (unsigned long long)(tick_aexs() - ticks0));
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

static volatile int yielder_stop;

static void *yielder(void *arg)
{
	(void)arg;
	while (!yielder_stop)
		sched_yield();
	return NULL;
}

static long involuntary_switches(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_nivcsw;
}

/*
 * This thread and a yielding one on one CPU, so that enclave loops are
 * preempted many times; @saved keeps the old affinity for
 * unshare_cpu(). False if either step fails.
 */
static bool share_cpu_with_yielder(cpu_set_t *saved, pthread_t *t)
{
	cpu_set_t one;
	int cpu = -1;

	if (sched_getaffinity(0, sizeof(*saved), saved))
		return false;
	for (int c = 0; c < CPU_SETSIZE && cpu < 0; c++)
		if (CPU_ISSET(c, saved))
			cpu = c;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return false;
	yielder_stop = 0;
	if (pthread_create(t, NULL, yielder, NULL)) {
		sched_setaffinity(0, sizeof(*saved), saved);
		return false;
	}
	return true;
}

static bool unshare_cpu(const cpu_set_t *saved, pthread_t t)
{
	yielder_stop = 1;
	pthread_join(t, NULL);
	return sched_setaffinity(0, sizeof(*saved), saved) == 0;
}

/*
 * The enclave's FS and GS, and the program's GS, across context switches
 * in enclave and in host mode: this thread and a yielding one share one
 * CPU, so the enclave's loop is preempted many times. Where the kernel
 * does not track RD/WR{FS,GS}BASE a switch restores only what arch_prctl
 * last set (fsgsbase.c), which the engine must have kept right: the
 * enclave's bases inside, a GS the program set outside.
 */
TEST(bases_survive_context_switches)
{
	static uint8_t host_gs_page[64];
	const uint64_t host_gs[2] = { 0, (uint64_t)(uintptr_t)host_gs_page };
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	cpu_set_t mask;
	pthread_t t;
	uint64_t base, rounds = 10000000;
	long sw0, sw = 0;

	LOAD(e, base);
	REQUIRE(share_cpu_with_yielder(&mask, &t));
	for (int g = 0; g < 2; g++) {
		uint64_t gs = 0;

		REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, host_gs[g]), 0);
		for (int i = 0; i < 8; i++) {
			sw0 = involuntary_switches();
			REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_BASES,
					   rounds, 0, 0), 0);
			sw += involuntary_switches() - sw0;
			REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
			CHECK_EQ(run.regs.rdx, 0);
			CHECK_EQ(run.regs.r8, 0xf5f5f5f500000000ULL);
			CHECK_EQ(run.regs.r9, 0x6565656500000000ULL);
			/* Host mode, preempted too: the program's own GS. A
			 * GS of 0 is not checked: the kernel's copy may keep
			 * the enclave's (fsgsbase.c), unseen by a program
			 * that never set one. */
			for (int y = 0; y < 20; y++)
				sched_yield();
			if (host_gs[g]) {
				REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_GET_GS,
						   &gs), 0);
				CHECK_EQ(gs, host_gs[g]);
			}
		}
	}
	REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, 0UL), 0);
	REQUIRE(unshare_cpu(&mask, t));
	/* Otherwise the test proved nothing. */
	CHECK(sw > 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * CMD_WRFS_STAY 25 times, preempted many times in its loop, on one base
 * (@new_base false) or a new one each call; the rounds that found
 * another FS and the context switches, of the calls after the first
 * (where one base is used, the first only teaches the engine).
 */
static void wrfs_stay_preempted(bool new_base)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	cpu_set_t mask;
	pthread_t t;
	uint64_t base, lost = 0;
	uint64_t rounds = sgxemu__fsgsbase_emulated ? 2000 : 4000000;
	long sw0, sw = 0;

	LOAD(e, base);
	REQUIRE(share_cpu_with_yielder(&mask, &t));
	for (int i = 0; i < 25; i++) {
		sw0 = involuntary_switches();
		REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_WRFS_STAY,
				   base + L_SCRATCH +
				   (new_base ? 64 * (uint64_t)i : 0), rounds,
				   0), 0);
		REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
		if (i) {
			sw += involuntary_switches() - sw0;
			lost += run.regs.r8;
		}
	}
	REQUIRE(unshare_cpu(&mask, t));
	printf("    24 calls%s, %ld context switches in them: %llu rounds "
	       "found another FS\n", new_base ? ", each on a new base" : "",
	       sw, (unsigned long long)lost);
	CHECK_EQ(lost, 0);
	CHECK(sw > 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * An enclave that keeps the FS base it wrote across its exits, as
 * runtimes do with their TLS (Gramine writes it again after each entry):
 * where the kernel does not track RD/WRFSBASE, a switch restores what
 * arch_prctl last set, so each entry must leave the kernel the base the
 * enclave ran with at its last exit (fsgsbase.c), not the TCS's.
 */
TEST(kept_fs_survives_context_switches)
{
	wrfs_stay_preempted(false);
}

/*
 * The same with a base the engine has never seen at each call, as a
 * runtime's new thread writes its TLS base at its start: no exit or AEX
 * tells the engine of it before the loop is preempted. Where the kernel
 * does not track WRFSBASE the write traps (fsgs_sites.c), so that the
 * kernel's copy is the new base from the write on.
 */
TEST(new_fs_survives_context_switches)
{
	wrfs_stay_preempted(true);
}

/*
 * The trapping sites themselves, on any host (SGXEMU_FSGS_SITES=1 while
 * the enclave is added): a write traps and is done (the loop reads the
 * base it wrote); a site whose writes keep giving the base the kernel
 * already has runs natively again after 16 of them, and a site that
 * writes a new base traps again.
 */
static uint64_t site_traps(void)
{
	return sgxemu__count_total(SGXEMU_C_FSGS_SITE);
}

TEST(fs_write_sites_trap_until_quiet)
{
	const char *why = "?";
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	uint64_t base, t0, first, later = 0;
	const char *was = getenv("SGXEMU_FSGS_SITES");
	char *keep = was ? strdup(was) : NULL;

	setenv("SGXEMU_FSGS_SITES", "1", 1);
	e = tu_load_test_encl(&base, &why);
	if (keep)
		setenv("SGXEMU_FSGS_SITES", keep, 1);
	else
		unsetenv("SGXEMU_FSGS_SITES");
	free(keep);
	if (!e) {
		test_fail(__FILE__, __LINE__, "load: %s", why);
		return;
	}
	t0 = site_traps();
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_WRFS_STAY,
			   base + L_SCRATCH, 1000, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.r8, 0);
	first = site_traps() - t0;
	CHECK_EQ(first, 1);
	for (int i = 0; i < 40; i++) {
		t0 = site_traps();
		REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_WRFS_STAY,
				   base + L_SCRATCH, 1000, 0), 0);
		CHECK_EQ(run.regs.r8, 0);
		if (i >= 20)
			later += site_traps() - t0;
	}
	CHECK_EQ(later, 0);
	/* Another site (CMD_WRFS_HOLD's) with a new base: it traps. */
	t0 = site_traps();
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_WRFS_HOLD,
			   base + L_SCRATCH + 128, 1000, 0), 0);
	CHECK(site_traps() - t0 >= 1);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

TEST(pthread_kill_aex_then_resume)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	pthread_t k;
	uint64_t base, n = 200ULL * 1000 * 1000, aex0, ticks0;
	long sig_aex;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &sa, NULL), 0);
	target_thread = pthread_self();
	kicker_stop = 0;
	usr1 = 0;
	aex0 = sgxemu_thread_aex_count();
	ticks0 = tick_aexs();
	REQUIRE_EQ(pthread_create(&k, NULL, kicker, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_LOOP, n, 0, 7), 0);
	kicker_stop = 1;
	pthread_join(k, NULL);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(7, n));
	/* The signals' AEXs, the ticks' left out. */
	sig_aex = (long)(sgxemu_thread_aex_count() - aex0) -
		  (long)(tick_aexs() - ticks0);
	CHECK(sig_aex > 0);
	CHECK(usr1 >= sig_aex);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static uint64_t gs_wanted;
static volatile int gs_bad;

static void on_usr1_gs(int sig, siginfo_t *si, void *uc)
{
	uint64_t gs = 0;

	(void)sig;
	(void)si;
	(void)uc;
	usr1++;
	if (syscall(SYS_arch_prctl, ARCH_GET_GS, &gs) || gs != gs_wanted)
		gs_bad++;
}

/*
 * Without FSGSBASE in the kernel the engine's handler leaves GS at the
 * enclave's base while it completes an event inside enclave mode (entry.S,
 * TCB_HANDLER_GS), and gives the program's handlers the program's: an
 * EREPORT, done inside, keeps the enclave's GS; a program's handler of a
 * signal that made an AEX sees the program's GS, and so does the program
 * once the call returns. (With FSGSBASE the stub switches both anyway.)
 */
TEST(gs_of_inside_events_and_handlers)
{
	static uint8_t host_gs_page[64];
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa, old;
	pthread_t k;
	uint64_t base, gs = 0, n = 100ULL * 1000 * 1000;

	LOAD(e, base);
	/* Not what the enclave's %gs:8 holds. */
	memset(host_gs_page, 0xa5, sizeof(host_gs_page));
	gs_wanted = (uint64_t)(uintptr_t)host_gs_page;
	REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, gs_wanted), 0);
	for (int i = 0; i < 20; i++) {
		REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_EREPORT_GS, 0, 0,
				   0), 0);
		REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
		CHECK_EQ(run.regs.rdx, 0);
		CHECK_EQ(run.regs.r8, 0);
	}
	REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs), 0);
	CHECK_EQ(gs, gs_wanted);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1_gs;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &sa, &old), 0);
	target_thread = pthread_self();
	kicker_stop = 0;
	usr1 = 0;
	gs_bad = 0;
	REQUIRE_EQ(pthread_create(&k, NULL, kicker, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_LOOP, n, 0, 9), 0);
	kicker_stop = 1;
	pthread_join(k, NULL);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(9, n));
	CHECK(usr1 > 0);
	CHECK_EQ(gs_bad, 0);
	REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_GET_GS, &gs), 0);
	CHECK_EQ(gs, gs_wanted);
	REQUIRE_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, 0UL), 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &old, NULL), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static uint64_t handler_tcs;
static volatile int handler_calls, handler_ok;

/* An enclave call from inside the handler, as Gramine's host handler makes
 * (its EENTER to the enclave's exception handler). */
static void call_from_handler(int sig)
{
	struct sgxemu_run run;

	(void)sig;
	handler_calls++;
	if (tu_call(&run, handler_tcs, CMD_LOOP, 1000, 0, 5) == 0 &&
	    run.exit_reason == SGXEMU_EXIT_EEXIT && run.regs.rdx == lcg(5, 1000))
		handler_ok++;
}

/*
 * The kernel blocks the signal being handled (and the handler's sa_mask)
 * while the handler runs, and kills a thread that raises a fault signal
 * it blocks. ENCLU's trap (SIGILL on AMD, SIGSEGV on Intel) is no signal
 * on hardware: an enclave call from the program's SIGILL or SIGSEGV
 * handler, with either in sa_mask, must work on either vendor.
 */
TEST(enclave_call_from_handler_of_the_trap_signals)
{
	static const int sigs[] = { SIGILL, SIGSEGV };
	struct sgxemu_enclave *e;
	struct sigaction sa;
	uint64_t base;

	LOAD(e, base);
	handler_tcs = base + L_TCS0;
	/* The thread enters once first, as a runtime's has before its
	 * exception handler runs (a first entry from a handler that runs on
	 * another alternate stack, ASan's, cannot set the thread up). */
	handler_calls = handler_ok = 0;
	call_from_handler(0);
	REQUIRE_EQ(handler_ok, 1);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = call_from_handler;
		sigaddset(&sa.sa_mask, SIGILL);
		sigaddset(&sa.sa_mask, SIGSEGV);
		REQUIRE_EQ(sgxemu_sigaction(sigs[i], &sa, NULL), 0);
		handler_calls = handler_ok = 0;
		REQUIRE_EQ(raise(sigs[i]), 0);
		CHECK_EQ(handler_calls, 1);
		CHECK_EQ(handler_ok, 1);
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		REQUIRE_EQ(sgxemu_sigaction(sigs[i], &sa, NULL), 0);
	}
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static volatile int usr2, nested_ok, nested_frames_ok;
static volatile uint64_t nested_fast, nested_aex;

static void on_usr2(int sig)
{
	(void)sig;
	usr2++;
}

static void *kicker_usr2(void *arg)
{
	(void)arg;
	while (!kicker_stop) {
		pthread_kill(target_thread, SIGUSR2);
		usleep(500);
	}
	return NULL;
}

/* A runtime's handler that calls into the enclave (Gramine's), with
 * frames of its own that must survive the call. */
static void long_call_from_handler(int sig)
{
	volatile uint8_t mine[512];
	struct sgxemu_run run;
	uint64_t fast0 = sgxemu__count_total(SGXEMU_C_FAST_EENTER);
	uint64_t aex0 = sgxemu_thread_aex_count(), n = 50ULL * 1000 * 1000;

	(void)sig;
	for (size_t i = 0; i < sizeof(mine); i++)
		mine[i] = (uint8_t)(i * 7 + 3);
	if (tu_call(&run, handler_tcs, CMD_LOOP, n, 0, 11) == 0 &&
	    run.exit_reason == SGXEMU_EXIT_EEXIT && run.regs.rdx == lcg(11, n))
		nested_ok = 1;
	nested_fast = sgxemu__count_total(SGXEMU_C_FAST_EENTER) - fast0;
	nested_aex = sgxemu_thread_aex_count() - aex0;
	nested_frames_ok = 1;
	for (size_t i = 0; i < sizeof(mine); i++)
		if (mine[i] != (uint8_t)(i * 7 + 3))
			nested_frames_ok = 0;
}

/*
 * An enclave call from a program's handler, which runs on the engine's
 * alternate stack, takes the fast entry: the alternate stack is first
 * made to end below the handler's frames (sgxemu__altstack_fit_live), so
 * that the signals enclave mode then takes (another thread's SIGUSR2,
 * each an AEX whose own handler runs nested, and the ticks) put their
 * frames below them. Without the fit the first of them would overwrite
 * the handler's.
 */
TEST(enclave_call_from_handler_takes_the_fast_entry)
{
	struct sgxemu_enclave *e;
	struct sigaction sa, old1, old2;
	pthread_t k;
	uint64_t base;

	LOAD(e, base);
	handler_tcs = base + L_TCS0;
	handler_calls = handler_ok = 0;
	call_from_handler(0);
	REQUIRE_EQ(handler_ok, 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR2, &sa, &old2), 0);
	sa.sa_handler = long_call_from_handler;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &sa, &old1), 0);
	target_thread = pthread_self();
	kicker_stop = 0;
	usr2 = nested_ok = nested_frames_ok = 0;
	REQUIRE_EQ(pthread_create(&k, NULL, kicker_usr2, NULL), 0);
	REQUIRE_EQ(raise(SIGUSR1), 0);
	kicker_stop = 1;
	pthread_join(k, NULL);
	CHECK_EQ(nested_ok, 1);
	CHECK_EQ(nested_frames_ok, 1);
	CHECK(nested_fast >= 1);
	/* Otherwise the frames were never put to the test. */
	CHECK(nested_aex > 0);
	CHECK(usr2 > 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &old1, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR2, &old2, NULL), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static volatile int first_entry_ret = 1;

static void first_entry_in_handler(int sig)
{
	struct sgxemu_run run;

	(void)sig;
	first_entry_ret = tu_call(&run, handler_tcs, CMD_LOOP, 10, 0, 1);
}

static void *first_entry_thread(void *arg)
{
	static uint8_t stack[64 << 10];
	stack_t ss = { .ss_sp = stack, .ss_size = sizeof(stack) }, prev;
	struct sigaction sa;

	(void)arg;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = first_entry_in_handler;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, &prev))
		return NULL;
	if (!sgxemu_sigaction(SIGUSR2, &sa, NULL))
		raise(SIGUSR2);
	/* The thread's own (ASan's, under make asan) is freed at its exit. */
	sigaltstack(&prev, NULL);
	return NULL;
}

/*
 * A thread's first entry from a handler that runs on the program's own
 * alternate stack: the engine cannot put its own in place there, so the
 * call fails with EPERM (and a line on stderr), not with a crash.
 */
TEST(first_entry_on_a_foreign_alternate_stack_is_eperm)
{
	struct sgxemu_enclave *e;
	uint64_t base;
	pthread_t t;

	LOAD(e, base);
	handler_tcs = base + L_TCS1;
	REQUIRE_EQ(pthread_create(&t, NULL, first_entry_thread, NULL), 0);
	pthread_join(t, NULL);
	CHECK_EQ(first_entry_ret, -EPERM);
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

/*
 * ENCLU[EENTER] by host code, TCS in @tcs (r12), after @load (which sets
 * EAX to EENTER and EDI to the command); the enclave's RDX, RSI, RDI in
 * @fs, @gs, @magic.
 */
#define HOST_EENTER(tcs, fs, gs, magic, load) \
	__asm__ volatile( \
		"push %%rbx\n\t" \
		"push %%rbp\n\t" \
		"mov %%r12, %%rbx\n\t" \
		"lea 0f(%%rip), %%rcx\n\t" \
		load \
		"0: .byte 0x0f, 0x01, 0xd7\n\t" \
		"pop %%rbp\n\t" \
		"pop %%rbx\n\t" \
		: "=d"(fs), "=S"(gs), "=D"(magic), "+r"(tcs) \
		: \
		: "rax", "rcx", "r8", "r9", "r10", "r11", "r13", "r14", \
		  "r15", "memory", "cc")

/* ENCLU[EENTER] executed by host code: emulated through SIGILL. */
TEST(host_enclu_eenter)
{
	struct sgxemu_enclave *e;
	uint64_t base, fs = 0, gs = 0, magic = 0;
	register uint64_t tcs asm("r12");

	LOAD(e, base);
	tcs = base + L_TCS2;
	/* The leaf is not loaded right before the ENCLU: not rewritten
	 * (enclu_patch.c), every entry traps. */
	HOST_EENTER(tcs, fs, gs, magic, "mov $2, %%eax\n\tmov $6, %%edi\n\t");
	CHECK_EQ(fs, base + L_FSGS + 0x4000);
	CHECK_EQ(gs, base + L_FSGS + 0x5000);
	CHECK_EQ(magic, 0xf5f5f5f500000002ULL);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * Run test @name alone in a fresh child (a rewrite needs one thread; a
 * lost slot ends the process): true in the child, which goes on with the
 * test; in the parent, the child's exit is the test's result, false.
 */
static bool in_child(const char *name)
{
	char exe[4096];
	ssize_t len;
	pid_t pid;
	int status = -1;

	if (getenv("SGXEMU_TEST_CHILD"))
		return true;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(len > 0);
	if (len <= 0)
		return false;
	exe[len] = 0;
	pid = fork();
	CHECK(pid >= 0);
	if (pid < 0)
		return false;
	if (pid == 0) {
		setenv("SGXEMU_TEST_CHILD", "1", 1);
		execl(exe, exe, name, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status))
		printf("# child ended by signal %d\n", WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return false;
}

/* One host ENCLU[EENTER] site, `mov $2,%rax` right before the ENCLU (as
 * Gramine's loader has it): CMD_FSGS in TCS 2; the magic it reports. */
__attribute__((noinline)) static uint64_t eenter_site(uint64_t tcs_addr)
{
	register uint64_t tcs asm("r12") = tcs_addr;
	uint64_t fs, gs, magic;

	/* CMD_FSGS; then `mov $2,%rax` 7 bytes into a cache line. */
	HOST_EENTER(tcs, fs, gs, magic, "mov $6, %%edi\n\t.p2align 6\n\t"
		    ".byte 0x48, 0xc7, 0xc0, 0x02, 0, 0, 0\n\t");
	(void)fs;
	(void)gs;
	return magic;
}

static uint64_t clone_tcs, clone_magic[4], clone_traps[2], clone_fast[2];
static struct sgxemu_tcb *clone_tcb;
static char clone_stack[256 * 1024] __attribute__((aligned(16)));
static pid_t clone_tid = 1;

/* The raw clone()'s thread: four entries, then its TCB (no libc call
 * that would need a TLS of its own). */
static int clone_entries(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		clone_magic[i] = eenter_site(clone_tcs);
		if (i == 0 || i == 3) {
			clone_traps[!!i] = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
			clone_fast[!!i] = sgxemu__count_total(SGXEMU_C_FAST_EENTER);
		}
	}
	clone_tcb = sgxemu__tcb_by_altstack();
	return 0;
}

/*
 * A host ENCLU[EENTER] site traps once and is then rewritten to enter
 * through the fast path, without a trap (src/engine/enclu_patch.c): the
 * same entries, as the engine's counters see them. Run alone in a child
 * (the rewrite is refused while the program has other threads).
 */
TEST(host_enclu_eenter_rewritten)
{
	struct sgxemu_enclave *e;
	uint64_t base, traps, fast;

	if (!in_child("host_enclu_eenter_rewritten"))
		return;
	LOAD(e, base);
	/* The first entry of a thread never set up goes through the fast
	 * path already (the handler sends it there); the next one traps
	 * and is rewritten. */
	for (int i = 0; i < 3 && !sgxemu__enclu_patched_any(); i++)
		CHECK_EQ(eenter_site(base + L_TCS2), 0xf5f5f5f500000002ULL);
	REQUIRE(sgxemu__enclu_patched_any());
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
	fast = sgxemu__count_total(SGXEMU_C_FAST_EENTER);
	CHECK(traps >= 1);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(eenter_site(base + L_TCS2), 0xf5f5f5f500000002ULL);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_HOST_ENCLU), traps);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_FAST_EENTER), fast + 3);
	/* A thread made by a raw clone() on this thread's TLS, as Gramine's
	 * loader makes its threads: its first entry traps (the engine sets
	 * it up there, then it traps again), the later ones take the fast path with its own TCB
	 * (by its alternate stack), not this thread's. */
	clone_tcs = base + L_TCS2;
	REQUIRE(clone(clone_entries, clone_stack + sizeof(clone_stack),
		      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
		      CLONE_THREAD | CLONE_SYSVSEM | CLONE_CHILD_CLEARTID,
		      NULL, NULL, NULL, &clone_tid) > 0);
	while (__atomic_load_n(&clone_tid, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &clone_tid, FUTEX_WAIT, clone_tid, NULL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(clone_magic[i], 0xf5f5f5f500000002ULL);
	CHECK(clone_traps[0] > traps);
	CHECK_EQ(clone_traps[1], clone_traps[0]);
	CHECK_EQ(clone_fast[1], clone_fast[0] + 3);
	CHECK(clone_tcb && clone_tcb != sgxemu__tcb_self() &&
	      clone_tcb->foreign);
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
 * A runtime without the vDSO (the Intel SDK's urts) handles an enclave
 * exception in its SIGILL/SIGSEGV handler by calling the enclave from
 * there, and that call traps in enclave mode (ENCLU leaves, faults): the
 * signal frames it takes must not land on the handler's own frames on the
 * alternate stack. The handler then returns normally, through its frame,
 * to where it sent the interrupted context.
 */
static uint64_t nested_tcs;
static volatile int nested_ok, nested_calls;

static void on_ill_nested(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	nested_calls++;
	/* EREPORT and the EEXIT trap in enclave mode. */
	for (int i = 0; i < 20; i++) {
		register uint64_t tcs asm("r12") = nested_tcs;
		uint64_t rdx, rsi, rdi;

		HOST_EENTER(tcs, rdx, rsi, rdi,
			    "mov $2, %%eax\n\tmov $12, %%edi\n\t");
		(void)rsi;
		(void)rdi;
		if (rdx == 0)
			nested_ok++;
	}
	/* Handled: continue after the ENCLU that entered. */
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(host_aep + 3);
}

TEST(enclave_calls_from_the_exception_handler_keep_its_frames)
{
	struct sgxemu_enclave *e;
	struct sigaction sa;
	uint64_t base;

	LOAD(e, base);
	nested_tcs = base + L_TCS1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_ill_nested;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGILL, &sa, NULL), 0);
	nested_ok = nested_calls = 0;
	alarm(60);		/* a clobbered frame may loop, not crash */
	host_enter_ud2(base + L_TCS0);
	alarm(0);
	CHECK_EQ(nested_calls, 1);
	CHECK_EQ(nested_ok, 20);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	REQUIRE_EQ(sgxemu_sigaction(SIGILL, &sa, NULL), 0);
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
		"bases_survive_context_switches",
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

/* ENCLU with @leaf from host code; the fault lands in on_host_fault. */
static volatile int hf_signo, hf_code;
static volatile greg_t hf_trap, hf_err, hf_rip;
extern char host_enclu_insn[];
void host_enclu_leaf(uint64_t leaf);
__asm__(
	".text\n"
	".globl host_enclu_leaf\n"
	"host_enclu_leaf:\n"
	"	push %rbx\n"
	"	mov %rdi, %rax\n"
	"	xor %ebx, %ebx\n"
	"	xor %ecx, %ecx\n"
	".globl host_enclu_insn\n"
	"host_enclu_insn:\n"
	"	.byte 0x0f, 0x01, 0xd7\n"
	"	pop %rbx\n"
	"	ret\n"
	/* A #UD on the same code page (on_host_fault skips 3 bytes). */
	".globl host_ud2_insn\n"
	"host_ud2_insn:\n"
	"	ud2\n"
	"	nop\n"
	"	ret\n");
extern char host_ud2_insn[];

static void on_host_fault(int sig, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	hf_signo = sig;
	hf_code = si->si_code;
	hf_trap = g[REG_TRAPNO];
	hf_err = g[REG_ERR];
	hf_rip = g[REG_RIP];
	g[REG_RIP] += 3;	/* past the ENCLU */
}

/*
 * Outside enclave mode every leaf but EENTER/ERESUME is #GP(0) on SGX
 * hardware, whichever fault this host raised for the instruction; with
 * host ENCLU emulation off the program gets this host's own fault.
 */
TEST(host_enclu_other_leaves_are_gp)
{
	const uint64_t leaves[] = { SGX_EREPORT, SGX_EGETKEY, SGX_EEXIT,
				    SGX_EACCEPT, 0x7fffffff };
	struct sgxemu_trap_info ti;
	struct sigaction sa;

	REQUIRE_EQ(sgxemu_platform_init(), 0);
	REQUIRE_EQ(sgxemu_trap_probe(&ti), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_host_fault;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGSEGV, &sa, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGILL, &sa, NULL), 0);
	for (size_t i = 0; i < sizeof(leaves) / sizeof(*leaves); i++) {
		hf_signo = 0;
		host_enclu_leaf(leaves[i]);
		CHECK_EQ(hf_signo, SIGSEGV);
		CHECK_EQ(hf_code, 0x80);	/* SI_KERNEL */
		CHECK_EQ(hf_trap, X86_TRAP_GP);
		CHECK_EQ(hf_err, 0);
		CHECK_EQ(hf_rip, (greg_t)(uintptr_t)host_enclu_insn);
	}
	sgxemu_set_host_enclu(false);
	hf_signo = 0;
	host_enclu_leaf(SGX_EREPORT);
	if (ti.forced) {		/* SGXEMU_FAULT_STYLE converts it */
		bool ud = !strcmp(ti.forced, "ud");

		CHECK_EQ(hf_signo, ud ? SIGILL : SIGSEGV);
		CHECK_EQ(hf_trap, ud ? X86_TRAP_UD : X86_TRAP_GP);
	} else {
		CHECK_EQ(hf_signo, ti.signo);
		CHECK_EQ(hf_trap, (greg_t)ti.vector);
	}
	sgxemu_set_host_enclu(true);
	/* The engine read this code page at the ENCLU traps above and now
	 * reads it directly (classify.c): a ud2 there is still a #UD of
	 * the program's, not an ENCLU. */
	hf_signo = 0;
	((void (*)(void))(uintptr_t)host_ud2_insn)();
	CHECK_EQ(hf_signo, SIGILL);
	CHECK_EQ(hf_trap, X86_TRAP_UD);
	CHECK_EQ(hf_rip, (greg_t)(uintptr_t)host_ud2_insn);
}

/*
 * EENTER by host ENCLU with the emulation off: the program's handler
 * could only retry (the Intel SDK's takes the fault for an AEX and loops),
 * so the program ends with the fault's signal and a line saying why,
 * whatever handler it installed.
 */
TEST(host_eenter_with_emulation_off_ends_the_program)
{
	struct sgxemu_trap_info ti;
	int p[2], status;
	char buf[1024];
	size_t len;
	ssize_t n;
	pid_t pid;

	REQUIRE_EQ(sgxemu_platform_init(), 0);
	REQUIRE_EQ(sgxemu_trap_probe(&ti), 0);
	REQUIRE_EQ(pipe(p), 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct sgxemu_enclave *e;
		struct sigaction sa;
		uint64_t base;
		const char *why = "?";

		dup2(p[1], 2);
		e = tu_load_test_encl(&base, &why);
		if (!e)
			_exit(3);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_host_fault;	/* skips the ENCLU */
		sa.sa_flags = SA_SIGINFO;
		sgxemu_sigaction(SIGSEGV, &sa, NULL);
		sgxemu_sigaction(SIGILL, &sa, NULL);
		sgxemu_set_host_enclu(false);
		__asm__ volatile(
			"push %%rbx\n\t"
			"mov %0, %%rbx\n\t"
			"lea 0f(%%rip), %%rcx\n\t"
			"mov $2, %%eax\n\t"
			"0: .byte 0x0f, 0x01, 0xd7\n\t"
			"pop %%rbx\n\t"
			: : "r"(base + L_TCS2)
			: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
			  "r11", "memory", "cc");
		_exit(0);		/* the handler skipped it: wrong */
	}
	close(p[1]);
	len = 0;
	while ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	buf[len] = 0;
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status))
		test_fail(__FILE__, __LINE__, "status 0x%x, stderr: %s", status,
			  buf);
	if (WIFSIGNALED(status)) {
		int want = ti.forced ? (!strcmp(ti.forced, "ud") ? SIGILL : SIGSEGV)
				     : ti.signo;

		CHECK_EQ(WTERMSIG(status), want);
	}
	CHECK(strstr(buf, "host ENCLU[EENTER]") != NULL);
	CHECK(strstr(buf, "SGXEMU_HOST_ENCLU=0") != NULL);
}

static volatile long alt_alarms;
static volatile uintptr_t alt_handler_sp;

static void on_alt_alarm(int sig)
{
	(void)sig;
	alt_alarms++;
	alt_handler_sp = (uintptr_t)__builtin_frame_address(0);
}

/*
 * A program that sets its own alternate signal stack after its thread
 * entered an enclave: it reads back what it set, with the kernel's
 * errors, while the kernel keeps the engine's (whose handlers find the
 * thread's state from their stack), so enclave signals still work.
 */
TEST(program_sigaltstack_after_entry)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	static char mine[65536];
	stack_t ss = { .ss_sp = mine, .ss_size = sizeof(mine) }, q, k, bad;
	uint64_t base, n = 100ULL * 1000 * 1000, aex0, ticks0;
	long sig_aex;

	LOAD(e, base);
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_NOP, 0, 0, 0), 0);
	REQUIRE_EQ(syscall(SYS_sigaltstack, NULL, &k), 0);
	REQUIRE_EQ(sgxemu_sigaltstack(&ss, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaltstack(NULL, &q), 0);
	CHECK(q.ss_sp == (void *)mine);
	CHECK_EQ(q.ss_size, sizeof(mine));
	CHECK_EQ(q.ss_flags, 0);
	/* The kernel's is still the engine's. */
	{
		stack_t now;

		REQUIRE_EQ(syscall(SYS_sigaltstack, NULL, &now), 0);
		CHECK(now.ss_sp == k.ss_sp);
		CHECK(now.ss_sp != (void *)mine);
	}
	bad = ss;
	bad.ss_size = 1024;
	errno = 0;
	CHECK_EQ(sgxemu_sigaltstack(&bad, NULL), -1);
	CHECK_EQ(errno, ENOMEM);
	bad = ss;
	bad.ss_flags = 5;
	errno = 0;
	CHECK_EQ(sgxemu_sigaltstack(&bad, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	/* Signals in enclave mode still AEX and reach the handler. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alt_alarm;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	REQUIRE_EQ(sgxemu_sigaction(SIGALRM, &sa, NULL), 0);
	aex0 = sgxemu_thread_aex_count();
	ticks0 = tick_aexs();
	alt_alarms = 0;
	REQUIRE_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_LOOP, n, 0, 5), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(5, n));
	sig_aex = (long)(sgxemu_thread_aex_count() - aex0) -
		  (long)(tick_aexs() - ticks0);
	CHECK(sig_aex > 0);
	CHECK(alt_alarms >= sig_aex);
	/* The handler ran on the engine's stack (documented deviation). */
	CHECK(alt_handler_sp - (uintptr_t)k.ss_sp < k.ss_size);
	/* Disabled: read back as such. */
	ss.ss_flags = SS_DISABLE;
	REQUIRE_EQ(sgxemu_sigaltstack(&ss, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaltstack(NULL, &q), 0);
	CHECK_EQ(q.ss_flags, SS_DISABLE);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static void *plain_thread_altstack(void *arg)
{
	static char theirs[32768];
	stack_t ss = { .ss_sp = theirs, .ss_size = sizeof(theirs) }, k, old;
	void *ret = NULL;

	(void)arg;
	if (sgxemu_sigaltstack(&ss, &old) ||
	    syscall(SYS_sigaltstack, NULL, &k) || k.ss_sp != (void *)theirs)
		ret = (void *)1;
	/* Put back what the thread had (a sanitizer frees its own). */
	old.ss_flags &= ~SS_ONSTACK;
	sgxemu_sigaltstack(&old, NULL);
	return ret;
}

/* A thread that never entered: sigaltstack is the kernel's, unchanged. */
TEST(sigaltstack_passes_through_before_entry)
{
	pthread_t t;
	void *r = (void *)2;

	REQUIRE_EQ(sgxemu_platform_init(), 0);
	REQUIRE_EQ(pthread_create(&t, NULL, plain_thread_altstack, NULL), 0);
	pthread_join(t, &r);
	CHECK(r == NULL);
}

/*
 * ERESUME through the entry (the API's AEP, as the vDSO's) takes no trap
 * (resume.c): the enclave's XMM registers, as its handler left them in
 * the SSA, survive host SSE work in between; the caller's signal mask
 * and the kernel's alternate stack are as they were after the resume and
 * the enclave's exit; a signal sent while the enclave runs after it still
 * interrupts it (an AEX tick).
 */
TEST(eresume_takes_no_trap)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	uint64_t base, tcs, seed = 0x1234abcd5678ef01ULL, traps, fast;
	sigset_t usr2, before, after;
	stack_t ss0, ss1;

	LOAD(e, base);
	tcs = base + L_TCS0;
	REQUIRE_EQ(tu_call(&run, tcs, CMD_XMM, seed, 0, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	REQUIRE_EQ(tu_call(&run, tcs, 0, 2, 0, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	{
		volatile double d = 2.5;

		for (int i = 0; i < 100; i++)
			d = d * 1.001 + 0.25;
		CHECK(d > 0);
	}
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	REQUIRE_EQ(pthread_sigmask(SIG_BLOCK, &usr2, &before), 0);
	REQUIRE_EQ(pthread_sigmask(SIG_BLOCK, NULL, &before), 0);
	REQUIRE_EQ(syscall(SYS_sigaltstack, NULL, &ss0), 0);
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
	fast = sgxemu__count_total(SGXEMU_C_FAST_ERESUME);
	REQUIRE_EQ(tu_resume(&run, tcs), 0);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_HOST_ENCLU) - traps, 0);
	CHECK_EQ(sgxemu__count_total(SGXEMU_C_FAST_ERESUME) - fast, 1);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, 0);			/* XMM mismatches */
	CHECK_EQ(run.regs.rsi, seed ^ (4 * 0x0101010101010101ULL));
	REQUIRE_EQ(pthread_sigmask(SIG_BLOCK, NULL, &after), 0);
	for (int s = 1; s < 64; s++)
		if (sigismember(&before, s) != sigismember(&after, s))
			CHECK_EQ(s, 0);			/* the mask changed */
	CHECK_EQ(syscall(SYS_sigaltstack, NULL, &ss1), 0);
	CHECK(ss1.ss_sp == ss0.ss_sp && ss1.ss_size == ss0.ss_size);
	REQUIRE_EQ(pthread_sigmask(SIG_UNBLOCK, &usr2, NULL), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * Many ERESUMEs of a computation the program's signals interrupt, each
 * through the fast path: every AEX's ERESUME is one without a trap, and
 * the result is the uninterrupted run's (no register lost).
 */
TEST(signalled_loop_resumes_without_traps)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	pthread_t k;
	uint64_t base, n = 100ULL * 1000 * 1000, aex, fast, traps;

	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGUSR1, &sa, NULL), 0);
	target_thread = pthread_self();
	kicker_stop = 0;
	aex = sgxemu_thread_aex_count();
	fast = sgxemu__count_total(SGXEMU_C_FAST_ERESUME);
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
	REQUIRE_EQ(pthread_create(&k, NULL, kicker, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_LOOP, n, 0, 7), 0);
	kicker_stop = 1;
	pthread_join(k, NULL);
	aex = sgxemu_thread_aex_count() - aex;
	fast = sgxemu__count_total(SGXEMU_C_FAST_ERESUME) - fast;
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU) - traps;
	printf("# %llu AEX, %llu fast ERESUMEs, %llu host ENCLU traps\n",
	       (unsigned long long)aex, (unsigned long long)fast,
	       (unsigned long long)traps);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, lcg(7, n));
	CHECK(aex > 0);
	/* Each AEX records the frame its ERESUME repeats: all fast. */
	CHECK_EQ(fast, aex);
	CHECK_EQ(traps, 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* The host stack aep_site_loop enters on: URSP is near its top. */
#define AEP_STACK_WORDS	1024
#define AEP_CANARY	0x5a5aa5a5c3c33c3cULL
static uint64_t aep_stack[AEP_STACK_WORDS] __attribute__((aligned(16)));
static uint64_t aep_site;

/*
 * A host AEP as Gramine's loader has it: an instruction of its own (its
 * AEX counter: here `lock incq (%rbp)`, RBP being URBP at the AEP), then
 * ENCLU with RAX = ERESUME from the AEX. CMD_LOOP of @n steps from @seed
 * in TCS @tcs_addr by a host ENCLU[EENTER], entered with RSP near the top
 * of aep_stack, whose words below URSP are AEP_CANARY: the program's
 * memory, as Gramine's enclave keeps its OCALL arguments there, which
 * nothing writes on hardware. The AEP's count in @aeps, its address in
 * aep_site.
 */
__attribute__((noinline)) static uint64_t aep_site_loop(uint64_t tcs_addr,
							uint64_t n,
							uint64_t seed,
							uint64_t *aeps)
{
	register uint64_t tcs asm("r12") = tcs_addr;
	register uint64_t steps asm("r13") = n;
	register uint64_t s8 asm("r14") = seed;
	register uint64_t *ursp asm("r15") = &aep_stack[AEP_STACK_WORDS - 2];
	uint64_t rdx;

	for (int i = 0; i < AEP_STACK_WORDS; i++)
		aep_stack[i] = AEP_CANARY;
	aep_stack[AEP_STACK_WORDS - 1] = 0;
	__asm__ volatile(
		"push %%rbx\n\t"
		"push %%rbp\n\t"
		"lea 1f(%%rip), %%rcx\n\t"
		"mov %%rcx, %[site]\n\t"
		"mov %%rsp, (%%r15)\n\t"	/* URSP's word: our RSP */
		"mov %%r15, %%rsp\n\t"
		"lea 8(%%r15), %%rbp\n\t"	/* the count, above URSP */
		"mov %%r12, %%rbx\n\t"
		"mov $8, %%edi\n\t"		/* CMD_LOOP */
		"mov %%r13, %%rsi\n\t"
		"mov %%r14, %%r8\n\t"
		"mov $2, %%eax\n\t"
		"jmp 2f\n\t"
		".p2align 4\n\t"
		"1: lock incq (%%rbp)\n\t"	/* the AEP */
		".byte 0x0f, 0x01, 0xd7\n\t"	/* ERESUME */
		"2: .byte 0x0f, 0x01, 0xd7\n\t"	/* EENTER */
		"mov (%%rsp), %%rsp\n\t"	/* RSP is URSP after EEXIT */
		"pop %%rbp\n\t"
		"pop %%rbx\n\t"
		: "=d"(rdx), [site] "=m"(aep_site), "+r"(tcs), "+r"(steps),
		  "+r"(s8), "+r"(ursp)
		:
		: "rax", "rcx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "memory", "cc");
	*aeps = aep_stack[AEP_STACK_WORDS - 1];
	return rdx;
}

/* Words of aep_stack below URSP that are no longer AEP_CANARY. */
static int aep_stack_written(void)
{
	int n = 0;

	for (int i = 0; i < AEP_STACK_WORDS - 2; i++)
		n += aep_stack[i] != AEP_CANARY;
	return n;
}

/*
 * That AEP's ENCLU[ERESUME] traps once, and then the AEP has a copy of
 * its lock incq in a trampoline (enclu_patch.c) where every later AEX of
 * the loop (SIGALRM every ms) goes on, resuming without a trap: the AEP's
 * own instruction still runs once per AEX, the result is the
 * uninterrupted loop's, and no word below URSP changed (a trampoline
 * that pushed there broke Gramine's OCALL arguments). The same on every
 * host (the rewrite was once held back where the kernel has FSGSBASE).
 */
TEST(host_enclu_eresume_rewritten)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	uint64_t base, n = 200ULL * 1000 * 1000, aeps, aex, fast, traps;
	struct sgxemu_enclave *e;
	struct sigaction sa;

	if (!in_child("host_enclu_eresume_rewritten"))
		return;
	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGALRM, &sa, NULL), 0);
	REQUIRE_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	/* Until the site has trapped once, with one AEX at least. */
	for (int i = 0; i < 5 && !sgxemu__aep_trampoline(aep_site); i++)
		CHECK_EQ(aep_site_loop(base + L_TCS0, n / 4, 3, &aeps),
			 lcg(3, n / 4));
	REQUIRE(sgxemu__aep_trampoline(aep_site) != 0);
	aex = sgxemu_thread_aex_count();
	fast = sgxemu__count_total(SGXEMU_C_FAST_ERESUME);
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
	CHECK_EQ(aep_site_loop(base + L_TCS0, n, 11, &aeps), lcg(11, n));
	setitimer(ITIMER_REAL, &off, NULL);
	aex = sgxemu_thread_aex_count() - aex;
	fast = sgxemu__count_total(SGXEMU_C_FAST_ERESUME) - fast;
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU) - traps;
	printf("# %llu AEX, AEP run %llu times, %llu fast ERESUMEs, %llu "
	       "host ENCLU traps\n", (unsigned long long)aex,
	       (unsigned long long)aeps, (unsigned long long)fast,
	       (unsigned long long)traps);
	CHECK(aex > 0);
	CHECK_EQ(aeps, aex);
	CHECK_EQ(fast, aex);
	/* The EENTER site (no mov of the leaf right before it) traps. */
	CHECK_EQ(traps, 1);
	CHECK_EQ(aep_stack_written(), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * The same loop with an AEP that counts in URSP's own word, `lock incq
 * (%rsp)`: an instruction that would not do the same on another stack.
 */
__attribute__((noinline)) static uint64_t aep_rsp_loop(uint64_t tcs_addr,
						       uint64_t n,
						       uint64_t seed,
						       uint64_t *aeps)
{
	register uint64_t tcs asm("r12") = tcs_addr;
	register uint64_t steps asm("r13") = n;
	register uint64_t s8 asm("r14") = seed;
	uint64_t rdx, count;

	__asm__ volatile(
		"push %%rbx\n\t"
		"push %%rbp\n\t"
		"sub $16, %%rsp\n\t"
		"movq $0, (%%rsp)\n\t"
		"mov %%r12, %%rbx\n\t"
		"lea 1f(%%rip), %%rcx\n\t"
		"mov %%rcx, %[site]\n\t"
		"mov $8, %%edi\n\t"		/* CMD_LOOP */
		"mov %%r13, %%rsi\n\t"
		"mov %%r14, %%r8\n\t"
		"mov $2, %%eax\n\t"
		"jmp 2f\n\t"
		".p2align 4\n\t"
		"1: lock incq (%%rsp)\n\t"	/* the AEP */
		".byte 0x0f, 0x01, 0xd7\n\t"	/* ERESUME */
		"2: .byte 0x0f, 0x01, 0xd7\n\t"	/* EENTER */
		"mov (%%rsp), %%rax\n\t"
		"add $16, %%rsp\n\t"
		"pop %%rbp\n\t"
		"pop %%rbx\n\t"
		: "=d"(rdx), "=a"(count), [site] "=m"(aep_site), "+r"(tcs),
		  "+r"(steps), "+r"(s8)
		:
		: "rcx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r15",
		  "memory", "cc");
	*aeps = count;
	return rdx;
}

/*
 * An AEP whose instructions use RSP gets no trampoline (it would run them
 * on the engine's AEP stack): every ERESUME there traps, and the AEP's
 * count in URSP's word is one per AEX all the same.
 */
TEST(host_enclu_eresume_rsp_aep_traps)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	uint64_t base, n = 100ULL * 1000 * 1000, aeps, aex, traps;
	struct sgxemu_enclave *e;
	struct sigaction sa;

	if (!in_child("host_enclu_eresume_rsp_aep_traps"))
		return;
	LOAD(e, base);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	REQUIRE_EQ(sgxemu_sigaction(SIGALRM, &sa, NULL), 0);
	REQUIRE_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
	/* A first run, in which its ERESUME traps (and would be taken). */
	CHECK_EQ(aep_rsp_loop(base + L_TCS0, n / 4, 3, &aeps), lcg(3, n / 4));
	aex = sgxemu_thread_aex_count();
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU);
	CHECK_EQ(aep_rsp_loop(base + L_TCS0, n, 11, &aeps), lcg(11, n));
	setitimer(ITIMER_REAL, &off, NULL);
	aex = sgxemu_thread_aex_count() - aex;
	traps = sgxemu__count_total(SGXEMU_C_HOST_ENCLU) - traps;
	printf("# %llu AEX, AEP run %llu times, %llu host ENCLU traps\n",
	       (unsigned long long)aex, (unsigned long long)aeps,
	       (unsigned long long)traps);
	CHECK(aex > 0);
	CHECK_EQ(sgxemu__aep_trampoline(aep_site), 0);
	CHECK_EQ(aeps, aex);
	CHECK_EQ(traps, aex + 1);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

static uint64_t reap_tcs;
static volatile uint64_t reap_magic;
static char reap_stack[64 * 1024] __attribute__((aligned(16)));

/* A raw clone() thread on its creator's TLS: one host ENCLU[EENTER]. */
static int reap_entry(void *arg)
{
	register uint64_t tcs asm("r12") = reap_tcs;
	uint64_t fs, gs, magic;

	(void)arg;
	HOST_EENTER(tcs, fs, gs, magic, "mov $2, %%eax\n\tmov $6, %%edi\n\t");
	(void)fs;
	(void)gs;
	reap_magic = magic;
	return 0;
}

/*
 * Threads made by a raw clone() on their creator's TLS (as Gramine's
 * loader makes them) get a slot at their first entry, which no TLS
 * destructor gives back when they end (thread.c reap_foreign): more of
 * them one after the other than there are slots (NR_SLOTS) all enter.
 * In a child, which a lost slot would end by SIGILL.
 */
TEST(raw_clone_threads_give_their_slots_back)
{
	struct sgxemu_enclave *e;
	uint64_t base, fs, gs, magic;
	register uint64_t tcs asm("r12");
	static pid_t tid;
	int bad = 0;

	if (!in_child("raw_clone_threads_give_their_slots_back"))
		return;
	LOAD(e, base);
	/* This thread's own TCB first: the clones share its TLS. */
	tcs = base + L_TCS2;
	HOST_EENTER(tcs, fs, gs, magic, "mov $2, %%eax\n\tmov $6, %%edi\n\t");
	REQUIRE_EQ(magic, 0xf5f5f5f500000002ULL);
	reap_tcs = base + L_TCS2;
	for (int i = 0; i < NR_SLOTS + 200; i++) {
		reap_magic = 0;
		tid = 1;
		REQUIRE(clone(reap_entry, reap_stack + sizeof(reap_stack),
			      CLONE_VM | CLONE_FS | CLONE_FILES |
			      CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
			      CLONE_CHILD_CLEARTID, NULL, NULL, NULL,
			      &tid) > 0);
		while (__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &tid, FUTEX_WAIT, tid, NULL);
		if (reap_magic != 0xf5f5f5f500000002ULL && bad++ < 3)
			printf("# thread %d: magic %#llx\n", i,
			       (unsigned long long)reap_magic);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}
