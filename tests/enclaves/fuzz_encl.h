/* SPDX-License-Identifier: MIT */
/* The enclave fuzzing test's command (fuzz_encl.c, tests/debug/fuzz_host.c). */
#ifndef SGXEMU_TEST_FUZZ_ENCL_H
#define SGXEMU_TEST_FUZZ_ENCL_H

#define FUZZ_CMD_PARSE	1	/* out = fuzz_parse(data, size) */
#define FUZZ_CMD_LITTLE	2	/* out = fuzz_little(data, size) */

struct fuzz_args {
	const unsigned char *data;	/* host memory */
	unsigned long size, out;
};

/* The magic in front of the planted bug. */
#define FUZZ_MAGIC	"SGXEMU"

#endif
