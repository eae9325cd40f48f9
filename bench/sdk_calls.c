/* SPDX-License-Identifier: MIT */
/*
 * An empty ECALL and an empty OCALL of an Intel SGX SDK enclave (the SDK's
 * urts and trusted runtime, tests/sdk), each against one ENCLU trap of
 * this host: the floor of any enclave transition here, as one EENTER or
 * EEXIT costs one such trap. Goal: 1.3 traps each (the transition the
 * enclave makes plus the runtimes' own work).
 *
 * The SDK's program runs under `sgxemu run` (B/sgxemu); the SDK comes from
 * ../shared/clients/intel-sdk (its setup.sh unpacks it into B/intel-sdk,
 * tests/sdk/build.sh builds the enclave), and without it this prints why
 * and the ratios as nan. It also says which way the urts enters: through
 * __vdso_sgx_enter_enclave (one trap per ECALL: the enclave's EEXIT), or
 * by its own ENCLU when it did not find the vDSO (two: EENTER and EEXIT).
 * Last lines: "sdk_calls_ocall ratio=R target=1.3" (OCALL / trap), then
 * "sdk_calls ratio=R target=1.3" (ECALL / trap).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sgxemu/sgxemu.h"

static void give_up(const char *why)
{
	printf("sdk_calls: %s\n", why);
	printf("sdk_calls_ocall ratio=nan target=1.3\n");
	printf("sdk_calls ratio=nan target=1.3\n");
	exit(0);
}

/* Run @cmd through the shell; its output's "ecall_ns"/"ocall_ns". */
static int run_app(const char *cmd, double *ecall, double *ocall)
{
	char line[256];
	FILE *p = popen(cmd, "r");
	int found = 0;

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "ecall_ns %lf", ecall) == 1)
			found |= 1;
		if (sscanf(line, "ocall_ns %lf", ocall) == 1)
			found |= 2;
	}
	return pclose(p) == 0 && found == 3 ? 0 : -1;
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], b[PATH_MAX], root[PATH_MAX], cmd[8 * PATH_MAX];
	char client[PATH_MAX + 64];
	int iters = argc > 1 ? atoi(argv[1]) : 20000;
	double trap, ecall = 1e30, ocall = 1e30, e, o;
	struct sgxemu_trap_info ti;
	const char *via;

	if (iters <= 0)
		iters = 20000;
	/* B is the directory above this program's (B/bench/sdk_calls). */
	if (!realpath(argv[0], exe))
		give_up("cannot find this program's directory");
	snprintf(b, sizeof(b), "%s", dirname(dirname(exe)));
	snprintf(root, sizeof(root), "%s", b);
	dirname(root);
	snprintf(client, sizeof(client), "%s/../shared/clients/intel-sdk", root);
	if (access(client, R_OK))
		give_up("no Intel SDK client (../shared/clients is absent)");

	trap = sgxemu_trap_cost_ns((unsigned)iters);
	if (trap <= 0 || sgxemu_trap_probe(&ti))
		give_up("the trap probe failed");

	snprintf(cmd, sizeof(cmd),
		 "{ [ -x '%s/intel-sdk/sgxsdk/bin/x64/sgx_sign' ] || "
		 "'%s/setup.sh' '%s/intel-sdk' SampleEnclave; } >/dev/null 2>&1 && "
		 "'%s/tests/sdk/build.sh' '%s/intel-sdk' '%s/intel-sdk/own' "
		 ">/dev/null 2>&1", b, client, b, root, b, b);
	if (system(cmd))
		give_up("building the SDK test enclave failed "
			"(tests/sdk/build.sh)");
	for (int round = 0; round < 3; round++) {
		snprintf(cmd, sizeof(cmd),
			 "cd '%s/intel-sdk/own' && LD_LIBRARY_PATH='%s/intel-sdk/psw/lib' "
			 "'%s/sgxemu' run ./app encl.signed.so bench %d 2>/dev/null",
			 b, b, b, iters);
		if (run_app(cmd, &e, &o))
			give_up("the SDK program failed under sgxemu run");
		if (e < ecall)
			ecall = e;
		if (o < ocall)
			ocall = o;
	}
	/* With the emulation of host ENCLU off, only a urts that enters
	 * through the vDSO gets through. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/intel-sdk/own' && LD_LIBRARY_PATH='%s/intel-sdk/psw/lib' "
		 "SGXEMU_HOST_ENCLU=0 '%s/sgxemu' run ./app encl.signed.so bench 10 "
		 "2>/dev/null", b, b, b);
	via = run_app(cmd, &e, &o) ? "its own ENCLU (the urts did not find "
				     "__vdso_sgx_enter_enclave): EENTER and "
				     "EEXIT trap" :
				     "__vdso_sgx_enter_enclave: the enclave's "
				     "EEXIT traps";
	printf("ENCLU trap round trip:  %8.0f ns (%s, median)\n", trap,
	       sgxemu_trap_name(ti.vector));
	printf("SDK empty ECALL:        %8.0f ns (%.2f traps; best of 3 x %d)\n",
	       ecall, ecall / trap, iters);
	printf("SDK empty OCALL:        %8.0f ns (%.2f traps)\n", ocall,
	       ocall / trap);
	printf("the urts enters by:     %s\n", via);
	printf("sdk_calls_ocall ratio=%.2f target=1.3\n", ocall / trap);
	printf("sdk_calls ratio=%.2f target=1.3\n", ecall / trap);
	return 0;
}
