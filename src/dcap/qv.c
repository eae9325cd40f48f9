// SPDX-License-Identifier: MIT
/*
 * libsgx_dcap_quoteverify.so.1: Intel's quote verification library (DCAP
 * 1.23 ABI, sgx_dcap_quoteverify.h) with sgxemu's verifier behind it, the
 * checks of `sgxemu quote verify` (src/attest/verify.c), trusting this
 * installation's root (qv_trusted_root: never Intel's).
 *
 * Intel's library verifies in its untrusted QVL, or in the QvE enclave
 * when the caller passes p_qve_report_info; the QvE's REPORT, targeted at
 * the caller's enclave, vouches for the verdict. Here both paths are the
 * same verification, and a QvE-checked call adds the REPORT Intel's QvE
 * would give on this platform (qv_qve.c): its identity, MACed for the
 * caller's TARGETINFO with the platform's report key, so that the TVL in
 * the caller's enclave accepts it. The QvE has no file to load: a path
 * given with sgx_qv_set_path(SGX_QV_QVE_PATH) is kept and not used.
 *
 * Without collateral from the caller, the library asks the quote provider
 * (libdcap_quoteprov.so.1, loaded at run time as Intel's does; the path
 * sgx_qv_set_path gives, else the loader's search) for the collateral of
 * the FMSPC and CA the quote's PCK certificate names.
 *
 * Parameter checks, their order and codes follow Intel's library; each
 * error also gets one line on stderr ("[QV] sgxemu: ...") naming the
 * check, unless SGXEMU_QV_QUIET is set.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "dcap/qv.h"

#define EXPORT __attribute__((visibility("default")))
#define QV_PATH_MAX 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char qpl_path[QV_PATH_MAX], qve_path[QV_PATH_MAX];

struct qpl_api {
	quote3_error_t (*get_collateral)(const uint8_t *fmspc, uint16_t size,
					 const char *ca,
					 sgx_ql_qve_collateral_t **out);
	quote3_error_t (*free_collateral)(sgx_ql_qve_collateral_t *c);
	quote3_error_t (*get_qveid)(char **id, uint32_t *id_size, char **chain,
				    uint32_t *chain_size);
	quote3_error_t (*free_qveid)(char *id, char *chain);
	quote3_error_t (*get_root_crl)(uint8_t **crl, uint16_t *size);
	quote3_error_t (*free_root_crl)(uint8_t *crl);
};
static struct qpl_api qpl;
static void *qpl_handle;
static char qpl_loaded_from[QV_PATH_MAX];

static quote3_error_t qv_fail(quote3_error_t ret, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static quote3_error_t qv_fail(quote3_error_t ret, const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	if (getenv("SGXEMU_QV_QUIET"))
		return ret;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[QV] sgxemu: %s (0x%04x)\n", msg, ret);
	return ret;
}

/* The quote provider, loaded once (again if sgx_qv_set_path names
 * another). */
static quote3_error_t qpl_load(struct qpl_api *out)
{
	const char *path;
	void *h;

	pthread_mutex_lock(&lock);
	path = qpl_path[0] ? qpl_path : "libdcap_quoteprov.so.1";
	if (qpl_handle && strcmp(qpl_loaded_from, path)) {
		dlclose(qpl_handle);
		qpl_handle = NULL;
	}
	if (!qpl_handle) {
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();

			pthread_mutex_unlock(&lock);
			return qv_fail(SGX_QL_PLATFORM_LIB_UNAVAILABLE,
				       "no quote provider to fetch collateral: %s",
				       e ? e : path);
		}
		qpl.get_collateral = (__typeof__(qpl.get_collateral))
			dlsym(h, "sgx_ql_get_quote_verification_collateral");
		qpl.free_collateral = (__typeof__(qpl.free_collateral))
			dlsym(h, "sgx_ql_free_quote_verification_collateral");
		qpl.get_qveid = (__typeof__(qpl.get_qveid))
			dlsym(h, "sgx_ql_get_qve_identity");
		qpl.free_qveid = (__typeof__(qpl.free_qveid))
			dlsym(h, "sgx_ql_free_qve_identity");
		qpl.get_root_crl = (__typeof__(qpl.get_root_crl))
			dlsym(h, "sgx_ql_get_root_ca_crl");
		qpl.free_root_crl = (__typeof__(qpl.free_root_crl))
			dlsym(h, "sgx_ql_free_root_ca_crl");
		if (!qpl.get_collateral || !qpl.free_collateral) {
			dlclose(h);
			pthread_mutex_unlock(&lock);
			return qv_fail(SGX_QL_PLATFORM_LIB_UNAVAILABLE, "%s lacks "
				       "sgx_ql_get_quote_verification_collateral",
				       path);
		}
		qpl_handle = h;
		snprintf(qpl_loaded_from, sizeof(qpl_loaded_from), "%s", path);
	}
	*out = qpl;
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}

