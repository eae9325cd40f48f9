/* SPDX-License-Identifier: MIT */
/*
 * `sgxemu info`: the emulated platform as a program running under
 * `sgxemu run` (with the same environment) would see it: CPUID leaf 0x12
 * (SGX1/SGX2, MISCSELECT, attributes, enclave size limits, EPC sections),
 * launch control, the devices and the engine.
 */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/cpuid.h"
#include "engine/engine.h"
#include "base/secrets.h"
#include "cli.h"
#include "commands.h"
#include "cov/cov.h"
#include "cpu/cpu.h"
#include "sgxemu/sgxemu.h"

static const char usage[] =
	"usage: sgxemu info [--json | --enclave FILE]\n"
	"\n"
	"Print the emulated SGX platform: EPC size and sections, SGX1/SGX2,\n"
	"MISCSELECT, the attributes and XFRM enclaves may use, launch-control\n"
	"mode, the device files and the engine. Honours the same environment\n"
	"as `sgxemu run` (SGXEMU_EPC_SIZE, SGXEMU_EPC_SECTIONS, SGXEMU_SGX2,\n"
	"SGXEMU_AEXNOTIFY, SGXEMU_EUPDATESVN, SGXEMU_AEX_TICK,\n"
	"SGXEMU_GUARD, SGXEMU_CPUID), and how host CPUID is made to answer\n"
	"as this part there.\n"
	"\n"
	"--json  the EPC and paging statistics as JSON (EPC total and free pages\n"
	"        per section, evictions, reloads, reclaimer runs, enclaves), as\n"
	"        SGXEMU_STATS writes them at the exit of a program, and under\n"
	"        \"engine\" the trap this host raises for ENCLU (probed).\n"
	"--enclave FILE  whether the enclave ELF FILE carries coverage sections:\n"
	"        .gcov_info (gcc --coverage -fprofile-info-section: .gcda files\n"
	"        under sgxemu run --coverage) and __sancov_cntrs/__sancov_pcs\n"
	"        (clang -fsanitize-coverage=inline-8bit-counters,pc-table: edges\n"
	"        for a libFuzzer host). A program under sgxemu run --debug says\n"
	"        the same of each DEBUG enclave it loads.\n";

