/* SPDX-License-Identifier: MIT */
/*
 * Host CPUID under `sgxemu run` (issue 13): this binary is also the probe.
 * Started as `... test_cpuid_host --probe MODE`, it executes CPUID
 * instructions of its own text (or of a dlopen'ed library, a new thread,
 * a fork child) and prints what they returned; the tests start it under
 * `sgxemu run` with several platforms and compare with what `sgxemu info`
 * and `sgxemu info --json` say of the same platform, and with this CPU's
 * own CPUID (the tests themselves run without the shim).
 *
 * Both mechanisms are run on every machine where they exist: `rewrite`
 * everywhere, `fault` where the CPU has CPUID faulting (skipped otherwise,
 * e.g. on AMD).
 */
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sgxemu/sgxemu.h"
#include "test.h"

/*
 * The probe's CPUID sites, in assembly so the bytes are known:
 *   probe_cpuid    a function with one CPUID (rewritten under `rewrite`)
 *   probe_imm      mov $0xa20f, %eax: 0f a2 inside an immediate
 *   probe_unclean  cpuid; ret; then a truncated instruction inside the
 *                  function's size: it does not decode cleanly, so its
 *                  CPUID must be left alone
 *   probe_text_data  0f a2 bytes in .text outside any function
 */
void probe_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);
uint32_t probe_imm(void);
void probe_unclean(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]);
extern const uint8_t probe_cpuid_insn[], probe_unclean_insn[], probe_text_data[];
extern const uint8_t probe_imm_insn[], probe_overlap_inner[];
uint32_t probe_overlap(void);

__asm__(".text\n"
	".globl probe_cpuid\n.type probe_cpuid,@function\n"
	"probe_cpuid:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_adjust_cfa_offset 8\n.cfi_offset rbx, -16\n"
	"mov %rdx, %r8\nmov %edi, %eax\nmov %esi, %ecx\n"
	".globl probe_cpuid_insn\nprobe_cpuid_insn:\n"
	"cpuid\n"
	"mov %eax, (%r8)\nmov %ebx, 4(%r8)\nmov %ecx, 8(%r8)\nmov %edx, 12(%r8)\n"
	"pop %rbx\n.cfi_adjust_cfa_offset -8\n"
	"ret\n"
	".cfi_endproc\n"
	".size probe_cpuid, .-probe_cpuid\n"

	".globl probe_imm\n.type probe_imm,@function\n"
	"probe_imm:\n"
	".globl probe_imm_insn\nprobe_imm_insn:\n"
	"mov $0xa20f, %eax\nret\n"
	".size probe_imm, .-probe_imm\n"

	".globl probe_unclean\n.type probe_unclean,@function\n"
	"probe_unclean:\n"
	"push %rbx\nmov %rdx, %r8\nmov %edi, %eax\nmov %esi, %ecx\n"
	".globl probe_unclean_insn\nprobe_unclean_insn:\n"
	"cpuid\n"
	"mov %eax, (%r8)\nmov %ebx, 4(%r8)\nmov %ecx, 8(%r8)\nmov %edx, 12(%r8)\n"
	"pop %rbx\nret\n"
	".byte 0xb8\n"		/* mov $imm32, %eax without its immediate */
	".size probe_unclean, .-probe_unclean\n"

	/* mov $0x90c3a20f, %eax; ret -- and a second function symbol one
	 * byte in, where the bytes read cpuid; ret; nop: the decodings
	 * disagree, so nothing is rewritten. */
	".globl probe_overlap\n.type probe_overlap,@function\n"
	"probe_overlap:\n"
	".byte 0xb8\n"
	".globl probe_overlap_inner\n.type probe_overlap_inner,@function\n"
	"probe_overlap_inner:\n"
	".byte 0x0f, 0xa2, 0xc3, 0x90\n"
	".size probe_overlap_inner, .-probe_overlap_inner\n"
	"ret\n"
	".size probe_overlap, .-probe_overlap\n"

	".globl probe_text_data\nprobe_text_data:\n"
	".byte 0x0f, 0xa2, 0x0f, 0xa2\n"
	".p2align 4\n");

