/* SPDX-License-Identifier: MIT */
/*
 * The debugger's view of this process (debugger.h, docs/guide.md
 * "Debugging enclaves").
 *
 * On Linux a debugger reaches enclave memory through the driver's access
 * hook (linux-driver-facts.md §8.4): it is the kernel, not the debugged
 * program, that consults the enclave's state. Here that state lives in
 * this process, so it is published where a debugger can find it without
 * running any of our code: a one-page memfd whose name shows in
 * /proc/PID/maps, holding the processor's address. The debugger's side
 * (src/dbg/ptrace.c) reads the rest through /proc/PID/mem while the
 * process is stopped.
 */
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/debugger.h"
#include "engine/engine.h"

/*
 * Called once the engine's signal handlers are in place (platform_create):
 * sgxemu.gdb breaks here, without stopping, to retire its catchpoint for
 * uncaught faults, which from now on reach sgxemu_debug_signal instead
 * (a catchpoint makes gdb stop every thread at each of the engine's
 * traps). Never inlined, never optimised away.
 */
__attribute__((noinline, used)) void sgxemu_debug_ready(void)
{
	__asm__ volatile("" : : : "memory");
}

/*
 * The same signal, about to take its default action (the process dies of
 * it when the faulting instruction runs again): sgxemu.gdb's breakpoint
 * here does not stop but arms its catchpoint for uncaught signals, so
 * gdb stops at the faulting instruction itself, as it would without the
 * emulator.
 */
__attribute__((noinline, used)) void sgxemu_debug_fatal(int signo)
{
	__asm__ volatile("" : : "r"(signo) : "memory");
}

/*
 * Set by sgxemu.gdb (when the emulator's handlers are in place): a
 * debugger that knows sgxemu_debug_refault() is attached.
 */
volatile int sgxemu_debugger;

/*
 * An exception in a DEBUG enclave, a fault the emulator passes to the
 * program (after its AEX). On hardware the debugger stops at that signal
 * with the enclave's state in view (sgx-gdb reads it from the SSA); here
 * the signal that raised it was one of those sgxemu.gdb lets pass
 * silently, because most of them are the emulator's own. So, with
 * sgxemu.gdb attached, the handler returns once without the AEX: the
 * instruction faults again, and gdb, told by sgxemu_debug_refault(),
 * stops at it with the enclave's registers. The second time the AEX is
 * done as always. Faults only: a trap (#DB, #BP) or SYSCALL has moved
 * RIP on and would not come back.
 */
bool sgxemu__debug_refault(struct sgxemu_tcb *tcb, int signo,
			   const siginfo_t *info, const ucontext_t *uc,
			   unsigned vector, uint64_t fault_rip)
{
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	if (tcb->debug_refault == fault_rip) {
		tcb->debug_refault = 0;
		return false;
	}
	if (!sgxemu_debugger || signo == SIGSYS ||
	    !sgxemu__debugger_sig(signo) || info->si_code <= 0 ||
	    fault_rip != rip || vector == X86_TRAP_DB ||
	    vector == X86_TRAP_BP || !tcb->lp.secs ||
	    !(tcb->lp.secs->attributes.flags & SGX_ATTR_DEBUG))
		return false;
	tcb->debug_refault = fault_rip;
	sgxemu_debug_refault(signo);
	return true;
}

/* sgxemu.gdb's never-stopping breakpoint here arms its catchpoint for the
 * next signal. Never inlined, never optimised away. */
__attribute__((noinline, used)) void sgxemu_debug_refault(int signo)
{
	__asm__ volatile("" : : "r"(signo) : "memory");
}

/* The loaded segments of the object holding this code (set once, before
 * any handler can ask). */
static uintptr_t own_lo, own_hi;

static int find_own(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data, lo = UINTPTR_MAX, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (me < lo || me >= hi)
		return 0;
	own_lo = lo;
	own_hi = hi;
	return 1;
}

bool sgxemu__debug_own_code(uintptr_t addr)
{
	return addr >= own_lo && addr < own_hi;
}

void sgxemu__debug_publish(struct sgx_cpu *cpu)
{
	struct sgxemu_debug_desc *d;
	int fd;

	dl_iterate_phdr(find_own, (void *)(uintptr_t)sgxemu_debug_signal);
	fd = memfd_create(SGXEMU_DEBUG_MEMFD, MFD_CLOEXEC);
	if (fd < 0)
		return;		/* no debugger support: nothing else changes */
	if (ftruncate(fd, 4096) == 0) {
		d = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (d != MAP_FAILED) {
			d->version = SGXEMU_DEBUG_VERSION;
			d->cpu_size = sizeof(struct sgx_cpu);
			d->epcm_size = sizeof(struct sgx_epcm_entry);
			d->ctl_size = sizeof(struct sgx_encl_ctl);
			d->cpu = (uint64_t)(uintptr_t)cpu;
			d->tcb_base = sgxemu__alt_base;
			d->slot_size = SLOT_SIZE;
			d->nr_slots = NR_SLOTS;
			d->tcb_tid_off = offsetof(struct sgxemu_tcb, tid);
			d->tcb_in_enclave_off =
				offsetof(struct sgxemu_tcb, in_enclave);
			d->tcb_host_fs_off = offsetof(struct sgxemu_tcb, host_fs);
			d->enclaves = (uint64_t)(uintptr_t)sgxemu__enclaves;
			d->max_enclaves = MAX_ENCLAVES;
			d->encl_size = sizeof(struct sgxemu_enclave);
			/* The magic last: a half-written page is no page. */
			__atomic_thread_fence(__ATOMIC_RELEASE);
			memcpy(d->magic, SGXEMU_DEBUG_MAGIC, sizeof(d->magic));
		}
	}
	close(fd);
	sgxemu_debug_ready();
}

/*
 * Called with the signal the program's own handler is about to get, for
 * the signals sgxemu.gdb tells gdb to pass silently because the engine
 * takes most of them for itself. gdb stops here instead (sgxemu.gdb breaks
 * on this function), so a real fault the program handles still stops the
 * debugger. Never inlined, never optimised away.
 */
__attribute__((noinline, used)) void sgxemu_debug_signal(int signo,
							siginfo_t *info,
							void *ucontext)
{
	__asm__ volatile("" : : "r"(signo), "r"(info), "r"(ucontext) : "memory");
}
