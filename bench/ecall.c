/* SPDX-License-Identifier: MIT */
/*
 * bench/ecall: the cost of an enclave call through the native engine.
 *
 *   - EENTER -> EEXIT round trip of an empty enclave call through the
 *     fast entry path (sgxemu_enter), median of >= 100k calls;
 *   - in the same run, the floor: one ENCLU fault of the kind this host
 *     raises (#UD on AMD, #GP on Intel: probed, sgxemu_trap_cost_ns) to
 *     a handler that skips it, median of as many; the enclave's EEXIT is
 *     one such fault, so the ratio says what the engine adds to it;
 *   - the round trip in guard mode (ELRANGE protection flipped at every
 *     entry and exit).
 * Last line: "ecall ratio=R target=1.1", R = ecall / trap.
 */
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <asm/prctl.h>
#include <ucontext.h>

#include "engine_bench.h"

#define N_CALLS	100000
#define N_GUARD	20000

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
	struct sgxemu_trap_info ti;
	uint64_t base, ecall, guard;
	double trap;
	int bad = 0;

	/* Before the platform exists: the kernel's plain path. */
	trap = sgxemu_trap_cost_ns(N_CALLS);
	if (trap <= 0 || sgxemu_trap_probe(&ti)) {
		fprintf(stderr, "ecall: the trap probe failed\n");
		return 1;
	}
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
	printf("ENCLU trap and return, %-13s:        %.2f us "
	       "(median of %d)\n", sgxemu_trap_name(ti.vector), trap / 1000.0,
	       N_CALLS);
	printf("ecall round trip in guard mode:              %.2f us "
	       "(median of %d)\n", guard / 1000.0, N_GUARD);
	if (fs_by_syscall()) {
		double fsw = fs_write_median(N_GUARD);

		/* The least an entry and exit can cost here: the trap and
		 * two FS writes (the enclave's, the host's). */
		printf("no FSGSBASE: one arch_prctl(ARCH_SET_FS):      %.2f us; "
		       "floor trap + 2 FS writes %.2f us, ecall / that = %.2f\n",
		       fsw / 1000.0, (trap + 2 * fsw) / 1000.0,
		       (double)ecall / (trap + 2 * fsw));
	}
	printf("ecall ratio=%.2f target=1.1\n", (double)ecall / trap);
	return 0;
}
