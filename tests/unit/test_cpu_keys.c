// SPDX-License-Identifier: MIT
/*
 * Key derivation: AES-CMAC known answers (RFC 4493), the Intel simulator's
 * REPORT key, REPORT MAC and SEAL key (sgx-facts.md §6.5, with the
 * simulator's constants as root secrets), and every EGETKEY request check.
 */
#include <stdlib.h>

#include <openssl/evp.h>

#include "test.h"
#include "cpu/keys.h"

#define MRENCLAVE_6_1 "784acfd7d5096a8f0fbd3265760bff21b120f62407a9a9e5ba31aa3c8ed198fc"
#define MRSIGNER_6_1  "fb4bab3d6036ac1d730fa83d7366df1dd2dfeac194ef335d6854d8a6c6475542"

static void hex(const char *s, uint8_t *out, size_t n)
{
	if (!test_unhex(s, out, n)) {
		fprintf(stderr, "bad hex literal %s\n", s);
		abort();
	}
}

/* The SECS of the rust-sgx test enclave after EINIT (§6.5). */
static void identity_6_5(struct sgx_key_identity *id)
{
	memset(id, 0, sizeof(*id));
	id->attributes.flags = 0x7;
	id->attributes.xfrm = 0x3;
	hex(MRENCLAVE_6_1, id->mrenclave, 32);
	hex(MRSIGNER_6_1, id->mrsigner, 32);
	id->isvprodid = 0xFFFF;
}

static void seal_request_6_5(struct sgx_keyrequest *req, const struct sgx_platform_keys *k)
{
	memset(req, 0, sizeof(*req));
	req->keyname = SGX_KEYNAME_SEAL;
	req->keypolicy = SGX_KEYPOLICY_MRSIGNER;
	req->attributemask.flags = 0xFF0000000000000BULL;
	req->miscmask = 0xF0000000;
	memcpy(req->cpusvn, k->cpusvn, 16);
}

TEST(cmac_rfc4493)
{
	uint8_t key[16], mac[16], want[16], msg[16];

	hex("2b7e151628aed2a6abf7158809cf4f3c", key, 16);
	REQUIRE_EQ(sgx_cmac(key, "", 0, mac), 0);
	hex("bb1d6929e95937287fa37d129b756746", want, 16);
	CHECK_MEM(mac, want, 16);
	hex("6bc1bee22e409f96e93d7e117393172a", msg, 16);
	REQUIRE_EQ(sgx_cmac(key, msg, 16, mac), 0);
	hex("070a16b46b4d4144f79bdd9dd04a287c", want, 16);
	CHECK_MEM(mac, want, 16);
}

TEST(report_key_matches_simulator)
{
	struct sgx_platform_keys k;
	struct sgx_targetinfo ti;
	uint8_t key[16], want[16];

	sgx_keys_simulator_defaults(&k);
	memset(&ti, 0, sizeof(ti));
	hex(MRENCLAVE_6_1, ti.measurement, 32);
	ti.attributes.flags = 0x7;
	ti.attributes.xfrm = 0x3;
	REQUIRE_EQ(sgx_report_key(&k, &ti, k.report_keyid, key), 0);
	hex("87051387213d97519b04e05fa33526ff", want, 16);
	CHECK_MEM(key, want, 16);
}

TEST(self_report_matches_simulator)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	struct sgx_report report;
	uint8_t data[64] = { 0 }, digest[32], want[32], mac[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	memset(&ti, 0, sizeof(ti));
	memcpy(ti.measurement, id.mrenclave, 32);
	ti.attributes = id.attributes;
	REQUIRE_EQ(sgx_build_report(&k, &id, &ti, data, &report), 0);
	REQUIRE(EVP_Digest(&report.body, sizeof(report.body), digest, NULL, EVP_sha256(), NULL));
	hex("a24e6408943146a64c6eb397f12dc4c4e02e0ae401549d31b9c877e382062d9f", want, 32);
	CHECK_MEM(digest, want, 32);
	hex("be69327ea8515e6c1d0608b695e4ffdd", mac, 16);
	CHECK_MEM(report.mac, mac, 16);
	CHECK_MEM(report.keyid, k.report_keyid, 32);
}

