/* SPDX-License-Identifier: MIT */
/*
 * The subcommands of `sgxemu`. Adding one: define its struct cli_command in
 * its own file, declare it here, and list it in the table in main.c.
 */
#ifndef SGXEMU_TOOLS_COMMANDS_H
#define SGXEMU_TOOLS_COMMANDS_H

#include "cli.h"

extern const struct cli_command cmd_sign;
extern const struct cli_command cmd_measure;
extern const struct cli_command cmd_dump;
extern const struct cli_command cmd_run;
extern const struct cli_command cmd_info;
extern const struct cli_command cmd_audit;
extern const struct cli_command cmd_quote;
extern const struct cli_command cmd_attest;

#endif /* SGXEMU_TOOLS_COMMANDS_H */