/* The tee_type of the quote header, or -1 when there is no header. */
static long quote_type(const uint8_t *q, uint32_t size)
{
	uint32_t t;

	if (!q || size < 8)
		return -1;
	memcpy(&t, q + 4, 4);
	return t;
}

static quote3_error_t fetch_collateral(const uint8_t *quote, uint32_t size,
				       struct qpl_api *api,
				       sgx_ql_qve_collateral_t **out)
{
	uint8_t fmspc[6];
	char ca[10], why[300];
	quote3_error_t ret = qv_fmspc_ca(quote, size, fmspc, ca, why, sizeof(why));

	if (ret)
		return qv_fail(ret, "%s", why);
	ret = qpl_load(api);
	if (ret)
		return ret;
	ret = api->get_collateral(fmspc, sizeof(fmspc), ca, out);
	if (ret)
		return qv_fail(ret, "the quote provider could not get the collateral "
			       "for FMSPC %02X%02X%02X%02X%02X%02X (%s CA)", fmspc[0],
			       fmspc[1], fmspc[2], fmspc[3], fmspc[4], fmspc[5], ca);
	if (!*out)
		return qv_fail(SGX_QL_NO_QUOTE_COLLATERAL_DATA, "the quote provider "
			       "returned success and no collateral");
	return SGX_QL_SUCCESS;
}

/*
 * The verification itself, as QvE does it (attestation-facts.md §6.6):
 * an expiry at @date (statuses 75, 78-81) is reported in @expired, not
 * fatal; the verdict is the quote's. Sgxemu's verifier stops at its
 * first failing check, so when the first pass at @date stops at an
 * expiry, a second pass with no validity-period checks gives the verdict
 * of the rest, and the dates.
 */
