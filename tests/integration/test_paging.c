/* SPDX-License-Identifier: MIT */
/*
 * EPC oversubscription end to end (issue 6): enclaves several times larger
 * than the EPC run through the C API while the driver evicts (EBLOCK,
 * ETRACK, kick, EWB) and reloads (#PF, AEX, ELDU, ERESUME) their pages.
 * Every check reads a checksum only the enclave computed
 * (tests/enclaves/paging_encl.*), recomputed here from the formula.
 * Each TEST runs in its own process, so each configures its own EPC.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "../enclaves/encl_util.h"
#include "../enclaves/paging_util.h"
#include "driver/driver.h"
#include "driver/paging.h"

#define EPC_SIZE	(8 * MiB)

static void epc_configure(void)
{
	struct sgxemu_platform_config cfg = {
		.epc_size = EPC_SIZE, .sgx2 = -1, .guard = -1, .host_enclu = -1,
		.aexnotify = -1,
	};

	sgxemu_platform_configure(&cfg);
}

#define PLOAD(p, mib) do { \
	const char *why_ = pload((p), (mib)); \
	if (why_) { test_fail(__FILE__, __LINE__, "load: %s", why_); return; } \
} while (0)

/* One command on TCS @t; the run's exit reason tells whether it faulted. */
static int pcall(struct pencl *p, int t, uint64_t cmd, uint64_t first,
		 uint64_t count, uint64_t seed, struct sgxemu_run *run)
{
	return tu_call(run, p->base + (uint64_t)t * 4096, cmd, first, count,
		       seed);
}

/* Fill, then check: 0 when the enclave's checksum is the expected one. */
static int fill_and_check(struct pencl *p, int t, uint64_t first,
			  uint64_t count, uint64_t seed)
{
	struct sgxemu_run run;

	if (pcall(p, t, P_FILL, first, count, seed, &run) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT) {
		fprintf(stderr, "fill: exit %d vector %d err %x addr %llx\n",
			run.exit_reason, run.exception.vector,
			run.exception.error_code,
			(unsigned long long)run.exception.address);
		return -1;
	}
	if (pcall(p, t, P_CHECK, first, count, seed, &run) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT)
		return -2;
	if (run.regs.rsi != 0)
		return -3;
	return run.regs.rdx == expected_checksum(seed, first, count) ? 0 : -4;
}

TEST(paging_enclave_4x_the_epc)
{
	struct sgxemu_platform_stats ps;
	struct sgxemu_enclave_stats es;
	struct pencl p;

	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.epc_total_pages, EPC_SIZE / 4096);
	CHECK(ps.pages_evicted > 0);	/* loading alone overflowed the EPC */
	CHECK_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 0x5eed), 0);
	/* A second, different pattern over the same pages. */
	CHECK_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 0xabcdef), 0);

	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	REQUIRE_EQ(sgxemu_enclave_stats(p.e, &es), 0);
	CHECK(ps.pages_evicted >= 3 * p.heap_pages);
	CHECK(ps.pages_reloaded >= 3 * p.heap_pages);
	CHECK_EQ(ps.reload_failures, 0);
	CHECK(ps.direct_reclaims + ps.reclaimer_runs > 0);
	CHECK(ps.epc_free_pages <= ps.epc_total_pages);
	CHECK_EQ(ps.nr_sections, 1);
	CHECK_EQ(ps.sections[0].total_pages, EPC_SIZE / 4096);
	CHECK(es.resident_pages < EPC_SIZE / 4096);
	CHECK(es.evicted_pages > p.heap_pages / 2);
	CHECK_EQ(es.resident_pages + es.evicted_pages,
		 p.heap_pages + L_PAGES);
	CHECK_EQ(es.va_pages, (p.heap_pages + L_PAGES + 511) / 512);
	CHECK(es.evictions > 0 && es.reloads > 0);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	/* Destroying it gave back every EPC page (VA pages included). */
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.epc_free_pages, ps.epc_total_pages);
}

