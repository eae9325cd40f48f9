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

#endif /* SGXEMU_DCAP_H */
