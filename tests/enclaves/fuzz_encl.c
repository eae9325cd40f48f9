// SPDX-License-Identifier: MIT
/*
 * The enclave fuzzing test's enclave (tests/integration/test_fuzz_enclave.sh,
 * docs/guide.md "Testing enclaves: coverage and fuzzing"): a parser with a
 * bug planted behind a chain of byte compares, each its own branch (built
 * at -O0, so no compare is merged with the next): a 6-byte magic, then an
 * out-of-bounds write far outside the enclave (a non-canonical address: a
 * #GP in enclave mode). Built with clang's
 * -fsanitize-coverage=inline-8bit-counters,pc-table and no sanitizer
 * runtime: its edges are counters in __sancov_cntrs that sgxemu gives to
 * the host's libFuzzer.
 */
#include "fuzz_encl.h"

unsigned char fuzz_slots[16];

__attribute__((noinline)) static unsigned long fuzz_planted(const unsigned char *d)
{
	volatile unsigned char *p = fuzz_slots;

	/* The bug: an index taken from the input, never checked. */
	p += ((unsigned long)d[6] + 1) << 47;
	*p = d[7];
	return 6;
}

__attribute__((noinline)) unsigned long fuzz_parse(const unsigned char *d,
						    unsigned long n)
{
	if (n < 8)
		return 0;
	if (d[0] != 'S')
		return 1;
	if (d[1] != 'G')
		return 1;
	if (d[2] != 'X')
		return 2;
	if (d[3] != 'E')
		return 3;
	if (d[4] != 'M')
		return 4;
	if (d[5] != 'U')
		return 5;
	return fuzz_planted(d);
}

/* An ECALL that does little: the fuzzing benchmark's (bench/fuzz_ecall.sh),
 * also called in the host by tests/debug/fuzz_native.c. */
__attribute__((noinline)) unsigned long fuzz_little(const unsigned char *d,
						     unsigned long n)
{
	return n ? d[0] : 0;
}

void encl_dispatch(unsigned long cmd, struct fuzz_args *a)
{
	if (cmd == FUZZ_CMD_PARSE)
		a->out = fuzz_parse(a->data, a->size);
	else if (cmd == FUZZ_CMD_LITTLE)
		a->out = fuzz_little(a->data, a->size);
}
