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
 * The same kick, from a per-thread timer, stands for the timer interrupt
 * when SGXEMU_AEX_TICK asks for one (hardware takes an AEX at every
 * interrupt; without it enclave code here sees AEXs only for signals and
 * reclaimer kicks).
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
 * "4ms", "250us", "100000ns", "4" (milliseconds): the tick in
 * nanoseconds, 0 for "0" or a malformed value. Below 100 us a thread
 * would spend its time in AEXs, so such ticks are refused too.
 */
uint64_t sgxemu__parse_tick(const char *v)
{
	char *end;
	unsigned long long n;
	uint64_t ns;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || n > 60000000000ULL)
		return 0;
	if (!*end || !strcmp(end, "ms"))
		ns = (uint64_t)n * 1000000;
	else if (!strcmp(end, "us"))
		ns = (uint64_t)n * 1000;
	else if (!strcmp(end, "ns"))
		ns = (uint64_t)n;
	else
		return 0;
	return ns >= 100000 ? ns : 0;
}

/*
 * The timer runs on the thread's CPU time, so a thread that sleeps or
 * waits in the kernel gets no ticks (it would not be in enclave mode
 * either); a tick in host mode is a kick that finds the thread outside
 * and is dropped. Threads the runtime made by a raw clone() (foreign
 * TCBs) have no exit hook to stop a timer, so they get none.
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
	its.it_value.tv_sec = (time_t)(ns / 1000000000);
	its.it_value.tv_nsec = (long)(ns % 1000000000);
	its.it_interval = its.it_value;
	if (timer_settime(tcb->tick, 0, &its, NULL)) {
		timer_delete(tcb->tick);
		return;
	}
	tcb->tick_armed = true;
}

void sgxemu__tick_stop(struct sgxemu_tcb *tcb)
{
	if (!tcb->tick_armed)
		return;
	timer_delete(tcb->tick);
	tcb->tick_armed = false;
}