TEST(paging_several_enclaves_share_the_epc)
{
	struct sgxemu_platform_stats ps;
	struct pencl p[3];

	epc_configure();
	for (int i = 0; i < 3; i++)
		PLOAD(&p[i], 12);
	for (int i = 0; i < 3; i++) {
		struct sgxemu_run run;

		REQUIRE_EQ(pcall(&p[i], 0, P_FILL, 0, p[i].heap_pages,
				 100 + (uint64_t)i, &run), 0);
		REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	}
	/*
	 * The first enclave's TCS went out too (the oldest page on its LRU,
	 * never young: the processor's own accesses do not count), so its
	 * next EENTER loads it back first, as the kernel does on the ENCLU's
	 * #PF.
	 */
	CHECK(p[0].e->pg->state[0] & PS_EVICTED);
	/* Checked in turn, twice: each evicts the others' pages. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3; i++) {
			struct sgxemu_run run;

			REQUIRE_EQ(pcall(&p[i], round, P_CHECK, 0,
					 p[i].heap_pages, 100 + (uint64_t)i,
					 &run), 0);
			REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
			CHECK_EQ(run.regs.rsi, 0);
			CHECK_EQ(run.regs.rdx,
				 expected_checksum(100 + (uint64_t)i, 0,
						   p[i].heap_pages));
		}
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.nr_enclaves, 3);
	CHECK(ps.pages_reloaded > 3 * 3072);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(sgxemu_enclave_destroy(p[i].e), 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.epc_free_pages, ps.epc_total_pages);
}

struct worker {
	struct pencl *p;
	int tcs;
	uint64_t first, count, seed;
	int result;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	w->result = 0;
	for (int i = 0; i < 3 && !w->result; i++)
		w->result = fill_and_check(w->p, w->tcs, w->first, w->count,
					   w->seed + (uint64_t)i);
	return NULL;
}

TEST(paging_two_threads_in_one_enclave)
{
	struct sgxemu_platform_stats ps;
	struct worker w[2];
	pthread_t t[2];
	struct pencl p;

	epc_configure();
	PLOAD(&p, 32);
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ &p, i, (uint64_t)i * p.heap_pages / 2,
					p.heap_pages / 2, 7 + 1000 * (uint64_t)i,
					-99 };
		REQUIRE_EQ(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(w[0].result, 0);
	CHECK_EQ(w[1].result, 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	/* Threads were in enclave mode while pages were written back. */
	CHECK(ps.kicks > 0);
	CHECK_EQ(ps.reload_failures, 0);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
}

/* A heap page now in backing memory (not the first few: the tests
 * below keep using pages far from it). */
static long evicted_heap_page(struct pencl *p)
{
	size_t first = PAGING_HEAP / 4096 + 64;

	for (size_t n = first; n < first + p->heap_pages - 128; n++)
		if (p->e->pg->state[n] & PS_EVICTED)
			return (long)n;
	return -1;
}

/* The run of a check of one heap page that must fault: vector 14. */
static void check_refused(struct pencl *p, int tcs, long n, uint64_t seed)
{
	struct sgxemu_platform_stats ps;
	struct sgxemu_run run;
	uint64_t hp = (uint64_t)n - PAGING_HEAP / 4096;

	REQUIRE_EQ(pcall(p, tcs, P_CHECK, hp, 1, seed, &run), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.exception.vector, X86_TRAP_PF);
	CHECK_EQ(run.exception.address, p->base + (uint64_t)n * 4096);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.reload_failures, 1);
	/* Refused for good, as Linux: the contents are gone. */
	REQUIRE_EQ(pcall(p, 2, P_CHECK, hp, 1, seed, &run), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.exception.vector, X86_TRAP_PF);
}

