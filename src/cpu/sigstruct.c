/* SPDX-License-Identifier: MIT */
/*
 * SIGSTRUCT checks as EINIT performs them (sgx-facts.md §1.12, §3.1, §3.2
 * steps 4 and 6): fixed header fields, then RSA-3072 with e = 3 over the
 * signed bytes, verified the way the hardware does — s^3 mod n against the
 * PKCS#1 v1.5 encoding, with the signer-supplied quotients Q1 and Q2 that
 * let hardware avoid division required to be exactly right.
 */
#include <string.h>

#include <openssl/bn.h>
#include <openssl/evp.h>

#include "cpu/internal.h"

static const uint8_t sgx_header[16] = SGX_SIGSTRUCT_HEADER;
static const uint8_t sgx_header2[16] = SGX_SIGSTRUCT_HEADER2;

/* DigestInfo prefix of a SHA-256 digest (RFC 8017 §9.2 note 1). */
static const uint8_t sha256_der_prefix[19] = {
	0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
	0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
};

int sgx_sigstruct_check_fields(const struct sgx_sigstruct *sig)
{
	if (memcmp(sig->header.header, sgx_header, sizeof(sgx_header)) ||
	    (sig->header.vendor != 0 &&
	     sig->header.vendor != SGX_SIGSTRUCT_VENDOR_INTEL) ||
	    memcmp(sig->header.header2, sgx_header2, sizeof(sgx_header2)) ||
	    sig->exponent != 3 ||
	    !sgx_all_zero(sig->header.reserved1, sizeof(sig->header.reserved1)) ||
	    !sgx_all_zero(sig->body.reserved2, sizeof(sig->body.reserved2)) ||
	    !sgx_all_zero(sig->body.reserved3, sizeof(sig->body.reserved3)) ||
	    !sgx_all_zero(sig->reserved4, sizeof(sig->reserved4)))
		return SGX_INVALID_SIG_STRUCT;
	return 0;
}

/* SHA-256 of one or two byte ranges (zeros if libcrypto fails). */
static void sha256_parts(uint8_t out[32], const void *a, size_t alen,
			 const void *b, size_t blen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 32;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(ctx, a, alen) ||
	    (blen && !EVP_DigestUpdate(ctx, b, blen)) ||
	    !EVP_DigestFinal_ex(ctx, out, &len))
		memset(out, 0, 32);
	EVP_MD_CTX_free(ctx);
}

void sgx_sigstruct_digest(const struct sgx_sigstruct *sig, uint8_t out[32])
{
	sha256_parts(out, &sig->header, sizeof(sig->header),
		     &sig->body, sizeof(sig->body));
}

void sgx_sigstruct_mrsigner(const struct sgx_sigstruct *sig, uint8_t out[32])
{
	sha256_parts(out, sig->modulus, sizeof(sig->modulus), NULL, 0);
}

/*
 * Hardware computes s^3 mod n without dividing, using
 *   Q1 = floor(s^2 / n)   and   Q2 = floor((s^3 - Q1*s*n) / n),
 * so s^3 mod n = s^3 - Q1*s*n - Q2*n. We recompute both quotients and demand
 * equality (a SIGSTRUCT with wrong Q1/Q2 fails on hardware too), and take
 * the remainder of the second division as s^3 mod n. The result, as a
 * 384-byte big-endian string, must be 00 01 FF..FF 00 DigestInfo digest.
 */
int sgx_rsa3072_verify(const uint8_t n_le[SGX_MODULUS_SIZE],
		       const uint8_t s_le[SGX_MODULUS_SIZE],
		       const uint8_t q1_le[SGX_MODULUS_SIZE],
		       const uint8_t q2_le[SGX_MODULUS_SIZE],
		       const uint8_t digest[32],
		       uint8_t padding[SGX_PKCS1_PADDING_SIZE])
{
	uint8_t em[SGX_MODULUS_SIZE], expect[SGX_MODULUS_SIZE];
	int ret = SGX_INVALID_SIGNATURE;
	BN_CTX *bctx = BN_CTX_new();
	BIGNUM *n, *s, *q1, *q2, *s2, *s3, *t, *q, *r;

	if (!bctx)
		return ret;
	BN_CTX_start(bctx);
	n = BN_CTX_get(bctx);
	s = BN_CTX_get(bctx);
	q1 = BN_CTX_get(bctx);
	q2 = BN_CTX_get(bctx);
	s2 = BN_CTX_get(bctx);
	s3 = BN_CTX_get(bctx);
	t = BN_CTX_get(bctx);
	q = BN_CTX_get(bctx);
	r = BN_CTX_get(bctx);
	if (!r)
		goto out;
	if (!BN_lebin2bn(n_le, SGX_MODULUS_SIZE, n) ||
	    !BN_lebin2bn(s_le, SGX_MODULUS_SIZE, s) ||
	    !BN_lebin2bn(q1_le, SGX_MODULUS_SIZE, q1) ||
	    !BN_lebin2bn(q2_le, SGX_MODULUS_SIZE, q2))
		goto out;
	/* A zero or even modulus is no RSA key; s must be reduced mod n. */
	if (BN_is_zero(n) || !BN_is_odd(n) || BN_cmp(s, n) >= 0)
		goto out;

	/* Q1 */
	if (!BN_sqr(s2, s, bctx) || !BN_div(q, NULL, s2, n, bctx))
		goto out;
	if (BN_cmp(q, q1))
		goto out;
	/* Q2, and s^3 mod n as the remainder */
	if (!BN_mul(s3, s2, s, bctx) || !BN_mul(t, q1, s, bctx) ||
	    !BN_mul(t, t, n, bctx) || !BN_sub(t, s3, t) ||
	    !BN_div(q, r, t, n, bctx))
		goto out;
	if (BN_cmp(q, q2))
		goto out;
	if (BN_bn2binpad(r, em, sizeof(em)) != (int)sizeof(em))
		goto out;

	expect[0] = 0x00;
	expect[1] = 0x01;
	memset(expect + 2, 0xFF, SGX_PKCS1_PADDING_SIZE - 2 - 1 - sizeof(sha256_der_prefix));
	expect[SGX_PKCS1_PADDING_SIZE - 1 - sizeof(sha256_der_prefix)] = 0x00;
	memcpy(expect + SGX_PKCS1_PADDING_SIZE - sizeof(sha256_der_prefix),
	       sha256_der_prefix, sizeof(sha256_der_prefix));
	memcpy(expect + SGX_PKCS1_PADDING_SIZE, digest, 32);
	if (memcmp(em, expect, sizeof(em)))
		goto out;
	if (padding)
		memcpy(padding, em, SGX_PKCS1_PADDING_SIZE);
	ret = 0;
out:
	BN_CTX_end(bctx);
	BN_CTX_free(bctx);
	return ret;
}

int sgx_sigstruct_verify_signature(const struct sgx_sigstruct *sig,
				   uint8_t padding[SGX_PKCS1_PADDING_SIZE])
{
	uint8_t digest[32];

	sgx_sigstruct_digest(sig, digest);
	return sgx_rsa3072_verify(sig->modulus, sig->signature, sig->q1,
				  sig->q2, digest, padding);
}
