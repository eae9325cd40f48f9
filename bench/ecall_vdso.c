/* SPDX-License-Identifier: MIT */
/*
 * The cost of an enclave call through the published vDSO entry under the
 * shim (EENTER, the enclave's EEXIT, back), against the floor this machine
 * sets: one ENCLU fault of the kind this host raises (#UD on AMD, #GP on
 * Intel: probed) and its return; the enclave's EEXIT is one such fault.
 *
 * Runs itself under `sgxemu run` (B/sgxemu, B/libsgxemu.so). The raw trap
 * is measured first, before any SGX device is open, when the shim has not
 * started the engine and signals are the program's own.
 * Last line: "ecall_vdso ratio=R target=1.1" (R = vDSO round trip / trap).
 */
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include "../tests/enclaves/shim_encl.h"
#include "sgxemu/sgxemu.h"
#include "signing_key.h"


static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * What the shim costs a call it passes through: mprotect() of an ordinary
 * mapping through libsgxemu.so's wrapper (enclave mappings exist, so the
 * wrapper looks them up) against the raw system call.
 */
static void interposition_cost(int iters)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double wrapped = 1e30, raw = 1e30, t0;

	if (p == MAP_FAILED)
		return;
	for (int round = 0; round < 5; round++) {
		t0 = now_ns();
		for (int i = 0; i < iters; i++)
			mprotect(p, 4096, (i & 1) ? PROT_READ : PROT_NONE);
		t0 = (now_ns() - t0) / iters;
		if (t0 < wrapped)
			wrapped = t0;
		t0 = now_ns();
		for (int i = 0; i < iters; i++)
			syscall(SYS_mprotect, p, 4096, (i & 1) ? PROT_READ : PROT_NONE);
		t0 = (now_ns() - t0) / iters;
		if (t0 < raw)
			raw = t0;
	}
	munmap(p, 4096);
	printf("mprotect through the shim:  %8.0f ns (raw syscall %.0f ns)\n",
	       wrapped, raw);
}

int main(int argc, char **argv)
{
	const char *why = shim_reexec(argv);
	struct sgx_enclave_run run;
	struct shim_encl e;
	EVP_PKEY *key;
	uint64_t out[2];
	struct sgxemu_trap_info ti;
	double trap, ecall = 1e30, t0;
	int iters = argc > 1 ? atoi(argv[1]) : 20000, ret;

	if (why) {
		printf("ecall_vdso: cannot run under the shim: %s\n", why);
		printf("ecall_vdso ratio=nan target=1.1\n");
		return 0;
	}
	if (iters <= 0)
		iters = 20000;
	trap = sgxemu_trap_cost_ns((unsigned)iters);
	if (trap <= 0 || sgxemu_trap_probe(&ti)) {
		printf("ecall_vdso: the trap probe failed\n");
		printf("ecall_vdso ratio=nan target=1.1\n");
		return 1;
	}

	key = shim_load_key(test_signing_key());
	ret = key ? shim_encl_build(&e, key) : -ENOKEY;
	if (ret || !shim_vdso_fn) {
		printf("ecall_vdso: enclave build failed: %s\n",
		       strerror(ret ? -ret : ENOENT));
		printf("ecall_vdso ratio=nan target=1.1\n");
		return 1;
	}
	for (int i = 0; i < 100; i++)
		shim_ecall(&e, 0, 0, out, (unsigned long)i, &run);
	for (int round = 0; round < 5; round++) {
		t0 = now_ns();
		for (int i = 0; i < iters; i++)
			shim_ecall(&e, 0, 0, out, (unsigned long)i, &run);
		t0 = (now_ns() - t0) / iters;
		if (t0 < ecall)
			ecall = t0;
	}
	if (out[0] != (uint64_t)iters) {
		printf("ecall_vdso: wrong result %llu\n", (unsigned long long)out[0]);
		return 1;
	}
	printf("ENCLU trap round trip:      %8.0f ns (%s, median)\n", trap,
	       sgxemu_trap_name(ti.vector));
	printf("vDSO ecall round trip:      %8.0f ns (EENTER + EEXIT, %d calls, best of 5)\n",
	       ecall, iters);
	interposition_cost(iters);
	printf("ecall_vdso ratio=%.2f target=1.1\n", ecall / trap);
	return 0;
}
