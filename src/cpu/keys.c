// SPDX-License-Identifier: MIT
/*
 * Key derivation for EGETKEY, EREPORT and EINIT (see keys.h for the scheme).
 *
 * Each derivation fills a zeroed "dd" record at the byte offsets of the
 * simulator's naturally aligned C structures (sgx-facts.md §5.2); writing
 * them as offsets rather than as C structs keeps the layout independent of
 * any compiler's padding rules.
 */
#include <pthread.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "cpu/keys.h"

#define DD_SEAL_SIZE		280
#define DD_REPORT_SIZE		192
#define DD_EINITTOKEN_SIZE	128
#define DD_PROVISION_SIZE	104
#define DD_PROVISION_SEAL_SIZE	200
#define DD_MAX_SIZE		DD_SEAL_SIZE

static EVP_MAC *cmac_alg;
static pthread_once_t cmac_once = PTHREAD_ONCE_INIT;

static void cmac_fetch(void)
{
	cmac_alg = EVP_MAC_fetch(NULL, "CMAC", NULL);
}

int sgx_cmac(const uint8_t key[SGX_KEY_SIZE], const void *data, size_t len,
	     uint8_t mac[SGX_MAC_SIZE])
{
	char cipher[] = "AES-128-CBC";
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx;
	size_t out_len = 0;
	int ok;

	pthread_once(&cmac_once, cmac_fetch);
	if (!cmac_alg)
		return -1;
	ctx = EVP_MAC_CTX_new(cmac_alg);
	if (!ctx)
		return -1;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						     cipher, 0);
	params[1] = OSSL_PARAM_construct_end();
	ok = EVP_MAC_init(ctx, key, SGX_KEY_SIZE, params) &&
	     EVP_MAC_update(ctx, data, len) &&
	     EVP_MAC_final(ctx, mac, &out_len, SGX_MAC_SIZE) &&
	     out_len == SGX_MAC_SIZE;
	EVP_MAC_CTX_free(ctx);
	return ok ? 0 : -1;
}

static void put(uint8_t *dd, size_t off, const void *src, size_t n)
{
	memcpy(dd + off, src, n);
}

static void put16(uint8_t *dd, size_t off, uint16_t v)
{
	memcpy(dd + off, &v, sizeof(v));
}

static void put32(uint8_t *dd, size_t off, uint32_t v)
{
	memcpy(dd + off, &v, sizeof(v));
}

