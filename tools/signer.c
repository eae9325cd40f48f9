/* SPDX-License-Identifier: MIT */
/*
 * SIGSTRUCT signing with OpenSSL 3's EVP_PKEY interface (the RSA_* calls are
 * deprecated there). The arithmetic SGX needs besides the signature, Q1 and
 * Q2, is done with BIGNUM. All big numbers in a SIGSTRUCT are little-endian
 * and exactly 384 bytes long.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "cli.h"
#include "cpu/sigstruct.h"
#include "signer.h"

#define SGX_RSA_BITS	3072
#define SGX_RSA_E	3

EVP_PKEY *signer_load_key(const char *path)
{
	EVP_PKEY *key = NULL;
	BIGNUM *e = NULL;
	FILE *f;
	int bits;

	f = fopen(path, "r");
	if (!f) {
		cli_error("cannot open key %s: %s", path, strerror(errno));
		return NULL;
	}
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!key) {
		char what[512];

		snprintf(what, sizeof(what),
			 "cannot read a PEM private key from %s", path);
		cli_error_crypto(what);
		return NULL;
	}
	if (!EVP_PKEY_is_a(key, "RSA")) {
		cli_error("key %s is not an RSA key (SGX needs RSA-3072, e=3)",
			  path);
		goto fail;
	}
	bits = EVP_PKEY_get_bits(key);
	if (bits != SGX_RSA_BITS) {
		cli_error("key %s is %d-bit RSA; SGX needs a 3072-bit key",
			  path, bits);
		goto fail;
	}
	if (!EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e)) {
		cli_error_crypto("cannot read the key's public exponent");
		goto fail;
	}
	if (!BN_is_word(e, SGX_RSA_E)) {
		char *dec = BN_bn2dec(e);

		cli_error("key %s has public exponent %s; SGX needs e=3",
			  path, dec ? dec : "?");
		OPENSSL_free(dec);
		goto fail;
	}
	BN_free(e);
	return key;
fail:
	BN_free(e);
	EVP_PKEY_free(key);
	return NULL;
}

/* RSASSA-PKCS1-v1_5 with SHA-256 over the SIGSTRUCT digest, big-endian. */
static int rsa_sign_digest(EVP_PKEY *key, const uint8_t digest[32],
			   uint8_t sig_be[SGX_MODULUS_SIZE])
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key, NULL);
	size_t len = SGX_MODULUS_SIZE;
	int ok;

	ok = ctx && EVP_PKEY_sign_init(ctx) > 0 &&
	     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0 &&
	     EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) > 0 &&
	     EVP_PKEY_sign(ctx, sig_be, &len, digest, 32) > 0 &&
	     len == SGX_MODULUS_SIZE;
	EVP_PKEY_CTX_free(ctx);
	if (!ok) {
		cli_error_crypto("RSA signing failed");
		return -1;
	}
	return 0;
}

/*
 * Q1 = floor(s^2 / n), Q2 = floor((s^3 - Q1*s*n) / n) = floor(s * (s^2 mod
 * n) / n): the quotients that let the processor check s^3 mod n without a
 * division (sgx-facts.md §1.12, §3.1). Both are below n, so they fit in 384
 * bytes; they are written zero-padded to the full width, which is what the
 * processor reads (a shorter big-endian string reversed in place would be a
 * different number).
 */
static int compute_q1_q2(const BIGNUM *s, const BIGNUM *n,
			 uint8_t q1_le[SGX_MODULUS_SIZE],
			 uint8_t q2_le[SGX_MODULUS_SIZE])
{
	BN_CTX *bn = BN_CTX_new();
	BIGNUM *q1 = BN_new(), *r = BN_new(), *q2 = BN_new();
	int ok;

	ok = bn && q1 && r && q2 &&
	     BN_sqr(q1, s, bn) &&
	     BN_div(q1, r, q1, n, bn) &&
	     BN_mul(q2, s, r, bn) &&
	     BN_div(q2, NULL, q2, n, bn) &&
	     BN_bn2lebinpad(q1, q1_le, SGX_MODULUS_SIZE) == SGX_MODULUS_SIZE &&
	     BN_bn2lebinpad(q2, q2_le, SGX_MODULUS_SIZE) == SGX_MODULUS_SIZE;
	BN_free(q1);
	BN_free(r);
	BN_free(q2);
	BN_CTX_free(bn);
	if (!ok) {
		cli_error_crypto("computing Q1/Q2 failed");
		return -1;
	}
	return 0;
}

int signer_sign(EVP_PKEY *key, struct sgx_sigstruct *sig)
{
	uint8_t digest[32], sig_be[SGX_MODULUS_SIZE];
	BIGNUM *n = NULL, *s = NULL;
	int ret = -1;

	if (!EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    BN_bn2lebinpad(n, sig->modulus, SGX_MODULUS_SIZE) !=
	    SGX_MODULUS_SIZE) {
		cli_error_crypto("cannot read the key's modulus");
		goto out;
	}
	sig->exponent = SGX_RSA_E;

	/* The same digest the processor recomputes at EINIT. */
	sgx_sigstruct_digest(sig, digest);
	if (rsa_sign_digest(key, digest, sig_be))
		goto out;
	s = BN_bin2bn(sig_be, SGX_MODULUS_SIZE, NULL);
	if (!s || BN_bn2lebinpad(s, sig->signature, SGX_MODULUS_SIZE) !=
	    SGX_MODULUS_SIZE) {
		cli_error_crypto("cannot convert the signature");
		goto out;
	}
	ret = compute_q1_q2(s, n, sig->q1, sig->q2);
out:
	BN_free(n);
	BN_free(s);
	return ret;
}
