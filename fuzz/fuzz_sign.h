/* SPDX-License-Identifier: MIT */
/*
 * A signer for the harnesses that need SIGSTRUCTs EINIT accepts: one
 * RSA-3072 key with e = 3, made at start-up (OpenSSL's key generation),
 * and signing with OpenSSL's RSA plus BIGNUM for Q1/Q2, so nothing of the
 * code under test decides what a valid signature is.
 */
#ifndef SGXEMU_FUZZ_SIGN_H
#define SGXEMU_FUZZ_SIGN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "sgxemu/arch.h"

static EVP_PKEY *fuzz_key;

static inline void fuzz_sign_init(void)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	BIGNUM *e = BN_new();

	if (!c || !e || !BN_set_word(e, 3) || EVP_PKEY_keygen_init(c) <= 0 ||
	    EVP_PKEY_CTX_set_rsa_keygen_bits(c, 3072) <= 0 ||
	    EVP_PKEY_CTX_set1_rsa_keygen_pubexp(c, e) <= 0 ||
	    EVP_PKEY_generate(c, &fuzz_key) <= 0) {
		fprintf(stderr, "fuzz: cannot make an RSA-3072 key\n");
		abort();
	}
	BN_free(e);
	EVP_PKEY_CTX_free(c);
}

/* Sign bytes [0,128) || [900,1028); fill modulus, signature, Q1, Q2. */
static inline void fuzz_sign(struct sgx_sigstruct *sig)
{
	uint8_t msg[256], s_be[384];
	size_t slen = sizeof(s_be);
	BIGNUM *n = NULL, *s, *q1 = BN_new(), *q2 = BN_new(), *t = BN_new();
	BN_CTX *bctx = BN_CTX_new();
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	sig->exponent = 3;
	memcpy(msg, &sig->header, 128);
	memcpy(msg + 128, &sig->body, 128);
	if (!EVP_PKEY_get_bn_param(fuzz_key, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, fuzz_key) != 1 ||
	    EVP_DigestSign(md, s_be, &slen, msg, sizeof(msg)) != 1)
		abort();
	s = BN_bin2bn(s_be, (int)slen, NULL);
	if (!s || !BN_sqr(t, s, bctx) || !BN_div(q1, NULL, t, n, bctx) ||
	    !BN_mul(t, t, s, bctx) || !BN_mul(q2, q1, s, bctx) ||
	    !BN_mul(q2, q2, n, bctx) || !BN_sub(t, t, q2) ||
	    !BN_div(q2, NULL, t, n, bctx) ||
	    BN_bn2lebinpad(n, sig->modulus, 384) != 384 ||
	    BN_bn2lebinpad(s, sig->signature, 384) != 384 ||
	    BN_bn2lebinpad(q1, sig->q1, 384) != 384 ||
	    BN_bn2lebinpad(q2, sig->q2, 384) != 384)
		abort();
	BN_free(n);
	BN_free(s);
	BN_free(q1);
	BN_free(q2);
	BN_free(t);
	BN_CTX_free(bctx);
	EVP_MD_CTX_free(md);
}

/*
 * fuzz_sign() behind a small direct-mapped cache keyed by the signed
 * bytes: a private-key operation costs about a millisecond, and the
 * fuzzer repeats the same signed bytes with other operands a lot.
 */
static inline void fuzz_sign_cached(struct sgx_sigstruct *sig)
{
	static struct {
		uint8_t msg[256];
		uint8_t tail[4 * 384];	/* modulus, signature, Q1, Q2 */
		bool used;
	} cache[64];
	uint8_t msg[256], h[32];
	unsigned slot;

	memcpy(msg, &sig->header, 128);
	memcpy(msg + 128, &sig->body, 128);
	if (!EVP_Digest(msg, sizeof(msg), h, NULL, EVP_sha256(), NULL))
		abort();
	slot = h[0] % 64;
	if (cache[slot].used && !memcmp(cache[slot].msg, msg, sizeof(msg))) {
		memcpy(sig->modulus, cache[slot].tail, 384);
		sig->exponent = 3;
		memcpy(sig->signature, cache[slot].tail + 384, 384);
		memcpy(sig->q1, cache[slot].tail + 768, 384);
		memcpy(sig->q2, cache[slot].tail + 1152, 384);
		return;
	}
	fuzz_sign(sig);
	memcpy(cache[slot].msg, msg, sizeof(msg));
	memcpy(cache[slot].tail, sig->modulus, 384);
	memcpy(cache[slot].tail + 384, sig->signature, 384);
	memcpy(cache[slot].tail + 768, sig->q1, 384);
	memcpy(cache[slot].tail + 1152, sig->q2, 384);
	cache[slot].used = true;
}

/* The fixed header fields of a SIGSTRUCT; body and key left to the caller. */
static inline void fuzz_sigstruct_header(struct sgx_sigstruct *sig)
{
	static const uint8_t h1[16] = SGX_SIGSTRUCT_HEADER;
	static const uint8_t h2[16] = SGX_SIGSTRUCT_HEADER2;

	memset(sig, 0, sizeof(*sig));
	memcpy(sig->header.header, h1, 16);
	memcpy(sig->header.header2, h2, 16);
	sig->header.date = 0x20261203;
	sig->exponent = 3;
}

/* MRSIGNER of fuzz_key: SHA-256 of the little-endian modulus. */
static inline void fuzz_mrsigner(uint8_t out[32])
{
	struct sgx_sigstruct sig;

	fuzz_sigstruct_header(&sig);
	fuzz_sign(&sig);
	if (!EVP_Digest(sig.modulus, sizeof(sig.modulus), out, NULL,
			EVP_sha256(), NULL))
		abort();
}

#endif /* SGXEMU_FUZZ_SIGN_H */
