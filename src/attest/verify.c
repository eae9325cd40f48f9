// SPDX-License-Identifier: MIT
/*
 * The quote verifier: the checks of Intel's QVL in its order
 * (attestation-facts.md §6.1-6.5): the PCK chain to the trusted root with
 * both CRLs, the TCB info and QE identity under the TCB signing chain,
 * then the quote itself. The first failing check ends verification; its
 * QVL status and a one-line reason naming it are the result.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "attest/attest.h"
#include "attest/ecdsa.h"
#include "attest/json.h"
#include "attest/quote.h"
#include "attest/verify.h"
#include "sgxemu/attest.h"

#define MAX_TCB_LEVELS	64

struct vctx {
	struct sgxemu_verify_result *res;
	const uint8_t *quote;
	size_t len;
	time_t now;
	bool any_time;			/* SGX_VERIFY_ANY_TIME */
	struct sgx_quote_view q;
	X509 *chain[3];			/* as found in the quote */
	X509 *root, *ca, *pck;		/* their roles */
	X509 *trusted;
	X509 *tcb_chain[2];
	X509 *tcb_signer, *tcb_root;
	X509_CRL *root_crl, *pck_crl;
	struct sgx_pck_ext ext;
	struct json_doc *tcb, *qe;
	int tcb_body, qe_body;		/* "tcbInfo", "enclaveIdentity" nodes */
	int qe_svn_status;		/* QE identity's ISVSVN result */
	struct sgx_verify_detail *d;	/* never NULL */
};

static int vfail(struct vctx *v, int status, const char *check,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int vfail(struct vctx *v, int status, const char *check,
		 const char *fmt, ...)
{
	va_list ap;

	v->res->status = status;
	v->res->status_name = sgx_verify_status_name(status);
	v->res->check = check;
	va_start(ap, fmt);
	vsnprintf(v->res->why, sizeof(v->res->why), fmt, ap);
	va_end(ap);
	return status;
}

/* ---- certificates ---- */

/* Up to @max PEM certificates from @len bytes; the count, -1 if more or bad. */
static int read_chain(const char *pem, size_t len, X509 **out, int max)
{
	BIO *b = BIO_new_mem_buf(pem, (int)len);
	int n = 0;

	if (!b || len > INT32_MAX)
		goto bad;
	for (;;) {
		X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

		if (!x)
			break;
		if (n == max) {
			X509_free(x);
			goto bad;
		}
		out[n++] = x;
	}
	BIO_free(b);
	return n;
bad:
	BIO_free(b);
	while (n)
		X509_free(out[--n]);
	return -1;
}

/*
 * The PEM text is exactly the certificates' standard encoding, so that no
 * byte of the certification data goes unchecked (a PEM reader skips text
 * between certificates, which no signature covers).
 */
static bool canonical_pem(X509 *const *certs, int n, const char *text, size_t len)
{
	char *pem = NULL;
	size_t plen = 0;
	bool same;

	for (int i = 0; i < n; i++)
		if (sgx_pem_append(&pem, &plen, certs[i])) {
			free(pem);
			return false;
		}
	same = plen == len && !memcmp(pem, text, len);
	free(pem);
	return same;
}

static bool cn_has(X509 *x, const char *s)
{
	char cn[256];

	return X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName,
					 cn, sizeof(cn)) > 0 && strstr(cn, s);
}

static bool self_issued(X509 *x)
{
	return !X509_NAME_cmp(X509_get_issuer_name(x), X509_get_subject_name(x));
}

static bool issued_by(X509 *x, X509 *issuer)
{
	return !X509_NAME_cmp(X509_get_issuer_name(x), X509_get_subject_name(issuer)) &&
	       X509_verify(x, X509_get0_pubkey(issuer)) == 1;
}

/* The five extensions every SGX certificate carries (facts §3.2). */
static bool has_extensions(X509 *x)
{
	static const int nids[] = { NID_authority_key_identifier,
				    NID_crl_distribution_points,
				    NID_subject_key_identifier, NID_key_usage,
				    NID_basic_constraints };

	for (size_t i = 0; i < sizeof(nids) / sizeof(nids[0]); i++)
		if (X509_get_ext_by_NID(x, nids[i], -1) < 0)
			return false;
	return true;
}

/* Trust anchors match by their signature bytes, as QVL compares them. */
static bool same_signature(X509 *a, X509 *b)
{
	const ASN1_BIT_STRING *sa, *sb;

	X509_get0_signature(&sa, NULL, a);
	X509_get0_signature(&sb, NULL, b);
	return ASN1_STRING_length(sa) == ASN1_STRING_length(sb) &&
	       !memcmp(ASN1_STRING_get0_data(sa), ASN1_STRING_get0_data(sb),
		       (size_t)ASN1_STRING_length(sa));
}

/* Validity periods are checked at v->now unless SGX_VERIFY_ANY_TIME. */
static bool expired(const struct vctx *v, X509 *x)
{
	time_t now = v->now;

	return !v->any_time && X509_cmp_time(X509_get0_notAfter(x), &now) < 0;
}

static bool past(const struct vctx *v, time_t next)
{
	return !v->any_time && v->now > next;
}

static X509_CRL *read_crl(const uint8_t *p, size_t len)
{
	const unsigned char *d = p;

	if (len > 11 && !memcmp(p, "-----BEGIN", 10)) {
		BIO *b = BIO_new_mem_buf(p, (int)len);
		X509_CRL *c = b ? PEM_read_bio_X509_CRL(b, NULL, NULL, NULL) : NULL;

		BIO_free(b);
		return c;
	}
	return len < INT32_MAX ? d2i_X509_CRL(NULL, &d, (long)len) : NULL;
}

