// SPDX-License-Identifier: MIT
/*
 * The QE3 and PCE roles (see attest.h): identities, key derivations, the
 * PCK certificate, and quote generation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "base/why.h"
#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "attest/quote.h"
#include "base/secrets.h"
#include "sgxemu/attest.h"

const uint8_t sgx_fmspc[6] = { 'S', 'G', 'X', 'E', 'M', 'U' };

static void label_hash(const char *label, uint8_t out[32])
{
	EVP_Digest(label, strlen(label), out, NULL, EVP_sha256(), NULL);
}

/* Both run with PROVISION_KEY, never DEBUG, like Intel's production AEs. */
static void ae_identity(struct sgx_key_identity *id, const char *name,
			uint16_t prodid, uint16_t svn)
{
	memset(id, 0, sizeof(*id));
	id->attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT |
			       SGX_ATTR_PROVISIONKEY;
	id->attributes.xfrm = 0x3;
	label_hash(name, id->mrenclave);
	label_hash("sgxemu architectural enclaves signer", id->mrsigner);
	id->isvprodid = prodid;
	id->isvsvn = svn;
}

void sgx_qe_identity(struct sgx_key_identity *id)
{
	ae_identity(id, "sgxemu quoting enclave (QE3 role), version 1",
		    SGX_QE_ISVPRODID, SGX_QE_ISVSVN);
}

void sgx_pce_identity(struct sgx_key_identity *id)
{
	ae_identity(id, "sgxemu provisioning certification enclave, version 1",
		    SGX_PCE_ISVPRODID, SGX_PCE_ISVSVN);
}

static void target_of(const struct sgx_key_identity *id, struct sgx_targetinfo *ti)
{
	memset(ti, 0, sizeof(*ti));
	memcpy(ti->measurement, id->mrenclave, 32);
	ti->attributes = id->attributes;
	ti->miscselect = id->miscselect;
}

/* EGETKEY as the AE would issue it, masks as Intel's AEs set them. */
static int ae_key(const struct sgx_platform_keys *keys,
		  const struct sgx_key_identity *id, uint16_t keyname,
		  const uint8_t cpusvn[16], uint16_t isvsvn, uint8_t key[16])
{
	struct sgx_keyrequest req;

	memset(&req, 0, sizeof(req));
	req.keyname = keyname;
	if (keyname == SGX_KEYNAME_SEAL)
		req.keypolicy = SGX_KEYPOLICY_MRSIGNER;
	if (cpusvn)
		memcpy(req.cpusvn, cpusvn, 16);
	req.isvsvn = isvsvn;
	req.attributemask.flags = ~SGX_ATTR_MODE64BIT;
	req.miscmask = 0xffffffff;
	return sgx_derive_key(keys, id, &req, key) ? -1 : 0;
}

/* Intel's AE KDF block: counter, label, zeros, output bits (BE). */
static void kdf_block(uint8_t blk[16], uint8_t counter, const char *label,
		      uint16_t bits)
{
	memset(blk, 0, 16);
	blk[0] = counter;
	memcpy(blk + 1, label, strlen(label));
	blk[14] = (uint8_t)(bits >> 8);
	blk[15] = (uint8_t)bits;
}

/* A P-256 key from three CMACs of @label under @key (320-bit seed). */
static EVP_PKEY *derive_p256(const uint8_t key[16], const char *label)
{
	uint8_t blk[16], out[48];
	EVP_PKEY *k = NULL;

	for (int c = 1; c <= 3; c++) {
		kdf_block(blk, (uint8_t)c, label, 320);
		if (sgx_cmac(key, blk, 16, out + 16 * (c - 1)))
			goto out;
	}
	k = sgx_p256_from_seed(out);
out:
	OPENSSL_cleanse(out, sizeof(out));
	return k;
}

