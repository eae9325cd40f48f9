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
extern const struct cli_command cmd_gdb;
extern const struct cli_command cmd_aesmd;
extern const struct cli_command cmd_pccs;
extern const struct cli_command cmd_pki;
extern const struct cli_command cmd_platform;

/*
 * What `sgxemu run` and `sgxemu gdb` share (run.c). run_options() reads
 * run's options from argv[*idx] on, setting the environment variables
 * they stand for; @extra, if given, sees each option first and returns
 * RUN_OPT_NOT_MINE, RUN_OPT_TAKEN (it moved *i past its arguments) or an
 * exit status. Returns -1 with *idx at PROG, or an exit status.
 */
#define RUN_OPT_NOT_MINE	(-1)
#define RUN_OPT_TAKEN		(-2)
typedef int (*run_extra_fn)(int argc, char **argv, int *i, void *ctx);
int run_options(int argc, char **argv, int *idx, const char **lib,
		run_extra_fn extra, void *ctx);
/* SGXEMU_AEX_TICK, set by --aex-tick (@from_option) or inherited, is a
 * time the engine takes; false after a message naming where it came from. */
bool run_tick_ok(bool from_option);
/* The shim's absolute path into @shim (PATH_MAX): --lib's, or found as
 * run_find_file() finds it. -1, or an exit status after a message. */
int run_shim_path(const char *lib, char *shim);
int run_find_file(const char *name, const char *installed, char *out);
/* execvp(argv[0], argv); on failure a message (with @hint when the
 * program is missing) and the shell's exit status, 127 or 126. */
int run_exec(char **argv, const char *hint);
/* "SHIM[:$LD_PRELOAD]", malloc'd, or NULL after a message. */
char *run_preload_value(const char *shim);

#endif /* SGXEMU_TOOLS_COMMANDS_H */
