/* SPDX-License-Identifier: MIT */
/*
 * EINIT: one test per step of sgx-facts.md §3.2, in the SDM's order, on the
 * tiny enclave of §6.5 (MRENCLAVE c62b62b9…) signed with sig1.key.pem
 * (MRSIGNER 83d719e7…). Signatures are made with OpenSSL in the test.
 */
#include <openssl/crypto.h>

#include "test_cpu_helpers.h"
#include "cpu/keys.h"

#define TINY_MRENCLAVE \
	"c62b62b99c4d540a66201bbee6db951fb2545b704bd85a8fa139362a91b2635b"
#define INTEL_LE_MRSIGNER \
	"acb77012053e05a63d413b8bbae8fb6c5d73b3f2996d91c43bbbf90959c0f8d4"

/* The §6.5 enclave, SECS in EPC page 0, with the given SECS fields. */
static bool tiny(struct sgx_cpu *cpu, uint64_t flags, uint32_t misc)
{
	struct sgx_secs *s = t_secs(T_BASE, 0x2000);

	s->attributes.flags = flags;
	s->miscselect = misc;
	return t_cpu_init(cpu) == 0 && t_ecreate(cpu, s, 0) == 0 &&
	       t_eadd(cpu, 0, 1, T_BASE, SGX_SECINFO_REG | 3, t_page()) == 0 &&
	       t_eextend_page(cpu, 0, 1) == 0 &&
	       t_eadd(cpu, 0, 2, T_BASE + 0x1000, SGX_SECINFO_TCS, t_page()) == 0 &&
	       t_eextend_page(cpu, 0, 2) == 0;
}

/* A SIGSTRUCT for tiny() with these attributes, unsigned. */
static struct sgx_sigstruct *tiny_sig(uint64_t flags)
{
	struct sgx_sigstruct *sig = t_sigstruct();

	test_unhex(TINY_MRENCLAVE, sig->body.enclavehash, 32);
	sig->body.attributes.flags = flags;
	sig->body.attributes.xfrm = SGX_XFRM_LEGACY;
	sig->body.isvprodid = 0x1234;
	sig->body.isvsvn = 7;
	return sig;
}

#define STD_FLAGS	(SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG)

/* Everything for the common case: enclave, signed SIGSTRUCT, MSRs = signer. */
#define SETUP() \
	struct sgx_cpu cpu; \
	struct sgx_sigstruct *sig = tiny_sig(STD_FLAGS); \
	struct sgx_einittoken *tok = t_token(); \
	REQUIRE(tiny(&cpu, STD_FLAGS, 0)); \
	REQUIRE(t_sign_key(sig)); \
	REQUIRE(t_set_lehash(&cpu, t_key_mrsigner())); (void)tok

#define EINIT() sgx_einit(&cpu, sig, t_epc(&cpu, 0), tok)

TEST(einit_ok)
{
	SETUP();
	struct sgx_secs *secs;
	uint8_t pad[352];

	REQUIRE_EQ(EINIT(), 0);
	secs = t_epc(&cpu, 0);
	CHECK(t_hex_eq(secs->mrenclave, TINY_MRENCLAVE, 32));
	CHECK(t_hex_eq(secs->mrsigner, t_key_mrsigner(), 32));
	CHECK_EQ(secs->isvprodid, 0x1234);
	CHECK_EQ(secs->isvsvn, 7);
	CHECK_EQ(secs->attributes.flags, STD_FLAGS | SGX_ATTR_INIT);
	CHECK(t_ctl(&cpu, 0)->initialized);
	/* SECS.PADDING: 00 01, 330 x FF, 00, the SHA-256 DigestInfo prefix */
	memset(pad, 0xFF, sizeof(pad));
	pad[0] = 0;
	pad[1] = 1;
	REQUIRE(test_unhex("003031300d060960864801650304020105000420", pad + 332, 20));
	CHECK_MEM(t_ctl(&cpu, 0)->padding, pad, 352);
}

TEST(einit_sigstruct_misaligned_gp)
{
	SETUP();
	struct sgx_sigstruct *moved = aligned_alloc(4096, 8192);

	memcpy((uint8_t *)moved + 64, sig, sizeof(*sig));
	CHECK_EQ(sgx_einit(&cpu, (void *)((uint8_t *)moved + 64), t_epc(&cpu, 0), tok), SGX_GP);
}

