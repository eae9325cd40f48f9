// SPDX-License-Identifier: MIT
/*
 * The quote provider's socket-free parts (src/dcap/qpl_conf.c,
 * qpl_parse.c): the QCNL configuration in its JSON and legacy forms and
 * every refusal, percent-decoding, and PCCS answers made by hand into
 * sgx_ql_config_t and collateral parts, malformed ones refused with
 * SGX_QL_ERROR_MESSAGE_PARSING_ERROR. The HTTP side is test_pccs's.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "aesm_client.h"
#include "attest/attest.h"
#include "test.h"
#include "dcap/qpl.h"

#define CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

static quote3_error_t conf(const char *text, struct qcnl_conf *c)
{
	char why[256];

	return qcnl_conf_parse(text, strlen(text), c, why, sizeof(why));
}

TEST(conf_json_with_comments_as_shipped)
{
	struct qcnl_conf c;

	REQUIRE_EQ(conf("{\n  // the PCCS\n  \"pccs_url\": \"https://a.example:9/sgx/certification/v4\"\n"
			"  /* block, with a \"quote\" */ ,\"use_secure_cert\": false\n"
			"  ,\"retry_times\": 6, \"retry_delay\": 10\n"
			"  //,\"collateral_service\": \"https://ignored/\"\n"
			"  ,\"pccs_api_version\": \"3.1\", \"tcb_update_type\": \"early\"\n"
			"  ,\"custom_request_options\": {\"get_cert\": {\"headers\": {}}}\n}", &c), 0);
	CHECK(!strcmp(c.pccs_url, "https://a.example:9/sgx/certification/v4/"));
	CHECK(!strcmp(c.collateral_url, c.pccs_url));
	CHECK(!c.secure);
	CHECK(c.api_31);
	CHECK(c.early);
	CHECK_EQ(c.retry_times, 6u);
	CHECK_EQ(c.retry_delay, 10u);
}

TEST(conf_defaults_and_collateral_service)
{
	struct qcnl_conf c;

	REQUIRE_EQ(conf("{}", &c), 0);
	CHECK(!strcmp(c.pccs_url, "https://localhost:8081/sgx/certification/v4/"));
	CHECK(c.secure);
	CHECK(!c.api_31);
	CHECK_EQ(c.retry_times, 0u);
	REQUIRE_EQ(conf("{\"collateral_service\": \"http://b/x/\"}", &c), 0);
	CHECK(!strcmp(c.collateral_url, "http://b/x/"));
	CHECK(!strcmp(c.pccs_url, "https://localhost:8081/sgx/certification/v4/"));
}

TEST(conf_legacy_key_value_lines)
{
	struct qcnl_conf c;

	REQUIRE_EQ(conf("# old style\nPCCS_URL=https://h:1/sgx/certification/v3/\n"
			"USE_SECURE_CERT=FALSE\n  RETRY_TIMES = 2\nUNKNOWN=1\n", &c), 0);
	CHECK(!strcmp(c.pccs_url, "https://h:1/sgx/certification/v3/"));
	CHECK(!c.secure);
	CHECK_EQ(c.retry_times, 2u);
	CHECK_EQ(conf("PCCS_URL\n", &c), SGX_QL_ERROR_INVALID_PARAMETER);
}

TEST(conf_cache_hours)
{
	struct qcnl_conf c;

	REQUIRE_EQ(conf("{\"pck_cache_expire_hours\": 168,"
			" \"verify_collateral_cache_expire_hours\": 2}", &c), 0);
	CHECK_EQ(c.pck_cache_hours, 168u);
	CHECK_EQ(c.coll_cache_hours, 2u);
	REQUIRE_EQ(conf("{\"verify_collateral_cache_expire_hours\": 99999999}", &c), 0);
	CHECK_EQ(c.coll_cache_hours, 8760u);	/* a year at most */
	CHECK_EQ(c.pck_cache_hours, 0u);	/* absent: no cache */
	REQUIRE_EQ(conf("PCCS_URL=https://h/\nPCK_CACHE_EXPIRE_HOURS=5\n"
			"VERIFY_COLLATERAL_CACHE_EXPIRE_HOURS=7\n", &c), 0);
	CHECK_EQ(c.pck_cache_hours, 5u);
	CHECK_EQ(c.coll_cache_hours, 7u);
}

