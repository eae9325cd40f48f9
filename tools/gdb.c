/* SPDX-License-Identifier: MIT */
/*
 * `sgxemu gdb [OPTIONS] PROG [ARGS...]`: gdb on an SGX program as `sgxemu
 * run` would run it.
 *
 * Three pieces make the debugger behave as on an SGX machine:
 *  - sgxemu.gdb (written by the build, docs/guide.md "Debugging"): the
 *    signals the engine takes for ENCLU, rewritten CPUID, paging and raw
 *    system calls pass to the program without stopping gdb; a signal the
 *    program itself gets stops it at sgxemu_debug_signal;
 *  - the shim goes to the program only: gdb's `exec-wrapper` (env
 *    LD_PRELOAD=...) sets it for PROG, not for gdb or its shell;
 *  - libsgxemu_ptrace.so is preloaded into gdb: its ptrace PEEK/POKE and
 *    /proc/PID/mem accesses to enclave memory go through the kernel's
 *    access-hook rules (src/dbg/ptrace.c), so breakpoints can be written
 *    into DEBUG enclaves' code and non-DEBUG enclaves stay unreadable.
 *
 * gdb's own options -ex CMD, -x FILE, -batch, -q and -nx are passed on in
 * order, after sgxemu.gdb; SGXEMU_GDB (or --gdb) names another debugger,
 * such as the SDK's sgx-gdb.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"

static const char usage[] =
	"usage: sgxemu gdb [OPTIONS] PROG [ARGS...]\n"
	"\n"
	"Start gdb on PROG as `sgxemu run` would run it: the emulator's own\n"
	"signals never stop the debugger (sgxemu.gdb), and gdb reads and\n"
	"writes DEBUG enclaves' memory as the Linux driver lets a debugger\n"
	"(breakpoints in enclave code; non-DEBUG enclaves are refused).\n"
	"\n"
	"options: those of `sgxemu run` (--epc-size, --guard, --no-sgx2,\n"
	"--vdso-abi, --cpuid, --debug, --policy, --lib), and\n"
	"  -ex CMD, -x FILE  gdb commands, run after sgxemu.gdb, in order\n"
	"  -batch, -q, -nx   passed to gdb\n"
	"  --gdb PATH        the debugger to start (default $SGXEMU_GDB, or gdb)\n"
	"  -h, --help        this text\n";

struct gdb_args {
	const char **argv;	/* gdb's own options, in order */
	int argc;
	const char *gdb;
};

static int gdb_option(int argc, char **argv, int *i, void *ctx)
{
	struct gdb_args *g = ctx;
	const char *a = argv[*i];

	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		fputs(usage, stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(a, "-ex") || !strcmp(a, "-x") || !strcmp(a, "--gdb")) {
		if (*i + 1 >= argc) {
			cli_error("%s needs an argument", a);
			return CLI_EXIT_USAGE;
		}
		if (!strcmp(a, "--gdb")) {
			g->gdb = argv[++*i];
			return RUN_OPT_TAKEN;
		}
		g->argv[g->argc++] = a;
		g->argv[g->argc++] = argv[++*i];
		return RUN_OPT_TAKEN;
	}
	if (!strcmp(a, "-batch") || !strcmp(a, "-q") || !strcmp(a, "-nx")) {
		g->argv[g->argc++] = a;
		return RUN_OPT_TAKEN;
	}
	return RUN_OPT_NOT_MINE;
}

/* Put @lib first in LD_PRELOAD (for gdb itself). */
static int preload_for_gdb(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (asprintf(&v, "%s%s%s", lib, old && *old ? ":" : "",
		     old && *old ? old : "") < 0)
		return -1;
	setenv("LD_PRELOAD", v, 1);
	free(v);
	return 0;
}

static int gdb_main(int argc, char **argv)
{
	char shim[PATH_MAX], script[PATH_MAX], ptr[PATH_MAX];
	struct gdb_args g = { .gdb = getenv("SGXEMU_GDB") };
	const char **nargv;
	const char *lib = NULL;
	char *preload, *wrapper;
	int i = 1, r, n = 0;

	g.argv = calloc((size_t)argc * 2 + 1, sizeof(*g.argv));
	nargv = calloc((size_t)argc * 2 + 16, sizeof(*nargv));
	if (!g.argv || !nargv) {
		cli_error("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (!g.gdb || !*g.gdb)
		g.gdb = "gdb";
	r = run_options(argc, argv, &i, &lib, gdb_option, &g);
	if (r < 0)
		r = run_shim_path(lib, shim);
	if (r >= 0)
		return r;
	if (run_find_file("sgxemu.gdb", "../share/sgxemu/", script)) {
		cli_error("sgxemu.gdb not found next to this sgxemu nor in "
			  "../share/sgxemu/ (build it with make)");
		return CLI_EXIT_FAIL;
	}
	preload = run_preload_value(shim);
	if (!preload)
		return CLI_EXIT_FAIL;
	/* The shell gdb starts the program with sees this line as is: quote
	 * the value for it (a ' in a path cannot be, say so). */
	if (strchr(preload, '\'')) {
		cli_error("cannot pass a preload path containing ' to gdb");
		return CLI_EXIT_FAIL;
	}
	if (asprintf(&wrapper, "set exec-wrapper env 'LD_PRELOAD=%s'",
		     preload) < 0) {
		cli_error("out of memory");
		return CLI_EXIT_FAIL;
	}
	if (!run_find_file("libsgxemu_ptrace.so", "../lib/sgxemu/", ptr)) {
		if (preload_for_gdb(ptr)) {
			cli_error("out of memory");
			return CLI_EXIT_FAIL;
		}
	} else {
		cli_error("warning: libsgxemu_ptrace.so not found: gdb reads "
			  "every enclave and cannot write enclave code pages");
	}
	nargv[n++] = g.gdb;
	nargv[n++] = "-x";
	nargv[n++] = script;
	nargv[n++] = "-iex";
	nargv[n++] = wrapper;
	for (int k = 0; k < g.argc; k++)
		nargv[n++] = g.argv[k];
	nargv[n++] = "--args";
	for (; i < argc; i++)
		nargv[n++] = argv[i];
	nargv[n] = NULL;
	return run_exec((char **)nargv, " (install gdb, or set SGXEMU_GDB)");
}

const struct cli_command cmd_gdb = {
	.name = "gdb",
	.summary = "debug an SGX program on the emulator with gdb",
	.usage = usage,
	.main = gdb_main,
};