/* --enclave FILE: its coverage sections (src/cov/image.c reads them). */
static int info_enclave(const char *path)
{
	struct cov_image im;
	int ret = cov_image_open(path, &im);

	if (ret == -ENOEXEC) {
		cli_error("%s: not an x86-64 ELF with section headers and .text",
			  path);
		return CLI_EXIT_FAIL;
	}
	if (ret) {
		cli_error("%s: %s", path, strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	printf("Enclave:          %s\n", path);
	if (im.gcov_info.size)
		printf("gcov:             .gcov_info, %llu object%s (.gcda files "
		       "under sgxemu run --coverage DIR, DEBUG only)\n",
		       (unsigned long long)(im.gcov_info.size / 8),
		       im.gcov_info.size / 8 == 1 ? "" : "s");
	else
		printf("gcov:             none (no .gcov_info section: gcc "
		       "--coverage -fprofile-info-section, kept by the link)\n");
	if (im.sancov_cntrs.size)
		printf("libFuzzer:        __sancov_cntrs, %llu edges%s (given to "
		       "a libFuzzer host, DEBUG only)\n",
		       (unsigned long long)im.sancov_cntrs.size,
		       im.sancov_pcs.size ? ", with their PC table" :
		       ", no PC table");
	else
		printf("libFuzzer:        none (no __sancov_cntrs: clang "
		       "-fsanitize-coverage=inline-8bit-counters,pc-table)\n");
	return 0;
}

static void print_size(uint64_t b)
{
	if (b >= (1ULL << 30) && !(b % (1ULL << 20)))
		printf("%.1f GiB", (double)b / (1ULL << 30));
	else if (b >= (1ULL << 20))
		printf("%.1f MiB", (double)b / (1ULL << 20));
	else
		printf("%llu KiB", (unsigned long long)(b >> 10));
}

static const struct {
	uint64_t bit;
	const char *name;
} attr_names[] = {
	{ SGX_ATTR_INIT, "INIT" },
	{ SGX_ATTR_DEBUG, "DEBUG" },
	{ SGX_ATTR_MODE64BIT, "MODE64BIT" },
	{ SGX_ATTR_PROVISIONKEY, "PROVISIONKEY" },
	{ SGX_ATTR_EINITTOKENKEY, "EINITTOKENKEY" },
	{ SGX_ATTR_CET, "CET" },
	{ SGX_ATTR_KSS, "KSS" },
	{ SGX_ATTR_AEXNOTIFY, "AEXNOTIFY" },
};

static const char *signal_name(int signo)
{
	return signo == SIGILL ? "SIGILL" : signo == SIGSEGV ? "SIGSEGV" :
	       signo == SIGBUS ? "SIGBUS" : "none";
}

/* One line on what ENCLU raises here, from the probe. */
static void print_trap(void)
{
	struct sgxemu_trap_info t;
	int ret = sgxemu_trap_probe(&t);

	if (ret) {
		printf("ENCLU trap:       not probed (%s)\n", strerror(-ret));
		return;
	}
	printf("ENCLU trap:       %s, trap %u (probed); EENTER on non-EPC: "
	       "%s, error 0x%x", sgxemu_trap_name(t.vector), t.vector,
	       sgxemu_trap_name(t.eenter_vector), t.eenter_error_code);
	if (t.forced)
		printf("; delivered as %s (SGXEMU_FAULT_STYLE=%s)",
		       !strcmp(t.forced, "ud") ? "#UD" : "#GP", t.forced);
	printf("\n");
}

/*
 * --json: the statistics object (sgxemu_stats_write_json, as SGXEMU_STATS
 * writes it) with the probed trap added last, as "engine".
 */
static int info_json(void)
{
	struct sgxemu_trap_info t;
	char buf[1 << 16];
	int fd = memfd_create("sgxemu-info", MFD_CLOEXEC);
	ssize_t n;

	if (fd < 0 || sgxemu_stats_write_json(fd) ||
	    (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 1 || buf[0] != '{') {
		cli_error("the statistics cannot be written");
		if (fd >= 0)
			close(fd);
		return CLI_EXIT_FAIL;
	}
	close(fd);
	/* Drop the closing brace (and newline) to append a member. */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '}'))
		if (buf[--n] == '}')
			break;
	buf[n] = 0;
	if (sgxemu_trap_probe(&t))
		memset(&t, 0, sizeof(t));
	printf("%s,\"engine\":{\"enclu_trap\":{\"signal\":\"%s\","
	       "\"vector\":%u,\"error_code\":%u},\"eenter_trap\":{"
	       "\"signal\":\"%s\",\"vector\":%u,\"error_code\":%u},"
	       "\"fault_style\":\"%s\",\"fsgsbase\":\"%s\","
	       "\"cpuid\":\"%s\",\"rdtsc\":\"%s\"}}\n", buf,
	       signal_name(t.signo),
	       t.vector, t.error_code, signal_name(t.eenter_signo),
	       t.eenter_vector, t.eenter_error_code,
	       t.forced ? t.forced : "native", sgxemu_fsgsbase_mode(),
	       sgxemu_cpuid_mechanism(), sgxemu_tsc_mode());
	return CLI_EXIT_OK;
}

/* What a mode of the platform means, for its line of `sgxemu info`. */
struct mode_text {
	const char *mode, *text;
};

/* "LABEL MODE (TEXT)": the text of @mode in @t, or @other. */
static void print_mode(const char *label, const char *mode,
		       const struct mode_text *t, size_t n, const char *other)
{
	const char *text = other;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(mode, t[i].mode))
			text = t[i].text;
	printf("%-18s%s (%s)\n", label, mode, text);
}