static quote3_error_t verify_with(const uint8_t *quote, uint32_t size,
				  const sgx_ql_qve_collateral_t *coll, time_t date,
				  uint32_t *expired, sgx_ql_qv_result_t *result,
				  uint32_t supp_size, uint8_t *supp)
{
	struct sgxemu_collateral c;
	struct sgxemu_verify_opts o = { .now = date };
	struct sgxemu_verify_result res;
	struct sgx_verify_detail *d = calloc(1, sizeof(*d));
	char why[300], *root = NULL;
	quote3_error_t ret;
	bool lapsed = false;
	int st;

	if (!d)
		return qv_fail(SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
	ret = qv_collateral_convert(coll, &c, why, sizeof(why));
	if (ret) {
		free(d);
		return qv_fail(ret, "collateral: %s", why);
	}
	ret = qv_trusted_root(&root, why, sizeof(why));
	if (ret) {
		sgxemu_collateral_free(&c);
		free(d);
		return qv_fail(ret, "%s", why);
	}
	o.trusted_root_pem = root;
	o.collateral = &c;
	st = sgx_quote_verify_detail(quote, size, &o, &res, d, 0);
	if (qv_status_expiry(st)) {
		lapsed = true;
		st = sgx_quote_verify_detail(quote, size, &o, &res, d,
					     SGX_VERIFY_ANY_TIME);
	}
	*expired = lapsed || !d->have_dates || d->earliest_expiration <= date;
	if (st == ST_OK || (qv_status_nonterminal(st) && !qv_status_expiry(st))) {
		*result = qv_status_result(st);
		if (supp && supp_size == sizeof(sgx_ql_qv_supplemental_t))
			qv_supplemental_fill((sgx_ql_qv_supplemental_t *)supp, d);
		ret = SGX_QL_SUCCESS;
	} else {
		*result = SGX_QL_QV_RESULT_UNSPECIFIED;
		ret = qv_fail(qv_status_error(st), "%s: %s (%s)", res.check, res.why,
			      res.status_name);
	}
	free(root);
	sgxemu_collateral_free(&c);
	free(d);
	return ret;
}

/* tee_verify_evidence in Intel's library: checks, then QvE or QVL. */
static quote3_error_t verify_evidence(const uint8_t *quote, uint32_t size,
				      const sgx_ql_qve_collateral_t *coll,
				      time_t date, uint32_t *expired,
				      sgx_ql_qv_result_t *result,
				      sgx_ql_qe_report_info_t *qve_info,
				      uint32_t supp_size, uint8_t *supp)
{
	sgx_ql_qve_collateral_t *fetched = NULL;
	struct sgx_platform_keys *keys = NULL;
	struct qpl_api api;
	quote3_error_t ret = SGX_QL_SUCCESS;
	long type;

	if (!quote || !size || !expired || date <= 0 || !result ||
	    (!supp) != (!supp_size)) {
		if (result)
			*result = SGX_QL_QV_RESULT_UNSPECIFIED;
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "verify: a quote, "
			       "its size, the expiration status and result pointers, "
			       "a positive check date and supplemental data with its "
			       "size (or neither) are needed");
	}
	type = quote_type(quote, size);
	if (type != SGX_QUOTE_TYPE && type != TDX_QUOTE_TYPE) {
		*result = SGX_QL_QV_RESULT_UNSPECIFIED;
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "verify: tee type "
			       "%ld in the quote header; 0 (SGX) or 0x81 (TDX)", type);
	}
	if (supp && supp_size != sizeof(sgx_ql_qv_supplemental_t)) {
		*result = SGX_QL_QV_RESULT_UNSPECIFIED;
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "verify: supplemental "
			       "data of %u bytes; %zu expected", supp_size,
			       sizeof(sgx_ql_qv_supplemental_t));
	}
	*expired = 1;
	*result = SGX_QL_QV_RESULT_UNSPECIFIED;
	if (qve_info) {
		char why[400];

		keys = malloc(sizeof(*keys));
		if (!keys)
			return qv_fail(SGX_QL_ERROR_OUT_OF_MEMORY, "out of memory");
		ret = qv_qve_start(keys, why, sizeof(why));
		if (ret) {
			free(keys);
			return qv_fail(ret, "QvE-checked verification: %s", why);
		}
	}
	if (!coll)
		ret = fetch_collateral(quote, size, &api, &fetched);
	if (!ret)
		ret = verify_with(quote, size, fetched ? fetched : coll, date,
				  expired, result, supp_size, supp);
	if (!ret && keys) {
		ret = qv_qve_report(keys, qve_info, quote, size, date, *expired,
				    *result, supp, supp_size);
		if (ret) {
			*result = SGX_QL_QV_RESULT_UNSPECIFIED;
			qv_fail(ret, "QvE-checked verification: no REPORT for the "
				"caller's enclave");
		}
	}
	/* A QvE's REPORT comes only with its verdict. */
	if (ret && keys)
		memset(&qve_info->qe_report, 0, sizeof(qve_info->qe_report));
	if (fetched)
		api.free_collateral(fetched);
	if (keys) {
		OPENSSL_cleanse(keys, sizeof(*keys));
		free(keys);
	}
	return ret;
}

