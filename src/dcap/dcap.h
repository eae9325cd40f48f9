/* SPDX-License-Identifier: MIT */
/*
 * The ABI of Intel's DCAP quote libraries as sgxemu's builds of them
 * (libsgx_dcap_ql.so.1, ...) implement it: the quote3_error_t values, the
 * enums and the structures their headers (sgx_ql_lib_common.h, sgx_pce.h,
 * sgx_dcap_ql_wrapper.h, DCAP 1.23) publish, written out from those facts
 * so that programs compiled against Intel's headers link and run against
 * ours. Only what these libraries use is here.
 */
#ifndef SGXEMU_DCAP_H
#define SGXEMU_DCAP_H

#include <stdint.h>

#include "sgxemu/arch.h"

/* quote3_error_t: 0, or 0xE000 | code (TEE_MK_ERROR). */
typedef uint32_t quote3_error_t;
#define SGX_QL_SUCCESS				0x0000
#define SGX_QL_ERROR_UNEXPECTED			0xE001
#define SGX_QL_ERROR_INVALID_PARAMETER		0xE002
#define SGX_QL_ERROR_OUT_OF_MEMORY		0xE003
#define SGX_QL_UNSUPPORTED_LOADING_POLICY	0xE00C
#define SGX_QL_INTERFACE_UNAVAILABLE		0xE00D
#define SGX_QL_ATT_KEY_NOT_INITIALIZED		0xE00F
#define SGX_QL_ATT_KEY_CERT_DATA_INVALID	0xE010
#define SGX_QL_NO_PLATFORM_CERT_DATA		0xE011
#define SGX_QL_INVALID_REPORT			0xE015
#define SGX_QL_ENCLAVE_LOAD_ERROR		0xE016
#define SGX_QL_NETWORK_ERROR			0xE019
#define SGX_QL_MESSAGE_ERROR			0xE01A
#define SGX_QL_NO_QUOTE_COLLATERAL_DATA		0xE01B
#define SGX_QL_NO_QVE_IDENTITY_DATA		0xE037
#define SGX_QL_UNSUPPORTED_MODE			0xE03E
#define SGX_QL_SERVICE_UNAVAILABLE		0xE040
#define SGX_QL_UNKNOWN_MESSAGE_RESPONSE		0xE044
#define SGX_QL_ERROR_MESSAGE_PARSING_ERROR	0xE046
#define SGX_QL_PLATFORM_UNKNOWN			0xE047
#define SGX_QL_CERTS_UNAVAILABLE		0xE049
#define SGX_QL_CONFIG_INVALID_JSON		0xE067

/* sgx_ql_request_policy_t (sgx_pce.h). */
#define SGX_QL_PERSISTENT			0
#define SGX_QL_EPHEMERAL			1
#define SGX_QL_EPHEMERAL_QVE_MULTI_THREAD	2
#define SGX_QL_PERSISTENT_QVE_MULTI_THREAD	3

/* sgx_ql_path_type_t (sgx_dcap_ql_wrapper.h). */
#define SGX_QL_QE3_PATH				0
#define SGX_QL_PCE_PATH				1
#define SGX_QL_QPL_PATH				2
#define SGX_QL_IDE_PATH				3
/* The longest path sgx_ql_set_path() keeps (Intel's MAX_PATH, 260,
 * with its NUL). */
#define SGX_QL_MAX_PATH				260

/* sgx_ql_log_level_t and sgx_ql_logging_callback_t. */
typedef enum {
	SGX_QL_LOG_ERROR,
	SGX_QL_LOG_INFO,
	SGX_QL_LOG_DEBUG,
	SGX_QL_LOG_TRACE,
} sgx_ql_log_level_t;
typedef void (*sgx_ql_logging_callback_t)(sgx_ql_log_level_t level,
					  const char *message);

/*
 * The certification data a quote provider library gives for a platform
 * (sgx_ql_config_t, packed): type 5 data, the PCK certificate chain.
 */
#define SGX_QL_CONFIG_VERSION_1			1
typedef struct __attribute__((packed)) {
	uint32_t version;
	uint8_t cert_cpu_svn[16];
	uint16_t cert_pce_isv_svn;
	uint32_t cert_data_size;
	uint8_t *p_cert_data;
} sgx_ql_config_t;

/* What identifies the platform to the provider (sgx_ql_pck_cert_id_t). */
typedef struct __attribute__((packed)) {
	uint8_t *p_qe3_id;
	uint32_t qe3_id_size;
	uint8_t *p_platform_cpu_svn;
	uint16_t *p_platform_pce_isv_svn;
	uint8_t *p_encrypted_ppid;
	uint32_t encrypted_ppid_size;
	uint8_t crypto_suite;
	uint16_t pce_id;
} sgx_ql_pck_cert_id_t;

_Static_assert(sizeof(sgx_ql_config_t) == 34, "sgx_ql_config_t is packed");

/*
 * The verification collateral a quote provider hands a verifier
 * (sgx_ql_qve_collateral_t; not packed). Version 1.0: CRLs in PEM; 3.0:
 * CRLs as hex text of their DER; 3.1: raw DER. The strings' sizes count
 * their NUL where they are text. tee_type 0 is SGX, 0x81 TDX.
 */
