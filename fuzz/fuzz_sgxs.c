/* SPDX-License-Identifier: MIT */
/*
 * .sgxs measurement streams and flat images (tools/image.c), what
 * `sgxemu measure` reads. The input is the file. The stream parser must
 * accept it with a MRENCLAVE or refuse it with a one-line reason; the
 * flat-image path is run too, since `measure` picks one by the first
 * record. An accepted stream is measured a second time to check that the
 * answer depends on the bytes only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "image.h"

static void check_err(int rc, const char *err)
{
	if (rc && (!err[0] || strchr(err, '\n'))) {
		fprintf(stderr, "bad refusal message: '%s'\n", err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t m1[SGX_HASH_SIZE], m2[SGX_HASH_SIZE];
	/* An exact-size heap copy: ASan then sees any read past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	char err[256];
	int rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	err[0] = '\0';
	rc = image_measure_sgxs(copy, size, m1, err, sizeof(err));
	check_err(rc, err);
	if (rc == 0) {
		if (!image_is_sgxs(copy, size) ||
		    image_measure_sgxs(copy, size, m2, err, sizeof(err)) ||
		    memcmp(m1, m2, sizeof(m1)))
			abort();
	}
	/* Flat images are page multiples: keep that path cheap. */
	if (size <= 16 * SGX_PAGE_SIZE) {
		err[0] = '\0';
		rc = image_measure_flat(copy, size, m1, err, sizeof(err));
		check_err(rc, err);
	}
	free(copy);
	return 0;
}
