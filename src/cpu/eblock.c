// SPDX-License-Identifier: MIT
/*
 * EBLOCK (ENCLS[0x09], sgx-facts.md §4.8): mark a page blocked so no new
 * TLB entries are created for it, the first step of evicting it. The
 * current entry epoch is recorded so that EWB can tell whether an ETRACK
 * cycle has passed since.
 */
#include "cpu/internal.h"

int sgx_eblock(struct sgx_cpu *cpu, void *epc_page)
{
	struct sgx_epcm_entry *e;
	long index;
	int ret = 0;

	if (!sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, epc_page);
	if (index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	if (!e->valid)
		ret = SGX_PG_INVLD;
	else if (e->page_type == SGX_PT_SECS)
		ret = SGX_PG_IS_SECS;
	else if (e->page_type != SGX_PT_REG && e->page_type != SGX_PT_TCS &&
		 e->page_type != SGX_PT_TRIM)
		ret = SGX_NOTBLOCKABLE;
	else if (e->blocked)
		ret = SGX_BLKSTATE;
	else {
		e->blocked = 1;
		e->blocked_epoch = atomic_load(&cpu->ctl[e->secs]->epoch);
	}
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
