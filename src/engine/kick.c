/* SPDX-License-Identifier: MIT */
/*
 * Which threads are in enclave mode in which enclave, and the kick that
 * makes them leave it.
 *
 * ETRACK/EWB need every logical processor that may hold a stale
 * translation of a blocked page to leave enclave mode; the kernel sends an
 * IPI, whose interrupt is an AEX. Here each enclave keeps a bitmap of the
 * TCB slots of its threads in enclave mode (set at EENTER/ERESUME, cleared
 * at EEXIT/AEX), and a kick is a tgkill of SGXEMU_KICK_SIGNAL to each of
 * them: the engine's handler turns it into an asynchronous AEX and the
 * thread continues at its AEP, whose ERESUME resumes the enclave. The
 * application never sees that signal (the engine reserves it: its handler
 * is never chained, sgxemu_sigaction() refuses it). A kick that lands in
 * host mode (the thread left meanwhile) is dropped.
 *
 * The same kick, from a per-thread timer, stands for the timer interrupt:
 * hardware takes an AEX at every interrupt, so enclave code that runs for
 * longer than a tick is interrupted whether or not anything else happens.
 * The tick is on by default (SGXEMU_AEX_TICK_DEFAULT_NS); SGXEMU_AEX_TICK=0
 * turns it off, and then enclave code sees AEXs only for signals and
 * reclaimer kicks.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

struct sgxemu_tcb *sgxemu__tcb_of_slot(int slot)
{
	return (struct sgxemu_tcb *)(sgxemu__alt_base +
				     (uintptr_t)slot * SLOT_SIZE);
}

void sgxemu__kick_enter(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e)
{
	if (tcb->tick_paused)
		sgxemu__tick_resume(tcb);
	if (e)
		atomic_fetch_or(&e->inside[tcb->slot / 64],
				1ULL << (tcb->slot % 64));
}

/* Async-signal-safe: the AEX/EEXIT paths call it in handlers. */
void sgxemu__kick_leave(struct sgxemu_tcb *tcb)
{
	struct sgxemu_enclave *e = tcb->encl;

	if (e)
		atomic_fetch_and(&e->inside[tcb->slot / 64],
				 ~(1ULL << (tcb->slot % 64)));
}

/* Kick every thread in enclave mode in @e; the number kicked. */
int sgxemu__kick(struct sgxemu_enclave *e)
{
	pid_t pid = getpid();
	int n = 0;

	for (int w = 0; w < NR_SLOTS / 64; w++) {
		uint64_t v = atomic_load(&e->inside[w]);

		while (v) {
			int b = __builtin_ctzll(v);
			struct sgxemu_tcb *tcb = sgxemu__tcb_of_slot(w * 64 + b);

			v &= v - 1;
			if (syscall(SYS_tgkill, pid, tcb->tid,
				    SGXEMU_KICK_SIGNAL) == 0)
				n++;
		}
	}
	return n;
}

/*
 * "4ms", "250us", "100000ns", "1s", "4" (milliseconds), or "0" (any unit)
 * for no tick: the tick in nanoseconds in @ns. -EINVAL for anything else,
 * and for ticks below 100 us (a thread would spend its time in AEXs) or
 * above 60 s.
 */
