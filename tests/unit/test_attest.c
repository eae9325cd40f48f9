// SPDX-License-Identifier: MIT
/*
 * Remote attestation (src/attest): quotes as the QE makes them, checked
 * field by field against the facts sheet's layout with OpenSSL directly,
 * and the verifier's refusals: another root, a flipped bit anywhere in the
 * signed data, a swapped attestation key, a revoked PCK certificate, an
 * out-of-date TCB, a QE identity mismatch, a DEBUG enclave when production
 * is required, truncated quotes, certificates out of order.
 *
 * The platform is a secrets file in the build directory (one per test
 * binary run), so the tests never touch the user's own.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "test.h"
#include "aesm_client.h"
#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "attest/json.h"
#include "attest/pck_ext.h"
#include "attest/quote.h"
#include "attest/verify.h"
#include "base/secrets.h"
#include "sgxemu/attest.h"

__attribute__((constructor)) static void use_test_platform(void)
{
	tc_attest_platform();
}

/* What EREPORT does for an application enclave targeting the QE. */
static void app_report(struct sgx_report *r, uint64_t flags, uint8_t fill)
{
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	uint8_t rd[64];

	memset(&id, 0, sizeof(id));
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT | flags;
	id.attributes.xfrm = 3;
	memset(id.mrenclave, 0xa5, 32);
	memset(id.mrsigner, 0x5a, 32);
	id.isvprodid = 7;
	id.isvsvn = 3;
	memset(rd, fill, sizeof(rd));
	sgxemu_qe_target_info(&ti, NULL, 0);
	sgx_build_report(&tc_attest()->keys, &id, &ti, rd, r);
}

static uint8_t *make_quote(uint64_t flags, size_t *len)
{
	struct sgx_report r;
	uint8_t *q = NULL;
	char why[256];
	int ret;

	app_report(&r, flags, 0x42);
	ret = sgxemu_quote_generate(&r, &q, len, why, sizeof(why));
	if (ret)
		test_fail(__FILE__, __LINE__, "quote: %d %s", ret, why);
	return q;
}

static int verify_with(const uint8_t *q, size_t len,
		       const struct sgxemu_collateral *c,
		       struct sgxemu_verify_result *res)
{
	struct sgxemu_verify_opts o = { .collateral = c };

	return sgxemu_quote_verify(q, len, &o, res);
}

/* A quote and this platform's collateral, or NULL (the test failed). */
static uint8_t *quote_and_collateral(size_t *len, struct sgxemu_collateral *c)
{
	uint8_t *q = make_quote(0, len);
	char why[256];

	if (q && sgxemu_collateral_make(NULL, c, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "collateral: %s", why);
		free(q);
		q = NULL;
	}
	return q;
}

TEST(quote_verifies_and_reports_the_enclave)
{
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q);
	REQUIRE_EQ(sgxemu_quote_verify(q, len, NULL, &res), 0);
	CHECK_EQ(res.status, 0);
	CHECK(!strcmp(res.status_name, "STATUS_OK"));
	CHECK(!strcmp(res.tcb_status, "UpToDate"));
	CHECK(!strcmp(res.qe_tcb_status, "UpToDate"));
	CHECK(res.have_report);
	CHECK_EQ(res.report.isvprodid, 7);
	CHECK_EQ(res.report.isvsvn, 3);
	CHECK_EQ(res.report.mrenclave[0], 0xa5);
	CHECK_EQ(res.report.mrsigner[31], 0x5a);
	CHECK_EQ(res.report.report_data[63], 0x42);
	free(q);
}

