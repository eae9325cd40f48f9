// SPDX-License-Identifier: MIT
/* The paging test enclave's commands (see paging_encl.S). */
#include "paging_encl.h"

struct result {
	uint64_t checksum, mismatches;
};

struct result paging_cmd(uint64_t seed, uint64_t cmd, uint64_t first,
			 uint64_t count, uint64_t base);

static volatile uint64_t *heap_page(uint64_t base, uint64_t page)
{
	return (volatile uint64_t *)(base + PAGING_HEAP + page * 4096);
}

static void check_page(uint64_t base, uint64_t seed, uint64_t page,
		       struct result *r)
{
	volatile uint64_t *q = heap_page(base, page);

	for (uint64_t j = 0; j < 512; j++) {
		uint64_t v = q[j];

		if (v != paging_value(seed, page, j))
			r->mismatches++;
		r->checksum = paging_fold(r->checksum, v);
	}
}

struct result paging_cmd(uint64_t seed, uint64_t cmd, uint64_t first,
			 uint64_t count, uint64_t base)
{
	struct result r = { 0, 0 };

	if (cmd == P_FILL) {
		for (uint64_t p = first; p < first + count; p++) {
			volatile uint64_t *q = heap_page(base, p);

			for (uint64_t j = 0; j < 512; j++)
				q[j] = paging_value(seed, p, j);
		}
	} else if (cmd == P_CHECK && count) {
		for (uint64_t k = 0; k < count; k++)
			check_page(base, seed, first + k, &r);
		for (uint64_t k = 0; k < count; k++)
			check_page(base, seed, first + paging_second(k, count),
				   &r);
	}
	return r;
}
