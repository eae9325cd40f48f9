/* SPDX-License-Identifier: MIT */
/*
 * sgxemu sign: SIGSTRUCT for a flat enclave image (layout in image.h).
 *
 * With the defaults (no options) the SIGSTRUCT is the one the seed
 * selftest's signing tool writes for the same key and image: DATE 0, VENDOR
 * 0, ATTRIBUTES MODE64BIT with XFRM 3, every mask 0, MISCSELECT 0,
 * ISVPRODID/ISVSVN 0. The tests compare the two byte for byte.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "image.h"
#include "signer.h"

/* ATTRIBUTES.FLAGS bits a signer may ask for; INIT is set by EINIT only. */
#define SIGN_ATTR_ALLOWED \
	(SGX_ATTR_DEBUG | SGX_ATTR_MODE64BIT | SGX_ATTR_PROVISIONKEY | \
	 SGX_ATTR_EINITTOKENKEY | SGX_ATTR_CET | SGX_ATTR_KSS | \
	 SGX_ATTR_AEXNOTIFY)

static const char usage[] =
"usage: sgxemu sign --key KEY.pem --in ENCLAVE.bin --out SIGSTRUCT [options]\n"
"\n"
"Measure a flat enclave image and write its SIGSTRUCT (1808 bytes).\n"
"\n"
"The image is laid out as the Linux SGX selftest loads it: page 0 is the\n"
"TCS, every other page is a regular RWX page, every page is measured in\n"
"full, SSAFRAMESIZE is 1 and the enclave size is the next power of two.\n"
"The key must be an RSA-3072 private key with public exponent 3\n"
"(openssl genrsa -3 -out key.pem 3072).\n"
"\n"
"options:\n"
"  --key FILE        PEM private key (required)\n"
"  --in FILE         enclave image, a non-zero multiple of 4096 bytes (required)\n"
"  --out FILE        where to write the SIGSTRUCT (required)\n"
"  --isvprodid N     ISVPRODID, 0..65535 (default 0)\n"
"  --isvsvn N        ISVSVN, 0..65535 (default 0)\n"
"  --attributes HEX  ATTRIBUTES.FLAGS (default 4 = MODE64BIT)\n"
"  --xfrm HEX        ATTRIBUTES.XFRM; must include x87 and SSE (default 3)\n"
"  --date YYYYMMDD   DATE, stored as BCD (default 0, as the selftest's tool)\n"
"  --debug           set ATTRIBUTES.DEBUG\n"
"  -h, --help        this text\n";

struct sign_opts {
	const char *key, *in, *out;
	uint64_t isvprodid, isvsvn, attributes, xfrm;
	uint32_t date;
	bool debug;
};

/* YYYYMMDD -> 0xYYYYMMDD (BCD), as SIGSTRUCT.DATE stores it. */
static bool parse_date(const char *s, uint32_t *out)
{
	unsigned month, day;

	if (strlen(s) != 8 || strspn(s, "0123456789") != 8)
		return false;
	month = (s[4] - '0') * 10 + (s[5] - '0');
	day = (s[6] - '0') * 10 + (s[7] - '0');
	if (month < 1 || month > 12 || day < 1 || day > 31)
		return false;
	*out = (uint32_t)strtoul(s, NULL, 16);
	return true;
}

static int bad_value(const char *opt, const char *val, const char *want)
{
	cli_error("bad value '%s' for %s: expected %s", val, opt, want);
	return CLI_EXIT_USAGE;
}

enum { OPT_KEY = 256, OPT_IN, OPT_OUT, OPT_PRODID, OPT_SVN, OPT_ATTR,
       OPT_XFRM, OPT_DATE, OPT_DEBUG };