/* The layout of facts §1.2-1.5, read with plain offsets and OpenSSL. */
TEST(quote_layout_is_quote_v3)
{
	static const uint8_t intel_vendor[16] = {
		0x93, 0x9a, 0x72, 0x33, 0xf7, 0x9c, 0x4c, 0xa9,
		0x94, 0x0a, 0x0d, 0xb3, 0x95, 0x7f, 0x06, 0x07 };
	struct sgx_attest *a = tc_attest();
	uint8_t hash[32], buf[96];
	uint16_t u16;
	uint32_t siglen, certlen;
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q && a);
	memcpy(&u16, q, 2);
	CHECK_EQ(u16, 3);
	memcpy(&u16, q + 2, 2);
	CHECK_EQ(u16, 2);
	memcpy(&u16, q + 8, 2);
	CHECK_EQ(u16, SGX_QE_ISVSVN);
	CHECK_MEM(q + 12, intel_vendor, 16);
	CHECK_MEM(q + 28, a->qe_id, 16);
	memcpy(&siglen, q + 432, 4);
	CHECK_EQ(siglen + 436, len);
	memcpy(&u16, q + 1012, 2);
	CHECK_EQ(u16, 32);
	for (int i = 0; i < 32; i++)
		CHECK_EQ(q[1014 + i], i);
	memcpy(&u16, q + 1046, 2);
	CHECK_EQ(u16, 5);
	memcpy(&certlen, q + 1048, 4);
	CHECK_EQ(1052 + certlen, len);
	CHECK_EQ(q[len - 1], 0);
	/* QE report data = SHA-256(attestation key || auth data). */
	memcpy(buf, q + 500, 64);
	memcpy(buf + 64, q + 1014, 32);
	EVP_Digest(buf, 96, hash, NULL, EVP_sha256(), NULL);
	CHECK_MEM(q + 564 + 320, hash, 32);
	/* The QE report is the QE's identity. */
	CHECK_MEM(q + 564 + 128, a->qe.mrsigner, 32);
	memcpy(&u16, q + 564 + 256, 2);
	CHECK_EQ(u16, SGX_QE_ISVPRODID);
	free(q);
}

/* The PCK certificate: the SGX extension as DER that OpenSSL can walk. */
TEST(pck_certificate_has_sgx_extension)
{
	struct sgx_attest *a = tc_attest();
	ASN1_OBJECT *obj = OBJ_txt2obj("1.2.840.113741.1.13.1", 1);
	X509_EXTENSION *ext;
	const ASN1_OCTET_STRING *v;
	const unsigned char *p;
	long len;
	int tag, cls, idx;

	REQUIRE(a && obj);
	CHECK(X509_verify(a->pck, X509_get0_pubkey(a->pki.ca)) == 1);
	idx = X509_get_ext_by_OBJ(a->pck, obj, -1);
	ASN1_OBJECT_free(obj);
	REQUIRE(idx >= 0);
	ext = X509_get_ext(a->pck, idx);
	CHECK(!X509_EXTENSION_get_critical(ext));
	v = X509_EXTENSION_get_data(ext);
	p = ASN1_STRING_get0_data(v);
	CHECK(ASN1_get_object(&p, &len, &tag, &cls, ASN1_STRING_length(v)) == 0x20);
	CHECK_EQ(tag, V_ASN1_SEQUENCE);
	/* FMSPC "SGXEMU" and the PCE-ID 0000 as OCTET STRINGs. */
	CHECK(memmem(ASN1_STRING_get0_data(v), (size_t)ASN1_STRING_length(v),
		     "\x04\x06SGXEMU", 8) != NULL);
	CHECK(memmem(ASN1_STRING_get0_data(v), (size_t)ASN1_STRING_length(v),
		     "\x03\x04\x02\x00\x00", 5) != NULL);
	/* The PCK key is the one the QE report signature verifies under. */
	CHECK_EQ(EVP_PKEY_eq(X509_get0_pubkey(a->pck), a->pck_key), 1);
	CHECK(X509_get_ext_by_NID(a->pki.root, NID_crl_distribution_points, -1) >= 0);
}

TEST(pck_extension_decoder_rules)
{
	struct sgx_pck_ext e, d;
	uint8_t *der;
	size_t len;

	memset(&e, 0, sizeof(e));
	for (int i = 0; i < 16; i++)
		e.comp[i] = e.cpusvn[i] = (uint8_t)(i * 9);
	e.pcesvn = 300;
	memcpy(e.fmspc, "ABCDEF", 6);
	der = sgx_pck_ext_encode(&e, &len);
	REQUIRE(der);
	REQUIRE_EQ(sgx_pck_ext_decode(der, len, &d), 0);
	CHECK_MEM(d.comp, e.comp, 16);
	CHECK_EQ(d.pcesvn, 300);
	CHECK_MEM(d.fmspc, "ABCDEF", 6);
	/* Every truncation, and trailing bytes, are refused. */
	for (size_t n = 0; n < len; n++)
		CHECK_EQ(sgx_pck_ext_decode(der, n, &d), -1);
	free(der);
}

