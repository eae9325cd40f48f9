// SPDX-License-Identifier: MIT
/* ECDSA P-256 in the quote's raw encodings (see ecdsa.h). */
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>

#include "attest/ecdsa.h"

int sgx_ecdsa_sign(EVP_PKEY *key, const void *msg, size_t len, uint8_t sig[64])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char der[80];
	const unsigned char *p = der;
	size_t dlen = sizeof(der);
	ECDSA_SIG *s = NULL;
	int ok;

	ok = md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	     EVP_DigestSign(md, der, &dlen, msg, len) == 1 &&
	     (s = d2i_ECDSA_SIG(NULL, &p, (long)dlen)) != NULL &&
	     BN_bn2binpad(ECDSA_SIG_get0_r(s), sig, 32) == 32 &&
	     BN_bn2binpad(ECDSA_SIG_get0_s(s), sig + 32, 32) == 32;
	ECDSA_SIG_free(s);
	EVP_MD_CTX_free(md);
	return ok ? 0 : -1;
}

int sgx_ecdsa_verify(EVP_PKEY *key, const void *msg, size_t len,
		     const uint8_t sig[64])
{
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *r = BN_bin2bn(sig, 32, NULL), *ss = BN_bin2bn(sig + 32, 32, NULL);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *der = NULL;
	int dlen, ok = 0;

	if (!s || !r || !ss || !md || !ECDSA_SIG_set0(s, r, ss)) {
		BN_free(r);
		BN_free(ss);
		goto out;
	}
	dlen = i2d_ECDSA_SIG(s, &der);
	ok = dlen > 0 &&
	     EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
	     EVP_DigestVerify(md, der, (size_t)dlen, msg, len) == 1;
out:
	OPENSSL_free(der);
	ECDSA_SIG_free(s);
	EVP_MD_CTX_free(md);
	return ok;
}

/* An EC key from parameters; @priv may be NULL for a public key. */
static EVP_PKEY *p256_fromdata(const uint8_t pub[65], const BIGNUM *priv)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *key = NULL;

	if (bld && ctx &&
	    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME,
					    "prime256v1", 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 65) &&
	    (!priv || OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, priv)) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL &&
	    EVP_PKEY_fromdata_init(ctx) == 1 &&
	    EVP_PKEY_fromdata(ctx, &key, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY,
			      params) != 1)
		key = NULL;
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	EVP_PKEY_CTX_free(ctx);
	return key;
}

EVP_PKEY *sgx_p256_from_raw(const uint8_t pub[64])
{
	EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
	uint8_t oct[65];
	EVP_PKEY *key = NULL;

	oct[0] = 0x04;
	memcpy(oct + 1, pub, 64);
	/* oct2point checks that the point is on the curve. */
	if (pt && EC_POINT_oct2point(g, pt, oct, sizeof(oct), NULL) == 1)
		key = p256_fromdata(oct, NULL);
	EC_POINT_free(pt);
	EC_GROUP_free(g);
	return key;
}

int sgx_p256_to_raw(EVP_PKEY *key, uint8_t pub[64])
{
	uint8_t oct[65];
	size_t n = 0;

	if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
					    oct, sizeof(oct), &n) != 1 ||
	    n != 65 || oct[0] != 0x04)
		return -1;
	memcpy(pub, oct + 1, 64);
	return 0;
}

EVP_PKEY *sgx_p256_from_seed(const uint8_t seed[40])
{
	EC_GROUP *g = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
	BN_CTX *bn = BN_CTX_new();
	BIGNUM *s = BN_bin2bn(seed, 40, NULL), *nm1 = BN_new(), *d = BN_new();
	EC_POINT *pt = g ? EC_POINT_new(g) : NULL;
	uint8_t oct[65];
	EVP_PKEY *key = NULL;

	if (g && bn && s && nm1 && d && pt &&
	    BN_copy(nm1, EC_GROUP_get0_order(g)) && BN_sub_word(nm1, 1) &&
	    BN_mod(d, s, nm1, bn) && BN_add_word(d, 1) &&
	    EC_POINT_mul(g, pt, d, NULL, NULL, bn) &&
	    EC_POINT_point2oct(g, pt, POINT_CONVERSION_UNCOMPRESSED, oct,
			       sizeof(oct), bn) == sizeof(oct))
		key = p256_fromdata(oct, d);
	BN_clear_free(d);
	BN_clear_free(s);
	BN_free(nm1);
	EC_POINT_free(pt);
	BN_CTX_free(bn);
	EC_GROUP_free(g);
	return key;
}
