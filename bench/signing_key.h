/* SPDX-License-Identifier: MIT */
/*
 * The signing key of the benchmarks that sign their own enclaves: the
 * build's (mk/keys.mk), named as the tests' harness names it so that the
 * test enclave loaders (tests/enclaves/) work in both.
 */
#ifndef SGXEMU_BENCH_SIGNING_KEY_H
#define SGXEMU_BENCH_SIGNING_KEY_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The build directory ($B, default "build"). */
static inline const char *test_build_dir(void)
{
	const char *b = getenv("B");

	return b && *b ? b : "build";
}

/* The build's signing key (mk/keys.mk), as the tests' test_signing_key(). */
static inline const char *test_signing_key(void)
{
	static char path[4096];
	const char *env = getenv("SGXEMU_TEST_KEY");

	if (env && *env)
		return env;
	snprintf(path, sizeof(path), "%s/keys/signing_key.pem", test_build_dir());
	if (access(path, R_OK)) {
		fprintf(stderr, "bench: no signing key %s (make keys)\n", path);
		return NULL;
	}
	return path;
}

#endif