void sgx_keys_simulator_defaults(struct sgx_platform_keys *keys)
{
	static const uint8_t seal[16] = {
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
		0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const uint8_t provision[16] = {
		0xbb, 0xaa, 0xbb, 0xee, 0xff, 0x00, 0x00, 0xdd,
		0xbb, 0xaa, 0xbb, 0xee, 0xff, 0x00, 0x00, 0xdd };
	static const uint8_t cpusvn_default[16] = {
		0x48, 0x20, 0xf3, 0x37, 0x6a, 0xe6, 0xb2, 0xf2,
		0x03, 0x4d, 0x3b, 0x7a, 0x4b, 0x48, 0xa7, 0x78 };

	memset(keys, 0, sizeof(*keys));
	memcpy(keys->root[SGX_KEYNAME_SEAL], seal, 16);
	for (int i = 0; i < 16; i += 2) {
		keys->root[SGX_KEYNAME_REPORT][i] = 0xff;
		keys->root[SGX_KEYNAME_EINITTOKEN][i] = 0xaa;
		keys->root[SGX_KEYNAME_EINITTOKEN][i + 1] = 0x55;
	}
	memcpy(keys->root[SGX_KEYNAME_PROVISION], provision, 16);
	memcpy(keys->root[SGX_KEYNAME_PROVISION_SEAL], "PROVISIONSEALKEY", 16);
	memcpy(keys->owner_epoch, "THISISOWNEREPOCH", 16);
	memcpy(keys->cpusvn, cpusvn_default, 16);
	/* The simulator's stand-in for CR_REPORT_KEYID. */
	memcpy(keys->report_keyid, keys->root[SGX_KEYNAME_REPORT], 16);
}

int sgx_cpusvn_supported(const uint8_t current[SGX_CPUSVN_SIZE],
			 const uint8_t req[SGX_CPUSVN_SIZE])
{
	for (int i = 0; i < SGX_CPUSVN_SIZE; i++)
		if (req[i] > current[i])
			return 0;
	return 1;
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* TMP_ATTRIBUTES: INIT and DEBUG are always bound into the key. */
static struct sgx_attributes masked_attributes(const struct sgx_key_identity *id,
					       const struct sgx_keyrequest *req)
{
	struct sgx_attributes a;

	a.flags = (req->attributemask.flags | SGX_ATTR_INIT | SGX_ATTR_DEBUG) &
		  id->attributes.flags;
	a.xfrm = req->attributemask.xfrm & id->attributes.xfrm;
	return a;
}

/* SEAL and PROVISION_SEAL share most of their optional (policy) inputs. */
static void fill_seal(uint8_t *dd, const struct sgx_platform_keys *keys,
		      const struct sgx_key_identity *id,
		      const struct sgx_keyrequest *req)
{
	struct sgx_attributes a = masked_attributes(id, req);
	uint16_t policy = req->keypolicy;

	put16(dd, 0, SGX_KEYNAME_SEAL);
	put16(dd, 2, policy);
	put(dd, 8, &a, 16);
	put(dd, 24, &req->attributemask, 16);
	put32(dd, 40, req->miscmask & id->miscselect);
	put32(dd, 44, ~req->miscmask);
	put(dd, 48, keys->owner_epoch, 16);
	put(dd, 64, req->cpusvn, 16);
	put16(dd, 80, req->isvsvn);
	if (!(policy & SGX_KEYPOLICY_NOISVPRODID))
		put16(dd, 82, id->isvprodid);
	if (policy & SGX_KEYPOLICY_CONFIGID) {
		put16(dd, 84, req->config_svn);
		put(dd, 86, id->config_id, 64);
	}
	if (policy & SGX_KEYPOLICY_ISVFAMILYID)
		put(dd, 150, id->isvfamilyid, 16);
	if (policy & SGX_KEYPOLICY_ISVEXTPRODID)
		put(dd, 166, id->isvextprodid, 16);
	if (policy & SGX_KEYPOLICY_MRENCLAVE)
		put(dd, 182, id->mrenclave, 32);
	if (policy & SGX_KEYPOLICY_MRSIGNER)
		put(dd, 214, id->mrsigner, 32);
	put(dd, 246, req->keyid, 32);
}

static void fill_provision_seal(uint8_t *dd, const struct sgx_key_identity *id,
				const struct sgx_keyrequest *req)
{
	struct sgx_attributes a = masked_attributes(id, req);
	uint16_t policy = req->keypolicy;

	put16(dd, 0, SGX_KEYNAME_PROVISION_SEAL);
	put16(dd, 2, policy);
	put(dd, 8, &a, 16);
	put(dd, 24, &req->attributemask, 16);
	put32(dd, 40, req->miscmask & id->miscselect);
	put32(dd, 44, ~req->miscmask);
	put(dd, 48, req->cpusvn, 16);
	put16(dd, 64, req->isvsvn);
	if (!(policy & SGX_KEYPOLICY_NOISVPRODID))
		put16(dd, 66, id->isvprodid);
	if (policy & SGX_KEYPOLICY_CONFIGID) {
		put16(dd, 68, req->config_svn);
		put(dd, 70, id->config_id, 64);
	}
	if (policy & SGX_KEYPOLICY_ISVFAMILYID)
		put(dd, 134, id->isvfamilyid, 16);
	if (policy & SGX_KEYPOLICY_ISVEXTPRODID)
		put(dd, 150, id->isvextprodid, 16);
	put(dd, 166, id->mrsigner, 32);
}

static void fill_provision(uint8_t *dd, const struct sgx_key_identity *id,
			   const struct sgx_keyrequest *req)
{
	struct sgx_attributes a = masked_attributes(id, req);

	put16(dd, 0, SGX_KEYNAME_PROVISION);
	put(dd, 8, &a, 16);
	put(dd, 24, &req->attributemask, 16);
	put32(dd, 40, req->miscmask & id->miscselect);
	put32(dd, 44, ~req->miscmask);
	put(dd, 48, req->cpusvn, 16);
	put16(dd, 64, req->isvsvn);
	put16(dd, 66, id->isvprodid);
	put(dd, 68, id->mrsigner, 32);
}

/* The EINITTOKEN record, shared by EGETKEY and EINIT's launch key. */
static void fill_einittoken(uint8_t *dd, const struct sgx_platform_keys *keys,
			    const struct sgx_attributes *attributes,
			    uint32_t miscselect, const uint8_t *cpusvn,
			    uint16_t isvsvn, uint16_t isvprodid,
			    const uint8_t *mrsigner, const uint8_t *keyid)
{
	put16(dd, 0, SGX_KEYNAME_EINITTOKEN);
	put(dd, 8, attributes, 16);
	put32(dd, 24, miscselect);
	put(dd, 28, keys->owner_epoch, 16);
	put(dd, 44, cpusvn, 16);
	put16(dd, 60, isvsvn);
	put16(dd, 62, isvprodid);
	put(dd, 64, mrsigner, 32);
	put(dd, 96, keyid, 32);
}

/* The REPORT record: identity of the enclave whose report key it is. */
static void fill_report(uint8_t *dd, const struct sgx_platform_keys *keys,
			const struct sgx_attributes *attributes,
			uint32_t miscselect, const uint8_t *mrenclave,
			uint16_t config_svn, const uint8_t *config_id,
			const uint8_t *keyid)
{
	put16(dd, 0, SGX_KEYNAME_REPORT);
	put(dd, 8, attributes, 16);
	put32(dd, 24, miscselect);
	put(dd, 28, keys->owner_epoch, 16);
	put(dd, 44, mrenclave, 32);
	put(dd, 76, keys->cpusvn, 16);
	put16(dd, 92, config_svn);
	put(dd, 94, config_id, 64);
	put(dd, 158, keyid, 32);
}

/* The CPUSVN and ISVSVN (and CONFIGSVN) "not newer than" checks. */
static int check_svns(const struct sgx_platform_keys *keys,
		      const struct sgx_key_identity *id,
		      const struct sgx_keyrequest *req, int with_config_svn)
{
	if (!sgx_cpusvn_supported(keys->cpusvn, req->cpusvn))
		return SGX_INVALID_CPUSVN;
	if (req->isvsvn > id->isvsvn)
		return SGX_INVALID_ISVSVN;
	if (with_config_svn && req->config_svn > id->config_svn)
		return SGX_INVALID_ISVSVN;
	return 0;
}

int sgx_derive_key(const struct sgx_platform_keys *keys,
		   const struct sgx_key_identity *id,
		   const struct sgx_keyrequest *req,
		   uint8_t key[SGX_KEY_SIZE])
{
	uint8_t dd[DD_MAX_SIZE] = { 0 };
	size_t dd_size;
	int ret;

	if (!all_zero(req->reserved1, sizeof(req->reserved1)) ||
	    !all_zero(req->reserved2, sizeof(req->reserved2)) ||
	    (req->keypolicy & SGX_KEYPOLICY_RESERVED))
		return SGX_GP;
	if (!(id->attributes.flags & SGX_ATTR_KSS) &&
	    ((req->keypolicy & SGX_KEYPOLICY_KSS_MASK) || req->config_svn))
		return SGX_GP;

	switch (req->keyname) {
	case SGX_KEYNAME_SEAL:
		ret = check_svns(keys, id, req, 1);
		if (ret)
			return ret;
		fill_seal(dd, keys, id, req);
		dd_size = DD_SEAL_SIZE;
		break;
	case SGX_KEYNAME_REPORT:
		fill_report(dd, keys, &id->attributes, id->miscselect,
			    id->mrenclave, id->config_svn, id->config_id,
			    req->keyid);
		dd_size = DD_REPORT_SIZE;
		break;
	case SGX_KEYNAME_EINITTOKEN: {
		struct sgx_attributes a = masked_attributes(id, req);

		if (!(id->attributes.flags & SGX_ATTR_EINITTOKENKEY))
			return SGX_INVALID_ATTRIBUTE;
		ret = check_svns(keys, id, req, 0);
		if (ret)
			return ret;
		fill_einittoken(dd, keys, &a, req->miscmask & id->miscselect,
				req->cpusvn, req->isvsvn, id->isvprodid,
				id->mrsigner, req->keyid);
		dd_size = DD_EINITTOKEN_SIZE;
		break;
	}
	case SGX_KEYNAME_PROVISION:
		if (!(id->attributes.flags & SGX_ATTR_PROVISIONKEY))
			return SGX_INVALID_ATTRIBUTE;
		ret = check_svns(keys, id, req, 0);
		if (ret)
			return ret;
		fill_provision(dd, id, req);
		dd_size = DD_PROVISION_SIZE;
		break;
	case SGX_KEYNAME_PROVISION_SEAL:
		if (!(id->attributes.flags & SGX_ATTR_PROVISIONKEY))
			return SGX_INVALID_ATTRIBUTE;
		ret = check_svns(keys, id, req, 1);
		if (ret)
			return ret;
		fill_provision_seal(dd, id, req);
		dd_size = DD_PROVISION_SEAL_SIZE;
		break;
	default:
		return SGX_INVALID_KEYNAME;
	}
	if (sgx_cmac(keys->root[req->keyname], dd, dd_size, key))
		return SGX_GP;
	return 0;
}

int sgx_report_key(const struct sgx_platform_keys *keys,
		   const struct sgx_targetinfo *ti,
		   const uint8_t keyid[SGX_KEYID_SIZE],
		   uint8_t key[SGX_KEY_SIZE])
{
	uint8_t dd[DD_REPORT_SIZE] = { 0 };

	fill_report(dd, keys, &ti->attributes, ti->miscselect,
		    ti->measurement, ti->config_svn, ti->config_id, keyid);
	return sgx_cmac(keys->root[SGX_KEYNAME_REPORT], dd, sizeof(dd), key);
}

int sgx_build_report(const struct sgx_platform_keys *keys,
		     const struct sgx_key_identity *id,
		     const struct sgx_targetinfo *ti,
		     const uint8_t report_data[SGX_REPORT_DATA_SIZE],
		     struct sgx_report *report)
{
	struct sgx_report_body *b = &report->body;
	uint8_t key[SGX_KEY_SIZE];
	int ret;

	memset(report, 0, sizeof(*report));
	memcpy(b->cpusvn, keys->cpusvn, sizeof(b->cpusvn));
	b->miscselect = id->miscselect;
	memcpy(b->isvextprodid, id->isvextprodid, sizeof(b->isvextprodid));
	b->attributes = id->attributes;
	memcpy(b->mrenclave, id->mrenclave, sizeof(b->mrenclave));
	memcpy(b->mrsigner, id->mrsigner, sizeof(b->mrsigner));
	memcpy(b->config_id, id->config_id, sizeof(b->config_id));
	b->isvprodid = id->isvprodid;
	b->isvsvn = id->isvsvn;
	b->config_svn = id->config_svn;
	memcpy(b->isvfamilyid, id->isvfamilyid, sizeof(b->isvfamilyid));
	memcpy(b->report_data, report_data, sizeof(b->report_data));
	memcpy(report->keyid, keys->report_keyid, sizeof(report->keyid));

	ret = sgx_report_key(keys, ti, report->keyid, key);
	if (!ret)
		ret = sgx_cmac(key, b, sizeof(*b), report->mac);
	memset(key, 0, sizeof(key));
	return ret;
}

int sgx_launch_key(const struct sgx_platform_keys *keys,
		   const struct sgx_einittoken *token,
		   const uint8_t le_hash[SGX_HASH_SIZE],
		   uint8_t key[SGX_KEY_SIZE])
{
	uint8_t dd[DD_EINITTOKEN_SIZE] = { 0 };

	fill_einittoken(dd, keys, &token->maskedattributesle,
			token->maskedmiscselectle, token->cpusvnle,
			token->isvsvnle, token->isvprodidle, le_hash,
			token->keyid);
	return sgx_cmac(keys->root[SGX_KEYNAME_EINITTOKEN], dd, sizeof(dd), key);
}