static const struct option long_opts[] = {
	{ "key",	required_argument, NULL, OPT_KEY },
	{ "in",		required_argument, NULL, OPT_IN },
	{ "out",	required_argument, NULL, OPT_OUT },
	{ "isvprodid",	required_argument, NULL, OPT_PRODID },
	{ "isvsvn",	required_argument, NULL, OPT_SVN },
	{ "attributes",	required_argument, NULL, OPT_ATTR },
	{ "xfrm",	required_argument, NULL, OPT_XFRM },
	{ "date",	required_argument, NULL, OPT_DATE },
	{ "debug",	no_argument,	   NULL, OPT_DEBUG },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 when the options are fine, else the exit code. */
static int parse_opts(int argc, char **argv, struct sign_opts *o)
{
	int c;

	o->attributes = SGX_ATTR_MODE64BIT;
	o->xfrm = SGX_XFRM_LEGACY;
	opterr = 0;	/* our own one-line messages instead of getopt's */
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_KEY:	o->key = optarg; break;
		case OPT_IN:	o->in = optarg; break;
		case OPT_OUT:	o->out = optarg; break;
		case OPT_DEBUG:	o->debug = true; break;
		case OPT_PRODID:
			if (!cli_parse_uint(optarg, UINT16_MAX, &o->isvprodid))
				return bad_value("--isvprodid", optarg,
						 "a number 0..65535");
			break;
		case OPT_SVN:
			if (!cli_parse_uint(optarg, UINT16_MAX, &o->isvsvn))
				return bad_value("--isvsvn", optarg,
						 "a number 0..65535");
			break;
		case OPT_ATTR:
			if (!cli_parse_hex(optarg, &o->attributes))
				return bad_value("--attributes", optarg,
						 "a hex number");
			if (o->attributes & ~SIGN_ATTR_ALLOWED)
				return bad_value("--attributes", optarg,
						 "only known attribute bits "
						 "(not INIT, no reserved bits)");
			break;
		case OPT_XFRM:
			if (!cli_parse_hex(optarg, &o->xfrm))
				return bad_value("--xfrm", optarg,
						 "a hex number");
			if ((o->xfrm & SGX_XFRM_LEGACY) != SGX_XFRM_LEGACY)
				return bad_value("--xfrm", optarg,
						 "x87 and SSE set (bits 0 and 1)");
			break;
		case OPT_DATE:
			if (!parse_date(optarg, &o->date))
				return bad_value("--date", optarg,
						 "a date YYYYMMDD");
			break;
		case 'h':
			fputs(usage, stdout);
			return CLI_EXIT_OK;
		case ':':
			cli_error("option %s needs a value", argv[optind - 1]);
			return CLI_EXIT_USAGE;
		default:
			cli_error("unknown option '%s' (try 'sgxemu sign --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!o->key || !o->in || !o->out) {
		cli_error("--key, --in and --out are required "
			  "(try 'sgxemu sign --help')");
		return CLI_EXIT_USAGE;
	}
	return -1;
}

static void fill_sigstruct(struct sgx_sigstruct *sig,
			   const struct sign_opts *o,
			   const uint8_t mrenclave[SGX_HASH_SIZE])
{
	static const uint8_t header[16] = SGX_SIGSTRUCT_HEADER;
	static const uint8_t header2[16] = SGX_SIGSTRUCT_HEADER2;

	memset(sig, 0, sizeof(*sig));
	memcpy(sig->header.header, header, sizeof(header));
	memcpy(sig->header.header2, header2, sizeof(header2));
	sig->header.date = o->date;
	sig->body.attributes.flags = o->attributes |
				     (o->debug ? SGX_ATTR_DEBUG : 0);
	sig->body.attributes.xfrm = o->xfrm;
	memcpy(sig->body.enclavehash, mrenclave, SGX_HASH_SIZE);
	sig->body.isvprodid = (uint16_t)o->isvprodid;
	sig->body.isvsvn = (uint16_t)o->isvsvn;
}

static int sign_main(int argc, char **argv)
{
	struct sign_opts o = { 0 };
	struct sgx_sigstruct sig;
	uint8_t mrenclave[SGX_HASH_SIZE];
	uint8_t *image = NULL;
	EVP_PKEY *key = NULL;
	size_t size;
	char err[256];
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret >= 0)
		return ret;

	ret = CLI_EXIT_FAIL;
	/* The key first: a wrong key is the likelier mistake, and cheap. */
	key = signer_load_key(o.key);
	if (!key)
		goto out;
	if (cli_read_file(o.in, &image, &size))
		goto out;
	if (image_measure_flat(image, size, mrenclave, err, sizeof(err))) {
		cli_error("%s: %s", o.in, err);
		goto out;
	}
	fill_sigstruct(&sig, &o, mrenclave);
	if (signer_sign(key, &sig))
		goto out;
	if (cli_write_file(o.out, &sig, sizeof(sig)))
		goto out;
	ret = CLI_EXIT_OK;
out:
	free(image);
	EVP_PKEY_free(key);
	return ret;
}

const struct cli_command cmd_sign = {
	.name = "sign",
	.summary = "sign a flat enclave image: write its SIGSTRUCT",
	.usage = usage,
	.main = sign_main,
};