EXPORT quote3_error_t sgx_qv_set_enclave_load_policy(uint32_t policy)
{
	if (policy > SGX_QL_EPHEMERAL)
		return qv_fail(SGX_QL_UNSUPPORTED_LOADING_POLICY,
			       "load policy %u: 0 (persistent) or 1 (ephemeral)",
			       policy);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qv_get_quote_supplemental_data_size(uint32_t *size)
{
	if (!size)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
			       "supplemental data size: NULL output");
	*size = sizeof(sgx_ql_qv_supplemental_t);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t tdx_qv_get_quote_supplemental_data_size(uint32_t *size)
{
	return sgx_qv_get_quote_supplemental_data_size(size);
}

EXPORT quote3_error_t tee_get_supplemental_data_version_and_size(
	const uint8_t *quote, uint32_t size, uint32_t *version, uint32_t *data_size)
{
	long type = quote_type(quote, size);

	if (!quote || !size || (!version && !data_size))
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "supplemental data "
			       "version and size: a quote and an output are needed");
	if (type != SGX_QUOTE_TYPE && type != TDX_QUOTE_TYPE)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "supplemental data "
			       "version and size: tee type %ld in the quote header",
			       type);
	if (version)
		*version = SUPPLEMENTAL_DATA_VERSION |
			   (uint32_t)SUPPLEMENTAL_V3_LATEST_MINOR_VERSION << 16;
	if (data_size)
		*data_size = sizeof(sgx_ql_qv_supplemental_t);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qv_verify_quote(
	const uint8_t *quote, uint32_t size, const sgx_ql_qve_collateral_t *coll,
	const time_t date, uint32_t *expired, sgx_ql_qv_result_t *result,
	sgx_ql_qe_report_info_t *qve_info, uint32_t supp_size, uint8_t *supp)
{
	quote3_error_t ret;

	/* The legacy call's supplemental data is version 3.0. */
	if (supp && supp_size >= sizeof(uint32_t)) {
		uint32_t v = SUPPLEMENTAL_DATA_VERSION;

		memcpy(supp, &v, sizeof(v));
	}
	ret = verify_evidence(quote, size, coll, date, expired, result, qve_info,
			      supp_size, supp);
	if (ret && supp && supp_size == sizeof(sgx_ql_qv_supplemental_t))
		memset(supp, 0, supp_size);
	return ret;
}

/* The TDX collateral has the SGX one's layout (tdx_ql_qv_collateral_t). */
EXPORT quote3_error_t tdx_qv_verify_quote(
	const uint8_t *quote, uint32_t size, const sgx_ql_qve_collateral_t *coll,
	const time_t date, uint32_t *expired, sgx_ql_qv_result_t *result,
	sgx_ql_qe_report_info_t *qve_info, uint32_t supp_size, uint8_t *supp)
{
	return sgx_qv_verify_quote(quote, size, coll, date, expired, result,
				   qve_info, supp_size, supp);
}

EXPORT quote3_error_t tee_verify_quote(
	const uint8_t *quote, uint32_t size, const uint8_t *coll, const time_t date,
	uint32_t *expired, sgx_ql_qv_result_t *result,
	sgx_ql_qe_report_info_t *qve_info, tee_supp_data_descriptor_t *desc)
{
	uint32_t latest, need;
	quote3_error_t ret;

	if (!quote || !size)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
			       "tee_verify_quote: no quote");
	ret = tee_get_supplemental_data_version_and_size(quote, size, &latest, &need);
	if (ret)
		return ret;
	if (desc) {
		sgx_ql_qv_supplemental_t *s;

		if (!desc->p_data)
			return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
				       "tee_verify_quote: supplemental descriptor "
				       "without a buffer");
		if (desc->major_version > SUPPLEMENTAL_DATA_VERSION)
			return qv_fail(SGX_QL_SUPPLEMENTAL_DATA_VERSION_NOT_SUPPORTED,
				       "supplemental data version %u; %u is the latest",
				       desc->major_version, SUPPLEMENTAL_DATA_VERSION);
		if ((desc->major_version && desc->major_version !=
		     SUPPLEMENTAL_DATA_VERSION) || desc->data_size != need)
			return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "supplemental "
				       "data: version %u of %u bytes; version 0 or %u "
				       "of %u bytes", desc->major_version,
				       desc->data_size, SUPPLEMENTAL_DATA_VERSION, need);
		memset(desc->p_data, 0, desc->data_size);
		s = (sgx_ql_qv_supplemental_t *)desc->p_data;
		s->major_version = SUPPLEMENTAL_DATA_VERSION;
		s->minor_version = SUPPLEMENTAL_V3_LATEST_MINOR_VERSION;
	}
	ret = verify_evidence(quote, size, (const sgx_ql_qve_collateral_t *)coll,
			      date, expired, result, qve_info,
			      desc ? desc->data_size : 0, desc ? desc->p_data : NULL);
	if (ret && desc && desc->p_data)
		memset(desc->p_data, 0, desc->data_size);
	return ret;
}

