/* SPDX-License-Identifier: MIT */
/*
 * libdcap_quoteprov.so.1: the quote provider library of Intel's DCAP
 * stack (DCAP 1.23 ABI, sgx_default_quote_provider.h), which the quote
 * library asks for a platform's PCK certificate chain and verifiers ask
 * for collateral. Like Intel's (QPL over QCNL) it reads the QCNL
 * configuration (src/dcap/qpl_conf.c) and fetches from the PCCS REST API
 * it names, by default https://localhost:8081/sgx/certification/v4/,
 * where `sgxemu pccs` answers; the TLS rules are src/dcap/qpl_http.c's.
 *
 * Each call reads the configuration afresh (it is a small file, and a
 * test or an administrator may change it between calls); answers are
 * cached in memory only when it asks for that (src/dcap/qpl_cache.c).
 *
 * Errors: the codes Intel's provider maps QCNL's results to (a 404 is
 * "no data" for what was asked: certificates, collateral, QvE identity;
 * a server that cannot be reached is SGX_QL_NETWORK_ERROR; an answer
 * that does not parse, SGX_QL_ERROR_MESSAGE_PARSING_ERROR), each with
 * one line through the logging callback, or on stderr without one.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "dcap/qpl.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static sgx_ql_logging_callback_t logger;
static bool logger_set;

static quote3_error_t qpl_fail(quote3_error_t ret, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static quote3_error_t qpl_fail(quote3_error_t ret, const char *fmt, ...)
{
	sgx_ql_logging_callback_t cb;
	char msg[600];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "[QPL] sgxemu: ");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	cb = logger;
	pthread_mutex_unlock(&log_lock);
	if (cb) {
		size_t len = strlen(msg);

		if (len + 2 < sizeof(msg))
			strcpy(msg + len, "\n");
		cb(SGX_QL_LOG_ERROR, msg);
	} else if (!logger_set) {
		fprintf(stderr, "%s (0x%04x)\n", msg, ret);
	}
	return ret;
}

static quote3_error_t config(struct qcnl_conf *c)
{
	char path[4096], why[300] = "";
	quote3_error_t ret = qcnl_conf_load(c, path, sizeof(path), why, sizeof(why));

	return ret ? qpl_fail(ret, "%s: %s", path, why) : SGX_QL_SUCCESS;
}

/* GET @base@path; a non-200 status becomes its code (@not_found for 404). */
/* GET @base@path, or its answer from the cache of @kind when the
 * configuration keeps one (then *@cached, when given, is true). */
static quote3_error_t fetch(const struct qcnl_conf *c, const char *base,
			    const char *path, quote3_error_t not_found,
			    unsigned kind, struct qpl_reply *r, bool *cached)
{
	unsigned hours = kind == QPL_CACHE_PCK ? c->pck_cache_hours : c->coll_cache_hours;
	char url[QCNL_URL_MAX + 1200], why[600] = "";
	quote3_error_t ret;

	snprintf(url, sizeof(url), "%s%s", base, path);
	if (cached)
		*cached = false;
	if (hours && qpl_cache_get(kind, url, r)) {
		if (cached)
			*cached = true;
		return SGX_QL_SUCCESS;
	}
	ret = qpl_http_get(c, url, r, why, sizeof(why));
	if (ret)
		return qpl_fail(ret, "%s", why);
	ret = qpl_status_error(r->status, not_found);
	if (ret) {
		qpl_fail(ret, "%s: HTTP %ld%s%.200s", url, r->status,
			 r->len && r->len < 200 ? ": " : "",
			 r->len && r->len < 200 ? (const char *)r->body : "");
		qpl_reply_free(r);
	}
	return ret;
}

/* Keep @r, fetched from @base@path, once the caller found it good. */
static void keep(const struct qcnl_conf *c, const char *base, const char *path,
		 unsigned kind, const struct qpl_reply *r)
{
	unsigned hours = kind == QPL_CACHE_PCK ? c->pck_cache_hours : c->coll_cache_hours;
	char url[QCNL_URL_MAX + 1200];

	/* A URL too long for the key is not kept (it would be another's). */
	if (!hours ||
	    snprintf(url, sizeof(url), "%s%s", base, path) >= (int)sizeof(url))
		return;
	qpl_cache_put(kind, url, r, hours);
}