/* --- the probe (under sgxemu run) -------------------------------------- */

static void print_leaf(const char *tag, uint32_t l, uint32_t s, const uint32_t r[4])
{
	printf("%s %x %x %08x %08x %08x %08x\n", tag, l, s, r[0], r[1], r[2], r[3]);
}

static void probe_all(const char *tag, void (*fn)(uint32_t, uint32_t, uint32_t *))
{
	uint32_t r[4];

	fn(0, 0, r);
	print_leaf(tag, 0, 0, r);
	fn(7, 0, r);
	print_leaf(tag, 7, 0, r);
	for (uint32_t s = 0; s < 2 + 8 + 2; s++) {
		fn(0x12, s, r);
		print_leaf(tag, 0x12, s, r);
	}
	fn(1, 0, r);
	print_leaf(tag, 1, 0, r);
	fn(0x15, 0, r);
	print_leaf(tag, 0x15, 0, r);
	fn(0x16, 0, r);
	print_leaf(tag, 0x16, 0, r);
}

static void *thread_probe(void *arg)
{
	(void)arg;
	probe_all("thread", probe_cpuid);
	return NULL;
}

static sigjmp_buf jb;
static volatile int *volatile bad_ptr = (volatile int *)16;
static volatile sig_atomic_t handled;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	handled = sig;
	siglongjmp(jb, 1);
}

static int count_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	int d = 0;

	for (size_t i = 0; i < n; i++)
		d += a[i] != b[i];
	return d;
}

static int probe_main(const char *mode, const char *arg)
{
	const char *mech = "native";

	if (syscall(SYS_arch_prctl, ARCH_GET_CPUID, 0) == 0)
		mech = "fault";
	else if (probe_cpuid_insn[0] == 0x0f && probe_cpuid_insn[1] == 0x0b)
		mech = "rewrite";
	printf("mech %s\n", mech);
	printf("bytes %02x%02x %02x%02x %02x%02x%02x%02x\n",
	       probe_unclean_insn[0], probe_unclean_insn[1],
	       probe_imm_insn[1], probe_imm_insn[2], probe_text_data[0],
	       probe_text_data[1], probe_text_data[2], probe_text_data[3]);
	printf("imm %x\n", probe_imm());
	printf("overlap %x %02x%02x\n", probe_overlap(), probe_overlap_inner[0],
	       probe_overlap_inner[1]);
	if (!strcmp(mode, "leaves")) {
		probe_all("main", probe_cpuid);
		probe_all("unclean", probe_unclean);
	} else if (!strcmp(mode, "open")) {
		/* The platform comes up: the answers must not change. */
		int fd = open("/dev/sgx_enclave", O_RDWR);

		printf("open %d\n", fd >= 0);
		probe_all("main", probe_cpuid);
	} else if (!strcmp(mode, "dlopen")) {
		for (int round = 0; round < 2; round++) {
			void *h = dlopen(arg, RTLD_NOW);
			void (*fn)(uint32_t, uint32_t, uint32_t *);

			if (!h) {
				printf("dlopen failed: %s\n", dlerror());
				return 1;
			}
			fn = (void (*)(uint32_t, uint32_t, uint32_t *))dlsym(h, "cpuid_lib_probe");
			if (!fn)
				return 1;
			probe_all(round ? "lib2" : "lib", fn);
			dlclose(h);
		}
	} else if (!strcmp(mode, "mmap")) {
		/* A file mapped with PROT_EXEC: private mappings get their
		 * CPUID rewritten (one byte), shared ones and the file never. */
		int fd = open(arg, O_RDONLY);
		off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
		uint8_t *file = size > 0 ? malloc((size_t)size) : NULL;
		uint8_t *p, *q, *r2;

		if (!file || pread(fd, file, (size_t)size, 0) != size)
			return 1;
		p = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		q = mmap(NULL, (size_t)size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		r2 = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED || q == MAP_FAILED || r2 == MAP_FAILED)
			return 1;
		printf("readonly_diff %d\n", count_diff(file, r2, (size_t)size));
		mprotect(r2, (size_t)size, PROT_READ | PROT_EXEC);
		printf("private_diff %d\n", count_diff(file, p, (size_t)size));
		printf("shared_diff %d\n", count_diff(file, q, (size_t)size));
		printf("mprotect_diff %d\n", count_diff(file, r2, (size_t)size));
		{
			uint8_t *again = malloc((size_t)size);

			if (!again || pread(fd, again, (size_t)size, 0) != size)
				return 1;
			printf("file_diff %d\n", count_diff(file, again, (size_t)size));
			free(again);
		}
		free(file);
		close(fd);
	} else if (!strcmp(mode, "threads")) {
		pthread_t t;
		pid_t pid;
		int st;

		pthread_create(&t, NULL, thread_probe, NULL);
		pthread_join(t, NULL);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			probe_all("child", probe_cpuid);
			fflush(stdout);
			_exit(0);
		}
		waitpid(pid, &st, 0);
	} else if (!strcmp(mode, "signals")) {
		/* The program's own handler for the trap's signals still gets
		 * what is not a CPUID, before and after the platform is up. */
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fault;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGILL, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
		for (int round = 0; round < 2; round++) {
			uint32_t r[4];

			if (round)
				printf("open %d\n", open("/dev/sgx_enclave", O_RDWR) >= 0);
			handled = 0;
			if (!sigsetjmp(jb, 1))
				__asm__ volatile("ud2");
			printf("ud2 %d\n", handled);
			handled = 0;
			if (!sigsetjmp(jb, 1))
				*bad_ptr = 1;
			printf("segv %d\n", handled);
			probe_cpuid(7, 0, r);
			print_leaf("main", 7, 0, r);
		}
		sigaction(SIGILL, NULL, &old);
		printf("kept %d\n", old.sa_sigaction == on_fault);
		/* Back to the default: the next fault kills with its signal. */
		signal(SIGILL, SIG_DFL);
		fflush(stdout);
		__asm__ volatile("ud2");
	}
	return 0;
}

