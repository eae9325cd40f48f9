/* SPDX-License-Identifier: MIT */
/*
 * AEX-Notify through the engine, with real enclave code
 * (tests/enclaves/aexn_encl.S): signals interrupt a loop in the enclave;
 * each AEX is followed by the AEP's ERESUME, which delivers a
 * notification when the enclave, the thread and the SSA frame ask for it.
 * The enclave's handler counts it, goes back to frame 0 with EDECCSSA and
 * restores the interrupted context itself; the loop's result shows that
 * no register was lost on the way.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "test.h"
#include "../enclaves/encl_util.h"

#define AEXN_LOOP	1
#define AEXN_EDECCSSA	2

static uint64_t lcg(uint64_t seed, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		seed = seed * LCG_MUL + i;
	return seed;
}

static struct sgxemu_enclave *load(uint64_t *base, uint64_t attr)
{
	const char *why = "?";
	struct sgxemu_enclave *e;
	char path[512];

	snprintf(path, sizeof(path), "%s/enclaves/aexn_encl.bin",
		 test_build_dir());
	e = tu_load_layout_attr(path, base, &why, SGX_XFRM_LEGACY, attr);
	if (!e)
		test_fail(__FILE__, __LINE__, "load: %s", why);
	return e;
}

static volatile uint64_t stop_flag;
static volatile long usr1;
/* The timer tick's AEXs (on by default, kick.c) in the last loop. */
static long ticks;
static struct {
	uint64_t tcs;
	uint8_t byte;
	struct sgxemu_run run;
	int ret;
} loop;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void *loop_thread(void *arg)
{
	(void)arg;
	loop.ret = tu_call(&loop.run, loop.tcs, AEXN_LOOP,
			   (uint64_t)(uintptr_t)&stop_flag, loop.byte, 11);
	return NULL;
}

/*
 * Runs the loop in @tcs with SSA[0].AEXNOTIFY = @byte and interrupts it
 * @signals times with SIGUSR1 (each an AEX, the handler, and the AEP's
 * ERESUME). Returns the notifications the enclave counted, or -1.
 */
static long interrupted_loop(struct sgxemu_enclave *e, uint64_t tcs,
			     uint8_t byte, int signals)
{
	struct sigaction sa;
	pthread_t t;
	long seen = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	if (sgxemu_sigaction(SIGUSR1, &sa, NULL))
		return -1;
	stop_flag = 0;
	usr1 = 0;
	ticks = -(long)sgxemu__count_total(SGXEMU_C_TICK_AEX);
	loop.tcs = tcs;
	loop.byte = byte;
	if (pthread_create(&t, NULL, loop_thread, NULL))
		return -1;
	for (int i = 0; i < 5000 && !atomic_load(&e->ctl->active_threads); i++)
		usleep(1000);
	for (int i = 0; i < signals; i++) {
		long before = usr1;

		pthread_kill(t, SIGUSR1);
		/* One at a time: each signal has its AEX and ERESUME. */
		for (int w = 0; w < 2000 && usr1 == before; w++)
			usleep(500);
		usleep(2000);
	}
	if (!signals)
		usleep(300 * 1000);	/* SGXEMU_AEX_TICK's timer only */
	stop_flag = 1;
	pthread_join(t, NULL);
	ticks += (long)sgxemu__count_total(SGXEMU_C_TICK_AEX);
	if (loop.ret || loop.run.exit_reason != SGXEMU_EXIT_EEXIT)
		return -1;
	/* The loop's state after R8 steps: nothing was lost on resume. */
	CHECK_EQ(loop.run.regs.rdx, lcg(11, loop.run.regs.r8));
	CHECK(loop.run.regs.r8 > 0);
	CHECK_EQ(loop.run.regs.r10, byte);
	seen = (long)loop.run.regs.r9;
	return seen;
}

