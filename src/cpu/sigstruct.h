/* SPDX-License-Identifier: MIT */
/*
 * SIGSTRUCT verification as EINIT performs it (sgx-facts.md §3.1, §3.2 steps
 * 4 and 6), shared by EINIT and `sgxemu dump`.
 */
#ifndef SGXEMU_CPU_SIGSTRUCT_H
#define SGXEMU_CPU_SIGSTRUCT_H

#include <stdint.h>

#include "sgxemu/arch.h"

#define SGX_PKCS1_PADDING_SIZE	352

/*
 * Header constants, vendor, exponent and reserved bytes:
 * 0 or SGX_INVALID_SIG_STRUCT.
 */
int sgx_sigstruct_check_fields(const struct sgx_sigstruct *sig);

/*
 * RSA-3072 (e = 3) PKCS#1 v1.5 SHA-256 signature over bytes [0,128) and
 * [900,1028), plus the Q1/Q2 consistency checks: 0 or SGX_INVALID_SIGNATURE.
 * On success, @padding (if not NULL) receives the top 352 bytes of the
 * encoded message, which EINIT keeps for key derivation.
 */
int sgx_sigstruct_verify_signature(const struct sgx_sigstruct *sig,
				   uint8_t padding[SGX_PKCS1_PADDING_SIZE]);

/* SHA-256 of the digest input: bytes [0,128) || [900,1028). */
void sgx_sigstruct_digest(const struct sgx_sigstruct *sig, uint8_t out[32]);

/* MRSIGNER: SHA-256 of the little-endian modulus as stored. */
void sgx_sigstruct_mrsigner(const struct sgx_sigstruct *sig, uint8_t out[32]);

#endif /* SGXEMU_CPU_SIGSTRUCT_H */