TEST(einit_secs_misaligned_gp)
{
	SETUP();

	CHECK_EQ(sgx_einit(&cpu, sig, (uint8_t *)t_epc(&cpu, 0) + 512, tok), SGX_GP);
}

TEST(einit_token_misaligned_gp)
{
	SETUP();
	uint8_t *buf = aligned_alloc(512, 1024);

	memset(buf, 0, 1024);
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), (void *)(buf + 256)), SGX_GP);
	CHECK(!t_ctl(&cpu, 0)->initialized);
}

TEST(einit_secs_not_epc_pf)
{
	SETUP();

	CHECK_EQ(sgx_einit(&cpu, sig, t_page(), tok), SGX_PF);
}

TEST(einit_header_sig_struct)
{
	SETUP();

	sig->header.header[4] ^= 1;
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

/* HEADER bytes 12..15 are part of the 16-byte constant (sgx-facts §7). */
TEST(einit_header_type_bit_sig_struct)
{
	SETUP();

	sig->header.header[15] = 0x80;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_vendor_sig_struct)
{
	SETUP();

	sig->header.vendor = 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_vendor_intel_ok)
{
	SETUP();

	sig->header.vendor = 0x8086;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_header2_sig_struct)
{
	SETUP();

	sig->header.header2[12] = 2;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_exponent_sig_struct)
{
	SETUP();

	sig->exponent = 65537;
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_reserved_sig_struct)
{
	SETUP();

	sig->header.reserved1[83] = 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
	sig->header.reserved1[83] = 0;
	sig->body.reserved2[0] = 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
	sig->body.reserved2[0] = 0;
	sig->body.reserved3[15] = 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
	sig->body.reserved3[15] = 0;
	REQUIRE(t_sign_key(sig));
	sig->reserved4[11] = 1;		/* unsigned, still checked */
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
	sig->reserved4[11] = 0;
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_signature_invalid)
{
	SETUP();

	sig->signature[100] ^= 0x10;
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

TEST(einit_signed_body_changed_invalid_signature)
{
	SETUP();

	sig->body.isvsvn = 8;	/* changed after signing */
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

TEST(einit_modulus_changed_invalid_signature)
{
	SETUP();

	sig->modulus[0] ^= 2;	/* stays odd */
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

TEST(einit_q1_wrong_invalid_signature)
{
	SETUP();

	sig->q1[0] ^= 1;
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

/*
 * Q1 - 1 with Q2 + s keeps s^3 - Q1*s*n - Q2*n unchanged, so only the
 * Q1 == floor(s^2/n) check itself can refuse it. Q2 + s must fit in 384
 * bytes, which depends on the signature: with the key the build made it
 * may not, so the SIGSTRUCT's (signed, never checked) DATE is changed
 * and it is signed again until it does.
 */
TEST(einit_q1_wrong_q2_consistent_invalid_signature)
{
	SETUP();
	BIGNUM *q1 = NULL, *q2 = NULL, *s = NULL;
	bool fits = false;

	for (uint32_t date = 0x20260101; !fits && date < 0x20260101 + 64; date++) {
		BN_free(q1);
		BN_free(q2);
		BN_free(s);
		sig->header.date = date;
		REQUIRE(t_sign_key(sig));
		q1 = BN_lebin2bn(sig->q1, 384, NULL);
		q2 = BN_lebin2bn(sig->q2, 384, NULL);
		s = BN_lebin2bn(sig->signature, 384, NULL);
		REQUIRE(q1 && q2 && s);
		REQUIRE(BN_sub_word(q1, 1) && BN_add(q2, q2, s));
		fits = BN_num_bytes(q2) <= 384;
	}
	REQUIRE(fits);
	CHECK_EQ(EINIT(), 0);		/* the re-signed SIGSTRUCT as it is */
	REQUIRE(BN_bn2lebinpad(q1, sig->q1, 384) == 384);
	REQUIRE(BN_bn2lebinpad(q2, sig->q2, 384) == 384);
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
	BN_free(q1);
	BN_free(q2);
	BN_free(s);
}

TEST(einit_q2_wrong_invalid_signature)
{
	SETUP();

	sig->q2[383 - 8] ^= 1;
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

TEST(einit_signature_not_reduced_invalid_signature)
{
	SETUP();

	memcpy(sig->signature, sig->modulus, 384);	/* s = n */
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
	memset(sig->signature, 0xFF, 384);		/* s > n */
	CHECK_EQ(EINIT(), SGX_INVALID_SIGNATURE);
}

/* Order: the signature (step 6) comes before the EPCM (step 7). */
TEST(einit_order_signature_before_epcm)
{
	SETUP();

	sig->signature[0] ^= 1;
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 9), tok), SGX_INVALID_SIGNATURE);
	/* and the SIGSTRUCT fields (step 4) before the signature */
	sig->header.vendor = 5;
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_secs_invalid_pf)
{
	SETUP();

	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 9), tok), SGX_PF);
}

