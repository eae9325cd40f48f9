/* SPDX-License-Identifier: MIT */
/*
 * What the quote provider checks of a PCCS answer beyond its framing: the
 * signed documents are JSON of their shape, the issuer chains link up to
 * a self-signed root. The signatures over the documents and the root's
 * trust are the verifier's (src/attest/verify.c); here a PCCS that
 * answers garbage is refused at the request that brought it, with the
 * request named in the provider's log line.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "attest/json.h"
#include "base/why.h"
#include "dcap/qpl.h"

#define MAX_CHAIN	8

quote3_error_t qpl_check_signed_json(const char *text, size_t len,
				     const char *body_key, char *why, size_t whylen)
{
	struct json_doc *d = malloc(sizeof(*d));
	char jwhy[160];
	int sig;
	quote3_error_t ret = SGX_QL_SUCCESS;

	if (!d)
		return sgx_fail(why, whylen, SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	/* Text parts carry a NUL that their size counts. */
	if (len && !text[len - 1])
		len--;
	if (json_parse(d, text, len, jwhy, sizeof(jwhy)))
		ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			       "the answer is not JSON: %s", jwhy);
	else if (d->nodes[0].type != JSON_OBJECT ||
		 json_typed(d, 0, body_key, JSON_OBJECT) < 0)
		ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			       "the answer has no \"%s\" object", body_key);
	else if ((sig = json_typed(d, 0, "signature", JSON_STRING)) < 0 ||
		 d->nodes[sig].rawlen != 128 + 2)
		ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			       "the answer has no \"signature\" of 64 bytes in hex");
	free(d);
	return ret;
}

/* Certificate @x signed by the key of @by, and named as issued by it. */
static bool issued_by(X509 *x, X509 *by)
{
	EVP_PKEY *k = X509_get0_pubkey(by);

	return k && X509_check_issued(by, x) == X509_V_OK && X509_verify(x, k) == 1;
}

quote3_error_t qpl_check_chain(const char *pem, char *why, size_t whylen)
{
	X509 *c[MAX_CHAIN + 1] = { 0 };
	BIO *b = BIO_new_mem_buf(pem, -1);
	quote3_error_t ret = SGX_QL_SUCCESS;
	int n = 0;

	if (!b)
		return sgx_fail(why, whylen, SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	while (n <= MAX_CHAIN && (c[n] = PEM_read_bio_X509(b, NULL, NULL, NULL)))
		n++;
	BIO_free(b);
	if (!n || n > MAX_CHAIN)
		ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			       "the issuer chain holds %s certificates",
			       n ? "more than 8" : "no readable");
	for (int i = 0; !ret && i + 1 < n; i++)
		if (!issued_by(c[i], c[i + 1]))
			ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				       "the issuer chain is broken: certificate %d "
				       "is not issued by certificate %d", i + 1, i + 2);
	if (!ret && !issued_by(c[n - 1], c[n - 1]))
		ret = sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			       "the issuer chain does not end at a self-signed "
			       "root (certificate %d)", n);
	for (int i = 0; i < n; i++)
		X509_free(c[i]);
	ERR_clear_error();
	return ret;
}