/* --- the tests (no shim) ------------------------------------------------ */

static char self[4096];
static bool is_probe;

__attribute__((constructor))
static void maybe_probe(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	/* An ASan build's runtime is not first in a preloaded list. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 0);
	if (argc >= 3 && !strcmp(argv[1], "--probe")) {
		is_probe = true;
		setvbuf(stdout, NULL, _IOLBF, 0);
		exit(probe_main(argv[2], argc > 3 ? argv[3] : ""));
	}
}

#define OUT_SIZE 65536

/* Run @cmd with sh; its stdout in @out; the wait status. */
static int run(const char *cmd, char *out)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;

	out[0] = 0;
	if (!f)
		return -1;
	while (n < OUT_SIZE - 1) {
		size_t r = fread(out + n, 1, OUT_SIZE - 1 - n, f);

		if (!r)
			break;
		n += r;
	}
	out[n] = 0;
	return pclose(f);
}

static const char *bdir(void)
{
	return test_build_dir();
}

static bool built(void)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/libsgxemu.so", bdir());
	return !access(p, R_OK);
}

/* Run the probe under sgxemu run with @env and @opts. */
static int probe(const char *env, const char *opts, const char *mode,
		 const char *arg, char *out)
{
	char cmd[16384];

	/* In a group with stderr closed: the shell's own "Illegal
	 * instruction" for a probe that dies of its last fault. */
	snprintf(cmd, sizeof(cmd), "{ env %s %s/sgxemu run %s %s --probe %s %s; } "
		 "2>/dev/null", env, bdir(), opts, self, mode, arg);
	return run(cmd, out);
}

static bool leaf(const char *out, const char *tag, uint32_t l, uint32_t s,
		 uint32_t r[4])
{
	char want[64];
	const char *p = out;

	snprintf(want, sizeof(want), "%s %x %x ", tag, l, s);
	while ((p = strstr(p, want)) != NULL) {
		if (p == out || p[-1] == '\n')
			return sscanf(p + strlen(want), "%x %x %x %x", &r[0], &r[1],
				      &r[2], &r[3]) == 4;
		p++;
	}
	return false;
}

