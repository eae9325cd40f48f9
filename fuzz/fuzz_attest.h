/* SPDX-License-Identifier: MIT */
/*
 * What the attestation harnesses (fuzz_aesm, fuzz_quote) share: a platform
 * of their own (a secrets file in a fresh temporary directory, its CA
 * hierarchy next to it), made once at start-up, and a REPORT for the QE.
 */
#ifndef SGXEMU_FUZZ_ATTEST_H
#define SGXEMU_FUZZ_ATTEST_H

#include <stdio.h>
#include <stdlib.h>

#include "attest/attest.h"
#include "sgxemu/attest.h"

static struct sgx_attest *fuzz_attest_platform(void)
{
	static char path[256];
	char dir[] = "/tmp/sgxemu-fuzz-attest-XXXXXX", why[256];
	struct sgx_attest *a;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/platform-secrets", dir);
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	unsetenv("SGXEMU_CPUSVN");
	if (sgx_attest_get(&a, why, sizeof(why))) {
		fprintf(stderr, "fuzz: attestation platform: %s\n", why);
		abort();
	}
	return a;
}

/* EREPORT's output for an application enclave targeting the QE. */
static void fuzz_app_report(struct sgx_attest *a, struct sgx_report *r)
{
	struct sgx_key_identity id = { 0 };
	struct sgx_targetinfo ti;
	uint8_t rd[64] = { 1, 2, 3 };

	id.attributes.flags = SGX_ATTR_INIT | SGX_ATTR_MODE64BIT;
	id.mrenclave[0] = 0xee;
	sgxemu_qe_target_info(&ti, NULL, 0);
	if (sgx_build_report(&a->keys, &id, &ti, rd, r))
		abort();
}

#endif /* SGXEMU_FUZZ_ATTEST_H */
