/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the EPC paging leaves (EWB, ELDB/ELDU, ETRACK).
 *
 * The page crypto is implementation-defined in the SDM (sgx-facts.md §4.10,
 * §7): sgxemu encrypts with AES-128-GCM under a per-boot key, with the
 * page's version as IV and a 128-byte header as additional data:
 *   0  LINADDR            8  SECINFO.FLAGS (PT, RWX, PENDING, MODIFIED, PR)
 *   16 EID (0 for SECS/VA) 24 PCMD.ENCLAVEID   32..127 zero
 * PCMD.ENCLAVEID is bound too (the SDM leaves it outside the MAC) because
 * sgxemu finds an evicted SECS's hidden state by it: without the binding,
 * swapping two PCMDs would swap two enclaves' identities.
 */
#ifndef SGXEMU_CPU_PAGING_H
#define SGXEMU_CPU_PAGING_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

#define SGX_PAGING_HEADER_SIZE	128

struct sgx_paging_header {
	uint64_t linaddr;
	uint64_t flags;
	uint64_t eid;
	uint64_t enclave_id;
	uint8_t  zero[96];
};
_Static_assert(sizeof(struct sgx_paging_header) == SGX_PAGING_HEADER_SIZE,
	       "the paging MAC header is 128 bytes");

/* Has an ETRACK cycle started after @blocked and drained? (ctl->lock held) */
bool sgx_tracking_done(struct sgx_encl_ctl *ctl, uint64_t blocked);

/* AES-128-GCM seal/open of one page. Return 0, or -1 (open: MAC mismatch). */
int sgx_page_seal(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *plain,
		  void *cipher, uint8_t mac[16]);
int sgx_page_open(const uint8_t key[16], uint64_t version,
		  const struct sgx_paging_header *hdr, const void *cipher,
		  void *plain, const uint8_t mac[16]);

/* EPCM state as the SECINFO.FLAGS value EWB records in the PCMD. */
uint64_t sgx_epcm_flags(const struct sgx_epcm_entry *e);

#endif /* SGXEMU_CPU_PAGING_H */
