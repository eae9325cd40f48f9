/* SPDX-License-Identifier: MIT */
/*
 * Run under Gramine by test_gramine.sh: is the time query served inside
 * the enclave (Gramine's RDTSC clock, which needs CPUID leaf 0x15) or by
 * an OCALL each time? Calls per second of gettimeofday against calls per
 * second of sched_yield (always an OCALL in Gramine), measured in turns:
 * a ratio, so the machine's load cancels out. With the RDTSC clock
 * gettimeofday is tens of times the faster; with an OCALL per query the
 * two are about equal. Prints "clock: rdtsc" when the ratio is at least
 * 5, else "clock: ocall" with the figures.
 */
#include <sched.h>
#include <stdio.h>
#include <sys/time.h>

static long long usec(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

int main(void)
{
	long long gtod = 0, yield = 0, t_gtod = 0, t_yield = 0;

	for (int round = 0; round < 5; round++) {
		long long t0 = usec(), t;

		while ((t = usec()) - t0 < 50000)
			gtod++;
		t_gtod += t - t0;
		t0 = usec();
		while ((t = usec()) - t0 < 50000) {
			sched_yield();
			yield++;
		}
		t_yield += t - t0;
	}
	/* Rates in calls per second; the yield loop's time includes its
	 * gettimeofday, which only makes it look slower (the bound holds
	 * for either clock). */
	double r_gtod = (double)gtod * 1e6 / (double)t_gtod;
	double r_yield = (double)yield * 1e6 / (double)t_yield;

	if (r_gtod >= 5 * r_yield)
		printf("clock: rdtsc\n");
	else
		printf("clock: ocall (%.0f gettimeofday/s, %.0f sched_yield/s)\n",
		       r_gtod, r_yield);
	return 0;
}
