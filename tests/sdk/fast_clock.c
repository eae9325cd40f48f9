/* SPDX-License-Identifier: MIT */
/*
 * A preload for the Intel SDK's SampleAEXNotify (test_intel_sdk.sh): its
 * time() runs SGXEMU_FAST_CLOCK times faster than the real one from the
 * first call on. The sample sizes its work so that a loop takes 60
 * seconds by time(), outside the enclave and then inside it; with a clock
 * 60 times faster that is one real second each, and the sample's binary
 * and enclave stay as Intel built them.
 */
#include <stdlib.h>
#include <time.h>

time_t time(time_t *out)
{
	static struct timespec start;
	static long factor;
	struct timespec now;
	time_t t;

	clock_gettime(CLOCK_REALTIME, &now);
	if (!factor) {
		const char *v = getenv("SGXEMU_FAST_CLOCK");

		factor = v && atol(v) > 0 ? atol(v) : 1;
		start = now;
	}
	t = start.tv_sec + (time_t)(((double)(now.tv_sec - start.tv_sec) +
				     (now.tv_nsec - start.tv_nsec) / 1e9) *
				    (double)factor);
	if (out)
		*out = t;
	return t;
}