static void hex_upper(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02X", p[i]);
}

EXPORT quote3_error_t sgx_ql_get_quote_config(const sgx_ql_pck_cert_id_t *id,
					      sgx_ql_config_t **out)
{
	char path[2048], qeid[261], cpusvn[33], svn[5], pceid[5];
	const char *base;
	struct qpl_reply r;
	struct qcnl_conf c;
	char why[300] = "";
	quote3_error_t ret;

	if (!id || !out || !id->p_qe3_id || !id->qe3_id_size ||
	    id->qe3_id_size > 130 || !id->p_platform_cpu_svn ||
	    !id->p_platform_pce_isv_svn ||
	    (id->p_encrypted_ppid && id->encrypted_ppid_size != 384))
		return qpl_fail(SGX_QL_ERROR_INVALID_PARAMETER, "get_quote_config: "
				"no certificate id, QE id, CPUSVN or PCESVN, "
				"or an encrypted PPID that is not 384 bytes");
	*out = NULL;
	ret = config(&c);
	if (ret)
		return ret;
	hex_upper(qeid, id->p_qe3_id, id->qe3_id_size);
	hex_upper(cpusvn, id->p_platform_cpu_svn, 16);
	hex_upper(svn, (const uint8_t *)id->p_platform_pce_isv_svn, 2);
	hex_upper(pceid, (const uint8_t *)&id->pce_id, 2);
	snprintf(path, sizeof(path), "pckcert?qeid=%s&cpusvn=%s&pcesvn=%s&pceid=%s",
		 qeid, cpusvn, svn, pceid);
	if (id->p_encrypted_ppid) {
		size_t n = strlen(path);

		strcpy(path + n, "&encrypted_ppid=");
		hex_upper(path + n + 16, id->p_encrypted_ppid, 384);
	}
	ret = SGX_QL_NO_PLATFORM_CERT_DATA;
	if (c.local_pck_url[0])
		ret = fetch(&c, base = c.local_pck_url, path,
			    SGX_QL_NO_PLATFORM_CERT_DATA, QPL_CACHE_PCK, &r, NULL);
	if (ret)
		ret = fetch(&c, base = c.pccs_url, path, SGX_QL_NO_PLATFORM_CERT_DATA,
			    QPL_CACHE_PCK, &r, NULL);
	if (ret)
		return ret;
	ret = qpl_parse_pckcert(&r, out, why, sizeof(why));
	if (!ret)
		keep(&c, base, path, QPL_CACHE_PCK, &r);
	qpl_reply_free(&r);
	return ret ? qpl_fail(ret, "%s", why) : SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_free_quote_config(sgx_ql_config_t *c)
{
	qpl_free_config(c);
	return SGX_QL_SUCCESS;
}

/* One collateral part from @path into @data/@chain; @json_key names the
 * signed document's body member (NULL for a CRL). */
static quote3_error_t part(const struct qcnl_conf *c, const char *path,
			   const char *chain_hdr, const char *chain_hdr_v3,
			   const char *json_key, bool hex_to_der, char **data,
			   uint32_t *len, char **chain, uint32_t *chain_len)
{
	struct qpl_reply r;
	char why[300] = "";
	quote3_error_t ret;
	bool cached;

	ret = fetch(c, c->collateral_url, path, SGX_QL_NO_QUOTE_COLLATERAL_DATA,
		    QPL_CACHE_COLLATERAL, &r, &cached);
	if (ret)
		return ret;
	if (chain_hdr_v3 && !qpl_header(&r, chain_hdr))
		chain_hdr = chain_hdr_v3;	/* a v3 PCCS's name */
	ret = qpl_parse_part(&r, chain_hdr, hex_to_der, data, len, chain,
			     chain_len, why, sizeof(why));
	/* A cached answer passed these checks when it was kept. */
	if (!ret && json_key && !cached)
		ret = qpl_check_signed_json(*data, *len, json_key, why, sizeof(why));
	if (!ret && chain_hdr && !cached)
		ret = qpl_check_chain(*chain, why, sizeof(why));
	if (!ret && !cached)
		keep(c, c->collateral_url, path, QPL_CACHE_COLLATERAL, &r);
	qpl_reply_free(&r);
	if (ret && *data) {		/* parsed, then refused: nothing kept */
		free(*data);
		*data = NULL;
		*len = 0;
		if (chain_hdr) {
			free(*chain);
			*chain = NULL;
		}
	}
	return ret ? qpl_fail(ret, "%s: %s", path, why) : SGX_QL_SUCCESS;
}

/*
 * Collateral as Intel's provider assembles it: PCK CRL and its chain,
 * TCB info and its chain, QE identity and its chain, the root CA CRL.
 * CRLs as hex text of their DER (collateral version 3.0), or as DER with
 * pccs_api_version 3.1 (version 3.1; fetched as hex and decoded, which
 * every PCCS serves). Text sizes count a NUL, and the root CA CRL's
 * always does, as Intel's provider adds one.
 */
static quote3_error_t collateral(const uint8_t *fmspc, uint16_t fmspc_size,
				 const char *pck_ca, const void *param,
				 uint16_t param_len, sgx_ql_qve_collateral_t **out)
{
	char path[256], fm[13];
	sgx_ql_qve_collateral_t *q;
	struct qcnl_conf c;
	quote3_error_t ret;
	char *unused = NULL;
	uint32_t unused_len;

	if (!fmspc || fmspc_size != 6 || !pck_ca || !out ||
	    (strcmp(pck_ca, "processor") && strcmp(pck_ca, "platform")) ||
	    (!param) != (!param_len))
		return qpl_fail(SGX_QL_ERROR_INVALID_PARAMETER, "collateral: "
				"FMSPC of 6 bytes, pck_ca \"processor\" or "
				"\"platform\" and an output pointer wanted");
	*out = NULL;
	ret = config(&c);
	if (ret)
		return ret;
	q = calloc(1, sizeof(*q));
	if (!q)
		return qpl_fail(SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	q->major_version = 3;
	q->minor_version = c.api_31 ? 1 : 0;
	q->tee_type = 0;
	hex_upper(fm, fmspc, 6);
	snprintf(path, sizeof(path), "pckcrl?ca=%s", pck_ca);
	ret = part(&c, path, "sgx-pck-crl-issuer-chain", NULL, NULL, c.api_31,
		   &q->pck_crl, &q->pck_crl_size, &q->pck_crl_issuer_chain,
		   &q->pck_crl_issuer_chain_size);
	snprintf(path, sizeof(path), "tcb?fmspc=%s%s", fm,
		 c.early ? "&update=early" : "");
	if (!ret)
		ret = part(&c, path, "tcb-info-issuer-chain",
			   "sgx-tcb-info-issuer-chain", "tcbInfo", false, &q->tcb_info,
			   &q->tcb_info_size, &q->tcb_info_issuer_chain,
			   &q->tcb_info_issuer_chain_size);
	if (!ret)
		ret = part(&c, c.early ? "qe/identity?update=early" : "qe/identity",
			   "sgx-enclave-identity-issuer-chain", NULL, "enclaveIdentity", false,
			   &q->qe_identity, &q->qe_identity_size,
			   &q->qe_identity_issuer_chain,
			   &q->qe_identity_issuer_chain_size);
	if (!ret)
		ret = part(&c, "rootcacrl", NULL, NULL, NULL, c.api_31, &q->root_ca_crl,
			   &q->root_ca_crl_size, &unused, &unused_len);
	if (!ret && c.api_31)
		q->root_ca_crl_size++;		/* its NUL */
	if (ret) {
		qpl_free_collateral(q);
		return ret;
	}
	*out = q;
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_get_quote_verification_collateral(
	const uint8_t *fmspc, uint16_t fmspc_size, const char *pck_ca,
	sgx_ql_qve_collateral_t **out)
{
	return collateral(fmspc, fmspc_size, pck_ca, NULL, 0, out);
}

/* The custom parameters go to a PCCS that ignores them (as Intel's
 * PCCS does); here they are only checked. */
EXPORT quote3_error_t sgx_ql_get_quote_verification_collateral_with_params(
	const uint8_t *fmspc, uint16_t fmspc_size, const char *pck_ca,
	const void *param, uint16_t param_len, sgx_ql_qve_collateral_t **out)
{
	return collateral(fmspc, fmspc_size, pck_ca, param, param_len, out);
}

EXPORT quote3_error_t sgx_ql_free_quote_verification_collateral(
	sgx_ql_qve_collateral_t *c)
{
	qpl_free_collateral(c);
	return SGX_QL_SUCCESS;
}

/* No TDX module here: no TDX collateral, as from a PCCS without it. */
EXPORT quote3_error_t tdx_ql_get_quote_verification_collateral(
	const uint8_t *fmspc, uint16_t fmspc_size, const char *pck_ca,
	sgx_ql_qve_collateral_t **out)
{
	(void)fmspc;
	(void)fmspc_size;
	(void)pck_ca;
	if (out)
		*out = NULL;
	return qpl_fail(SGX_QL_NO_QUOTE_COLLATERAL_DATA,
			"no TDX collateral: sgxemu is SGX only");
}

EXPORT quote3_error_t tdx_ql_get_quote_verification_collateral_with_params(
	const uint8_t *fmspc, uint16_t fmspc_size, const char *pck_ca,
	const void *param, uint16_t param_len, sgx_ql_qve_collateral_t **out)
{
	(void)param;
	(void)param_len;
	return tdx_ql_get_quote_verification_collateral(fmspc, fmspc_size,
							pck_ca, out);
}

EXPORT quote3_error_t tdx_ql_free_quote_verification_collateral(
	sgx_ql_qve_collateral_t *c)
{
	qpl_free_collateral(c);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_get_qve_identity(char **id, uint32_t *id_size,
					      char **chain, uint32_t *chain_size)
{
	struct qcnl_conf c;
	quote3_error_t ret;

	if (!id || !id_size || !chain || !chain_size)
		return qpl_fail(SGX_QL_ERROR_INVALID_PARAMETER,
				"get_qve_identity: an output pointer is NULL");
	*id = *chain = NULL;
	ret = config(&c);
	if (ret)
		return ret;
	ret = part(&c, "qve/identity", "sgx-enclave-identity-issuer-chain",
		   NULL, "enclaveIdentity", false, id, id_size, chain, chain_size);
	return ret == SGX_QL_NO_QUOTE_COLLATERAL_DATA ? SGX_QL_NO_QVE_IDENTITY_DATA : ret;
}

EXPORT quote3_error_t sgx_ql_free_qve_identity(char *id, char *chain)
{
	free(id);
	free(chain);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_get_root_ca_crl(uint8_t **crl, uint16_t *size)
{
	struct qcnl_conf c;
	quote3_error_t ret;
	char *data = NULL, *unused = NULL;
	uint32_t len = 0, unused_len;

	if (!crl || !size)
		return qpl_fail(SGX_QL_ERROR_INVALID_PARAMETER,
				"get_root_ca_crl: an output pointer is NULL");
	*crl = NULL;
	ret = config(&c);
	if (!ret)
		ret = part(&c, "rootcacrl", NULL, NULL, NULL, c.api_31, &data, &len,
			   &unused, &unused_len);
	if (ret)
		return ret;
	if (len > UINT16_MAX) {
		free(data);
		return qpl_fail(SGX_QL_ERROR_MESSAGE_PARSING_ERROR,
				"root CA CRL of %u bytes", len);
	}
	*crl = (uint8_t *)data;
	*size = (uint16_t)len;
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_ql_free_root_ca_crl(uint8_t *crl)
{
	free(crl);
	return SGX_QL_SUCCESS;
}

/* The level is the lowest that reaches @cb; errors are all this library
 * says, so any level receives them. NULL silences it. */
EXPORT quote3_error_t sgx_ql_set_logging_callback(sgx_ql_logging_callback_t cb,
						  sgx_ql_log_level_t level)
{
	pthread_mutex_lock(&log_lock);
	(void)level;
	logger = cb;
	logger_set = true;
	pthread_mutex_unlock(&log_lock);
	return SGX_QL_SUCCESS;
}

/* SGX_QPL_CACHE_MULTICERTS (1 << 2) names a cache this provider does not
 * keep (multi-package platforms). */
EXPORT quote3_error_t sgx_qpl_clear_cache(uint32_t type)
{
	qpl_cache_clear(type);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qpl_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? SGX_QL_ERROR_UNEXPECTED
						      : SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qpl_global_cleanup(void)
{
	curl_global_cleanup();
	return SGX_QL_SUCCESS;
}
