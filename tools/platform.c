/* SPDX-License-Identifier: MIT */
/*
 * sgxemu platform: events an SGX machine lives through that hardware gives
 * no way to ask for (issue 44): a microcode update raising the security
 * version that ENCLS[EUPDATESVN] takes (platform_svn.c), and a power
 * transition that loses every enclave of a process (platform_power.c).
 * This file only dispatches to them.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "platform.h"

static const char usage[] =
"usage: sgxemu platform update-svn [OPTIONS]\n"
"       sgxemu platform power-cycle PID\n"
"\n"
"  update-svn   raise the platform's pending security version (a microcode\n"
"               update); the next open of an enclave device with no enclave\n"
"               on the platform takes it (ENCLS[EUPDATESVN])\n"
"  power-cycle  lose every enclave of process PID, as a suspend to S3 does\n"
"               on hardware\n";

static const struct {
	const char *name;
	int (*main)(int argc, char **argv);
} subcommands[] = {
	{ "update-svn", platform_update_svn_main },
	{ "power-cycle", platform_power_cycle_main },
};

static int platform_main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].main(argc - 1, argv + 1);
	cli_error("unknown subcommand '%s' (update-svn, power-cycle)", argv[1]);
	return CLI_EXIT_USAGE;
}

const struct cli_command cmd_platform = {
	.name = "platform",
	.summary = "platform events on request: microcode update, power loss",
	.usage = usage,
	.main = platform_main,
};