static void native(uint32_t l, uint32_t s, uint32_t r[4])
{
	__cpuid_count(l, s, r[0], r[1], r[2], r[3]);
}

struct section { unsigned long long base, pages; };

/*
 * Leaves 0x15 and 0x16 as the probe saw them: an SGX part's, giving this
 * machine's TSC rate within 1 % (ECX * EBX / EAX; base MHz in 0x16),
 * whether the host enumerates them itself or not. The rate is measured
 * here (no shim; test_tsc_hz); where this host's TSC has no steady rate
 * the leaves are only required to be there, and the line says why.
 */
static void check_tsc_leaves(const char *out)
{
	static double want;
	static const char *why;
	uint32_t r[4];
	double hz;

	if (!want && !why)
		want = test_tsc_hz(&why);
	REQUIRE(leaf(out, "main", 0x15, 0, r));
	REQUIRE(r[0] && r[1] && r[2]);
	hz = (double)r[2] * r[1] / r[0];
	if (!want) {
		printf("    skipped the TSC rate of leaves 0x15/0x16: %s\n", why);
		REQUIRE(leaf(out, "main", 0x16, 0, r));
		CHECK(r[0] & 0xffff);
		return;
	}
	if (hz < want * 0.99 || hz > want * 1.01)
		test_fail(__FILE__, __LINE__, "leaf 0x15 %x %x %x gives %.0f Hz, "
			  "the TSC runs at %.0f Hz", r[0], r[1], r[2], hz, want);
	REQUIRE(leaf(out, "main", 0x16, 0, r));
	hz = (double)(r[0] & 0xffff) * 1e6;
	/* Leaf 0x16's base frequency is in whole MHz, and a host's own
	 * may differ from its TSC (then 0x15 has the crystal): a looser
	 * bound, 5 %. */
	CHECK(hz > want * 0.95 && hz < want * 1.05);
}

/* `sgxemu info --json`'s EPC sections. */
static int json_sections(const char *env, struct section *sec, int max)
{
	static char out[OUT_SIZE];
	char cmd[4096];
	const char *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "env %s %s/sgxemu info --json", env, bdir());
	if (run(cmd, out) != 0)
		return -1;
	p = strstr(out, "\"sections\":[");
	while (p && n < max && (p = strstr(p, "\"phys_base\":")) != NULL) {
		if (sscanf(p, "\"phys_base\":%llu,\"total_pages\":%llu",
			   &sec[n].base, &sec[n].pages) != 2)
			return -1;
		n++;
		p++;
	}
	return n;
}

/* A "0x..." number after @key in `sgxemu info`'s text. */
static unsigned long long info_hex(const char *info, const char *key)
{
	const char *p = strstr(info, key);

	return p ? strtoull(strchr(p, ':') + 1, NULL, 16) : ~0ULL;
}

static bool have_fault(void)
{
	/* ARCH_SET_CPUID 0 succeeds only with CPUID faulting. */
	if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0))
		return false;
	syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
	return true;
}

/*
 * The whole check of one platform: leaves 0, 7 and 0x12 from the probe's
 * CPUID against this CPU, `sgxemu info` and `sgxemu info --json`.
 */
