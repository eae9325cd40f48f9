/* SPDX-License-Identifier: MIT */
/*
 * `sgxemu run [OPTIONS] PROG [ARGS...]`: run an unmodified SGX program with
 * libsgxemu.so preloaded, so that its /dev/sgx* files, ioctls, enclave
 * mappings and vDSO entry are served by the emulator.
 *
 * The shim is looked for next to this binary (the build tree:
 * build/sgxemu and build/libsgxemu.so) and then in PREFIX/lib/sgxemu
 * relative to it (an installed bin/sgxemu finds ../lib/sgxemu/), and the
 * audit module libsgxemu-audit.so beside it (LD_AUDIT), which starts the
 * shim before any constructor. The program does not see either variable
 * (src/shim/exec.c). Options become environment variables, so they also
 * reach the program's children.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "lsm/policy.h"
#include "cli.h"
#include "commands.h"

static const char usage[] =
	"usage: sgxemu run [OPTIONS] PROG [ARGS...]\n"
	"\n"
	"Run PROG with the SGX emulator preloaded: /dev/sgx_enclave and\n"
	"/dev/sgx_provision (mainline API), /dev/sgx/enclave and\n"
	"/dev/sgx/provision (seed v22 API) open, their ioctls and mappings\n"
	"behave as the Linux driver's, and the vDSO exports\n"
	"__vdso_sgx_enter_enclave. Exit status: PROG's.\n"
	"\n"
	"options:\n"
	"  --epc-size SIZE   EPC size in bytes (suffix K, M or G; default 1G)\n"
	"  --guard           guard mode: ELRANGE inaccessible to host code while\n"
	"                    no thread is in the enclave\n"
	"  --no-sgx2         enumerate an SGX1-only processor\n"
	"  --no-aexnotify    a processor without AEX-Notify (no AEXNOTIFY\n"
	"                    attribute, no EDECCSSA)\n"
	"  --no-eupdatesvn   a processor without ENCLS[EUPDATESVN]: CPUSVN\n"
	"                    stays until the process ends (sgxemu platform)\n"
	"  --aex-tick TIME   a timer interrupt (an AEX) every TIME of each\n"
	"                    thread's CPU time in enclave mode (default 4ms, a\n"
	"                    kernel with HZ=250; units ns, us, ms, s); 0: none\n"
	"  --vdso-abi ABI    force the vDSO entry's ABI: mainline or seed\n"
	"                    (default: decided at each call)\n"
	"  --cpuid MODE      host CPUID as an SGX part: auto (default: fault where\n"
	"                    the CPU has CPUID faulting, else rewrite), fault,\n"
	"                    rewrite (CPUID instructions rewritten to trap) or off\n"
	"  --coverage DIR    write the .gcda files of DEBUG enclaves built with\n"
	"                    gcc --coverage -fprofile-info-section under DIR\n"
	"                    (as GCOV_PREFIX; GCOV_PREFIX_STRIP honoured) when\n"
	"                    each is released or PROG exits\n"
	"  --debug           print the reason of every refusal on stderr\n"
	"  --policy FILE     security policy (docs/policy.md); checked before\n"
	"                    PROG starts\n"
	"  --lib PATH        use this libsgxemu.so\n"
	"  -h, --help        this text\n";

/* The directory of the running binary, with a trailing '/'. */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	slash[1] = 0;
	return 0;
}

/*
 * @name next to this binary (the build tree) or in @installed relative to
 * it (an installed bin/sgxemu finds ../lib/sgxemu/ and ../share/sgxemu/),
 * as an absolute path in @out (PATH_MAX bytes). 0, or -1 if neither.
 */
int run_find_file(const char *name, const char *installed, char *out)
{
	char dir[PATH_MAX];

	if (self_dir(dir, sizeof(dir)))
		return -1;
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX * 3];

		snprintf(path, sizeof(path), "%s%s%s", dir,
			 i ? installed : "", name);
		if (!access(path, R_OK) && realpath(path, out))
			return 0;
	}
	return -1;
}

/* SIZE: digits with an optional K/M/G suffix (binary units). */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	if (*end) {
		switch (*end) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return false;
		}
		if (end[1] && strcmp(end + 1, "iB") && strcmp(end + 1, "B"))
			return false;
	}
	if (v > UINT64_MAX / mul)
		return false;
	*out = v * mul;
	return *out && !(*out & 4095);
}

/* PROG as execvp() will find it (PATH search for a bare name). */
static bool resolve_prog(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/')) {
		snprintf(out, len, "%s", prog);
		return true;
	}
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		snprintf(out, len, "%.*s/%s", (int)n, n ? path : ".", prog);
		if (!access(out, X_OK))
			return true;
		path = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * A statically linked program has no dynamic loader, so LD_PRELOAD does
 * nothing for it: say so rather than let it fail to find /dev/sgx_enclave
 * without a clue. (Scripts and dynamic programs pass silently.)
 */
