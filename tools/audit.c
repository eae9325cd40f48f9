/* SPDX-License-Identifier: MIT */
/*
 * sgxemu audit: print the security audit log (src/lsm/audit.h for the
 * record format), optionally only denials or one operation.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "lsm/policy.h"

static const char usage[] =
"usage: sgxemu audit [--log FILE] [--denied] [--op OP]\n"
"\n"
"Print the audit records the security hooks wrote (one per line,\n"
"key=value). The log is FILE, else $SGXEMU_AUDIT_LOG, else\n"
"$XDG_STATE_HOME/sgxemu/audit.log, else ~/.local/state/sgxemu/audit.log.\n"
"\n"
"  --denied   only records with result=denied\n"
"  --op OP    only records of operation OP (page_add, init, mmap,\n"
"             mprotect, provision_open, ...)\n";

static bool wanted(const char *line, bool denied_only, const char *op)
{
	char key[80];

	if (denied_only && !strstr(line, " result=denied"))
		return false;
	if (op) {
		snprintf(key, sizeof(key), " op=%s ", op);
		if (!strstr(line, key))
			return false;
	}
	return true;
}

static int audit_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log", required_argument, NULL, 'l' },
		{ "denied", no_argument, NULL, 'd' },
		{ "op", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *log = NULL, *op = NULL;
	bool denied_only = false;
	char path[256], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int c;

	optind = 1;
	opterr = 0;		/* one line of ours, not getopt's */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			log = optarg;
			break;
		case 'd':
			denied_only = true;
			break;
		case 'o':
			op = optarg;
			break;
		default:
			cli_error("unknown option '%s' (try 'sgxemu audit --help')",
				  argv[optind - 1]);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		cli_error("unexpected argument '%s'", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (!log) {
		if (lsm_audit_default_path(path, sizeof(path))) {
			cli_error("no audit log: set HOME or SGXEMU_AUDIT_LOG, or use --log");
			return CLI_EXIT_FAIL;
		}
		log = path;
	}
	f = fopen(log, "r");
	if (!f && errno == ENOENT) {
		fprintf(stderr, "sgxemu audit: no records yet (%s does not exist)\n", log);
		return CLI_EXIT_OK;
	}
	if (!f) {
		cli_error("%s: %s", log, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	while (getline(&line, &cap, f) > 0)
		if (wanted(line, denied_only, op))
			fputs(line, stdout);
	free(line);
	fclose(f);
	return CLI_EXIT_OK;
}

const struct cli_command cmd_audit = {
	.name = "audit",
	.summary = "print the security audit log",
	.usage = usage,
	.main = audit_main,
};
