/* SPDX-License-Identifier: MIT */
/*
 * A debugger's access to enclave memory (linux-driver-facts.md §8.4,
 * sgx_vma_access) through libsgxemu_ptrace.so, the library `sgxemu gdb`
 * preloads into gdb: pread/pwrite on /proc/PID/mem and ptrace PEEK/POKE,
 * with the errno a debugger sees on Linux. The debugged program is
 * tests/debug/dbg_host under `sgxemu run`, stopped in --wait mode with
 * its enclave (tests/enclaves/dbg_encl.c, layout.h) loaded; it runs its
 * enclave afterwards and must still get every result right.
 *
 * The library is opened here with dlopen and its functions called
 * directly, as gdb calls them once it is preloaded; loaded so, it also
 * redirects this program's own calls of them (as sgxemu.gdb's dlopen does
 * gdb's), which debug_library_takes_over_calls checks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../enclaves/layout.h"
#include "sgxemu/arch.h"
#include "test.h"


static ssize_t (*lib_pread)(int, void *, size_t, off_t);
static ssize_t (*lib_pwrite)(int, const void *, size_t, off_t);
static long (*lib_ptrace)(int, pid_t, void *, void *);

struct child {
	pid_t pid;
	int in, out;		/* its stdin (write end), stdout (read end) */
	int mem;		/* /proc/PID/mem */
	uint64_t base;
};

static void need_lib(void)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/libsgxemu_ptrace.so", test_build_dir());
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		test_skip("%s not built: %s", path, dlerror());
	lib_pread = (ssize_t (*)(int, void *, size_t, off_t))dlsym(h, "pread64");
	lib_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(h, "pwrite64");
	lib_ptrace = (long (*)(int, pid_t, void *, void *))dlsym(h, "ptrace");
	if (!lib_pread || !lib_pwrite || !lib_ptrace)
		test_skip("libsgxemu_ptrace.so lacks its functions");
}

/* dbg_host --wait [--nodebug] under sgxemu run [--epc-size @epc], its
 * enclave loaded. */
static bool spawn_epc(struct child *c, bool debug, const char *epc)
{
	const char *b = test_build_dir(), *key = test_signing_key(), *why;
	char cli[4096], host[4096], bin[4096], line[128], path[64];
	int in[2], out[2];
	ssize_t n = 0;

	need_lib();
	if (!test_ptrace_allowed(&why))
		test_skip("%s", why);
	if (!key)
		test_skip("no seed signing key (../shared)");
	snprintf(cli, sizeof(cli), "%s/sgxemu", b);
	snprintf(host, sizeof(host), "%s/tests/debug/dbg_host", b);
	snprintf(bin, sizeof(bin), "%s/enclaves/dbg_encl.bin", b);
	if (access(host, X_OK) || access(bin, R_OK))
		test_skip("%s or %s not built (make test builds them)", host, bin);
	if (pipe(in) || pipe(out))
		return false;
	/* make asan: the program under sgxemu run is not ASan-linked. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 0);
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (epc)
			execl(cli, "sgxemu", "run", "--epc-size", epc, host,
			      "--wait", "--copies", "4", key, bin, (char *)NULL);
		else
			execl(cli, "sgxemu", "run", host, "--wait",
			      debug ? "--threads" : "--nodebug", key, bin,
			      (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	while ((size_t)n < sizeof(line) - 1) {
		ssize_t r = read(c->out, line + n, 1);

		if (r <= 0)
			break;
		if (line[n++] == '\n')
			break;
	}
	line[n] = 0;
	if (sscanf(line, "base 0x%" SCNx64, &c->base) != 1) {
		test_fail(__FILE__, __LINE__, "dbg_host said '%s'", line);
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c->pid);
	c->mem = open(path, O_RDWR | O_CLOEXEC);
	return c->mem >= 0;
}

static bool spawn(struct child *c, bool debug)
{
	return spawn_epc(c, debug, NULL);
}

/* Let it run its enclave: 0 if it exited 0 having printed "ok". */
static int finish(struct child *c)
{
	char buf[256] = "";
	ssize_t n;
	int st = 0;

	close(c->mem);
	close(c->in);
	n = read(c->out, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(c->out);
	waitpid(c->pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(buf, "dbg_host: ok") ?
	       0 : -1;
}

/* The enclave image's bytes at @off (zeros past its end, as the loader
 * adds them). */
static void image_bytes(uint64_t off, void *buf, size_t n)
{
	char bin[4096];
	size_t size = 0;
	uint8_t *img;

	snprintf(bin, sizeof(bin), "%s/enclaves/dbg_encl.bin", test_build_dir());
	img = test_read_file(bin, &size);
	memset(buf, 0, n);
	if (img && off < size)
		memcpy(buf, img + off, size - off < n ? size - off : n);
	free(img);
}

static ssize_t rd(struct child *c, uint64_t addr, void *buf, size_t n)
{
	errno = 0;
	return lib_pread(c->mem, buf, n, (off_t)addr);
}

static ssize_t wr(struct child *c, uint64_t addr, const void *buf, size_t n)
{
	errno = 0;
	return lib_pwrite(c->mem, buf, n, (off_t)addr);
}

/* The permissions /proc/PID/maps shows for @addr ("r-xs"), or "". */
static void maps_perms(pid_t pid, uint64_t addr, char out[5])
{
	char path[64], line[512];
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char p[5];

		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, p) == 3 &&
		    addr >= lo && addr < hi) {
			memcpy(out, p, 5);
			break;
		}
	}
	fclose(f);
}

