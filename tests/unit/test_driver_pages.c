/* SPDX-License-Identifier: MIT */
/*
 * The driver's table of page permissions (src/driver/driver.c) and the
 * walk that skips what it holds nothing for (sgx_encl_next_page), which
 * sgx_encl_may_map uses over windows of mostly absent pages: Gramine's
 * EDMM heap is a 1 TiB ELRANGE with a few thousand pages in it. The walk
 * may skip only runs the table has no page in; a page anywhere must be
 * visited.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "driver/drv.h"

#define CHUNK_BYTES	(4096ULL * SGX_ENCL_CHUNK_PAGES)

static void encl_init(struct sgx_encl *encl, uint64_t base, uint64_t size)
{
	memset(encl, 0, sizeof(*encl));
	encl->created = true;
	encl->base = base;
	encl->size = size;
}

static void encl_free(struct sgx_encl *encl)
{
	for (size_t c = 0; c < encl->nr_chunks; c++)
		free(encl->pages[c]);
	free(encl->pages);
}

/* The addresses a walk from @start to @end visits that hold a page. */
static unsigned walk(const struct sgx_encl *encl, uint64_t start,
		     uint64_t end, uint64_t *found, unsigned max,
		     uint64_t *steps)
{
	unsigned n = 0;

	*steps = 0;
	for (uint64_t a = start; a < end; a = sgx_encl_next_page(encl, a)) {
		(*steps)++;
		if (sgx_encl_page_prot(encl, a) && n < max)
			found[n++] = a;
	}
	return n;
}

TEST(next_page_skips_only_empty_chunks)
{
	const uint64_t base = 0x10000000000ULL, size = 1ULL << 40;
	const uint64_t a1 = base + 5 * CHUNK_BYTES + 7 * 4096;
	const uint64_t a2 = base + size - 4096;
	struct sgx_encl encl;
	uint64_t found[4], steps;

	encl_init(&encl, base, size);
	/* Nothing yet: one step to the end. */
	CHECK_EQ(sgx_encl_next_page(&encl, base), base + CHUNK_BYTES);
	CHECK_EQ(sgx_encl_next_page(&encl, base + size - CHUNK_BYTES),
		 UINT64_MAX);
	REQUIRE_EQ(sgx_encl_set_page_prot(&encl, a1, 3), 0);
	REQUIRE_EQ(sgx_encl_set_page_prot(&encl, a2, 1), 0);
	/* Below ELRANGE: its start; past it: none; in a chunk that holds a
	 * page: the next page, from an unaligned address too. */
	CHECK_EQ(sgx_encl_next_page(&encl, base - 8192), base);
	CHECK_EQ(sgx_encl_next_page(&encl, base + size), UINT64_MAX);
	CHECK_EQ(sgx_encl_next_page(&encl, a1 - 4096), a1);
	CHECK_EQ(sgx_encl_next_page(&encl, a1 + 5), a1 + 4096);
	CHECK_EQ(sgx_encl_next_page(&encl, base + 4 * CHUNK_BYTES + 4096),
		 base + 5 * CHUNK_BYTES);
	/* The whole 1 TiB: both pages seen, a step per empty chunk and
	 * one per page of the two chunks that hold one. */
	CHECK_EQ(walk(&encl, base, base + size, found, 4, &steps), 2);
	CHECK_EQ(found[0], a1);
	CHECK_EQ(found[1], a2);
	CHECK_EQ(steps, size / CHUNK_BYTES - 2 + 2 * SGX_ENCL_CHUNK_PAGES);
	/* A window that starts below ELRANGE and ends inside it. */
	CHECK_EQ(walk(&encl, base - 65536, a1 + 4096, found, 4, &steps), 1);
	CHECK_EQ(found[0], a1);
	encl_free(&encl);
}

/* Not created yet, or no table at all: nothing anywhere. */
TEST(next_page_of_an_empty_enclave)
{
	struct sgx_encl encl;

	encl_init(&encl, 0x7f0000000000ULL, 1ULL << 30);
	CHECK_EQ(sgx_encl_next_page(&encl, encl.base), encl.base + CHUNK_BYTES);
	CHECK_EQ(sgx_encl_page_prot(&encl, encl.base), 0);
	encl.created = false;
	CHECK_EQ(sgx_encl_next_page(&encl, encl.base), UINT64_MAX);
}
