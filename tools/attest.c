/* SPDX-License-Identifier: MIT */
/*
 * sgxemu quote verify / sgxemu attest: the verifier and the platform's
 * attestation services on the command line (src/attest, the public API in
 * include/sgxemu/attest.h). Nothing here chains to Intel's root.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>

#include "attest/aesm.h"
#include "attest/attest.h"
#include "cli.h"
#include "commands.h"
#include "sgxemu/attest.h"

static const char quote_usage[] =
"usage: sgxemu quote verify QUOTE [--collateral DIR] [--root PEM] [--json]\n"
"                               [--require-production]\n"
"\n"
"Verify a DCAP ECDSA quote (version 3) as Intel's QVL does, check by check:\n"
"the PCK certificate chain to the trusted root and both CRLs, the TCB info\n"
"and QE identity under the TCB signing chain, the PCK signature over the QE\n"
"report, the attestation key's binding, the quote signature, the TCB level.\n"
"Prints the enclave's identity and the TCB status; exit status 0 only when\n"
"the quote is accepted (TCB UpToDate), 1 naming the failing check.\n"
"\n"
"  --collateral DIR  TCB info, QE identity, CRLs as `sgxemu attest collateral`\n"
"                    writes them (default: made now from this installation)\n"
"  --root PEM        the trusted root CA (default: this installation's)\n"
"  --json            one JSON object on stdout instead of text\n"
"  --require-production  refuse quotes of DEBUG enclaves\n";

static const char attest_usage[] =
"usage: sgxemu attest collateral --out DIR [--tcb-out-of-date] [--revoke-pck]\n"
"                                [--qe-out-of-date] [--tcb-recovery]\n"
"       sgxemu attest quote REPORT --out QUOTE\n"
"       sgxemu attest info\n"
"\n"
"The platform's attestation services (the QE3 and PCE roles of Intel's DCAP\n"
"stack, in software). The certificate hierarchy is this installation's own,\n"
"created on first use next to the platform secrets: NOTHING CHAINS TO\n"
"INTEL'S ROOT.\n"
"\n"
"  collateral  write tcbInfo.json, qeIdentity.json, tcbSignChain.pem,\n"
"              pckSignChain.pem, trustedRootCaCert.pem, rootCaCrl.der and\n"
"              intermediateCaCrl.der (QVL's file names) into DIR;\n"
"              --tcb-out-of-date lists a newer TCB level, --revoke-pck\n"
"              revokes this platform's PCK certificate, --qe-out-of-date\n"
"              asks for a newer QE, --tcb-recovery makes the TCB level\n"
"              before the platform's last microcode update (`sgxemu\n"
"              platform update-svn`) OutOfDate\n"
"  quote       quote a 432-byte REPORT targeted at the QE (see info)\n"
"  info        the QE's and PCE's identities, the QE's TARGETINFO, the\n"
"              PCK certificate and where the hierarchy lives\n";

static void json_hex(FILE *f, const char *key, const uint8_t *p, size_t n)
{
	fprintf(f, "\"%s\":\"", key);
	cli_print_hex(f, p, n);
	fputs("\",", f);
}

static void print_json(const struct sgxemu_verify_result *r)
{
	const struct sgx_report_body *b = &r->report;

	printf("{\"accepted\":%s,\"status\":%d,\"status_name\":\"%s\","
	       "\"check\":\"%s\",", r->status ? "false" : "true", r->status,
	       r->status_name, r->check);
	/* The reason is our own text: no quotes or backslashes in it. */
	printf("\"reason\":\"%s\",", r->why);
	if (r->have_report) {
		json_hex(stdout, "mrenclave", b->mrenclave, 32);
		json_hex(stdout, "mrsigner", b->mrsigner, 32);
		printf("\"isvprodid\":%u,\"isvsvn\":%u,\"attributes\":{\"flags\":"
		       "\"%#llx\",\"xfrm\":\"%#llx\"},\"debug\":%s,", b->isvprodid,
		       b->isvsvn, (unsigned long long)b->attributes.flags,
		       (unsigned long long)b->attributes.xfrm,
		       b->attributes.flags & SGX_ATTR_DEBUG ? "true" : "false");
		json_hex(stdout, "report_data", b->report_data, 64);
		printf("\"qe_svn\":%u,\"pce_svn\":%u,", r->qe_svn, r->pce_svn);
	}
	printf("\"tcb_status\":\"%s\",\"qe_tcb_status\":\"%s\"}\n",
	       r->tcb_status, r->qe_tcb_status);
}