static void warn_if_static(const char *prog)
{
	char path[PATH_MAX];
	Elf64_Ehdr eh;
	bool interp = false;
	int fd;

	if (!resolve_prog(prog, path, sizeof(path)))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 256) {
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph),
				  (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP)
				interp = true;
		}
		if (!interp)
			cli_error("warning: %s is statically linked: the emulator "
				  "cannot be preloaded into it, it will see no SGX", path);
	}
	close(fd);
}

bool run_tick_ok(bool from_option)
{
	const char *v = getenv("SGXEMU_AEX_TICK");
	uint64_t ns;

	if (!v || (!*v && !from_option) || !sgxemu__parse_tick(v, &ns))
		return true;
	if (from_option)
		cli_error("--aex-tick '%s' is not a tick: a time "
			  "from 100us to 60s (e.g. 4ms, 250us) or 0 for none", v);
	else
		cli_error("SGXEMU_AEX_TICK='%s' is not a tick: a time "
			  "from 100us to 60s (e.g. 4ms, 250us) or 0 for none", v);
	return false;
}

int run_options(int argc, char **argv, int *idx, const char **lib,
		run_extra_fn extra, void *ctx)
{
	bool tick_opt = false;
	int i;

	for (i = *idx; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-')
			break;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (extra) {
			int r = extra(argc, argv, &i, ctx);

			if (r == RUN_OPT_TAKEN)
				continue;
			if (r >= 0)
				return r;
		}
		if (!strcmp(a, "--guard")) {
			setenv("SGXEMU_GUARD", "1", 1);
		} else if (!strcmp(a, "--no-sgx2")) {
			setenv("SGXEMU_SGX2", "0", 1);
		} else if (!strcmp(a, "--no-aexnotify")) {
			setenv("SGXEMU_AEXNOTIFY", "0", 1);
		} else if (!strcmp(a, "--no-eupdatesvn")) {
			setenv("SGXEMU_EUPDATESVN", "0", 1);
		} else if (!strcmp(a, "--aex-tick")) {
			if (i + 1 >= argc) {
				cli_error("--aex-tick needs a time (e.g. 4ms)");
				return CLI_EXIT_USAGE;
			}
			setenv("SGXEMU_AEX_TICK", argv[++i], 1);
			tick_opt = true;
		} else if (!strcmp(a, "--coverage") || !strncmp(a, "--coverage=", 11)) {
			const char *v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
			char abs[PATH_MAX];

			if (!v || !*v) {
				cli_error("--coverage needs a directory");
				return CLI_EXIT_USAGE;
			}
			/* Absolute: PROG may change its directory. */
			if (v[0] != '/' && getcwd(abs, sizeof(abs)) &&
			    strlen(abs) + strlen(v) + 2 < sizeof(abs)) {
				strcat(abs, "/");
				strcat(abs, v);
				v = abs;
			}
			setenv("SGXEMU_COVERAGE", v, 1);
		} else if (!strcmp(a, "--debug")) {
			setenv("SGXEMU_DEBUG", "1", 1);
		} else if (!strcmp(a, "--epc-size") || !strncmp(a, "--epc-size=", 11)) {
			const char *v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
			uint64_t size;

			if (!v || !parse_size(v, &size)) {
				cli_error("--epc-size needs a size in bytes, a multiple "
					  "of 4096 (suffix K, M or G), not '%s'",
					  v ? v : "");
				return CLI_EXIT_USAGE;
			}
			{
				/* In bytes: the engine need not know every
				 * suffix spelling accepted here. */
				char bytes[32];

				snprintf(bytes, sizeof(bytes), "%llu",
					 (unsigned long long)size);
				setenv("SGXEMU_EPC_SIZE", bytes, 1);
			}
		} else if (!strcmp(a, "--cpuid") || !strncmp(a, "--cpuid=", 8)) {
			const char *v = a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || (strcmp(v, "auto") && strcmp(v, "fault") &&
				   strcmp(v, "rewrite") && strcmp(v, "off"))) {
				cli_error("--cpuid is 'auto', 'fault', 'rewrite' or 'off'");
				return CLI_EXIT_USAGE;
			}
			setenv("SGXEMU_CPUID", v, 1);
		} else if (!strcmp(a, "--vdso-abi") || !strncmp(a, "--vdso-abi=", 11)) {
			const char *v = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || (strcmp(v, "seed") && strcmp(v, "mainline"))) {
				cli_error("--vdso-abi is 'mainline' or 'seed'");
				return CLI_EXIT_USAGE;
			}
			setenv("SGXEMU_VDSO_ABI", v, 1);
		} else if (!strcmp(a, "--policy") || !strncmp(a, "--policy=", 9)) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			struct lsm_policy pol;
			char why[512], abs[PATH_MAX];

			if (!v) {
				cli_error("--policy needs a file");
				return CLI_EXIT_USAGE;
			}
			if (lsm_policy_load(v, &pol, why, sizeof(why))) {
				cli_error("policy refused: %s", why);
				return CLI_EXIT_FAIL;
			}
			lsm_policy_free(&pol);
			setenv("SGXEMU_POLICY", realpath(v, abs) ? abs : v, 1);
		} else if (!strcmp(a, "--lib") || !strncmp(a, "--lib=", 6)) {
			*lib = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
			if (!*lib) {
				cli_error("--lib needs a path");
				return CLI_EXIT_USAGE;
			}
		} else {
			cli_error("unknown option '%s' (try 'sgxemu %s --help')", a,
				  argv[0]);
			return CLI_EXIT_USAGE;
		}
	}
	if (!run_tick_ok(tick_opt))
		return CLI_EXIT_USAGE;
	if (i >= argc) {
		cli_error("no program to run (try 'sgxemu %s --help')", argv[0]);
		return CLI_EXIT_USAGE;
	}
	*idx = i;
	return -1;
}