static int derive_keys(struct sgx_attest *a)
{
	static const uint8_t zero[16];
	uint8_t key[16], blk[16];
	int ret = -1;

	/* QE_ID and the attestation key, from the QE's SEAL keys. */
	if (ae_key(&a->keys, &a->qe, SGX_KEYNAME_SEAL, NULL, 0, key))
		goto out;
	kdf_block(blk, 0, "QE_ID_DER", 128);
	if (sgx_cmac(key, blk, 16, a->qe_id))
		goto out;
	if (ae_key(&a->keys, &a->qe, SGX_KEYNAME_SEAL, a->keys.cpusvn,
		   SGX_QE_ISVSVN, key))
		goto out;
	a->att_key = derive_p256(key, "QE_ATT_DER");
	if (!a->att_key || sgx_p256_to_raw(a->att_key, a->att_pub))
		goto out;
	/* PPID and the PCK key, from the PCE's PROVISION keys. */
	if (ae_key(&a->keys, &a->pce, SGX_KEYNAME_PROVISION, NULL, 0, key) ||
	    sgx_cmac(key, zero, 16, a->pck_ext.ppid))
		goto out;
	if (ae_key(&a->keys, &a->pce, SGX_KEYNAME_PROVISION, a->keys.cpusvn,
		   SGX_PCE_ISVSVN, key))
		goto out;
	a->pck_key = derive_p256(key, "PAK_KEY_DER");
	ret = a->pck_key ? 0 : -1;
out:
	OPENSSL_cleanse(key, sizeof(key));
	return ret;
}

/*
 * Certification, as QE3 and PCE do it once per key: the QE's REPORT for
 * the PCE binds the attestation key (REPORTDATA = SHA-256(key || auth
 * data)), and the PCE signs that report body with the PCK key.
 */
static int certify(struct sgx_attest *a)
{
	uint8_t rd[64] = { 0 }, buf[96];
	struct sgx_report r;

	memcpy(buf, a->att_pub, 64);
	memcpy(buf + 64, a->auth, 32);
	if (!EVP_Digest(buf, sizeof(buf), rd, NULL, EVP_sha256(), NULL) ||
	    sgx_build_report(&a->keys, &a->qe, &a->pce_ti, rd, &r))
		return -1;
	a->qe_report = r.body;
	return sgx_ecdsa_sign(a->pck_key, &a->qe_report, sizeof(a->qe_report),
			      a->qe_sig);
}

int sgx_attest_open(struct sgx_attest *a, const char *secrets,
		    char *why, size_t whylen)
{
	return sgx_attest_open_at(a, secrets, NULL, why, whylen);
}

int sgx_attest_open_at(struct sgx_attest *a, const char *secrets,
		       const uint8_t cpusvn[16], char *why, size_t whylen)
{
	struct sgx_svn_state svn;
	char dir[4200];
	int ret;

	memset(a, 0, sizeof(*a));
	ret = sgx_secrets_load(secrets, &a->keys, why, whylen);
	if (!ret)
		ret = sgx_secrets_svn(secrets, &svn, why, whylen);
	if (ret)
		return ret;
	if (cpusvn)
		memcpy(a->keys.cpusvn, cpusvn, 16);
	/* The TCB level before the last update, for collateral that marks
	 * it out of date (a TCB recovery); the current one when none. */
	memcpy(a->prev_cpusvn, svn.previous, 16);
	if (!sgx_cpusvn_supported(a->keys.cpusvn, a->prev_cpusvn))
		memcpy(a->prev_cpusvn, a->keys.cpusvn, 16);
	ret = sgx_pki_dir(secrets, dir, sizeof(dir));
	if (ret)
		return sgx_fail(why, whylen, ret, "%s: name too long", secrets);
	ret = sgx_pki_open(dir, &a->pki, why, whylen);
	if (ret)
		return ret;
	sgx_qe_identity(&a->qe);
	sgx_pce_identity(&a->pce);
	target_of(&a->qe, &a->qe_ti);
	target_of(&a->pce, &a->pce_ti);
	for (int i = 0; i < 32; i++)
		a->auth[i] = (uint8_t)i;
	if (derive_keys(a)) {
		sgx_attest_close(a);
		return sgx_fail(why, whylen, -EIO, "attestation key derivation failed");
	}
	/* TCB type 0: the components are the CPUSVN's bytes. */
	memcpy(a->pck_ext.comp, a->keys.cpusvn, 16);
	memcpy(a->pck_ext.cpusvn, a->keys.cpusvn, 16);
	a->pck_ext.pcesvn = SGX_PCE_ISVSVN;
	memcpy(a->pck_ext.fmspc, sgx_fmspc, 6);
	ret = sgx_pki_pck_cert(&a->pki, a->pck_key, a->qe_id, &a->pck_ext, &a->pck,
			       why, whylen);
	if (ret) {
		sgx_attest_close(a);
		return ret;
	}
	if (sgx_pem_append(&a->cert_data, &a->cert_len, a->pck) ||
	    sgx_pem_append(&a->cert_data, &a->cert_len, a->pki.ca) ||
	    sgx_pem_append(&a->cert_data, &a->cert_len, a->pki.root) ||
	    certify(a)) {
		sgx_attest_close(a);
		return sgx_fail(why, whylen, -EIO, "cannot certify the attestation key");
	}
	a->cert_len++;		/* the NUL is part of type-5 data */
	return 0;
}

