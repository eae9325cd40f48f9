/* SPDX-License-Identifier: MIT */
/*
 * Shared by bench/ecall.c and bench/compute.c: the two functions the test
 * enclave loader (tests/enclaves/encl_util.h) takes from the test harness,
 * and timing helpers.
 */
#ifndef SGXEMU_ENGINE_BENCH_H
#define SGXEMU_ENGINE_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static const char *test_build_dir(void)
{
	const char *b = getenv("B");

	return b && *b ? b : "build";
}

static const char *test_shared_path(const char *rel)
{
	static char path[4096];
	const char *roots[] = { getenv("SGXEMU_SHARED"), "../shared",
				"../../shared" };
	struct stat st;

	for (size_t i = 0; i < sizeof(roots) / sizeof(*roots); i++) {
		if (!roots[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", roots[i], rel);
		if (!stat(path, &st))
			return path;
	}
	return NULL;
}

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

#include "../tests/enclaves/encl_util.h"

#endif
