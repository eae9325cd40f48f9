/* SPDX-License-Identifier: MIT */
/*
 * EREMOVE (ENCLS[0x03]): return an EPC page to the free pool
 * (sgx-facts.md §4.5; SDM EREMOVE). RCX = the EPC page; RAX = error code.
 */
#include "cpu/internal.h"

/* Unlink @ctl from cpu->enclaves. Caller holds cpu->lock. */
static void encl_unlink(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl)
{
	for (struct sgx_encl_ctl **p = &cpu->enclaves; *p; p = &(*p)->next)
		if (*p == ctl) {
			*p = ctl->next;
			return;
		}
}

/*
 * A child page (REG/TCS/TRIM) leaves its enclave: the SECS's child count
 * and the linear-address map forget it. Caller holds cpu->lock.
 */
static void encl_drop_child(struct sgx_cpu *cpu, struct sgx_epcm_entry *epcm,
			    long index)
{
	struct sgx_encl_ctl *ctl = cpu->ctl[epcm->secs];
	uint64_t off;

	if (!ctl)
		return;
	off = epcm->enclave_address - ctl->base;
	if (off < ctl->size &&
	    ctl->pages[off >> SGX_PAGE_SHIFT] == (uint32_t)index + 1)
		ctl->pages[off >> SGX_PAGE_SHIFT] = 0;
	ctl->child_count--;
}

int sgx_eremove(struct sgx_cpu *cpu, void *epc_page)
{
	struct sgx_epcm_entry *epcm;
	struct sgx_encl_ctl *ctl;
	long index;
	int ret = 0;

	if (!sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, epc_page);
	if (index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	epcm = &cpu->epcm[index];
	if (!epcm->valid) {
		if (cpu->lost)
			sgx_power_lost_free(cpu, index);
		goto out;
	}

	switch (epcm->page_type) {
	case SGX_PT_VA:
		break;
	case SGX_PT_SECS:
		ctl = cpu->ctl[index];
		if (!ctl)
			break;
		if (ctl->child_count) {
			ret = SGX_CHILD_PRESENT;
			goto out;
		}
		encl_unlink(cpu, ctl);
		cpu->ctl[index] = NULL;
		/* Wait out a hash update that holds the enclave lock. */
		pthread_mutex_lock(&ctl->lock);
		pthread_mutex_unlock(&ctl->lock);
		sgx_encl_ctl_free(ctl);
		break;
	case SGX_PT_TRIM:
		/*
		 * A trimmed page the enclave already accepted (MODIFIED=0)
		 * is no longer reachable by enclave code: the SDM frees it
		 * without looking for threads in the enclave.
		 */
		if (!epcm->modified) {
			encl_drop_child(cpu, epcm, index);
			break;
		}
		/* fall through */
	default:	/* REG, TCS */
		ctl = cpu->ctl[epcm->secs];
		if (ctl && atomic_load(&ctl->active_threads) > 0) {
			ret = SGX_ENCLAVE_ACT;
			goto out;
		}
		encl_drop_child(cpu, epcm, index);
		break;
	}
	epcm->valid = 0;
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
