// SPDX-License-Identifier: MIT
/*
 * libsgx_dcap_quoteverify.so.1 (src/dcap/qv*.c) through its ABI: quotes
 * of this test's platform verified with collateral handed in the three
 * encodings the ABI carries (1.0 PEM CRLs, 3.0 hex, 3.1 DER), the
 * verdicts and codes of Intel's library (non-terminal results succeed,
 * revocation does not), the collateral's expiry at the check date, the
 * supplemental data field by field against what the platform put into
 * its PCK certificate and what OpenSSL reads from the collateral, and
 * every parameter and format refusal; the QvE-checked calls' REPORT
 * checked as Intel's TVL checks it inside the caller's enclave.
 * Collateral from a quote provider is test_dcap_samples.sh's and
 * test_pccs's (it needs a server).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "test.h"
#include "aesm_client.h"
#include "attest/attest.h"
#include "attest/verify.h"
#include "dcap/dcap.h"
#include "sgxemu/attest.h"

/* The library's entry points (exported; declared in Intel's header). */
quote3_error_t sgx_qv_set_enclave_load_policy(uint32_t policy);
quote3_error_t sgx_qv_get_quote_supplemental_data_size(uint32_t *size);
quote3_error_t sgx_qv_verify_quote(const uint8_t *, uint32_t,
				   const sgx_ql_qve_collateral_t *, time_t,
				   uint32_t *, sgx_ql_qv_result_t *,
				   sgx_ql_qe_report_info_t *, uint32_t, uint8_t *);
quote3_error_t tee_get_supplemental_data_version_and_size(const uint8_t *,
	uint32_t, uint32_t *, uint32_t *);
quote3_error_t tee_verify_quote(const uint8_t *, uint32_t, const uint8_t *,
				time_t, uint32_t *, sgx_ql_qv_result_t *,
				sgx_ql_qe_report_info_t *,
				tee_supp_data_descriptor_t *);
quote3_error_t tee_get_fmspc_from_quote(const uint8_t *, uint32_t, uint8_t *,
					uint32_t);
quote3_error_t sgx_qv_set_path(uint32_t type, const char *path);

__attribute__((constructor)) static void use_test_platform(void)
{
	tc_attest_platform();
	setenv("SGXEMU_QV_QUIET", "1", 1);
	unsetenv("SGXEMU_TRUSTED_ROOT");
}

static uint8_t *make_quote(size_t *len)
{
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t rd[64], *q = NULL;
	char why[256];

	memset(&id, 0, sizeof(id));
	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	id.attributes.xfrm = 3;
	memset(id.mrenclave, 0x11, 32);
	memset(id.mrsigner, 0x22, 32);
	memset(rd, 0x33, sizeof(rd));
	sgxemu_qe_target_info(&ti, NULL, 0);
	sgx_build_report(&tc_attest()->keys, &id, &ti, rd, &r);
	if (sgxemu_quote_generate(&r, &q, len, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "quote: %s", why);
	return q;
}

/* The ABI's collateral: every buffer malloc'd (free_abi). */
struct abi {
	sgx_ql_qve_collateral_t c;
};

static char *dup_text(const char *s, uint32_t *size)
{
	*size = (uint32_t)strlen(s) + 1;
	return strdup(s);
}

/* A DER CRL as the collateral @version carries it. */
static char *crl_as(const uint8_t *der, size_t len, uint32_t version, uint32_t *size)
{
	char *out;

	if (version == QVE_COLLATERAL_VERSION1) {
		const unsigned char *p = der;
		X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)len);
		BIO *b = BIO_new(BIO_s_mem());
		char *mem;
		long n;

		PEM_write_bio_X509_CRL(b, crl);
		n = BIO_get_mem_data(b, &mem);
		out = malloc((size_t)n + 1);
		memcpy(out, mem, (size_t)n);
		out[n] = '\0';
		*size = (uint32_t)n + 1;
		BIO_free(b);
		X509_CRL_free(crl);
	} else if (version == QVE_COLLATERAL_VERSION3) {
		out = malloc(2 * len + 1);
		for (size_t i = 0; i < len; i++)
			snprintf(out + 2 * i, 3, "%02x", der[i]);
		*size = (uint32_t)(2 * len + 1);
	} else {
		out = malloc(len);
		memcpy(out, der, len);
		*size = (uint32_t)len;
	}
	return out;
}

static sgx_ql_qve_collateral_t *to_abi(const struct sgxemu_collateral *s,
				       uint32_t version)
{
	struct abi *a = calloc(1, sizeof(*a));
	sgx_ql_qve_collateral_t *c = &a->c;

	c->version = version;
	c->pck_crl_issuer_chain = dup_text(s->pck_chain, &c->pck_crl_issuer_chain_size);
	c->tcb_info_issuer_chain = dup_text(s->tcb_chain, &c->tcb_info_issuer_chain_size);
	c->qe_identity_issuer_chain = dup_text(s->tcb_chain,
					       &c->qe_identity_issuer_chain_size);
	c->tcb_info = dup_text(s->tcb_info, &c->tcb_info_size);
	c->qe_identity = dup_text(s->qe_identity, &c->qe_identity_size);
	c->root_ca_crl = crl_as(s->root_crl, s->root_crl_len, version,
				&c->root_ca_crl_size);
	c->pck_crl = crl_as(s->pck_crl, s->pck_crl_len, version, &c->pck_crl_size);
	return c;
}