TEST(report_verifies_with_egetkey_report_key)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity a, b;
	struct sgx_targetinfo ti;
	struct sgx_keyrequest req;
	struct sgx_report report;
	uint8_t data[64], key[16], mac[16];

	sgx_keys_simulator_defaults(&k);
	memset(k.report_keyid, 0x5a, 32);
	identity_6_5(&a);
	identity_6_5(&b);
	b.mrenclave[0] ^= 1;
	b.isvprodid = 7;
	memset(data, 0xc3, sizeof(data));
	/* A reports to B. */
	memset(&ti, 0, sizeof(ti));
	memcpy(ti.measurement, b.mrenclave, 32);
	ti.attributes = b.attributes;
	REQUIRE_EQ(sgx_build_report(&k, &a, &ti, data, &report), 0);
	/* B derives its REPORT key with the report's KEYID and checks the MAC. */
	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_REPORT;
	memcpy(req.keyid, report.keyid, 32);
	REQUIRE_EQ(sgx_derive_key(&k, &b, &req, key), 0);
	REQUIRE_EQ(sgx_cmac(key, &report.body, sizeof(report.body), mac), 0);
	CHECK_MEM(mac, report.mac, 16);
	/* Any body byte changed: the MAC no longer matches. */
	for (size_t i = 0; i < sizeof(report.body); i += 37) {
		struct sgx_report t = report;

		((uint8_t *)&t.body)[i] ^= 0x01;
		REQUIRE_EQ(sgx_cmac(key, &t.body, sizeof(t.body), mac), 0);
		CHECK(memcmp(mac, report.mac, 16) != 0);
	}
	/* A third enclave's REPORT key does not verify it. */
	b.mrenclave[1] ^= 1;
	REQUIRE_EQ(sgx_derive_key(&k, &b, &req, key), 0);
	REQUIRE_EQ(sgx_cmac(key, &report.body, sizeof(report.body), mac), 0);
	CHECK(memcmp(mac, report.mac, 16) != 0);
}

TEST(seal_key_matches_simulator)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t key[16], want[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	seal_request_6_5(&req, &k);
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	hex("3ee417750f4bdc515954eddfbff39291", want, 16);
	CHECK_MEM(key, want, 16);
}

TEST(seal_policy_selects_identity)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id, other;
	struct sgx_keyrequest req;
	uint8_t k1[16], k2[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	other = id;
	other.mrenclave[5] ^= 0x80;
	seal_request_6_5(&req, &k);
	/* MRSIGNER policy: another enclave of the same signer gets the same key. */
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k1), 0);
	REQUIRE_EQ(sgx_derive_key(&k, &other, &req, k2), 0);
	CHECK_MEM(k1, k2, 16);
	/* MRENCLAVE policy: it does not. */
	req.keypolicy = SGX_KEYPOLICY_MRENCLAVE;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k1), 0);
	REQUIRE_EQ(sgx_derive_key(&k, &other, &req, k2), 0);
	CHECK(memcmp(k1, k2, 16) != 0);
	/* Another signer under MRSIGNER policy: different key. */
	req.keypolicy = SGX_KEYPOLICY_MRSIGNER;
	other = id;
	other.mrsigner[0] ^= 1;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k1), 0);
	REQUIRE_EQ(sgx_derive_key(&k, &other, &req, k2), 0);
	CHECK(memcmp(k1, k2, 16) != 0);
	/* A different OWNEREPOCH (another owner of the platform): different key. */
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k1), 0);
	k.owner_epoch[3] ^= 1;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k2), 0);
	CHECK(memcmp(k1, k2, 16) != 0);
}

TEST(seal_isvsvn_rules)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t k_old[16], k_new[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	id.isvsvn = 3;
	seal_request_6_5(&req, &k);
	req.isvsvn = 4;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, k_new), SGX_INVALID_ISVSVN);
	req.isvsvn = 3;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k_new), 0);
	req.isvsvn = 2;		/* older keys stay available */
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k_old), 0);
	CHECK(memcmp(k_old, k_new, 16) != 0);
}

TEST(cpusvn_rules)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t key[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	seal_request_6_5(&req, &k);
	req.cpusvn[15] = k.cpusvn[15] + 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_CPUSVN);
	memset(req.cpusvn, 0, 16);	/* the oldest CPUSVN is always allowed */
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	CHECK(sgx_cpusvn_supported(k.cpusvn, k.cpusvn));
}

