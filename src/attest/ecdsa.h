/* SPDX-License-Identifier: MIT */
/*
 * ECDSA P-256 with SHA-256 in the encodings quotes use (raw r || s and
 * X || Y, big endian, 32 bytes each: attestation-facts.md §1.3), over
 * OpenSSL's EVP interface.
 */
#ifndef SGXEMU_ATTEST_ECDSA_H
#define SGXEMU_ATTEST_ECDSA_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

/* Sign @len bytes: 0 with @sig = r || s, or -1. */
int sgx_ecdsa_sign(EVP_PKEY *key, const void *msg, size_t len, uint8_t sig[64]);
/* 1 when @sig (r || s) is @key's signature of @msg, else 0. */
int sgx_ecdsa_verify(EVP_PKEY *key, const void *msg, size_t len,
		     const uint8_t sig[64]);
/* A public key from X || Y; NULL when it is not a point of P-256. */
EVP_PKEY *sgx_p256_from_raw(const uint8_t pub[64]);
/* X || Y of an EC P-256 key: 0 or -1. */
int sgx_p256_to_raw(EVP_PKEY *key, uint8_t pub[64]);
/*
 * The key pair whose private scalar is d = (S mod (n - 1)) + 1 for the
 * 320-bit big-endian seed @seed (FIPS 186-4 B.4.1, as Intel's PCE and QE
 * turn derived bytes into keys: §2.1). NULL on failure.
 */
EVP_PKEY *sgx_p256_from_seed(const uint8_t seed[40]);

#endif /* SGXEMU_ATTEST_ECDSA_H */