static void check_platform(const char *env, const char *opts, bool sgx2,
			   bool lc_flexible, const char *mech)
{
	static char out[OUT_SIZE], info[OUT_SIZE];
	struct section sec[8];
	uint32_t r[4], n[4];
	char cmd[4096];
	int nsec, st;

	if (!built())
		test_skip("%s/libsgxemu.so is not built", bdir());
	st = probe(env, opts, "leaves", "", out);
	REQUIRE_EQ(st, 0);
	/* `sgxemu info` takes the options of `sgxemu run` as environment. */
	char ienv[1024];
	const char *sz = strstr(opts, "--epc-size ");
	snprintf(ienv, sizeof(ienv), "%s %s%.*s %s", env,
		 sz ? "SGXEMU_EPC_SIZE=" : "",
		 sz ? (int)strcspn(sz + 11, " ") : 0, sz ? sz + 11 : "",
		 strstr(opts, "--no-sgx2") ? "SGXEMU_SGX2=0" : "");
	snprintf(cmd, sizeof(cmd), "env %s %s/sgxemu info", ienv, bdir());
	REQUIRE_EQ(run(cmd, info), 0);
	nsec = json_sections(ienv, sec, 8);
	REQUIRE(nsec >= 1);

	char want[64];
	snprintf(want, sizeof(want), "mech %s\n", mech);
	if (!strstr(out, want))
		test_fail(__FILE__, __LINE__, "wanted %s, probe says: %.40s", want, out);

	/* Leaf 0: the host's vendor, at least 0x16 leaves (SGX, then the
	 * TSC and frequency leaves). */
	REQUIRE(leaf(out, "main", 0, 0, r));
	native(0, 0, n);
	CHECK(r[0] >= 0x16 && r[0] >= n[0]);
	check_tsc_leaves(out);
	CHECK(r[1] == n[1] && r[2] == n[2] && r[3] == n[3]);
	/* Leaf 7.0: the host's plus SGX, SGX_LC as launch control is. */
	REQUIRE(leaf(out, "main", 7, 0, r));
	native(7, 0, n);
	CHECK_EQ(r[0], n[0]);
	CHECK_EQ(r[1], n[1] | 4);
	CHECK_EQ(r[2], lc_flexible ? (n[2] | (1U << 30)) : (n[2] & ~(1U << 30)));
	CHECK_EQ(r[3], n[3]);
	/* Leaf 1 passes through (EBX bits 31:24 are the APIC ID of whatever
	 * core ran it). */
	REQUIRE(leaf(out, "main", 1, 0, r));
	native(1, 0, n);
	CHECK_EQ(r[0], n[0]);
	CHECK_EQ(r[2], n[2]);
	CHECK_EQ(r[3], n[3]);

	/* 0x12.0 against `sgxemu info`. */
	REQUIRE(leaf(out, "main", 0x12, 0, r));
	/* AEX-Notify's EDECCSSA (bit 11) and EUPDATESVN (bit 10) are on in
	 * every platform here. */
	CHECK_EQ(r[0], (sgx2 ? 3U : 1U) | 1U << 10 | 1U << 11);
	CHECK(sgx2 == (strstr(info, "SGX1 SGX2") != NULL));
	CHECK(strstr(info, "EDECCSSA") != NULL);
	CHECK(strstr(info, "EUPDATESVN") != NULL);
	CHECK_EQ(r[1], info_hex(info, "MISCSELECT:"));
	{
		const char *p = strstr(info, "max enclave size: 2^");
		unsigned s64 = 0, s32 = 0;

		REQUIRE(p && sscanf(p, "max enclave size: 2^%u bytes (64-bit), 2^%u",
				    &s64, &s32) == 2);
		CHECK_EQ(r[3], s32 | (s64 << 8));
		CHECK_EQ(r[2], 0);
	}
	/* 0x12.1: attributes and XFRM masks. */
	REQUIRE(leaf(out, "main", 0x12, 1, r));
	CHECK_EQ(((uint64_t)r[1] << 32) | r[0], info_hex(info, "attributes:"));
	CHECK_EQ(((uint64_t)r[3] << 32) | r[2], info_hex(info, "XFRM:"));
	/* 0x12.n: the EPC sections of info --json, then an invalid one. */
	for (int i = 0; i < nsec; i++) {
		unsigned long long size = sec[i].pages << 12;

		REQUIRE(leaf(out, "main", 0x12, 2 + (uint32_t)i, r));
		CHECK_EQ(r[0], (uint32_t)(sec[i].base & 0xfffff000u) | 1);
		CHECK_EQ(r[1], (uint32_t)(sec[i].base >> 32));
		CHECK_EQ(r[2], (uint32_t)(size & 0xfffff000u) | 1);
		CHECK_EQ(r[3], (uint32_t)(size >> 32));
	}
	REQUIRE(leaf(out, "main", 0x12, 2 + (uint32_t)nsec, r));
	CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
}

