/* SPDX-License-Identifier: MIT */
/*
 * The quote verifier's statuses (Intel QVL's numbering, facts §6). The
 * verifier itself is sgxemu_quote_verify (include/sgxemu/attest.h).
 */
#ifndef SGXEMU_ATTEST_VERIFY_H
#define SGXEMU_ATTEST_VERIFY_H

enum {
	ST_OK = 0,
	ST_UNSUPPORTED_CERT_FORMAT = 1,
	ST_ROOT_CA_MISSING = 2,
	ST_ROOT_CA_INVALID_EXTENSIONS = 4,
	ST_ROOT_CA_INVALID_ISSUER = 5,
	ST_INTERMEDIATE_CA_MISSING = 7,
	ST_INTERMEDIATE_CA_INVALID_EXTENSIONS = 9,
	ST_INTERMEDIATE_CA_INVALID_ISSUER = 10,
	ST_INTERMEDIATE_CA_REVOKED = 11,
	ST_PCK_MISSING = 12,
	ST_PCK_INVALID_EXTENSIONS = 14,
	ST_PCK_INVALID_ISSUER = 15,
	ST_PCK_REVOKED = 16,
	ST_TRUSTED_ROOT_CA_INVALID = 17,
	ST_PCK_CERT_CHAIN_UNTRUSTED = 18,
	ST_TCB_INFO_UNSUPPORTED_FORMAT = 19,
	ST_TCB_INFO_INVALID = 20,
	ST_TCB_INFO_INVALID_SIGNATURE = 21,
	ST_TCB_SIGNING_CERT_MISSING = 22,
	ST_TCB_SIGNING_CERT_INVALID_EXTENSIONS = 24,
	ST_TCB_SIGNING_CERT_INVALID_ISSUER = 25,
	ST_TCB_SIGNING_CERT_CHAIN_UNTRUSTED = 26,
	ST_TCB_SIGNING_CERT_REVOKED = 27,
	ST_CRL_UNSUPPORTED_FORMAT = 28,
	ST_CRL_UNKNOWN_ISSUER = 29,
	ST_CRL_INVALID_EXTENSIONS = 31,
	ST_CRL_INVALID_SIGNATURE = 32,
	ST_TRUSTED_ROOT_CA_UNSUPPORTED_FORMAT = 35,
	ST_MISSING_PARAMETERS = 36,
	ST_UNSUPPORTED_QUOTE_FORMAT = 37,
	ST_INVALID_PCK_CERT = 39,
	ST_INVALID_PCK_CRL = 41,
	ST_TCB_INFO_MISMATCH = 44,
	ST_TCB_OUT_OF_DATE = 45,
	ST_TCB_REVOKED = 46,
	ST_TCB_CONFIGURATION_NEEDED = 47,
	ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED = 48,
	ST_TCB_NOT_SUPPORTED = 49,
	ST_TCB_UNRECOGNIZED_STATUS = 50,
	ST_UNSUPPORTED_QE_CERTIFICATION_DATA_TYPE = 53,
	ST_INVALID_QE_REPORT_SIGNATURE = 55,
	ST_INVALID_QE_REPORT_DATA = 56,
	ST_INVALID_QUOTE_SIGNATURE = 57,
	ST_ENCLAVE_IDENTITY_UNSUPPORTED_FORMAT = 62,
	ST_ENCLAVE_IDENTITY_INVALID = 63,
	ST_ENCLAVE_IDENTITY_UNSUPPORTED_VERSION = 64,
	ST_REPORT_MISCSELECT_MISMATCH = 66,
	ST_REPORT_ATTRIBUTES_MISMATCH = 67,
	ST_REPORT_MRSIGNER_MISMATCH = 69,
	ST_REPORT_ISVPRODID_MISMATCH = 70,
	ST_REPORT_ISVSVN_OUT_OF_DATE = 71,
	ST_QE_IDENTITY_MISMATCH = 74,
	ST_TCB_INFO_EXPIRED = 75,
	ST_ENCLAVE_IDENTITY_INVALID_SIGNATURE = 76,
	ST_INVALID_PARAMETER = 77,
	ST_PCK_CERT_CHAIN_EXPIRED = 78,
	ST_CRL_EXPIRED = 79,
	ST_SIGNING_CERT_CHAIN_EXPIRED = 80,
	ST_ENCLAVE_IDENTITY_EXPIRED = 81,
	ST_TCB_SW_HARDENING_NEEDED = 82,
	ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED = 83,
	ST_REPORT_ISVSVN_REVOKED = 84,
	ST_REPORT_ISVSVN_NOT_SUPPORTED = 86,
};

const char *sgx_verify_status_name(int status);

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "attest/pck_ext.h"
#include "sgxemu/attest.h"

/*
 * What a verification saw beyond its status, for callers that report it
 * (libsgx_dcap_quoteverify's supplemental data, src/dcap/qv.c). Each
 * group is set once its part of the collateral was read, whatever the
 * final status; the flags say which were.
 */
struct sgx_verify_detail {
	bool have_pck;			/* the quote's PCK certificate read */
	struct sgx_pck_ext ext;		/* its SGX extension */
	bool platform_ca;		/* issued by a Platform CA */
	bool have_dates;		/* every collateral item read */
	time_t earliest_issue, latest_issue, earliest_expiration;
	time_t qe_earliest_issue, qe_latest_issue, qe_earliest_expiration;
	bool have_crls;
	uint32_t pck_crl_num, root_crl_num;
	uint8_t root_key_id[48];	/* SHA-384 of the root's public key */
	bool have_tcb;			/* the platform's TCB level matched */
	time_t tcb_date;
	uint32_t tcb_eval, qe_eval;	/* tcbEvaluationDataNumber */
	char sa_list[320];		/* the level's advisoryIDs, "a,b" */
	bool have_qe_tcb;		/* the QE's level matched */
	time_t qe_tcb_date;
	int qe_status;			/* ST_OK, ST_TCB_OUT_OF_DATE, ... */
};

/*
 * Skip every validity-period check (certificates, CRLs, nextUpdate) while
 * still collecting the dates: how the DCAP verifier learns the dates it
 * then verifies at (src/dcap/qv.c).
 */
#define SGX_VERIFY_ANY_TIME	1u

/* sgxemu_quote_verify(), filling @d (which may be NULL) as it goes. */
int sgx_quote_verify_detail(const uint8_t *quote, size_t len,
			    const struct sgxemu_verify_opts *opts,
			    struct sgxemu_verify_result *res,
			    struct sgx_verify_detail *d, unsigned int flags);

#endif /* SGXEMU_ATTEST_VERIFY_H */
