/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for Intel's own libsgx_dcap_ql.so.1, installed where the
 * dynamic loader would find it first (tests/integration/test_dcap.sh):
 * under sgxemu run, sgxemu's library must be loaded instead. Every call
 * fails as Intel's does on a machine whose enclaves cannot load.
 */
#include <stdint.h>

#define SGX_QL_ENCLAVE_LOAD_ERROR	0xE016

int decoy_library;

uint32_t sgx_qe_set_enclave_load_policy(int p) { (void)p; return SGX_QL_ENCLAVE_LOAD_ERROR; }
uint32_t sgx_qe_get_target_info(void *t) { (void)t; return SGX_QL_ENCLAVE_LOAD_ERROR; }
uint32_t sgx_qe_get_quote_size(uint32_t *s) { (void)s; return SGX_QL_ENCLAVE_LOAD_ERROR; }
uint32_t sgx_qe_get_quote(const void *r, uint32_t s, uint8_t *q)
{ (void)r; (void)s; (void)q; return SGX_QL_ENCLAVE_LOAD_ERROR; }
uint32_t sgx_qe_cleanup_by_policy(void) { return SGX_QL_ENCLAVE_LOAD_ERROR; }
uint32_t sgx_ql_set_path(int t, const char *p) { (void)t; (void)p; return SGX_QL_ENCLAVE_LOAD_ERROR; }
