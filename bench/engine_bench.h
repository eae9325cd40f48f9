/* SPDX-License-Identifier: MIT */
/*
 * Shared by the engine benchmarks (ecall, compute, paging, ...): the two functions the test
 * enclave loader (tests/enclaves/encl_util.h) takes from the test harness,
 * and timing helpers.
 */
#ifndef SGXEMU_ENGINE_BENCH_H
#define SGXEMU_ENGINE_BENCH_H

#include <asm/prctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "signing_key.h"

static inline uint64_t now_ns(void)
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

static inline uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/* One FS base write by arch_prctl, the way an entry or exit switches FS
 * where the kernel does not manage FSGSBASE: median ns of @n. */
static inline double fs_write_median(int n)
{
	uint64_t *t = calloc((size_t)n, sizeof(*t));
	unsigned long fs;
	double m;

	if (!t)
		return 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		syscall(SYS_arch_prctl, ARCH_SET_FS, fs);
		t[i] = now_ns() - t0;
	}
	m = (double)median(t, (size_t)n);
	free(t);
	return m;
}

/* Whether the engine switches FS by arch_prctl here (no HWCAP2_FSGSBASE). */
static inline bool fs_by_syscall(void)
{
	return !(getauxval(AT_HWCAP2) & 2) || getenv("SGXEMU_NO_FSGSBASE");
}

#include "../tests/enclaves/encl_util.h"

#endif