/* Nothing else suffered: the first pages still hold their pattern. */
static void others_intact(struct pencl *p, uint64_t seed)
{
	struct sgxemu_run run;

	/* TCS 1: TCS 0 has its SSA frame taken by the reported fault. */
	REQUIRE_EQ(pcall(p, 1, P_CHECK, 0, 32, seed, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rsi, 0);
	CHECK_EQ(run.regs.rdx, expected_checksum(seed, 0, 32));
}

static void tamper(bool pcmd)
{
	struct sgxemu_run run;
	struct pencl p;
	long n;

	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(pcall(&p, 0, P_FILL, 0, p.heap_pages, 42, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	n = evicted_heap_page(&p);
	REQUIRE(n >= 0);
	if (pcmd)
		((uint8_t *)&p.e->pg->pcmd[n])[112] ^= 0x01;	/* the MAC */
	else
		p.e->pg->backing[(size_t)n * 4096 + 1234] ^= 0x80;
	check_refused(&p, 0, n, 42);
	others_intact(&p, 42);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
}

TEST(paging_tampered_backing_is_refused)
{
	tamper(false);
}

TEST(paging_tampered_pcmd_is_refused)
{
	tamper(true);
}

static sigjmp_buf bus_jb;
static volatile int bus_code;
static void *volatile bus_addr;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	bus_code = si->si_code;
	bus_addr = si->si_addr;
	siglongjmp(bus_jb, 1);
}

/*
 * Host code reading an evicted page whose backing was tampered with: the
 * fault-in fails, and as the kernel's VM_FAULT_SIGBUS the access gets
 * SIGBUS (BUS_ADRERR) at the address, not a SIGSEGV.
 */
TEST(paging_host_access_to_a_lost_page_is_sigbus)
{
	struct sgxemu_run run;
	struct sigaction sa;
	struct pencl p;
	volatile char *addr;
	long n;

	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(pcall(&p, 0, P_FILL, 0, p.heap_pages, 42, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	n = evicted_heap_page(&p);
	REQUIRE(n >= 0);
	p.e->pg->backing[(size_t)n * 4096 + 99] ^= 0x10;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGBUS, &sa, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGSEGV, &sa, NULL), 0);
	addr = (volatile char *)(uintptr_t)(p.base + (uint64_t)n * 4096 + 8);
	bus_code = 0;
	if (!sigsetjmp(bus_jb, 1))
		(void)*addr;
	CHECK_EQ(bus_code, BUS_ADRERR);
	CHECK(bus_addr == (void *)addr);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
}

/*
 * A power loss (docs/guide.md "Platform events") with pages written back:
 * the next EENTER faults on the TCS (#PF, SGX bit), a page in backing
 * memory cannot be loaded again (ELDU faults: its VA page and the SECS
 * were in the EPC, the paging key is new) and host code reading it gets
 * SIGBUS; the enclave is destroyed as any other, and a new one as large
 * pages out and back in under the new key.
 */
TEST(paging_power_loss_with_pages_written_back)
{
	struct sgxemu_platform_stats ps;
	struct sgxemu_run run;
	struct sigaction sa;
	struct pencl p;
	volatile char *addr;
	uint64_t reloaded;
	long n;

	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(pcall(&p, 0, P_FILL, 0, p.heap_pages, 42, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	n = evicted_heap_page(&p);
	REQUIRE(n >= 0);
	REQUIRE_EQ(sgx_drv_power_cycle(), 1);
	REQUIRE_EQ(pcall(&p, 1, P_CHECK, 0, 1, 42, &run), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.leaf, SGX_EENTER);
	CHECK_EQ(run.exception.vector, X86_TRAP_PF);
	CHECK_EQ(run.exception.error_code,
		 X86_PF_SGX | X86_PF_USER | X86_PF_PROT);
	CHECK_EQ(run.exception.address, p.base + 4096);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sgxemu_sigaction(SIGBUS, &sa, NULL), 0);
	REQUIRE_EQ(sgxemu_sigaction(SIGSEGV, &sa, NULL), 0);
	addr = (volatile char *)(uintptr_t)(p.base + (uint64_t)n * 4096 + 8);
	bus_code = 0;
	if (!sigsetjmp(bus_jb, 1))
		(void)*addr;
	CHECK_EQ(bus_code, BUS_ADRERR);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK(ps.reload_failures >= 1);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);

	reloaded = ps.pages_reloaded;
	PLOAD(&p, 32);
	CHECK_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 7), 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK(ps.pages_reloaded > reloaded);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
}

TEST(paging_replayed_page_is_refused)
{
	struct sgxemu_run run;
	struct sgx_pcmd old_pcmd;
	uint8_t *old = malloc(4096);
	uint64_t hp;
	struct pencl p;
	long n;
	int i;

	REQUIRE(old);
	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(pcall(&p, 0, P_FILL, 0, p.heap_pages, 42, &run), 0);
	n = evicted_heap_page(&p);
	REQUIRE(n >= 0);
	hp = (uint64_t)n - PAGING_HEAP / 4096;
	/* The attacker's copy of the evicted page (contents and PCMD). */
	memcpy(old, p.e->pg->backing + (size_t)n * 4096, 4096);
	memcpy(&old_pcmd, &p.e->pg->pcmd[n], sizeof(old_pcmd));
	/* Reloaded, modified... */
	REQUIRE_EQ(pcall(&p, 0, P_FILL, hp, 1, 43, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK(!(p.e->pg->state[n] & PS_EVICTED));
	/* ... and evicted again (other pages push it out). */
	for (i = 0; i < 8 && !(p.e->pg->state[n] & PS_EVICTED); i++) {
		REQUIRE_EQ(pcall(&p, 1, P_CHECK, 0, 32, 42, &run), 0);
		REQUIRE_EQ(pcall(&p, 1, P_CHECK, hp + 16,
				 p.heap_pages - hp - 16, 42, &run), 0);
	}
	REQUIRE(p.e->pg->state[n] & PS_EVICTED);
	/* The old copy, MAC-valid for its old version, is put back. */
	memcpy(p.e->pg->backing + (size_t)n * 4096, old, 4096);
	memcpy(&p.e->pg->pcmd[n], &old_pcmd, sizeof(old_pcmd));
	check_refused(&p, 0, n, 42);
	others_intact(&p, 42);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	free(old);
}

/*
 * The number after "KEY": in @json at or after @from (NULL: the start);
 * -1 when the key is missing or its value is not a number.
 */
static long long json_num(const char *json, const char *from, const char *key)
{
	char pat[64];
	const char *p;
	char *end;
	long long v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(from ? from : json, pat);
	if (!p)
		return -1;
	v = strtoll(p + strlen(pat), &end, 10);
	return end == p + strlen(pat) ? -1 : v;
}

/*
 * The figures of one stats JSON against the work an enclave of
 * @nr_pages child pages did in an EPC of EPC_SIZE: every page is
 * resident or evicted, what did not fit was evicted, the platform's
 * counters are the enclave's (it is the only one), and the EPC pages in
 * use are its resident pages, its VA pages and at most its SECS.
 */
static void check_stats_json(const char *json, uint64_t nr_pages)
{
	const char *encl = strstr(json, "\"enclaves\":[{");
	long long total = json_num(json, NULL, "total_pages");
	long long free_ = json_num(json, NULL, "free_pages");
	long long evicted = json_num(json, NULL, "pages_evicted");
	long long reloaded = json_num(json, NULL, "pages_reloaded");
	long long resident, out, va, evictions, reloads;

	REQUIRE(encl != NULL);
	resident = json_num(json, encl, "resident_pages");
	out = json_num(json, encl, "evicted_pages");
	va = json_num(json, encl, "va_pages");
	evictions = json_num(json, encl, "evictions");
	reloads = json_num(json, encl, "reloads");
	if (getenv("TEST_VERBOSE"))
		printf("    %s\n", json);
	CHECK_EQ(total, EPC_SIZE / 4096);
	CHECK_EQ(resident + out, nr_pages);
	CHECK_EQ(va, (nr_pages + 511) / 512);
	/* The EPC cannot hold all of them: at least the excess is out. */
	CHECK(out >= (long long)nr_pages - total);
	CHECK(resident > 0 && resident <= total - va);
	CHECK_EQ(evictions, evicted);
	CHECK_EQ(reloads, reloaded);
	/* Each page out was evicted once more than it was reloaded. */
	CHECK(evicted - reloaded >= out);
	CHECK_EQ(json_num(json, NULL, "reload_failures"), 0);
	/* In use: resident pages, VA pages and the SECS (unless evicted). */
	CHECK(total - free_ - resident - va == 0 ||
	      total - free_ - resident - va == 1);
}

TEST(paging_stats_as_json)
{
	struct pencl p;
	char *buf = malloc(1 << 16);
	int fds[2];
	ssize_t len, n;

	REQUIRE(buf);
	epc_configure();
	PLOAD(&p, 16);
	/* The work: every heap page written then read back, 4x the EPC. */
	REQUIRE_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 0x77), 0);
	REQUIRE_EQ(pipe(fds), 0);
	REQUIRE_EQ(sgxemu_stats_write_json(fds[1]), 0);
	close(fds[1]);
	for (len = 0; (n = read(fds[0], buf + len, (1 << 16) - 1 - len)) > 0; )
		len += n;
	close(fds[0]);
	REQUIRE(len > 0);
	buf[len] = 0;
	check_stats_json(buf, p.heap_pages + L_PAGES);
	/* Touching every heap page twice reloaded at least those out. */
	CHECK(json_num(buf, NULL, "pages_reloaded") >=
	      (long long)(p.heap_pages + L_PAGES) - (long long)(EPC_SIZE / 4096));
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	free(buf);
}

/* SGXEMU_STATS=FILE: the JSON is written when the process exits. */
TEST(paging_stats_file_at_exit)
{
	char path[] = "/tmp/sgxemu-stats-XXXXXX";
	size_t len = 0;
	char *buf;
	int fd = mkstemp(path), status = 0;
	pid_t pid;

	REQUIRE(fd >= 0);
	close(fd);
	pid = fork();
	if (pid == 0) {
		struct pencl p;

		setenv("SGXEMU_STATS", path, 1);
		epc_configure();
		if (pload(&p, 12))
			_exit(2);
		exit(0);	/* atexit handlers run */
	}
	REQUIRE(pid > 0);
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	buf = tu_read(path, &len);
	unlink(path);
	REQUIRE(buf);
	buf = realloc(buf, len + 1);
	REQUIRE(buf);
	buf[len] = 0;
	/* Loading 12 MiB of heap into 8 MiB of EPC, nothing else. */
	check_stats_json(buf, 12 * MiB / 4096 + L_PAGES);
	free(buf);
}

/* The kick signal is the engine's: the application cannot take it. */
TEST(paging_kick_signal_is_reserved)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	errno = 0;
	CHECK_EQ(sgxemu_sigaction(SGXEMU_KICK_SIGNAL, &sa, NULL), -1);
	CHECK_EQ(errno, EINVAL);
	/* Reading the application's view still works. */
	CHECK_EQ(sgxemu_sigaction(SGXEMU_KICK_SIGNAL, NULL, &sa), 0);
}

