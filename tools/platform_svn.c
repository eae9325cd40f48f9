/* SPDX-License-Identifier: MIT */
/*
 * sgxemu platform update-svn: a runtime microcode update. It raises the
 * platform's pending security version in the secrets file, as loading a
 * microcode patch does on a running machine: nothing else changes until
 * ENCLS[EUPDATESVN] takes it, which the driver runs at an open of an
 * enclave device when no enclave exists (src/driver/svn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "cli.h"
#include "platform.h"

/* TCB component 2 (CPUSVN byte 1): "SGX Late Microcode Update" in Intel's
 * TCB info, the one a runtime update raises. */
#define LATE_UCODE_COMPONENT	2

static const char usage[] =
"usage: sgxemu platform update-svn [--component N | --cpusvn HEX]\n"
"\n"
"Load a newer microcode: the pending CPUSVN goes up (by default TCB\n"
"component 2, the SGX late microcode update SVN, by one; --component N\n"
"raises component N of 1..16; --cpusvn gives all 32 hex digits, which\n"
"must be newer: no component lower, one higher). Reports, keys and\n"
"quotes keep the current CPUSVN until the next open of an enclave device\n"
"in a process with no enclave runs ENCLS[EUPDATESVN] (`sgxemu info`\n"
"shows both).\n";

static void print_svn(const char *label, const uint8_t v[16])
{
	printf("%s", label);
	cli_print_hex(stdout, v, 16);
	printf("\n");
}

int platform_update_svn_main(int argc, char **argv)
{
	struct sgx_platform_keys keys;
	struct sgx_svn_state st;
	char path[4096], why[512];
	uint8_t want[16];
	uint64_t comp = LATE_UCODE_COMPONENT;
	const char *hex = NULL;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cpusvn") && i + 1 < argc) {
			hex = argv[++i];
		} else if (!strcmp(argv[i], "--component") && i + 1 < argc) {
			if (!cli_parse_uint(argv[++i], 16, &comp) || !comp) {
				cli_error("--component must be 1..16, not '%s'", argv[i]);
				return CLI_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return CLI_EXIT_OK;
		} else {
			cli_error("unknown or incomplete option '%s'", argv[i]);
			fputs(usage, stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (hex && sgx_unhex(hex, want, sizeof(want))) {
		cli_error("--cpusvn must be 32 hex digits, not '%s'", hex);
		return CLI_EXIT_USAGE;
	}
	ret = sgx_secrets_path(path, sizeof(path));
	if (ret) {
		cli_error("platform secrets: no location (%s; set SGXEMU_SECRETS_FILE)",
			  strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	/* The platform as any process would find it: created on first use,
	 * refused whole when damaged. */
	ret = sgx_secrets_load(path, &keys, why, sizeof(why));
	memset(&keys, 0, sizeof(keys));
	if (!ret)
		ret = sgx_secrets_svn(path, &st, why, sizeof(why));
	if (ret) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	if (!hex) {
		memcpy(want, st.pending, 16);
		if (want[comp - 1] == 0xff) {
			cli_error("TCB component %u is at SVN 255 already: no newer "
				  "microcode (%s)", (unsigned)comp, strerror(ERANGE));
			return CLI_EXIT_FAIL;
		}
		want[comp - 1]++;
	}
	ret = sgx_secrets_set_pending(path, want, why, sizeof(why));
	if (ret) {
		cli_error("%s: %s", strerror(-ret), why);
		return CLI_EXIT_FAIL;
	}
	print_svn("pending CPUSVN:   ", want);
	print_svn("current CPUSVN:   ", st.cpusvn);
	printf("taken by ENCLS[EUPDATESVN] at the next open of an enclave "
	       "device by a process with no enclave\n");
	return CLI_EXIT_OK;
}