TEST(einit_secs_not_secs_pf)
{
	SETUP();

	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 1), tok), SGX_PF);
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 2), tok), SGX_PF);
}

TEST(einit_already_initialized_gp)
{
	SETUP();

	REQUIRE_EQ(EINIT(), 0);
	CHECK_EQ(EINIT(), SGX_GP);
}

TEST(einit_isvfamilyid_without_kss_sig_struct)
{
	SETUP();

	sig->body.isvfamilyid[3] = 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_isvfamilyid_with_kss_ok)
{
	struct sgx_cpu cpu;
	uint64_t flags = STD_FLAGS | SGX_ATTR_KSS;
	struct sgx_sigstruct *sig = tiny_sig(flags);

	sig->body.isvfamilyid[3] = 1;
	sig->body.isvextprodid[0] = 9;
	REQUIRE(tiny(&cpu, flags, 0));
	REQUIRE(t_sign_key(sig));
	REQUIRE(t_set_lehash(&cpu, t_key_mrsigner()));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
	CHECK_EQ(t_ctl(&cpu, 0)->isvfamilyid[3], 1);
	CHECK_EQ(t_ctl(&cpu, 0)->isvextprodid[0], 9);
}

/* Order: step 8 (ISVFAMILYID) before step 9 (measurement). */
TEST(einit_order_isvfamilyid_before_measurement)
{
	SETUP();

	sig->body.isvfamilyid[0] = 1;
	sig->body.enclavehash[0] ^= 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_SIG_STRUCT);
}

TEST(einit_measurement_mismatch)
{
	SETUP();

	sig->body.enclavehash[31] ^= 0x80;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_MEASUREMENT);
	CHECK(!t_ctl(&cpu, 0)->initialized);
}

/* A failed EINIT leaves the enclave as it was: a correct retry succeeds. */
TEST(einit_retry_after_failure)
{
	SETUP();
	struct sgx_sigstruct *bad = tiny_sig(STD_FLAGS);

	bad->body.enclavehash[0] ^= 1;
	REQUIRE(t_sign_key(bad));
	CHECK_EQ(sgx_einit(&cpu, bad, t_epc(&cpu, 0), tok), SGX_INVALID_MEASUREMENT);
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_page_added_after_signing_measurement)
{
	SETUP();

	REQUIRE_EQ(t_ecreate(&cpu, t_secs(T_BASE, 0x2000), 5), 0);
	/* an extra unmeasured page in the original enclave changes MRENCLAVE */
	REQUIRE_EQ(t_eadd(&cpu, 5, 6, T_BASE, SGX_SECINFO_REG | 3, t_page()), 0);
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 5), tok), SGX_INVALID_MEASUREMENT);
}

TEST(einit_controlled_attribute_wrong_signer)
{
	struct sgx_cpu cpu;
	uint64_t flags = STD_FLAGS | SGX_ATTR_EINITTOKENKEY;
	struct sgx_sigstruct *sig = tiny_sig(flags);

	REQUIRE(tiny(&cpu, flags, 0));
	REQUIRE(t_sign_key(sig));
	/* MSRs hold Intel's LE hash (reset value): not this signer */
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_ATTRIBUTE);
	REQUIRE(t_set_lehash(&cpu, t_key_mrsigner()));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
}

