/* SPDX-License-Identifier: MIT */
/*
 * EDBGRD and EDBGWR (ENCLS[0x04], [0x05]): a debugger's window into the
 * pages of a DEBUG enclave (sgx-facts.md §4.6, §4.7; SDM EDBGRD/EDBGWR).
 * This processor is always in 64-bit mode, so both move 8 bytes at an
 * 8-byte-aligned EPC address. EPCM permissions are not consulted.
 */
#include <string.h>

#include "cpu/internal.h"

int sgx_edbg_rules(const struct sgx_epcm_entry *epcm, uint64_t secs_attributes,
		   uintptr_t off, bool write)
{
	if (off & 7)
		return SGX_GP;
	if (!epcm->valid)
		return SGX_PF;
	if (epcm->page_type != SGX_PT_REG && epcm->page_type != SGX_PT_TCS &&
	    (write || epcm->page_type != SGX_PT_VA))
		return SGX_PF;
	if (epcm->pending || epcm->modified)
		return SGX_PAGE_NOT_DEBUGGABLE;
	if (epcm->page_type == SGX_PT_TCS &&
	    (write ? off != offsetof(struct sgx_tcs, flags) : off >= SGX_TCS_LIMIT))
		return SGX_GP;
	if (epcm->page_type != SGX_PT_VA && !(secs_attributes & SGX_ATTR_DEBUG))
		return SGX_GP;
	return 0;
}

/*
 * The checks both leaves share, in the SDM's order. Returns 0 with @epcm
 * set, or the fault/code. Caller holds cpu->lock.
 */
static int edbg_check(struct sgx_cpu *cpu, void *addr, bool write,
		      struct sgx_epcm_entry **epcmp)
{
	struct sgx_epcm_entry *epcm;
	uint64_t attrs = 0;
	long index;
	int ret;

	if (!sgx_aligned(addr, 8))
		return SGX_GP;
	index = sgx_epc_index(cpu, addr);
	if (index < 0)
		return SGX_PF;
	epcm = &cpu->epcm[index];
	if (epcm->valid && epcm->page_type != SGX_PT_VA) {
		const struct sgx_secs *secs = sgx_epc_page(cpu, epcm->secs);

		attrs = secs->attributes.flags;
	}
	ret = sgx_edbg_rules(epcm, attrs,
			     (uintptr_t)addr & (SGX_PAGE_SIZE - 1), write);
	if (!ret)
		*epcmp = epcm;
	return ret;
}

int sgx_edbgrd(struct sgx_cpu *cpu, void *epc_addr, uint64_t *data)
{
	struct sgx_epcm_entry *epcm;
	uint64_t v;
	int ret;

	pthread_mutex_lock(&cpu->lock);
	ret = edbg_check(cpu, epc_addr, false, &epcm);
	if (!ret) {
		memcpy(&v, epc_addr, sizeof(v));
		/* A VA slot's version is secret: only "in use or not" shows. */
		if (epcm->page_type == SGX_PT_VA)
			v = v ? ~0ULL : 0;
		*data = v;
	}
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}

int sgx_edbgwr(struct sgx_cpu *cpu, void *epc_addr, uint64_t data)
{
	struct sgx_epcm_entry *epcm;
	int ret;

	pthread_mutex_lock(&cpu->lock);
	ret = edbg_check(cpu, epc_addr, true, &epcm);
	if (!ret)
		memcpy(epc_addr, &data, sizeof(data));
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}
