// SPDX-License-Identifier: MIT
/*
 * EPA (ENCLS[0x0A], sgx-facts.md §4.12): turn a free EPC page into a
 * version-array page of 512 empty 8-byte slots.
 */
#include <string.h>

#include "cpu/internal.h"

int sgx_epa(struct sgx_cpu *cpu, uint64_t page_type, void *epc_page)
{
	struct sgx_epcm_entry *e;
	long index;
	int ret = 0;

	if (page_type != SGX_PT_VA || !sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, epc_page);
	if (index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	if (e->valid) {
		ret = SGX_PF;
	} else {
		memset(epc_page, 0, SGX_PAGE_SIZE);
		memset(e, 0, sizeof(*e));
		e->page_type = SGX_PT_VA;
		e->valid = 1;
		sgx_epc_set_used(cpu, index);
	}
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
