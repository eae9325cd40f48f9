/* SPDX-License-Identifier: MIT */
/*
 * SIGSTRUCT verification (src/cpu/sigstruct.c), what `sgxemu dump` and
 * EINIT run over a SIGSTRUCT file: the field checks, the digest and
 * MRSIGNER, and the RSA-3072 check with Q1/Q2. The input is the file
 * (short inputs are padded with zeros, as a 1808-byte buffer would be).
 *
 * Random bytes almost never carry a valid signature, so a flag in the
 * last byte makes the harness re-sign the input with a fixed key and
 * correct Q1/Q2 first: then the fuzzer reaches the paths after the
 * arithmetic (the encoding check, the padding copy) and the verdict must
 * be "valid". Re-signing costs a private-key operation, so it is the
 * exception (1 input in 16).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_sign.h"
#include "cpu/sigstruct.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_sign_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgx_sigstruct *sig = malloc(sizeof(*sig));
	uint8_t padding[SGX_PKCS1_PADDING_SIZE], digest[32], mrsigner[32];
	struct fuzz_in in = { data, size };
	bool resigned = false;
	int rc;

	if (!sig)
		return 0;
	fuzz_bytes(&in, sig, sizeof(*sig));
	if (size > sizeof(*sig) && (data[size - 1] & 0x0f) == 0x0f) {
		fuzz_sign(sig);
		resigned = true;
	}
	(void)sgx_sigstruct_check_fields(sig);
	sgx_sigstruct_digest(sig, digest);
	sgx_sigstruct_mrsigner(sig, mrsigner);
	rc = sgx_sigstruct_verify_signature(sig, padding);
	if (rc != 0 && rc != SGX_INVALID_SIGNATURE)
		abort();
	if (resigned && rc != 0) {
		fprintf(stderr, "a correctly signed SIGSTRUCT was refused\n");
		abort();
	}
	/* The padding EINIT keeps starts 00 01 FF (PKCS#1 v1.5). */
	if (rc == 0 && (padding[0] != 0 || padding[1] != 1 || padding[2] != 0xff))
		abort();
	free(sig);
	return 0;
}