TEST(request_reserved_bits_gp)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t key[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	seal_request_6_5(&req, &k);
	req.reserved1[1] = 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_GP);
	seal_request_6_5(&req, &k);
	req.reserved2[433] = 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_GP);
	seal_request_6_5(&req, &k);
	req.keypolicy |= 1U << 6;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_GP);
}

TEST(kss_policies_need_kss)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t key[16];
	uint16_t kss[] = { SGX_KEYPOLICY_NOISVPRODID, SGX_KEYPOLICY_CONFIGID,
			   SGX_KEYPOLICY_ISVFAMILYID, SGX_KEYPOLICY_ISVEXTPRODID };

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	for (size_t i = 0; i < sizeof(kss) / sizeof(kss[0]); i++) {
		seal_request_6_5(&req, &k);
		req.keypolicy |= kss[i];
		CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_GP);
	}
	seal_request_6_5(&req, &k);
	req.config_svn = 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_GP);
	/* With KSS the same requests are served, CONFIGSVN bounded by the SECS. */
	id.attributes.flags |= SGX_ATTR_KSS;
	id.config_svn = 1;
	seal_request_6_5(&req, &k);
	req.keypolicy |= SGX_KEYPOLICY_CONFIGID | SGX_KEYPOLICY_NOISVPRODID;
	req.config_svn = 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	req.config_svn = 2;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_ISVSVN);
}

TEST(keyname_and_attribute_rules)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t key[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	seal_request_6_5(&req, &k);
	req.keyname = 5;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_KEYNAME);
	req.keyname = 0xFFFF;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_KEYNAME);
	req.keyname = SGX_KEYNAME_PROVISION;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_ATTRIBUTE);
	req.keyname = SGX_KEYNAME_PROVISION_SEAL;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_ATTRIBUTE);
	req.keyname = SGX_KEYNAME_EINITTOKEN;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_ATTRIBUTE);
	id.attributes.flags |= SGX_ATTR_PROVISIONKEY | SGX_ATTR_EINITTOKENKEY;
	req.keyname = SGX_KEYNAME_PROVISION;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	req.keyname = SGX_KEYNAME_PROVISION_SEAL;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	req.keyname = SGX_KEYNAME_EINITTOKEN;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
	req.isvsvn = 1;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), SGX_INVALID_ISVSVN);
	/* REPORT keys have no SVN checks. */
	req.keyname = SGX_KEYNAME_REPORT;
	req.cpusvn[0] = 0xff;
	CHECK_EQ(sgx_derive_key(&k, &id, &req, key), 0);
}

TEST(provision_key_ignores_owner_epoch)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity id;
	struct sgx_keyrequest req;
	uint8_t k1[16], k2[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&id);
	id.attributes.flags |= SGX_ATTR_PROVISIONKEY;
	seal_request_6_5(&req, &k);
	req.keyname = SGX_KEYNAME_PROVISION;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k1), 0);
	k.owner_epoch[0] ^= 0xff;
	REQUIRE_EQ(sgx_derive_key(&k, &id, &req, k2), 0);
	CHECK_MEM(k1, k2, 16);
}

TEST(launch_key_equals_le_einittoken_key)
{
	struct sgx_platform_keys k;
	struct sgx_key_identity le;
	struct sgx_keyrequest req;
	struct sgx_einittoken token;
	uint8_t from_egetkey[16], from_einit[16];

	sgx_keys_simulator_defaults(&k);
	identity_6_5(&le);
	le.attributes.flags |= SGX_ATTR_EINITTOKENKEY;
	le.isvsvn = 2;
	/* What a launch enclave puts in a token and asks EGETKEY for (§3.3). */
	memset(&token, 0, sizeof(token));
	memcpy(token.cpusvnle, k.cpusvn, 16);
	token.isvsvnle = le.isvsvn;
	token.isvprodidle = le.isvprodid;
	token.maskedattributesle.flags = le.attributes.flags & ~SGX_ATTR_MODE64BIT;
	token.maskedmiscselectle = le.miscselect;
	memset(token.keyid, 0x42, 32);
	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_EINITTOKEN;
	memcpy(req.cpusvn, token.cpusvnle, 16);
	req.isvsvn = token.isvsvnle;
	req.attributemask.flags = ~SGX_ATTR_MODE64BIT;
	req.miscmask = 0xFFFFFFFF;
	memcpy(req.keyid, token.keyid, 32);
	REQUIRE_EQ(sgx_derive_key(&k, &le, &req, from_egetkey), 0);
	REQUIRE_EQ(sgx_launch_key(&k, &token, le.mrsigner, from_einit), 0);
	CHECK_MEM(from_egetkey, from_einit, 16);
}

