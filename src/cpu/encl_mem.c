// SPDX-License-Identifier: MIT
/* Memory operands of in-enclave ENCLU leaves: see encl_mem.h. */
#include <string.h>

#include "cpu/encl_mem.h"

int sgx_encl_operand(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		     uint64_t linaddr, uint64_t size, uint64_t align,
		     bool write, void **ptr)
{
	const struct sgx_epcm_entry *e;
	uint32_t slot;
	size_t index;

	if ((linaddr & (align - 1)) || linaddr < ctl->base ||
	    linaddr - ctl->base >= ctl->size ||
	    ctl->size - (linaddr - ctl->base) < size)
		return SGX_GP;
	/* Aligned operands never cross a page; refuse rather than assume. */
	if ((linaddr & (SGX_PAGE_SIZE - 1)) + size > SGX_PAGE_SIZE)
		return SGX_GP;

	slot = ctl->pages[(linaddr - ctl->base) >> SGX_PAGE_SHIFT];
	if (!slot)
		return SGX_PF;
	index = slot - 1;
	e = &cpu->epcm[index];
	if (!e->valid || e->blocked || e->pending || e->modified ||
	    e->page_type != SGX_PT_REG || e->secs != ctl->secs_index ||
	    e->enclave_address != (linaddr & ~(SGX_PAGE_SIZE - 1)) ||
	    !e->r || (write && !e->w))
		return SGX_PF;
	*ptr = (uint8_t *)sgx_epc_page(cpu, index) +
	       (linaddr & (SGX_PAGE_SIZE - 1));
	return 0;
}

void sgx_encl_key_identity(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			   struct sgx_key_identity *id)
{
	const struct sgx_secs *secs = sgx_epc_page(cpu, ctl->secs_index);

	memset(id, 0, sizeof(*id));
	id->attributes = secs->attributes;
	id->miscselect = secs->miscselect;
	memcpy(id->mrenclave, secs->mrenclave, sizeof(id->mrenclave));
	memcpy(id->mrsigner, secs->mrsigner, sizeof(id->mrsigner));
	id->isvprodid = secs->isvprodid;
	id->isvsvn = secs->isvsvn;
	id->config_svn = secs->config_svn;
	memcpy(id->config_id, secs->config_id, sizeof(id->config_id));
	memcpy(id->isvfamilyid, ctl->isvfamilyid, sizeof(id->isvfamilyid));
	memcpy(id->isvextprodid, ctl->isvextprodid, sizeof(id->isvextprodid));
}
