// SPDX-License-Identifier: MIT
/*
 * What libsgx_dcap_quoteverify.so.1 verifies against: the collateral a
 * caller or the quote provider hands it (sgx_ql_qve_collateral_t) in the
 * verifier's form, the root this installation trusts, and the FMSPC and
 * CA a quote's PCK certificate names (see qv.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "attest/pck_ext.h"
#include "attest/pki.h"
#include "attest/quote.h"
#include "base/hex.h"
#include "base/secrets.h"
#include "base/why.h"
#include "dcap/qv.h"

/* The largest root certificate file read (a PEM certificate is ~1 KiB). */
#define QV_ROOT_MAX	(64 * 1024)
/* Below this a CRL is never taken for text (QvE's CRL_MIN_SIZE). */
#define QV_CRL_MIN	300

static quote3_error_t qfail(char *why, size_t whylen, quote3_error_t ret,
			    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static quote3_error_t qfail(char *why, size_t whylen, quote3_error_t ret,
			    const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* A text of @size bytes whose last is its only NUL, copied. */
static char *text_copy(const char *p, uint32_t size)
{
	char *t;

	if (!p || !size || memchr(p, '\0', size) != p + size - 1)
		return NULL;
	t = malloc(size);
	if (t)
		memcpy(t, p, size);
	return t;
}

static bool is_hex_text(const char *p, uint32_t size)
{
	uint32_t n = size && p[size - 1] == '\0' ? size - 1 : size;

	if (n < QV_CRL_MIN || n % 2)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return true;
}

/*
 * A CRL in the encoding its collateral version implies, though, like
 * QvE, the bytes themselves decide: PEM and DER pass as they are (the
 * verifier reads both), hex text is decoded to DER.
 */
static int crl_copy(const char *p, uint32_t size, uint8_t **out, size_t *len)
{
	if (!p || !size)
		return -1;
	if (is_hex_text(p, size)) {
		uint32_t n = p[size - 1] == '\0' ? size - 1 : size;
		char *hex = malloc(n + 1);
		uint8_t *der = malloc(n / 2);
		int bad;

		if (!hex || !der) {
			free(hex);
			free(der);
			return -1;
		}
		memcpy(hex, p, n);
		hex[n] = '\0';
		bad = sgx_unhex(hex, der, n / 2);
		free(hex);
		if (bad) {
			free(der);
			return -1;
		}
		*out = der;
		*len = n / 2;
		return 0;
	}
	*out = malloc(size);
	if (!*out)
		return -1;
	memcpy(*out, p, size);
	*len = size;
	return 0;
}

/* The certificates of a PEM chain as DER, concatenated; NULL if unreadable. */
static uint8_t *chain_der(const char *pem, size_t *len)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	uint8_t *out = NULL, *tmp;
	X509 *x;
	int n;

	*len = 0;
	while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		n = i2d_X509(x, NULL);
		tmp = n > 0 ? realloc(out, *len + (size_t)n) : NULL;
		if (!tmp) {
			X509_free(x);
			free(out);
			out = NULL;
			break;
		}
		out = tmp;
		tmp += *len;
		i2d_X509(x, &tmp);
		*len += (size_t)n;
		X509_free(x);
	}
	BIO_free(b);
	return out;
}

static bool same_chain(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *da, *db;
	bool same;

	if (!strcmp(a, b))
		return true;
	da = chain_der(a, &la);
	db = chain_der(b, &lb);
	same = da && db && la == lb && !memcmp(da, db, la);
	free(da);
	free(db);
	return same;
}

quote3_error_t qv_collateral_convert(const sgx_ql_qve_collateral_t *in,
				     struct sgxemu_collateral *out,
				     char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	if (!in)
		return qfail(why, whylen, SGX_QL_ERROR_INVALID_PARAMETER,
			     "no collateral");
	if (in->version != QVE_COLLATERAL_VERSION1 &&
	    in->version != QVE_COLLATERAL_VERSION3 &&
	    in->version != QVE_COLLATERAL_VERSION31 &&
	    in->version != QVE_COLLATERAL_VERSION4)
		return qfail(why, whylen, SGX_QL_COLLATERAL_VERSION_NOT_SUPPORTED,
			     "collateral version %u.%u; 1.0, 3.0, 3.1 and 4.0 are read",
			     in->major_version, in->minor_version);
	out->tcb_info = text_copy(in->tcb_info, in->tcb_info_size);
	out->qe_identity = text_copy(in->qe_identity, in->qe_identity_size);
	out->tcb_chain = text_copy(in->tcb_info_issuer_chain,
				   in->tcb_info_issuer_chain_size);
	out->pck_chain = text_copy(in->pck_crl_issuer_chain,
				   in->pck_crl_issuer_chain_size);
	if (!out->tcb_info || !out->qe_identity || !out->tcb_chain ||
	    !out->pck_chain) {
		sgxemu_collateral_free(out);
		return qfail(why, whylen, SGX_QL_ERROR_INVALID_PARAMETER,
			     "a collateral text (TCB info, QE identity or an issuer "
			     "chain) is missing or not NUL-terminated at its size");
	}
	{
		char *qe_chain = text_copy(in->qe_identity_issuer_chain,
					   in->qe_identity_issuer_chain_size);
		bool same = qe_chain && same_chain(qe_chain, out->tcb_chain);

		free(qe_chain);
		if (!same) {
			sgxemu_collateral_free(out);
			return qfail(why, whylen, SGX_QL_QEIDENTITY_CHAIN_ERROR,
				     "the QE identity's issuer chain is not the TCB "
				     "info's (one TCB signing chain signs both)");
		}
	}
	if (crl_copy(in->root_ca_crl, in->root_ca_crl_size, &out->root_crl,
		     &out->root_crl_len) ||
	    crl_copy(in->pck_crl, in->pck_crl_size, &out->pck_crl,
		     &out->pck_crl_len)) {
		sgxemu_collateral_free(out);
		return qfail(why, whylen, SGX_QL_ERROR_INVALID_PARAMETER,
			     "a CRL is missing, or bad hex text");
	}
	return SGX_QL_SUCCESS;
}

