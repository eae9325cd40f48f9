/* SPDX-License-Identifier: MIT */
/*
 * A program linked against libsgx_dcap_ql.so.1 the way DCAP applications
 * are (-lsgx_dcap_ql, nothing of sgxemu's): it calls the library's entry
 * points and prints each quote3_error_t as "NAME=0xCODE", one per line,
 * for tests/integration/test_dcap.sh to compare with Intel's library's
 * codes. Argument "decoy" only prints which library answered (the decoy
 * "Intel" library of the test says so; ours does not know the symbol).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcap/dcap.h"

quote3_error_t sgx_qe_set_enclave_load_policy(int policy);
quote3_error_t sgx_qe_get_target_info(struct sgx_targetinfo *ti);
quote3_error_t sgx_qe_get_quote_size(uint32_t *size);
quote3_error_t sgx_qe_get_quote(const struct sgx_report *report,
				uint32_t size, uint8_t *quote);
quote3_error_t sgx_qe_cleanup_by_policy(void);
quote3_error_t sgx_ql_set_path(int type, const char *path);

static void show(const char *name, quote3_error_t r)
{
	printf("%s=0x%04x\n", name, r);
}

int main(int argc, char **argv)
{
	static struct sgx_targetinfo ti;
	static struct sgx_report report;
	uint32_t size = 0;
	uint8_t *q;
	char longpath[400];

	if (argc > 1 && !strcmp(argv[1], "decoy")) {
		printf("decoy=%s\n", dlsym(RTLD_DEFAULT, "decoy_library") ?
		       "yes" : "no");
		return 0;
	}
	/* Before any target info: no attestation key yet. */
	show("size_before_target_info", sgx_qe_get_quote_size(&size));
	show("quote_before_target_info", sgx_qe_get_quote(&report, 8192,
							  (uint8_t[8192]){ 0 }));
	show("policy_persistent", sgx_qe_set_enclave_load_policy(SGX_QL_PERSISTENT));
	show("policy_ephemeral", sgx_qe_set_enclave_load_policy(SGX_QL_EPHEMERAL));
	show("policy_bad", sgx_qe_set_enclave_load_policy(7));
	show("path_qe3", sgx_ql_set_path(SGX_QL_QE3_PATH,
			"/usr/lib/x86_64-linux-gnu/libsgx_qe3.signed.so.1"));
	show("path_null", sgx_ql_set_path(SGX_QL_PCE_PATH, NULL));
	show("path_bad_type", sgx_ql_set_path(9, "/x"));
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	show("path_too_long", sgx_ql_set_path(SGX_QL_QPL_PATH, longpath));
	show("target_info_null", sgx_qe_get_target_info(NULL));
	show("target_info", sgx_qe_get_target_info(&ti));
	show("size_null", sgx_qe_get_quote_size(NULL));
	show("size", sgx_qe_get_quote_size(&size));
	printf("size_value=%u\n", size);
	q = calloc(1, size ? size : 1);
	show("quote_null_report", sgx_qe_get_quote(NULL, size, q));
	show("quote_null_buffer", sgx_qe_get_quote(&report, size, NULL));
	if (size) {
		show("quote_short_buffer", sgx_qe_get_quote(&report, size - 1, q));
		/* All zeros: no REPORT the QE's report key MACed. */
		show("quote_bad_report", sgx_qe_get_quote(&report, size, q));
	}
	show("cleanup", sgx_qe_cleanup_by_policy());
	free(q);
	return 0;
}