int run_shim_path(const char *lib, char *shim)
{
	if (lib) {
		if (access(lib, R_OK) || !realpath(lib, shim)) {
			cli_error("cannot use %s: %s", lib, strerror(errno));
			return CLI_EXIT_FAIL;
		}
	} else if (run_find_file("libsgxemu.so", "../lib/sgxemu/", shim)) {
		cli_error("libsgxemu.so not found next to this sgxemu nor in "
			  "../lib/sgxemu/ (build it with make, or pass --lib)");
		return CLI_EXIT_FAIL;
	}
	return -1;
}

/* NAME's value with @lead first: the dynamic loader reads the list in
 * order, and the program's own entries stay, after ours. */
static char *list_value(const char *name, const char *lead)
{
	const char *old = getenv(name);
	size_t n = strlen(lead) + (old ? strlen(old) : 0) + 2;
	char *val = malloc(n);

	if (!val) {
		cli_error("out of memory");
		return NULL;
	}
	if (old && *old)
		snprintf(val, n, "%s:%s", lead, old);
	else
		snprintf(val, n, "%s", lead);
	return val;
}

char *run_preload_value(const char *shim)
{
	return list_value("LD_PRELOAD", shim);
}

/*
 * LD_AUDIT for the audit module beside @shim, which starts the shim before
 * any constructor of the program (src/shim/audit/audit.c). Without it the
 * program still runs, its libraries' constructors before the emulator.
 */
static int set_audit(const char *shim)
{
	char audit[PATH_MAX + 32], *val;
	const char *slash = strrchr(shim, '/');

	snprintf(audit, sizeof(audit), "%.*s/libsgxemu-audit.so",
		 slash ? (int)(slash - shim) : 1, slash ? shim : ".");
	if (access(audit, R_OK)) {
		cli_error("warning: %s is missing: the program's library "
			  "constructors will run before the emulator", audit);
		return 0;
	}
	val = list_value("LD_AUDIT", audit);
	if (!val)
		return -1;
	setenv("LD_AUDIT", val, 1);
	free(val);
	return 0;
}

int run_exec(char **argv, const char *hint)
{
	execvp(argv[0], argv);
	cli_error("cannot run %s: %s%s", argv[0], strerror(errno),
		  errno == ENOENT ? hint : "");
	return errno == ENOENT ? 127 : 126;
}

static int run_help(int argc, char **argv, int *i, void *ctx)
{
	(void)argc;
	(void)ctx;
	if (!strcmp(argv[*i], "-h") || !strcmp(argv[*i], "--help")) {
		fputs(usage, stdout);
		return CLI_EXIT_OK;
	}
	return RUN_OPT_NOT_MINE;
}

static int run_main(int argc, char **argv)
{
	char shim[PATH_MAX] = "";
	const char *lib = NULL;
	char *val;
	int i = 1, r;

	r = run_options(argc, argv, &i, &lib, run_help, NULL);
	if (r < 0)
		r = run_shim_path(lib, shim);
	if (r >= 0)
		return r;
	val = run_preload_value(shim);
	if (!val)
		return CLI_EXIT_FAIL;
	setenv("LD_PRELOAD", val, 1);
	free(val);
	if (set_audit(shim))
		return CLI_EXIT_FAIL;
	warn_if_static(argv[i]);
	return run_exec(&argv[i], "");
}

const struct cli_command cmd_run = {
	.name = "run",
	.summary = "run an unmodified SGX program on the emulator",
	.usage = usage,
	.main = run_main,
};
