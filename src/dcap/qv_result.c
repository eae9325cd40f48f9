// SPDX-License-Identifier: MIT
/*
 * A verification's outcome in the terms of Intel's DCAP quote verification
 * library: QVL's status as quote3_error_t and sgx_ql_qv_result_t, which
 * statuses still verify (attestation-facts.md §6.6: Intel's QvE returns
 * success with a non-terminal status and reports it in the result), and
 * the supplemental data, field by field as sgx_qve_header.h documents it.
 */
#include <string.h>

#include "dcap/qv.h"

bool qv_status_expiry(int st)
{
	switch (st) {
	case ST_TCB_INFO_EXPIRED:
	case ST_PCK_CERT_CHAIN_EXPIRED:
	case ST_CRL_EXPIRED:
	case ST_SIGNING_CERT_CHAIN_EXPIRED:
	case ST_ENCLAVE_IDENTITY_EXPIRED:
		return true;
	default:
		return false;
	}
}

bool qv_status_nonterminal(int st)
{
	switch (st) {
	case ST_TCB_OUT_OF_DATE:
	case ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED:
	case ST_REPORT_ISVSVN_OUT_OF_DATE:
	case ST_TCB_CONFIGURATION_NEEDED:
	case ST_TCB_SW_HARDENING_NEEDED:
	case ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED:
		return true;
	default:
		return qv_status_expiry(st);
	}
}

quote3_error_t qv_status_error(int st)
{
	switch (st) {
	case ST_OK:
		return SGX_QL_SUCCESS;
	case ST_MISSING_PARAMETERS:
		return SGX_QL_ERROR_INVALID_PARAMETER;
	case ST_UNSUPPORTED_QUOTE_FORMAT:
		return SGX_QL_QUOTE_FORMAT_UNSUPPORTED;
	case ST_INVALID_QE_REPORT_SIGNATURE:
		return SGX_QL_QE_REPORT_INVALID_SIGNATURE;
	case ST_UNSUPPORTED_CERT_FORMAT:
		return SGX_QL_PCK_CERT_UNSUPPORTED_FORMAT;
	case ST_INVALID_PCK_CERT:
	case ST_PCK_CERT_CHAIN_UNTRUSTED:
		return SGX_QL_PCK_CERT_CHAIN_ERROR;
	case ST_TCB_INFO_UNSUPPORTED_FORMAT:
	case ST_TCB_INFO_INVALID:
		return SGX_QL_TCBINFO_UNSUPPORTED_FORMAT;
	case ST_TCB_NOT_SUPPORTED:
		return SGX_QL_TCB_NOT_SUPPORTED;
	case ST_TCB_INFO_MISMATCH:
		return SGX_QL_TCBINFO_MISMATCH;
	case ST_QE_IDENTITY_MISMATCH:
	case ST_REPORT_MISCSELECT_MISMATCH:
	case ST_REPORT_ATTRIBUTES_MISMATCH:
	case ST_REPORT_MRSIGNER_MISMATCH:
	case ST_REPORT_ISVPRODID_MISMATCH:
		return SGX_QL_QEIDENTITY_MISMATCH;
	case ST_TCB_OUT_OF_DATE:
		return SGX_QL_TCB_OUT_OF_DATE;
	case ST_TCB_CONFIGURATION_NEEDED:
		return SGX_QL_TCB_CONFIGURATION_NEEDED;
	case ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED:
		return SGX_QL_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED;
	case ST_REPORT_ISVSVN_OUT_OF_DATE:
		return SGX_QL_SGX_ENCLAVE_REPORT_ISVSVN_OUT_OF_DATE;
	case ST_TCB_INFO_EXPIRED:
		return SGX_QL_SGX_TCB_INFO_EXPIRED;
	case ST_PCK_CERT_CHAIN_EXPIRED:
		return SGX_QL_SGX_PCK_CERT_CHAIN_EXPIRED;
	case ST_CRL_EXPIRED:
		return SGX_QL_SGX_CRL_EXPIRED;
	case ST_SIGNING_CERT_CHAIN_EXPIRED:
		return SGX_QL_SGX_SIGNING_CERT_CHAIN_EXPIRED;
	case ST_ENCLAVE_IDENTITY_EXPIRED:
		return SGX_QL_SGX_ENCLAVE_IDENTITY_EXPIRED;
	case ST_PCK_REVOKED:
	case ST_INTERMEDIATE_CA_REVOKED:
	case ST_TCB_SIGNING_CERT_REVOKED:
		return SGX_QL_PCK_REVOKED;
	case ST_TCB_REVOKED:
	case ST_REPORT_ISVSVN_REVOKED:
		return SGX_QL_TCB_REVOKED;
	case ST_UNSUPPORTED_QE_CERTIFICATION_DATA_TYPE:
		return SGX_QL_QUOTE_CERTIFICATION_DATA_UNSUPPORTED;
	case ST_ENCLAVE_IDENTITY_UNSUPPORTED_FORMAT:
	case ST_ENCLAVE_IDENTITY_INVALID:
	case ST_ENCLAVE_IDENTITY_UNSUPPORTED_VERSION:
	case ST_ENCLAVE_IDENTITY_INVALID_SIGNATURE:
		return SGX_QL_QEIDENTITY_CHAIN_ERROR;
	case ST_TCB_INFO_INVALID_SIGNATURE:
	case ST_TCB_SIGNING_CERT_CHAIN_UNTRUSTED:
		return SGX_QL_TCBINFO_CHAIN_ERROR;
	case ST_TCB_SW_HARDENING_NEEDED:
		return SGX_QL_TCB_SW_HARDENING_NEEDED;
	case ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED:
		return SGX_QL_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED;
	case ST_INVALID_QUOTE_SIGNATURE:
	case ST_CRL_INVALID_SIGNATURE:
		return SGX_QL_RESULT_INVALID_SIGNATURE;
	default:
		return SGX_QL_ERROR_UNEXPECTED;
	}
}

