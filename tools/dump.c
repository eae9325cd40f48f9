/* SPDX-License-Identifier: MIT */
/*
 * sgxemu dump: every field of a SIGSTRUCT, and whether EINIT's SIGSTRUCT
 * checks (header constants, RSA signature, Q1/Q2) pass. The checks are the
 * processor model's own (src/cpu/sigstruct.c), so `dump` and EINIT cannot
 * disagree.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "cpu/sigstruct.h"

static const char usage[] =
"usage: sgxemu dump SIGSTRUCT\n"
"\n"
"Print every field of a SIGSTRUCT file (1808 bytes) and check it as EINIT\n"
"does: header constants and reserved fields, then the RSA-3072 signature\n"
"with Q1/Q2. Exits 1 if a check fails.\n";

static void hex_line(const char *name, const uint8_t *p, size_t n)
{
	printf("%-15s ", name);
	cli_print_hex(stdout, p, n);
	putchar('\n');
}

static void print_attr_flags(uint64_t flags)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ SGX_ATTR_INIT, "INIT" },
		{ SGX_ATTR_DEBUG, "DEBUG" },
		{ SGX_ATTR_MODE64BIT, "MODE64BIT" },
		{ SGX_ATTR_PROVISIONKEY, "PROVISIONKEY" },
		{ SGX_ATTR_EINITTOKENKEY, "EINITTOKENKEY" },
		{ SGX_ATTR_CET, "CET" },
		{ SGX_ATTR_KSS, "KSS" },
		{ SGX_ATTR_AEXNOTIFY, "AEXNOTIFY" },
	};
	const char *sep = " (";

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit) {
			printf("%s%s", sep, names[i].name);
			sep = "|";
		}
	if (*sep == '|')
		putchar(')');
}

static void print_fields(const struct sgx_sigstruct *s)
{
	const struct sgx_sigstruct_header *h = &s->header;
	const struct sgx_sigstruct_body *b = &s->body;
	uint8_t mrsigner[SGX_HASH_SIZE];

	hex_line("header:", h->header, sizeof(h->header));
	printf("%-15s 0x%08" PRIx32 "%s\n", "vendor:", h->vendor,
	       h->vendor == SGX_SIGSTRUCT_VENDOR_INTEL ? " (Intel)" :
	       h->vendor == 0 ? " (ISV)" : "");
	printf("%-15s 0x%08" PRIx32, "date:", h->date);
	if (h->date)
		printf(" (%04" PRIx32 "-%02" PRIx32 "-%02" PRIx32 ")",
		       h->date >> 16, (h->date >> 8) & 0xff, h->date & 0xff);
	putchar('\n');
	hex_line("header2:", h->header2, sizeof(h->header2));
	printf("%-15s 0x%08" PRIx32 "\n", "swdefined:", h->swdefined);
	printf("%-15s %" PRIu32 "\n", "exponent:", s->exponent);
	hex_line("modulus:", s->modulus, sizeof(s->modulus));
	printf("%-15s 0x%08" PRIx32 "\n", "miscselect:", b->miscselect);
	printf("%-15s 0x%08" PRIx32 "\n", "miscmask:", b->miscmask);
	printf("%-15s flags 0x%016" PRIx64, "attributes:", b->attributes.flags);
	print_attr_flags(b->attributes.flags);
	printf(" xfrm 0x%016" PRIx64 "\n", b->attributes.xfrm);
	printf("%-15s flags 0x%016" PRIx64 " xfrm 0x%016" PRIx64 "\n",
	       "attributemask:", b->attributemask.flags,
	       b->attributemask.xfrm);
	hex_line("mrenclave:", b->enclavehash, sizeof(b->enclavehash));
	sgx_sigstruct_mrsigner(s, mrsigner);
	hex_line("mrsigner:", mrsigner, sizeof(mrsigner));
	printf("%-15s 0x%04" PRIx16 " (%" PRIu16 ")\n", "isvprodid:",
	       b->isvprodid, b->isvprodid);
	printf("%-15s 0x%04" PRIx16 " (%" PRIu16 ")\n", "isvsvn:",
	       b->isvsvn, b->isvsvn);
	hex_line("isvfamilyid:", b->isvfamilyid, sizeof(b->isvfamilyid));
	hex_line("isvextprodid:", b->isvextprodid, sizeof(b->isvextprodid));
}

/* "ok", or the SGX error EINIT would return. */
static bool print_check(const char *what, int rc)
{
	if (rc == 0)
		printf("%-15s ok\n", what);
	else
		printf("%-15s FAILED (%s)\n", what, sgx_error_name(rc));
	return rc == 0;
}

static int dump_main(int argc, char **argv)
{
	struct sgx_sigstruct sig;
	uint8_t *data;
	size_t size;
	bool ok;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2)
			cli_error("unknown option '%s' (try 'sgxemu dump "
				  "--help')", argv[1]);
		else
			cli_error("expected one SIGSTRUCT file (try 'sgxemu "
				  "dump --help')");
		return CLI_EXIT_USAGE;
	}
	if (cli_read_file(argv[1], &data, &size))
		return CLI_EXIT_FAIL;
	if (size != sizeof(sig)) {
		cli_error("%s: %zu bytes; a SIGSTRUCT is %zu", argv[1], size,
			  sizeof(sig));
		free(data);
		return CLI_EXIT_FAIL;
	}
	memcpy(&sig, data, sizeof(sig));
	free(data);

	print_fields(&sig);
	ok = print_check("fields:", sgx_sigstruct_check_fields(&sig));
	/* Evaluate the signature even when a header field is off: both help. */
	ok = print_check("signature:",
			 sgx_sigstruct_verify_signature(&sig, NULL)) && ok;
	fflush(stdout);
	if (!ok) {
		cli_error("%s does not pass EINIT's SIGSTRUCT checks", argv[1]);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

const struct cli_command cmd_dump = {
	.name = "dump",
	.summary = "print a SIGSTRUCT's fields and check its signature",
	.usage = usage,
	.main = dump_main,
};
