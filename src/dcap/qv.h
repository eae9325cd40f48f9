/* SPDX-License-Identifier: MIT */
/*
 * The parts of libsgx_dcap_quoteverify.so.1 (src/dcap/qv*.c): the
 * collateral of the DCAP ABI turned into the verifier's
 * (src/attest/verify.c), the root the installation trusts, what the
 * quote says about where its collateral comes from, and the verdict in
 * the ABI's terms. They take bytes and structures, not files or
 * libraries, so that the unit test and the fuzzer drive them directly.
 */
#ifndef SGXEMU_DCAP_QV_H
#define SGXEMU_DCAP_QV_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "attest/verify.h"
#include "cpu/keys.h"
#include "dcap/dcap.h"
#include "sgxemu/attest.h"

/*
 * @in as the verifier's collateral in @out (malloc'd copies; free with
 * sgxemu_collateral_free): a version QvE takes, every text NUL-terminated
 * within its size, CRLs in PEM, hex text of DER or DER, one TCB signing
 * chain for the TCB info and the QE identity (the verifier checks both
 * under one). 0, or the code Intel's library gives with @why.
 */
quote3_error_t qv_collateral_convert(const sgx_ql_qve_collateral_t *in,
				     struct sgxemu_collateral *out,
				     char *why, size_t whylen);

/*
 * The root this installation trusts, as PEM text (malloc'd): the file
 * $SGXEMU_TRUSTED_ROOT names (a fleet's common root), else the root of
 * the installation's own hierarchy (<secrets file>.pki/root-ca.pem).
 * Never Intel's. 0, or SGX_QL_ROOT_CA_UNTRUSTED with @why.
 */
quote3_error_t qv_trusted_root(char **pem, char *why, size_t whylen);

/*
 * The FMSPC and the PCK CA ("processor" or "platform") of the PCK
 * certificate in @quote's certification data, which is what a quote
 * provider is asked for collateral by. 0, or the code QVL gives.
 */
quote3_error_t qv_fmspc_ca(const uint8_t *quote, uint32_t len, uint8_t fmspc[6],
			   char ca[10], char *why, size_t whylen);

/* The QVL status of a verification as quote3_error_t and as
 * sgx_ql_qv_result_t, and whether it still counts as verified
 * (a non-terminal status: Intel's QvE returns success with it). */
quote3_error_t qv_status_error(int status);
sgx_ql_qv_result_t qv_status_result(int status);
bool qv_status_nonterminal(int status);
/* The collateral-expiry statuses (75, 78-81), non-fatal in QvE. */
bool qv_status_expiry(int status);

/* The supplemental data (version already set by the caller) of a
 * verification that ended in a non-terminal status. */
void qv_supplemental_fill(sgx_ql_qv_supplemental_t *s,
			  const struct sgx_verify_detail *d);

/* ---- the QvE in software (qv_qve.c) ---- */

/* The identity of Intel's DCAP 1.23 QvE that its REPORTs carry. */
#define QVE_ISVPRODID	2
#define QVE_ISVSVN	12

/* The QvE's SECS identity: what EREPORT puts in its REPORT's body. */
void qv_qve_identity(struct sgx_key_identity *id);

/*
 * The QvE's REPORTDATA for what a verification returned (@supp NULL: no
 * supplemental data asked for): SHA-256 of the nonce, the quote, the
 * check date as 8 bytes, the expiration status, the result and the
 * supplemental data, then 32 zero bytes. 0, or -1 if OpenSSL fails.
 */
int qv_qve_report_data(const sgx_quote_nonce_t *nonce, const uint8_t *quote,
		       uint32_t size, time_t date, uint32_t expired,
		       sgx_ql_qv_result_t result, const uint8_t *supp,
		       uint32_t supp_size, uint8_t rd[SGX_REPORT_DATA_SIZE]);

/*
 * The platform the QvE runs on: its keys from the secrets file of the
 * process's platform (as the engine loads them). 0, or
 * SGX_QL_ENCLAVE_LOAD_ERROR with @why, as where a QvE cannot be loaded.
 * The caller cleanses @keys.
 */
quote3_error_t qv_qve_start(struct sgx_platform_keys *keys, char *why,
			    size_t whylen);

/*
 * The QvE's REPORT for @info's TARGETINFO over what the verification
 * returned, into @info->qe_report: EREPORT as the QvE would execute it
 * on the platform of @keys. 0, or SGX_QL_UNABLE_TO_GENERATE_REPORT with
 * the REPORT zeroed.
 */
quote3_error_t qv_qve_report(const struct sgx_platform_keys *keys,
			     sgx_ql_qe_report_info_t *info, const uint8_t *quote,
			     uint32_t size, time_t date, uint32_t expired,
			     sgx_ql_qv_result_t result, const uint8_t *supp,
			     uint32_t supp_size);

#endif /* SGXEMU_DCAP_QV_H */
