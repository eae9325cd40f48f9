/* SPDX-License-Identifier: MIT */
/* The subcommands of `sgxemu platform` (platform.c); argv[0] is the
 * subcommand's name, the return value an exit status (cli.h). */
#ifndef SGXEMU_TOOLS_PLATFORM_H
#define SGXEMU_TOOLS_PLATFORM_H

int platform_update_svn_main(int argc, char **argv);
int platform_power_cycle_main(int argc, char **argv);

#endif /* SGXEMU_TOOLS_PLATFORM_H */
