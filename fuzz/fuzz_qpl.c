/* SPDX-License-Identifier: MIT */
/*
 * The quote provider's reading of PCCS answers and of its configuration
 * (src/dcap/qpl_parse.c, qpl_http.c's header table, qpl_conf.c), fed an
 * answer the way the HTTP client hands it over. The input:
 *
 *   byte 0   bits 0-1  the issuer chain header qpl_parse_part is asked
 *                      for: none, sgx-pck-crl-issuer-chain,
 *                      tcb-info-issuer-chain (else sgx-tcb-info-issuer-
 *                      chain, a v3 PCCS's name, as qpl.c falls back),
 *                      sgx-enclave-identity-issuer-chain
 *            bit 2     the part is a CRL as hex text, to DER
 *                      (pccs_api_version 3.1)
 *            bits 3-4  the code a 404 maps to: no platform certificate
 *                      data, no collateral, no QvE identity, unexpected
 *   then the answer as it comes off the wire: header lines, each up to
 *   and with its '\n', each given to qpl_reply_add_header as libcurl's
 *   header callback gives it (the status line "HTTP/1.1 NNN ..." among
 *   them sets the status, else it is 200); an empty line ("\n" or
 *   "\r\n"); then the body, the rest of the input. Without an empty line
 *   it is all headers and there is no body.
 *
 * The body is read as a pckcert answer, as a collateral part and as a
 * QCNL configuration (JSON or KEY=VALUE lines, in a buffer with no NUL
 * after it); every header value is percent-decoded. Beyond "no crash":
 * success comes with its outputs (no NULL), consistent with the answer
 * (the leaf, the chain and a NUL; the text and a NUL counted in its
 * size; the DER of the hex; URLs that end in '/' within their buffers);
 * a refusal is one of the documented codes, with one line of reason, and
 * leaves no output behind; the decoder is exact (every '%' takes two hex
 * digits, or the value is refused); header names are lower case and
 * values trimmed, at most QPL_MAX_HEADERS kept; everything is freed by
 * the library's own free functions (ASan's leak check).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "dcap/qpl.h"

#define WHY_LEN	300

/* FUZZ_DEBUG set: every refusal's reason on stderr. */
static bool debug;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_qpl: %s\n", what);
	abort();
}

/* A refusal: @want or @also (or out of memory), and one line of reason. */
static void check_refusal(quote3_error_t ret, quote3_error_t want,
			  quote3_error_t also, const char *why, const char *what)
{
	if (ret != want && ret != also && ret != SGX_QL_ERROR_OUT_OF_MEMORY) {
		fprintf(stderr, "fuzz_qpl: %s: code %#x\n", what, ret);
		abort();
	}
	if (debug)
		fprintf(stderr, "fuzz_qpl: %s refused (%#x): %s\n", what, ret, why);
	if (!why[0] || strchr(why, '\n')) {
		fprintf(stderr, "fuzz_qpl: %s: reason \"%s\"\n", what, why);
		abort();
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* What an exact percent-decoder makes of @s: @out (strlen(s) + 1 bytes)
 * and its length, or -1 for a '%' without two hex digits after it. */
static long pct_expect(const char *s, char *out)
{
	size_t n = strlen(s), o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			out[o++] = s[i];
		} else if (i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
			   hexval((unsigned char)s[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)s[i + 1]) << 4 |
					  hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			return -1;
		}
	}
	return (long)o;
}

static void check_decode(const char *s)
{
	char *want = malloc(strlen(s) + 1), *got;
	long n;

	if (!want)
		return;
	n = pct_expect(s, want);
	got = qpl_pct_decode(s);
	if (n < 0 && got)
		die("a malformed escape decoded");
	if (n >= 0 && got && memcmp(got, want, (size_t)n))
		die("percent-decoding is not exact");
	if (n >= 0 && got && got[n])
		die("the decoded text is not terminated where it ends");
	free(got);
	free(want);
}

/* @nul: a header line held a NUL, which ends the C string of its name
 * or value early (where trimming cannot be judged). */
