// SPDX-License-Identifier: MIT
/*
 * The floor of bench/fuzz_ecall.sh: libFuzzer on the same little function
 * the enclave's FUZZ_CMD_LITTLE ECALL runs (tests/enclaves/fuzz_encl.c),
 * called in the host. Built with clang -fsanitize=fuzzer at the enclave's
 * -O0.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_encl.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return (int)fuzz_little(data, size) & 0;
}
