/* SPDX-License-Identifier: MIT */
/*
 * This host's TSC rate, measured for the tests that compare the emulator's
 * own figure (CPUID leaves 0x15/0x16, sgxemu__tsc_hz) with it (test.h).
 *
 * The comparison means something only where the TSC ticks at one rate:
 * a host without an invariant TSC (no constant_tsc, or a guest whose TSC
 * the hypervisor does not keep steady) has no single rate to find. So the
 * rate is measured twice, back to back, and taken only where the two
 * agree; elsewhere those tests skip with the two figures as the reason.
 * SGXEMU_TEST_UNSTEADY_TSC=1 makes the probe answer "unsteady" on any
 * host, so that the skip path can be seen to work.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "test.h"

#define WINDOW_NS	200000000LL	/* each measurement */
#define AGREE		0.002		/* the two must be this close */

static uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* CLOCK_MONOTONIC between two TSC reads; *@c is their midpoint and the
 * return their distance (large where the thread was preempted there). */
static uint64_t clock_and_tsc(struct timespec *t, uint64_t *c)
{
	uint64_t a = tsc(), b;

	clock_gettime(CLOCK_MONOTONIC, t);
	b = tsc();
	*c = a + (b - a) / 2;
	return b - a;
}

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

/* Ticks per second over one window; a window whose end reads were split
 * by more than 1/10000 of its ticks is measured again (up to 5 times). */
static double one_window(void)
{
	double hz = 0;

	for (int tries = 0; tries < 5; tries++) {
		struct timespec t0, t1;
		uint64_t c0, c1, gap0, gap1;
		long long ns;

		gap0 = clock_and_tsc(&t0, &c0);
		do {
			gap1 = clock_and_tsc(&t1, &c1);
			ns = ns_between(&t0, &t1);
		} while (ns < WINDOW_NS);
		hz = (double)(c1 - c0) * 1e9 / (double)ns;
		if ((double)(gap0 + gap1) < (double)(c1 - c0) / 10000)
			break;
	}
	return hz;
}

double test_tsc_hz(const char **why)
{
	static char reason[160];
	double a, b;

	if (getenv("SGXEMU_TEST_UNSTEADY_TSC") &&
	    !strcmp(getenv("SGXEMU_TEST_UNSTEADY_TSC"), "1")) {
		*why = "SGXEMU_TEST_UNSTEADY_TSC=1 says this host's TSC has no steady rate";
		return 0;
	}
	a = one_window();
	b = one_window();
	if (a <= 0 || a - b > AGREE * a || b - a > AGREE * a) {
		snprintf(reason, sizeof(reason), "this host's TSC has no steady "
			 "rate: %.0f Hz, then %.0f Hz over 200 ms", a, b);
		*why = reason;
		return 0;
	}
	*why = NULL;
	return (a + b) / 2;
}