typedef struct {
	union {
		uint32_t version;
		struct {
			uint16_t major_version;
			uint16_t minor_version;
		};
	};
	uint32_t tee_type;
	char *pck_crl_issuer_chain;
	uint32_t pck_crl_issuer_chain_size;
	char *root_ca_crl;
	uint32_t root_ca_crl_size;
	char *pck_crl;
	uint32_t pck_crl_size;
	char *tcb_info_issuer_chain;
	uint32_t tcb_info_issuer_chain_size;
	char *tcb_info;
	uint32_t tcb_info_size;
	char *qe_identity_issuer_chain;
	uint32_t qe_identity_issuer_chain_size;
	char *qe_identity;
	uint32_t qe_identity_size;
} sgx_ql_qve_collateral_t;
_Static_assert(sizeof(sgx_ql_qve_collateral_t) == 120,
	       "sgx_ql_qve_collateral_t as Intel's (x86-64)");

/* ---- libsgx_dcap_quoteverify.so.1 (sgx_dcap_quoteverify.h, ---- */
/* ---- sgx_qve_header.h, sgx_qve_def.h)                         ---- */

#define SGX_QL_PLATFORM_LIB_UNAVAILABLE			0xE00E
#define SGX_QL_QUOTE_CERTIFICATION_DATA_UNSUPPORTED	0xE01C
#define SGX_QL_QUOTE_FORMAT_UNSUPPORTED			0xE01D
#define SGX_QL_QE_REPORT_INVALID_SIGNATURE		0xE01F
#define SGX_QL_QE_REPORT_UNSUPPORTED_FORMAT		0xE020
#define SGX_QL_PCK_CERT_UNSUPPORTED_FORMAT		0xE021
#define SGX_QL_PCK_CERT_CHAIN_ERROR			0xE022
#define SGX_QL_TCBINFO_UNSUPPORTED_FORMAT		0xE023
#define SGX_QL_TCBINFO_MISMATCH				0xE024
#define SGX_QL_QEIDENTITY_UNSUPPORTED_FORMAT		0xE025
#define SGX_QL_QEIDENTITY_MISMATCH			0xE026
#define SGX_QL_TCB_OUT_OF_DATE				0xE027
#define SGX_QL_TCB_OUT_OF_DATE_CONFIGURATION_NEEDED	0xE028
#define SGX_QL_SGX_ENCLAVE_IDENTITY_OUT_OF_DATE		0xE029
#define SGX_QL_SGX_ENCLAVE_REPORT_ISVSVN_OUT_OF_DATE	0xE02A
#define SGX_QL_QE_IDENTITY_OUT_OF_DATE			0xE02B
#define SGX_QL_SGX_TCB_INFO_EXPIRED			0xE02C
#define SGX_QL_SGX_PCK_CERT_CHAIN_EXPIRED		0xE02D
#define SGX_QL_SGX_CRL_EXPIRED				0xE02E
#define SGX_QL_SGX_SIGNING_CERT_CHAIN_EXPIRED		0xE02F
#define SGX_QL_SGX_ENCLAVE_IDENTITY_EXPIRED		0xE030
#define SGX_QL_PCK_REVOKED				0xE031
#define SGX_QL_TCB_REVOKED				0xE032
#define SGX_QL_TCB_CONFIGURATION_NEEDED			0xE033
#define SGX_QL_QEIDENTITY_CHAIN_ERROR			0xE039
#define SGX_QL_TCBINFO_CHAIN_ERROR			0xE03A
#define SGX_QL_TCB_SW_HARDENING_NEEDED			0xE03C
#define SGX_QL_TCB_CONFIGURATION_AND_SW_HARDENING_NEEDED 0xE03D
#define SGX_QL_PSW_NOT_AVAILABLE			0xE052
#define SGX_QL_COLLATERAL_VERSION_NOT_SUPPORTED		0xE053
#define SGX_QL_SUPPLEMENTAL_DATA_VERSION_NOT_SUPPORTED	0xE064
#define SGX_QL_ROOT_CA_UNTRUSTED			0xE065
#define SGX_QL_TCB_NOT_SUPPORTED			0xE066
#define SGX_QL_RESULT_INVALID_SIGNATURE			0xE068

/* sgx_ql_qv_result_t: 0, or 0xA000 | code (TEE_QV_MK_ERROR). */
typedef uint32_t sgx_ql_qv_result_t;
#define SGX_QL_QV_RESULT_OK				0x0000
#define SGX_QL_QV_RESULT_CONFIG_NEEDED			0xA001
#define SGX_QL_QV_RESULT_OUT_OF_DATE			0xA002
#define SGX_QL_QV_RESULT_OUT_OF_DATE_CONFIG_NEEDED	0xA003
#define SGX_QL_QV_RESULT_INVALID_SIGNATURE		0xA004
#define SGX_QL_QV_RESULT_REVOKED			0xA005
#define SGX_QL_QV_RESULT_UNSPECIFIED			0xA006
#define SGX_QL_QV_RESULT_SW_HARDENING_NEEDED		0xA007
#define SGX_QL_QV_RESULT_CONFIG_AND_SW_HARDENING_NEEDED	0xA008