static void check_headers(const struct qpl_reply *r, int lines_with_colon,
			  bool nul)
{
	int want = lines_with_colon < QPL_MAX_HEADERS ? lines_with_colon
						      : QPL_MAX_HEADERS;

	if (r->nr_headers != want)
		die("header lines with a colon not all kept, or too many");
	for (int i = 0; i < r->nr_headers; i++) {
		const char *n = r->headers[i].name, *v = r->headers[i].value;
		size_t vl = strlen(v);

		for (const char *p = n; *p; p++)
			if (isupper((unsigned char)*p) || *p == ':')
				die("a header name not lower case, or with its colon");
		if (!nul && (v[0] == ' ' || v[0] == '\t' ||
			     (vl && isspace((unsigned char)v[vl - 1]))))
			die("a header value not trimmed");
		for (int j = 0; j <= i; j++)
			if (!strcmp(r->headers[j].name, n)) {
				if (qpl_header(r, n) != r->headers[j].value)
					die("qpl_header is not the first of its name");
				break;
			}
	}
}

static void check_status(long status, quote3_error_t nf)
{
	quote3_error_t ret = qpl_status_error(status, nf);

	if ((ret == SGX_QL_SUCCESS) != (status == 200) ||
	    (status == 404 && ret != nf))
		die("an HTTP status mapped to the wrong code");
	if (status != 200 && status != 404 && ret != SGX_QL_PLATFORM_UNKNOWN &&
	    ret != SGX_QL_CERTS_UNAVAILABLE && ret != SGX_QL_SERVICE_UNAVAILABLE &&
	    ret != SGX_QL_UNKNOWN_MESSAGE_RESPONSE)
		die("an HTTP status mapped to a code QCNL does not give");
}

static void check_pckcert(const struct qpl_reply *r)
{
	sgx_ql_config_t *c = (sgx_ql_config_t *)r;	/* must be overwritten */
	char why[WHY_LEN] = "";
	quote3_error_t ret = qpl_parse_pckcert(r, &c, why, sizeof(why));
	const char *tcbm = qpl_header(r, "sgx-tcbm");
	const char *enc = qpl_header(r, "sgx-pck-certificate-issuer-chain");
	char *chain;
	size_t clen;
	uint8_t svn[2];

	if (ret) {
		if (c)
			die("pckcert: a refusal with a configuration");
		check_refusal(ret, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			      SGX_QL_ERROR_MESSAGE_PARSING_ERROR, why, "pckcert");
		return;
	}
	if (!c || !c->p_cert_data || !tcbm || !enc)
		die("pckcert: success without its parts");
	chain = qpl_pct_decode(enc);
	if (!chain)
		die("pckcert: success with a chain that does not decode");
	clen = strlen(chain);
	if (c->version != SGX_QL_CONFIG_VERSION_1 ||
	    c->cert_data_size != r->len + clen + 1 ||
	    memcmp(c->p_cert_data, r->body, r->len) ||
	    memcmp(c->p_cert_data + r->len, chain, clen + 1))
		die("pckcert: the certification data is not leaf, chain, NUL");
	for (int i = 0; i < 18; i++) {
		int v = hexval((unsigned char)tcbm[2 * i]) << 4 |
			hexval((unsigned char)tcbm[2 * i + 1]);

		if (i < 16 && c->cert_cpu_svn[i] != v)
			die("pckcert: CPUSVN is not SGX-TCBm's");
		if (i >= 16)
			svn[i - 16] = (uint8_t)v;
	}
	if (c->cert_pce_isv_svn != (svn[0] | svn[1] << 8))
		die("pckcert: PCESVN is not SGX-TCBm's");
	free(chain);
	qpl_free_config(c);
}

static const char *const chain_hdrs[4] = { NULL, "sgx-pck-crl-issuer-chain",
	"tcb-info-issuer-chain", "sgx-enclave-identity-issuer-chain" };

/* One part, kept in a collateral structure freed by the provider's own
 * free, as qpl.c's collateral() assembles them. */
