// SPDX-License-Identifier: MIT
/*
 * A libFuzzer harness whose target is an ECALL (tests/integration/
 * test_fuzz_enclave.sh): built with clang -fsanitize=fuzzer, run under
 * `sgxemu run`, it loads the fuzzing test enclave (tests/enclaves/
 * fuzz_encl.c, a flat image; FUZZ_KEY and FUZZ_BIN name the signing key
 * and the image, FUZZ_NODEBUG=1 loads it without DEBUG) and hands each
 * input to the enclave's parser. An enclave exception ends the ECALL
 * (the vDSO reports it, as the SDK's urts reports
 * SGX_ERROR_ENCLAVE_CRASHED): the harness aborts, so libFuzzer reports a
 * crash and saves the input, as for a crash of host code.
 *
 * For bench/fuzz_ecall.sh: FUZZ_CMD=little makes each input's ECALL
 * FUZZ_CMD_LITTLE, and FUZZ_ECALL_BENCH=N first times N such ECALLs of an
 * empty input ("fuzz_host: ECALL round trip N ns").
 */
#include <time.h>

#include "test.h"
#include "encl_util.h"
#include "shim_encl.h"
#include "fuzz_encl.h"
#include "flat_load.h"

static uint64_t encl_base;
static unsigned long cmd = FUZZ_CMD_PARSE;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* 0 after EEXIT, -1 after an enclave exception (in *@run). */
static int ecall(const uint8_t *data, size_t size, struct sgx_enclave_run *run)
{
	struct fuzz_args a = { .data = data, .size = size };

	memset(run, 0, sizeof(*run));
	run->tcs = encl_base;
	if (shim_vdso_call(cmd, (unsigned long)(uintptr_t)&a, 0, SGX_EENTER,
			   0, 0, run) || run->function != SGX_EEXIT)
		return -1;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *key = getenv("FUZZ_KEY"), *bin = getenv("FUZZ_BIN");
	const char *nodebug = getenv("FUZZ_NODEBUG");
	const char *which = getenv("FUZZ_CMD"), *bench = getenv("FUZZ_ECALL_BENCH");

	(void)argc;
	(void)argv;
	if (!key || !bin) {
		fprintf(stderr, "fuzz_host: set FUZZ_KEY and FUZZ_BIN\n");
		exit(2);
	}
	if (flat_load(key, bin, !(nodebug && *nodebug == '1'), &encl_base))
		exit(1);
	if (which && !strcmp(which, "little"))
		cmd = FUZZ_CMD_LITTLE;
	if (bench) {
		long n = atol(bench);
		struct sgx_enclave_run run;
		double t0;

		for (int i = 0; i < 1000; i++)
			ecall(NULL, 0, &run);
		t0 = now_ns();
		for (long i = 0; i < n; i++)
			if (ecall(NULL, 0, &run))
				exit(1);
		fprintf(stderr, "fuzz_host: ECALL round trip %.0f ns\n",
			n > 0 ? (now_ns() - t0) / (double)n : 0.0);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sgx_enclave_run run;

	if (ecall(data, size, &run)) {
		fprintf(stderr, "fuzz_host: enclave exception, vector %u at "
			"0x%llx\n", run.exception_vector,
			(unsigned long long)run.exception_addr);
		abort();
	}
	return 0;
}