TEST(report_not_for_the_qe_is_refused)
{
	struct sgx_report r;
	struct sgx_key_identity id;
	struct sgx_targetinfo other;
	uint8_t *q = NULL, rd[64] = { 0 };
	size_t len;
	char why[256];

	app_report(&r, 0, 1);
	r.body.report_data[5] ^= 1;
	CHECK_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)),
		 AESM_INVALID_REPORT);
	CHECK(strstr(why, "MAC") != NULL);
	app_report(&r, 0, 1);
	r.mac[0] ^= 0x80;
	CHECK_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)),
		 AESM_INVALID_REPORT);
	/* Targeted at another enclave: its MAC is under another key. */
	memset(&id, 0, sizeof(id));
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	memset(&other, 0, sizeof(other));
	memset(other.measurement, 0x11, 32);
	other.attributes = id.attributes;
	sgx_build_report(&tc_attest()->keys, &id, &other, rd, &r);
	CHECK_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)),
		 AESM_INVALID_REPORT);
	CHECK(q == NULL);
}

/* One flipped bit in any byte the signatures cover is refused. */
TEST(flipped_bit_anywhere_is_refused)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	size_t len, refused = 0, tried = 0;
	uint8_t *q = quote_and_collateral(&len, &c);

	REQUIRE(q);
	REQUIRE_EQ(verify_with(q, len, &c, &res), 0);
	for (size_t off = 0; off < len; off++) {
		/* The certificate chain's text: every 5th byte is enough to
		 * cover its PEM lines; the rest of the quote byte by byte. */
		if (off >= 1052 && off % 5)
			continue;
		q[off] ^= (uint8_t)(1u << (off % 8));
		tried++;
		if (verify_with(q, len, &c, &res))
			refused++;
		else
			test_fail(__FILE__, __LINE__, "bit %zu of byte %zu flipped: "
				  "accepted", off % 8, off);
		q[off] ^= (uint8_t)(1u << (off % 8));
	}
	CHECK_EQ(refused, tried);
	CHECK_EQ(verify_with(q, len, &c, &res), 0);
	sgxemu_collateral_free(&c);
	free(q);
}

TEST(each_signature_names_its_check)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = quote_and_collateral(&len, &c);

	REQUIRE(q);
	q[100] ^= 1;			/* application report body */
	CHECK_EQ(verify_with(q, len, &c, &res), ST_INVALID_QUOTE_SIGNATURE);
	CHECK(!strcmp(res.check, "quote signature"));
	q[100] ^= 1;
	q[564 + 64] ^= 1;		/* QE report's MRENCLAVE */
	CHECK_EQ(verify_with(q, len, &c, &res), ST_INVALID_QE_REPORT_SIGNATURE);
	CHECK(!strcmp(res.check, "QE report signature"));
	q[564 + 64] ^= 1;
	q[1020] ^= 1;			/* QE authentication data */
	CHECK_EQ(verify_with(q, len, &c, &res), ST_INVALID_QE_REPORT_DATA);
	CHECK(!strcmp(res.check, "attestation key binding"));
	q[1020] ^= 1;
	q[12] ^= 1;			/* vendor id */
	CHECK_EQ(verify_with(q, len, &c, &res), ST_UNSUPPORTED_QUOTE_FORMAT);
	CHECK(!strcmp(res.check, "quote format"));
	q[12] ^= 1;
	CHECK_EQ(verify_with(q, len, &c, &res), 0);
	sgxemu_collateral_free(&c);
	free(q);
}

/* A new attestation key, quote re-signed with it: the QE report (signed
 * by the PCK key) does not bind it. */