TEST(conf_refusals)
{
	struct qcnl_conf c;
	char big[QCNL_URL_MAX + 64];

	CHECK_EQ(conf("{\"pccs_url\": ", &c), SGX_QL_CONFIG_INVALID_JSON);
	CHECK_EQ(conf("{ /* never closed", &c), SGX_QL_CONFIG_INVALID_JSON);
	CHECK_EQ(conf("{\"a\": 1,}", &c), SGX_QL_CONFIG_INVALID_JSON);
	CHECK_EQ(conf("{\"use_secure_cert\": \"yes\"}", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(conf("{\"pccs_url\": 5}", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(conf("{\"pccs_url\": \"\"}", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(conf("{\"pccs_api_version\": \"4.0\"}", &c), SGX_QL_ERROR_INVALID_PARAMETER);
	snprintf(big, sizeof(big), "{\"pccs_url\": \"https://%0*d\"}", QCNL_URL_MAX, 0);
	CHECK_EQ(conf(big, &c), SGX_QL_ERROR_INVALID_PARAMETER);
}

/*
 * A URL with a NUL in it would reach curl cut short of its '/' (fuzz_qpl
 * found "PCCS_URL=https://pccs:8081/sgx/certi\0...d/v3/" taken, with a
 * pccs_url of "https://pccs:8081/sgx/certi"); control bytes are refused
 * too, in both forms.
 */
TEST(conf_urls_with_control_bytes_refused)
{
	static const char lines[] = "PCCS_URL=https://h:1/sgx/certi\0\0d/v3/\n";
	static const char json[] = "{\"local_pck_url\": \"http://h/\0x/\"}";
	struct qcnl_conf c;
	char why[256];

	CHECK_EQ(qcnl_conf_parse(lines, sizeof(lines) - 1, &c, why, sizeof(why)),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK(strstr(why, "PCCS_URL") != NULL);
	CHECK(qcnl_conf_parse(json, sizeof(json) - 1, &c, why, sizeof(why)) != 0);
	CHECK_EQ(conf("COLLATERAL_SERVICE=http://h/\x01/\n", &c),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	CHECK_EQ(conf("LOCAL_PCK_URL=http://h/\x7f\n", &c),
		 SGX_QL_ERROR_INVALID_PARAMETER);
	REQUIRE_EQ(conf("PCCS_URL=https://h:1/sgx/certification/v3\n", &c), 0);
	CHECK(!strcmp(c.pccs_url, "https://h:1/sgx/certification/v3/"));
}

TEST(percent_decoding_is_exact)
{
	char *s = qpl_pct_decode("a%20b%0A");

	REQUIRE(s);
	CHECK(!strcmp(s, "a b\n"));
	free(s);
	/* The last two characters survive without a closing escape (QCNL's
	 * own decoder would drop them). */
	s = qpl_pct_decode("ab%2Fcd");
	REQUIRE(s);
	CHECK(!strcmp(s, "ab/cd"));
	free(s);
	CHECK(qpl_pct_decode("%") == NULL);
	CHECK(qpl_pct_decode("%4") == NULL);
	CHECK(qpl_pct_decode("x%zz") == NULL);
}

/* A reply with @body and "name: value" header lines (NULL-terminated). */
static void reply(struct qpl_reply *r, const char *body, ...)
{
	va_list ap;
	const char *h;

	memset(r, 0, sizeof(*r));
	if (body) {
		r->len = strlen(body);
		r->body = (uint8_t *)strdup(body);
	}
	r->status = 200;
	va_start(ap, body);
	while ((h = va_arg(ap, const char *)))
		REQUIRE_EQ(qpl_reply_add_header(r, h, strlen(h)), 0);
	va_end(ap);
}

static char *pct(const char *s)
{
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	for (; *s; s++)
		o += sprintf(o, "%%%02X", (unsigned char)*s);
	*o = '\0';
	return out;
}

/* This test platform's PCK chain as PEM: the leaf, the CA, the root. */
struct chain3 {
	char *leaf, *ca, *root;
};

static bool chain3(struct chain3 *c)
{
	struct sgx_attest *a;
	char *p, *q;

	tc_attest_platform();
	a = tc_attest();
	if (!a)
		return false;
	p = strstr(a->cert_data + 1, "-----BEGIN CERTIFICATE-----");
	q = p ? strstr(p + 1, "-----BEGIN CERTIFICATE-----") : NULL;
	if (!q)
		return false;
	c->leaf = strndup(a->cert_data, (size_t)(p - a->cert_data));
	c->ca = strndup(p, (size_t)(q - p));
	c->root = strdup(q);
	return c->leaf && c->ca && c->root;
}

static void chain3_free(struct chain3 *c)
{
	free(c->leaf);
	free(c->ca);
	free(c->root);
}

static char *cat(const char *a, const char *b)
{
	char *s = malloc(strlen(a) + strlen(b) + 1);

	strcpy(s, a);
	return strcat(s, b);
}

TEST(pckcert_answer_into_type5_data)
{
	struct qpl_reply r;
	struct chain3 k;
	sgx_ql_config_t *c;
	char why[256], *two, *enc, *hdr, *all;

	REQUIRE(chain3(&k));
	two = cat(k.ca, k.root);
	all = cat(k.leaf, two);
	enc = pct(two);
	hdr = malloc(strlen(enc) + 64);
	sprintf(hdr, "SGX-PCK-Certificate-Issuer-Chain: %s\r\n", enc);
	reply(&r, k.leaf, hdr, "SGX-TCBm: 0102030405060708090A0B0C0D0E0F100300\r\n",
	      "Content-Type: application/x-pem-file\r\n", NULL);
	REQUIRE_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), 0);
	CHECK_EQ(c->version, 1u);
	CHECK_EQ(c->cert_cpu_svn[0], 1);
	CHECK_EQ(c->cert_cpu_svn[15], 0x10);
	CHECK_EQ(c->cert_pce_isv_svn, 3);
	CHECK_EQ(c->cert_data_size, (uint32_t)strlen(all) + 1);
	CHECK(!memcmp(c->p_cert_data, all, strlen(all) + 1));
	qpl_free_config(c);
	qpl_reply_free(&r);
	/* The chain header of another order: refused, nothing returned. */
	free(enc);
	free(two);
	two = cat(k.root, k.ca);
	enc = pct(two);
	free(hdr);
	hdr = malloc(strlen(enc) + 64);
	sprintf(hdr, "SGX-PCK-Certificate-Issuer-Chain: %s\r\n", enc);
	reply(&r, k.leaf, hdr, "SGX-TCBm: 0102030405060708090A0B0C0D0E0F100300\r\n",
	      NULL);
	c = (sgx_ql_config_t *)1;
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(c == NULL);
	CHECK(strstr(why, "certificate 1 is not issued by certificate 2") != NULL);
	qpl_reply_free(&r);
	free(hdr);
	free(enc);
	free(two);
	free(all);
	chain3_free(&k);
}

/*
 * The checks a part gets once it parsed (qpl_check.c): the signed
 * documents' shape, the issuer chains' links up to a self-signed root.
 */
TEST(signed_documents_and_chains_checked)
{
	static const char sig[] = "\"signature\":\"" 
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
		"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"";
	struct chain3 k;
	char why[256], doc[512], *p;

	snprintf(doc, sizeof(doc), "{\"tcbInfo\":{\"version\":3},%s}", sig);
	CHECK_EQ(qpl_check_signed_json(doc, strlen(doc) + 1, "tcbInfo", why,
				       sizeof(why)), 0);
	/* Another document where this one was asked for. */
	CHECK_EQ(qpl_check_signed_json(doc, strlen(doc), "enclaveIdentity", why,
				       sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "no \"enclaveIdentity\" object") != NULL);
	/* Not JSON: cut short, or with trailing bytes. */
	CHECK_EQ(qpl_check_signed_json(doc, strlen(doc) - 1, "tcbInfo", why,
				       sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "not JSON") != NULL);
	CHECK_EQ(qpl_check_signed_json("<html>", 6, "tcbInfo", why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	/* The signature missing or of another length. */
	CHECK_EQ(qpl_check_signed_json("{\"tcbInfo\":{}}", 14, "tcbInfo", why,
				       sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	snprintf(doc, sizeof(doc), "{\"tcbInfo\":{},\"signature\":\"0011\"}");
	CHECK_EQ(qpl_check_signed_json(doc, strlen(doc), "tcbInfo", why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "64 bytes") != NULL);

	REQUIRE(chain3(&k));
	p = cat(k.ca, k.root);
	CHECK_EQ(qpl_check_chain(p, why, sizeof(why)), 0);
	free(p);
	CHECK_EQ(qpl_check_chain(k.root, why, sizeof(why)), 0);
	/* The CA without its root: the chain ends at a certificate not its own issuer. */
	CHECK_EQ(qpl_check_chain(k.ca, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "self-signed root (certificate 1)") != NULL);
	/* The leaf straight under the root: a link missing. */
	p = cat(k.leaf, k.root);
	CHECK_EQ(qpl_check_chain(p, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "certificate 1 is not issued by certificate 2") != NULL);
	free(p);
	/* A certificate whose signature was changed. */
	p = cat(k.ca, k.root);
	char *end = strstr(p, "-----END CERTIFICATE-----");
	REQUIRE(end && end - p > 10);
	end[-6] = end[-6] == 'A' ? 'B' : 'A';
	CHECK_EQ(qpl_check_chain(p, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	free(p);
	CHECK_EQ(qpl_check_chain(CERT, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(strstr(why, "no readable") != NULL);
	chain3_free(&k);
}

TEST(pckcert_answers_refused)
{
	struct qpl_reply r;
	sgx_ql_config_t *c = (sgx_ql_config_t *)1;
	char why[256], *enc = pct(CERT), hdr[1024];
	const char *tcbm = "SGX-TCBm: 0102030405060708090A0B0C0D0E0F100300";

	snprintf(hdr, sizeof(hdr), "sgx-pck-certificate-issuer-chain: %s", enc);
	reply(&r, CERT, tcbm, NULL);			/* no chain */
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	CHECK(c == NULL);
	qpl_reply_free(&r);
	reply(&r, CERT, hdr, NULL);			/* no TCBm */
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, CERT, hdr, "SGX-TCBm: 0102", NULL);	/* short TCBm */
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, CERT, hdr, "SGX-TCBm: 0102030405060708090A0B0C0D0E0F10030Z", NULL);
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, "not a certificate", hdr, tcbm, NULL);
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, CERT, "SGX-PCK-Certificate-Issuer-Chain: junk%0A", tcbm, NULL);
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, NULL, hdr, tcbm, NULL);		/* empty body */
	CHECK_EQ(qpl_parse_pckcert(&r, &c, why, sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	free(enc);
}

TEST(collateral_parts_text_and_der)
{
	struct qpl_reply r;
	char why[256], *data, *chain = NULL, *enc = pct(CERT), hdr[1024];
	uint32_t len, clen;

	snprintf(hdr, sizeof(hdr), "TCB-Info-Issuer-Chain: %s", enc);
	reply(&r, "{\"tcbInfo\":{}}", hdr, NULL);
	REQUIRE_EQ(qpl_parse_part(&r, "tcb-info-issuer-chain", false, &data, &len,
				  &chain, &clen, why, sizeof(why)), 0);
	CHECK_EQ(len, 15u);		/* the text and its NUL */
	CHECK(!strcmp(data, "{\"tcbInfo\":{}}"));
	CHECK_EQ(clen, (uint32_t)strlen(CERT) + 1);
	CHECK(!strcmp(chain, CERT));
	free(data);
	free(chain);
	qpl_reply_free(&r);
	/* A CRL as hex text, decoded to DER (pccs_api_version 3.1). */
	reply(&r, "3082000aff00\n", NULL);
	REQUIRE_EQ(qpl_parse_part(&r, NULL, true, &data, &len, NULL, NULL,
				  why, sizeof(why)), 0);
	CHECK_EQ(len, 6u);
	CHECK(!memcmp(data, "\x30\x82\x00\x0a\xff\x00", 6));
	free(data);
	qpl_reply_free(&r);
	reply(&r, "30820", NULL);		/* odd */
	CHECK_EQ(qpl_parse_part(&r, NULL, true, &data, &len, NULL, NULL, why,
				sizeof(why)), SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	reply(&r, "{}", NULL);			/* the chain missing */
	CHECK_EQ(qpl_parse_part(&r, "tcb-info-issuer-chain", false, &data, &len,
				&chain, &clen, why, sizeof(why)),
		 SGX_QL_ERROR_MESSAGE_PARSING_ERROR);
	qpl_reply_free(&r);
	free(enc);
}

TEST(headers_lower_cased_and_bounded)
{
	struct qpl_reply r;
	char line[64];

	memset(&r, 0, sizeof(r));
	REQUIRE_EQ(qpl_reply_add_header(&r, "HTTP/1.1 200 OK\r\n", 17), 0);
	REQUIRE_EQ(qpl_reply_add_header(&r, "SGX-FMSPC:  534758454D55 \r\n", 27), 0);
	CHECK_EQ(r.nr_headers, 1);
	CHECK(!strcmp(qpl_header(&r, "sgx-fmspc"), "534758454D55"));
	for (int i = 0; i < 3 * QPL_MAX_HEADERS; i++) {
		snprintf(line, sizeof(line), "X-%d: v\r\n", i);
		REQUIRE_EQ(qpl_reply_add_header(&r, line, strlen(line)), 0);
	}
	CHECK_EQ(r.nr_headers, QPL_MAX_HEADERS);
	qpl_reply_free(&r);
}