static int check_crl(struct vctx *v, X509_CRL *crl, X509 *issuer, const char *check)
{
	if (X509_NAME_cmp(X509_CRL_get_issuer(crl), X509_get_subject_name(issuer)))
		return vfail(v, ST_CRL_UNKNOWN_ISSUER, check,
			     "the CRL's issuer is not the certificate's issuer");
	if (X509_CRL_get_ext_by_NID(crl, NID_crl_number, -1) < 0 ||
	    X509_CRL_get_ext_by_NID(crl, NID_authority_key_identifier, -1) < 0)
		return vfail(v, ST_CRL_INVALID_EXTENSIONS, check,
			     "the CRL lacks its CRL number or authority key id");
	if (X509_CRL_verify(crl, X509_get0_pubkey(issuer)) != 1)
		return vfail(v, ST_CRL_INVALID_SIGNATURE, check,
			     "the CRL's signature does not verify");
	return 0;
}

static bool crl_current(const struct vctx *v, X509_CRL *crl)
{
	const ASN1_TIME *next = X509_CRL_get0_nextUpdate(crl);
	time_t now = v->now;

	if (!next)
		return false;
	return v->any_time ||
	       (X509_cmp_time(X509_CRL_get0_lastUpdate(crl), &now) <= 0 &&
		X509_cmp_time(next, &now) >= 0);
}

static bool revoked(X509_CRL *crl, X509 *x)
{
	X509_REVOKED *r;

	return X509_CRL_get0_by_serial(crl, &r, X509_get_serialNumber(x)) == 1;
}

/* ---- §6.1: the PCK certificate chain in the quote ---- */

static int verify_pck_chain(struct vctx *v, const struct sgxemu_collateral *c,
			    const char *trusted_pem)
{
	static const char *const chk = "PCK certificate chain";
	size_t len = v->q.cert_len;
	int n;

	if (v->q.cert_type != QUOTE_CERT_PCK_CHAIN)
		return vfail(v, ST_UNSUPPORTED_QE_CERTIFICATION_DATA_TYPE,
			     "certification data", "type %u; the PCK chain is type 5",
			     v->q.cert_type);
	/* Type 5 ends with one NUL that is part of the data. */
	if (!len || v->q.cert[len - 1] != '\0')
		return vfail(v, ST_UNSUPPORTED_CERT_FORMAT, chk,
			     "the PEM chain does not end with its NUL byte");
	len--;
	n = read_chain((const char *)v->q.cert, len, v->chain, 3);
	if (n != 3)
		return vfail(v, ST_UNSUPPORTED_CERT_FORMAT, chk,
			     "%s certificates in the certification data; 3 expected",
			     n < 0 ? "more than 3, or unreadable," : n == 0 ? "no" :
			     n == 1 ? "1" : "2");
	if (!canonical_pem(v->chain, 3, (const char *)v->q.cert, len))
		return vfail(v, ST_UNSUPPORTED_CERT_FORMAT, chk, "the certification "
			     "data holds bytes other than its certificates' PEM");
	/* Roles by name, as QVL finds them; then every link. */
	for (int i = 0; i < 3; i++) {
		X509 *x = v->chain[i];

		if (self_issued(x) && cn_has(x, "SGX Root CA"))
			v->root = x;
		else if (cn_has(x, "SGX PCK Certificate"))
			v->pck = x;
		else if (!self_issued(x) && cn_has(x, "CA"))
			v->ca = x;
	}
	if (!v->root)
		return vfail(v, ST_ROOT_CA_MISSING, chk, "no self-issued SGX Root CA");
	if (!v->ca)
		return vfail(v, ST_INTERMEDIATE_CA_MISSING, chk, "no intermediate CA");
	if (!v->pck)
		return vfail(v, ST_PCK_MISSING, chk, "no SGX PCK Certificate");
	if (v->chain[0] != v->pck || v->chain[1] != v->ca || v->chain[2] != v->root)
		return vfail(v, ST_UNSUPPORTED_CERT_FORMAT, chk, "certificates out "
			     "of order (PCK, intermediate CA, root CA expected)");
	if (!has_extensions(v->root))
		return vfail(v, ST_ROOT_CA_INVALID_EXTENSIONS, chk,
			     "the root CA lacks one of AKI, CDP, SKI, key usage, "
			     "basic constraints");
	if (!has_extensions(v->ca))
		return vfail(v, ST_INTERMEDIATE_CA_INVALID_EXTENSIONS, chk,
			     "the intermediate CA lacks a required extension");
	if (!has_extensions(v->pck) || sgx_pck_ext_from_cert(v->pck, &v->ext))
		return vfail(v, ST_PCK_INVALID_EXTENSIONS, chk, "the PCK certificate's "
			     "extensions or its SGX extension are missing or malformed");
	v->d->have_pck = true;
	v->d->ext = v->ext;
	v->d->platform_ca = cn_has(v->ca, "Platform");
	if (X509_verify(v->root, X509_get0_pubkey(v->root)) != 1)
		return vfail(v, ST_ROOT_CA_INVALID_ISSUER, chk,
			     "the root CA's self-signature does not verify");
	if (!issued_by(v->ca, v->root))
		return vfail(v, ST_INTERMEDIATE_CA_INVALID_ISSUER, chk,
			     "the intermediate CA is not signed by the root CA");
	if (!issued_by(v->pck, v->ca))
		return vfail(v, ST_PCK_INVALID_ISSUER, chk,
			     "the PCK certificate is not signed by the intermediate CA");

	n = read_chain(trusted_pem, strlen(trusted_pem), &v->trusted, 1);
	if (n != 1)
		return vfail(v, ST_TRUSTED_ROOT_CA_UNSUPPORTED_FORMAT, "trusted root",
			     "the trusted root is not one PEM certificate");
	if (!self_issued(v->trusted) ||
	    X509_verify(v->trusted, X509_get0_pubkey(v->trusted)) != 1)
		return vfail(v, ST_TRUSTED_ROOT_CA_INVALID, "trusted root",
			     "the trusted root is not a self-signed certificate");
	if (!same_signature(v->root, v->trusted))
		return vfail(v, ST_PCK_CERT_CHAIN_UNTRUSTED, "trusted root",
			     "the quote's chain ends at another root CA than the "
			     "trusted one");

	v->root_crl = read_crl(c->root_crl, c->root_crl_len);
	v->pck_crl = read_crl(c->pck_crl, c->pck_crl_len);
	if (!v->root_crl || !v->pck_crl)
		return vfail(v, ST_CRL_UNSUPPORTED_FORMAT, "CRLs",
			     "the %s CRL is not a DER or PEM CRL",
			     v->root_crl ? "PCK" : "root CA");
	if (check_crl(v, v->root_crl, v->root, "root CA CRL") ||
	    check_crl(v, v->pck_crl, v->ca, "PCK CRL"))
		return v->res->status;
	if (revoked(v->root_crl, v->ca))
		return vfail(v, ST_INTERMEDIATE_CA_REVOKED, "root CA CRL",
			     "the intermediate CA is revoked");
	if (revoked(v->pck_crl, v->pck))
		return vfail(v, ST_PCK_REVOKED, "PCK CRL",
			     "the PCK certificate is revoked");
	if (expired(v, v->root) || expired(v, v->ca) ||
	    expired(v, v->pck))
		return vfail(v, ST_PCK_CERT_CHAIN_EXPIRED, chk,
			     "a certificate of the PCK chain has expired");
	if (!crl_current(v, v->root_crl) || !crl_current(v, v->pck_crl))
		return vfail(v, ST_CRL_EXPIRED, "CRLs",
			     "a CRL is outside its validity period");
	return 0;
}

