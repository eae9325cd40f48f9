/* SPDX-License-Identifier: MIT */
/*
 * The loop bench/gramine_ocall.sh times: N sched_yield calls (each an
 * OCALL under Gramine), printing "ns_per_call: X" from CLOCK_MONOTONIC.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call: %.0f\n",
	       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) /
	       (double)(n ? n : 1));
	return 0;
}