/*
 * Every input of every key, one at a time: the key changes exactly where
 * the SDM's key-dependency table (sgx-facts.md §5.1) lists the input for
 * that KEYNAME. The expectations are the table's, not the code's.
 */
enum { K_SEAL, K_REPORT, K_EINITTOKEN, K_PROVISION, K_PROVISION_SEAL, K_N };
static const uint16_t key_names[K_N] = {
	SGX_KEYNAME_SEAL, SGX_KEYNAME_REPORT, SGX_KEYNAME_EINITTOKEN,
	SGX_KEYNAME_PROVISION, SGX_KEYNAME_PROVISION_SEAL };

static const struct key_input {
	const char *name;
	bool bound[K_N];	/* SEAL REPORT EINITTOKEN PROVISION PROV_SEAL */
} key_inputs[] = {
	{ "DEBUG, ATTRIBUTEMASK 0",	{ 1, 1, 1, 1, 1 } },
	{ "INIT, ATTRIBUTEMASK 0",	{ 1, 1, 1, 1, 1 } },
	{ "attribute in the mask",	{ 1, 1, 1, 1, 1 } },
	{ "attribute not in the mask",	{ 0, 1, 0, 0, 0 } },
	{ "ATTRIBUTEMASK",		{ 1, 0, 0, 1, 1 } },
	{ "XFRM in the mask",		{ 1, 1, 1, 1, 1 } },
	{ "MISCSELECT in the mask",	{ 1, 1, 1, 1, 1 } },
	{ "MISCSELECT not in the mask",	{ 0, 1, 0, 0, 0 } },
	{ "MISCMASK",			{ 1, 0, 0, 1, 1 } },
	{ "OWNEREPOCH",			{ 1, 1, 1, 0, 0 } },
	{ "KEYID",			{ 1, 1, 1, 0, 0 } },
	{ "request CPUSVN",		{ 1, 0, 1, 1, 1 } },
	{ "current CPUSVN",		{ 0, 1, 0, 0, 0 } },
	{ "request ISVSVN",		{ 1, 0, 1, 1, 1 } },
	{ "SECS ISVSVN",		{ 0, 0, 0, 0, 0 } },
	{ "ISVPRODID",			{ 1, 0, 1, 1, 1 } },
	{ "MRENCLAVE (policy)",		{ 1, 1, 0, 0, 0 } },
	{ "MRSIGNER (policy)",		{ 1, 0, 1, 1, 1 } },
	{ "KEYPOLICY",			{ 1, 0, 0, 0, 1 } },
	{ "ISVFAMILYID (policy)",	{ 1, 0, 0, 0, 1 } },
	{ "ISVEXTPRODID (policy)",	{ 1, 0, 0, 0, 1 } },
	{ "CONFIGID (policy)",		{ 1, 1, 0, 0, 1 } },
	{ "request CONFIGSVN (policy)",	{ 1, 0, 0, 0, 1 } },
	{ "SECS CONFIGSVN",		{ 0, 1, 0, 0, 0 } },
};

/* Input @c of the table above, in its base (@other false) or its other
 * value. */
