/* SPDX-License-Identifier: MIT */
/*
 * ECREATE (ENCLS[0x00]): turn a free EPC page into the SECS of a new enclave
 * (sgx-facts.md §4.1; SDM ECREATE). RBX = PAGEINFO, RCX = the EPC page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/internal.h"
#include "cpu/measure.h"

/*
 * The SECS checks of ECREATE, in the SDM's order, on the copy already in the
 * EPC page (so the host cannot change it between check and use). Every
 * failure is #GP(0).
 */
static int ecreate_validate_secs(const struct sgx_cpu *cpu,
				 const struct sgx_secs *secs)
{
	uint64_t flags = secs->attributes.flags;
	uint64_t xfrm = secs->attributes.xfrm;
	uint64_t frame = (uint64_t)secs->ssa_frame_size * SGX_PAGE_SIZE;

	if ((xfrm & SGX_XFRM_LEGACY) != SGX_XFRM_LEGACY)
		return SGX_GP;
	if (!sgx_xfrm_legal(xfrm) || (xfrm & ~cpu->config.xfrm_supported))
		return SGX_GP;
	if (secs->miscselect & ~cpu->config.miscselect_supported)
		return SGX_GP;
	if (frame < sgx_ssa_frame_min(xfrm, secs->miscselect))
		return SGX_GP;
	/*
	 * This processor only runs 64-bit code: the native engine executes
	 * enclave code directly on a 64-bit host, where a 32-bit enclave
	 * (compatibility-mode code segment, FS/GS limits) cannot be entered.
	 * A CPU that could never run such an enclave refuses to create it,
	 * at the point where the SDM checks MODE64BIT's address rules.
	 */
	if (!(flags & SGX_ATTR_MODE64BIT))
		return SGX_GP;
	if (!sgx_canonical(secs->base))
		return SGX_GP;
	if (secs->size >> cpu->config.max_enclave_size_64)
		return SGX_GP;
	if (secs->size < 2 * SGX_PAGE_SIZE || (secs->size & (secs->size - 1)))
		return SGX_GP;
	if (secs->base & (secs->size - 1))
		return SGX_GP;
	if (flags & ~sgx_attr_supported(&cpu->config))
		return SGX_GP;
	/* INIT is EINIT's to set; an enclave cannot be created initialised. */
	if (flags & SGX_ATTR_INIT)
		return SGX_GP;
	if (!sgx_all_zero(secs->reserved1, sizeof(secs->reserved1)) ||
	    !sgx_all_zero(secs->reserved2, sizeof(secs->reserved2)) ||
	    !sgx_all_zero(secs->reserved3, sizeof(secs->reserved3)) ||
	    !sgx_all_zero(secs->reserved4, sizeof(secs->reserved4)))
		return SGX_GP;
	if (!(flags & SGX_ATTR_KSS) &&
	    (!sgx_all_zero(secs->config_id, sizeof(secs->config_id)) ||
	     secs->config_svn))
		return SGX_GP;
	return 0;
}

/*
 * The hidden SECS state: a fresh measurement seeded with the ECREATE
 * record, and the linear-address -> EPC page map. The map is a calloc of
 * one u32 per page of ELRANGE; large callocs come from untouched anonymous
 * memory, so a 32 GiB ELRANGE costs only the pages actually added.
 */
static struct sgx_encl_ctl *encl_ctl_new(const struct sgx_secs *secs,
					 size_t secs_index)
{
	uint8_t block[SGX_MEAS_BLOCK];
	struct sgx_encl_ctl *ctl = calloc(1, sizeof(*ctl));

	if (!ctl)
		return NULL;
	ctl->secs_index = secs_index;
	ctl->base = secs->base;
	ctl->size = secs->size;
	atomic_init(&ctl->active_threads, 0);
	pthread_mutex_init(&ctl->lock, NULL);
	ctl->pages = calloc(secs->size >> SGX_PAGE_SHIFT, sizeof(*ctl->pages));
	ctl->mrenclave = EVP_MD_CTX_new();
	sgx_meas_ecreate(block, secs->ssa_frame_size, secs->size);
	if (!ctl->pages || !ctl->mrenclave ||
	    !EVP_DigestInit_ex(ctl->mrenclave, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(ctl->mrenclave, block, sizeof(block))) {
		sgx_encl_ctl_free(ctl);
		return NULL;
	}
	ctl->update_counter = 1;
	return ctl;
}

int sgx_ecreate(struct sgx_cpu *cpu, const struct sgx_pageinfo *pageinfo,
		void *epc_page)
{
	const struct sgx_secinfo *secinfo;
	struct sgx_encl_ctl *ctl;
	struct sgx_epcm_entry *epcm;
	struct sgx_secs *secs;
	long index;
	int ret;

	if (!sgx_aligned(pageinfo, 32) || !sgx_aligned(epc_page, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, epc_page);
	if (index < 0)
		return SGX_PF;
	if (!pageinfo)
		return SGX_PF;

	if (!sgx_aligned((void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE) ||
	    !sgx_aligned((void *)(uintptr_t)pageinfo->secinfo, 64))
		return SGX_GP;
	if (pageinfo->linaddr || pageinfo->secs)
		return SGX_GP;
	if (!pageinfo->srcpge || !pageinfo->secinfo)
		return SGX_PF;

	secinfo = (const struct sgx_secinfo *)(uintptr_t)pageinfo->secinfo;
	if ((secinfo->flags & SGX_SECINFO_EADD_RESERVED) ||
	    !sgx_all_zero(secinfo->reserved, sizeof(secinfo->reserved)) ||
	    (secinfo->flags & SGX_SECINFO_PT_MASK) != SGX_SECINFO_SECS)
		return SGX_GP;

	pthread_mutex_lock(&cpu->lock);
	epcm = &cpu->epcm[index];
	if (epcm->valid) {
		ret = SGX_PF;
		goto out;
	}

	secs = epc_page;
	memcpy(secs, (const void *)(uintptr_t)pageinfo->srcpge, SGX_PAGE_SIZE);
	ret = ecreate_validate_secs(cpu, secs);
	if (ret)
		goto out;

	/* Output fields start cleared; EINIT fills them. */
	memset(secs->mrenclave, 0, sizeof(secs->mrenclave));
	memset(secs->mrsigner, 0, sizeof(secs->mrsigner));
	secs->isvprodid = 0;
	secs->isvsvn = 0;

	ctl = encl_ctl_new(secs, (size_t)index);
	if (!ctl) {
		/* Not an architectural outcome: the emulator ran out of memory. */
		ret = -ENOMEM;
		goto out;
	}
	ctl->eid = atomic_fetch_add(&cpu->next_eid, 1);
	ctl->next = cpu->enclaves;
	cpu->enclaves = ctl;
	cpu->ctl[index] = ctl;

	memset(epcm, 0, sizeof(*epcm));
	epcm->page_type = SGX_PT_SECS;
	epcm->secs = (uint32_t)index;
	epcm->valid = 1;
	sgx_epc_set_used(cpu, index);
	ret = 0;
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
