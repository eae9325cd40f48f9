/* SPDX-License-Identifier: MIT */
/* sgxemu platform update-svn: being written (issue 44). */
#include "cli.h"
#include "platform.h"

int platform_update_svn_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("platform update-svn: not in this build yet");
	return CLI_EXIT_FAIL;
}
