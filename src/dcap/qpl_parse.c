/* SPDX-License-Identifier: MIT */
/*
 * PCCS answers into the quote provider's structures (attestation-facts.md
 * §4.4): no sockets here, so the fuzzer (fuzz/fuzz_qpl.c) and the tests
 * feed it answers of their own.
 *
 * Issuer chains arrive percent-encoded in headers. Intel's QCNL decodes
 * them with a routine that loses the last two characters unless they end
 * an escape; this decoder is exact, which takes every chain QCNL takes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/why.h"
#include "dcap/qpl.h"

#define PEM_CERT "-----BEGIN CERTIFICATE-----"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *qpl_pct_decode(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		int hi = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
		int lo = hi < 0 ? -1 : hexval((unsigned char)s[i + 2]);

		if (lo < 0) {
			free(out);
			return NULL;
		}
		out[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[o] = '\0';
	return out;
}

/* Text that holds only PEM certificates (at least one), so a chain that
 * decoded into something else is refused here, not later. */
static bool is_pem_chain(const char *s)
{
	const char *p = strstr(s, PEM_CERT);

	return p && strspn(s, " \t\r\n") == (size_t)(p - s) &&
	       strstr(s, "-----END CERTIFICATE-----");
}

static int unhex(const char *s, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi = hexval((unsigned char)s[2 * i]);
		int lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

quote3_error_t qpl_parse_pckcert(const struct qpl_reply *r,
				 sgx_ql_config_t **out, char *why, size_t whylen)
{
	const char *chain_enc = qpl_header(r, "sgx-pck-certificate-issuer-chain");
	const char *tcbm = qpl_header(r, "sgx-tcbm");
	sgx_ql_config_t *c = NULL;
	char *chain = NULL;
	uint8_t pcesvn[2];
	size_t leaf, clen;
	quote3_error_t ret;

	*out = NULL;
	if (!r->body || !r->len || memchr(r->body, '\0', r->len) ||
	    !is_pem_chain((const char *)r->body))
		return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"pckcert: the body is not a PEM certificate");
	if (!tcbm || strlen(tcbm) != 36)
		return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"pckcert: SGX-TCBm %s (36 hex digits wanted)",
				tcbm ? "malformed" : "missing");
	if (!chain_enc || !(chain = qpl_pct_decode(chain_enc)) || !is_pem_chain(chain)) {
		free(chain);
		return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"pckcert: SGX-PCK-Certificate-Issuer-Chain %s",
				chain_enc ? "is not a percent-encoded PEM chain" :
				"missing");
	}
	c = calloc(1, sizeof(*c));
	leaf = r->len;
	clen = strlen(chain);
	if (!c || !(c->p_cert_data = malloc(leaf + clen + 1))) {
		free(c);
		free(chain);
		return sgx_fail(why, whylen, SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	}
	if (unhex(tcbm, 16, c->cert_cpu_svn) || unhex(tcbm + 32, 2, pcesvn)) {
		qpl_free_config(c);
		free(chain);
		return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"pckcert: SGX-TCBm is not hex");
	}
	c->version = SGX_QL_CONFIG_VERSION_1;
	c->cert_pce_isv_svn = (uint16_t)(pcesvn[0] | pcesvn[1] << 8);
	memcpy(c->p_cert_data, r->body, leaf);
	memcpy(c->p_cert_data + leaf, chain, clen + 1);
	c->cert_data_size = (uint32_t)(leaf + clen + 1);
	free(chain);
	/* The leaf, then its chain: each issued by the next. */
	ret = qpl_check_chain((const char *)c->p_cert_data, why, whylen);
	if (ret) {
		qpl_free_config(c);
		return ret;
	}
	*out = c;
	return SGX_QL_SUCCESS;
}

void qpl_free_config(sgx_ql_config_t *c)
{
	if (!c)
		return;
	free(c->p_cert_data);
	free(c);
}

quote3_error_t qpl_parse_part(const struct qpl_reply *r, const char *chain_hdr,
			      bool hex_to_der, char **data, uint32_t *len,
			      char **chain, uint32_t *chain_len,
			      char *why, size_t whylen)
{
	const char *enc;
	char *dec;

	*data = NULL;
	*len = 0;
	if (!r->body || !r->len || memchr(r->body, '\0', r->len))
		return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"an empty or binary answer where text was expected");
	if (chain_hdr) {
		enc = qpl_header(r, chain_hdr);
		dec = enc ? qpl_pct_decode(enc) : NULL;
		if (!dec || !is_pem_chain(dec)) {
			free(dec);
			return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
					"%s %s", chain_hdr, enc ? "is not a "
					"percent-encoded PEM chain" : "missing");
		}
		*chain = dec;
		*chain_len = (uint32_t)strlen(dec) + 1;
	}
	if (hex_to_der) {
		size_t n = r->len;
		uint8_t *der;

		while (n && isspace(r->body[n - 1]))
			n--;
		der = malloc(n / 2 + 1);
		if (!der || n % 2 || !n || unhex((const char *)r->body, n / 2, der)) {
			free(der);
			if (chain_hdr) {
				free(*chain);
				*chain = NULL;
			}
			return sgx_fail(why, whylen, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
					"a CRL that is not hex text");
		}
		der[n / 2] = 0;
		*data = (char *)der;
		*len = (uint32_t)(n / 2);
		return SGX_QL_SUCCESS;
	}
	*data = malloc(r->len + 1);
	if (!*data) {
		if (chain_hdr) {
			free(*chain);
			*chain = NULL;
		}
		return sgx_fail(why, whylen, SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	}
	memcpy(*data, r->body, r->len);
	(*data)[r->len] = '\0';
	*len = (uint32_t)r->len + 1;
	return SGX_QL_SUCCESS;
}

void qpl_free_collateral(sgx_ql_qve_collateral_t *c)
{
	if (!c)
		return;
	free(c->pck_crl_issuer_chain);
	free(c->root_ca_crl);
	free(c->pck_crl);
	free(c->tcb_info_issuer_chain);
	free(c->tcb_info);
	free(c->qe_identity_issuer_chain);
	free(c->qe_identity);
	free(c);
}