quote3_error_t qv_trusted_root(char **pem, char *why, size_t whylen)
{
	const char *env = getenv("SGXEMU_TRUSTED_ROOT");
	char secrets[4096], dir[4200], path[4300];
	X509 *x = NULL;
	FILE *f;
	long n;

	*pem = NULL;
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		if (sgx_secrets_path(secrets, sizeof(secrets)) ||
		    sgx_pki_dir(secrets, dir, sizeof(dir)))
			return qfail(why, whylen, SGX_QL_ROOT_CA_UNTRUSTED,
				     "no trusted root: the state directory has no "
				     "usable path");
		snprintf(path, sizeof(path), "%s/root-ca.pem", dir);
	}
	f = fopen(path, "re");
	if (!f)
		return qfail(why, whylen, SGX_QL_ROOT_CA_UNTRUSTED,
			     "no trusted root: %s: %s (%s)", path, strerror(errno),
			     env && *env ? "SGXEMU_TRUSTED_ROOT" :
			     "a quote made on this installation creates it; or "
			     "set SGXEMU_TRUSTED_ROOT");
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || n > QV_ROOT_MAX ||
	    fseek(f, 0, SEEK_SET) || !(*pem = calloc(1, (size_t)n + 1)) ||
	    fread(*pem, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(*pem);
		*pem = NULL;
		return qfail(why, whylen, SGX_QL_ROOT_CA_UNTRUSTED,
			     "trusted root %s: empty, unreadable or over %d bytes",
			     path, QV_ROOT_MAX);
	}
	fclose(f);
	{
		BIO *b = BIO_new_mem_buf(*pem, (int)n);

		x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
		BIO_free(b);
	}
	if (!x) {
		free(*pem);
		*pem = NULL;
		return qfail(why, whylen, SGX_QL_ROOT_CA_UNTRUSTED,
			     "trusted root %s: not a PEM certificate", path);
	}
	X509_free(x);
	return SGX_QL_SUCCESS;
}

quote3_error_t qv_fmspc_ca(const uint8_t *quote, uint32_t len, uint8_t fmspc[6],
			   char ca[10], char *why, size_t whylen)
{
	struct sgx_quote_view q;
	struct sgx_pck_ext ext;
	char reason[200], cn[256];
	X509 *pck = NULL;
	BIO *b;

	if (sgx_quote_parse(quote, len, &q, reason, sizeof(reason)))
		return qfail(why, whylen, SGX_QL_QUOTE_FORMAT_UNSUPPORTED,
			     "quote: %s", reason);
	if (q.cert_type != QUOTE_CERT_PCK_CHAIN)
		return qfail(why, whylen, SGX_QL_QUOTE_CERTIFICATION_DATA_UNSUPPORTED,
			     "certification data of type %u; the PCK chain is type 5",
			     q.cert_type);
	b = q.cert_len < INT32_MAX ? BIO_new_mem_buf(q.cert, (int)q.cert_len) : NULL;
	if (b)
		pck = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	if (!pck || sgx_pck_ext_from_cert(pck, &ext) ||
	    X509_NAME_get_text_by_NID(X509_get_issuer_name(pck), NID_commonName,
				      cn, sizeof(cn)) <= 0) {
		X509_free(pck);
		return qfail(why, whylen, SGX_QL_PCK_CERT_UNSUPPORTED_FORMAT,
			     "the quote's first certificate is not a PCK "
			     "certificate with an SGX extension");
	}
	X509_free(pck);
	memcpy(fmspc, ext.fmspc, 6);
	if (strstr(cn, "Processor"))
		strcpy(ca, "processor");
	else if (strstr(cn, "Platform"))
		strcpy(ca, "platform");
	else
		return qfail(why, whylen, SGX_QL_PCK_CERT_UNSUPPORTED_FORMAT,
			     "the PCK certificate's issuer \"%.100s\" is neither a "
			     "Processor nor a Platform CA", cn);
	return SGX_QL_SUCCESS;
}
