/* SPDX-License-Identifier: MIT */
/*
 * sgxemu pki: one CA hierarchy for a fleet of platforms (src/attest/pki.c).
 * export writes this installation's hierarchy and its registry of PCK
 * certificates to a directory laid out as a hierarchy directory, so that
 * the directory can also be used in place (SGXEMU_PKI_DIR); import makes
 * such a directory this platform's hierarchy, or, when it already is,
 * merges its registry (how the PCK certificates of a fleet without a
 * shared file system reach the host of its `sgxemu pccs`). root prints
 * the root certificate for verifiers that only need to trust it; list
 * the registered platforms.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/pem.h>

#include "attest/attest.h"
#include "attest/pki.h"
#include "base/secrets.h"
#include "cli.h"
#include "commands.h"

static const char usage[] =
"usage: sgxemu pki export [--force] DIR\n"
"       sgxemu pki import [--force] DIR\n"
"       sgxemu pki root\n"
"       sgxemu pki list\n"
"\n"
"One CA hierarchy for many platforms, so that each verifies the others'\n"
"quotes and one `sgxemu pccs` serves every platform's PCK certificate.\n"
"The hierarchy is in SGXEMU_PKI_DIR when set, else <secrets file>.pki;\n"
"platforms on one file system can share it by pointing SGXEMU_PKI_DIR\n"
"at one directory. Each platform registers its PCK certificates in the\n"
"hierarchy's pck/ directory, by QE id, PCE id and TCB.\n"
"\n"
"  export DIR  write the root CA, PCK CA and TCB signing certificates and\n"
"              keys (DIR 0700, keys 0600) and the registered PCK\n"
"              certificates, this platform's among them, to DIR; a DIR\n"
"              holding another hierarchy is refused unless --force\n"
"  import DIR  make DIR's hierarchy this platform's, and add DIR's PCK\n"
"              certificates to the registry (importing the hierarchy this\n"
"              platform already has only does that). Refused when a file\n"
"              is missing, a key does not match its certificate or the\n"
"              certificates do not chain, and, unless --force, when this\n"
"              platform has another hierarchy that issued PCK certificates\n"
"  root        print the root CA certificate (PEM), to give verifiers that\n"
"              trust it (SGXEMU_TRUSTED_ROOT, quote verify --root)\n"
"  list        the registered PCK certificates: QE id, PCE id, CPUSVN,\n"
"              PCESVN, PPID\n"
"Nothing chains to Intel's root.\n";

static int export_main(const char *dir, bool force)
{
	struct sgx_attest *a;
	char why[512];
	int n;

	/* The platform's own certificate is issued (registered) on the way. */
	if (sgx_attest_get(&a, why, sizeof(why)) ||
	    sgx_pki_export(&a->pki, dir, force, &n, why, sizeof(why))) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	printf("exported the hierarchy of %s and %d PCK certificate%s to %s\n",
	       a->pki.dir, n, n == 1 ? "" : "s", dir);
	return CLI_EXIT_OK;
}

static int import_main(const char *src, bool force)
{
	struct sgx_pki_import info;
	char secrets[4096], dst[4200], why[512];

	if (sgx_secrets_path(secrets, sizeof(secrets))) {
		cli_error("platform secrets: no location (set HOME or "
			  "SGXEMU_SECRETS_FILE)");
		return CLI_EXIT_FAIL;
	}
	if (sgx_pki_dir(secrets, dst, sizeof(dst))) {
		cli_error("%s: name too long", secrets);
		return CLI_EXIT_FAIL;
	}
	/* Not through the platform's context: opening it would create a
	 * hierarchy of its own and issue a PCK certificate under it. */
	if (sgx_pki_import(dst, src, force, &info, why, sizeof(why))) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	printf("%s %s: %d PCK certificate%s added to the registry\n",
	       info.same ? "already the hierarchy of" :
	       info.replaced ? "replaced the hierarchy of" : "imported into",
	       dst, info.merged, info.merged == 1 ? "" : "s");
	return CLI_EXIT_OK;
}

static void hex(const uint8_t *p, size_t n)
{
	cli_print_hex(stdout, p, n);
}

static int list_one(const struct sgx_pck_entry *e, void *ctx)
{
	(void)ctx;
	hex(e->qe_id, 16);
	putchar(' ');
	hex(e->ext.pceid, 2);
	putchar(' ');
	hex(e->ext.cpusvn, 16);
	printf(" %u ", e->ext.pcesvn);
	hex(e->ext.ppid, 16);
	putchar('\n');
	return 0;
}

static int pki_main(int argc, char **argv)
{
	struct sgx_attest *a;
	const char *dir = NULL;
	bool force = false;
	char why[512];
	int ret;

	if (argc < 2) {
		cli_error("give a subcommand (try 'sgxemu pki --help')");
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "export") || !strcmp(argv[1], "import")) {
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--force"))
				force = true;
			else if (!dir && argv[i][0] && argv[i][0] != '-')
				dir = argv[i];
			else {
				cli_error("usage: sgxemu pki %s [--force] DIR", argv[1]);
				return CLI_EXIT_USAGE;
			}
		}
		if (!dir) {
			cli_error("usage: sgxemu pki %s [--force] DIR", argv[1]);
			return CLI_EXIT_USAGE;
		}
		return argv[1][0] == 'e' ? export_main(dir, force) :
					   import_main(dir, force);
	}
	if (argc != 2 || (strcmp(argv[1], "root") && strcmp(argv[1], "list"))) {
		cli_error("unknown subcommand (try 'sgxemu pki --help')");
		return CLI_EXIT_USAGE;
	}
	if (sgx_attest_get(&a, why, sizeof(why))) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	if (!strcmp(argv[1], "root"))
		ret = PEM_write_X509(stdout, a->pki.root) ? 0 : -1;
	else
		ret = sgx_pki_each_pck(&a->pki, list_one, NULL);
	if (ret || fflush(stdout)) {
		cli_error("cannot print the %s", argv[1][0] == 'r' ?
			  "root certificate" : "registry");
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

const struct cli_command cmd_pki = {
	.name = "pki",
	.summary = "share the CA hierarchy with a fleet: export, import, root",
	.usage = usage,
	.main = pki_main,
};
