/* SPDX-License-Identifier: MIT */
/*
 * RSA side of `sgxemu sign`: the SGX signing key and the fields of a
 * SIGSTRUCT that come from it (MODULUS, EXPONENT, SIGNATURE, Q1, Q2).
 */
#ifndef SGXEMU_TOOLS_SIGNER_H
#define SGXEMU_TOOLS_SIGNER_H

#include <openssl/evp.h>

#include "sgxemu/arch.h"

/*
 * Load a PEM private key and check that SGX can use it: RSA, 3072 bits,
 * public exponent 3. Returns NULL after one cli_error() line.
 */
EVP_PKEY *signer_load_key(const char *path);

/*
 * Fill MODULUS and EXPONENT from @key, then sign header and body (which the
 * caller has filled in) and store SIGNATURE, Q1 and Q2. Returns 0, or -1
 * after one cli_error() line.
 */
int signer_sign(EVP_PKEY *key, struct sgx_sigstruct *sig);

#endif /* SGXEMU_TOOLS_SIGNER_H */
