/* SPDX-License-Identifier: MIT */
/*
 * RDTSC and RDTSCP in enclave mode on an SGX1 part (facts §4.26): #UD.
 * SGX2 parts allow them, so with SGX2 enumerated (the default) nothing
 * happens here.
 *
 * The host traps them with PR_SET_TSC(PR_TSC_SIGSEGV) (CR4.TSD for this
 * thread: RDTSC and RDTSCP #GP in user mode). That is per thread and not
 * free, and host code reads the TSC all the time (the vDSO's
 * clock_gettime), so the engine sets it only while the thread is in
 * enclave mode: at every entry (EENTER, ERESUME) and back at every exit
 * (EEXIT, AEX). Between its entry checks and the commit the fast path is
 * still in host mode with the TSC trapped; a host RDTSC that lands there
 * (a signal handler's) is carried out by sgxemu__tsc_emulate_host().
 *
 * SGXEMU_TSC=native leaves the TSC alone (the SGX2 behaviour on SGX1).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/engine.h"

bool sgxemu__tsc_trapped;

/*
 * Whether PR_TSC_SIGSEGV really makes RDTSC fault here: the prctl
 * succeeds on paravirtualised guests whose hypervisor ignores CR4.TSD.
 * Tried in a child (sgxemu__probe_child), which the fault ends.
 */
static void try_rdtsc(void)
{
	uint32_t lo, hi;

	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0))
		_exit(1);
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
}

bool sgxemu_tsc_trappable(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = sgxemu__probe_child(try_rdtsc) ==
			 SGXEMU_PROBE_FAULTED;
	return cached;
}

void sgxemu__tsc_init(bool sgx2)
{
	const char *v = getenv("SGXEMU_TSC");

	sgxemu__tsc_trapped = !sgx2 && !(v && !strcmp(v, "native")) &&
			      sgxemu_tsc_trappable();
}

const char *sgxemu_tsc_mode(void)
{
	if (sgxemu__platform.cpu.config.sgx2)
		return "allowed";
	return sgxemu__tsc_trapped ? "ud" : "native";
}

void sgxemu__tsc_enter(void)
{
	if (sgxemu__tsc_trapped)
		prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
}

void sgxemu__tsc_leave(void)
{
	if (sgxemu__tsc_trapped)
		prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

int sgxemu__tsc_insn_len(const uint8_t *b, size_t n)
{
	if (n >= 2 && b[0] == 0x0f && b[1] == 0x31)
		return 2;		/* rdtsc */
	if (n >= 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9)
		return 3;		/* rdtscp */
	return 0;
}

bool sgxemu__tsc_is_trap(int signo, const siginfo_t *info,
			 const uint8_t *b, size_t n)
{
	return sgxemu__tsc_trapped && signo == SIGSEGV &&
	       info->si_code == SI_KERNEL && sgxemu__tsc_insn_len(b, n) > 0;
}

/* The bytes at @rip an RDTSC(P) would be: 3, or 2 where the third is not
 * readable (an RDTSC at the end of a page), or 0. */
size_t sgxemu__tsc_read(sgxemu_read_fn read, void *ctx, uint64_t rip,
			uint8_t b[3])
{
	if (read(ctx, rip, b, 3))
		return 3;
	return read(ctx, rip, b, 2) ? 2 : 0;
}

bool sgxemu__tsc_emulate_host(int signo, siginfo_t *info, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint8_t b[3];
	uint32_t lo, hi, aux = 0;
	size_t n;
	int len;

	if (!sgxemu__tsc_trapped)
		return false;
	n = sgxemu__tsc_read(sgxemu__host_read, NULL, (uint64_t)g[REG_RIP], b);
	if (!sgxemu__tsc_is_trap(signo, info, b, n))
		return false;
	len = sgxemu__tsc_insn_len(b, n);
	prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	if (len == 3)
		__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	else
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
	g[REG_RAX] = lo;
	g[REG_RDX] = hi;
	if (len == 3)
		g[REG_RCX] = aux;
	g[REG_RIP] += len;
	return true;
}