void sgx_attest_close(struct sgx_attest *a)
{
	EVP_PKEY_free(a->att_key);
	EVP_PKEY_free(a->pck_key);
	X509_free(a->pck);
	free(a->cert_data);
	sgx_pki_close(&a->pki);
	OPENSSL_cleanse(&a->keys, sizeof(a->keys));
	memset(a, 0, sizeof(*a));
}

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sgx_attest *ctx;
const uint8_t *(*sgx_attest_platform_cpusvn)(void);

/*
 * The CPUSVN the QE and PCE run at now: this process's platform's when it
 * has one (the hook; it may have taken a microcode update through
 * EUPDATESVN), else the secrets file's (another process may have taken
 * one since), unless SGXEMU_CPUSVN fixes it. False: keep what there is.
 */
static bool current_cpusvn(const char *path, uint8_t out[16])
{
	const uint8_t *p = sgx_attest_platform_cpusvn ?
			   sgx_attest_platform_cpusvn() : NULL;
	struct sgx_svn_state st;
	const char *env = getenv("SGXEMU_CPUSVN");

	if (p) {
		memcpy(out, p, 16);
		return true;
	}
	if ((env && *env) || sgx_secrets_svn(path, &st, NULL, 0))
		return false;
	memcpy(out, st.cpusvn, 16);
	return true;
}

int sgx_attest_get(struct sgx_attest **out, char *why, size_t whylen)
{
	struct sgx_attest *a;
	char path[4096];
	uint8_t svn[16];
	bool have;
	int ret = 0;

	pthread_mutex_lock(&ctx_lock);
	ret = sgx_secrets_path(path, sizeof(path));
	if (ret) {
		sgx_fail(why, whylen, 0, "platform secrets: no location (set HOME or "
		     "SGXEMU_SECRETS_FILE)");
		goto done;
	}
	/*
	 * After a TCB recovery the QE's keys, its attestation key and the
	 * PCK certificate are those of the new CPUSVN: a new context. The
	 * old one stays allocated, as other threads may still quote with it
	 * (one per update taken, a few a year on hardware).
	 */
	have = current_cpusvn(path, svn);
	if (ctx && (!have || !memcmp(ctx->keys.cpusvn, svn, 16)))
		goto done;
	a = calloc(1, sizeof(*a));
	if (!a) {
		ret = -ENOMEM;
		sgx_fail(why, whylen, 0, "out of memory");
		goto done;
	}
	ret = sgx_attest_open_at(a, path, have ? svn : NULL, why, whylen);
	if (ret)
		free(a);
	else
		ctx = a;
done:
	*out = ctx;
	pthread_mutex_unlock(&ctx_lock);
	return ret;
}

size_t sgx_attest_quote_size(const struct sgx_attest *a)
{
	return QUOTE_MIN_SIZE + sizeof(a->auth) + a->cert_len;
}

