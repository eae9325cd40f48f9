/* SPDX-License-Identifier: MIT */
/*
 * fork() and the EPC. The processor state (EPCM, allocator) is per process
 * for now, but the EPC memfd is shared with a forked child, so that the
 * enclaves the child inherits are the parent's, as on Linux. Pages free at
 * the fork would then be handed out by both processes' allocators to
 * different enclaves: one EPC page, two owners. So at each fork the free
 * pages are split: walking them in index order, every other one stays
 * with the parent, the rest go to the child, and each process marks the
 * other's share allocated. Both sides compute the same split because they
 * start from the same state: the driver's ioctls (the only allocations a
 * program under the shim makes) are held off across the fork.
 *
 * Uses the driver's EPC allocator (epc_alloc.c). Pages already in the EPCM are skipped without asking the allocator, so
 * that it never has to reclaim on our behalf; the halving leaves each
 * process above the reclaim watermarks unless the EPC was nearly full.
 */
#include "driver/drv.h"
#include "driver/paging.h"

void sgx_epc_fork_split(bool child)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	size_t k = 0;

	if (!__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		return;		/* no EPC yet: nothing shared */
	for (size_t i = 0; i < cpu->nr_pages; i++) {
		long r;

		if (cpu->epcm[i].valid)
			continue;	/* in use: inherited, not free */
		/* With a hint the allocator takes exactly that page when it
		 * is free, else some other free page, which goes back. */
		r = sgxemu__epc_alloc((long)i, false);
		if (r < 0)
			break;		/* nothing free at all */
		if (r != (long)i) {
			sgxemu__epc_free(r);
			continue;
		}
		/* Even-numbered free pages are the parent's, odd the child's;
		 * ours go back to the pool, the other's stay allocated. */
		if ((k++ & 1) == (size_t)child)
			sgxemu__epc_free((long)i);
	}
}
