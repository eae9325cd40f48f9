/* SPDX-License-Identifier: MIT */
/*
 * EAUG (ENCLS[0x0D], SGX2): add a zeroed, unmeasured page to an initialised
 * enclave in the PENDING state, R|W, PT_REG (sgx-facts.md §4.13; SDM EAUG).
 * RBX = PAGEINFO (LINADDR, SECS; SRCPGE and SECINFO must be 0),
 * RCX = the EPC page. The enclave must EACCEPT (or EACCEPTCOPY) the page
 * before it can use it.
 */
#include <string.h>

#include "cpu/internal.h"

int sgx_eaug(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page)
{
	struct sgx_epcm_entry *epcm, *secs_epcm;
	struct sgx_encl_ctl *ctl;
	long index, secs_index;
	uint64_t offset;
	int ret;

	if (!cpu->config.sgx2)
		return SGX_GP;		/* undefined leaf on an SGX1 part */
	if (!sgx_aligned(pageinfo, 32) || !sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, epc_page);
	if (index < 0 || !pageinfo)
		return SGX_PF;
	if ((pageinfo->secs & (SGX_PAGE_SIZE - 1)) ||
	    (pageinfo->linaddr & (SGX_PAGE_SIZE - 1)))
		return SGX_GP;
	/* The 2018 SDM: no source page and no SECINFO for EAUG. */
	if (pageinfo->srcpge || pageinfo->secinfo)
		return SGX_GP;
	secs_index = sgx_epc_index(cpu, (void *)(uintptr_t)pageinfo->secs);
	if (secs_index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	epcm = &cpu->epcm[index];
	secs_epcm = &cpu->epcm[secs_index];
	if (epcm->valid || !secs_epcm->valid ||
	    secs_epcm->page_type != SGX_PT_SECS) {
		ret = SGX_PF;
		goto out;
	}
	ctl = cpu->ctl[secs_index];
	if (!ctl || !ctl->initialized || pageinfo->linaddr < ctl->base ||
	    pageinfo->linaddr - ctl->base >= ctl->size) {
		ret = SGX_GP;
		goto out;
	}
	offset = pageinfo->linaddr - ctl->base;
	/* One EPC page per linear address, as for EADD (eadd.c). */
	if (ctl->pages[offset >> SGX_PAGE_SHIFT]) {
		ret = SGX_GP;
		goto out;
	}
	if (cpu->epc_used[index])
		memset(epc_page, 0, SGX_PAGE_SIZE);
	memset(epcm, 0, sizeof(*epcm));
	epcm->r = 1;
	epcm->w = 1;
	epcm->page_type = SGX_PT_REG;
	epcm->enclave_address = pageinfo->linaddr;
	epcm->secs = (uint32_t)secs_index;
	epcm->pending = 1;
	epcm->valid = 1;
	sgx_epc_set_used(cpu, index);
	ctl->child_count++;
	__atomic_store_n(&ctl->pages[offset >> SGX_PAGE_SHIFT],
			 (uint32_t)index + 1, __ATOMIC_RELEASE);
	ret = 0;
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