static void key_case(size_t c, bool other, struct sgx_platform_keys *k,
		     struct sgx_key_identity *id, struct sgx_keyrequest *req)
{
	switch (c) {
	case 0:	/* DEBUG with a mask that leaves it out */
		req->attributemask.flags = 0;
		req->attributemask.xfrm = 0;
		if (other)
			id->attributes.flags &= ~SGX_ATTR_DEBUG;
		break;
	case 1:
		req->attributemask.flags = 0;
		req->attributemask.xfrm = 0;
		if (other)
			id->attributes.flags &= ~SGX_ATTR_INIT;
		break;
	case 2:
		if (other)
			id->attributes.flags |= SGX_ATTR_CET;
		break;
	case 3:
		req->attributemask.flags &= ~SGX_ATTR_CET;
		if (other)
			id->attributes.flags |= SGX_ATTR_CET;
		break;
	case 4:	/* a mask bit the attributes do not have */
		req->attributemask.flags &= ~(1ULL << 40);
		if (other)
			req->attributemask.flags |= 1ULL << 40;
		break;
	case 5:
		if (other)
			id->attributes.xfrm |= SGX_XFRM_AVX;
		break;
	case 6:
		if (other)
			id->miscselect |= 1;
		break;
	case 7:
		req->miscmask &= ~1U;
		if (other)
			id->miscselect |= 1;
		break;
	case 8:	/* a mask bit MISCSELECT does not have */
		req->miscmask &= ~(1U << 20);
		if (other)
			req->miscmask |= 1U << 20;
		break;
	case 9:
		if (other)
			k->owner_epoch[7] ^= 1;
		break;
	case 10:
		if (other)
			req->keyid[31] ^= 1;
		break;
	case 11:
		if (other)
			req->cpusvn[0]--;
		break;
	case 12:
		if (other)
			k->cpusvn[0]++;
		break;
	case 13:
		if (other)
			req->isvsvn--;
		break;
	case 14:
		if (other)
			id->isvsvn++;
		break;
	case 15:
		if (other)
			id->isvprodid ^= 0x100;
		break;
	case 16:
		if (other)
			id->mrenclave[31] ^= 1;
		break;
	case 17:
		if (other)
			id->mrsigner[31] ^= 1;
		break;
	case 18:	/* NOISVPRODID with ISVPRODID 0: only the policy differs */
		id->isvprodid = 0;
		if (other)
			req->keypolicy |= SGX_KEYPOLICY_NOISVPRODID;
		break;
	case 19:
		if (other)
			id->isvfamilyid[15] ^= 1;
		break;
	case 20:
		if (other)
			id->isvextprodid[15] ^= 1;
		break;
	case 21:
		if (other)
			id->config_id[63] ^= 1;
		break;
	case 22:
		if (other)
			req->config_svn--;
		break;
	case 23:
		if (other)
			id->config_svn++;
		break;
	}
}

TEST(every_key_input_as_the_sdm_table_says)
{
	REQUIRE_EQ(sizeof(key_inputs) / sizeof(*key_inputs), 24);
	for (size_t c = 0; c < sizeof(key_inputs) / sizeof(*key_inputs); c++) {
		for (int n = 0; n < K_N; n++) {
			struct sgx_platform_keys k[2];
			struct sgx_key_identity id[2];
			struct sgx_keyrequest req[2];
			uint8_t key[2][16];

			for (int o = 0; o < 2; o++) {
				sgx_keys_simulator_defaults(&k[o]);
				identity_6_5(&id[o]);
				id[o].attributes.flags |= SGX_ATTR_PROVISIONKEY |
					SGX_ATTR_EINITTOKENKEY | SGX_ATTR_KSS;
				id[o].isvsvn = 5;
				id[o].config_svn = 5;
				memset(id[o].config_id, 0x11, 64);
				memset(id[o].isvfamilyid, 0x22, 16);
				memset(id[o].isvextprodid, 0x33, 16);
				memset(&req[o], 0, sizeof(req[o]));
				req[o].keyname = key_names[n];
				req[o].keypolicy = SGX_KEYPOLICY_MRENCLAVE |
					SGX_KEYPOLICY_MRSIGNER |
					SGX_KEYPOLICY_CONFIGID |
					SGX_KEYPOLICY_ISVFAMILYID |
					SGX_KEYPOLICY_ISVEXTPRODID;
				req[o].attributemask.flags = ~0ULL;
				req[o].attributemask.xfrm = ~0ULL;
				req[o].miscmask = ~0U;
				memcpy(req[o].cpusvn, k[o].cpusvn, 16);
				req[o].isvsvn = 4;
				req[o].config_svn = 4;
				memset(req[o].keyid, 0x44, 32);
				key_case(c, o, &k[o], &id[o], &req[o]);
			}
			if (sgx_derive_key(&k[0], &id[0], &req[0], key[0]) ||
			    sgx_derive_key(&k[1], &id[1], &req[1], key[1])) {
				test_fail(__FILE__, __LINE__, "%s, KEYNAME %u: "
					  "refused", key_inputs[c].name,
					  key_names[n]);
				continue;
			}
			if (!memcmp(key[0], key[1], 16) == key_inputs[c].bound[n])
				test_fail(__FILE__, __LINE__, "%s, KEYNAME %u: "
					  "the key %s", key_inputs[c].name,
					  key_names[n], key_inputs[c].bound[n] ?
					  "does not change" : "changes");
		}
	}
}
