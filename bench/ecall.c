/* SPDX-License-Identifier: MIT */
/*
 * bench/ecall: the cost of an enclave call through the native engine.
 *
 *   - EENTER -> EEXIT round trip of an empty enclave call through the
 *     fast entry path (sgxemu_enter), median of >= 100k calls;
 *   - in the same run, the raw cost of a SIGILL trap and return (a plain
 *     handler skipping a ud2), median of as many;
 *   - the round trip in guard mode (ELRANGE protection flipped at every
 *     entry and exit).
 * Last line: "ecall ratio=R target=1.2", R = ecall / trap.
 */
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "engine_bench.h"

#define N_CALLS	100000
#define N_GUARD	20000

static void skip_ud2(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static uint64_t trap_median(void)
{
	static uint64_t t[N_CALLS];
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = skip_ud2;
	sa.sa_flags = SA_SIGINFO;
	/* Before the platform exists: the kernel's plain path. */
	sigaction(SIGILL, &sa, &old);
	for (int i = 0; i < N_CALLS; i++) {
		uint64_t t0 = now_ns();

		__asm__ volatile("ud2" ::: "memory");
		t[i] = now_ns() - t0;
	}
	sigaction(SIGILL, &old, NULL);
	return median(t, N_CALLS);
}

static uint64_t ecall_median(uint64_t tcs, int n, int *bad)
{
	static uint64_t t[N_CALLS];
	struct sgxemu_run run;

	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		memset(&run, 0, sizeof(run));
		run.tcs = tcs;
		run.leaf = SGX_EENTER;
		run.regs.rdi = CMD_REGS;
		run.regs.rsi = (uint64_t)i;
		run.regs.rdx = 1;
		sgxemu_enter(&run);
		t[i] = now_ns() - t0;
		/* The enclave computed rsi + rdx: proof it ran. */
		if (run.exit_reason != SGXEMU_EXIT_EEXIT ||
		    run.regs.rdx != (uint64_t)i + 1)
			(*bad)++;
	}
	return median(t, (size_t)n);
}

int main(void)
{
	struct sgxemu_enclave *e;
	const char *why = "?";
	uint64_t base, trap, ecall, guard;
	int bad = 0;

	trap = trap_median();
	e = tu_load_test_encl(&base, &why);
	if (!e) {
		fprintf(stderr, "ecall: cannot load the test enclave: %s\n", why);
		return 1;
	}
	/* Warm up (first entry sets the thread up). */
	ecall_median(base + L_TCS0, 1000, &bad);
	ecall = ecall_median(base + L_TCS0, N_CALLS, &bad);
	sgxemu_set_guard(true);
	guard = ecall_median(base + L_TCS0, N_GUARD, &bad);
	sgxemu_set_guard(false);
	sgxemu_enclave_destroy(e);
	if (bad) {
		fprintf(stderr, "ecall: %d calls returned a wrong result\n", bad);
		return 1;
	}
	printf("ecall round trip (EENTER fast path + EEXIT): %.2f us "
	       "(median of %d)\n", ecall / 1000.0, N_CALLS);
	printf("raw SIGILL trap and return:                  %.2f us "
	       "(median of %d)\n", trap / 1000.0, N_CALLS);
	printf("ecall round trip in guard mode:              %.2f us "
	       "(median of %d)\n", guard / 1000.0, N_GUARD);
	printf("ecall ratio=%.2f target=1.2\n", (double)ecall / (double)trap);
	return 0;
}