/* Where RD/WR{FS,GS}BASE come from on this host (fsgsbase.c). */
static void print_fsgsbase(void)
{
	static const struct mode_text t[] = {
		{ "kernel", "the host kernel's" },
		{ "emulated", "the host kernel has them off: #UD, done by the "
			      "engine, one trap each; HWCAP2_FSGSBASE set under "
			      "`sgxemu run`" },
		{ "untracked", "they run, but this kernel does not support "
			       "them: the enclave's WRFSBASE/WRGSBASE are made "
			       "to trap as its pages are added (a base written "
			       "by code it writes itself later can be lost at a "
			       "context switch); HWCAP2_FSGSBASE set under "
			       "`sgxemu run`" },
	};

	print_mode("FSGSBASE:", sgxemu_fsgsbase_mode(), t,
		   sizeof(t) / sizeof(t[0]), "SGXEMU_FSGSBASE=0: not offered");
}

/* RDTSC/RDTSCP in enclave mode (tsc.c). */
static void print_tsc(void)
{
	static const struct mode_text t[] = {
		{ "allowed", "SGX2 part: RDTSC and RDTSCP run, as on hardware" },
		{ "ud", "SGX1 part: #UD, as on hardware; PR_SET_TSC while in "
			"enclave mode" },
	};

	print_mode("RDTSC in enclave:", sgxemu_tsc_mode(), t,
		   sizeof(t) / sizeof(t[0]), sgxemu_tsc_trappable() ?
		   "SGX1 part, but SGXEMU_TSC=native: they run, where "
		   "hardware raises #UD" :
		   "SGX1 part, but this host ignores PR_SET_TSC: they run, "
		   "where hardware raises #UD");
}

/* The TSC frequency of CPUID leaves 0x15/0x16 and where it came from. */
static void print_tsc_hz(void)
{
	enum sgxemu_tsc_source src;
	uint64_t hz = sgxemu__tsc_hz(&src);

	if (hz)
		printf("TSC:              %llu.%03llu MHz (%s; CPUID leaves "
		       "0x15/0x16)\n", (unsigned long long)(hz / 1000000),
		       (unsigned long long)(hz / 1000 % 1000),
		       sgxemu__tsc_source_name(src));
	else
		printf("TSC:              unknown (CPUID leaves 0x15/0x16 "
		       "read as 0)\n");
}

/* How host CPUID answers as this part under `sgxemu run` here. */
static void print_cpuid(void)
{
	const char *m = sgxemu_cpuid_mechanism();
	uint32_t r[4];

	if (!strcmp(m, "fault"))
		printf("cpuid:            fault (CPUID faulting, per thread): host "
		       "CPUID answers as this part");
	else if (!strcmp(m, "rewrite"))
		printf("cpuid:            rewrite (%s: CPUID instructions found "
		       "by decoding are rewritten to trap): host CPUID answers "
		       "as this part", sgxemu__cpuid_fault_available() ?
		       "SGXEMU_CPUID=rewrite" : "this CPU has no CPUID faulting");
	else
		printf("cpuid:            off (host CPUID is the processor's)");
	if (strcmp(m, "off") && !sgxemu_cpuid(7, 0, r))
		printf(" (leaf 7: SGX%s)", (r[2] >> 30) & 1 ? ", SGX_LC" : "");
	if (!strcmp(m, "fault") && sgxemu__cpuid_enclave_ud())
		printf("; CPUID inside an enclave: #UD, as on hardware "
		       "(SGXEMU_CPUID_ENCLAVE=ud)\n");
	else if (!strcmp(m, "fault"))
		printf("; CPUID inside an enclave answers as host CPUID does "
		       "(hardware: #UD; SGXEMU_CPUID_ENCLAVE=ud)\n");
	else
		printf("; CPUID inside an enclave runs natively (hardware: "
		       "#UD)\n");
}

/*
 * What a debugger may do (docs/guide.md "Debugging enclaves"): the
 * driver's access hook runs in the debugger only where `sgxemu gdb`
 * preloads libsgxemu_ptrace.so; the host kernel alone cannot be made to
 * refuse a plain debugger's reads of a non-DEBUG enclave.
 */