static void free_abi(sgx_ql_qve_collateral_t *c)
{
	if (!c)
		return;
	free(c->pck_crl_issuer_chain);
	free(c->tcb_info_issuer_chain);
	free(c->qe_identity_issuer_chain);
	free(c->tcb_info);
	free(c->qe_identity);
	free(c->root_ca_crl);
	free(c->pck_crl);
	free(c);
}

/* This platform's collateral (@o: variations) in the ABI's form. */
static sgx_ql_qve_collateral_t *collateral(const struct sgxemu_collateral_opts *o,
					   uint32_t version,
					   struct sgxemu_collateral *keep)
{
	struct sgxemu_collateral s;
	sgx_ql_qve_collateral_t *c;
	char why[256];

	if (sgxemu_collateral_make(o, &s, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "collateral: %s", why);
		return NULL;
	}
	c = to_abi(&s, version);
	if (keep)
		*keep = s;
	else
		sgxemu_collateral_free(&s);
	return c;
}

static uint32_t crl_num(const uint8_t *der, size_t len)
{
	const unsigned char *p = der;
	X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)len);
	ASN1_INTEGER *n = crl ? X509_CRL_get_ext_d2i(crl, NID_crl_number, NULL, NULL) : NULL;
	uint32_t v = n ? (uint32_t)ASN1_INTEGER_get(n) : 0xffffffff;

	ASN1_INTEGER_free(n);
	X509_CRL_free(crl);
	return v;
}