static void print_text(const struct sgxemu_verify_result *r, size_t len)
{
	const struct sgx_report_body *b = &r->report;

	if (r->have_report) {
		printf("quote:       %zu bytes, version 3, QE SVN %u, PCE SVN %u\n",
		       len, r->qe_svn, r->pce_svn);
		printf("MRENCLAVE:   ");
		cli_print_hex(stdout, b->mrenclave, 32);
		printf("\nMRSIGNER:    ");
		cli_print_hex(stdout, b->mrsigner, 32);
		printf("\nISVPRODID:   %u\nISVSVN:      %u\n", b->isvprodid, b->isvsvn);
		printf("ATTRIBUTES:  flags %#llx xfrm %#llx%s\n",
		       (unsigned long long)b->attributes.flags,
		       (unsigned long long)b->attributes.xfrm,
		       b->attributes.flags & SGX_ATTR_DEBUG ? " (DEBUG)" : "");
		printf("REPORTDATA:  ");
		cli_print_hex(stdout, b->report_data, 64);
		printf("\n");
	}
	if (r->tcb_status[0])
		printf("TCB status:  %s (QE: %s)\n", r->tcb_status,
		       r->qe_tcb_status[0] ? r->qe_tcb_status : "-");
	if (!r->status)
		printf("result:      accepted (%s)\n", r->status_name);
	else
		printf("result:      refused by check '%s': %s (%s, %d)\n", r->check,
		       r->why, r->status_name, r->status);
}

static int verify_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "collateral", required_argument, NULL, 'c' },
		{ "root", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "require-production", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct sgxemu_verify_opts vo = { 0 };
	struct sgxemu_verify_result res;
	struct sgxemu_collateral col;
	const char *dir = NULL, *root_path = NULL;
	uint8_t *quote = NULL, *root = NULL;
	size_t len, rlen;
	bool json = false, have_col = false;
	char why[512];
	int c, st;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': dir = optarg; break;
		case 'r': root_path = optarg; break;
		case 'j': json = true; break;
		case 'p': vo.require_production = true; break;
		default:
			cli_error("unknown option '%s' (try 'sgxemu quote --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		cli_error("give one QUOTE file (try 'sgxemu quote --help')");
		return CLI_EXIT_USAGE;
	}
	if (cli_read_file(argv[optind], &quote, &len))
		return CLI_EXIT_FAIL;
	if (root_path && cli_read_file(root_path, &root, &rlen)) {
		free(quote);
		return CLI_EXIT_FAIL;
	}
	if (dir) {
		if (sgxemu_collateral_read(dir, &col, why, sizeof(why))) {
			cli_error("%s", why);
			free(quote);
			free(root);
			return CLI_EXIT_FAIL;
		}
		have_col = true;
		vo.collateral = &col;
	}
	vo.trusted_root_pem = (const char *)root;
	st = sgxemu_quote_verify(quote, len, &vo, &res);
	if (json)
		print_json(&res);
	else
		print_text(&res, len);
	if (st && !json)
		cli_error("refused: %s: %s (%s)", res.check, res.why, res.status_name);
	if (have_col)
		sgxemu_collateral_free(&col);
	free(quote);
	free(root);
	return st ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static int quote_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "verify")) {
		cli_error("unknown subcommand (try 'sgxemu quote --help')");
		return CLI_EXIT_USAGE;
	}
	return verify_main(argc - 1, argv + 1);
}

static int collateral_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "tcb-out-of-date", no_argument, NULL, 't' },
		{ "revoke-pck", no_argument, NULL, 'r' },
		{ "qe-out-of-date", no_argument, NULL, 'q' },
		{ "tcb-recovery", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct sgxemu_collateral_opts co = { 0 };
	struct sgxemu_collateral col;
	const char *out = NULL;
	char why[512];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': co.tcb_out_of_date = true; break;
		case 'r': co.pck_revoked = true; break;
		case 'q': co.qe_out_of_date = true; break;
		case 'R': co.tcb_recovery = true; break;
		default:
			cli_error("unknown option '%s' (try 'sgxemu attest --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (!out || optind != argc) {
		cli_error("collateral needs --out DIR and nothing else");
		return CLI_EXIT_USAGE;
	}
	if (sgxemu_collateral_make(&co, &col, why, sizeof(why)) ||
	    sgxemu_collateral_write(&col, out, why, sizeof(why))) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	sgxemu_collateral_free(&col);
	return CLI_EXIT_OK;
}

