/* SPDX-License-Identifier: MIT */
/*
 * The EPC-paging test enclave's heap and pattern, shared by the enclave
 * (paging_encl.S, paging_encl.c) and the host tests, which recompute the
 * checksum from these formulas.
 */
#ifndef SGXEMU_TEST_PAGING_ENCL_H
#define SGXEMU_TEST_PAGING_ENCL_H

#define PAGING_HEAP	0x100000	/* heap offset in ELRANGE */
#define P_FILL		1
#define P_CHECK		2
#define P_REPORT	3
#define P_STRIDE	4099		/* second pass: page (k * 4099) % n */

#ifndef __ASSEMBLER__
#include <stdint.h>

static inline uint64_t paging_value(uint64_t seed, uint64_t page, uint64_t j)
{
	uint64_t x = (seed ^ (page << 20) ^ j) * 6364136223846793005ULL + 1;

	return x ^ (x >> 29);
}

static inline uint64_t paging_fold(uint64_t c, uint64_t v)
{
	return (c ^ v) * 0x9e3779b97f4a7c15ULL + 1;
}

/* The page the k-th step of the second pass reads (a permutation of
 * [0, n) when n is not a multiple of the prime P_STRIDE). */
static inline uint64_t paging_second(uint64_t k, uint64_t n)
{
	return (k * P_STRIDE) % n;
}
#endif
#endif