/* Order: step 9 (measurement) before step 11 (controlled attributes). */
TEST(einit_order_measurement_before_controlled)
{
	struct sgx_cpu cpu;
	uint64_t flags = STD_FLAGS | SGX_ATTR_EINITTOKENKEY;
	struct sgx_sigstruct *sig = tiny_sig(flags);

	REQUIRE(tiny(&cpu, flags, 0));
	sig->body.enclavehash[5] ^= 1;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_MEASUREMENT);
}

TEST(einit_attributes_masked_mismatch)
{
	SETUP();

	/* SECS has DEBUG, the signer says production and masks DEBUG in */
	sig->body.attributes.flags = SGX_ATTR_MODE64BIT;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_ATTRIBUTE);
}

TEST(einit_attributes_unmasked_difference_ok)
{
	SETUP();

	sig->body.attributes.flags = SGX_ATTR_MODE64BIT;
	sig->body.attributemask.flags = ~SGX_ATTR_DEBUG;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_xfrm_masked_mismatch)
{
	SETUP();

	sig->body.attributes.xfrm = SGX_XFRM_LEGACY | SGX_XFRM_AVX;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), SGX_INVALID_ATTRIBUTE);
	sig->body.attributemask.xfrm = ~SGX_XFRM_AVX;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_miscselect_masked_mismatch)
{
	struct sgx_cpu cpu;
	struct sgx_sigstruct *sig = tiny_sig(STD_FLAGS);

	/* MISCSELECT is not measured: same MRENCLAVE, different SECS */
	REQUIRE(tiny(&cpu, STD_FLAGS, SGX_MISC_EXINFO));
	REQUIRE(t_sign_key(sig));
	REQUIRE(t_set_lehash(&cpu, t_key_mrsigner()));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), SGX_INVALID_ATTRIBUTE);
	sig->body.miscmask = ~SGX_MISC_EXINFO;
	REQUIRE(t_sign_key(sig));
	CHECK_EQ(sgx_einit(&cpu, sig, t_epc(&cpu, 0), t_token()), 0);
}

TEST(einit_no_token_wrong_signer_einittoken)
{
	SETUP();

	REQUIRE(t_set_lehash(&cpu, INTEL_LE_MRSIGNER));
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	CHECK(!t_ctl(&cpu, 0)->initialized);
}

/* Order: step 12 (attributes) before step 14 (launch control). */
TEST(einit_order_attributes_before_launch)
{
	SETUP();

	sig->body.attributes.flags = SGX_ATTR_MODE64BIT;
	REQUIRE(t_sign_key(sig));
	REQUIRE(t_set_lehash(&cpu, INTEL_LE_MRSIGNER));
	CHECK_EQ(EINIT(), SGX_INVALID_ATTRIBUTE);
}

/* ---- EINITTOKEN (VALID=1) path: legacy launch control ---- */

/* A token for tiny() as an LE would make it, MACed with the launch key. */
static void make_token(struct sgx_cpu *cpu, struct sgx_einittoken *tok,
		       uint64_t flags)
{
	uint8_t le_hash[32], key[16];

	memset(tok, 0, sizeof(*tok));
	tok->valid = 1;
	tok->attributes.flags = flags;
	tok->attributes.xfrm = SGX_XFRM_LEGACY;
	test_unhex(TINY_MRENCLAVE, tok->mrenclave, 32);
	test_unhex(t_key_mrsigner(), tok->mrsigner, 32);
	memcpy(tok->cpusvnle, cpu->keys.cpusvn, 16);
	tok->isvprodidle = 0x20;
	tok->isvsvnle = 1;
	tok->maskedattributesle.flags = SGX_ATTR_EINITTOKENKEY;
	memset(tok->keyid, 0x42, 32);
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			le_hash[8 * i + b] = (uint8_t)(cpu->lepubkeyhash[i] >> (8 * b));
	REQUIRE(sgx_launch_key(&cpu->keys, tok, le_hash, key) == 0);
	REQUIRE(sgx_cmac(key, tok, 192, tok->mac) == 0);
}