TEST(qe_report_not_binding_the_key_is_refused)
{
	struct sgxemu_verify_result res;
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q && k);
	REQUIRE_EQ(sgx_p256_to_raw(k, q + 500), 0);
	REQUIRE_EQ(sgx_ecdsa_sign(k, q, 432, q + 436), 0);
	CHECK_EQ(sgxemu_quote_verify(q, len, NULL, &res), ST_INVALID_QE_REPORT_DATA);
	CHECK(!strcmp(res.check, "attestation key binding"));
	EVP_PKEY_free(k);
	free(q);
}

TEST(another_root_is_refused)
{
	struct sgx_pki other;
	struct sgxemu_verify_opts o = { 0 };
	struct sgxemu_verify_result res;
	char dir[512], why[256], *pem = NULL;
	size_t len, plen = 0;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q);
	snprintf(dir, sizeof(dir), "%s/tmp-attest/other-%d.pki", test_build_dir(),
		 (int)getpid());
	REQUIRE_EQ(sgx_pki_open(dir, &other, why, sizeof(why)), 0);
	/* Same names, another key: only the signature bytes tell them apart. */
	REQUIRE_EQ(sgx_pem_append(&pem, &plen, other.root), 0);
	o.trusted_root_pem = pem;
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res), ST_PCK_CERT_CHAIN_UNTRUSTED);
	CHECK(!strcmp(res.check, "trusted root"));
	/* Not a certificate at all. */
	o.trusted_root_pem = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res),
		 ST_TRUSTED_ROOT_CA_UNSUPPORTED_FORMAT);
	sgx_pki_close(&other);
	free(pem);
	free(q);
}

/* Verify @q under collateral made with @co. */
static int verify_under(const struct sgxemu_collateral_opts *co, const uint8_t *q,
			size_t len, struct sgxemu_verify_result *res)
{
	struct sgxemu_collateral c;
	char why[256];
	int st;

	if (sgxemu_collateral_make(co, &c, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "collateral: %s", why);
		return -1;
	}
	st = verify_with(q, len, &c, res);
	sgxemu_collateral_free(&c);
	return st;
}

/* The collateral options: a revoked PCK, an out-of-date TCB, an old QE. */
TEST(revoked_pck_and_out_of_date_tcb_are_refused)
{
	struct sgxemu_collateral_opts rev = { .pck_revoked = true };
	struct sgxemu_collateral_opts tcb = { .tcb_out_of_date = true };
	struct sgxemu_collateral_opts qe = { .qe_out_of_date = true };
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q);
	CHECK_EQ(verify_under(&rev, q, len, &res), ST_PCK_REVOKED);
	CHECK(!strcmp(res.check, "PCK CRL"));
	CHECK_EQ(verify_under(&tcb, q, len, &res), ST_TCB_OUT_OF_DATE);
	CHECK(!strcmp(res.tcb_status, "OutOfDate"));
	CHECK(!strcmp(res.check, "TCB level"));
	CHECK_EQ(verify_under(&qe, q, len, &res), ST_TCB_OUT_OF_DATE);
	CHECK(!strcmp(res.tcb_status, "UpToDate"));
	CHECK(!strcmp(res.qe_tcb_status, "OutOfDate"));
	free(q);
}

/*
 * A TCB recovery (issue 44): quotes made before and after the platform
 * took a microcode update. The QE follows the new CPUSVN (a PCK
 * certificate for the new TCB); collateral lists both levels, UpToDate,
 * or with tcb_recovery the old one OutOfDate. A platform of its own: the
 * shared one must keep its CPUSVN for the other tests.
 */