/* An idle initialised enclave loses every page to a busy one, then its
 * SECS too (facts §9.5); its next call brings the SECS back first. */
TEST(paging_idle_enclave_loses_its_secs)
{
	struct sgxemu_enclave_info info;
	struct sgxemu_run run;
	struct pencl a, b;

	epc_configure();
	PLOAD(&a, 1);
	PLOAD(&b, 32);
	REQUIRE_EQ(pcall(&a, 0, P_FILL, 0, a.heap_pages, 77, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	for (int i = 0; i < 4 && !a.e->pg->secs_evicted; i++)
		CHECK_EQ(fill_and_check(&b, 0, 0, b.heap_pages, 5 + (uint64_t)i),
			 0);
	REQUIRE(a.e->pg->secs_evicted);
	CHECK_EQ(a.e->pg->resident, 0);
	REQUIRE_EQ(pcall(&a, 1, P_CHECK, 0, a.heap_pages, 77, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rsi, 0);
	CHECK_EQ(run.regs.rdx, expected_checksum(77, 0, a.heap_pages));
	CHECK(!a.e->pg->secs_evicted);
	/* The API reads the SECS where it is now. */
	REQUIRE_EQ(sgxemu_enclave_get_info(a.e, &info), 0);
	CHECK(info.initialized);
	CHECK_EQ(info.base, a.base);
	CHECK_EQ(sgxemu_enclave_destroy(a.e), 0);
	CHECK_EQ(sgxemu_enclave_destroy(b.e), 0);
}

/* ENCLU[EREPORT] whose operands are on a paged-out page: the leaf's #PF
 * loads the page and the ENCLU runs again, unseen by the program. */
TEST(paging_enclu_operand_on_an_evicted_page)
{
	struct sgxemu_enclave_info info;
	struct sgxemu_platform_stats ps;
	struct sgxemu_run run;
	uint64_t mr;
	struct pencl p;
	long n;

	epc_configure();
	PLOAD(&p, 32);
	REQUIRE_EQ(pcall(&p, 0, P_FILL, 0, p.heap_pages, 42, &run), 0);
	n = evicted_heap_page(&p);
	REQUIRE(n >= 0);
	REQUIRE_EQ(pcall(&p, 0, P_REPORT, (uint64_t)n - PAGING_HEAP / 4096, 0,
			 0, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	REQUIRE_EQ(sgxemu_enclave_get_info(p.e, &info), 0);
	memcpy(&mr, info.mrenclave, sizeof(mr));
	CHECK_EQ(run.regs.rdx, mr);
	CHECK(!(p.e->pg->state[n] & PS_EVICTED));
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.reload_failures, 0);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
}

/* Two EPC sections: free counts per section add up, and paging uses
 * both. */
TEST(paging_free_counts_per_section)
{
	struct sgxemu_platform_config cfg = {
		.epc_size = EPC_SIZE, .nr_sections = 2, .sgx2 = -1,
		.guard = -1, .host_enclu = -1,
		.aexnotify = -1,
	};
	struct sgxemu_platform_stats ps;
	uint64_t total = 0, free_pages = 0;
	struct pencl p;

	sgxemu_platform_configure(&cfg);
	PLOAD(&p, 16);
	CHECK_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 9), 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	REQUIRE_EQ(ps.nr_sections, 2);
	for (unsigned i = 0; i < 2; i++) {
		total += ps.sections[i].total_pages;
		free_pages += ps.sections[i].free_pages;
		/* Under pressure both sections are in use. */
		CHECK(ps.sections[i].free_pages < ps.sections[i].total_pages);
	}
	CHECK_EQ(total, ps.epc_total_pages);
	CHECK_EQ(free_pages, ps.epc_free_pages);
	CHECK(ps.pages_evicted > 0);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK_EQ(ps.sections[0].free_pages, ps.sections[0].total_pages);
	CHECK_EQ(ps.sections[1].free_pages, ps.sections[1].total_pages);
}

/* `sgxemu info --json`: the same statistics from the CLI. */
TEST(paging_info_json)
{
	char cmd[1024], buf[4096];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "SGXEMU_EPC_SIZE=8M %s/sgxemu info --json",
		 test_build_dir());
	f = popen(cmd, "r");
	REQUIRE(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	CHECK_EQ(pclose(f), 0);
	buf[n] = 0;
	CHECK(strstr(buf, "{\"epc\":{\"total_pages\":2048,\"free_pages\":2048,") == buf);
	CHECK(strstr(buf, "\"pages_evicted\":0") != NULL);
}

/*
 * Found by `make stress`: loading an evicted page allocates an EPC page,
 * and the reclaim that allocation may run can empty the same enclave and
 * write its SECS back; the SECS must be there again for ELDU (it was
 * reloaded before the allocation, and ELDU then failed with #PF on the
 * SECS operand: the page was lost). Made deterministic here under the
 * paging lock (ksgxd waits): the other enclave is not reclaimable
 * (marked shared, as after a fork), the EPC has no free page, and the
 * enclave keeps only a few resident pages, all old.
 */
TEST(paging_load_survives_the_secs_leaving_during_allocation)
{
	static long grabbed[4096];
	struct sgxemu_run run;
	struct pencl a, b;
	size_t nr_grabbed = 0, n;
	int r;

	epc_configure();
	PLOAD(&a, 1);
	PLOAD(&b, 4);
	REQUIRE_EQ(pcall(&a, 0, P_FILL, 0, a.heap_pages, 99, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);

	sgxemu__paging_lock();
	b.e->pg->shared = true;
	/* Down to at most one batch of resident pages, aged on the way. */
	while (a.e->pg->resident > SGX_RECLAIM_BATCH / 2 &&
	       sgxemu__reclaim_batch(true))
		;
	while (sgxemu__epc_nr_free() && nr_grabbed < 4096) {
		long i = sgxemu__epc_alloc(-1, false);

		if (i < 0)
			break;
		grabbed[nr_grabbed++] = i;
	}
	CHECK_EQ(sgxemu__epc_nr_free(), 0);
	CHECK(a.e->pg->resident > 0);
	CHECK(!a.e->pg->secs_evicted);
	/* An evicted heap page of a. */
	for (n = L_PAGES; n < a.e->npages; n++)
		if (a.e->pg->state[n] & PS_EVICTED)
			break;
	REQUIRE(n < a.e->npages);
	r = sgxemu__paging_load(a.e, n);
	CHECK_EQ(r, 0);
	CHECK(!(a.e->pg->state[n] & PS_LOST));
	for (size_t i = 0; i < nr_grabbed; i++)
		sgxemu__epc_free(grabbed[i]);
	b.e->pg->shared = false;
	sgxemu__paging_unlock();

	/* Every value still there. */
	REQUIRE_EQ(pcall(&a, 1, P_CHECK, 0, a.heap_pages, 99, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rsi, 0);
	CHECK_EQ(run.regs.rdx, expected_checksum(99, 0, a.heap_pages));
	CHECK_EQ(sgxemu_enclave_destroy(a.e), 0);
	CHECK_EQ(sgxemu_enclave_destroy(b.e), 0);
}

/* --- fork: the enclave is shared until the child is gone ---------------------- */

static uint64_t epc_free_now(void)
{
	struct sgxemu_platform_stats ps;

	return sgxemu_platform_stats(&ps) ? ~0ULL : ps.epc_free_pages;
}

/* A child that does nothing with the enclaves and exits when the pipe's
 * write end (the parent's) closes, or after @ms if @ms > 0. */
static pid_t passive_child(int hold[2], int ms)
{
	pid_t pid;

	if (pipe(hold))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(hold[1]);
		if (ms > 0)
			usleep((useconds_t)ms * 1000);
		else if (read(hold[0], &c, 1) < 0)
			_exit(3);
		_exit(0);
	}
	close(hold[0]);
	return pid;
}

static void child_done(int hold[2], pid_t pid)
{
	int status = -1;

	close(hold[1]);
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * While a child lives, the parent has every other free EPC page (the
 * child the rest) and does not evict the enclaves it shares; when the
 * child has exited, all of it is the parent's again, as on Linux, where
 * the child's references go with its exit.
 */
TEST(paging_fork_child_gone_gives_epc_and_reclaim_back)
{
	struct sgxemu_platform_stats ps;
	struct sgxemu_run run;
	uint64_t free0, evicted0;
	struct pencl p;
	int hold[2];
	pid_t pid;

	epc_configure();
	PLOAD(&p, 16);
	REQUIRE_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 7), 0);
	free0 = epc_free_now();
	REQUIRE(free0 > 2 && free0 != ~0ULL);
	pid = passive_child(hold, 0);
	REQUIRE(pid > 0);
	/* Of the free pages in index order the parent keeps the 1st, 3rd,
	 * ... one. */
	CHECK_EQ(epc_free_now(), (free0 + 1) / 2);
	CHECK(p.e->pg->shared);
	CHECK_EQ(sgxemu__reclaim_batch(true), 0);
	child_done(hold, pid);
	CHECK_EQ(epc_free_now(), free0);
	CHECK(!p.e->pg->shared);
	/* Reclaimed again: reading 16 MiB back through an 8 MiB EPC. */
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	evicted0 = ps.pages_evicted;
	REQUIRE_EQ(pcall(&p, 1, P_CHECK, 0, p.heap_pages, 7, &run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rsi, 0);
	CHECK_EQ(run.regs.rdx, expected_checksum(7, 0, p.heap_pages));
	REQUIRE_EQ(sgxemu_platform_stats(&ps), 0);
	CHECK(ps.pages_evicted > evicted0);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	CHECK_EQ(epc_free_now(), EPC_SIZE / 4096);
}

/* Linux frees an enclave's EPC with the last reference to it: destroyed
 * in the parent while a child may use it, its pages stay allocated until
 * the child has exited. */
TEST(paging_fork_destroy_while_the_child_lives_holds_the_pages)
{
	uint64_t at_fork, all = EPC_SIZE / 4096;
	struct pencl a, b;
	int hold[2];
	pid_t pid;

	epc_configure();
	PLOAD(&a, 1);
	pid = passive_child(hold, 0);
	REQUIRE(pid > 0);
	at_fork = epc_free_now();
	/* b comes after the fork: not shared, its pages come back at once. */
	PLOAD(&b, 1);
	CHECK_EQ(sgxemu_enclave_destroy(b.e), 0);
	CHECK_EQ(epc_free_now(), at_fork);
	CHECK_EQ(sgxemu_enclave_destroy(a.e), 0);
	CHECK_EQ(epc_free_now(), at_fork);
	child_done(hold, pid);
	CHECK_EQ(epc_free_now(), all);
}

/* An allocation that finds nothing free and nothing reclaimable while a
 * child shares the enclaves waits for the child to go, instead of
 * failing (on Linux the reclaimer would have evicted a shared page). */
TEST(paging_fork_allocation_waits_for_the_child)
{
	struct sgxemu_run run;
	struct pencl p;
	int hold[2];
	pid_t pid;

	epc_configure();
	PLOAD(&p, 16);
	REQUIRE_EQ(fill_and_check(&p, 0, 0, p.heap_pages, 5), 0);
	pid = passive_child(hold, 300);
	REQUIRE(pid > 0);
	/* Half the heap is evicted: reading it all needs reclaim. */
	REQUIRE_EQ(pcall(&p, 1, P_CHECK, 0, p.heap_pages, 5, &run), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rsi, 0);
	CHECK_EQ(run.regs.rdx, expected_checksum(5, 0, p.heap_pages));
	child_done(hold, pid);
	CHECK_EQ(sgxemu_enclave_destroy(p.e), 0);
	CHECK_EQ(epc_free_now(), EPC_SIZE / 4096);
}