static int quote_report_main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL;
	uint8_t *report, *quote;
	size_t len, qlen;
	char why[512];
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			cli_error("usage: sgxemu attest quote REPORT --out QUOTE");
			return CLI_EXIT_USAGE;
		}
	}
	if (!in || !out) {
		cli_error("usage: sgxemu attest quote REPORT --out QUOTE");
		return CLI_EXIT_USAGE;
	}
	if (cli_read_file(in, &report, &len))
		return CLI_EXIT_FAIL;
	if (len != sizeof(struct sgx_report)) {
		cli_error("%s: %zu bytes; a REPORT is 432", in, len);
		free(report);
		return CLI_EXIT_FAIL;
	}
	ret = sgxemu_quote_generate((const struct sgx_report *)report, &quote,
				    &qlen, why, sizeof(why));
	free(report);
	if (ret) {
		cli_error("%s (AESM error %d)", why, ret);
		return CLI_EXIT_FAIL;
	}
	ret = cli_write_file(out, quote, qlen);
	free(quote);
	return ret ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static void print_identity(const char *what, const struct sgx_key_identity *id)
{
	printf("%s MRENCLAVE: ", what);
	cli_print_hex(stdout, id->mrenclave, 32);
	printf("\n%s MRSIGNER:  ", what);
	cli_print_hex(stdout, id->mrsigner, 32);
	printf("\n%s ISVPRODID %u, ISVSVN %u, ATTRIBUTES flags %#llx xfrm %#llx\n",
	       what, id->isvprodid, id->isvsvn,
	       (unsigned long long)id->attributes.flags,
	       (unsigned long long)id->attributes.xfrm);
}

static int info_main(void)
{
	struct sgx_attest *a;
	unsigned char md[32];
	unsigned int mdlen = 0;
	char why[512];

	if (sgx_attest_get(&a, why, sizeof(why))) {
		cli_error("%s", why);
		return CLI_EXIT_FAIL;
	}
	printf("hierarchy:     %s (nothing chains to Intel's root)\n", a->pki.dir);
	X509_digest(a->pki.root, EVP_sha256(), md, &mdlen);
	printf("root CA:       SHA-256 ");
	cli_print_hex(stdout, md, mdlen);
	printf("\n");
	print_identity("QE ", &a->qe);
	print_identity("PCE", &a->pce);
	printf("QE_ID:         ");
	cli_print_hex(stdout, a->qe_id, 16);
	printf("\nattestation key: ");
	cli_print_hex(stdout, a->att_pub, 64);
	printf("\nPCK TCB:       CPUSVN ");
	cli_print_hex(stdout, a->pck_ext.cpusvn, 16);
	printf(", PCESVN %u, FMSPC ", a->pck_ext.pcesvn);
	cli_print_hex(stdout, a->pck_ext.fmspc, 6);
	printf(", PCE-ID ");
	cli_print_hex(stdout, a->pck_ext.pceid, 2);
	printf("\nquote size:    %zu bytes\n", sgx_attest_quote_size(a));
	return CLI_EXIT_OK;
}

static int attest_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "collateral"))
		return collateral_main(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "quote"))
		return quote_report_main(argc - 1, argv + 1);
	if (argc == 2 && !strcmp(argv[1], "info"))
		return info_main();
	cli_error("unknown subcommand (try 'sgxemu attest --help')");
	return CLI_EXIT_USAGE;
}

const struct cli_command cmd_quote = {
	.name = "quote",
	.summary = "verify a DCAP quote (sgxemu's own root, never Intel's)",
	.usage = quote_usage,
	.main = quote_main,
};

const struct cli_command cmd_attest = {
	.name = "attest",
	.summary = "attestation services: collateral, quoting, identities",
	.usage = attest_usage,
	.main = attest_main,
};

static const char aesmd_usage[] =
"usage: sgxemu aesmd [--socket PATH]\n"
"\n"
"Serve the AESM socket protocol for programs that run outside `sgxemu run`\n"
"(under it, the shim answers " AESM_SOCKET_PATH " itself):\n"
"the ECDSA attestation key id, InitQuoteEx, GetQuoteSizeEx, GetQuoteEx,\n"
"SelectAttKeyID; EPID requests get error 30 (SERVICE_UNAVAILABLE), as on\n"
"a DCAP-only platform. Quotes are this platform's (the secrets file), under\n"
"this installation's root: nothing chains to Intel's root.\n"
"\n"
"  --socket PATH  where to listen (default " AESM_SOCKET_PATH ";\n"
"                 its directory is created when missing)\n";

static int aesmd_main(int argc, char **argv)
{
	const char *path = AESM_SOCKET_PATH;
	char why[512], dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--socket") && i + 1 < argc) {
			path = argv[++i];
		} else {
			cli_error("unknown argument '%s' (try 'sgxemu aesmd --help')",
				  argv[i]);
			return CLI_EXIT_USAGE;
		}
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			cli_error("cannot create %s: %s", dir, strerror(errno));
			return CLI_EXIT_FAIL;
		}
	}
	sgxemu_aesm_serve(path, why, sizeof(why));
	cli_error("%s", why);
	return CLI_EXIT_FAIL;
}

const struct cli_command cmd_aesmd = {
	.name = "aesmd",
	.summary = "serve the AESM socket (quotes) outside `sgxemu run`",
	.usage = aesmd_usage,
	.main = aesmd_main,
};