TEST(tcb_recovery_collateral_moves_old_quotes_out_of_date)
{
	static const uint8_t v3[16] = { 2, 3, 2, 2, 2, 2, 2, 2,
					2, 2, 2, 2, 2, 2, 2, 2 };
	struct sgxemu_collateral_opts none = { 0 };
	struct sgxemu_collateral_opts rec = { .tcb_recovery = true };
	struct sgxemu_verify_result res;
	char path[512], why[256];
	uint8_t *q0, *q1;
	size_t l0, l1;

	snprintf(path, sizeof(path), "%s/tmp-attest/recovery-%d", test_build_dir(),
		 (int)getpid());
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	q0 = make_quote(0, &l0);
	REQUIRE(q0);
	CHECK(tc_attest()->keys.cpusvn[1] == 2);
	/* `update-svn`, then an EUPDATESVN that took it and recorded it. */
	REQUIRE_EQ(sgx_secrets_set_pending(path, v3, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_commit_svn(path, v3, why, sizeof(why)), 0);
	q1 = make_quote(0, &l1);
	REQUIRE(q1);
	CHECK_MEM(tc_attest()->keys.cpusvn, v3, 16);
	CHECK_MEM(tc_attest()->pck_ext.cpusvn, v3, 16);
	/* The report bodies carry each CPUSVN (header 48 bytes). */
	CHECK_EQ(q0[48 + 1], 2);
	CHECK_EQ(q1[48 + 1], 3);

	CHECK_EQ(verify_under(&none, q0, l0, &res), ST_OK);
	CHECK(!strcmp(res.tcb_status, "UpToDate"));
	CHECK_EQ(verify_under(&none, q1, l1, &res), ST_OK);
	CHECK_EQ(verify_under(&rec, q0, l0, &res), ST_TCB_OUT_OF_DATE);
	CHECK(!strcmp(res.tcb_status, "OutOfDate"));
	CHECK(!strcmp(res.check, "TCB level"));
	CHECK_EQ(verify_under(&rec, q1, l1, &res), ST_OK);
	CHECK(!strcmp(res.tcb_status, "UpToDate"));
	free(q0);
	free(q1);
}

/* Re-sign the QE identity with @from replaced by @to, as a TCB signer
 * publishing another QE would. */
static void resign_qe_identity(struct sgxemu_collateral *c, const char *from,
			       const char *to)
{
	char *s = c->qe_identity, *body, *end, *at;
	uint8_t sig[64];

	at = strstr(s, from);
	if (!at || strlen(from) != strlen(to)) {
		test_fail(__FILE__, __LINE__, "no '%s' in the QE identity", from);
		return;
	}
	memcpy(at, to, strlen(to));
	body = s + strlen("{\"enclaveIdentity\":");
	end = strstr(s, ",\"signature\":\"");
	sgx_ecdsa_sign(tc_attest()->pki.tcb_key, body, (size_t)(end - body), sig);
	for (int i = 0; i < 64; i++)
		snprintf(end + 14 + 2 * i, 3, "%02x", sig[i]);
	end[14 + 128] = '"';
}

TEST(qe_identity_mismatch_is_refused)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = make_quote(0, &len);
	char why[256], from[80];

	REQUIRE(q);
	REQUIRE_EQ(sgxemu_collateral_make(NULL, &c, why, sizeof(why)), 0);
	snprintf(from, sizeof(from), "\"mrsigner\":\"%02X", tc_attest()->qe.mrsigner[0]);
	resign_qe_identity(&c, from, "\"mrsigner\":\"00");
	CHECK_EQ(verify_with(q, len, &c, &res), ST_QE_IDENTITY_MISMATCH);
	CHECK(!strcmp(res.check, "QE identity match"));
	CHECK(strstr(res.why, "MRSIGNER") != NULL);
	sgxemu_collateral_free(&c);

	REQUIRE_EQ(sgxemu_collateral_make(NULL, &c, why, sizeof(why)), 0);
	resign_qe_identity(&c, "\"isvprodid\":1,", "\"isvprodid\":9,");
	CHECK_EQ(verify_with(q, len, &c, &res), ST_QE_IDENTITY_MISMATCH);
	CHECK(strstr(res.why, "ISVPRODID") != NULL);
	sgxemu_collateral_free(&c);

	/* A change without re-signing breaks the signature instead. */
	REQUIRE_EQ(sgxemu_collateral_make(NULL, &c, why, sizeof(why)), 0);
	memcpy(strstr(c.qe_identity, "\"isvprodid\":1,"), "\"isvprodid\":9,", 14);
	CHECK_EQ(verify_with(q, len, &c, &res), ST_ENCLAVE_IDENTITY_INVALID_SIGNATURE);
	sgxemu_collateral_free(&c);
	free(q);
}