/* ---- §6.2, §6.3: the TCB signing chain and the signed JSON ---- */

static int verify_tcb_chain(struct vctx *v, const char *pem, const char *what)
{
	int n = read_chain(pem, strlen(pem), v->tcb_chain, 2);

	if (n != 2)
		return vfail(v, ST_UNSUPPORTED_CERT_FORMAT, what,
			     "the TCB signing chain must be 2 certificates");
	for (int i = 0; i < 2; i++) {
		if (self_issued(v->tcb_chain[i]))
			v->tcb_root = v->tcb_chain[i];
		else
			v->tcb_signer = v->tcb_chain[i];
	}
	if (!v->tcb_root || !cn_has(v->tcb_root, "SGX Root CA"))
		return vfail(v, ST_ROOT_CA_MISSING, what,
			     "no SGX Root CA in the TCB signing chain");
	if (!v->tcb_signer || !cn_has(v->tcb_signer, "SGX TCB Signing"))
		return vfail(v, ST_TCB_SIGNING_CERT_MISSING, what,
			     "no SGX TCB Signing certificate");
	if (!has_extensions(v->tcb_signer))
		return vfail(v, ST_TCB_SIGNING_CERT_INVALID_EXTENSIONS, what,
			     "the TCB signing certificate lacks a required extension");
	if (X509_verify(v->tcb_root, X509_get0_pubkey(v->tcb_root)) != 1)
		return vfail(v, ST_ROOT_CA_INVALID_ISSUER, what,
			     "the root CA's self-signature does not verify");
	if (!issued_by(v->tcb_signer, v->tcb_root))
		return vfail(v, ST_TCB_SIGNING_CERT_INVALID_ISSUER, what,
			     "the TCB signing certificate is not signed by the root");
	if (!same_signature(v->tcb_root, v->trusted))
		return vfail(v, ST_TCB_SIGNING_CERT_CHAIN_UNTRUSTED, what,
			     "the TCB signing chain ends at another root CA");
	if (revoked(v->root_crl, v->tcb_signer))
		return vfail(v, ST_TCB_SIGNING_CERT_REVOKED, what,
			     "the TCB signing certificate is revoked");
	if (expired(v, v->tcb_signer) || expired(v, v->tcb_root))
		return vfail(v, ST_SIGNING_CERT_CHAIN_EXPIRED, what,
			     "the TCB signing chain has expired");
	return 0;
}

