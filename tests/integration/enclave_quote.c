// SPDX-License-Identifier: MIT
/*
 * enclave_quote QUOTE: for shell tests (test_fleet.sh), the DCAP quote of
 * a real enclave's REPORT on the platform the environment names
 * (SGXEMU_SECRETS_FILE): keys_encl (tests/enclaves/keys_encl.S) runs
 * EREPORT for the QE's TARGETINFO, the QE quotes it, the quote is written
 * to QUOTE. Prints the enclave's MRENCLAVE and the REPORTDATA it put in,
 * so the script can compare them with what `sgxemu quote verify` shows.
 * Failures: one line on stderr, exit status 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "../enclaves/encl_util.h"
#include "sgxemu/attest.h"

#define K_REPORT	1

static void hex_line(const char *what, const uint8_t *p, size_t n)
{
	printf("%s ", what);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

int main(int argc, char **argv)
{
	struct sgx_targetinfo ti;
	struct sgx_report r;
	struct sgxemu_enclave_info info;
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	const char *why_load = NULL;
	uint8_t data[64], *q = NULL;
	char path[512], why[256];
	uint64_t base;
	size_t len;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: enclave_quote QUOTE\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/enclaves/keys_encl.bin", test_build_dir());
	e = tu_load_layout(path, &base, &why_load);
	if (!e || sgxemu_enclave_get_info(e, &info)) {
		fprintf(stderr, "enclave_quote: %s: %s\n", path,
			why_load ? why_load : "no enclave information");
		return 1;
	}
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(0xa5 ^ i);
	if (sgxemu_qe_target_info(&ti, why, sizeof(why))) {
		fprintf(stderr, "enclave_quote: QE target info: %s\n", why);
		return 1;
	}
	memset(&r, 0, sizeof(r));
	if (tu_call(&run, base, K_REPORT, (uintptr_t)&ti, (uintptr_t)data,
		    (uintptr_t)&r) || run.exit_reason != SGXEMU_EXIT_EEXIT) {
		fprintf(stderr, "enclave_quote: EREPORT in keys_encl failed\n");
		return 1;
	}
	if (sgxemu_quote_generate(&r, &q, &len, why, sizeof(why))) {
		fprintf(stderr, "enclave_quote: %s\n", why);
		return 1;
	}
	f = fopen(argv[1], "wb");
	if (!f || fwrite(q, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "enclave_quote: cannot write %s\n", argv[1]);
		return 1;
	}
	hex_line("MRENCLAVE", info.mrenclave, 32);
	hex_line("REPORTDATA", data, 64);
	free(q);
	sgxemu_enclave_destroy(e);
	return 0;
}