TEST(debug_enclave_refused_when_production_required)
{
	struct sgxemu_verify_opts o = { .require_production = true };
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = make_quote(SGX_ATTR_DEBUG, &len);

	REQUIRE(q);
	CHECK_EQ(sgxemu_quote_verify(q, len, NULL, &res), 0);
	CHECK(res.report.attributes.flags & SGX_ATTR_DEBUG);
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res), ST_REPORT_ATTRIBUTES_MISMATCH);
	CHECK(!strcmp(res.check, "production enclave"));
	free(q);
	q = make_quote(0, &len);
	REQUIRE(q);
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res), 0);
	free(q);
}

TEST(truncated_quotes_are_refused)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = quote_and_collateral(&len, &c);

	REQUIRE(q);
	for (size_t n = 0; n < len; n += (n < 1100 ? 1 : 97)) {
		/* A copy of exactly n bytes, so ASan sees any over-read. */
		uint8_t *t = malloc(n ? n : 1);

		memcpy(t, q, n);
		if (verify_with(t, n, &c, &res) == 0)
			test_fail(__FILE__, __LINE__, "%zu bytes accepted", n);
		free(t);
	}
	CHECK_EQ(verify_with(NULL, 0, &c, &res), ST_MISSING_PARAMETERS);
	sgxemu_collateral_free(&c);
	free(q);
}

TEST(chain_out_of_order_is_refused)
{
	struct sgxemu_verify_result res;
	struct sgx_attest *a = tc_attest();
	char *pem = NULL;
	size_t len, plen = 0;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q && a);
	/* Same certificates, same length: CA, PCK, root. */
	sgx_pem_append(&pem, &plen, a->pki.ca);
	sgx_pem_append(&pem, &plen, a->pck);
	sgx_pem_append(&pem, &plen, a->pki.root);
	REQUIRE_EQ(plen + 1 + 1052, len);
	memcpy(q + 1052, pem, plen);
	CHECK_EQ(sgxemu_quote_verify(q, len, NULL, &res), ST_UNSUPPORTED_CERT_FORMAT);
	CHECK(strstr(res.why, "out of order") != NULL);
	free(pem);
	free(q);
}

TEST(expired_collateral_is_refused)
{
	struct sgxemu_verify_opts o = { 0 };
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	size_t len;
	uint8_t *q = quote_and_collateral(&len, &c);

	REQUIRE(q);
	o.collateral = &c;
	o.now = time(NULL) + 40 * 86400L;	/* past the CRLs' nextUpdate */
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res), ST_CRL_EXPIRED);
	sgxemu_collateral_free(&c);
	free(q);
}

/*
 * A verifier takes its check date, then fetches: collateral made a few
 * seconds after that date (a slow PCCS, a second boundary between the two)
 * is already valid at it, as a real PCS's is.
 */
TEST(collateral_made_after_the_check_date_is_valid_at_it)
{
	struct sgxemu_collateral_opts co = { 0 };
	struct sgxemu_verify_opts o = { 0 };
	struct sgxemu_collateral c;
	struct sgxemu_verify_result res;
	char why[256];
	time_t date = time(NULL);
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q);
	co.now = date + 5;
	REQUIRE_EQ(sgxemu_collateral_make(&co, &c, why, sizeof(why)), 0);
	o.collateral = &c;
	o.now = date;
	CHECK_EQ(sgxemu_quote_verify(q, len, &o, &res), ST_OK);
	sgxemu_collateral_free(&c);
	free(q);
}

