/* SPDX-License-Identifier: MIT */
/*
 * The trap probe: what this processor raises for ENCLU, found by running
 * one, not assumed from the vendor string. AMD parts give #UD; Intel parts
 * give #GP for most leaves and a #PF with the SGX bit for EENTER on memory
 * that is not EPC; a part with SGX switched off behaves like the latter.
 * `sgxemu info` prints it and the benchmarks measure their floor with it
 * (sgxemu_trap_cost_ns), since every engine exit is one such trap.
 *
 * The probe swaps in its own handler for the fault signals while it runs,
 * with the raw system call so that whatever was installed (the engine's
 * stub with its restorer) goes back exactly. A fault elsewhere meanwhile
 * (another thread) puts the old handlers back at once and re-executes.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

void sgxemu__probe_enclu(uint32_t leaf, uint64_t rbx);
extern char sgxemu__probe_enclu_insn[];

static const int probe_sigs[] = { SIGILL, SIGSEGV, SIGBUS };
#define NR_PROBE_SIGS (sizeof(probe_sigs) / sizeof(probe_sigs[0]))

static struct kernel_sigaction saved[NR_PROBE_SIGS];
static volatile int seen_signo, seen_code;
static volatile unsigned seen_trap;
static volatile uint32_t seen_err;

static void restore_all(void)
{
	for (size_t i = 0; i < NR_PROBE_SIGS; i++)
		syscall(SYS_rt_sigaction, probe_sigs[i], &saved[i], NULL, 8);
}

static void probe_handler(int signo, siginfo_t *si, void *ctx)
{
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;

	if (g[REG_RIP] != (greg_t)(uintptr_t)sgxemu__probe_enclu_insn) {
		restore_all();		/* not ours: run it again, as before */
		return;
	}
	seen_signo = signo;
	seen_code = si->si_code;
	seen_trap = (unsigned)g[REG_TRAPNO];
	seen_err = (uint32_t)g[REG_ERR];
	g[REG_RIP] += 3;
}

/*
 * The raw system call, with the engine's restorer: neither a sanitizer's
 * nor the shim's sigaction() sees the probe, so the trap measured is the
 * kernel's alone.
 */
static int install(void)
{
	struct kernel_sigaction ka = {
		.handler = (void *)probe_handler,
		.flags = SA_SIGINFO | SA_RESTORER,
		.restorer = (void *)sgxemu__restorer,
		.mask = 0,
	};

	for (size_t i = 0; i < NR_PROBE_SIGS; i++)
		if (syscall(SYS_rt_sigaction, probe_sigs[i], NULL, &saved[i], 8))
			return -errno;
	for (size_t i = 0; i < NR_PROBE_SIGS; i++) {
		if (syscall(SYS_rt_sigaction, probe_sigs[i], &ka, NULL, 8)) {
			int err = -errno;

			restore_all();
			return err;
		}
	}
	return 0;
}

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct sgxemu_trap_info probed;
static int probe_error;

static void run_probe(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *tcs;

	/* An ordinary page as the "TCS": never EPC. */
	tcs = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tcs == MAP_FAILED) {
		probe_error = -errno;
		return;
	}
	probe_error = install();
	if (!probe_error) {
		seen_signo = 0;
		sgxemu__probe_enclu(SGX_EEXIT, 0);
		probed.signo = seen_signo;
		probed.code = seen_code;
		probed.vector = seen_trap;
		probed.error_code = seen_err;
		seen_signo = 0;
		sgxemu__probe_enclu(SGX_EENTER, (uint64_t)(uintptr_t)tcs);
		probed.eenter_signo = seen_signo;
		probed.eenter_vector = seen_trap;
		probed.eenter_error_code = seen_err;
		restore_all();
		if (!probed.signo || !probed.eenter_signo)
			probe_error = -EAGAIN;	/* lost to another fault */
	}
	munmap(tcs, (size_t)pg);
}

int sgxemu_trap_probe(struct sgxemu_trap_info *info)
{
	pthread_once(&probe_once, run_probe);
	if (probe_error)
		return probe_error;
	*info = probed;
	info->forced = sgxemu__fault_style == SGXEMU_STYLE_UD ? "ud" :
		       sgxemu__fault_style == SGXEMU_STYLE_GP ? "gp" : NULL;
	return 0;
}

/*
 * The CPU-feature probes (fsgsbase.c, tsc.c) try an instruction in a
 * child process. The child turns SIGILL and SIGSEGV into exit status
 * SGXEMU_PROBE_FAULTED rather than dying by them: a child killed by a
 * signal is an error report under tools that follow children (valgrind,
 * which does not know RDFSBASE). Buffered output is written out first, so
 * that no tool's exit handling in the child writes it twice.
 *
 * The child is a clone whose exit signal is none, reaped with __WALL: a
 * program that ignores SIGCHLD has the kernel reap its fork()ed children
 * at once, and waitpid() then finds none (ECHILD). Gramine's loader
 * ignores SIGCHLD, and every process it starts inherits that through
 * execve; a probe that failed there took an untracked FSGSBASE for an
 * absent one, whose enclave-written FS the engine then lost at the first
 * AEX. Not fork(): no fork handler runs, and the child makes raw system
 * calls only, so that no lock another thread held at the clone matters.
 */
static void probe_child_fault(int sig)
{
	(void)sig;
	syscall(SYS_exit_group, SGXEMU_PROBE_FAULTED);
}

int sgxemu__probe_child(void (*try)(void))
{
	struct kernel_sigaction ka = {
		.handler = (void *)probe_child_fault,
		/* x86-64 delivers no signal without one; never used. */
		.flags = SA_RESTORER,
		.restorer = (void *)sgxemu__restorer,
		.mask = ~0ULL,
	};
	int status;
	long pid;

	fflush(NULL);
	pid = syscall(SYS_clone, 0UL, 0UL, NULL, NULL, 0UL);
	if (pid == 0) {
		syscall(SYS_rt_sigaction, SIGILL, &ka, NULL, 8);
		syscall(SYS_rt_sigaction, SIGSEGV, &ka, NULL, 8);
		try();
		syscall(SYS_exit_group, 0);
	}
	if (pid < 0)
		return -1;
	while (waitpid((pid_t)pid, &status, __WALL) != (pid_t)pid)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

const char *sgxemu_trap_name(unsigned vector)
{
	switch (vector) {
	case X86_TRAP_UD:
		return "#UD (SIGILL)";
	case X86_TRAP_GP:
		return "#GP (SIGSEGV)";
	case X86_TRAP_PF:
		return "#PF (SIGSEGV)";
	default:
		return "unexpected";
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double sgxemu_trap_cost_ns(unsigned iters)
{
	uint64_t *t;
	double med;
	int ret;

	if (!iters)
		return -EINVAL;
	t = malloc(sizeof(*t) * iters);
	if (!t)
		return -ENOMEM;
	ret = install();
	if (ret) {
		free(t);
		return ret;
	}
	for (unsigned i = 0; i < iters; i++) {
		uint64_t t0 = mono_ns();

		sgxemu__probe_enclu(SGX_EEXIT, 0);
		t[i] = mono_ns() - t0;
	}
	restore_all();
	qsort(t, iters, sizeof(*t), cmp_u64);
	med = (double)t[iters / 2];
	free(t);
	return med;
}