int sgx_attest_quote(const struct sgx_attest *a, const struct sgx_report *report,
		     uint8_t *q, char *why, size_t whylen)
{
	uint8_t key[16], mac[16];
	uint16_t u16;
	uint32_t u32;
	size_t off;
	int bad;

	/* The QE's EGETKEY(REPORT) with the report's KEYID: a report not
	 * targeted at the QE, or altered, does not verify. */
	if (sgx_report_key(&a->keys, &a->qe_ti, report->keyid, key) ||
	    sgx_cmac(key, &report->body, sizeof(report->body), mac))
		return sgx_fail(why, whylen, AESM_UNEXPECTED_ERROR, "CMAC failed");
	OPENSSL_cleanse(key, sizeof(key));
	bad = CRYPTO_memcmp(mac, report->mac, sizeof(mac));
	if (bad)
		return sgx_fail(why, whylen, AESM_INVALID_REPORT, "the REPORT's MAC is "
			    "not under the QE's report key (not a REPORT, or not "
			    "targeted at the QE's TARGETINFO)");

	memset(q, 0, sgx_attest_quote_size(a));
	u16 = QUOTE_VERSION;
	memcpy(q, &u16, 2);
	u16 = QUOTE_ATT_KEY_ECDSA_P256;
	memcpy(q + 2, &u16, 2);
	u16 = SGX_QE_ISVSVN;
	memcpy(q + 8, &u16, 2);
	u16 = SGX_PCE_ISVSVN;
	memcpy(q + 10, &u16, 2);
	memcpy(q + 12, sgx_qe_vendor_id, 16);
	memcpy(q + 28, a->qe_id, 16);
	memcpy(q + QUOTE_HEADER_SIZE, &report->body, sizeof(report->body));
	u32 = (uint32_t)(sgx_attest_quote_size(a) - QUOTE_SIG_DATA_OFF);
	memcpy(q + QUOTE_SIGNED_SIZE, &u32, 4);

	off = QUOTE_SIG_DATA_OFF;
	if (sgx_ecdsa_sign(a->att_key, q, QUOTE_SIGNED_SIZE, q + off))
		return sgx_fail(why, whylen, AESM_UNEXPECTED_ERROR, "ECDSA signing failed");
	memcpy(q + off + 64, a->att_pub, 64);
	memcpy(q + off + 128, &a->qe_report, 384);
	memcpy(q + off + 512, a->qe_sig, 64);
	u16 = sizeof(a->auth);
	memcpy(q + off + 576, &u16, 2);
	memcpy(q + off + 578, a->auth, sizeof(a->auth));
	off += 578 + sizeof(a->auth);
	u16 = QUOTE_CERT_PCK_CHAIN;
	memcpy(q + off, &u16, 2);
	u32 = (uint32_t)a->cert_len;
	memcpy(q + off + 2, &u32, 4);
	memcpy(q + off + 6, a->cert_data, a->cert_len);
	return 0;
}

/* ---- the public C API (include/sgxemu/attest.h) ---- */

int sgxemu_qe_target_info(struct sgx_targetinfo *ti, char *why, size_t whylen)
{
	struct sgx_key_identity qe;

	(void)why;
	(void)whylen;
	sgx_qe_identity(&qe);
	target_of(&qe, ti);
	return 0;
}

int sgxemu_quote_generate(const struct sgx_report *report, uint8_t **quote,
			  size_t *len, char *why, size_t whylen)
{
	struct sgx_attest *a;
	uint8_t *q;
	int ret;

	if (!report || !quote || !len)
		return sgx_fail(why, whylen, AESM_PARAMETER_ERROR, "no report");
	if (sgx_attest_get(&a, why, whylen))
		return AESM_UNEXPECTED_ERROR;
	q = malloc(sgx_attest_quote_size(a));
	if (!q)
		return sgx_fail(why, whylen, AESM_UNEXPECTED_ERROR, "out of memory");
	ret = sgx_attest_quote(a, report, q, why, whylen);
	if (ret) {
		free(q);
		return ret;
	}
	*quote = q;
	*len = sgx_attest_quote_size(a);
	return 0;
}

int sgxemu_quote_size(size_t *len, char *why, size_t whylen)
{
	struct sgx_attest *a;

	if (!len)
		return sgx_fail(why, whylen, AESM_PARAMETER_ERROR, "no length");
	if (sgx_attest_get(&a, why, whylen))
		return AESM_UNEXPECTED_ERROR;
	*len = sgx_attest_quote_size(a);
	return 0;
}