TEST(debug_enclave_code_reads_as_its_image)
{
	struct child c;
	uint8_t got[64], want[64];

	REQUIRE(spawn(&c, true));
	image_bytes(L_TEXT, want, sizeof(want));
	CHECK_EQ(rd(&c, c.base + L_TEXT, got, sizeof(got)), sizeof(got));
	CHECK_MEM(got, want, sizeof(got));
	/* Unaligned, inside one word and across words. */
	CHECK_EQ(rd(&c, c.base + L_TEXT + 3, got, 11), 11);
	CHECK_MEM(got, want + 3, 11);
	CHECK_EQ(finish(&c), 0);
}

/*
 * A breakpoint written into the R-X code page: the debugger sees it, the
 * enclave's mapping keeps its permissions (the EPCM's rules for enclave
 * code stay), and once the byte is back the enclave runs as before.
 */
TEST(debug_breakpoint_in_rx_page)
{
	struct child c;
	uint8_t orig, cc = 0xcc, back = 0;
	uint64_t at = 0;
	char perms[5];

	REQUIRE(spawn(&c, true));
	at = c.base + L_TEXT + 0x40;
	maps_perms(c.pid, at, perms);
	CHECK(!strcmp(perms, "r-xs"));
	REQUIRE(rd(&c, at, &orig, 1) == 1);
	/* The host kernel alone refuses it (a forced write to a shared
	 * read-only mapping): the library is what writes it. (The system
	 * call itself: loaded here, the library takes over this program's
	 * own pread/pwrite calls, as it does gdb's.) */
	CHECK_EQ(syscall(SYS_pwrite64, c.mem, &cc, 1, (off_t)at), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, at, &cc, 1), 1);
	CHECK_EQ(rd(&c, at, &back, 1), 1);
	CHECK_EQ(back, 0xcc);
	/* The enclave's own mapping shows it: the same EPC page. */
	CHECK_EQ(syscall(SYS_pread64, c.mem, &back, 1, (off_t)at), 1);
	CHECK_EQ(back, 0xcc);
	maps_perms(c.pid, at, perms);
	CHECK(!strcmp(perms, "r-xs"));
	CHECK_EQ(wr(&c, at, &orig, 1), 1);
	CHECK_EQ(finish(&c), 0);
}

/* sgx-facts.md §4.7: in a TCS only FLAGS (DBGOPTIN) is writable; reads
 * stop at the architectural TCS area. */
