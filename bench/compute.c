/* SPDX-License-Identifier: MIT */
/*
 * bench/compute: the same CPU-bound C function (SHA-256 of 1 MiB, plain C
 * in tests/enclaves/sha256.c) run natively and inside the compute test
 * enclave through the native engine. Both digests must agree (the enclave
 * really ran). Last line: "compute ratio=R target=0.95",
 * R = native time / enclave time (medians). COMPUTE_ENCL names another
 * image in build/enclaves (bench/coverage.sh: the gcov-instrumented one).
 */
#include <string.h>

#include "engine_bench.h"
#include "../tests/enclaves/sha256.c"

#define LEN	(1 << 20)
#define ROUNDS	21

int main(void)
{
	static uint64_t tn[ROUNDS], te[ROUNDS];
	struct sgxemu_enclave *e;
	const char *why = "?";
	char path[512];
	uint8_t *buf = malloc(LEN), dn[32], de[32];
	uint64_t base, n, en;

	if (!buf)
		return 1;
	for (size_t i = 0; i < LEN; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	snprintf(path, sizeof(path), "%s/enclaves/%s", test_build_dir(),
		 getenv("COMPUTE_ENCL") ? getenv("COMPUTE_ENCL") :
		 "compute_encl.bin");
	e = tu_load_layout(path, &base, &why);
	if (!e) {
		fprintf(stderr, "compute: cannot load the enclave: %s\n", why);
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		struct sgxemu_run run;
		uint64_t t0 = now_ns();

		sgxemu_test_sha256(buf, LEN, dn);
		tn[r] = now_ns() - t0;

		memset(&run, 0, sizeof(run));
		run.tcs = base + L_TCS0;
		run.leaf = SGX_EENTER;
		run.regs.rdi = CMD_COMPUTE;
		run.regs.rsi = (uint64_t)(uintptr_t)buf;
		run.regs.rdx = LEN;
		run.regs.r8 = (uint64_t)(uintptr_t)de;
		memset(de, 0, sizeof(de));
		t0 = now_ns();
		sgxemu_enter(&run);
		te[r] = now_ns() - t0;
		if (run.exit_reason != SGXEMU_EXIT_EEXIT || memcmp(dn, de, 32)) {
			fprintf(stderr, "compute: enclave digest differs\n");
			return 1;
		}
	}
	sgxemu_enclave_destroy(e);
	n = median(tn, ROUNDS);
	en = median(te, ROUNDS);
	printf("sha256 1 MiB native:  %.3f ms (%.0f MB/s)\n", n / 1e6,
	       LEN / (n / 1e3));
	printf("sha256 1 MiB enclave: %.3f ms (%.0f MB/s)\n", en / 1e6,
	       LEN / (en / 1e3));
	printf("compute ratio=%.3f target=0.95\n", (double)n / (double)en);
	free(buf);
	return 0;
}