/* The value of "key":"YYYY-MM-DDThh:mm:ssZ" at its first occurrence. */
static time_t json_date(const char *json, const char *key)
{
	char pat[64];
	const char *at;
	struct tm tm;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	at = strstr(json, pat);
	if (!at)
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (!strptime(at + strlen(pat), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return -1;
	return timegm(&tm);
}

TEST(supplemental_size_and_version)
{
	uint32_t size = 0, ver = 0;
	uint8_t hdr[1020] = { 3, 0, 2, 0 };
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q);
	CHECK_EQ(sgx_qv_get_quote_supplemental_data_size(&size), 0);
	CHECK_EQ(size, 536u);
	CHECK_EQ(sgx_qv_get_quote_supplemental_data_size(NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	REQUIRE_EQ(tee_get_supplemental_data_version_and_size(q, (uint32_t)len,
							       &ver, &size), 0);
	CHECK_EQ(ver, 0x00030003u);		/* major 3, minor 3 */
	CHECK_EQ(size, 536u);
	CHECK_EQ(tee_get_supplemental_data_version_and_size(q, (uint32_t)len,
							     NULL, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_get_supplemental_data_version_and_size(NULL, 100, &ver, &size),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_get_supplemental_data_version_and_size(q, 4, &ver, &size),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	hdr[4] = 5;				/* tee type neither SGX nor TDX */
	CHECK_EQ(tee_get_supplemental_data_version_and_size(hdr, sizeof(hdr),
							     &ver, &size),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	free(q);
}

/* Every encoding of the collateral verifies, with the supplemental data
 * of this platform. */
TEST(verifies_in_every_collateral_encoding)
{
	static const uint32_t versions[] = { QVE_COLLATERAL_VERSION1,
		QVE_COLLATERAL_VERSION3, QVE_COLLATERAL_VERSION31,
		QVE_COLLATERAL_VERSION4 };
	struct sgx_attest *a = tc_attest();
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		struct sgxemu_collateral s;
		sgx_ql_qve_collateral_t *c = collateral(NULL, versions[i], &s);
		sgx_ql_qv_supplemental_t sup;
		sgx_ql_qv_result_t res = 1;
		uint32_t exp = 7;
		uint8_t key_id[48], *pub = NULL;
		size_t n;
		X509 *root;
		BIO *b;

		REQUIRE(c);
		memset(&sup, 0xee, sizeof(sup));
		CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res,
					     NULL, sizeof(sup), (uint8_t *)&sup), 0);
		CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
		CHECK_EQ(exp, 0u);
		CHECK_EQ(sup.version, 3u);		/* the legacy call: 3.0 */
		CHECK(!memcmp(sup.pck_ppid, a->pck_ext.ppid, 16));
		CHECK(!memcmp(sup.tcb_cpusvn, a->pck_ext.cpusvn, 16));
		CHECK_EQ(sup.tcb_pce_isvsvn, a->pck_ext.pcesvn);
		CHECK_EQ(sup.pce_id, SGX_PCE_ID);
		CHECK_EQ(sup.tee_type, 0u);
		CHECK_EQ(sup.sgx_type, a->pck_ext.sgx_type);
		CHECK_EQ(sup.dynamic_platform, PCK_FLAG_UNDEFINED);
		CHECK_EQ(sup.cached_keys, PCK_FLAG_UNDEFINED);
		CHECK_EQ(sup.smt_enabled, PCK_FLAG_UNDEFINED);
		CHECK_EQ(sup.pck_crl_num, crl_num(s.pck_crl, s.pck_crl_len));
		CHECK_EQ(sup.root_ca_crl_num, crl_num(s.root_crl, s.root_crl_len));
		CHECK(sup.earliest_issue_date <= sup.latest_issue_date);
		CHECK(sup.latest_issue_date <= now + 1);
		CHECK(sup.earliest_expiration_date > now);
		CHECK(sup.earliest_expiration_date <= json_date(s.tcb_info, "nextUpdate"));
		/* The earlier of the TCB info's and the QE identity's level. */
		time_t t1 = json_date(s.tcb_info, "tcbDate");
		time_t t2 = json_date(s.qe_identity, "tcbDate");
		CHECK_EQ(sup.tcb_level_date_tag, t1 < t2 ? t1 : t2);
		CHECK_EQ(sup.qe_iden_tcb_level_date_tag,
			 json_date(s.qe_identity, "tcbDate"));
		CHECK(sup.qe_iden_earliest_expiration_date <=
		      json_date(s.qe_identity, "nextUpdate"));
		CHECK_EQ(sup.qe_iden_status, SGX_QL_QV_RESULT_OK);
		CHECK_EQ(sup.sa_list[0], '\0');
		b = BIO_new_mem_buf(s.root, -1);
		root = PEM_read_bio_X509(b, NULL, NULL, NULL);
		BIO_free(b);
		n = EVP_PKEY_get1_encoded_public_key(X509_get0_pubkey(root), &pub);
		SHA384(pub, n, key_id);
		CHECK(!memcmp(sup.root_key_id, key_id, 48));
		OPENSSL_free(pub);
		X509_free(root);
		sgxemu_collateral_free(&s);
		free_abi(c);
	}
	free(q);
}

TEST(tee_verify_quote_and_its_descriptor)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_supplemental_t sup;
	tee_supp_data_descriptor_t d = { 0, sizeof(sup), (uint8_t *)&sup };
	sgx_ql_qv_result_t res;
	uint32_t exp;
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && c);
	REQUIRE_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				    NULL, &d), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
	CHECK_EQ(sup.major_version, 3);
	CHECK_EQ(sup.minor_version, 3);
	CHECK_EQ(sup.tcb_pce_isvsvn, tc_attest()->pck_ext.pcesvn);
	/* Without a descriptor: the verdict alone. */
	CHECK_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				  NULL, NULL), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
	d.major_version = 4;
	CHECK_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				  NULL, &d), SGX_QL_SUPPLEMENTAL_DATA_VERSION_NOT_SUPPORTED);
	d.major_version = 2;
	CHECK_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				  NULL, &d), SGX_QL_ERROR_INVALID_PARAMETER);
	d.major_version = 3;
	d.data_size = 100;
	CHECK_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				  NULL, &d), SGX_QL_ERROR_INVALID_PARAMETER);
	d.data_size = sizeof(sup);
	d.p_data = NULL;
	CHECK_EQ(tee_verify_quote(q, (uint32_t)len, (uint8_t *)c, now, &exp, &res,
				  NULL, &d), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_verify_quote(NULL, 0, (uint8_t *)c, now, &exp, &res, NULL, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	free_abi(c);
	free(q);
}

/* Out of date is a non-terminal result (success); revocation is not. */
TEST(results_terminal_and_not)
{
	struct sgxemu_collateral_opts tcb = { .tcb_out_of_date = true };
	struct sgxemu_collateral_opts qe = { .qe_out_of_date = true };
	struct sgxemu_collateral_opts rev = { .pck_revoked = true };
	sgx_ql_qv_supplemental_t sup;
	sgx_ql_qv_result_t res;
	uint32_t exp;
	time_t now = time(NULL);
	sgx_ql_qve_collateral_t *c;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q);
	c = collateral(&tcb, QVE_COLLATERAL_VERSION3, NULL);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL,
				     sizeof(sup), (uint8_t *)&sup), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OUT_OF_DATE);
	CHECK_EQ(sup.qe_iden_status, SGX_QL_QV_RESULT_OK);
	free_abi(c);
	c = collateral(&qe, QVE_COLLATERAL_VERSION3, NULL);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL,
				     sizeof(sup), (uint8_t *)&sup), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OUT_OF_DATE);
	CHECK_EQ(sup.qe_iden_status, SGX_QL_QV_RESULT_OUT_OF_DATE);
	free_abi(c);
	c = collateral(&rev, QVE_COLLATERAL_VERSION3, NULL);
	memset(&sup, 0xee, sizeof(sup));
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL,
				     sizeof(sup), (uint8_t *)&sup), SGX_QL_PCK_REVOKED);
	CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
	CHECK(!memcmp(&sup, (uint8_t[sizeof(sup)]){ 0 }, sizeof(sup)));
	free_abi(c);
	free(q);
}

/* The check date past the collateral's expiry: still verified, the
 * expiration status says so; before its issue, the same. */
TEST(expiration_check_date)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_result_t res;
	uint32_t exp;
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && c);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now + 400 * 86400, &exp,
				     &res, NULL, 0, NULL), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
	CHECK_EQ(exp, 1u);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, 86400, &exp, &res, NULL,
				     0, NULL), 0);
	CHECK_EQ(exp, 1u);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL,
				     0, NULL), 0);
	CHECK_EQ(exp, 0u);
	free_abi(c);
	free(q);
}

