/* SPDX-License-Identifier: MIT */
/*
 * sgxemu: the command-line front end. It only dispatches; each subcommand
 * lives in its own file (see commands.h).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* Listed in `sgxemu --help` in this order. */
static const struct cli_command *const commands[] = {
	&cmd_sign,
	&cmd_measure,
	&cmd_dump,
	&cmd_run,
	&cmd_gdb,
	&cmd_info,
	&cmd_audit,
	&cmd_attest,
	&cmd_quote,
	&cmd_aesmd,
	&cmd_pccs,
	&cmd_pki,
	&cmd_platform,
};

#define NR_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

static void print_overview(FILE *f)
{
	fputs("usage: sgxemu COMMAND [ARGS...]\n"
	      "\n"
	      "Intel SGX in software: build, sign, measure and run SGX enclaves\n"
	      "on machines without SGX.\n"
	      "\n"
	      "commands:\n", f);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fputs("\n"
	      "`sgxemu help COMMAND` or `sgxemu COMMAND --help` describes one.\n",
	      f);
}

static int unknown_command(const char *name)
{
	/* One line, so it reads well in a script's log; exit 2 = usage. */
	fprintf(stderr, "sgxemu: unknown command '%s' (try 'sgxemu --help')\n",
		name);
	return CLI_EXIT_USAGE;
}

static int help(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (argc < 2) {
		print_overview(stdout);
		return CLI_EXIT_OK;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	cli_print_usage(cmd, stdout);
	return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;

	if (argc < 2) {
		print_overview(stderr);
		return CLI_EXIT_USAGE;
	}
	if (is_help(argv[1]))
		return help(1, argv);
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);

	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	/*
	 * Only the first argument is checked here: later ones may belong to a
	 * program the command runs (`sgxemu run prog --help`).
	 */
	if (argc > 2 && is_help(argv[2])) {
		cli_print_usage(cmd, stdout);
		return CLI_EXIT_OK;
	}
	cli_set_command(cmd->name);
	return cmd->main(argc - 1, argv + 1);
}
