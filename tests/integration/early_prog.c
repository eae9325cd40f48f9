/* SPDX-License-Identifier: MIT */
/*
 * The program around early_lib.c (tests/integration/test_early.sh): prints
 * what the library's constructor saw, what main() sees, and the
 * environment as the program has it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "early_probe.h"

int main(int argc, char **argv, char **envp)
{
	struct early_result now;
	int n = 0;

	(void)argc;
	(void)argv;
	early_print("ctor", &early_ctor);
	early_probe(&now);
	early_print("main", &now);
	for (char **e = envp; *e; e++)
		n++;
	printf("env: count=%d LD_PRELOAD=%s LD_AUDIT=%s\n", n,
	       getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "(unset)",
	       getenv("LD_AUDIT") ? getenv("LD_AUDIT") : "(unset)");
	return 0;
}
