/* SPDX-License-Identifier: MIT */
/*
 * The parts of libdcap_quoteprov.so.1 (src/dcap/qpl*.c): the QCNL
 * configuration, the HTTP(S) client and the parsing of PCCS answers into
 * the structures of the provider's ABI. The parsing takes bytes, not
 * sockets, so that fuzzers and tests drive it without a server.
 */
#ifndef SGXEMU_DCAP_QPL_H
#define SGXEMU_DCAP_QPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dcap/dcap.h"

#define QCNL_URL_MAX		1024
#define QCNL_DEFAULT_CONF	"/etc/sgx_default_qcnl.conf"
#define QCNL_DEFAULT_URL	"https://localhost:8081/sgx/certification/v4/"
/* The largest answer taken from a PCCS: collateral is kilobytes. */
#define QPL_MAX_BODY		(1u << 20)
#define QPL_MAX_HEADERS		16

/* What /etc/sgx_default_qcnl.conf says (attestation-facts.md §4.5). */
struct qcnl_conf {
	char pccs_url[QCNL_URL_MAX];		/* ends in '/' */
	char collateral_url[QCNL_URL_MAX];	/* pccs_url unless set */
	char local_pck_url[QCNL_URL_MAX];	/* "" unless set */
	bool secure;				/* use_secure_cert */
	bool api_31;		/* pccs_api_version "3.1": raw DER CRLs */
	bool early;		/* tcb_update_type "early" */
	unsigned retry_times, retry_delay;
	unsigned pck_cache_hours;	/* pck_cache_expire_hours */
	unsigned coll_cache_hours;	/* verify_collateral_cache_expire_hours */
};

/*
 * Parse a configuration text: JSON with // and block comments, else the
 * legacy KEY=VALUE lines. Unknown keys are ignored, as QCNL does. 0, or
 * SGX_QL_CONFIG_INVALID_JSON (text that opens as JSON but is not) or
 * SGX_QL_ERROR_INVALID_PARAMETER (a value of the wrong kind) with @why.
 */
quote3_error_t qcnl_conf_parse(const char *text, size_t len,
			       struct qcnl_conf *c, char *why, size_t whylen);
/* The file $QCNL_CONF_PATH, else QCNL_DEFAULT_CONF; defaults where there
 * is no file. */
quote3_error_t qcnl_conf_load(struct qcnl_conf *c, char *path, size_t pathlen,
			      char *why, size_t whylen);

struct qpl_reply {
	long status;
	uint8_t *body;			/* malloc'd, NUL after len */
	size_t len;
	int nr_headers;
	struct {
		char *name;		/* lower-cased, as QCNL matches them */
		char *value;
	} headers[QPL_MAX_HEADERS];
};

/* Header @name (lower case) of @r, or NULL. */
const char *qpl_header(const struct qpl_reply *r, const char *name);
void qpl_reply_free(struct qpl_reply *r);
/* Add one raw "Name: value\r\n" header line to @r (the HTTP client's
 * header callback, and the fuzzer). 0 or -1 when out of room/memory. */
int qpl_reply_add_header(struct qpl_reply *r, const char *line, size_t len);

/*
 * GET @url with the configuration's TLS rules (use_secure_cert: verify
 * against this installation's root; false: accept any certificate) and
 * its retries. 0 with any HTTP status in @r, or SGX_QL_NETWORK_ERROR /
 * SGX_QL_MESSAGE_ERROR (an answer over QPL_MAX_BODY) with @why.
 */
quote3_error_t qpl_http_get(const struct qcnl_conf *c, const char *url,
			    struct qpl_reply *r, char *why, size_t whylen);

/* The code for a non-200 status (@what: the provider call's own "not
 * found" code for 404, as QCNL maps them). */
quote3_error_t qpl_status_error(long status, quote3_error_t not_found);

/* Percent-decoding of a header value into a malloc'd string; NULL when
 * malformed (a '%' not followed by two hex digits). */
char *qpl_pct_decode(const char *s);

/*
 * A pckcert answer (body: the PCK leaf PEM; headers: the issuer chain,
 * SGX-TCBm) as the provider's sgx_ql_config_t: type 5 certification data
 * is leaf, chain and a NUL. SGX_QL_ERROR_MESSAGE_PARSING_ERROR when
 * something is missing or malformed.
 */
quote3_error_t qpl_parse_pckcert(const struct qpl_reply *r,
				 sgx_ql_config_t **out, char *why, size_t whylen);
void qpl_free_config(sgx_ql_config_t *c);

/*
 * One collateral part: the body into @data and @len, the issuer chain
 * header @chain_hdr (NULL: none) into @chain and @chain_len. Text is kept
 * with a NUL counted in its size; @hex_to_der turns a hex-text CRL into
 * its DER bytes (pccs_api_version 3.1), which get a NUL after them that
 * their size does not count.
 */
quote3_error_t qpl_parse_part(const struct qpl_reply *r, const char *chain_hdr,
			      bool hex_to_der, char **data, uint32_t *len,
			      char **chain, uint32_t *chain_len,
			      char *why, size_t whylen);
void qpl_free_collateral(sgx_ql_qve_collateral_t *c);

/*
 * The provider's in-memory cache of answers (src/dcap/qpl_cache.c), by
 * kind (QPL_CACHE_PCK, QPL_CACHE_COLLATERAL: the bits of Intel's
 * sgx_qpl_cache_type_t) and URL. get: a copy of a live entry into @out.
 * put: keep @r (status 200 only) for @hours (0: not at all).
 */
#define QPL_CACHE_PCK		(1u << 0)
#define QPL_CACHE_COLLATERAL	(1u << 1)
bool qpl_cache_get(unsigned kind, const char *url, struct qpl_reply *out);
void qpl_cache_put(unsigned kind, const char *url, const struct qpl_reply *r,
		   unsigned hours);
void qpl_cache_clear(unsigned kinds);

/*
 * Checks on a part that parsed (src/dcap/qpl_check.c), so that a broken
 * PCCS is named where it answered rather than by the verifier later:
 * @text (@len bytes) is a signed collateral document, a JSON object with
 * the object member @body_key ("tcbInfo", "enclaveIdentity") and a
 * "signature" string; @pem is an issuer chain whose every certificate is
 * issued and signed by the next, the last by itself. 0, or
 * SGX_QL_ERROR_MESSAGE_PARSING_ERROR with @why.
 */
quote3_error_t qpl_check_signed_json(const char *text, size_t len,
				     const char *body_key, char *why, size_t whylen);
quote3_error_t qpl_check_chain(const char *pem, char *why, size_t whylen);

#endif /* SGXEMU_DCAP_QPL_H */
