/* SPDX-License-Identifier: MIT */
/*
 * This host's TSC frequency, for the emulated part's CPUID leaves 0x15
 * (TSC/crystal ratio) and 0x16 (base frequency) (engine/cpuid.h).
 *
 * SGX parts enumerate both; runtimes read them to run a clock on RDTSC
 * (Gramine turns its RDTSC clock off and makes every time query an OCALL
 * when leaf 0x15 is zero). AMD parts and many guests have neither, so the
 * frequency comes from the first source that has it:
 *   1. the host's leaf 0x15 with crystal frequency (ECX * EBX / EAX);
 *   2. the host's leaf 0x15 ratio with leaf 0x16's base frequency
 *      (the fallback Linux and runtimes use when ECX is 0);
 *   3. the KVM/VMware timing leaf 0x40000010 (EAX = TSC kHz);
 *   4. a measurement: TSC ticks against CLOCK_MONOTONIC_RAW over 10 ms.
 * It is found once per process, on the first ask (only programs that read
 * these leaves pay for the measurement), and cached.
 *
 * Async-signal-safe: the CPUID trap's handler asks. No locks: two threads
 * that ask at once may both measure; either value is kept.
 */
#include <stdatomic.h>
#include <time.h>

#include "engine/cpuid.h"

static _Atomic uint64_t tsc_hz;
static _Atomic int tsc_src;	/* enum sgxemu_tsc_source once known */

static uint64_t read_tsc(void)
{
	uint32_t lo, hi;

	/* LFENCE first: RDTSC must not run ahead of the clock read. */
	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * One (TSC, ns) pair: the clock read between two TSC reads, the TSC taken
 * as their midpoint; the narrowest of a few tries (a preempted try is
 * wide and loses).
 */
static void sample(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t t0 = read_tsc(), n = now_ns(), t1 = read_tsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}

#define MEASURE_NS	10000000ULL	/* 10 ms: a 1 us error is 0.01 % */

static uint64_t measure(void)
{
	uint64_t t0, n0, t1, n1;

	sample(&t0, &n0);
	while (now_ns() - n0 < MEASURE_NS)
		;
	sample(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 0;
	return (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000ULL /
			  (n1 - n0));
}

/* The host's own leaves (sources 1-3), or 0. */
static uint64_t from_host_leaves(enum sgxemu_tsc_source *src)
{
	uint32_t r0[4], r15[4], r16[4], r[4];

	sgxemu__cpuid_native(0, 0, r0);
	if (r0[0] >= 0x15) {
		sgxemu__cpuid_native(0x15, 0, r15);
		if (r15[0] && r15[1] && r15[2]) {
			*src = SGXEMU_TSC_LEAF15;
			return (uint64_t)r15[2] * r15[1] / r15[0];
		}
		if (r15[0] && r15[1] && r0[0] >= 0x16) {
			sgxemu__cpuid_native(0x16, 0, r16);
			if (r16[0] & 0xffff) {
				*src = SGXEMU_TSC_LEAF16;
				return (uint64_t)(r16[0] & 0xffff) * 1000000;
			}
		}
	}
	/* CPUID.1:ECX[31]: running under a hypervisor. */
	sgxemu__cpuid_native(1, 0, r);
	if (!(r[2] & (1U << 31)))
		return 0;
	sgxemu__cpuid_native(0x40000000, 0, r);
	/* "KVMKVMKVM\0\0\0" or "VMwareVMware": these two put the TSC
	 * frequency in kHz in leaf 0x40000010's EAX. */
	if (!((r[1] == 0x4b4d564b && r[2] == 0x564b4d56 && r[3] == 0x4d) ||
	      (r[1] == 0x61774d56 && r[2] == 0x4d566572 && r[3] == 0x65726177)) ||
	    r[0] < 0x40000010)
		return 0;
	sgxemu__cpuid_native(0x40000010, 0, r);
	if (!r[0])
		return 0;
	*src = SGXEMU_TSC_HYPERVISOR;
	return (uint64_t)r[0] * 1000;
}

uint64_t sgxemu__tsc_hz(enum sgxemu_tsc_source *source)
{
	uint64_t hz = atomic_load(&tsc_hz);
	enum sgxemu_tsc_source src = SGXEMU_TSC_MEASURED;

	if (!hz) {
		hz = from_host_leaves(&src);
		if (!hz)
			hz = measure();
		if (hz) {
			atomic_store(&tsc_src, (int)src);
			atomic_store(&tsc_hz, hz);
		}
	}
	if (source)
		*source = (enum sgxemu_tsc_source)atomic_load(&tsc_src);
	return hz;
}

const char *sgxemu__tsc_source_name(enum sgxemu_tsc_source src)
{
	switch (src) {
	case SGXEMU_TSC_LEAF15: return "host CPUID leaf 0x15";
	case SGXEMU_TSC_LEAF16: return "host CPUID leaves 0x15 and 0x16";
	case SGXEMU_TSC_HYPERVISOR: return "hypervisor CPUID leaf 0x40000010";
	default: return "measured against CLOCK_MONOTONIC_RAW";
	}
}

/* Greatest common divisor, for a ratio in lowest terms. */
static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

#define CRYSTAL_HZ	25000000U	/* Xeon Scalable SGX parts' crystal */
#define RATIO_DENOM	250U		/* 100 kHz steps of the TSC */

void sgxemu__cpuid_tsc_leaves(uint64_t hz, uint32_t l15[4], uint32_t l16[4])
{
	uint64_t num = (hz + CRYSTAL_HZ / RATIO_DENOM / 2) /
		       (CRYSTAL_HZ / RATIO_DENOM), den = RATIO_DENOM;
	uint64_t g = gcd(num, den), mhz = (hz + 500000) / 1000000;

	for (int i = 0; i < 4; i++)
		l15[i] = l16[i] = 0;
	if (!num || num / g > UINT32_MAX)
		return;
	/* EAX denominator, EBX numerator, ECX crystal Hz: TSC = ECX*EBX/EAX. */
	l15[0] = (uint32_t)(den / g);
	l15[1] = (uint32_t)(num / g);
	l15[2] = CRYSTAL_HZ;
	/* Base and maximum frequency in MHz (16 bits each), bus 100 MHz. */
	if (mhz > 0xffff)
		mhz = 0xffff;
	l16[0] = l16[1] = (uint32_t)mhz;
	l16[2] = 100;
}