TEST(notification_at_each_eresume)
{
	uint64_t base;
	struct sgxemu_enclave *e = load(&base, SGX_ATTR_AEXNOTIFY);
	long n;

	if (!e)
		return;
	n = interrupted_loop(e, base + L_TCS0, 1, 20);
	printf("    %ld notifications for %ld signals and %ld ticks\n", n,
	       (long)usr1, ticks);
	/* Every signal or tick that hit enclave mode is one AEX and one
	 * notification; a signal may also land in host code. */
	CHECK(n >= 1);
	CHECK(n <= usr1 + ticks);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* Without any one of the three opt-ins, ERESUME simply resumes. */
TEST(no_notification_without_thread_frame_or_enclave)
{
	uint64_t base;
	struct sgxemu_enclave *e = load(&base, SGX_ATTR_AEXNOTIFY);

	if (!e)
		return;
	/* TCS 1 lacks TCS.FLAGS.AEXNOTIFY. */
	CHECK_EQ(interrupted_loop(e, base + L_TCS1, 1, 10), 0);
	CHECK(usr1 > 0);
	/* The frame's byte is 0. */
	CHECK_EQ(interrupted_loop(e, base + L_TCS0, 0, 10), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);

	/* The enclave lacks the attribute. */
	e = load(&base, 0);
	if (!e)
		return;
	CHECK_EQ(interrupted_loop(e, base + L_TCS0, 1, 10), 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* EDECCSSA with CSSA 0: #GP(0) as an exception of the enclave. */
TEST(edeccssa_at_cssa_zero_is_gp)
{
	uint64_t base;
	struct sgxemu_enclave *e = load(&base, SGX_ATTR_AEXNOTIFY);
	struct sgxemu_run run;

	if (!e)
		return;
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, AEXN_EDECCSSA, 0, 0, 0), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.exception.vector, X86_TRAP_GP);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/*
 * The timer tick (on by default, SGXEMU_AEX_TICK): a timer interrupt every
 * tick of the thread's CPU time is an AEX, as hardware's timer tick is, so
 * the enclave is notified with no signal sent. The platform reads the
 * setting when it is created: with it off in this process's environment
 * the test runs itself again without it.
 */
TEST(timer_tick_aexs_notify_without_signals)
{
	uint64_t base;
	struct sgxemu_enclave *e;
	const char *v = getenv("SGXEMU_AEX_TICK");
	pid_t pid;
	int status;
	long n;

	if (v && *v) {
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			unsetenv("SGXEMU_AEX_TICK");
			execl("/proc/self/exe", "test_aexnotify",
			      "timer_tick_aexs_notify_without_signals",
			      (char *)NULL);
			_exit(127);
		}
		REQUIRE_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
		return;
	}
	e = load(&base, SGX_ATTR_AEXNOTIFY);
	if (!e)
		return;
	n = interrupted_loop(e, base + L_TCS0, 1, 0);
	printf("    %ld notifications from %ld ticks in 300 ms\n", n, ticks);
	CHECK(n >= 1);
	CHECK(n <= ticks);
	CHECK_EQ(usr1, 0);
	/* Without the frame's byte the ticks' AEXs resume plainly. */
	CHECK_EQ(interrupted_loop(e, base + L_TCS0, 0, 0), 0);
	CHECK(ticks >= 1);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* SGXEMU_AEX_TICK=0 (--aex-tick 0): no tick, so no AEX and no
 * notification in the same 300 ms of enclave code. */
TEST(no_tick_no_notification)
{
	uint64_t base;
	struct sgxemu_enclave *e;
	const char *v = getenv("SGXEMU_AEX_TICK");
	pid_t pid;
	int status;

	if (!v || strcmp(v, "0")) {
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			setenv("SGXEMU_AEX_TICK", "0", 1);
			execl("/proc/self/exe", "test_aexnotify",
			      "no_tick_no_notification", (char *)NULL);
			_exit(127);
		}
		REQUIRE_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);
		return;
	}
	e = load(&base, SGX_ATTR_AEXNOTIFY);
	if (!e)
		return;
	CHECK_EQ(interrupted_loop(e, base + L_TCS0, 1, 0), 0);
	CHECK_EQ(ticks, 0);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}
