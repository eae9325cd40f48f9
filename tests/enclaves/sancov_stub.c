// SPDX-License-Identifier: MIT
/*
 * What an enclave built with clang's -fsanitize-coverage=inline-8bit-
 * counters,pc-table needs to link, and nothing more (docs/guide.md
 * "Testing enclaves: coverage and fuzzing"): the module constructor the
 * compiler adds calls these two with its counters and PC table, which a
 * sanitizer runtime would hand to libFuzzer. An enclave has no such
 * runtime; under `sgxemu run` the host side finds the same two ranges in
 * the enclave's ELF and registers them with the host's libFuzzer itself,
 * so the enclave's calls (if its runtime runs constructors) do nothing.
 * C or C++ (an SDK enclave's sources are often C++: copy it as .cpp).
 */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
void __sanitizer_cov_pcs_init(const uintptr_t *begin, const uintptr_t *end);

void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
	(void)start;
	(void)stop;
}

void __sanitizer_cov_pcs_init(const uintptr_t *begin, const uintptr_t *end)
{
	(void)begin;
	(void)end;
}

#ifdef __cplusplus
}
#endif
