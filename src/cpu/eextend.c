/* SPDX-License-Identifier: MIT */
/*
 * EEXTEND (ENCLS[0x06]): measure 256 bytes of an added page into MRENCLAVE
 * (sgx-facts.md §2, §4.3; SDM EEXTEND). RBX = SECS, RCX = the chunk.
 */
#include <string.h>

#include "cpu/internal.h"
#include "cpu/measure.h"

int sgx_eextend(struct sgx_cpu *cpu, void *secs, void *chunk)
{
	uint8_t rec[SGX_MEAS_BLOCK + SGX_EEXTEND_CHUNK];
	struct sgx_epcm_entry *epcm;
	struct sgx_encl_ctl *ctl;
	long secs_index, index;
	uint64_t offset;

	if (!sgx_aligned(secs, SGX_PAGE_SIZE))
		return SGX_GP;
	secs_index = sgx_epc_index(cpu, secs);
	if (secs_index < 0)
		return SGX_PF;
	if (!sgx_aligned(chunk, SGX_EEXTEND_CHUNK))
		return SGX_GP;
	index = sgx_epc_index(cpu, chunk);
	if (index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	epcm = &cpu->epcm[index];
	if (!epcm->valid ||
	    (epcm->page_type != SGX_PT_REG && epcm->page_type != SGX_PT_TCS)) {
		pthread_mutex_unlock(&cpu->lock);
		return SGX_PF;
	}
	ctl = cpu->ctl[secs_index];
	if (epcm->secs != (uint32_t)secs_index || !ctl || ctl->initialized) {
		pthread_mutex_unlock(&cpu->lock);
		return SGX_GP;
	}
	offset = epcm->enclave_address - ctl->base +
		 ((uintptr_t)chunk & (SGX_PAGE_SIZE - 1));
	/* One 320-byte update: header record then the four data blocks. */
	sgx_meas_eextend(rec, offset);
	memcpy(rec + SGX_MEAS_BLOCK, chunk, SGX_EEXTEND_CHUNK);
	/*
	 * The chunk is copied while the EPCM still vouches for the page. The
	 * enclave lock keeps the SECS alive (EREMOVE takes it before freeing)
	 * and orders concurrent EEXTENDs; the global lock is not needed while
	 * hashing.
	 */
	pthread_mutex_lock(&ctl->lock);
	pthread_mutex_unlock(&cpu->lock);
	EVP_DigestUpdate(ctl->mrenclave, rec, sizeof(rec));
	ctl->update_counter += 5;
	pthread_mutex_unlock(&ctl->lock);
	return 0;
}