static bool parse_date(const struct json_doc *d, int node, time_t *out)
{
	struct tm tm;
	char buf[32];
	const char *end;

	if (node < 0 || d->nodes[node].type != JSON_STRING ||
	    d->nodes[node].rawlen != 22)
		return false;
	memcpy(buf, d->nodes[node].raw + 1, 20);
	buf[20] = '\0';
	memset(&tm, 0, sizeof(tm));
	end = strptime(buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return false;
	*out = timegm(&tm);
	return true;
}

static bool uint_member(const struct json_doc *d, int obj, const char *key,
			uint64_t max, uint64_t *out)
{
	int n = json_typed(d, obj, key, JSON_NUMBER);

	if (n < 0 || d->nodes[n].num > max)
		return false;
	*out = d->nodes[n].num;
	return true;
}

/*
 * Parse {"<name>":{...},"signature":"<hex>"} and check the signature over
 * the raw bytes of the body. Returns 0, 1 (format), 2 (signature).
 */
static int signed_json(struct vctx *v, struct json_doc **docp, const char *text,
		       const char *name, int *body)
{
	struct json_doc *d = malloc(sizeof(*d));
	uint8_t sig[64];
	int s;

	*docp = d;
	if (!d || json_parse(d, text, strlen(text), v->res->why, sizeof(v->res->why)))
		return 1;
	*body = json_typed(d, 0, name, JSON_OBJECT);
	s = json_typed(d, 0, "signature", JSON_STRING);
	if (*body < 0 || json_hex(d, s, sig, 64))
		return 1;
	if (!sgx_ecdsa_verify(X509_get0_pubkey(v->tcb_signer), d->nodes[*body].raw,
			      d->nodes[*body].rawlen, sig))
		return 2;
	return 0;
}

static const char *const tcb_statuses[] = {
	"UpToDate", "SWHardeningNeeded", "ConfigurationNeeded",
	"ConfigurationAndSWHardeningNeeded", "OutOfDate",
	"OutOfDateConfigurationNeeded", "Revoked",
};
static const int tcb_status_codes[] = {
	ST_OK, ST_TCB_SW_HARDENING_NEEDED, ST_TCB_CONFIGURATION_NEEDED,
	ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED, ST_TCB_OUT_OF_DATE,
	ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED, ST_TCB_REVOKED,
};

static int status_index(const struct json_doc *d, int node)
{
	for (int i = 0; i < (int)(sizeof(tcb_statuses) / sizeof(tcb_statuses[0])); i++)
		if (json_str_is(d, node, tcb_statuses[i]))
			return i;
	return -1;
}

struct tcb_level {
	uint8_t comp[16];
	uint16_t pcesvn;
	int status;		/* index into tcb_statuses */
	int node;		/* its tcbLevels element */
};

/* One tcbLevels entry of TCB info v3: 0, or -1 when malformed. */
static int read_tcb_level(const struct json_doc *d, int lvl, struct tcb_level *out)
{
	int tcb = json_typed(d, lvl, "tcb", JSON_OBJECT);
	int comps = json_typed(d, tcb, "sgxtcbcomponents", JSON_ARRAY);
	time_t t;
	uint64_t x;
	int i = 0;

	if (comps < 0 || json_len(d, comps) != 16 ||
	    !uint_member(d, tcb, "pcesvn", 0xffff, &x) ||
	    !parse_date(d, json_member(d, lvl, "tcbDate"), &t))
		return -1;
	out->pcesvn = (uint16_t)x;
	out->node = lvl;
	for (int c = d->nodes[comps].child; c >= 0; c = d->nodes[c].next) {
		if (!uint_member(d, c, "svn", 0xff, &x))
			return -1;
		out->comp[i++] = (uint8_t)x;
	}
	out->status = status_index(d, json_member(d, lvl, "tcbStatus"));
	return out->status < 0 ? -1 : 0;
}

static int verify_tcb_info(struct vctx *v, const char *text)
{
	static const char *const chk = "TCB info";
	struct json_doc *d;
	uint64_t x;
	time_t next, issue;
	int b, r, levels;

	r = signed_json(v, &v->tcb, text, "tcbInfo", &v->tcb_body);
	if (r == 1)
		return vfail(v, ST_TCB_INFO_UNSUPPORTED_FORMAT, chk,
			     "not a signed TCB info document%s%s",
			     v->res->why[0] ? ": " : "", v->res->why);
	d = v->tcb;
	b = v->tcb_body;
	if (!json_str_is(d, json_member(d, b, "id"), "SGX") ||
	    !uint_member(d, b, "version", 3, &x) || x != 3 ||
	    !parse_date(d, json_member(d, b, "issueDate"), &issue) ||
	    !parse_date(d, json_member(d, b, "nextUpdate"), &next) ||
	    json_hex(d, json_member(d, b, "fmspc"), (uint8_t[6]){ 0 }, 6) ||
	    json_hex(d, json_member(d, b, "pceId"), (uint8_t[2]){ 0 }, 2) ||
	    !uint_member(d, b, "tcbType", 0, &x) ||
	    !uint_member(d, b, "tcbEvaluationDataNumber", UINT32_MAX, &x))
		return vfail(v, ST_TCB_INFO_INVALID, chk,
			     "a required field is missing or malformed (SGX TCB "
			     "info version 3 expected)");
	levels = json_typed(d, b, "tcbLevels", JSON_ARRAY);
	if (levels < 0 || json_len(d, levels) < 1 ||
	    json_len(d, levels) > MAX_TCB_LEVELS)
		return vfail(v, ST_TCB_INFO_INVALID, chk, "tcbLevels must hold 1 to %d "
			     "levels", MAX_TCB_LEVELS);
	for (int l = d->nodes[levels].child; l >= 0; l = d->nodes[l].next) {
		struct tcb_level tl;

		if (read_tcb_level(d, l, &tl))
			return vfail(v, ST_TCB_INFO_INVALID, chk,
				     "a TCB level is malformed or has an unknown status");
	}
	if (r == 2)
		return vfail(v, ST_TCB_INFO_INVALID_SIGNATURE, "TCB info signature",
			     "the TCB info's signature does not verify under the "
			     "TCB signing key");
	if (!crl_current(v, v->root_crl))
		return vfail(v, ST_CRL_EXPIRED, chk, "the root CA CRL has expired");
	if (past(v, next))
		return vfail(v, ST_TCB_INFO_EXPIRED, chk,
			     "the TCB info is past its nextUpdate");
	return 0;
}

static int verify_qe_identity(struct vctx *v, const char *text)
{
	static const char *const chk = "QE identity";
	struct json_doc *d;
	uint8_t buf[32];
	uint64_t x;
	time_t next, issue;
	int b, r, levels;

	r = signed_json(v, &v->qe, text, "enclaveIdentity", &v->qe_body);
	if (r == 1)
		return vfail(v, ST_ENCLAVE_IDENTITY_UNSUPPORTED_FORMAT, chk,
			     "not a signed enclave identity document%s%s",
			     v->res->why[0] ? ": " : "", v->res->why);
	d = v->qe;
	b = v->qe_body;
	if (!uint_member(d, b, "version", UINT32_MAX, &x))
		return vfail(v, ST_ENCLAVE_IDENTITY_INVALID, chk, "no version");
	if (x != 2)
		return vfail(v, ST_ENCLAVE_IDENTITY_UNSUPPORTED_VERSION, chk,
			     "version %llu; 2 is read", (unsigned long long)x);
	levels = json_typed(d, b, "tcbLevels", JSON_ARRAY);
	if (json_typed(d, b, "id", JSON_STRING) < 0 ||
	    !parse_date(d, json_member(d, b, "issueDate"), &issue) ||
	    !parse_date(d, json_member(d, b, "nextUpdate"), &next) ||
	    !uint_member(d, b, "tcbEvaluationDataNumber", UINT32_MAX, &x) ||
	    json_hex(d, json_member(d, b, "miscselect"), buf, 4) ||
	    json_hex(d, json_member(d, b, "miscselectMask"), buf, 4) ||
	    json_hex(d, json_member(d, b, "attributes"), buf, 16) ||
	    json_hex(d, json_member(d, b, "attributesMask"), buf, 16) ||
	    json_hex(d, json_member(d, b, "mrsigner"), buf, 32) ||
	    !uint_member(d, b, "isvprodid", 0xffff, &x) ||
	    levels < 0 || json_len(d, levels) < 1)
		return vfail(v, ST_ENCLAVE_IDENTITY_INVALID, chk,
			     "a required field is missing or malformed");
	for (int l = d->nodes[levels].child; l >= 0; l = d->nodes[l].next) {
		int tcb = json_typed(d, l, "tcb", JSON_OBJECT);
		int st = status_index(d, json_member(d, l, "tcbStatus"));

		if (!uint_member(d, tcb, "isvsvn", 0xffff, &x) || st < 0 ||
		    !parse_date(d, json_member(d, l, "tcbDate"), &issue))
			return vfail(v, ST_ENCLAVE_IDENTITY_INVALID, chk,
				     "a TCB level is malformed");
	}
	if (r == 2)
		return vfail(v, ST_ENCLAVE_IDENTITY_INVALID_SIGNATURE,
			     "QE identity signature", "the QE identity's signature "
			     "does not verify under the TCB signing key");
	if (past(v, next))
		return vfail(v, ST_ENCLAVE_IDENTITY_EXPIRED, chk,
			     "the QE identity is past its nextUpdate");
	return 0;
}

/* ---- §6.4: the quote ---- */

/* §4.3: the QE report against the QE identity. 0 or a status. */
static int match_qe_identity(struct vctx *v)
{
	static const char *const chk = "QE identity match";
	const struct json_doc *d = v->qe;
	const struct sgx_report_body *r = &v->q.qe_report;
	uint8_t misc[4], misc_mask[4], attr[16], attr_mask[16], mrsigner[32], ra[16];
	uint32_t m, mm, rm;
	uint64_t prodid = 0, svn = 0;
	int b = v->qe_body, levels;

	if (!json_str_is(d, json_member(d, b, "id"), "QE"))
		return vfail(v, ST_QE_IDENTITY_MISMATCH, chk,
			     "the identity is not a QE's (id \"QE\")");
	json_hex(d, json_member(d, b, "miscselect"), misc, 4);
	json_hex(d, json_member(d, b, "miscselectMask"), misc_mask, 4);
	json_hex(d, json_member(d, b, "attributes"), attr, 16);
	json_hex(d, json_member(d, b, "attributesMask"), attr_mask, 16);
	json_hex(d, json_member(d, b, "mrsigner"), mrsigner, 32);
	uint_member(d, b, "isvprodid", 0xffff, &prodid);
	memcpy(&m, misc, 4);
	memcpy(&mm, misc_mask, 4);
	memcpy(&rm, &r->miscselect, 4);
	if ((rm & mm) != m)
		return vfail(v, ST_QE_IDENTITY_MISMATCH, chk,
			     "the QE's MISCSELECT does not match (%s)",
			     sgx_verify_status_name(ST_REPORT_MISCSELECT_MISMATCH));
	memcpy(ra, &r->attributes, 16);
	for (int i = 0; i < 16; i++)
		if ((ra[i] & attr_mask[i]) != attr[i])
			return vfail(v, ST_QE_IDENTITY_MISMATCH, chk,
				     "the QE's ATTRIBUTES do not match (%s)",
				     sgx_verify_status_name(ST_REPORT_ATTRIBUTES_MISMATCH));
	if (memcmp(r->mrsigner, mrsigner, 32))
		return vfail(v, ST_QE_IDENTITY_MISMATCH, chk,
			     "the QE's MRSIGNER is not the identity's (%s)",
			     sgx_verify_status_name(ST_REPORT_MRSIGNER_MISMATCH));
	if (r->isvprodid != prodid)
		return vfail(v, ST_QE_IDENTITY_MISMATCH, chk,
			     "the QE's ISVPRODID %u is not %llu (%s)", r->isvprodid,
			     (unsigned long long)prodid,
			     sgx_verify_status_name(ST_REPORT_ISVPRODID_MISMATCH));
	/* Levels in document order: the first not above the QE's ISVSVN. */
	levels = json_member(d, b, "tcbLevels");
	v->qe_svn_status = ST_REPORT_ISVSVN_NOT_SUPPORTED;
	v->res->qe_tcb_status = "";
	for (int l = d->nodes[levels].child; l >= 0; l = d->nodes[l].next) {
		int tcb = json_member(d, l, "tcb");
		int st = status_index(d, json_member(d, l, "tcbStatus"));

		uint_member(d, tcb, "isvsvn", 0xffff, &svn);
		if (svn > r->isvsvn)
			continue;
		v->res->qe_tcb_status = tcb_statuses[st];
		v->qe_svn_status = st == 0 ? ST_OK :
				   tcb_status_codes[st] == ST_TCB_REVOKED ?
				   ST_REPORT_ISVSVN_REVOKED : ST_REPORT_ISVSVN_OUT_OF_DATE;
		v->d->have_qe_tcb = parse_date(d, json_member(d, l, "tcbDate"),
					       &v->d->qe_tcb_date);
		break;
	}
	return 0;
}

static int cmp_level(const void *a, const void *b)
{
	const struct tcb_level *x = a, *y = b;
	int c = memcmp(y->comp, x->comp, 16);	/* descending */

	return c ? c : (int)y->pcesvn - (int)x->pcesvn;
}

/*
 * The matched level's date and advisories (a comma-separated list as the
 * supplemental data carries it; what does not fit is left out whole).
 */
static void level_detail(struct vctx *v, int node)
{
	const struct json_doc *d = v->tcb;
	struct sgx_verify_detail *o = v->d;
	int ids = json_typed(d, node, "advisoryIDs", JSON_ARRAY);
	size_t used = 0;
	uint64_t x = 0;

	o->have_tcb = parse_date(d, json_member(d, node, "tcbDate"), &o->tcb_date);
	uint_member(d, v->tcb_body, "tcbEvaluationDataNumber", UINT32_MAX, &x);
	o->tcb_eval = (uint32_t)x;
	for (int i = ids < 0 ? -1 : d->nodes[ids].child; i >= 0; i = d->nodes[i].next) {
		size_t n = d->nodes[i].rawlen;

		if (d->nodes[i].type != JSON_STRING || n < 2)
			continue;
		n -= 2;				/* the quotes */
		if (used + !!used + n + 1 > sizeof(o->sa_list))
			break;
		if (used)
			o->sa_list[used++] = ',';
		memcpy(o->sa_list + used, d->nodes[i].raw + 1, n);
		used += n;
		o->sa_list[used] = '\0';
	}
}

/* §4.2 and §6.5: the platform's TCB level, converged with the QE's. */
static int tcb_level_status(struct vctx *v)
{
	const struct json_doc *d = v->tcb;
	struct tcb_level lv[MAX_TCB_LEVELS];
	int n = 0, levels = json_member(d, v->tcb_body, "tcbLevels");
	int st = -1, status, match = 0;

	for (int l = d->nodes[levels].child; l >= 0; l = d->nodes[l].next)
		read_tcb_level(d, l, &lv[n++]);
	qsort(lv, (size_t)n, sizeof(lv[0]), cmp_level);
	for (int i = 0; i < n && st < 0; i++) {
		bool ok = v->ext.pcesvn >= lv[i].pcesvn;

		for (int c = 0; c < 16 && ok; c++)
			ok = v->ext.comp[c] >= lv[i].comp[c];
		if (ok) {
			st = lv[i].status;
			match = i;
		}
	}
	if (st < 0) {
		v->res->tcb_status = "";
		return ST_TCB_NOT_SUPPORTED;
	}
	v->res->tcb_status = tcb_statuses[st];
	status = tcb_status_codes[st];
	level_detail(v, lv[match].node);
	switch (v->qe_svn_status) {
	case ST_REPORT_ISVSVN_OUT_OF_DATE:
		if (status == ST_OK || status == ST_TCB_SW_HARDENING_NEEDED)
			return ST_TCB_OUT_OF_DATE;
		if (status == ST_TCB_CONFIGURATION_NEEDED ||
		    status == ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED)
			return ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED;
		return status;
	case ST_REPORT_ISVSVN_REVOKED:
		return ST_TCB_REVOKED;
	case ST_REPORT_ISVSVN_NOT_SUPPORTED:
		return ST_TCB_NOT_SUPPORTED;
	default:
		return status;
	}
}

static int verify_quote_body(struct vctx *v, bool require_production)
{
	const struct json_doc *d = v->tcb;
	uint8_t fmspc[6], pceid[2], hash[32];
	EVP_MD_CTX *md;
	EVP_PKEY *att;
	int st;

	if (!cn_has(v->pck, "SGX PCK Certificate"))
		return vfail(v, ST_INVALID_PCK_CERT, "PCK certificate",
			     "not an SGX PCK Certificate");
	if (X509_NAME_cmp(X509_CRL_get_issuer(v->pck_crl), X509_get_issuer_name(v->pck)))
		return vfail(v, ST_INVALID_PCK_CRL, "PCK CRL",
			     "the PCK CRL's issuer is not the PCK certificate's");
	json_hex(d, json_member(d, v->tcb_body, "fmspc"), fmspc, 6);
	json_hex(d, json_member(d, v->tcb_body, "pceId"), pceid, 2);
	memcpy(v->res->fmspc, v->ext.fmspc, 6);
	if (memcmp(fmspc, v->ext.fmspc, 6) || memcmp(pceid, v->ext.pceid, 2))
		return vfail(v, ST_TCB_INFO_MISMATCH, "PCK certificate vs TCB info",
			     "the PCK certificate's FMSPC or PCE-ID is not the TCB "
			     "info's");
	if (!sgx_ecdsa_verify(X509_get0_pubkey(v->pck), &v->q.qe_report,
			      sizeof(v->q.qe_report), v->q.qe_sig))
		return vfail(v, ST_INVALID_QE_REPORT_SIGNATURE, "QE report signature",
			     "the QE report is not signed by the PCK key");
	md = EVP_MD_CTX_new();
	st = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(md, v->q.att_pub, 64) &&
	     EVP_DigestUpdate(md, v->q.auth, v->q.auth_len) &&
	     EVP_DigestFinal_ex(md, hash, NULL);
	EVP_MD_CTX_free(md);
	if (!st || memcmp(hash, v->q.qe_report.report_data, 32) ||
	    memcmp(v->q.qe_report.report_data + 32, (uint8_t[32]){ 0 }, 32))
		return vfail(v, ST_INVALID_QE_REPORT_DATA, "attestation key binding",
			     "the QE report's REPORTDATA is not SHA-256 of the "
			     "attestation key and QE authentication data");
	st = match_qe_identity(v);
	if (st)
		return st;
	att = sgx_p256_from_raw(v->q.att_pub);
	if (!att)
		return vfail(v, ST_UNSUPPORTED_QUOTE_FORMAT, "attestation key",
			     "the attestation key is not a P-256 point");
	st = sgx_ecdsa_verify(att, v->quote, QUOTE_SIGNED_SIZE, v->q.sig);
	EVP_PKEY_free(att);
	if (!st)
		return vfail(v, ST_INVALID_QUOTE_SIGNATURE, "quote signature",
			     "the quote's header and report body are not signed by "
			     "the attestation key");
	st = tcb_level_status(v);
	if (st)
		return vfail(v, st, "TCB level", "platform TCB %s, QE TCB %s",
			     v->res->tcb_status[0] ? v->res->tcb_status : "not supported",
			     v->res->qe_tcb_status[0] ? v->res->qe_tcb_status :
			     "not supported");
	if (require_production && (v->q.report.attributes.flags & SGX_ATTR_DEBUG))
		return vfail(v, ST_REPORT_ATTRIBUTES_MISMATCH, "production enclave",
			     "the enclave is a DEBUG enclave and production was "
			     "required");
	return 0;
}

/* ---- what the supplemental data reports ---- */

static bool asn1_time(const ASN1_TIME *t, time_t *out)
{
	struct tm tm;

	if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
		return false;
	*out = timegm(&tm);
	return true;
}

static uint32_t crl_number(X509_CRL *crl)
{
	ASN1_INTEGER *n = X509_CRL_get_ext_d2i(crl, NID_crl_number, NULL, NULL);
	long x = n ? ASN1_INTEGER_get(n) : 0;

	ASN1_INTEGER_free(n);
	return x < 0 || (unsigned long)x > UINT32_MAX ? 0 : (uint32_t)x;
}

/* Issue and expiry dates over a set of collateral items. */
struct span {
	time_t lo_issue, hi_issue, lo_exp;
	bool any, bad;
};

static void span_add(struct span *s, bool ok, time_t issue, time_t exp)
{
	if (!ok) {
		s->bad = true;
		return;
	}
	if (!s->any || issue < s->lo_issue)
		s->lo_issue = issue;
	if (!s->any || issue > s->hi_issue)
		s->hi_issue = issue;
	if (!s->any || exp < s->lo_exp)
		s->lo_exp = exp;
	s->any = true;
}

static void span_cert(struct span *s, X509 *x)
{
	time_t a = 0, b = 0;
	bool ok = x && asn1_time(X509_get0_notBefore(x), &a) &&
		  asn1_time(X509_get0_notAfter(x), &b);

	/* Not in span_add's arguments: their order of evaluation is unspecified. */
	span_add(s, ok, a, b);
}

static void span_crl(struct span *s, X509_CRL *c)
{
	time_t a = 0, b = 0;
	bool ok = c && asn1_time(X509_CRL_get0_lastUpdate(c), &a) &&
		  asn1_time(X509_CRL_get0_nextUpdate(c), &b);

	span_add(s, ok, a, b);
}

static void span_json(struct span *s, const struct json_doc *d, int body)
{
	time_t a = 0, b = 0;
	bool ok = d && body > 0 &&
		  parse_date(d, json_member(d, body, "issueDate"), &a) &&
		  parse_date(d, json_member(d, body, "nextUpdate"), &b);

	span_add(s, ok, a, b);
}

/*
 * The dates, CRL numbers and root key id of the collateral, as Intel's
 * QvE reports them: the earliest and latest issue and the earliest
 * expiry over every certificate, CRL and signed document used, and the
 * same over the QE identity with the chain and root CRL that vouch for
 * it. The root key id is SHA-384 of the root's public key (its
 * uncompressed point).
 */
static void collect_detail(struct vctx *v)
{
	struct sgx_verify_detail *d = v->d;
	struct span all = { 0 }, qe = { 0 };
	unsigned char *pub = NULL;
	size_t n;
	uint64_t x = 0;

	for (int i = 0; i < 3; i++)
		span_cert(&all, v->chain[i]);
	for (int i = 0; i < 2; i++) {
		span_cert(&all, v->tcb_chain[i]);
		span_cert(&qe, v->tcb_chain[i]);
	}
	span_crl(&all, v->root_crl);
	span_crl(&qe, v->root_crl);
	span_crl(&all, v->pck_crl);
	span_json(&all, v->tcb, v->tcb_body);
	span_json(&all, v->qe, v->qe_body);
	span_json(&qe, v->qe, v->qe_body);
	if (!all.bad && !qe.bad) {
		d->have_dates = true;
		d->earliest_issue = all.lo_issue;
		d->latest_issue = all.hi_issue;
		d->earliest_expiration = all.lo_exp;
		d->qe_earliest_issue = qe.lo_issue;
		d->qe_latest_issue = qe.hi_issue;
		d->qe_earliest_expiration = qe.lo_exp;
	}
	if (v->root_crl && v->pck_crl && v->root) {
		n = EVP_PKEY_get1_encoded_public_key(X509_get0_pubkey(v->root), &pub);
		if (pub && n && SHA384(pub, n, d->root_key_id)) {
			d->have_crls = true;
			d->root_crl_num = crl_number(v->root_crl);
			d->pck_crl_num = crl_number(v->pck_crl);
		}
		OPENSSL_free(pub);
	}
	if (v->qe && v->qe_body > 0 &&
	    uint_member(v->qe, v->qe_body, "tcbEvaluationDataNumber", UINT32_MAX, &x))
		d->qe_eval = (uint32_t)x;
	d->qe_status = v->qe_svn_status;
}

static int verify(struct vctx *v, const struct sgxemu_verify_opts *o,
		  const struct sgxemu_collateral *c, const char *trusted)
{
	char why[256];
	int st;

	if (sgx_quote_parse(v->quote, v->len, &v->q, why, sizeof(why)))
		return vfail(v, ST_UNSUPPORTED_QUOTE_FORMAT, "quote format", "%s", why);
	v->res->have_report = true;
	v->res->report = v->q.report;
	v->res->qe_svn = v->q.qe_svn;
	v->res->pce_svn = v->q.pce_svn;
	st = verify_pck_chain(v, c, trusted);
	if (!st)
		st = verify_tcb_chain(v, c->tcb_chain, "TCB signing chain");
	if (!st)
		st = verify_tcb_info(v, c->tcb_info);
	if (!st)
		st = verify_qe_identity(v, c->qe_identity);
	if (!st)
		st = verify_quote_body(v, o->require_production);
	collect_detail(v);
	return st;
}

int sgxemu_quote_verify(const uint8_t *quote, size_t len,
			const struct sgxemu_verify_opts *opts,
			struct sgxemu_verify_result *res)
{
	return sgx_quote_verify_detail(quote, len, opts, res, NULL, 0);
}

int sgx_quote_verify_detail(const uint8_t *quote, size_t len,
			    const struct sgxemu_verify_opts *opts,
			    struct sgxemu_verify_result *res,
			    struct sgx_verify_detail *d, unsigned int flags)
{
	struct sgx_verify_detail unused;
	static const struct sgxemu_verify_opts dflt;
	const struct sgxemu_verify_opts *o = opts ? opts : &dflt;
	struct sgxemu_collateral made = { 0 };
	const struct sgxemu_collateral *c = o->collateral;
	struct vctx v = { .res = res, .quote = quote, .len = len,
			  .d = d ? d : &unused,
			  .any_time = flags & SGX_VERIFY_ANY_TIME };
	char *root = NULL;
	int st;

	memset(v.d, 0, sizeof(*v.d));
	v.qe_svn_status = ST_REPORT_ISVSVN_NOT_SUPPORTED;
	memset(res, 0, sizeof(*res));
	res->check = res->tcb_status = res->qe_tcb_status = "";
	v.now = o->now ? o->now : time(NULL);
	if (!quote)
		return vfail(&v, ST_MISSING_PARAMETERS, "input", "no quote");
	if (!c || !o->trusted_root_pem) {
		/* This installation's collateral and root. */
		if (sgxemu_collateral_make(NULL, &made, res->why, sizeof(res->why)))
			return vfail(&v, ST_MISSING_PARAMETERS, "collateral",
				     "no collateral given and none can be made: %.200s",
				     res->why);
		if (!c)
			c = &made;
	}
	if (!c->tcb_info || !c->qe_identity || !c->tcb_chain || !c->root_crl ||
	    !c->pck_crl) {
		st = vfail(&v, ST_MISSING_PARAMETERS, "collateral",
			   "the collateral is incomplete");
		goto out;
	}
	root = strdup(o->trusted_root_pem ? o->trusted_root_pem : made.root);
	if (!root) {
		st = vfail(&v, ST_MISSING_PARAMETERS, "trusted root", "out of memory");
		goto out;
	}
	st = verify(&v, o, c, root);
	if (!st) {
		res->status = ST_OK;
		res->status_name = sgx_verify_status_name(ST_OK);
	}
out:
	for (int i = 0; i < 3; i++)
		X509_free(v.chain[i]);
	X509_free(v.trusted);
	X509_free(v.tcb_chain[0]);
	X509_free(v.tcb_chain[1]);
	X509_CRL_free(v.root_crl);
	X509_CRL_free(v.pck_crl);
	free(v.tcb);
	free(v.qe);
	free(root);
	sgxemu_collateral_free(&made);
	return st;
}
