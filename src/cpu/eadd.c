/* SPDX-License-Identifier: MIT */
/*
 * EADD (ENCLS[0x01]): copy a page into the EPC and make it an enclave page
 * of type REG or TCS at PAGEINFO.LINADDR (sgx-facts.md §4.2; SDM EADD).
 * RBX = PAGEINFO, RCX = the EPC page.
 */
#include <string.h>

#include "cpu/internal.h"
#include "cpu/measure.h"

/*
 * Operand checks that need no processor state: alignment (#GP), EPC
 * residence of the target and of the SECS (#PF), SECINFO content (#GP).
 */
static int eadd_check_operands(struct sgx_cpu *cpu,
			       const struct sgx_pageinfo *pageinfo,
			       void *epc_page, long *index, long *secs_index)
{
	const struct sgx_secinfo *secinfo;
	uint64_t pt;

	if (!sgx_aligned(pageinfo, 32) || !sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	*index = sgx_epc_index(cpu, epc_page);
	if (*index < 0 || !pageinfo)
		return SGX_PF;

	if (!sgx_aligned((void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE) ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->secs, SGX_PAGE_SIZE) ||
	    (pageinfo->linaddr & (SGX_PAGE_SIZE - 1)) ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->secinfo, 64))
		return SGX_GP;
	*secs_index = sgx_epc_index(cpu, (void *)(uintptr_t)pageinfo->secs);
	if (*secs_index < 0 || !pageinfo->srcpge || !pageinfo->secinfo)
		return SGX_PF;

	secinfo = (const struct sgx_secinfo *)(uintptr_t)pageinfo->secinfo;
	pt = (secinfo->flags & SGX_SECINFO_PT_MASK) >> SGX_SECINFO_PT_SHIFT;
	if ((secinfo->flags & SGX_SECINFO_EADD_RESERVED) ||
	    !sgx_all_zero(secinfo->reserved, sizeof(secinfo->reserved)) ||
	    (pt != SGX_PT_REG && pt != SGX_PT_TCS))
		return SGX_GP;
	return 0;
}

int sgx_eadd(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page)
{
	uint8_t block[SGX_MEAS_BLOCK];
	struct sgx_epcm_entry *epcm, *secs_epcm;
	struct sgx_encl_ctl *ctl;
	uint64_t flags, offset;
	long index, secs_index;
	unsigned pt;
	int ret;

	ret = eadd_check_operands(cpu, pageinfo, epc_page, &index, &secs_index);
	if (ret)
		return ret;
	flags = ((const struct sgx_secinfo *)(uintptr_t)pageinfo->secinfo)->flags;
	pt = (unsigned)((flags & SGX_SECINFO_PT_MASK) >> SGX_SECINFO_PT_SHIFT);

	pthread_mutex_lock(&cpu->lock);
	epcm = &cpu->epcm[index];
	secs_epcm = &cpu->epcm[secs_index];
	if (epcm->valid || !secs_epcm->valid ||
	    secs_epcm->page_type != SGX_PT_SECS) {
		ret = SGX_PF;
		goto out;
	}
	ctl = cpu->ctl[secs_index];

	/*
	 * A page never used since the EPC was made is still the memfd's
	 * hole and reads as zero (as EAUG relies on): a zero source, the
	 * free heap most runtimes add, then needs no copy, and the
	 * processor's mapping of the page is not faulted in for it. Once
	 * written, the page counts as used even if the checks below refuse
	 * it, so that a later EAUG clears it.
	 */
	if (cpu->epc_used[index] ||
	    !sgx_all_zero((const void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE)) {
		memcpy(epc_page, (const void *)(uintptr_t)pageinfo->srcpge,
		       SGX_PAGE_SIZE);
		sgx_epc_set_used(cpu, index);
	}
	if (pt == SGX_PT_TCS) {
		const struct sgx_tcs *tcs = epc_page;

		/* FSLIMIT/GSLIMIT rules are for 32-bit enclaves: none here. */
		if (!sgx_all_zero(tcs->reserved, sizeof(tcs->reserved))) {
			ret = SGX_GP;
			goto out;
		}
	} else if ((flags & SGX_SECINFO_W) && !(flags & SGX_SECINFO_R)) {
		ret = SGX_GP;
		goto out;
	}

	if (pageinfo->linaddr < ctl->base ||
	    pageinfo->linaddr - ctl->base >= ctl->size || ctl->initialized) {
		ret = SGX_GP;
		goto out;
	}
	offset = pageinfo->linaddr - ctl->base;
	/*
	 * Hardware would let two EPC pages claim the same linear address (the
	 * EPCM check at access time catches the wrong one); the emulator maps
	 * pages at their addresses itself, so it refuses the second one. No
	 * kernel adds a page twice.
	 */
	if (ctl->pages[offset >> SGX_PAGE_SHIFT]) {
		ret = SGX_GP;
		goto out;
	}

	if (pt == SGX_PT_TCS) {
		struct sgx_tcs *tcs = epc_page;

		/* Hardware-owned fields start clear, before anything is measured. */
		flags &= ~SGX_SECINFO_PERM_MASK;
		tcs->state = 0;
		tcs->flags &= ~SGX_TCS_DBGOPTIN;
		tcs->cssa = 0;
		tcs->aep = 0;
	}

	sgx_meas_eadd(block, offset, flags);
	pthread_mutex_lock(&ctl->lock);
	EVP_DigestUpdate(ctl->mrenclave, block, sizeof(block));
	ctl->update_counter++;
	pthread_mutex_unlock(&ctl->lock);

	memset(epcm, 0, sizeof(*epcm));
	epcm->r = !!(flags & SGX_SECINFO_R);
	epcm->w = !!(flags & SGX_SECINFO_W);
	epcm->x = !!(flags & SGX_SECINFO_X);
	epcm->page_type = (uint8_t)pt;
	epcm->enclave_address = pageinfo->linaddr;
	epcm->secs = (uint32_t)secs_index;
	epcm->valid = 1;
	sgx_epc_set_used(cpu, index);
	ctl->child_count++;
	ctl->pages[offset >> SGX_PAGE_SHIFT] = (uint32_t)index + 1;
	ret = 0;
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
