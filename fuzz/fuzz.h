/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the libFuzzer harnesses (fuzz/fuzz_*.c): a cursor that
 * hands out the fuzzer's bytes as integers and blobs, reading zeros once
 * the input is used up, so every input — however short — drives a whole
 * run and the fuzzer learns the layout from coverage alone.
 */
#ifndef SGXEMU_FUZZ_H
#define SGXEMU_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline void fuzz_bytes(struct fuzz_in *in, void *out, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	memcpy(out, in->p, k);
	memset((uint8_t *)out + k, 0, n - k);
	in->p += k;
	in->left -= k;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_bytes(in, &v, 1);
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t v;

	fuzz_bytes(in, &v, 2);
	return v;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v;

	fuzz_bytes(in, &v, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif /* SGXEMU_FUZZ_H */