sgx_ql_qv_result_t qv_status_result(int st)
{
	switch (st) {
	case ST_OK:
		return SGX_QL_QV_RESULT_OK;
	case ST_ENCLAVE_IDENTITY_INVALID_SIGNATURE:
	case ST_INVALID_QUOTE_SIGNATURE:
	case ST_INVALID_QE_REPORT_SIGNATURE:
	case ST_CRL_INVALID_SIGNATURE:
	case ST_TCB_INFO_INVALID_SIGNATURE:
		return SGX_QL_QV_RESULT_INVALID_SIGNATURE;
	case ST_PCK_REVOKED:
	case ST_TCB_REVOKED:
	case ST_TCB_SIGNING_CERT_REVOKED:
	case ST_INTERMEDIATE_CA_REVOKED:
		return SGX_QL_QV_RESULT_REVOKED;
	case ST_TCB_CONFIGURATION_NEEDED:
		return SGX_QL_QV_RESULT_CONFIG_NEEDED;
	case ST_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED:
		return SGX_QL_QV_RESULT_OUT_OF_DATE_CONFIG_NEEDED;
	case ST_TCB_OUT_OF_DATE:
	case ST_REPORT_ISVSVN_OUT_OF_DATE:
		return SGX_QL_QV_RESULT_OUT_OF_DATE;
	case ST_TCB_SW_HARDENING_NEEDED:
		return SGX_QL_QV_RESULT_SW_HARDENING_NEEDED;
	case ST_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED:
		return SGX_QL_QV_RESULT_CONFIG_AND_SW_HARDENING_NEEDED;
	default:
		return SGX_QL_QV_RESULT_UNSPECIFIED;
	}
}

static sgx_ql_qv_result_t qe_result(int st)
{
	switch (st) {
	case ST_OK:
		return SGX_QL_QV_RESULT_OK;
	case ST_REPORT_ISVSVN_OUT_OF_DATE:
		return SGX_QL_QV_RESULT_OUT_OF_DATE;
	case ST_REPORT_ISVSVN_REVOKED:
		return SGX_QL_QV_RESULT_REVOKED;
	default:
		return SGX_QL_QV_RESULT_UNSPECIFIED;
	}
}

/*
 * A processor CA's PCK certificate has no platform instance and says
 * nothing of the platform flags: they stay zero and UNDEFINED, as QvE
 * leaves them. The TCB evaluation number is the lower of the TCB info's
 * and the QE identity's.
 */
void qv_supplemental_fill(sgx_ql_qv_supplemental_t *s,
			  const struct sgx_verify_detail *d)
{
	s->earliest_issue_date = d->earliest_issue;
	s->latest_issue_date = d->latest_issue;
	s->earliest_expiration_date = d->earliest_expiration;
	/* QvE gives the earlier of the two matched levels' dates. */
	s->tcb_level_date_tag = d->tcb_date;
	if (d->have_qe_tcb && (!d->have_tcb || d->qe_tcb_date < d->tcb_date))
		s->tcb_level_date_tag = d->qe_tcb_date;
	s->pck_crl_num = d->pck_crl_num;
	s->root_ca_crl_num = d->root_crl_num;
	s->tcb_eval_ref_num = d->tcb_eval < d->qe_eval ? d->tcb_eval : d->qe_eval;
	memcpy(s->root_key_id, d->root_key_id, sizeof(s->root_key_id));
	memcpy(s->pck_ppid, d->ext.ppid, 16);
	memcpy(s->tcb_cpusvn, d->ext.cpusvn, 16);
	s->tcb_pce_isvsvn = d->ext.pcesvn;
	memcpy(&s->pce_id, d->ext.pceid, 2);
	s->tee_type = SGX_QUOTE_TYPE;
	s->sgx_type = d->ext.sgx_type;
	memset(s->platform_instance_id, 0, sizeof(s->platform_instance_id));
	s->dynamic_platform = PCK_FLAG_UNDEFINED;
	s->cached_keys = PCK_FLAG_UNDEFINED;
	s->smt_enabled = PCK_FLAG_UNDEFINED;
	memcpy(s->sa_list, d->sa_list, sizeof(s->sa_list));
	s->sa_list[sizeof(s->sa_list) - 1] = '\0';
	s->qe_iden_earliest_issue_date = d->qe_earliest_issue;
	s->qe_iden_latest_issue_date = d->qe_latest_issue;
	s->qe_iden_earliest_expiration_date = d->qe_earliest_expiration;
	s->qe_iden_tcb_level_date_tag = d->qe_tcb_date;
	s->qe_iden_tcb_eval_ref_num = d->qe_eval;
	s->qe_iden_status = qe_result(d->qe_status);
}
