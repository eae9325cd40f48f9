// SPDX-License-Identifier: MIT
/*
 * EWB (ENCLS[0x0B], sgx-facts.md §4.10): write an EPC page back to memory,
 * encrypted and MACed, with a fresh version in a VA slot so that only this
 * copy can ever be loaded again. RBX = PAGEINFO (SRCPGE = destination,
 * PCMD), RCX = the EPC page, RDX = the VA slot.
 */
#include <openssl/rand.h>
#include <string.h>

#include "cpu/internal.h"
#include "cpu/paging.h"

/* Checks that need no processor state (#GP, then #PF for non-EPC). */
static int ewb_check_operands(struct sgx_cpu *cpu,
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
	if (*index == *va_index)
		return SGX_GP;
	if (pageinfo->linaddr || pageinfo->secs ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->secinfo, 128) ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE))
		return SGX_GP;
	if (!pageinfo->secinfo || !pageinfo->srcpge)
		return SGX_PF;
	return 0;
}

/* The per-boot paging key, drawn on first use (cpu->lock held). */
static int paging_key(struct sgx_cpu *cpu)
{
	if (!cpu->paging_key_set) {
		if (RAND_bytes(cpu->paging_key, sizeof(cpu->paging_key)) != 1)
			return -1;
		cpu->paging_key_set = true;
	}
	return 0;
}

int sgx_ewb(struct sgx_cpu *cpu, struct sgx_pageinfo *pageinfo,
	    void *epc_page, uint64_t *va_slot)
{
	struct sgx_paging_header hdr;
	struct sgx_encl_ctl *ctl = NULL;
	struct sgx_epcm_entry *e, *va;
	struct sgx_pcmd *pcmd;
	long index, va_index;
	uint64_t version;
	int ret;

	ret = ewb_check_operands(cpu, pageinfo, epc_page, va_slot, &index,
				 &va_index);
	if (ret)
		return ret;
	pcmd = (struct sgx_pcmd *)(uintptr_t)pageinfo->secinfo;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	va = &cpu->epcm[va_index];
	if (!e->valid || !va->valid || va->page_type != SGX_PT_VA) {
		ret = SGX_PF;
		goto out;
	}

	memset(&hdr, 0, sizeof(hdr));
	hdr.linaddr = e->enclave_address;
	hdr.flags = sgx_epcm_flags(e);
	switch (e->page_type) {
	case SGX_PT_REG:
	case SGX_PT_TCS:
	case SGX_PT_TRIM:
		ctl = cpu->ctl[e->secs];
		if (!e->blocked) {
			ret = SGX_PAGE_NOT_BLOCKED;
			goto out;
		}
		pthread_mutex_lock(&ctl->lock);
		if (!sgx_tracking_done(ctl, e->blocked_epoch))
			ret = SGX_NOT_TRACKED;
		pthread_mutex_unlock(&ctl->lock);
		if (ret)
			goto out;
		hdr.eid = ctl->eid;
		hdr.enclave_id = ctl->eid;
		break;
	case SGX_PT_SECS:
		ctl = cpu->ctl[index];
		if (ctl->child_count) {
			ret = SGX_CHILD_PRESENT;
			goto out;
		}
		hdr.enclave_id = ctl->eid;
		break;
	case SGX_PT_VA:
		break;
	default:
		ret = SGX_GP;
		goto out;
	}

	if (paging_key(cpu)) {
		ret = SGX_GP;
		goto out;
	}
	version = ++cpu->next_version;
	if (sgx_page_seal(cpu->paging_key, version, &hdr, epc_page,
			  (void *)(uintptr_t)pageinfo->srcpge, pcmd->mac)) {
		ret = SGX_GP;
		goto out;
	}
	memset(&pcmd->secinfo, 0, sizeof(pcmd->secinfo));
	pcmd->secinfo.flags = hdr.flags;
	pcmd->enclave_id = hdr.enclave_id;
	memset(pcmd->reserved, 0, sizeof(pcmd->reserved));
	pageinfo->linaddr = e->enclave_address;

	/* An occupied slot is reported, but the eviction still completes. */
	ret = *va_slot ? SGX_VA_SLOT_OCCUPIED : 0;
	*va_slot = version;

	if (e->page_type == SGX_PT_SECS) {
		cpu->ctl[index] = NULL;
		ctl->secs_evicted = true;
	} else if (ctl) {
		ctl->child_count--;
		ctl->pages[(e->enclave_address - ctl->base) >> SGX_PAGE_SHIFT] = 0;
	}
	/* No plaintext stays behind in the freed EPC page. */
	memset(epc_page, 0, SGX_PAGE_SIZE);
	memset(e, 0, sizeof(*e));
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
