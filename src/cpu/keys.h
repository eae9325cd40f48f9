/* SPDX-License-Identifier: MIT */
/*
 * Key derivation: the keys EGETKEY returns, the REPORT key EREPORT MACs
 * with, and the launch key EINIT checks an EINITTOKEN with.
 *
 * Hardware derives keys from fused root secrets with an undocumented KDF.
 * sgxemu uses the construction Intel's SDK simulator uses (sgx-facts.md
 * §5.2): key = AES-128-CMAC(root[KEYNAME], dd), where dd is a per-key-name
 * record of exactly the inputs the SDM's key-dependency table lists (§5.1).
 * Two inputs of that table are not in dd, and lose nothing by it:
 * SEAL_FUSES is the root key itself, and PADDING is the PKCS#1 padding of a
 * SIGSTRUCT signature, a constant for every SIGSTRUCT EINIT accepts.
 * With the simulator's constants as root secrets the keys equal the
 * simulator's, which the unit tests check against its known answers.
 */
#ifndef SGXEMU_CPU_KEYS_H
#define SGXEMU_CPU_KEYS_H

#include <stdint.h>

#include "sgxemu/arch.h"

#define SGX_NR_KEYNAMES		5

/* The platform's root secrets and identity ("fuses" and per-boot values). */
struct sgx_platform_keys {
	uint8_t root[SGX_NR_KEYNAMES][SGX_KEY_SIZE];	/* by KEYNAME */
	uint8_t owner_epoch[16];
	uint8_t cpusvn[SGX_CPUSVN_SIZE];		/* current CPUSVN */
	uint8_t report_keyid[SGX_KEYID_SIZE];		/* CR_REPORT_KEYID */
};

/* The enclave identity a derivation reads (from the SECS and its hidden state). */
struct sgx_key_identity {
	struct sgx_attributes attributes;
	uint32_t miscselect;
	uint8_t  mrenclave[SGX_HASH_SIZE];
	uint8_t  mrsigner[SGX_HASH_SIZE];
	uint16_t isvprodid;
	uint16_t isvsvn;
	uint16_t config_svn;
	uint8_t  config_id[64];
	uint8_t  isvfamilyid[16];
	uint8_t  isvextprodid[16];
};

/* The Intel SDK simulator's constants (sgx-facts.md §5.2), for tests. */
void sgx_keys_simulator_defaults(struct sgx_platform_keys *keys);

/*
 * CPUSVN order: sgxemu treats the 16 bytes as 16 component SVNs, so a
 * CPUSVN is "not newer" than another when no byte is greater. Returns true
 * when @req may be used on a platform whose current CPUSVN is @current.
 */
int sgx_cpusvn_supported(const uint8_t current[SGX_CPUSVN_SIZE],
			 const uint8_t req[SGX_CPUSVN_SIZE]);

/*
 * EGETKEY's checks on the request and its derivation, given an enclave's
 * identity: returns 0 with @key filled, SGX_GP for reserved bits or KSS
 * policies without KSS, or an SGX code (SGX_INVALID_KEYNAME,
 * SGX_INVALID_ATTRIBUTE, SGX_INVALID_CPUSVN, SGX_INVALID_ISVSVN).
 * Memory-operand checks are the caller's (they need the EPCM).
 */
int sgx_derive_key(const struct sgx_platform_keys *keys,
		   const struct sgx_key_identity *id,
		   const struct sgx_keyrequest *req,
		   uint8_t key[SGX_KEY_SIZE]);

/* The REPORT key of the enclave described by @ti, for key id @keyid. */
int sgx_report_key(const struct sgx_platform_keys *keys,
		   const struct sgx_targetinfo *ti,
		   const uint8_t keyid[SGX_KEYID_SIZE],
		   uint8_t key[SGX_KEY_SIZE]);

/*
 * EREPORT's data: fills @report's body from @id and @report_data, KEYID
 * from the platform, and MACs the body with the REPORT key of @ti.
 */
int sgx_build_report(const struct sgx_platform_keys *keys,
		     const struct sgx_key_identity *id,
		     const struct sgx_targetinfo *ti,
		     const uint8_t report_data[SGX_REPORT_DATA_SIZE],
		     struct sgx_report *report);

/*
 * The launch key EINIT derives to check an EINITTOKEN's MAC
 * (sgx-facts.md §3.2 step 18, §5.4): inputs from the token and the
 * launch-control MSRs (@le_hash, the MRSIGNER of the launch enclave).
 */
int sgx_launch_key(const struct sgx_platform_keys *keys,
		   const struct sgx_einittoken *token,
		   const uint8_t le_hash[SGX_HASH_SIZE],
		   uint8_t key[SGX_KEY_SIZE]);

/* AES-128-CMAC (RFC 4493) through OpenSSL. Returns 0, or -1 on failure. */
int sgx_cmac(const uint8_t key[SGX_KEY_SIZE], const void *data, size_t len,
	     uint8_t mac[SGX_MAC_SIZE]);

#endif /* SGXEMU_CPU_KEYS_H */
