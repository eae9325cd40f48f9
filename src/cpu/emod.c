/* SPDX-License-Identifier: MIT */
/*
 * EMODPR (ENCLS[0x0E]) and EMODT (ENCLS[0x0F]), SGX2: the kernel's half of
 * changing a page after EINIT (sgx-facts.md §4.14, §4.15; SDM EMODPR,
 * EMODT). RBX = SECINFO, RCX = the EPC page; RAX = error code.
 *
 * Both record the enclave's entry epoch in the page: EACCEPT refuses with
 * SGX_NOT_TRACKED until an ETRACK cycle started after the change has
 * completed, i.e. until no logical processor can still hold a TLB entry
 * with the old permissions or type.
 */
#include "cpu/internal.h"

/*
 * The checks EMODPR and EMODT share up to the EPCM lookup: alignment
 * (#GP), EPC residence (#PF). Returns the EPC index in *index.
 */
static int emod_operands(struct sgx_cpu *cpu, const struct sgx_secinfo *si,
			 void *epc_page, long *index)
{
	if (!cpu->config.sgx2)
		return SGX_GP;
	if (!sgx_aligned(si, 64) || !sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	*index = sgx_epc_index(cpu, epc_page);
	if (*index < 0 || !si)
		return SGX_PF;
	return 0;
}

int sgx_emodpr(struct sgx_cpu *cpu, const struct sgx_secinfo *secinfo,
	       void *epc_page)
{
	struct sgx_epcm_entry *e;
	struct sgx_encl_ctl *ctl;
	uint64_t flags;
	long index;
	int ret;

	ret = emod_operands(cpu, secinfo, epc_page, &index);
	if (ret)
		return ret;
	flags = secinfo->flags;
	if (sgx_secinfo_sgx2_reserved(secinfo) ||
	    (!(flags & SGX_SECINFO_R) && (flags & SGX_SECINFO_W)))
		return SGX_GP;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	if (!e->valid) {
		ret = SGX_PF;
		goto out;
	}
	if (e->pending || e->modified) {
		ret = SGX_PAGE_NOT_MODIFIABLE;
		goto out;
	}
	if (e->page_type != SGX_PT_REG) {
		ret = SGX_PF;
		goto out;
	}
	ctl = cpu->ctl[e->secs];
	if (!ctl || !ctl->initialized) {
		ret = SGX_GP;
		goto out;
	}
	e->pr = 1;
	e->r &= !!(flags & SGX_SECINFO_R);
	e->w &= !!(flags & SGX_SECINFO_W);
	e->x &= !!(flags & SGX_SECINFO_X);
	e->mod_epoch = atomic_load(&ctl->epoch);
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}

int sgx_emodt(struct sgx_cpu *cpu, const struct sgx_secinfo *secinfo,
	      void *epc_page)
{
	struct sgx_epcm_entry *e;
	struct sgx_encl_ctl *ctl;
	unsigned pt;
	long index;
	int ret;

	ret = emod_operands(cpu, secinfo, epc_page, &index);
	if (ret)
		return ret;
	pt = (unsigned)((secinfo->flags & SGX_SECINFO_PT_MASK) >>
			SGX_SECINFO_PT_SHIFT);
	if (sgx_secinfo_sgx2_reserved(secinfo) ||
	    (pt != SGX_PT_TCS && pt != SGX_PT_TRIM))
		return SGX_GP;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	if (!e->valid ||
	    !(e->page_type == SGX_PT_REG ||
	      (e->page_type == SGX_PT_TCS && pt == SGX_PT_TRIM))) {
		ret = SGX_PF;
		goto out;
	}
	if (e->pending || e->modified) {
		ret = SGX_PAGE_NOT_MODIFIABLE;
		goto out;
	}
	ctl = cpu->ctl[e->secs];
	if (!ctl || !ctl->initialized) {
		ret = SGX_GP;
		goto out;
	}
	e->pr = 0;
	e->modified = 1;
	e->r = e->w = e->x = 0;
	e->page_type = (uint8_t)pt;
	e->mod_epoch = atomic_load(&ctl->epoch);
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
