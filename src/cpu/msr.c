/* SPDX-License-Identifier: MIT */
/*
 * Launch-control MSRs IA32_SGXLEPUBKEYHASH0..3 (sgx-facts.md §1.18, §3.3).
 *
 * They hold the MRSIGNER that EINIT accepts without an EINITTOKEN. Reset
 * value: Intel's launch-enclave key hash. On a Flexible Launch Control part
 * the kernel may write them (Linux does so before every EINIT); once the
 * platform locks launch control (cpu->lc_locked) a write is #GP, as WRMSR
 * to a read-only MSR is.
 */
#include <string.h>

#include "cpu/internal.h"

static int lehash_slot(uint32_t msr)
{
	if (msr < MSR_IA32_SGXLEPUBKEYHASH0 || msr > MSR_IA32_SGXLEPUBKEYHASH3)
		return -1;
	return (int)(msr - MSR_IA32_SGXLEPUBKEYHASH0);
}

int sgx_wrmsr(struct sgx_cpu *cpu, uint32_t msr, uint64_t value)
{
	int slot = lehash_slot(msr);

	if (slot < 0 || cpu->lc_locked)
		return SGX_GP;
	pthread_mutex_lock(&cpu->lock);
	cpu->lepubkeyhash[slot] = value;
	pthread_mutex_unlock(&cpu->lock);
	return 0;
}

int sgx_rdmsr(const struct sgx_cpu *cpu, uint32_t msr, uint64_t *value)
{
	int slot = lehash_slot(msr);

	if (slot < 0)
		return SGX_GP;
	*value = cpu->lepubkeyhash[slot];
	return 0;
}

/*
 * MSR i holds bytes [8i, 8i+8) of the hash as a little-endian u64 (the
 * MRSIGNER byte order). Caller holds cpu->lock.
 */
void sgx_lehash_bytes(const struct sgx_cpu *cpu, uint8_t hash[32])
{
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			hash[8 * i + b] = (uint8_t)(cpu->lepubkeyhash[i] >> (8 * b));
}

bool sgx_lehash_matches(const struct sgx_cpu *cpu, const uint8_t hash[32])
{
	uint8_t msrs[32];

	sgx_lehash_bytes(cpu, msrs);
	return memcmp(msrs, hash, sizeof(msrs)) == 0;
}
