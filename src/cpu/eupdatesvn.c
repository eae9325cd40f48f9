// SPDX-License-Identifier: MIT
/*
 * EUPDATESVN (ENCLS[0x18]; Intel document 648682, "Runtime Microcode
 * Updates with Intel SGX"; Linux 6.19's sgx_update_svn): after a runtime
 * microcode update, bring CPUSVN up to the loaded microcode's security
 * version without a reboot. Hardware assumes every enclave and every key
 * derived under the old microcode may be compromised, so the leaf works
 * only on an EPC with no valid page, and it regenerates the paging key
 * (CR_BASE_PK), which makes any page written back before it unloadable.
 *
 * The order of the checks is the instruction's: the EPC's state, then the
 * entropy for the new key (RDSEED), then the commit. The commit happens
 * even when CPUSVN does not change: SGX_NO_UPDATE (CF=1 on hardware, not
 * ZF) is information, not an error.
 *
 * Hardware answers SGX_LOCKFAIL while another ENCLS touches the EPC;
 * here the leaf takes the processor's lock instead and waits, so that
 * code is never returned (the kernel treats it as EIO in any case).
 */
#include <limits.h>
#include <string.h>

#include <openssl/rand.h>

#include "cpu/internal.h"

/* CPUSVN order (keys.h): newer means no component lower, one higher. */
static bool svn_newer(const uint8_t cur[SGX_CPUSVN_SIZE],
		      const uint8_t ucode[SGX_CPUSVN_SIZE])
{
	return sgx_cpusvn_supported(ucode, cur) &&
	       memcmp(cur, ucode, SGX_CPUSVN_SIZE);
}

/* RDSEED into @key, or false when the injection says it fails. */
static bool rdseed(struct sgx_cpu *cpu, uint8_t key[16])
{
	unsigned n = atomic_load(&cpu->rdseed_failures);

	while (n) {
		if (n == UINT_MAX)
			return false;
		if (atomic_compare_exchange_weak(&cpu->rdseed_failures, &n, n - 1))
			return false;
	}
	return RAND_priv_bytes(key, 16) == 1;
}

/*
 * Any valid EPCM entry (cpu->lock held). Every leaf that makes a page
 * valid marks it used first, so only used pages need a look: the EPC of
 * a process that never built an enclave is skipped with one memchr, not
 * read entry by entry (262144 entries in the default 1 GiB EPC).
 */
static bool epc_has_valid_page(const struct sgx_cpu *cpu)
{
	const uint8_t *used = cpu->epc_used, *u;
	size_t i = 0;

	for (;;) {
		if (used) {
			u = memchr(used + i, 1, cpu->nr_pages - i);
			if (!u)
				return false;
			i = (size_t)(u - used);
		} else if (i >= cpu->nr_pages) {
			return false;
		}
		if (cpu->epcm[i].valid)
			return true;
		if (++i >= cpu->nr_pages)
			return false;
	}
}

int sgx_eupdatesvn(struct sgx_cpu *cpu)
{
	uint8_t key[16];
	int ret = 0;

	if (!cpu->config.eupdatesvn)
		return SGX_GP;		/* an undefined ENCLS leaf */

	pthread_mutex_lock(&cpu->lock);
	if (epc_has_valid_page(cpu)) {
		ret = SGX_EPC_NOT_READY;
		goto out;
	}
	if (!rdseed(cpu, key)) {
		ret = SGX_INSUFFICIENT_ENTROPY;
		goto out;
	}
	memcpy(cpu->paging_key, key, sizeof(key));
	cpu->paging_key_set = true;
	if (svn_newer(cpu->keys.cpusvn, cpu->ucode_cpusvn))
		memcpy(cpu->keys.cpusvn, cpu->ucode_cpusvn, SGX_CPUSVN_SIZE);
	else
		ret = SGX_NO_UPDATE;
out:
	pthread_mutex_unlock(&cpu->lock);
	OPENSSL_cleanse(key, sizeof(key));
	return ret;
}

void sgx_cpu_load_microcode(struct sgx_cpu *cpu,
			    const uint8_t svn[SGX_CPUSVN_SIZE])
{
	pthread_mutex_lock(&cpu->lock);
	memcpy(cpu->ucode_cpusvn, svn, SGX_CPUSVN_SIZE);
	pthread_mutex_unlock(&cpu->lock);
}