EXPORT quote3_error_t tee_qv_get_collateral(const uint8_t *quote, uint32_t size,
					    uint8_t **out, uint32_t *out_size)
{
	sgx_ql_qve_collateral_t *c = NULL;
	struct qpl_api api;
	quote3_error_t ret;

	if (!quote || size < QV_QUOTE_MIN_SIZE || !out || *out || !out_size)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "tee_qv_get_collateral: "
			       "a quote of at least %d bytes, an output pointer "
			       "holding NULL and a size pointer are needed",
			       QV_QUOTE_MIN_SIZE);
	*out_size = 0;
	if (quote_type(quote, size) != SGX_QUOTE_TYPE)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "tee_qv_get_collateral: "
			       "not an SGX quote");
	ret = fetch_collateral(quote, size, &api, &c);
	if (ret)
		return ret;
	*out = (uint8_t *)c;
	*out_size = (uint32_t)sizeof(*c) + c->pck_crl_issuer_chain_size +
		    c->root_ca_crl_size + c->pck_crl_size +
		    c->tcb_info_issuer_chain_size + c->qe_identity_issuer_chain_size +
		    c->qe_identity_size + c->tcb_info_size;
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t tee_qv_free_collateral(uint8_t *coll)
{
	const sgx_ql_qve_collateral_t *c = (const sgx_ql_qve_collateral_t *)coll;
	struct qpl_api api;
	quote3_error_t ret;

	if (!c || c->tee_type != SGX_QUOTE_TYPE)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
			       "tee_qv_free_collateral: no SGX collateral");
	ret = qpl_load(&api);
	if (!ret)
		ret = api.free_collateral((sgx_ql_qve_collateral_t *)coll);
	return ret;
}

EXPORT quote3_error_t tee_get_fmspc_from_quote(const uint8_t *quote,
					       uint32_t size, uint8_t *fmspc,
					       uint32_t fmspc_size)
{
	char ca[10], why[300];
	quote3_error_t ret;

	if (!quote || size < QV_QUOTE_MIN_SIZE || !fmspc || fmspc_size < 6)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "tee_get_fmspc_from_"
			       "quote: a quote and a 6-byte output are needed");
	ret = qv_fmspc_ca(quote, size, fmspc, ca, why, sizeof(why));
	return ret ? qv_fail(ret, "%s", why) : SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qv_get_qve_identity(uint8_t **id, uint32_t *id_size,
					      uint8_t **chain, uint32_t *chain_size,
					      uint8_t **crl, uint16_t *crl_size)
{
	struct qpl_api api;
	quote3_error_t ret;

	if (!id || !id_size || !chain || !chain_size || !crl || !crl_size ||
	    *id || *chain || *crl)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "get_qve_identity: "
			       "output pointers holding NULL are needed");
	ret = qpl_load(&api);
	if (ret)
		return ret;
	if (!api.get_qveid || !api.get_root_crl)
		return qv_fail(SGX_QL_PLATFORM_LIB_UNAVAILABLE, "the quote provider "
			       "has no QvE identity calls");
	ret = api.get_qveid((char **)id, id_size, (char **)chain, chain_size);
	if (ret)
		return ret;
	ret = api.get_root_crl(crl, crl_size);
	if (ret) {
		api.free_qveid((char *)*id, (char *)*chain);
		*id = *chain = NULL;
	}
	return ret;
}

EXPORT quote3_error_t sgx_qv_free_qve_identity(uint8_t *id, uint8_t *chain,
					       uint8_t *crl)
{
	struct qpl_api api;
	quote3_error_t ret;

	if (!id || !chain || !crl)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
			       "free_qve_identity: a NULL pointer");
	ret = qpl_load(&api);
	if (ret)
		return ret;
	api.free_qveid((char *)id, (char *)chain);
	api.free_root_crl(crl);
	return SGX_QL_SUCCESS;
}

EXPORT quote3_error_t sgx_qv_set_path(uint32_t type, const char *path)
{
	struct stat st;
	char *dst;

	if (!path || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    strlen(path) >= QV_PATH_MAX)
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER, "set_path: %s is not "
			       "a regular file", path ? path : "(null)");
	if (type == SGX_QV_QVE_PATH)
		dst = qve_path;
	else if (type == SGX_QV_QPL_PATH)
		dst = qpl_path;
	else
		return qv_fail(SGX_QL_ERROR_INVALID_PARAMETER,
			       "set_path: path type %u", type);
	pthread_mutex_lock(&lock);
	strcpy(dst, path);
	pthread_mutex_unlock(&lock);
	return SGX_QL_SUCCESS;
}
