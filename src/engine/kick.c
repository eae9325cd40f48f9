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
 */
#include <errno.h>
#include <sys/syscall.h>
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