static void print_debugger(void)
{
	char lib[PATH_MAX];
	bool found = !run_find_file("libsgxemu_ptrace.so", "../lib/sgxemu/", lib);

	printf("debugger:         `sgxemu gdb` (sgxemu.gdb, %s): DEBUG "
	       "enclaves read and written as the driver's hook allows "
	       "(breakpoints in code, TCS FLAGS only, evicted pages through "
	       "their backing), non-DEBUG ones refused; a debugger "
	       "without it reads every enclave and cannot write enclave code; "
	       "breakpoints and steps stop in any enclave (hardware: DEBUG "
	       "enclaves with TCS.FLAGS.DBGOPTIN)\n",
	       found ? "libsgxemu_ptrace.so" : "libsgxemu_ptrace.so not found");
}

/*
 * CPUSVN: this process's, and the pending one of the secrets file (a
 * microcode update that the next EUPDATESVN takes, `sgxemu platform
 * update-svn`).
 */
static void print_cpusvn(const struct sgx_cpu *cpu, const char *path)
{
	struct sgx_svn_state st;
	char why[512];

	printf("CPUSVN:           ");
	for (int i = 0; i < SGX_CPUSVN_SIZE; i++)
		printf("%02x", cpu->keys.cpusvn[i]);
	if (sgx_secrets_svn(path, &st, why, sizeof(why))) {
		printf(" (pending: unknown, %s)\n", why);
		return;
	}
	if (!memcmp(st.pending, cpu->keys.cpusvn, SGX_CPUSVN_SIZE) ||
	    sgx_cpusvn_supported(cpu->keys.cpusvn, st.pending)) {
		printf(" (no update pending)\n");
		return;
	}
	printf("\npending CPUSVN:   ");
	for (int i = 0; i < SGX_CPUSVN_SIZE; i++)
		printf("%02x", st.pending[i]);
	printf(" (a microcode update: taken at the next open of an enclave "
	       "device with no enclave%s)\n", cpu->config.eupdatesvn ? "" :
	       "; this processor has no EUPDATESVN");
}