TEST(debug_tcs_only_flags_writable)
{
	struct child c;
	uint64_t v = 0, one = SGX_TCS_DBGOPTIN, zero = 0;
	uint8_t tcs[72];

	REQUIRE(spawn(&c, true));
	CHECK_EQ(rd(&c, c.base + L_TCS0, tcs, sizeof(tcs)), sizeof(tcs));
	CHECK_EQ(rd(&c, c.base + L_TCS0 + 72, &v, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, c.base + L_TCS0 + 8, &one, 8), 8);
	CHECK_EQ(rd(&c, c.base + L_TCS0 + 8, &v, 8), 8);
	CHECK_EQ(v, SGX_TCS_DBGOPTIN);
	CHECK_EQ(wr(&c, c.base + L_TCS0 + 8, &zero, 8), 8);
	CHECK_EQ(wr(&c, c.base + L_TCS0, &zero, 8), -1);	/* STATE */
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, c.base + L_TCS0 + 16, &zero, 8), -1);	/* OSSA */
	CHECK_EQ(errno, EIO);
	/* Part of FLAGS and part of OSSA: the whole write is refused. */
	CHECK_EQ(wr(&c, c.base + L_TCS0 + 12, &zero, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(rd(&c, c.base + L_TCS0 + 16, &v, 8), 8);
	CHECK_EQ(v, L_SSA0);
	CHECK_EQ(finish(&c), 0);
}

/* No EPC page at an ELRANGE address; an access running from an enclave
 * page into it gets the bytes before it, as /proc/PID/mem returns them. */
TEST(debug_no_page_and_spans)
{
	struct child c;
	uint8_t buf[16];
	uint64_t end = 0;

	REQUIRE(spawn(&c, true));
	end = c.base + (uint64_t)L_PAGES * 4096;
	CHECK_EQ(rd(&c, end, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, end, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(rd(&c, end - 8, buf, 16), 8);
	/* From the last enclave page into the reservation above ELRANGE:
	 * the enclave part fails first, so nothing. */
	CHECK_EQ(rd(&c, c.base + L_SIZE - 8, buf, 16), -1);
	CHECK_EQ(errno, EIO);
	/* Code page into data page: both enclave pages. */
	CHECK_EQ(rd(&c, c.base + L_DATA - 8, buf, 16), 16);
	CHECK_EQ(finish(&c), 0);
}

/* How many of the @npages pages from @base are not mapped from the EPC
 * now; the lowest one's address in *first. */
static int pages_not_in_epc(pid_t pid, uint64_t base, size_t npages,
			    uint64_t *first)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2 ||
		    hi <= base || lo >= base + npages * 4096 ||
		    strstr(line, "sgxemu-epc"))
			continue;
		if (lo < base)
			lo = base;
		if (hi > base + npages * 4096)
			hi = base + npages * 4096;
		if (!n || lo < *first)
			*first = lo;
		n += (int)((hi - lo) / 4096);
	}
	fclose(f);
	return n;
}

/*
 * EPC paging: with an EPC smaller than four copies of the enclave (and
 * the smallest the reclaimer works with, twice its high watermark), the
 * first one's pages are evicted for the others. The hook reloads them on Linux; here they are read from
 * the backing as ELDU opens them, so every page reads as the image (the
 * enclave has not run yet), and written back sealed as ELDU expects.
 */
TEST(debug_evicted_pages_read_as_their_image)
{
	static uint8_t img[L_PAGES * 4096], got[4096];
	struct child c;
	uint64_t first = 0;
	int evicted;

	REQUIRE(spawn_epc(&c, true, "512K"));
	evicted = pages_not_in_epc(c.pid, c.base, L_PAGES, &first);
	if (evicted <= 0) {
		finish(&c);
		test_skip("no page was evicted with a 512 KiB EPC");
	}
	image_bytes(0, img, sizeof(img));
	for (size_t p = 0; p < L_PAGES; p++) {
		/* A TCS reads up to its architectural 72 bytes. */
		size_t n = p * 4096 <= L_TCS2 ? 72 : 4096;

		if (rd(&c, c.base + p * 4096, got, n) != (ssize_t)n) {
			test_fail(__FILE__, __LINE__, "page %zu: errno %d "
				  "(%d pages evicted)", p, errno, evicted);
			continue;
		}
		for (size_t k = 0; k < n; k++)
			if (got[k] != img[p * 4096 + k]) {
				test_fail(__FILE__, __LINE__, "page %zu differs "
					  "at %zu: %02x, image %02x", p, k,
					  got[k], img[p * 4096 + k]);
				break;
			}
	}
	/* A breakpoint into an evicted code page, read back, then taken out
	 * again: the page must still load (ELDU's MAC) when the enclave runs
	 * (finish). The TCS rules hold for an evicted TCS too. */
	if (pages_not_in_epc(c.pid, c.base + L_TEXT, 1, &first) == 1) {
		uint8_t cc = 0xcc, back = 0;

		CHECK_EQ(wr(&c, c.base + L_TEXT + 0x40, &cc, 1), 1);
		CHECK_EQ(rd(&c, c.base + L_TEXT + 0x40, &back, 1), 1);
		CHECK_EQ(back, 0xcc);
		CHECK_EQ(wr(&c, c.base + L_TEXT + 0x40, img + L_TEXT + 0x40, 1), 1);
	}
	if (pages_not_in_epc(c.pid, c.base + L_TCS0, 1, &first) == 1) {
		uint64_t zero = 0;

		CHECK_EQ(wr(&c, c.base + L_TCS0 + 16, &zero, 8), -1);
		CHECK_EQ(errno, EIO);
		CHECK_EQ(wr(&c, c.base + L_TCS0 + 8, &zero, 8), 8);
	}
	CHECK_EQ(finish(&c), 0);
}

