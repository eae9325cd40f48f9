/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the leaf implementations in src/cpu/. Not part of the
 * processor's interface (that is cpu.h); nothing outside src/cpu/ and its
 * unit tests includes this file.
 *
 * Locking: cpu->lock guards the EPCM, cpu->ctl[], the enclave list, the
 * page maps and the MSRs; ctl->lock guards one enclave's running
 * measurement. Order: cpu->lock, then ctl->lock. Where the SDM says a leaf
 * faults because "another SGX instruction is using" a page or the SECS,
 * these locks serialise the two leaves instead (no spurious #GP for a
 * caller that raced), which is what a kernel that serialises per enclave
 * sees on hardware too.
 */
#ifndef SGXEMU_CPU_INTERNAL_H
#define SGXEMU_CPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "cpu/sigstruct.h"

/* Architectural size of the defined TCS fields (EDBGRD/EDBGWR limit). */
#define SGX_TCS_LIMIT		72
/* Size of GPRSGX at the end of every SSA frame. */
#define SGX_GPRSGX_SIZE		184
/* log2 of the largest enclave in 32-bit mode (CPUID.(12H,0):EDX[7:0]). */
#define SGX_MAX_ENCLAVE_SIZE_32	31
/* Default log2 of the largest enclave in 64-bit mode (64 GiB exclusive). */
#define SGX_MAX_ENCLAVE_SIZE_64	47

/* Every leaf that makes an EPCM entry valid: the page holds data now. */
static inline void sgx_epc_set_used(struct sgx_cpu *cpu, long index)
{
	cpu->epc_used[index] = 1;
}

static inline bool sgx_aligned(const void *p, uintptr_t align)
{
	return ((uintptr_t)p & (align - 1)) == 0;
}

static inline bool sgx_all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t acc = 0;

	for (size_t i = 0; i < n; i++)
		acc |= b[i];
	return acc == 0;
}

static inline bool sgx_canonical(uint64_t addr)
{
	/* 48-bit linear addresses: bits 63:47 all equal. */
	return (uint64_t)((int64_t)(addr << 16) >> 16) == addr;
}

/* XSAVE area size (non-compacted) needed for the features in @xfrm. */
uint32_t sgx_xsave_size(uint64_t xfrm);
/* XFRM values XSETBV would accept for XCR0 (ignoring what is supported). */
bool sgx_xfrm_legal(uint64_t xfrm);

/* Bytes of MISC region that MISCSELECT selects (EXINFO: 16). */
uint32_t sgx_misc_size(uint32_t miscselect);
/* Smallest SSA frame, in bytes: XSAVE(XFRM) + MISC + GPRSGX. */
uint64_t sgx_ssa_frame_min(uint64_t xfrm, uint32_t miscselect);

/* IA32_SGXLEPUBKEYHASH0..3 as a 32-byte MRSIGNER-format hash. */
void sgx_lehash_bytes(const struct sgx_cpu *cpu, uint8_t hash[32]);
/* True when MRSIGNER @hash equals IA32_SGXLEPUBKEYHASH0..3. */
bool sgx_lehash_matches(const struct sgx_cpu *cpu, const uint8_t hash[32]);

/*
 * The RSA core of SIGSTRUCT verification, on raw little-endian operands
 * (exposed so the raw known-answer vectors can be checked on their own):
 * s^3 mod n must equal the EMSA-PKCS1-v1_5 SHA-256 encoding of @digest and
 * Q1/Q2 must be the quotients the SDM defines. 0 or SGX_INVALID_SIGNATURE.
 */
int sgx_rsa3072_verify(const uint8_t n_le[SGX_MODULUS_SIZE],
		       const uint8_t s_le[SGX_MODULUS_SIZE],
		       const uint8_t q1_le[SGX_MODULUS_SIZE],
		       const uint8_t q2_le[SGX_MODULUS_SIZE],
		       const uint8_t digest[32],
		       uint8_t padding[SGX_PKCS1_PADDING_SIZE]);

/*
 * SECINFO.FLAGS bits that are reserved for the SGX2 leaves (EMODPR, EMODT,
 * EACCEPT, EACCEPTCOPY, EMODPE): 7:6 and 63:16. PENDING, MODIFIED and PR
 * are fields there, not reserved.
 */
#define SGX_SECINFO_SGX2_RESERVED \
	(~(SGX_SECINFO_PERM_MASK | SGX_SECINFO_PENDING | SGX_SECINFO_MODIFIED | \
	   SGX_SECINFO_PR | SGX_SECINFO_PT_MASK))

/* True when the SECINFO at @si has reserved bits or bytes set. */
static inline bool sgx_secinfo_sgx2_reserved(const struct sgx_secinfo *si)
{
	return (si->flags & SGX_SECINFO_SGX2_RESERVED) ||
	       !sgx_all_zero(si->reserved, sizeof(si->reserved));
}

/* Drop an enclave's hidden state (EREMOVE of its SECS, cpu teardown). */
void sgx_encl_ctl_free(struct sgx_encl_ctl *ctl);
/* EREMOVE of the invalid page @index: the end of the lost enclave whose
 * SECS was there, if any (power.c). Caller holds cpu->lock. */
void sgx_power_lost_free(struct sgx_cpu *cpu, long index);
/* Return once the platform is not asleep (power.c). */
void sgx_power_wait_awake(struct sgx_cpu *cpu);

#endif /* SGXEMU_CPU_INTERNAL_H */