int sgxemu__parse_tick(const char *v, uint64_t *ns)
{
	char *end;
	unsigned long long n;
	uint64_t unit;

	if (!v || *v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	if (!*end || !strcmp(end, "ms"))
		unit = 1000000;
	else if (!strcmp(end, "us"))
		unit = 1000;
	else if (!strcmp(end, "ns"))
		unit = 1;
	else if (!strcmp(end, "s"))
		unit = 1000000000;
	else
		return -EINVAL;
	if (n > 60000000000ULL / unit || (n && n * unit < 100000))
		return -EINVAL;
	*ns = (uint64_t)n * unit;
	return 0;
}

/* @ns as a relative, periodic expiry (0: disarmed). */
static void tick_spec(struct itimerspec *its, uint64_t ns)
{
	its->it_value.tv_sec = (time_t)(ns / 1000000000);
	its->it_value.tv_nsec = (long)(ns % 1000000000);
	its->it_interval = its->it_value;
}

/*
 * The timer runs on the thread's CPU time, so a thread that sleeps or
 * waits in the kernel gets no ticks (it would not be in enclave mode
 * either). Threads the runtime made by a raw clone() (foreign TCBs) have
 * no exit hook to stop a timer, so they get none.
 */
void sgxemu__tick_start(struct sgxemu_tcb *tcb)
{
	uint64_t ns = sgxemu__platform.aex_tick_ns;
	struct sigevent sev;
	struct itimerspec its;

	if (!ns || tcb->foreign || tcb->tick_armed)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SGXEMU_KICK_SIGNAL;
	sev._sigev_un._tid = tcb->tid;	/* sigev_notify_thread_id */
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tcb->tick))
		return;
	tick_spec(&its, ns);
	if (timer_settime(tcb->tick, 0, &its, NULL)) {
		timer_delete(tcb->tick);
		return;
	}
	tcb->tick_armed = true;
	tcb->tick_paused = false;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * A tick that found the thread in host mode: hardware's interrupt there
 * is the host's business and no AEX, so the timer stops until the thread
 * enters an enclave again (sgxemu__tick_resume). A thread that has left
 * enclave mode for good thus takes at most this one signal, and one that
 * comes and goes pays for four system calls per tick instead of two per
 * entry. In the engine's handler: clock_gettime and timer_settime are
 * async-signal-safe.
 */
void sgxemu__tick_pause(struct sgxemu_tcb *tcb)
{
	struct itimerspec its, old;

	if (!tcb->tick_armed || tcb->tick_paused)
		return;
	SGXEMU_COUNT(tcb, SGXEMU_C_TICK_HOST);
	tick_spec(&its, 0);
	/* The old value: the time left to the next expiry, which keeps to
	 * the timer's schedule however late this one was delivered (the
	 * kernel looks at CPU-time timers at its own tick only). */
	if (timer_settime(tcb->tick, 0, &its, &old))
		return;
	tcb->tick_paused = true;
	tcb->tick_paused_at = thread_cpu_ns();
	tcb->tick_left = (uint64_t)old.it_value.tv_sec * 1000000000 +
			 (uint64_t)old.it_value.tv_nsec;
}

/*
 * At EENTER/ERESUME (kick_enter), fast path or handler alike. The timer
 * goes on in the phase it had, as if it had kept ticking in host mode,
 * so that an enclave that runs for less than a tick at a time is still
 * interrupted as often as its share of the CPU time says (a fresh period
 * at each entry would never expire inside it).
 */
void sgxemu__tick_resume(struct sgxemu_tcb *tcb)
{
	uint64_t period = sgxemu__platform.aex_tick_ns, ns;
	uint64_t now = thread_cpu_ns();
	uint64_t gone = now > tcb->tick_paused_at ? now - tcb->tick_paused_at : 0;
	struct itimerspec its;

	/* The expiries that fell in host mode are dropped; the next one
	 * is where the schedule puts it. */
	if (tcb->tick_left && gone < tcb->tick_left)
		ns = tcb->tick_left - gone;
	else
		ns = period - (gone - tcb->tick_left) % period;
	tick_spec(&its, period);
	its.it_value.tv_sec = (time_t)(ns / 1000000000);
	its.it_value.tv_nsec = (long)(ns % 1000000000);
	if (!timer_settime(tcb->tick, 0, &its, NULL))
		tcb->tick_paused = false;
}

void sgxemu__tick_stop(struct sgxemu_tcb *tcb)
{
	if (!tcb->tick_armed)
		return;
	timer_delete(tcb->tick);
	tcb->tick_armed = false;
	tcb->tick_paused = false;
}
