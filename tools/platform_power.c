/* SPDX-License-Identifier: MIT */
/* sgxemu platform power-cycle: being written (issue 44). */
#include "cli.h"
#include "platform.h"

int platform_power_cycle_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("platform power-cycle: not in this build yet");
	return CLI_EXIT_FAIL;
}
