// SPDX-License-Identifier: MIT
/*
 * A libFuzzer harness on Intel's SampleEnclave through the SDK's urts
 * (tests/integration/test_fuzz_sdk.sh, docs/guide.md "Testing enclaves:
 * coverage and fuzzing"): built with clang -fsanitize=fuzzer against the
 * sample's edger8r output (App/Enclave_u.c) and libsgx_urts, it creates
 * the DEBUG enclave once and hands each input to one of two ECALLs that
 * take bytes: ecall_pointer_string_const (a string) or ecall_pointer_size
 * (a buffer), chosen by the first byte. An ECALL that does not return
 * SGX_SUCCESS (SGX_ERROR_ENCLAVE_CRASHED after an enclave exception) is a
 * crash: abort(), so libFuzzer reports it and saves the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgx_urts.h"
#include "Enclave_u.h"

static sgx_enclave_id_t eid;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("SAMPLE_ENCLAVE");
	sgx_status_t r;

	(void)argc;
	(void)argv;
	r = sgx_create_enclave(path ? path : "enclave.signed.so", SGX_DEBUG_FLAG,
			       NULL, NULL, &eid, NULL);
	if (r != SGX_SUCCESS) {
		fprintf(stderr, "harness: sgx_create_enclave: 0x%x\n", r);
		exit(1);
	}
	return 0;
}

/* The sample's OCALLs (its App defines them; the two ECALLs make none). */
void ocall_print_string(const char *str)
{
	fputs(str, stdout);
}

void ocall_pointer_user_check(int *val)
{
	(void)val;
}

void ocall_pointer_in(int *val)
{
	(void)val;
}

void ocall_pointer_out(int *val)
{
	(void)val;
}

void ocall_pointer_in_out(int *val)
{
	(void)val;
}

void ocall_function_allow(void)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	sgx_status_t r;

	if (size < 1)
		return 0;
	buf = calloc(1, size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);	/* NUL-terminated: one byte spare */
	if (data[0] & 1)
		r = ecall_pointer_string_const(eid, buf);
	else
		r = ecall_pointer_size(eid, buf, size - 1);
	free(buf);
	if (r != SGX_SUCCESS) {
		fprintf(stderr, "harness: ECALL failed: 0x%x\n", r);
		abort();
	}
	return 0;
}
