/* SPDX-License-Identifier: MIT */
/*
 * The seed selftest's signing key, for the benchmarks that sign their own
 * enclave under the shim: $SGXEMU_SHARED, else ../shared from the project
 * or its build folder. NULL when absent (the bench then says so).
 */
#ifndef SGXEMU_BENCH_SEED_KEY_H
#define SGXEMU_BENCH_SEED_KEY_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SEED_KEY "seed-tree/tools/testing/selftests/x86/sgx/signing_key.pem"

static inline const char *seed_key_path(void)
{
	static char path[4096];
	const char *dirs[] = { getenv("SGXEMU_SHARED"), "../shared",
			       "../../shared" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirs[i], SEED_KEY);
		if (!access(path, R_OK))
			return path;
	}
	return NULL;
}

#endif
