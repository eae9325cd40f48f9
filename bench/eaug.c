/* SPDX-License-Identifier: MIT */
/*
 * SGX2 heap growth: pages/s of EAUG on fault + EACCEPT for a 64 MiB heap
 * (the enclave EACCEPTs each missing page: #PF, AEX, the driver EAUGs,
 * ERESUME, EACCEPT again, then one store and one load), and, in the same
 * run, the cost of one trap on this host (the probed ENCLU fault,
 * sgxemu_trap_cost_ns: the trap the engine takes). Prints the ratio of the per-page cost to one
 * trap (goal: at most 3 traps' worth per page).
 *
 * Runs itself under `sgxemu run` (B/sgxemu, B/libsgxemu.so). The raw trap
 * is measured before any SGX device is open, when the signals are still
 * the program's own. One timed growth, no loop (shared machines).
 * Last line: "eaug ratio=R target=3.0".
 */
#include <time.h>

#include "../tests/enclaves/sgx2_encl.h"
#include "sgxemu/sgxemu.h"
#include "signing_key.h"

#define HEAP_BYTES	(64UL << 20)
#define ELRANGE		(128UL << 20)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *why = shim_reexec(argv);
	struct sgx_enclave_run run;
	struct sgx2_mail m;
	struct sgx2_encl e;
	uint64_t pages = HEAP_BYTES / 4096;
	double trap, t0, grow, per_page;
	EVP_PKEY *key;
	int r;

	(void)argc;
	if (why) {
		printf("eaug: skipped (%s)\n", why);
		return 0;
	}
	trap = sgxemu_trap_cost_ns(2000);
	if (trap <= 0) {
		printf("eaug: the trap probe failed\n");
		printf("eaug ratio=nan target=3.0\n");
		return 1;
	}
	key = shim_load_key(test_signing_key());
	r = key ? sgx2_encl_build(&e, key, ELRANGE) : -ENOKEY;
	if (r) {
		fprintf(stderr, "eaug: enclave build failed: %s\n", strerror(-r));
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_GROW;
	m.a = e.base + SGX2_HEAP;
	m.b = pages;
	t0 = now_ns();
	r = sgx2_call(&e, SGX2_TCS0, &m, &run);
	grow = now_ns() - t0;
	if (r || run.function != SGX_EEXIT || m.rax != 0) {
		fprintf(stderr, "eaug: growth failed (vDSO %d, function %u, "
			"vector %u, failures %llu)\n", r, run.function,
			run.exception_vector, (unsigned long long)m.rax);
		return 1;
	}
	per_page = grow / (double)pages;
	printf("eaug: EAUG on fault + EACCEPT, %lu MiB heap: %10.0f pages/s "
	       "(%.2f us/page)\n", HEAP_BYTES >> 20, 1e9 / per_page,
	       per_page / 1000.0);
	printf("eaug: one trap on this host (ENCLU outside an enclave): "
	       "%.2f us\n", trap / 1000.0);
	printf("eaug: per page = %.2f traps\n", per_page / trap);
	printf("eaug ratio=%.2f target=3.0\n", per_page / trap);
	sgx2_encl_destroy(&e);
	return 0;
}
