// SPDX-License-Identifier: MIT
/*
 * ELDB / ELDU (ENCLS[0x07] / [0x08], sgx-facts.md §4.11): load a page that
 * EWB wrote back, after checking its MAC against the version still held in
 * the VA slot; the slot is then cleared, so the same copy (or any older
 * one) can never be loaded again. ELDB leaves a child page blocked.
 */
#include <string.h>

#include "cpu/internal.h"
#include "cpu/paging.h"

static int eld_check_operands(struct sgx_cpu *cpu,
			      const struct sgx_pageinfo *pageinfo,
			      void *epc_page, uint64_t *va_slot,
			      long *index, long *va_index)
{
	if (!sgx_aligned(pageinfo, 32) || !sgx_aligned(epc_page, SGX_PAGE_SIZE) ||
	    !sgx_aligned(va_slot, 8))
		return SGX_GP;
	*index = sgx_epc_index(cpu, epc_page);
	*va_index = sgx_epc_index(cpu, va_slot);
	if (*index < 0 || *va_index < 0 || !pageinfo)
		return SGX_PF;
	if (!sgx_aligned((void *)(uintptr_t)pageinfo->secinfo, 128) ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE))
		return SGX_GP;
	if (!pageinfo->secinfo || !pageinfo->srcpge)
		return SGX_PF;
	return 0;
}

/* The hidden state of the evicted SECS whose enclave id is @eid. */
static struct sgx_encl_ctl *evicted_secs(struct sgx_cpu *cpu, uint64_t eid)
{
	for (struct sgx_encl_ctl *c = cpu->enclaves; c; c = c->next)
		if (c->secs_evicted && c->eid == eid)
			return c;
	return NULL;
}

static int eld(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	       void *epc_page, uint64_t *va_slot, bool block)
{
	uint8_t plain[SGX_PAGE_SIZE];
	const struct sgx_pcmd *pcmd;
	struct sgx_paging_header hdr;
	struct sgx_encl_ctl *ctl = NULL;
	struct sgx_epcm_entry *e, *va;
	long index, va_index, secs_index = -1;
	uint64_t flags, slot;
	unsigned pt;
	int ret;

	ret = eld_check_operands(cpu, pageinfo, epc_page, va_slot, &index,
				 &va_index);
	if (ret)
		return ret;
	pcmd = (const struct sgx_pcmd *)(uintptr_t)pageinfo->secinfo;
	flags = pcmd->secinfo.flags;
	pt = (unsigned)((flags & SGX_SECINFO_PT_MASK) >> SGX_SECINFO_PT_SHIFT);

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	va = &cpu->epcm[va_index];
	if (e->valid || !va->valid || va->page_type != SGX_PT_VA) {
		ret = SGX_PF;
		goto out;
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.linaddr = pageinfo->linaddr;
	hdr.flags = flags;
	hdr.enclave_id = pcmd->enclave_id;
	if (pt == SGX_PT_REG || pt == SGX_PT_TCS || pt == SGX_PT_TRIM) {
		void *secs = (void *)(uintptr_t)pageinfo->secs;

		if (!sgx_aligned(secs, SGX_PAGE_SIZE)) {
			ret = SGX_GP;
			goto out;
		}
		secs_index = sgx_epc_index(cpu, secs);
		if (secs_index < 0 || !cpu->epcm[secs_index].valid ||
		    cpu->epcm[secs_index].page_type != SGX_PT_SECS) {
			ret = SGX_PF;
			goto out;
		}
		ctl = cpu->ctl[secs_index];
		hdr.eid = ctl->eid;
	}

	slot = *va_slot;
	if (!slot || sgx_page_open(cpu->paging_key, slot, &hdr,
				   (const void *)(uintptr_t)pageinfo->srcpge,
				   plain, pcmd->mac)) {
		ret = SGX_MAC_COMPARE_FAIL;
		goto out;
	}

	if (pt == SGX_PT_SECS) {
		ctl = evicted_secs(cpu, pcmd->enclave_id);
		if (!ctl) {	/* MAC-valid, so its enclave was torn down */
			ret = SGX_MAC_COMPARE_FAIL;
			goto out;
		}
	} else if (ctl) {
		uint64_t off = hdr.linaddr - ctl->base;

		/*
		 * The emulator keeps one page per linear address (see EADD);
		 * a page EAUG put there meanwhile makes the reload a #GP.
		 */
		if (hdr.linaddr < ctl->base || off >= ctl->size ||
		    ctl->pages[off >> SGX_PAGE_SHIFT]) {
			ret = SGX_GP;
			goto out;
		}
	}

	memcpy(epc_page, plain, SGX_PAGE_SIZE);
	memset(plain, 0, sizeof(plain));
	*va_slot = 0;
	memset(e, 0, sizeof(*e));
	e->page_type = (uint8_t)pt;
	e->r = !!(flags & SGX_SECINFO_R);
	e->w = !!(flags & SGX_SECINFO_W);
	e->x = !!(flags & SGX_SECINFO_X);
	e->pending = !!(flags & SGX_SECINFO_PENDING);
	e->modified = !!(flags & SGX_SECINFO_MODIFIED);
	e->pr = !!(flags & SGX_SECINFO_PR);
	if (pt == SGX_PT_SECS) {
		ctl->secs_index = index;
		ctl->secs_evicted = false;
		cpu->ctl[index] = ctl;
	} else if (ctl) {
		e->enclave_address = hdr.linaddr;
		e->secs = (uint32_t)secs_index;
		e->blocked = block;
		e->blocked_epoch = atomic_load(&ctl->epoch);
		ctl->child_count++;
		ctl->pages[(hdr.linaddr - ctl->base) >> SGX_PAGE_SHIFT] =
			(uint32_t)index + 1;
	}
	e->valid = 1;
	sgx_epc_set_used(cpu, index);
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}

int sgx_eldb(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page, uint64_t *va_slot)
{
	return eld(cpu, pageinfo, epc_page, va_slot, true);
}

int sgx_eldu(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
	     void *epc_page, uint64_t *va_slot)
{
	return eld(cpu, pageinfo, epc_page, va_slot, false);
}
