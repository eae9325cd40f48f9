/* SPDX-License-Identifier: MIT */
/*
 * sgxemu measure: MRENCLAVE of a flat image or of a .sgxs stream. The two
 * are told apart by the stream's leading "ECREATE\0" record: a flat image
 * starts with its TCS, whose first 8 bytes (STATE) are zero.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "image.h"

static const char usage[] =
"usage: sgxemu measure FILE\n"
"\n"
"Print the MRENCLAVE (hex) that EINIT would compute for FILE, which is\n"
"either a .sgxs measurement stream (it starts with an ECREATE record;\n"
"UNMEASRD records are skipped) or a flat image laid out as for\n"
"`sgxemu sign` (page 0 TCS, the rest RWX, all pages measured).\n";

static int measure_main(int argc, char **argv)
{
	uint8_t mrenclave[SGX_HASH_SIZE];
	uint8_t *data;
	size_t size;
	char err[256];
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		if (argc == 2)
			cli_error("unknown option '%s' (try 'sgxemu measure "
				  "--help')", argv[1]);
		else
			cli_error("expected one FILE (try 'sgxemu measure "
				  "--help')");
		return CLI_EXIT_USAGE;
	}
	if (cli_read_file(argv[1], &data, &size))
		return CLI_EXIT_FAIL;
	if (image_is_sgxs(data, size))
		rc = image_measure_sgxs(data, size, mrenclave, err, sizeof(err));
	else
		rc = image_measure_flat(data, size, mrenclave, err, sizeof(err));
	free(data);
	if (rc) {
		cli_error("%s: %s", argv[1], err);
		return CLI_EXIT_FAIL;
	}
	cli_print_hex(stdout, mrenclave, sizeof(mrenclave));
	putchar('\n');
	return CLI_EXIT_OK;
}

const struct cli_command cmd_measure = {
	.name = "measure",
	.summary = "print the MRENCLAVE of a flat image or a .sgxs stream",
	.usage = usage,
	.main = measure_main,
};
