/* SPDX-License-Identifier: MIT */
/*
 * A program for Gramine under sgxemu (tests/integration/test_gramine.sh):
 * started with an environment of its own and the host's environment passed
 * in, it prints what a program started by the user sees of the variables
 * sgxemu could have added, and whether HOME is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv, char **envp)
{
	int ld = 0;

	(void)argc;
	(void)argv;
	for (char **e = envp; *e; e++)
		ld += !strncmp(*e, "LD_PRELOAD=", 11) || !strncmp(*e, "LD_AUDIT=", 9);
	printf("env: sgxemu variables %d, HOME %s, MARK %s\n", ld,
	       getenv("HOME") ? "set" : "unset",
	       getenv("MARK") ? getenv("MARK") : "unset");
	return 0;
}