#define TSETUP() \
	struct sgx_cpu cpu; \
	struct sgx_sigstruct *sig = tiny_sig(STD_FLAGS); \
	struct sgx_einittoken *tok = t_token(); \
	REQUIRE(tiny(&cpu, STD_FLAGS, 0)); \
	REQUIRE(t_sign_key(sig)); \
	make_token(&cpu, tok, STD_FLAGS)

/* Re-MAC @tok after editing it, as a (malicious or buggy) LE would. */
static void remac(struct sgx_cpu *cpu, struct sgx_einittoken *tok)
{
	uint8_t le_hash[32], key[16];

	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			le_hash[8 * i + b] = (uint8_t)(cpu->lepubkeyhash[i] >> (8 * b));
	REQUIRE(sgx_launch_key(&cpu->keys, tok, le_hash, key) == 0);
	REQUIRE(sgx_cmac(key, tok, 192, tok->mac) == 0);
}

TEST(einit_token_ok_with_intel_msrs)
{
	TSETUP();

	/* MSRs at reset (Intel's LE): the token launches a foreign signer */
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_token_debug_le_production_enclave)
{
	struct sgx_cpu cpu;
	struct sgx_sigstruct *sig = tiny_sig(SGX_ATTR_MODE64BIT);
	struct sgx_einittoken *tok = t_token();

	REQUIRE(tiny(&cpu, SGX_ATTR_MODE64BIT, 0));
	REQUIRE(t_sign_key(sig));
	make_token(&cpu, tok, SGX_ATTR_MODE64BIT);
	tok->maskedattributesle.flags |= SGX_ATTR_DEBUG;
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
}

TEST(einit_token_reserved_einittoken)
{
	TSETUP();

	/* each one with a correct MAC, so only the reserved check refuses it */
	tok->valid |= 2;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	make_token(&cpu, tok, STD_FLAGS);
	tok->reserved1[43] = 1;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	make_token(&cpu, tok, STD_FLAGS);
	tok->reserved3[31] = 1;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	make_token(&cpu, tok, STD_FLAGS);
	tok->reserved4[0] = 1;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	make_token(&cpu, tok, STD_FLAGS);
	CHECK_EQ(EINIT(), 0);
}

TEST(einit_token_cpusvn_too_new)
{
	TSETUP();

	memset(tok->cpusvnle, 0xFF, 16);
	CHECK_EQ(EINIT(), SGX_INVALID_CPUSVN);
}

TEST(einit_token_mac_wrong_einittoken)
{
	TSETUP();

	tok->mac[15] ^= 1;
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
	/* a MACed field changed after MACing */
	make_token(&cpu, tok, STD_FLAGS);
	tok->isvsvnle = 0;	/* not MACed, but a launch-key input */
	CHECK_EQ(EINIT(), SGX_INVALID_EINITTOKEN);
}

TEST(einit_token_wrong_mrenclave_measurement)
{
	TSETUP();

	tok->mrenclave[0] ^= 1;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_MEASUREMENT);
}

TEST(einit_token_wrong_mrsigner_measurement)
{
	TSETUP();

	tok->mrsigner[31] ^= 1;
	remac(&cpu, tok);
	CHECK_EQ(EINIT(), SGX_INVALID_MEASUREMENT);
}

TEST(einit_token_wrong_attributes)
{
	TSETUP();

	make_token(&cpu, tok, SGX_ATTR_MODE64BIT);	/* SECS has DEBUG too */
	CHECK_EQ(EINIT(), SGX_INVALID_ATTRIBUTE);
}

/* ---- after EINIT ---- */

TEST(einit_then_eadd_gp)
{
	SETUP();

	REQUIRE_EQ(EINIT(), 0);
	CHECK_EQ(t_eadd(&cpu, 0, 3, T_BASE, SGX_SECINFO_REG | 3, t_page()), SGX_GP);
	CHECK(!cpu.epcm[3].valid);
}

TEST(einit_then_eextend_gp)
{
	SETUP();

	REQUIRE_EQ(EINIT(), 0);
	CHECK_EQ(sgx_eextend(&cpu, t_epc(&cpu, 0), t_epc(&cpu, 1)), SGX_GP);
}