/* A non-DEBUG enclave: EDBGRD/EDBGWR refuse it, the kernel says EIO. */
TEST(nodebug_enclave_refused)
{
	struct child c;
	uint8_t buf[8] = { 0 };

	REQUIRE(spawn(&c, false));
	CHECK_EQ(rd(&c, c.base + L_TEXT, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(rd(&c, c.base + L_DATA, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, c.base + L_DATA, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(wr(&c, c.base + L_TCS0 + 8, buf, 8), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(finish(&c), 0);
}

/* ptrace PEEK/POKE: one word, all or nothing (EIO). */
static void peek_poke(bool debug)
{
	struct child c;
	uint64_t want = 0;
	long w, w2;
	int st;

	REQUIRE(spawn(&c, debug));
	REQUIRE(ptrace(PTRACE_SEIZE, c.pid, NULL, NULL) == 0);
	REQUIRE(ptrace(PTRACE_INTERRUPT, c.pid, NULL, NULL) == 0);
	REQUIRE(waitpid(c.pid, &st, 0) == c.pid);
	image_bytes(L_TEXT, &want, sizeof(want));
	errno = 0;
	w = lib_ptrace(PTRACE_PEEKDATA, c.pid, (void *)(uintptr_t)(c.base + L_TEXT), NULL);
	if (debug) {
		CHECK_EQ(errno, 0);
		CHECK_EQ(w, (long)want);
		CHECK_EQ(lib_ptrace(PTRACE_POKEDATA, c.pid,
				    (void *)(uintptr_t)(c.base + L_TEXT),
				    (void *)(uintptr_t)~want), 0);
		w2 = lib_ptrace(PTRACE_PEEKTEXT, c.pid,
				(void *)(uintptr_t)(c.base + L_TEXT), NULL);
		CHECK_EQ(w2, (long)~want);
		CHECK_EQ(lib_ptrace(PTRACE_POKETEXT, c.pid,
				    (void *)(uintptr_t)(c.base + L_TEXT),
				    (void *)(uintptr_t)want), 0);
		/* TCS: FLAGS yes, OENTRY no. */
		CHECK_EQ(lib_ptrace(PTRACE_POKEDATA, c.pid,
				    (void *)(uintptr_t)(c.base + L_TCS0 + 8), NULL), 0);
		CHECK_EQ(lib_ptrace(PTRACE_POKEDATA, c.pid,
				    (void *)(uintptr_t)(c.base + L_TCS0 + 32), NULL), -1);
		CHECK_EQ(errno, EIO);
	} else {
		CHECK_EQ(w, -1);
		CHECK_EQ(errno, EIO);
		CHECK_EQ(lib_ptrace(PTRACE_POKEDATA, c.pid,
				    (void *)(uintptr_t)(c.base + L_DATA), NULL), -1);
		CHECK_EQ(errno, EIO);
	}
	/* Ordinary memory passes through: the program's own stack pointer
	 * page is readable by PEEK. */
	errno = 0;
	lib_ptrace(PTRACE_PEEKUSER, c.pid, (void *)0, NULL);
	CHECK_EQ(errno, 0);
	CHECK_EQ(ptrace(PTRACE_DETACH, c.pid, NULL, NULL), 0);
	CHECK_EQ(finish(&c), 0);
}

/* Loaded late (not preloaded), the library has taken over this program's
 * own pread/pwrite calls through its GOT, as sgxemu.gdb's dlopen does in
 * gdb. */
TEST(debug_library_takes_over_calls)
{
	struct child c;
	uint8_t cc = 0xcc, orig = 0, back = 0;
	uint64_t at = 0;

	REQUIRE(spawn(&c, true));
	at = c.base + L_TEXT + 0x40;
	CHECK_EQ(pread(c.mem, &orig, 1, (off_t)at), 1);
	CHECK_EQ(pwrite(c.mem, &cc, 1, (off_t)at), 1);
	CHECK_EQ(syscall(SYS_pread64, c.mem, &back, 1, (off_t)at), 1);
	CHECK_EQ(back, 0xcc);
	CHECK_EQ(pwrite(c.mem, &orig, 1, (off_t)at), 1);
	CHECK_EQ(finish(&c), 0);
}

/* The ptrace probe's skip path, on every host: the override turns it. */
TEST(ptrace_probe_override_says_refused)
{
	const char *why = NULL;

	setenv("SGXEMU_TEST_NO_PTRACE", "1", 1);
	CHECK(!test_ptrace_allowed(&why));
	CHECK(why && strstr(why, "SGXEMU_TEST_NO_PTRACE"));
	unsetenv("SGXEMU_TEST_NO_PTRACE");
	CHECK(test_ptrace_allowed(&why) || why);
}

TEST(debug_ptrace_peek_poke)
{
	peek_poke(true);
}

TEST(nodebug_ptrace_refused)
{
	peek_poke(false);
}