TEST(collateral_files_round_trip)
{
	struct sgxemu_collateral c, r;
	struct sgxemu_verify_result res;
	char dir[512], why[256];
	size_t len;
	uint8_t *q = make_quote(0, &len);

	REQUIRE(q);
	snprintf(dir, sizeof(dir), "%s/tmp-attest/col-%d", test_build_dir(),
		 (int)getpid());
	REQUIRE_EQ(sgxemu_collateral_make(NULL, &c, why, sizeof(why)), 0);
	REQUIRE_EQ(sgxemu_collateral_write(&c, dir, why, sizeof(why)), 0);
	REQUIRE_EQ(sgxemu_collateral_read(dir, &r, why, sizeof(why)), 0);
	CHECK(!strcmp(c.tcb_info, r.tcb_info));
	CHECK_EQ(c.pck_crl_len, r.pck_crl_len);
	CHECK_EQ(verify_with(q, len, &r, &res), 0);
	sgxemu_collateral_free(&c);
	sgxemu_collateral_free(&r);
	free(q);
}

TEST(json_reader_limits)
{
	static struct json_doc d;
	char deep[64];
	int n;

	static const char ok[] = "{\"a\":[1,2,{\"b\":\"c\"}],\"t\":true}";
	int third;

	CHECK_EQ(json_parse(&d, ok, strlen(ok), NULL, 0), 0);
	n = json_member(&d, 0, "a");
	CHECK_EQ(json_len(&d, n), 3);
	third = d.nodes[d.nodes[d.nodes[n].child].next].next;
	CHECK(json_str_is(&d, json_member(&d, third, "b"), "c"));
	CHECK(d.nodes[json_member(&d, 0, "t")].truth);
	CHECK_EQ(json_parse(&d, "{\"a\":1,}", 8, NULL, 0), -1);
	CHECK_EQ(json_parse(&d, "{\"a\":-1}", 8, NULL, 0), -1);
	CHECK_EQ(json_parse(&d, "{\"a\":1.5}", 9, NULL, 0), -1);
	CHECK_EQ(json_parse(&d, "{\"a\":\"x", 7, NULL, 0), -1);
	CHECK_EQ(json_parse(&d, "[99999999999999999999]", 22, NULL, 0), -1);
	CHECK_EQ(json_parse(&d, "{} {}", 5, NULL, 0), -1);
	memset(deep, '[', sizeof(deep));
	CHECK_EQ(json_parse(&d, deep, sizeof(deep), NULL, 0), -1);
}

TEST(quotes_of_one_platform_share_the_pck_certificate)
{
	struct sgx_attest fresh;
	char path[512], why[256];

	snprintf(path, sizeof(path), "%s/tmp-attest/secrets", test_build_dir());
	REQUIRE(tc_attest());
	/* A second context on the same secrets file: same keys, same PCK
	 * certificate, as another process of the platform sees them. */
	REQUIRE_EQ(sgx_attest_open(&fresh, path, why, sizeof(why)), 0);
	CHECK_MEM(fresh.att_pub, tc_attest()->att_pub, 64);
	CHECK_MEM(fresh.qe_id, tc_attest()->qe_id, 16);
	CHECK_EQ(X509_cmp(fresh.pck, tc_attest()->pck), 0);
	sgx_attest_close(&fresh);
}

/* The identities the guide publishes (section 3.4) stay what they are. */
TEST(published_qe_and_pce_identities)
{
	uint8_t qe_mre[32], pce_mre[32], signer[32];
	struct sgx_key_identity qe, pce;

	test_unhex("474264723ab838c47e2c70a48cb57f673105784dc70bd7e640ae03d854eb06c3",
		   qe_mre, 32);
	test_unhex("757bf94b614bd9e89cdc7aba1c1bd29496a4e225efed65f5b9df00695ca6dc98",
		   pce_mre, 32);
	test_unhex("25beed808e94914fef0e1279b1a11129024aa9686c00e5f2541efbb453f688a5",
		   signer, 32);
	sgx_qe_identity(&qe);
	sgx_pce_identity(&pce);
	CHECK_MEM(qe.mrenclave, qe_mre, 32);
	CHECK_MEM(pce.mrenclave, pce_mre, 32);
	CHECK_MEM(qe.mrsigner, signer, 32);
	CHECK_MEM(pce.mrsigner, signer, 32);
	CHECK_EQ(qe.isvprodid, 1);
	CHECK_EQ(qe.isvsvn, 2);
	CHECK_EQ(pce.isvprodid, 0);
	CHECK_EQ(qe.attributes.flags, 0x15);
}