/* The quote header's tee_type (offset 4). */
#define SGX_QUOTE_TYPE			0x00
#define TDX_QUOTE_TYPE			0x81
/* The smallest quote QVL reads (QUOTE_MIN_SIZE). */
#define QV_QUOTE_MIN_SIZE		1020

/* sgx_ql_qve_collateral_t.version values QvE takes. */
#define QVE_COLLATERAL_VERSION1		0x1
#define QVE_COLLATERAL_VERSION3		0x3
#define QVE_COLLATERAL_VERSION31	0x00010003
#define QVE_COLLATERAL_VERSION4		0x4

/* The supplemental data, version 3.3 (major 3, minor 3). */
#define SUPPLEMENTAL_DATA_VERSION		3
#define SUPPLEMENTAL_V3_LATEST_MINOR_VERSION	3

/* pck_cert_flag_enum_t */
#define PCK_FLAG_FALSE		0
#define PCK_FLAG_TRUE		1
#define PCK_FLAG_UNDEFINED	2

#define QV_SA_LIST_SIZE		320

/* sgx_ql_qv_supplemental_t: natural alignment, 536 bytes on x86-64. */
typedef struct {
	union {
		uint32_t version;
		struct {
			uint16_t major_version;
			uint16_t minor_version;
		};
	};
	int64_t earliest_issue_date;		/* time_t, UTC */
	int64_t latest_issue_date;
	int64_t earliest_expiration_date;
	int64_t tcb_level_date_tag;
	uint32_t pck_crl_num;
	uint32_t root_ca_crl_num;
	uint32_t tcb_eval_ref_num;
	uint8_t root_key_id[48];
	uint8_t pck_ppid[16];
	uint8_t tcb_cpusvn[16];
	uint16_t tcb_pce_isvsvn;
	uint16_t pce_id;
	uint32_t tee_type;
	uint8_t sgx_type;
	uint8_t platform_instance_id[16];
	uint32_t dynamic_platform;		/* pck_cert_flag_enum_t */
	uint32_t cached_keys;
	uint32_t smt_enabled;
	char sa_list[QV_SA_LIST_SIZE];
	int64_t qe_iden_earliest_issue_date;
	int64_t qe_iden_latest_issue_date;
	int64_t qe_iden_earliest_expiration_date;
	int64_t qe_iden_tcb_level_date_tag;
	uint32_t qe_iden_tcb_eval_ref_num;
	sgx_ql_qv_result_t qe_iden_status;
} sgx_ql_qv_supplemental_t;
_Static_assert(sizeof(sgx_ql_qv_supplemental_t) == 536,
	       "sgx_ql_qv_supplemental_t as Intel's (x86-64)");
_Static_assert(__builtin_offsetof(sgx_ql_qv_supplemental_t, root_key_id) == 52 &&
	       __builtin_offsetof(sgx_ql_qv_supplemental_t, tee_type) == 136 &&
	       __builtin_offsetof(sgx_ql_qv_supplemental_t, dynamic_platform) == 160 &&
	       __builtin_offsetof(sgx_ql_qv_supplemental_t, sa_list) == 172 &&
	       __builtin_offsetof(sgx_ql_qv_supplemental_t, qe_iden_status) == 532,
	       "sgx_ql_qv_supplemental_t's offsets as Intel's");

/* tee_supp_data_descriptor_t */
typedef struct {
	uint16_t major_version;		/* 0: the latest */
	uint32_t data_size;
	uint8_t *p_data;
} tee_supp_data_descriptor_t;
_Static_assert(sizeof(tee_supp_data_descriptor_t) == 16, "as Intel's");

/*
 * sgx_ql_qe_report_info_t (sgx_ql_quote.h): the caller's nonce and its
 * enclave's TARGETINFO in, the QvE's REPORT for that enclave out; byte
 * arrays only, so 960 bytes with no padding.
 */
typedef struct {
	uint8_t rand[16];
} sgx_quote_nonce_t;
typedef struct sgx_ql_qe_report_info {
	sgx_quote_nonce_t nonce;
	struct sgx_targetinfo app_enclave_target_info;
	struct sgx_report qe_report;
} sgx_ql_qe_report_info_t;
_Static_assert(sizeof(sgx_ql_qe_report_info_t) == 960 &&
	       __builtin_offsetof(sgx_ql_qe_report_info_t, qe_report) == 528,
	       "sgx_ql_qe_report_info_t as Intel's");

/* What the QvE-checked calls and the TVL (sgx_dcap_tvl.h) answer. */
#define SGX_QL_ERROR_REPORT			0xE013
#define SGX_QL_UNABLE_TO_GENERATE_REPORT	0xE01E
#define SGX_QL_QVEIDENTITY_MISMATCH		0xE050
#define SGX_QL_QVE_OUT_OF_DATE			0xE051

/* sgx_qv_path_type_t */
#define SGX_QV_QVE_PATH		0
#define SGX_QV_QPL_PATH		1

#endif /* SGXEMU_DCAP_H */