static void need_fault(void)
{
	if (!have_fault())
		test_skip("this CPU has no CPUID faulting (cpuid_fault; AMD): "
			  "the fault path cannot run here");
}

TEST(rewrite_default_platform)
{
	check_platform("SGXEMU_CPUID=rewrite", "", true, true, "rewrite");
}

TEST(rewrite_two_sections_64m)
{
	check_platform("SGXEMU_CPUID=rewrite SGXEMU_EPC_SECTIONS=2", "--epc-size 64M",
		       true, true, "rewrite");
}

TEST(rewrite_sgx1_8m)
{
	check_platform("SGXEMU_CPUID=rewrite", "--epc-size 8M --no-sgx2", false,
		       true, "rewrite");
}

TEST(rewrite_three_sections_6g_locked)
{
	check_platform("SGXEMU_CPUID=rewrite SGXEMU_EPC_SECTIONS=3 "
		       "SGXEMU_LAUNCH_CONTROL=locked", "--epc-size 6G", true,
		       false, "rewrite");
}

TEST(fault_default_platform)
{
	need_fault();
	check_platform("SGXEMU_CPUID=fault", "", true, true, "fault");
}

TEST(fault_two_sections_sgx1)
{
	need_fault();
	check_platform("SGXEMU_CPUID=fault SGXEMU_EPC_SECTIONS=2",
		       "--epc-size 32M --no-sgx2", false, true, "fault");
}

TEST(auto_picks_what_the_cpu_offers)
{
	check_platform("SGXEMU_CPUID=auto", "--epc-size 16M", true, true,
		       have_fault() ? "fault" : "rewrite");
}

TEST(off_is_native)
{
	static char out[OUT_SIZE];
	uint32_t r[4], n[4];

	if (!built())
		test_skip("not built");
	REQUIRE_EQ(probe("", "--cpuid off", "leaves", "", out), 0);
	CHECK(strstr(out, "mech native\n") != NULL);
	REQUIRE(leaf(out, "main", 7, 0, r));
	native(7, 0, n);
	CHECK_MEM(r, n, sizeof(r));
}

/* Rewriting never touches what is not a CPUID instruction, and leaves
 * CPUIDs in code that does not decode cleanly alone. */
TEST(rewrite_leaves_other_bytes_alone)
{
	static char out[OUT_SIZE];
	uint32_t r[4], n[4];

	if (!built())
		test_skip("not built");
	REQUIRE_EQ(probe("SGXEMU_CPUID=rewrite", "", "leaves", "", out), 0);
	CHECK(strstr(out, "mech rewrite\n") != NULL);
	CHECK(strstr(out, "bytes 0fa2 0fa2 0fa20fa2\n") != NULL);
	CHECK(strstr(out, "imm a20f\n") != NULL);
	CHECK(strstr(out, "overlap 90c3a20f 0fa2\n") != NULL);
	/* The unclean function's CPUID ran natively. */
	REQUIRE(leaf(out, "unclean", 7, 0, r));
	native(7, 0, n);
	CHECK_MEM(r, n, sizeof(r));
	/* --debug says so. */
	{
		static char dbg[OUT_SIZE];
		char cmd[8192];

		snprintf(cmd, sizeof(cmd), "env SGXEMU_CPUID=rewrite %s/sgxemu run "
			 "--debug %s --probe leaves 2>&1 >/dev/null", bdir(), self);
		run(cmd, dbg);
		const char *p = strstr(dbg, "test_cpuid_host: ");

		REQUIRE(p != NULL);
		CHECK(strstr(p, "CPUID rewritten to trap; left native: 1 "
			     "function(s) with 0f a2 that do not decode cleanly, 1 "
			     "CPUID(s) where overlapping functions disagree, 2 "
			     "0f a2 byte pair(s) outside known functions") != NULL);
	}
}

