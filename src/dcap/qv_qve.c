// SPDX-License-Identifier: MIT
/*
 * The Quote Verification Enclave's part in software. With p_qve_report_info
 * Intel's library hands the verification to its QvE, which verifies as QVL
 * does and then runs EREPORT for the caller's enclave with REPORTDATA =
 * SHA-256(nonce || quote || expiration_check_date (8 bytes) ||
 * collateral_expiration_status (4) || verification result (4) ||
 * supplemental data, when asked for) || 32 zero bytes, which the TVL
 * recomputes from what the call returned. Here the verdict is
 * the library's own (qv.c), and the REPORT is the one the QvE's EREPORT
 * would give on this platform: the body from the QvE's SECS identity as
 * Intel's DCAP 1.23 QvE carries it, MACed with the REPORT key the
 * processor model derives for the TARGETINFO (sgx_build_report, the same
 * computation ENCLU[EREPORT] makes in src/cpu/ereport.c), from the root
 * secrets of the platform the process runs on. The target enclave's
 * EGETKEY(REPORT) on this platform gives it that key, so Intel's TVL
 * (sgx_tvl_verify_qve_report_and_identity) accepts the REPORT there and
 * nowhere else.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base/secrets.h"
#include "dcap/qv.h"

/* Intel's QvE signing key's hash, as the TVL hard-codes it. */
static const uint8_t qve_mrsigner[32] = {
	0x8c, 0x4f, 0x57, 0x75, 0xd7, 0x96, 0x50, 0x3e,
	0x96, 0x13, 0x7f, 0x77, 0xc6, 0x8a, 0x82, 0x9a,
	0x00, 0x56, 0xac, 0x8d, 0xed, 0x70, 0x14, 0x0b,
	0x08, 0x1b, 0x09, 0x44, 0x90, 0xc5, 0x7b, 0xff,
};

/*
 * DCAP 1.23's QvE is a production enclave (its config: ProdID 2, ISVSVN
 * 12, DisableDebug), 64-bit, with no other attribute the TVL allows
 * (flags under mask FBFF..FF must be exactly INIT) and MISCSELECT 0.
 * Its MRENCLAVE is no input of the TVL's; Intel's binary is not here,
 * so it is a hash of a label that says what made the REPORT.
 */
void qv_qve_identity(struct sgx_key_identity *id)
{
	static const char label[] =
		"sgxemu quote verification enclave (QvE role), DCAP 1.23";

	memset(id, 0, sizeof(*id));
	id->attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	id->attributes.xfrm = SGX_XFRM_LEGACY;
	id->miscselect = 0;
	EVP_Digest(label, sizeof(label) - 1, id->mrenclave, NULL, EVP_sha256(),
		   NULL);
	memcpy(id->mrsigner, qve_mrsigner, sizeof(qve_mrsigner));
	id->isvprodid = QVE_ISVPRODID;
	id->isvsvn = QVE_ISVSVN;
}

int qv_qve_report_data(const sgx_quote_nonce_t *nonce, const uint8_t *quote,
		       uint32_t size, time_t date, uint32_t expired,
		       sgx_ql_qv_result_t result, const uint8_t *supp,
		       uint32_t supp_size, uint8_t rd[SGX_REPORT_DATA_SIZE])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int64_t d = date;
	int ok;

	memset(rd, 0, SGX_REPORT_DATA_SIZE);
	ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) &&
	     EVP_DigestUpdate(md, nonce->rand, sizeof(nonce->rand)) &&
	     EVP_DigestUpdate(md, quote, size) &&
	     EVP_DigestUpdate(md, &d, sizeof(d)) &&
	     EVP_DigestUpdate(md, &expired, sizeof(expired)) &&
	     EVP_DigestUpdate(md, &result, sizeof(result)) &&
	     (!supp || EVP_DigestUpdate(md, supp, supp_size)) &&
	     EVP_DigestFinal_ex(md, rd, NULL);
	EVP_MD_CTX_free(md);
	return ok ? 0 : -1;
}

quote3_error_t qv_qve_start(struct sgx_platform_keys *keys, char *why,
			    size_t whylen)
{
	char path[4096];
	int ret = sgx_secrets_path(path, sizeof(path));

	if (ret) {
		snprintf(why, whylen, "the QvE cannot start: platform secrets: no "
			 "location (set HOME or SGXEMU_SECRETS_FILE)");
		return SGX_QL_ENCLAVE_LOAD_ERROR;
	}
	ret = sgx_secrets_load(path, keys, why, whylen);
	if (ret) {
		char reason[300];

		snprintf(reason, sizeof(reason), "%s", why);
		snprintf(why, whylen, "the QvE cannot start: platform secrets: %s",
			 reason);
		OPENSSL_cleanse(keys, sizeof(*keys));
		return SGX_QL_ENCLAVE_LOAD_ERROR;
	}
	return SGX_QL_SUCCESS;
}

quote3_error_t qv_qve_report(const struct sgx_platform_keys *keys,
			     sgx_ql_qe_report_info_t *info, const uint8_t *quote,
			     uint32_t size, time_t date, uint32_t expired,
			     sgx_ql_qv_result_t result, const uint8_t *supp,
			     uint32_t supp_size)
{
	struct sgx_key_identity id;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t rd[SGX_REPORT_DATA_SIZE];

	qv_qve_identity(&id);
	/* EREPORT reads its operands once, into the processor. */
	memcpy(&ti, &info->app_enclave_target_info, sizeof(ti));
	if (qv_qve_report_data(&info->nonce, quote, size, date, expired, result,
			       supp, supp_size, rd) ||
	    sgx_build_report(keys, &id, &ti, rd, &r)) {
		memset(&info->qe_report, 0, sizeof(info->qe_report));
		return SGX_QL_UNABLE_TO_GENERATE_REPORT;
	}
	memcpy(&info->qe_report, &r, sizeof(r));
	return SGX_QL_SUCCESS;
}