TEST(bad_parameters)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_supplemental_t sup;
	sgx_ql_qv_result_t res;
	uint32_t exp;
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len);
	uint32_t l;

	REQUIRE(q && c);
	l = (uint32_t)len;
	CHECK_EQ(sgx_qv_verify_quote(NULL, l, c, now, &exp, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, 0, c, now, &exp, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, NULL, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, NULL, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	res = 0;
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, 0, &exp, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, -5, &exp, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, NULL, sizeof(sup), NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, NULL, 0,
				     (uint8_t *)&sup), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, NULL, 100,
				     (uint8_t *)&sup), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, 6, c, now, &exp, &res, NULL, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_set_enclave_load_policy(SGX_QL_PERSISTENT), 0);
	CHECK_EQ(sgx_qv_set_enclave_load_policy(SGX_QL_EPHEMERAL), 0);
	CHECK_EQ(sgx_qv_set_enclave_load_policy(2), SGX_QL_UNSUPPORTED_LOADING_POLICY);
	CHECK_EQ(sgx_qv_set_path(SGX_QV_QPL_PATH, NULL), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_set_path(SGX_QV_QPL_PATH, "/nonexistent/libq.so"),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_set_path(SGX_QV_QPL_PATH, "/tmp"), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_set_path(7, "/bin/true"), SGX_QL_ERROR_INVALID_PARAMETER);
	free_abi(c);
	free(q);
}

/* No collateral and a quote provider that cannot be loaded. */
TEST(no_collateral_and_no_provider)
{
	sgx_ql_qv_result_t res;
	uint32_t exp;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q);
	REQUIRE_EQ(sgx_qv_set_path(SGX_QV_QPL_PATH, "/etc/hostname") ||
		   sgx_qv_set_path(SGX_QV_QPL_PATH, "/etc/passwd"), 0);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, NULL, time(NULL), &exp, &res,
				     NULL, 0, NULL), SGX_QL_PLATFORM_LIB_UNAVAILABLE);
	free(q);
}

TEST(collateral_refusals)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_result_t res;
	uint32_t exp, keep;
	time_t now = time(NULL);
	char *chain;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && c);
	c->version = 2;
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_COLLATERAL_VERSION_NOT_SUPPORTED);
	c->version = QVE_COLLATERAL_VERSION3;
	keep = c->tcb_info_size;
	c->tcb_info_size = keep - 1;		/* its NUL outside */
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_ERROR_INVALID_PARAMETER);
	c->tcb_info_size = keep;
	/* The QE identity vouched for by the PCK chain instead. */
	chain = c->qe_identity_issuer_chain;
	c->qe_identity_issuer_chain = c->pck_crl_issuer_chain;
	keep = c->qe_identity_issuer_chain_size;
	c->qe_identity_issuer_chain_size = c->pck_crl_issuer_chain_size;
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_QEIDENTITY_CHAIN_ERROR);
	c->qe_identity_issuer_chain = chain;
	c->qe_identity_issuer_chain_size = keep;
	/* A TCB info whose signature no longer holds. */
	c->tcb_info[20] ^= 1;
	CHECK(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				  NULL) != 0);
	c->tcb_info[20] ^= 1;
	/* Hex text of a CRL with a digit gone bad: not hex, so taken as DER,
	 * which it is not. */
	c->pck_crl[10] = 'x';
	CHECK(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				  NULL) != 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
	free_abi(c);
	free(q);
}

/* Another root than the one trusted, and none at all. */
TEST(trusted_root_is_the_installations)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_result_t res;
	uint32_t exp;
	char path[] = "/tmp/sgxemu-qv-root-XXXXXX";
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *x = X509_new();
	FILE *f;
	int fd;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && c && k && x);
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
				   (const unsigned char *)"Other SGX Root CA", -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(x));
	X509_gmtime_adj(X509_getm_notBefore(x), 0);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_sign(x, k, EVP_sha256());
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	PEM_write_X509(f, x);
	fclose(f);
	setenv("SGXEMU_TRUSTED_ROOT", path, 1);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, time(NULL), &exp, &res,
				     NULL, 0, NULL), SGX_QL_PCK_CERT_CHAIN_ERROR);
	unlink(path);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, time(NULL), &exp, &res,
				     NULL, 0, NULL), SGX_QL_ROOT_CA_UNTRUSTED);
	setenv("SGXEMU_TRUSTED_ROOT", "/etc/hostname", 1);
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, time(NULL), &exp, &res,
				     NULL, 0, NULL), SGX_QL_ROOT_CA_UNTRUSTED);
	unsetenv("SGXEMU_TRUSTED_ROOT");
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, time(NULL), &exp, &res,
				     NULL, 0, NULL), 0);
	X509_free(x);
	EVP_PKEY_free(k);
	free_abi(c);
	free(q);
}

/* Truncated quotes, flipped bits, other versions and key types: the
 * header's codes, never success. */