static void check_same_model(const char *out, const char *tag)
{
	uint32_t r[4], m[4];

	for (uint32_t s = 0; s < 4; s++) {
		REQUIRE(leaf(out, "main", 0x12, s, m));
		if (!leaf(out, tag, 0x12, s, r))
			test_fail(__FILE__, __LINE__, "no %s line for 0x12.%u", tag, s);
		else
			CHECK_MEM(r, m, sizeof(r));
	}
	REQUIRE(leaf(out, tag, 7, 0, r));
	CHECK(r[1] & 4);
}

static void check_dlopen(const char *mech)
{
	static char out[OUT_SIZE], main_out[OUT_SIZE];
	char lib[4096], env[64];

	snprintf(lib, sizeof(lib), "%s/tests/libcpuid_probe.so", bdir());
	if (!built() || access(lib, R_OK))
		test_skip("%s is not built", lib);
	snprintf(env, sizeof(env), "SGXEMU_CPUID=%s SGXEMU_EPC_SECTIONS=2", mech);
	REQUIRE_EQ(probe(env, "--epc-size 64M", "dlopen", lib, out), 0);
	REQUIRE_EQ(probe(env, "--epc-size 64M", "leaves", "", main_out), 0);
	/* The library's CPUID answers as the main program's. */
	strncat(out, main_out, OUT_SIZE - strlen(out) - 1);
	check_same_model(out, "lib");
	check_same_model(out, "lib2");	/* loaded again after dlclose */
}