static int info_main(int argc, char **argv)
{
	uint32_t r0[4], r1[4], rs[4];
	uint64_t attrs, xfrm, total = 0, tick;
	struct sgx_cpu *cpu;
	int ret;

	bool json = argc == 2 && !strcmp(argv[1], "--json");

	if (argc == 3 && !strcmp(argv[1], "--enclave"))
		return info_enclave(argv[2]);
	if (argc > 1 && !json) {
		cli_error("no arguments expected (try 'sgxemu info --help')");
		return CLI_EXIT_USAGE;
	}
	if (!run_tick_ok(false))
		return CLI_EXIT_USAGE;
	ret = sgxemu_platform_init();
	if (ret) {
		cli_error("the platform cannot be created: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	if (json)
		return info_json();
	sgxemu_platform_cpuid(0, r0);
	sgxemu_platform_cpuid(1, r1);
	attrs = (uint64_t)r1[1] << 32 | r1[0];
	xfrm = (uint64_t)r1[3] << 32 | r1[2];

	printf("%s\n", sgxemu_version());
	printf("instructions:     %s%s%s%s\n", (r0[0] & 1) ? "SGX1" : "(no SGX1)",
	       (r0[0] & 2) ? " SGX2" : "",
	       (r0[0] & (1U << 11)) ? " EDECCSSA (AEX-Notify)" : "",
	       (r0[0] & (1U << 10)) ? " EUPDATESVN" : "");
	printf("MISCSELECT:       0x%08x%s\n", r0[1],
	       (r0[1] & SGX_MISC_EXINFO) ? " (EXINFO)" : "");
	printf("max enclave size: 2^%u bytes (64-bit), 2^%u (32-bit)\n",
	       (r0[3] >> 8) & 0xff, r0[3] & 0xff);
	printf("attributes:       0x%016llx", (unsigned long long)attrs);
	for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++)
		if (attrs & attr_names[i].bit)
			printf(" %s", attr_names[i].name);
	printf("\n");
	sgxemu__cpuid_native(0xd, 0, rs);
	printf("XFRM:             0x%016llx (this host's XCR0, which enclave "
	       "mode keeps: an all-ones XSAVE there writes %u bytes)\n",
	       (unsigned long long)xfrm, rs[1]);
	printf("driver allows:    DEBUG MODE64BIT KSS AEXNOTIFY; PROVISIONKEY "
	       "after PROVISION (SET_ATTRIBUTE); never EINITTOKENKEY\n");
	for (uint32_t s = 2; s < 2 + 8; s++) {
		uint64_t base, size;

		sgxemu_platform_cpuid(s, rs);
		if ((rs[0] & 0xf) != 1)
			break;
		base = (rs[0] & 0xfffff000ULL) | (uint64_t)(rs[1] & 0xfffff) << 32;
		size = (rs[2] & 0xfffff000ULL) | (uint64_t)(rs[3] & 0xfffff) << 32;
		printf("EPC section %u:    0x%llx-0x%llx (", s - 2,
		       (unsigned long long)base,
		       (unsigned long long)(base + size - 1));
		print_size(size);
		printf(")\n");
		total += size;
	}
	printf("EPC total:        ");
	print_size(total);
	printf(" (%llu pages)\n", (unsigned long long)(total >> 12));
	cpu = sgxemu_platform_cpu();
	if (cpu && cpu->lc_locked)
		printf("launch control:   locked (IA32_SGXLEPUBKEYHASH read-only, "
		       "0x%016llx...): only the launch key's signer launches "
		       "without a token\n",
		       (unsigned long long)cpu->lepubkeyhash[0]);
	else
		printf("launch control:   flexible (IA32_SGXLEPUBKEYHASH writable); "
		       "the driver writes the signer's hash before EINIT, so any "
		       "signer launches\n");
	if (cpu) {
		char fp[33], path[4096] = "";

		if (!sgx_secrets_path(path, sizeof(path)) &&
		    !sgx_secrets_fingerprint(&cpu->keys, fp))
			printf("platform id:      %s (secrets in %s)\n", fp, path);
		print_cpusvn(cpu, path);
	} else {
		printf("platform:         not available (see the message above)\n");
	}
	printf("devices:          /dev/sgx_enclave /dev/sgx_provision, and "
	       "/dev/sgx/enclave /dev/sgx/provision as the PSW's symlinks to "
	       "them, under `sgxemu run`; the mainline and the seed v22 API on "
	       "every path, per enclave as its program speaks\n");
	printf("EPC paging:       %s\n", getenv("SGXEMU_EPC_RECLAIM") &&
	       !strcmp(getenv("SGXEMU_EPC_RECLAIM"), "0") ? "off (a full EPC "
	       "is ENOMEM)" : "on: EWB/ELDU, reclaimer at 32/64 free pages, "
	       "batches of 16 (statistics: info --json, SGXEMU_STATS)");
	printf("engine:           native (enclave code runs on the host thread; "
	       "each ENCLU is the host's trap below); guard mode %s\n",
	       sgxemu_guard() ? "on" : "off");
	tick = sgxemu__platform.aex_tick_ns;
	if (tick)
		printf("AEX tick:         every %llu us of a thread's CPU time in "
		       "enclave mode (the timer interrupt's AEX; %s, "
		       "--aex-tick 0 for none)\n",
		       (unsigned long long)(tick / 1000),
		       getenv("SGXEMU_AEX_TICK") && *getenv("SGXEMU_AEX_TICK") ?
		       "SGXEMU_AEX_TICK" : "the default");
	else
		printf("AEX tick:         none (SGXEMU_AEX_TICK=0: AEXs only for "
		       "signals and reclaimer kicks)\n");
	print_trap();
	print_cpuid();
	print_fsgsbase();
	print_tsc();
	print_tsc_hz();
	print_debugger();
	return cpu ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

const struct cli_command cmd_info = {
	.name = "info",
	.summary = "print the emulated SGX platform",
	.usage = usage,
	.main = info_main,
};