static void check_part(const struct qpl_reply *r, int hdr, bool hex)
{
	sgx_ql_qve_collateral_t *c = calloc(1, sizeof(*c));
	const char *name = chain_hdrs[hdr];
	char why[WHY_LEN] = "", *data = (char *)r, *chain = NULL;
	uint32_t len = 7, clen = 0;
	quote3_error_t ret;

	if (!c)
		return;
	if (hdr == 2 && !qpl_header(r, name))
		name = "sgx-tcb-info-issuer-chain";
	ret = qpl_parse_part(r, name, hex, &data, &len, &chain, &clen, why,
			     sizeof(why));
	if (ret) {
		if (data || len || chain)
			die("part: a refusal with an output");
		check_refusal(ret, SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
			      SGX_QL_ERROR_MESSAGE_PARSING_ERROR, why, "part");
		free(c);
		return;
	}
	if (!data || (name && (!chain || clen != strlen(chain) + 1 ||
			       !strstr(chain, "-----BEGIN CERTIFICATE-----"))))
		die("part: success without its data or chain");
	if (!name && chain)
		die("part: a chain where none was asked for");
	if (hex) {
		size_t n = r->len;

		while (n && isspace(r->body[n - 1]))
			n--;
		if (!len || len != n / 2 || data[len])
			die("part: DER not the hex text's bytes and a NUL");
		for (size_t i = 0; i < len; i++)
			if ((uint8_t)data[i] != (hexval(r->body[2 * i]) << 4 |
						 hexval(r->body[2 * i + 1])))
				die("part: DER not the hex text's bytes");
	} else if (len != r->len + 1 || memcmp(data, r->body, r->len) ||
		   data[r->len]) {
		die("part: text not the body and a NUL counted in its size");
	}
	c->tcb_info = data;
	c->tcb_info_size = len;
	c->tcb_info_issuer_chain = chain;
	c->tcb_info_issuer_chain_size = clen;
	qpl_free_collateral(c);
}

static bool url_ok(const char *u, bool may_be_empty)
{
	const char *nul = memchr(u, '\0', QCNL_URL_MAX);

	if (!nul)
		return false;
	if (nul == u)
		return may_be_empty;
	return nul[-1] == '/';
}

static void check_conf(const uint8_t *text, size_t len)
{
	char *exact = malloc(len ? len : 1), why[WHY_LEN] = "";
	struct qcnl_conf c;
	quote3_error_t ret;

	if (!exact)
		return;
	memcpy(exact, text, len);
	ret = qcnl_conf_parse(exact, len, &c, why, sizeof(why));
	free(exact);
	if (ret) {
		check_refusal(ret, SGX_QL_CONFIG_INVALID_JSON,
			      SGX_QL_ERROR_INVALID_PARAMETER, why, "conf");
		return;
	}
	if (!url_ok(c.pccs_url, false) || !url_ok(c.collateral_url, false) ||
	    !url_ok(c.local_pck_url, true))
		die("conf: a URL that is empty, unterminated or without its '/'");
	if (c.retry_times > 100 || c.retry_delay > 600)
		die("conf: retries past QCNL's limits");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	debug = getenv("FUZZ_DEBUG") != NULL;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const quote3_error_t not_found[4] = { SGX_QL_NO_PLATFORM_CERT_DATA,
		SGX_QL_NO_QUOTE_COLLATERAL_DATA, SGX_QL_NO_QVE_IDENTITY_DATA,
		SGX_QL_ERROR_UNEXPECTED };
	struct qpl_reply r = { .status = 200 };
	const uint8_t *p = data + 1, *end = data + size;
	int colons = 0;
	bool nul = false;

	if (size < 1)
		return 0;
	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		char *line;

		if (n == 1 || (n == 2 && p[0] == '\r')) {
			p += n;
			break;
		}
		/* An allocation of exactly the line: no NUL to lean on. */
		line = malloc(n);
		if (!line)
			break;
		memcpy(line, p, n);
		if (n > 5 && !memcmp(line, "HTTP/", 5)) {
			const char *sp = memchr(line, ' ', n);

			r.status = 0;
			for (const char *d = sp ? sp + 1 : line + n;
			     d < line + n && isdigit((unsigned char)*d) &&
			     r.status < 100000; d++)
				r.status = r.status * 10 + (*d - '0');
		}
		colons += memchr(line, ':', n) != NULL;
		nul |= memchr(line, '\0', n) != NULL;
		if (qpl_reply_add_header(&r, line, n))
			die("a header refused with memory to spare");
		free(line);
		p += n;
	}
	if (p < end) {
		r.len = (size_t)(end - p);
		r.body = malloc(r.len + 1);
		if (!r.body) {
			qpl_reply_free(&r);
			return 0;
		}
		memcpy(r.body, p, r.len);
		r.body[r.len] = '\0';
	}

	check_headers(&r, colons, nul);
	check_status(r.status, not_found[data[0] >> 3 & 3]);
	check_pckcert(&r);
	check_part(&r, data[0] & 3, data[0] & 4);
	for (int i = 0; i < r.nr_headers; i++)
		check_decode(r.headers[i].value);
	if (r.body && !memchr(r.body, '\0', r.len))
		check_decode((const char *)r.body);
	check_conf(r.body ? r.body : (const uint8_t *)"", r.len);
	qpl_reply_free(&r);
	return 0;
}