TEST(damaged_quotes_are_refused)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_result_t res;
	uint32_t exp;
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len), *d;
	int accepted = 0;

	REQUIRE(q && c);
	d = malloc(len);
	for (size_t cut = 8; cut < len; cut += 97)
		accepted += sgx_qv_verify_quote(q, (uint32_t)cut, c, now, &exp, &res,
						NULL, 0, NULL) == 0;
	for (size_t off = 0; off < len; off += 13) {
		memcpy(d, q, len);
		d[off] ^= 0x10;
		if (off >= 4 && off < 8)
			continue;		/* tee type: INVALID_PARAMETER */
		accepted += sgx_qv_verify_quote(d, (uint32_t)len, c, now, &exp, &res,
						NULL, 0, NULL) == 0;
	}
	CHECK_EQ(accepted, 0);
	memcpy(d, q, len);
	d[0] = 4;				/* version */
	CHECK_EQ(sgx_qv_verify_quote(d, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
	memcpy(d, q, len);
	d[2] = 3;				/* attestation key type */
	CHECK_EQ(sgx_qv_verify_quote(d, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
	memcpy(d, q, len);
	d[4] = 0x81;				/* TDX: not this verifier's */
	CHECK_EQ(sgx_qv_verify_quote(d, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
	free(d);
	free_abi(c);
	free(q);
}

/*
 * Bytes past the signature data, or past the certification data inside
 * it, are covered by no signature: QVL refuses such a quote as not its
 * format, and so must this library (fuzz_qv found a quote with two zero
 * bytes appended accepted as SGX_QL_QV_RESULT_OK).
 */
TEST(bytes_past_the_quote_are_refused)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qv_supplemental_t sup;
	sgx_ql_qv_result_t res;
	uint32_t exp, sig_len;
	uint8_t fmspc[6];
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len), *d;

	REQUIRE(q && c);
	d = calloc(1, len + 16);
	REQUIRE(d);
	memcpy(d, q, len);
	for (size_t extra = 1; extra <= 16; extra *= 2) {
		memset(&sup, 0xee, sizeof(sup));
		res = 0;
		CHECK_EQ(sgx_qv_verify_quote(d, (uint32_t)(len + extra), c, now, &exp,
					     &res, NULL, sizeof(sup), (uint8_t *)&sup),
			 SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
		CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
		CHECK(!memcmp(&sup, (uint8_t[sizeof(sup)]){ 0 }, sizeof(sup)));
		CHECK_EQ(tee_get_fmspc_from_quote(d, (uint32_t)(len + extra), fmspc, 6),
			 SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
	}
	/* The signature data's length grown over the bytes appended: they are
	 * then inside it but past the certification data. */
	memcpy(&sig_len, d + 432, 4);
	sig_len += 2;
	memcpy(d + 432, &sig_len, 4);
	CHECK_EQ(sgx_qv_verify_quote(d, (uint32_t)(len + 2), c, now, &exp, &res,
				     NULL, 0, NULL), SGX_QL_QUOTE_FORMAT_UNSUPPORTED);
	/* The quote itself still verifies. */
	CHECK_EQ(sgx_qv_verify_quote(q, (uint32_t)len, c, now, &exp, &res, NULL, 0,
				     NULL), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
	free(d);
	free_abi(c);
	free(q);
}

TEST(fmspc_from_quote)
{
	uint8_t fmspc[6] = { 0 };
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q);
	CHECK_EQ(tee_get_fmspc_from_quote(q, (uint32_t)len, fmspc, 6), 0);
	CHECK(!memcmp(fmspc, sgx_fmspc, 6));
	CHECK_EQ(tee_get_fmspc_from_quote(q, (uint32_t)len, fmspc, 5),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_get_fmspc_from_quote(q, 100, fmspc, 6),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_get_fmspc_from_quote(NULL, (uint32_t)len, fmspc, 6),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	free(q);
}

/* ---- QvE-checked verification: the REPORT Intel's QvE would give ---- */

/* The application enclave the QvE's REPORT is for: a DEBUG enclave, as
 * Intel's QuoteVerificationSample builds its own. */
static void app_identity(struct sgx_key_identity *id, uint8_t mrenclave_byte)
{
	memset(id, 0, sizeof(*id));
	id->attributes.flags = SGX_ATTR_INIT | SGX_ATTR_DEBUG | SGX_ATTR_MODE64BIT;
	id->attributes.xfrm = 3;
	memset(id->mrenclave, mrenclave_byte, 32);
	memset(id->mrsigner, 0x77, 32);
}

/* sgx_self_target() in that enclave: what it names itself by. */
static void app_info(const struct sgx_key_identity *id, sgx_ql_qe_report_info_t *info)
{
	memset(info, 0xee, sizeof(*info));
	for (int i = 0; i < 16; i++)
		info->nonce.rand[i] = (uint8_t)(0x40 + i);
	memset(&info->app_enclave_target_info, 0, sizeof(info->app_enclave_target_info));
	memcpy(info->app_enclave_target_info.measurement, id->mrenclave, 32);
	info->app_enclave_target_info.attributes = id->attributes;
	info->app_enclave_target_info.miscselect = id->miscselect;
}

/* AES-128-CMAC by OpenSSL's own MAC, not the processor model's. */
static void ossl_cmac(const uint8_t key[16], const void *data, size_t len,
		      uint8_t mac[16])
{
	EVP_MAC *m = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
						 (char *)"AES-128-CBC", 0),
		OSSL_PARAM_construct_end(),
	};
	size_t n = 0;

	memset(mac, 0, 16);
	if (!c || !EVP_MAC_init(c, key, 16, p) || !EVP_MAC_update(c, data, len) ||
	    !EVP_MAC_final(c, mac, &n, 16) || n != 16)
		test_fail(__FILE__, __LINE__, "OpenSSL CMAC failed");
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(m);
}

/*
 * What Intel's TVL (sgx_tvl_verify_qve_report_and_identity, DCAP 1.23)
 * checks inside the enclave @app, written here from its facts: the
 * REPORT's MAC under @app's REPORT key (EGETKEY(REPORT) on this platform
 * with the REPORT's KEYID, as sgx_verify_report asks), REPORTDATA =
 * SHA-256(nonce || quote || date (8 bytes) || expiration status ||
 * result || supplemental data) || 32 zero bytes, then the identity Intel
 * hard-codes for its QvE: MISCSELECT 0 under mask FFFFFFFF, ATTRIBUTES
 * 01.. under mask FBFF..FF 00.., MRSIGNER 8C4F..7BFF, ISVPRODID 2,
 * ISVSVN at least 7 and at least @threshold.
 */
static quote3_error_t tvl_check(const struct sgx_key_identity *app,
				const sgx_ql_qe_report_info_t *info,
				const uint8_t *q, uint32_t qlen, time_t date,
				uint32_t exp, sgx_ql_qv_result_t res,
				const uint8_t *supp, uint32_t supp_size,
				uint16_t threshold)
{
	static const char signer_hex[] =
		"8C4F5775D796503E96137F77C68A829A0056AC8DED70140B081B094490C57BFF";
	const struct sgx_report *r = &info->qe_report;
	struct sgx_keyrequest req;
	uint8_t key[16], mac[16], rd[64] = { 0 }, signer[32];
	int64_t d = date;
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_REPORT;
	memcpy(req.keyid, r->keyid, sizeof(req.keyid));
	if (sgx_derive_key(&tc_attest()->keys, app, &req, key)) {
		EVP_MD_CTX_free(md);
		return SGX_QL_ERROR_UNEXPECTED;
	}
	ossl_cmac(key, &r->body, sizeof(r->body), mac);
	if (CRYPTO_memcmp(mac, r->mac, 16)) {
		EVP_MD_CTX_free(md);
		return SGX_QL_ERROR_REPORT;
	}
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, info->nonce.rand, 16);
	EVP_DigestUpdate(md, q, qlen);
	EVP_DigestUpdate(md, &d, 8);
	EVP_DigestUpdate(md, &exp, 4);
	EVP_DigestUpdate(md, &res, 4);
	if (supp)
		EVP_DigestUpdate(md, supp, supp_size);
	EVP_DigestFinal_ex(md, rd, NULL);
	EVP_MD_CTX_free(md);
	if (memcmp(rd, r->body.report_data, 64))
		return SGX_QL_ERROR_REPORT;
	for (int i = 0; i < 32; i++)
		sscanf(signer_hex + 2 * i, "%2hhx", &signer[i]);
	if (r->body.miscselect != 0 ||
	    (r->body.attributes.flags & 0xFFFFFFFFFFFFFFFBull) != 1 ||
	    memcmp(r->body.mrsigner, signer, 32) || r->body.isvprodid != 2)
		return SGX_QL_QVEIDENTITY_MISMATCH;
	if (r->body.isvsvn < 7 || r->body.isvsvn < threshold)
		return SGX_QL_QVE_OUT_OF_DATE;
	return SGX_QL_SUCCESS;
}

TEST(qve_report_verifies_in_the_target_enclave)
{
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	struct sgx_key_identity app, other;
	sgx_ql_qe_report_info_t info, t;
	sgx_ql_qv_supplemental_t sup, plain;
	sgx_ql_qv_result_t res = 1, plain_res = 1;
	uint32_t exp = 7, plain_exp = 7, l;
	time_t now = time(NULL);
	size_t len;
	uint8_t *q = make_quote(&len), *d;

	REQUIRE(q && c);
	l = (uint32_t)len;
	app_identity(&app, 0x5a);
	app_info(&app, &info);
	memset(&sup, 0xee, sizeof(sup));	/* its padding is the caller's */
	memset(&plain, 0xee, sizeof(plain));
	REQUIRE_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, &info, sizeof(sup),
				       (uint8_t *)&sup), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OK);
	CHECK_EQ(exp, 0u);
	/* The verdict and supplemental data are the library's own. */
	REQUIRE_EQ(sgx_qv_verify_quote(q, l, c, now, &plain_exp, &plain_res, NULL,
				       sizeof(plain), (uint8_t *)&plain), 0);
	CHECK_EQ(res, plain_res);
	CHECK_EQ(exp, plain_exp);
	CHECK_MEM(&sup, &plain, sizeof(sup));
	/* The QvE's identity as Intel's DCAP 1.23 QvE carries it. */
	CHECK_EQ(info.qe_report.body.isvprodid, 2);
	CHECK_EQ(info.qe_report.body.isvsvn, 12);
	CHECK_EQ(info.qe_report.body.attributes.flags,
		 SGX_ATTR_INIT | SGX_ATTR_MODE64BIT);
	CHECK_EQ(info.qe_report.body.miscselect, 0u);
	CHECK_MEM(info.qe_report.body.cpusvn, tc_attest()->keys.cpusvn, 16);
	/* The MRENCLAVE docs/guide.md publishes. */
	{
		static const char mre[] = "93d1678c908d4a8ba93c6f8f5d8d5630"
					  "006819e17ead58f70ad90e6d24f0558c";
		uint8_t want[32];

		for (int i = 0; i < 32; i++)
			sscanf(mre + 2 * i, "%2hhx", &want[i]);
		CHECK_MEM(info.qe_report.body.mrenclave, want, 32);
	}
	CHECK(!memcmp(info.qe_report.body.report_data + 32,
		      (uint8_t[32]){ 0 }, 32));
	/* The nonce and the TARGETINFO come back as they went in. */
	CHECK_EQ(info.nonce.rand[15], 0x4f);
	CHECK_MEM(info.app_enclave_target_info.measurement, app.mrenclave, 32);

	/* Inside the enclave it was made for, the TVL accepts it. */
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), 0);
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 12), 0);
	/* A threshold above the QvE's ISVSVN: out of date. */
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 13), SGX_QL_QVE_OUT_OF_DATE);
	/* Another enclave, or the same one without DEBUG: not its key. */
	app_identity(&other, 0x5b);
	CHECK_EQ(tvl_check(&other, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	other = app;
	other.attributes.flags &= ~SGX_ATTR_DEBUG;
	CHECK_EQ(tvl_check(&other, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);

	/* Whatever the call returned, changed, no longer matches. */
	t = info;
	t.nonce.rand[3] ^= 1;
	CHECK_EQ(tvl_check(&app, &t, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, SGX_QL_QV_RESULT_OUT_OF_DATE,
			   (uint8_t *)&sup, sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	CHECK_EQ(tvl_check(&app, &info, q, l, now, 1, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	CHECK_EQ(tvl_check(&app, &info, q, l, now + 1, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, NULL, 0, 7),
		 SGX_QL_ERROR_REPORT);
	d = malloc(len);
	REQUIRE(d);
	memcpy(d, q, len);
	d[len - 100] ^= 1;
	CHECK_EQ(tvl_check(&app, &info, d, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	free(d);
	sup.tcb_eval_ref_num++;
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	sup.tcb_eval_ref_num--;
	/* A REPORT whose body was raised to a newer QvE: its MAC fails. */
	t = info;
	t.qe_report.body.isvsvn = 20;
	CHECK_EQ(tvl_check(&app, &t, q, l, now, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	free_abi(c);
	free(q);
}

/* tee_verify_quote's QvE-checked form: the descriptor's buffer (3.3) is
 * what the REPORT covers, or nothing when there is no descriptor; a
 * non-terminal verdict and an expired check date are vouched for too. */
TEST(qve_checked_tee_verify_quote)
{
	struct sgxemu_collateral_opts tcb = { .tcb_out_of_date = true };
	sgx_ql_qve_collateral_t *c = collateral(&tcb, QVE_COLLATERAL_VERSION31, NULL);
	struct sgx_key_identity app;
	sgx_ql_qe_report_info_t info;
	sgx_ql_qv_supplemental_t sup;
	tee_supp_data_descriptor_t desc = { 0, sizeof(sup), (uint8_t *)&sup };
	sgx_ql_qv_result_t res;
	uint32_t exp, l;
	time_t later = time(NULL) + 400 * 86400;
	size_t len;
	uint8_t *q = make_quote(&len);

	REQUIRE(q && c);
	l = (uint32_t)len;
	app_identity(&app, 0x21);
	app_info(&app, &info);
	REQUIRE(RAND_bytes(info.nonce.rand, 16) == 1);
	REQUIRE_EQ(tee_verify_quote(q, l, (uint8_t *)c, later, &exp, &res, &info,
				    &desc), 0);
	CHECK_EQ(res, SGX_QL_QV_RESULT_OUT_OF_DATE);
	CHECK_EQ(exp, 1u);
	CHECK_EQ(sup.major_version, 3);
	CHECK_EQ(sup.minor_version, 3);
	CHECK_EQ(tvl_check(&app, &info, q, l, later, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), 0);
	CHECK_EQ(tvl_check(&app, &info, q, l, later, exp, SGX_QL_QV_RESULT_OK,
			   (uint8_t *)&sup, sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	CHECK_EQ(tvl_check(&app, &info, q, l, later, 0, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	/* No descriptor: the REPORT covers no supplemental data. */
	app_info(&app, &info);
	REQUIRE_EQ(tee_verify_quote(q, l, (uint8_t *)c, later, &exp, &res, &info,
				    NULL), 0);
	CHECK_EQ(tvl_check(&app, &info, q, l, later, exp, res, NULL, 0, 7), 0);
	CHECK_EQ(tvl_check(&app, &info, q, l, later, exp, res, (uint8_t *)&sup,
			   sizeof(sup), 7), SGX_QL_ERROR_REPORT);
	free_abi(c);
	free(q);
}

/*
 * Bad input to the QvE-checked calls: the header's codes, nothing written
 * where the arguments were refused, no REPORT without a verdict. The
 * ABI's nonce and report info have fixed sizes (16 and 960 bytes), so a
 * nonce or report info "of the wrong size" cannot be passed; a
 * supplemental buffer of the wrong size can.
 */
TEST(qve_checked_bad_input)
{
	struct sgxemu_collateral_opts rev = { .pck_revoked = true };
	sgx_ql_qve_collateral_t *c = collateral(NULL, QVE_COLLATERAL_VERSION3, NULL);
	sgx_ql_qve_collateral_t *revoked = collateral(&rev, QVE_COLLATERAL_VERSION3, NULL);
	struct sgx_key_identity app, named;
	sgx_ql_qe_report_info_t info, before;
	sgx_ql_qv_supplemental_t sup;
	tee_supp_data_descriptor_t desc = { 0, sizeof(sup) - 1, (uint8_t *)&sup };
	sgx_ql_qv_result_t res;
	uint32_t exp, l;
	time_t now = time(NULL);
	char bad[600];
	size_t len;
	uint8_t *q = make_quote(&len), *d;
	FILE *f;

	REQUIRE(q && c && revoked);
	l = (uint32_t)len;
	app_identity(&app, 0x33);

	/* A TARGETINFO of garbage: EREPORT checks nothing of it, so the QvE
	 * makes the REPORT for what it names, which the caller's enclave
	 * refuses. */
	app_info(&app, &info);
	memset(&info.app_enclave_target_info, 0xa5, sizeof(info.app_enclave_target_info));
	REQUIRE_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, &info, 0, NULL), 0);
	CHECK_EQ(tvl_check(&app, &info, q, l, now, exp, res, NULL, 0, 7),
		 SGX_QL_ERROR_REPORT);
	memset(&named, 0, sizeof(named));
	memcpy(named.mrenclave, info.app_enclave_target_info.measurement, 32);
	named.attributes = info.app_enclave_target_info.attributes;
	named.miscselect = info.app_enclave_target_info.miscselect;
	named.config_svn = info.app_enclave_target_info.config_svn;
	memcpy(named.config_id, info.app_enclave_target_info.config_id, 64);
	named.attributes.flags |= SGX_ATTR_KSS;	/* CONFIGSVN is in the key */
	CHECK_EQ(tvl_check(&named, &info, q, l, now, exp, res, NULL, 0, 7), 0);

	/* A terminal verdict: its code, no REPORT (zeros), the caller's
	 * nonce and TARGETINFO as they were. */
	app_info(&app, &info);
	before = info;
	CHECK_EQ(sgx_qv_verify_quote(q, l, revoked, now, &exp, &res, &info,
				     sizeof(sup), (uint8_t *)&sup), SGX_QL_PCK_REVOKED);
	CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
	CHECK(!memcmp(&info.qe_report, (uint8_t[sizeof(info.qe_report)]){ 0 },
		      sizeof(info.qe_report)));
	CHECK_MEM(&info, &before, offsetof(sgx_ql_qe_report_info_t, qe_report));
	/* A changed quote: the same. */
	d = malloc(len);
	REQUIRE(d);
	memcpy(d, q, len);
	d[100] ^= 4;
	app_info(&app, &info);
	CHECK(tee_verify_quote(d, l, (uint8_t *)c, now, &exp, &res, &info, NULL) != 0);
	CHECK(!memcmp(&info.qe_report, (uint8_t[sizeof(info.qe_report)]){ 0 },
		      sizeof(info.qe_report)));
	free(d);

	/* Supplemental buffers too small (or too large), a check date of
	 * none: refused before the QvE runs, the report info untouched. */
	app_info(&app, &info);
	before = info;
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, &info, 100,
				     (uint8_t *)&sup), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, &info,
				     sizeof(sup) + 1, (uint8_t *)&sup),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(tee_verify_quote(q, l, (uint8_t *)c, now, &exp, &res, &info, &desc),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, 0, &exp, &res, &info, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, NULL, &res, &info, 0, NULL),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_MEM(&info, &before, sizeof(info));

	/* A platform whose secrets cannot be read: the QvE cannot start,
	 * as where it cannot be loaded. */
	snprintf(bad, sizeof(bad), "%s/tmp-attest/damaged-secrets-%d",
		 test_build_dir(), (int)getpid());
	f = fopen(bad, "w");
	REQUIRE(f && fputs("not a secrets file\n", f) >= 0);
	fclose(f);
	setenv("SGXEMU_SECRETS_FILE", bad, 1);
	res = 0;
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, &info, 0, NULL),
		 SGX_QL_ENCLAVE_LOAD_ERROR);
	CHECK_EQ(res, SGX_QL_QV_RESULT_UNSPECIFIED);
	CHECK_MEM(&info, &before, sizeof(info));
	unlink(bad);
	/* The untrusted path needs no QvE and still verifies. */
	tc_attest_platform();
	CHECK_EQ(sgx_qv_verify_quote(q, l, c, now, &exp, &res, NULL, 0, NULL), 0);
	free_abi(revoked);
	free_abi(c);
	free(q);
}