TEST(rewrite_mmap_and_mprotect_exec_private_only)
{
	static char out[OUT_SIZE];
	char lib[4096], tmp[] = "/tmp/sgxemu-cpuid-XXXXXX", cmd[8192];
	int fd;

	snprintf(lib, sizeof(lib), "%s/tests/libcpuid_probe.so", bdir());
	if (!built() || access(lib, R_OK))
		test_skip("%s is not built", lib);
	/* A copy of its own, so a wrong store could not hurt the build. */
	fd = mkstemp(tmp);
	REQUIRE(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp %s %s", lib, tmp);
	REQUIRE_EQ(run(cmd, out), 0);
	CHECK_EQ(probe("SGXEMU_CPUID=rewrite", "", "mmap", tmp, out), 0);
	unlink(tmp);
	CHECK(strstr(out, "readonly_diff 0\n") != NULL);
	CHECK(strstr(out, "private_diff 1\n") != NULL);
	CHECK(strstr(out, "shared_diff 0\n") != NULL);
	CHECK(strstr(out, "mprotect_diff 1\n") != NULL);
	CHECK(strstr(out, "file_diff 0\n") != NULL);
}

/* Damaged ELF files mapped with PROT_EXEC: the scanner reads their
 * headers, FDEs and symbols from the file; none of it may crash it. */
TEST(rewrite_survives_damaged_elf)
{
	static char out[OUT_SIZE];
	char lib[4096];
	size_t size;
	uint8_t *orig;
	uint64_t seed = 0x5eed;

	snprintf(lib, sizeof(lib), "%s/tests/libcpuid_probe.so", bdir());
	if (!built() || !(orig = test_read_file(lib, &size)))
		test_skip("%s is not built", lib);
	for (int variant = 0; variant < 8; variant++) {
		char tmp[] = "/tmp/sgxemu-cpuid-XXXXXX";
		uint8_t *img = malloc(size);
		Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
		int fd;

		REQUIRE(img != NULL);
		memcpy(img, orig, size);
		switch (variant) {
		case 0: eh->e_shnum = 0xffff; break;
		case 1: eh->e_shoff = ~0ULL - 8; break;
		case 2: eh->e_shstrndx = 0xfff0; break;
		default:
			/* Random bytes over a growing part of the file past the
			 * ELF header: section headers, symbols, .eh_frame. */
			for (size_t i = 64; i < size; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				if ((seed >> 33) % 8 < (uint64_t)variant - 2)
					img[i] = (uint8_t)(seed >> 56);
			}
			break;
		}
		fd = mkstemp(tmp);
		REQUIRE(fd >= 0);
		REQUIRE_EQ(write(fd, img, size), (ssize_t)size);
		close(fd);
		free(img);
		int st = probe("SGXEMU_CPUID=rewrite", "--debug", "mmap", tmp, out);
		unlink(tmp);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			test_fail(__FILE__, __LINE__, "variant %d: status 0x%x", variant, st);
		CHECK(strstr(out, "file_diff 0\n") != NULL);
	}
	free(orig);
}

TEST(rewrite_dlopened_library)
{
	check_dlopen("rewrite");
}

TEST(fault_dlopened_library)
{
	need_fault();
	check_dlopen("fault");
}

static void check_threads(const char *mech)
{
	static char out[OUT_SIZE];
	char env[64];

	if (!built())
		test_skip("not built");
	snprintf(env, sizeof(env), "SGXEMU_CPUID=%s", mech);
	REQUIRE_EQ(probe(env, "--epc-size 64M", "threads", "", out), 0);
	REQUIRE_EQ(probe(env, "--epc-size 64M", "leaves", "", out + strlen(out)), 0);
	check_same_model(out, "thread");
	check_same_model(out, "child");
}

TEST(rewrite_new_thread_and_fork_child)
{
	check_threads("rewrite");
}

TEST(fault_new_thread_and_fork_child)
{
	need_fault();
	check_threads("fault");
}

/* After the first device open the platform's own values answer: same. */
TEST(answers_unchanged_when_the_platform_comes_up)
{
	static char out[OUT_SIZE], before[OUT_SIZE];

	if (!built())
		test_skip("not built");
	REQUIRE_EQ(probe("SGXEMU_EPC_SECTIONS=3", "--epc-size 48M", "open", "", out), 0);
	CHECK(strstr(out, "open 1\n") != NULL);
	REQUIRE_EQ(probe("SGXEMU_EPC_SECTIONS=3", "--epc-size 48M", "leaves", "",
			 before), 0);
	for (uint32_t s = 0; s < 6; s++) {
		uint32_t a[4], b[4];

		REQUIRE(leaf(out, "main", 0x12, s, a));
		REQUIRE(leaf(before, "main", 0x12, s, b));
		CHECK_MEM(a, b, sizeof(a));
	}
}

static void check_signals(const char *mech)
{
	static char out[OUT_SIZE];
	char env[64];
	int st;

	if (!built())
		test_skip("not built");
	snprintf(env, sizeof(env), "SGXEMU_CPUID=%s", mech);
	st = probe(env, "", "signals", "", out);
	/* The last ud2 with SIG_DFL: death by SIGILL (the shell says 128+4
	 * through sgxemu run's exit status). */
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGILL);
	CHECK(strstr(out, "ud2 4\nsegv 11\nmain 7 0 ") != NULL);
	CHECK(strstr(out, "open 1\nud2 4\nsegv 11\nmain 7 0 ") != NULL);
	CHECK(strstr(out, "kept 1\n") != NULL);
	uint32_t r[4];
	REQUIRE(leaf(out, "main", 7, 0, r));
	CHECK(r[1] & 4);
}

TEST(rewrite_program_handlers_still_get_their_faults)
{
	check_signals("rewrite");
}

TEST(fault_program_handlers_still_get_their_faults)
{
	need_fault();
	check_signals("fault");
}

TEST(info_names_the_mechanism)
{
	static char out[OUT_SIZE];
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s/sgxemu info", bdir());
	REQUIRE_EQ(run(cmd, out), 0);
	CHECK(strstr(out, have_fault() ? "cpuid:            fault" :
				       "cpuid:            rewrite") != NULL);
	snprintf(cmd, sizeof(cmd), "SGXEMU_CPUID=off %s/sgxemu info", bdir());
	REQUIRE_EQ(run(cmd, out), 0);
	CHECK(strstr(out, "cpuid:            off") != NULL);
	CHECK(!strcmp(sgxemu_cpuid_mechanism(), have_fault() ? "fault" : "rewrite"));
	/* A bad --cpuid is a usage error. */
	snprintf(cmd, sizeof(cmd), "%s/sgxemu run --cpuid sideways /bin/true 2>&1", bdir());
	CHECK_EQ(WEXITSTATUS(run(cmd, out)), 2);
	CHECK(strstr(out, "--cpuid") != NULL);
}
