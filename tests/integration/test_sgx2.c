/* SPDX-License-Identifier: MIT */
/*
 * SGX2 / EDMM through an unmodified mainline host program under the shim
 * (tests/enclaves/sgx2_encl.h): a heap grown page by page by EACCEPT on
 * fault (EAUG), permissions restricted then EMODPE'd back, a page trimmed
 * and removed and then touched again, a TCS made at run time and entered,
 * and each SGX2 ioctl's bad inputs with the kernel's errno
 * (linux-driver-facts.md §7, §8; sgx-facts.md §4.13-4.25).
 *
 * The binary re-executes itself through `sgxemu run` when started without
 * the shim. On an SGX1 platform (SGXEMU_SGX2=0) only the ENODEV test runs.
 */
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <sys/wait.h>

#include "../enclaves/sgx2_encl.h"
#include "test.h"
#include "engine/engine.h"

#define REG_RW	(SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W)
#define EFL_ZF	0x40

static const char *no_shim;
static char counts_path[64];

__attribute__((constructor))
static void under_shim(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)envp;
	/* The shim's engine counts into this file (the same pid after
	 * the exec), where this program's own copy can read them. */
	const char *was = getenv("SGXEMU_TRAP_COUNTS");

	snprintf(counts_path, sizeof(counts_path),
		 "/tmp/sgxemu-test_sgx2.%d.counts", (int)getpid());
	/* A run of its own (this program run again by a test) too. */
	setenv("SGXEMU_TRAP_COUNTS", counts_path,
	       !was || !strncmp(was, counts_path, 20));
	no_shim = shim_reexec(argv);
}

__attribute__((destructor))
static void counts_gone(void)
{
	const char *v = getenv("SGXEMU_TRAP_COUNTS");

	if (v && !strcmp(v, counts_path))
		unlink(counts_path);
}

/*
 * One of the shim's counters (SGXEMU_TRAP_COUNTS), once its platform is
 * up (after an enclave was built): the file is mapped here too, then
 * removed if it is this run's own.
 */
static uint64_t shim_count(enum sgxemu_count idx)
{
	static bool mapped;

	if (!mapped) {
		sgxemu__traps_init();
		mapped = true;
		if (!strcmp(getenv("SGXEMU_TRAP_COUNTS"), counts_path))
			unlink(counts_path);
	}
	return sgxemu__count_total(idx);
}

static EVP_PKEY *key(void)
{
	static EVP_PKEY *k;

	if (!k)
		k = shim_load_key(test_signing_key());
	return k;
}

static bool sgx1_platform(void)
{
	const char *v = getenv("SGXEMU_SGX2");

	return v && !strcmp(v, "0");
}

/* Guard mode (SGXEMU_GUARD, as the platform reads it) makes host
 * accesses to ELRANGE fault on purpose. */
static bool guard_mode(void)
{
	const char *v = getenv("SGXEMU_GUARD");

	return v && *v && strcmp(v, "0");
}

#define BUILD(e) do { \
	if (no_shim) test_skip("%s", no_shim); \
	if (sgx1_platform()) test_skip("SGX1 platform (SGXEMU_SGX2=0)"); \
	REQUIRE(key()); \
	int _r = sgx2_encl_build(&(e), key(), SGX2_SIZE); \
	if (_r) test_fail(__FILE__, __LINE__, "build: %s", strerror(-_r)); \
	REQUIRE(_r == 0); \
	REQUIRE(shim_vdso_fn != NULL); \
} while (0)

static long ioctl_err(int fd, unsigned long cmd, void *arg)
{
	errno = 0;
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* One command on TCS 0 that must end in EEXIT; the mailbox's RAX. */
static uint64_t call(struct sgx2_encl *e, uint64_t op, uint64_t a, uint64_t b,
		     uint64_t c, struct sgx2_mail *m)
{
	struct sgx_enclave_run run;

	memset(m, 0, sizeof(*m));
	m->op = op;
	m->a = a;
	m->b = b;
	m->c = c;
	m->rax = ~0ULL;
	if (sgx2_call(e, SGX2_TCS0, m, &run) || run.function != SGX_EEXIT) {
		test_fail(__FILE__, __LINE__, "op %llu: not an EEXIT (function "
			  "%u, vector %u, addr 0x%llx)", (unsigned long long)op,
			  run.function, run.exception_vector,
			  (unsigned long long)run.exception_addr);
		return ~0ULL;
	}
	return m->rax;
}

static int restrict_perms(struct sgx2_encl *e, uint64_t off, uint64_t len,
			  uint64_t perms,
			  struct sgx_enclave_restrict_permissions *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->offset = off;
	rp->length = len;
	rp->permissions = perms;
	return (int)ioctl_err(e->fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, rp);
}

static int modify_types(struct sgx2_encl *e, uint64_t off, uint64_t len,
			uint64_t type, struct sgx_enclave_modify_types *mt)
{
	memset(mt, 0, sizeof(*mt));
	mt->offset = off;
	mt->length = len;
	mt->page_type = type;
	return (int)ioctl_err(e->fd, SGX_IOC_ENCLAVE_MODIFY_TYPES, mt);
}

static int remove_pages(struct sgx2_encl *e, uint64_t off, uint64_t len,
			struct sgx_enclave_remove_pages *rm)
{
	memset(rm, 0, sizeof(*rm));
	rm->offset = off;
	rm->length = len;
	return (int)ioctl_err(e->fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, rm);
}

/*
 * A load by the enclave on TCS 1 that must fault with the SGX bit (an
 * EPCM-pending page, or a page that is no data): the thread is left in
 * its AEX for a later ERESUME, which completes mailbox @m (so @m must
 * live until then). Inlined: the ERESUME must come from the stack depth
 * of this EENTER, the test body's (see sgx2_call).
 */
static inline __attribute__((always_inline)) void load_faults(struct sgx2_encl *e, uint64_t addr,
			struct sgx2_mail *m, struct sgx_enclave_run *run)
{
	memset(m, 0, sizeof(*m));
	m->op = SGX2_OP_LOAD;
	m->a = addr;
	CHECK_EQ(sgx2_call(e, SGX2_TCS1, m, run), 0);
	CHECK_EQ(run->function, SGX_ERESUME);
	CHECK_EQ(run->exception_vector, X86_TRAP_PF);
	CHECK(run->exception_error_code & X86_PF_SGX);
	CHECK_EQ(run->exception_addr, addr);
}

/* --- EAUG on fault + EACCEPT ------------------------------------------------- */

static sigjmp_buf nopage_jmp;
static volatile int nopage_sig, nopage_code;
static void *volatile nopage_addr;

static void on_nopage(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	nopage_sig = sig;
	nopage_code = si->si_code;
	nopage_addr = si->si_addr;
	siglongjmp(nopage_jmp, 1);
}

/* @fn(@a, @b) under on_nopage for SIGBUS and SIGSEGV: the signal it got
 * (0 for none), with nopage_code and nopage_addr. */
static int nopage_run(void (*fn)(uint64_t a, uint64_t b), uint64_t a,
		      uint64_t b)
{
	struct sigaction sa, old_bus, old_segv;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_nopage;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	nopage_sig = 0;
	nopage_addr = NULL;
	if (!sigsetjmp(nopage_jmp, 1))
		fn(a, b);
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return nopage_sig;
}

/* EENTER by host ENCLU with mailbox @mail on the TCS at @tcs. */
static void enter_fn(uint64_t mail, uint64_t tcs)
{
	host_enclu_eenter((unsigned long)mail, 0, 0, tcs);
}

static void load_fn(uint64_t addr, uint64_t unused)
{
	(void)unused;
	(void)*(volatile uint64_t *)(uintptr_t)addr;
}

/*
 * On an SGX1 part an enclave store to an ELRANGE address with no page,
 * inside a window that allows it: the kernel's fault handler finds no
 * page and sends SIGBUS (BUS_ADRERR; linux-driver-facts §8.1 step 3.1),
 * not the SIGSEGV of an ordinary #PF. (On SGX2 the same store EAUGs.)
 * Entered by host ENCLU so that the program's handlers get the signal.
 */
TEST(sgx1_enclave_access_to_no_page_is_sigbus)
{
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t page;
	int r;

	if (no_shim)
		test_skip("%s", no_shim);
	if (!sgx1_platform())
		test_skip("SGX2 platform: the access EAUGs (run again with "
			  "SGXEMU_SGX2=0 by test_shim.sh)");
	REQUIRE(key());
	r = sgx2_encl_build(&e, key(), SGX2_SIZE);
	REQUIRE_EQ(r, 0);
	page = e.base + SGX2_HEAP + 0x3000;
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_STORE;
	m.a = page + 8;
	m.b = 0x1234;
	CHECK_EQ(nopage_run(enter_fn, (uint64_t)(uintptr_t)&m,
			    e.base + SGX2_TCS0), SIGBUS);
	CHECK_EQ(nopage_code, BUS_ADRERR);
	CHECK_EQ((uint64_t)(uintptr_t)nopage_addr & ~0xfffULL, page);
	sgx2_encl_destroy(&e);
}

/* Every window of sgx2_encl_map() but the one at @skip. */
static int map_all_but(struct sgx2_encl *e, uint64_t skip)
{
	int ret = 0;

	for (size_t i = 0; i < SGX2_NR_PAGES && !ret; i++)
		if (sgx2_pages[i].offset != skip)
			ret = sgx2_mmap(e, e->base + sgx2_pages[i].offset, 4096,
					sgx2_pages[i].prot);
	if (!ret)
		ret = sgx2_mmap(e, e->base + SGX2_HEAP, e->size - SGX2_HEAP,
				PROT_READ | PROT_WRITE);
	return ret;
}

/*
 * The test enclave with the window at @off mapped @prot before its page
 * is added, the others after INIT: 0, or -errno (*@at_mmap when it was
 * that first mmap which failed).
 */
static int build_window_first(struct sgx2_encl *e, uint64_t off, int prot,
			      bool *at_mmap)
{
	int r = sgx2_encl_create(e, SGX2_SIZE);

	*at_mmap = false;
	if (r)
		return r;
	r = sgx2_mmap(e, e->base + off, 4096, prot);
	if (r) {
		*at_mmap = true;
		return r;
	}
	r = sgx2_encl_add(e);
	if (!r)
		r = sgx2_encl_init(e, key());
	if (!r)
		r = map_all_but(e, off);
	if (!shim_vdso_fn)
		shim_vdso_fn = shim_vdso_sym("__vdso_sgx_enter_enclave");
	return r;
}

/* Read @addr from the host: the signal it got (0 for none). Guard mode's
 * own fault (SIGSEGV, before any driver) counts as @want. */
static int host_load_signal(uint64_t addr, int want)
{
	nopage_run(load_fn, addr, 0);
	if (guard_mode() && nopage_sig == SIGSEGV) {
		nopage_code = want == SIGBUS ? BUS_ADRERR : 0;
		return want;
	}
	return nopage_sig;
}

/*
 * A window mapped before its page was added, and granting more than the
 * page may ever have (RW over a read-only page, which mmap could not check
 * then): the kernel's fault handler never maps the page and answers every
 * access with SIGBUS (linux-driver-facts §8.1 step 3.2), host or enclave,
 * until mprotect narrows the window to what the page allows.
 */
TEST(window_wider_than_a_later_page_is_sigbus)
{
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m, m1;
	bool at_mmap;
	uint64_t ro;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE(key());
	REQUIRE_EQ(build_window_first(&e, SGX2_RO, PROT_READ | PROT_WRITE,
				      &at_mmap), 0);
	ro = e.base + SGX2_RO;

	/* The host's read. */
	CHECK_EQ(host_load_signal(ro + 64, SIGBUS), SIGBUS);
	CHECK_EQ(nopage_code, BUS_ADRERR);
	CHECK_EQ((uint64_t)(uintptr_t)nopage_addr, ro + 64);

	/* The enclave's, through the vDSO: fixed up as vector 14, the
	 * not-present error code (no PTE), the page's address. */
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_LOAD;
	m.a = ro + 64;
	m.rax = ~0ULL;
	CHECK_EQ(sgx2_call(&e, SGX2_TCS0, &m, &run), 0);
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK_EQ(run.exception_error_code & (X86_PF_PROT | X86_PF_SGX), 0);
	CHECK_EQ(run.exception_addr, ro);

	/* The enclave's, by host ENCLU: the program's SIGBUS handler. */
	memset(&m1, 0, sizeof(m1));
	m1.op = SGX2_OP_LOAD;
	m1.a = ro + 64;
	CHECK_EQ(nopage_run(enter_fn, (uint64_t)(uintptr_t)&m1,
			    e.base + SGX2_TCS1), SIGBUS);
	CHECK_EQ(nopage_code, BUS_ADRERR);
	CHECK_EQ((uint64_t)(uintptr_t)nopage_addr & ~0xfffULL, ro);

	/* Wider still is refused now that the page exists (§2.5); the
	 * page's own permissions open it, and the stopped load finishes. */
	errno = 0;
	CHECK_EQ(mprotect((void *)(uintptr_t)ro, 4096,
			  PROT_READ | PROT_WRITE | PROT_EXEC), -1);
	CHECK_EQ(errno, EACCES);
	CHECK_EQ(host_load_signal(ro + 64, SIGBUS), SIGBUS);
	CHECK_EQ(mprotect((void *)(uintptr_t)ro, 4096, PROT_READ), 0);
	CHECK_EQ(host_load_signal(ro + 64, 0), 0);
	CHECK_EQ(sgx2_eresume(&e, SGX2_TCS0, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(m.rax, 0x5a5a5a5a5a5a5a5aULL);
	sgx2_encl_destroy(&e);
}

/*
 * The same for a TCS added under a window wider than RW, its maximum:
 * EENTER's access to it is the #PF the driver answers with SIGBUS, at
 * the vDSO (vector 14 at the TCS) and by host ENCLU alike.
 */
TEST(tcs_added_under_a_wider_window_is_sigbus_at_eenter)
{
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	bool at_mmap;
	uint64_t tcs;
	int r;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE(key());
	r = build_window_first(&e, SGX2_TCS1,
			       PROT_READ | PROT_WRITE | PROT_EXEC, &at_mmap);
	if (r && at_mmap) {
		sgx2_encl_destroy(&e);
		test_skip("an RWX window is refused here (%s)", strerror(-r));
	}
	REQUIRE_EQ(r, 0);
	tcs = e.base + SGX2_TCS1;

	memset(&m, 0, sizeof(m));
	CHECK_EQ(sgx2_call(&e, SGX2_TCS1, &m, &run), 0);
	CHECK_EQ(run.function, SGX_EENTER);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK_EQ(run.exception_error_code & (X86_PF_PROT | X86_PF_SGX), 0);
	CHECK_EQ(run.exception_addr, tcs);

	CHECK_EQ(nopage_run(enter_fn, (uint64_t)(uintptr_t)&m, tcs), SIGBUS);
	CHECK_EQ(nopage_code, BUS_ADRERR);
	CHECK_EQ((uint64_t)(uintptr_t)nopage_addr, tcs);

	/* Narrowed to RW: entered, EEXIT with RBX = the TCS. */
	REQUIRE_EQ(mprotect((void *)(uintptr_t)tcs, 4096,
			    PROT_READ | PROT_WRITE), 0);
	memset(&m, 0, sizeof(m));
	CHECK_EQ(sgx2_call(&e, SGX2_TCS1, &m, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(m.rbx, tcs);
	sgx2_encl_destroy(&e);
}

TEST(heap_grows_page_by_page_with_eaccept)
{
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t heap, n = 256;		/* 1 MiB */

	BUILD(e);
	heap = e.base + SGX2_HEAP;
	/* Each EACCEPT faults (#PF, no page), the driver EAUGs, ERESUME
	 * runs the EACCEPT again; then the page is written and read. */
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap, n, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, heap + 17 * 4096, 0, 0, &m),
		 heap + 17 * 4096);
	/* Accepting again: no longer pending, SGX_PAGE_ATTRIBUTES_MISMATCH. */
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PENDING, heap,
		      0, &m), SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK(m.rflags & EFL_ZF);
	/* An EAUGed page is zero-filled. */
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap + n * 4096, 1, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, heap + n * 4096 + 8, 0, 0, &m), 0);
	sgx2_encl_destroy(&e);
}

/* Signals the engine took other than ENCLU's traps and the ticks'. */
static uint64_t fault_signals(void)
{
	return shim_count(SGXEMU_C_SIGILL) + shim_count(SGXEMU_C_SIGSEGV) +
	       shim_count(SGXEMU_C_SIGSYS) + shim_count(SGXEMU_C_SIG_OTHER) -
	       shim_count(SGXEMU_C_HOST_ENCLU) -
	       shim_count(SGXEMU_C_ENCLAVE_ENCLU) -
	       shim_count(SGXEMU_C_TICK_HOST) - shim_count(SGXEMU_C_TICK_AEX);
}

TEST(access_before_eaccept_is_an_epcm_fault)
{
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m, acc;
	uint64_t page, sig0, aex0;

	BUILD(e);
	page = e.base + SGX2_HEAP + 0x40000;
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_STORE;
	m.a = page + 8;
	m.b = 0x1234;
	sig0 = fault_signals();
	aex0 = shim_count(SGXEMU_C_AEX) - shim_count(SGXEMU_C_TICK_AEX);
	CHECK_EQ(sgx2_call(&e, SGX2_TCS0, &m, &run), 0);
	/* One fault to the engine: the EAUG, and then at once the #PF the
	 * store would take again on the pending page, with its AEX. */
	CHECK_EQ(fault_signals() - sig0, 1);
	CHECK_EQ(shim_count(SGXEMU_C_AEX) - shim_count(SGXEMU_C_TICK_AEX) -
		 aex0, 1);
	/* The first fault EAUGed the page unseen; the retried store hits a
	 * PENDING page: #PF with the SGX bit, reported through run. */
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK(run.exception_error_code & X86_PF_SGX);
	CHECK(run.exception_error_code & X86_PF_WRITE);
	CHECK_EQ(run.exception_addr, page);
	/* The enclave accepts it (EENTER on SSA frame 1), then ERESUME
	 * finishes the store. */
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PENDING, page,
		      0, &acc), 0);
	CHECK_EQ(sgx2_eresume(&e, SGX2_TCS0, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, page + 8, 0, 0, &m), 0x1234);
	sgx2_encl_destroy(&e);
}

TEST(eacceptcopy_fills_a_pending_page)
{
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t page;

	BUILD(e);
	page = e.base + SGX2_HEAP + 0x80000;
	/* Make the page exist: the first touch EAUGs it, then faults. */
	load_faults(&e, page, &m, &run);
	/* Copy the read-only page into it, read-only. */
	CHECK_EQ(call(&e, SGX2_OP_EACCEPTCOPY, SGX_SECINFO_REG | SGX_SECINFO_R,
		      page, e.base + SGX2_RO, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, page + 64, 0, 0, &m),
		 0x5a5a5a5a5a5a5a5aULL);
	/* TCS 1 resumes its load, which now succeeds. */
	CHECK_EQ(sgx2_eresume(&e, SGX2_TCS1, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	sgx2_encl_destroy(&e);
}

/* --- RESTRICT_PERMISSIONS + EACCEPT, EMODPE ------------------------------------ */

TEST(restrict_then_emodpe_back)
{
	struct sgx_enclave_restrict_permissions rp;
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t page;

	BUILD(e);
	page = e.base + SGX2_RW0;
	CHECK_EQ(call(&e, SGX2_OP_STORE, page, 0x77, 0, &m), 0);
	REQUIRE_EQ(restrict_perms(&e, SGX2_RW0, 4096, SGX_SECINFO_R, &rp), 0);
	CHECK_EQ(rp.result, 0);
	CHECK_EQ(rp.count, 4096);
	/* The restriction is in force before the EACCEPT: a write faults
	 * with the SGX bit. */
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_STORE;
	m.a = page;
	m.b = 0x88;
	CHECK_EQ(sgx2_call(&e, SGX2_TCS1, &m, &run), 0);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK(run.exception_error_code & X86_PF_SGX);
	/* Accept with the wrong permissions, then the right ones. */
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PR, page, 0, &m),
		 SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_REG | SGX_SECINFO_R |
		      SGX_SECINFO_PR, page, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, page, 0, 0, &m), 0x77);
	/* Back to RW from inside: EMODPE, and TCS 1's store completes. */
	CHECK_EQ(call(&e, SGX2_OP_EMODPE, SGX_SECINFO_W | SGX_SECINFO_R, page,
		      0, &m), 0);
	CHECK_EQ(sgx2_eresume(&e, SGX2_TCS1, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, page, 0, 0, &m), 0x88);
	/* Restricting a pending page: SGX_PAGE_NOT_MODIFIABLE in result. */
	{
		uint64_t p = e.base + SGX2_HEAP + 0x100000;

		load_faults(&e, p, &m, &run);
		CHECK_EQ(restrict_perms(&e, p - e.base, 4096, SGX_SECINFO_R, &rp),
			 EFAULT);
		CHECK_EQ(rp.result, SGX_PAGE_NOT_MODIFIABLE);
		CHECK_EQ(rp.count, 0);
	}
	sgx2_encl_destroy(&e);
}

static volatile uint64_t spin_go, spin_in;
static struct sgx2_encl *spin_encl;
static struct sgx2_mail spin_mail;
static struct sgx_enclave_run spin_run;

static void *spinner(void *arg)
{
	(void)arg;
	memset(&spin_mail, 0, sizeof(spin_mail));
	spin_mail.op = SGX2_OP_SPIN;
	spin_mail.a = (uint64_t)(uintptr_t)&spin_go;
	spin_mail.b = (uint64_t)(uintptr_t)&spin_in;
	sgx2_call(spin_encl, SGX2_TCS1, &spin_mail, &spin_run);
	return NULL;
}

/*
 * The ETRACK + IPI after EMODPR (facts §7.2): a thread that was in the
 * enclave before the ioctl is made to leave enclave mode (AEX, then it
 * resumes), so the EACCEPT that follows the ioctl is never NOT_TRACKED.
 */
TEST(restrict_kicks_threads_inside_then_eaccept_is_tracked)
{
	struct sgx_enclave_restrict_permissions rp;
	struct sgx2_encl e;
	struct sgx2_mail m;
	pthread_t t;

	BUILD(e);
	spin_encl = &e;
	spin_go = 0;
	spin_in = 0;
	REQUIRE_EQ(pthread_create(&t, NULL, spinner, NULL), 0);
	for (int i = 0; i < 20000 && !spin_in; i++)
		usleep(100);
	REQUIRE(spin_in);
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, SGX_SECINFO_R, &rp), 0);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_REG | SGX_SECINFO_R |
		      SGX_SECINFO_PR, e.base + SGX2_RW1, 0, &m), 0);
	CHECK(!(m.rflags & EFL_ZF));
	spin_go = 1;
	pthread_join(t, NULL);
	CHECK_EQ(spin_run.function, SGX_EEXIT);
	CHECK_EQ(spin_mail.rax, 0);
	sgx2_encl_destroy(&e);
}

TEST(restrict_wrong_type_and_partial_count)
{
	struct sgx_enclave_restrict_permissions rp;
	struct sgx2_encl e;

	BUILD(e);
	/* RW0, RW1 are REG, then the TCS-to-be page, then SSA pages; the TCS
	 * at 0 stops the range at once. */
	CHECK_EQ(restrict_perms(&e, SGX2_TCS0, 4096, SGX_SECINFO_R, &rp), EINVAL);
	CHECK_EQ(rp.count, 0);
	/* A range running into an absent page: EFAULT after two pages. */
	CHECK_EQ(restrict_perms(&e, 0xe000, 0x4000, SGX_SECINFO_R | SGX_SECINFO_W,
				&rp), EFAULT);
	CHECK_EQ(rp.count, 0);
	CHECK_EQ(restrict_perms(&e, 0xc000, 0x4000, SGX_SECINFO_R | SGX_SECINFO_W,
				&rp), EFAULT);
	CHECK_EQ(rp.count, 0x2000);
	CHECK_EQ(rp.result, 0);
	sgx2_encl_destroy(&e);
}

/* --- MODIFY_TYPES: trim + remove, a TCS made at run time ----------------------- */

TEST(trim_remove_then_access_again)
{
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_remove_pages rm;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t heap, off;

	BUILD(e);
	heap = e.base + SGX2_HEAP + 0x200000;
	off = heap - e.base;
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap, 2, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_STORE, heap, 0xdead, 0, &m), 0);
	REQUIRE_EQ(modify_types(&e, off, 8192, SGX_PT_TRIM, &mt), 0);
	CHECK_EQ(mt.count, 8192);
	CHECK_EQ(mt.result, 0);
	/* Not accepted yet: REMOVE_PAGES refuses (EPERM), nothing done. */
	CHECK_EQ(remove_pages(&e, off, 8192, &rm), EPERM);
	CHECK_EQ(rm.count, 0);
	/* A trimmed page accepted as something else: mismatch. */
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_TCS | SGX_SECINFO_MODIFIED,
		      heap, 0, &m), SGX_PAGE_ATTRIBUTES_MISMATCH);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_TRIM | SGX_SECINFO_MODIFIED,
		      heap, 0, &m), 0);
	/* One accepted, one not: the first goes, the second is EPERM. */
	CHECK_EQ(remove_pages(&e, off, 8192, &rm), EPERM);
	CHECK_EQ(rm.count, 4096);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_TRIM | SGX_SECINFO_MODIFIED,
		      heap + 4096, 0, &m), 0);
	CHECK_EQ(remove_pages(&e, off + 4096, 4096, &rm), 0);
	CHECK_EQ(rm.count, 4096);
	/* Removed twice: no page there any more, EFAULT. */
	CHECK_EQ(remove_pages(&e, off, 4096, &rm), EFAULT);
	/* Trimming a removed page: EFAULT too. */
	CHECK_EQ(modify_types(&e, off, 4096, SGX_PT_TRIM, &mt), EFAULT);
	/* The address comes back as a fresh, zeroed page on the next
	 * EACCEPT (EAUG on fault). */
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap, 1, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, heap + 8, 0, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, heap, 0, 0, &m), heap);
	sgx2_encl_destroy(&e);
}

/* The enclave writes a TCS into its REG page at @t: STATE 0 (a grown
 * page holds its address there), OSSA, NSSA 2, OENTRY. */
static void write_tcs(struct sgx2_encl *e, uint64_t t)
{
	struct sgx2_mail m;

	CHECK_EQ(call(e, SGX2_OP_STORE, t, 0, 0, &m), 0);
	CHECK_EQ(call(e, SGX2_OP_STORE, t + 16, SGX2_NEWSSA, 0, &m), 0);
	CHECK_EQ(call(e, SGX2_OP_STORE, t + 24, 2ULL << 32, 0, &m), 0);
	CHECK_EQ(call(e, SGX2_OP_STORE, t + 32, SGX2_CODE, 0, &m), 0);
}

TEST(tcs_created_at_run_time_and_entered)
{
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t t;

	BUILD(e);
	t = e.base + SGX2_NEWTCS;
	/* The enclave writes a TCS into its REG page. */
	write_tcs(&e, t);
	/* Not a TCS yet: EENTER faults. */
	memset(&m, 0, sizeof(m));
	CHECK(sgx2_call(&e, SGX2_NEWTCS, &m, &run) != 0 ||
	      run.function != SGX_EEXIT);
	REQUIRE_EQ(modify_types(&e, SGX2_NEWTCS, 4096, SGX_PT_TCS, &mt), 0);
	CHECK_EQ(mt.count, 4096);
	/* A TCS the enclave has not accepted: still no entry. */
	memset(&m, 0, sizeof(m));
	CHECK(sgx2_call(&e, SGX2_NEWTCS, &m, &run) != 0 ||
	      run.function != SGX_EEXIT);
	/* TCS -> TCS is not a transition; a modified TCS is not trimmable */
	CHECK_EQ(modify_types(&e, SGX2_NEWTCS, 4096, SGX_PT_TCS, &mt), EINVAL);
	CHECK_EQ(modify_types(&e, SGX2_NEWTCS, 4096, SGX_PT_TRIM, &mt), EFAULT);
	CHECK_EQ(mt.result, SGX_PAGE_NOT_MODIFIABLE);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_TCS | SGX_SECINFO_MODIFIED,
		      t, 0, &m), 0);
	/* Entered on the new TCS: EEXIT with RBX = that TCS. */
	memset(&m, 0, sizeof(m));
	CHECK_EQ(sgx2_call(&e, SGX2_NEWTCS, &m, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(m.rax, 0x7c5);
	CHECK_EQ(m.rbx, t);
	/* Its page is no longer data for the enclave. */
	load_faults(&e, t, &m, &run);
	sgx2_encl_destroy(&e);
}

/*
 * A page made a TCS under an executable window: the kernel zaps its PTEs
 * and lowers its maximum to RW (linux-driver-facts §2.4, §7.4), so the
 * enclave's EACCEPT of it takes a #PF the fault handler refuses (§8.1
 * step 3.2: SIGBUS, fixed up at the vDSO) until the window is narrowed.
 */
TEST(tcs_made_under_an_executable_window_is_sigbus_until_narrowed)
{
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t t;

	BUILD(e);
	t = e.base + SGX2_HEAP + 0x20000;
	/* An EAUGed page may be mapped with every permission. */
	CHECK_EQ(call(&e, SGX2_OP_GROW, t, 1, 0, &m), 0);
	REQUIRE_EQ(mprotect((void *)(uintptr_t)t, 4096,
			    PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	write_tcs(&e, t);
	REQUIRE_EQ(modify_types(&e, t - e.base, 4096, SGX_PT_TCS, &mt), 0);
	/* EACCEPT's page walk: #PF, the driver's SIGBUS, vector 14. */
	memset(&m, 0, sizeof(m));
	m.op = SGX2_OP_EACCEPT;
	m.a = SGX_SECINFO_TCS | SGX_SECINFO_MODIFIED;
	m.b = t;
	m.rax = ~0ULL;
	CHECK_EQ(sgx2_call(&e, SGX2_TCS0, &m, &run), 0);
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK_EQ(run.exception_error_code & (X86_PF_PROT | X86_PF_SGX), 0);
	CHECK_EQ(run.exception_addr, t);
	/* RWX now exceeds the page; RW is what it allows. */
	errno = 0;
	CHECK_EQ(mprotect((void *)(uintptr_t)t, 4096,
			  PROT_READ | PROT_WRITE | PROT_EXEC), -1);
	CHECK_EQ(errno, EACCES);
	REQUIRE_EQ(mprotect((void *)(uintptr_t)t, 4096,
			    PROT_READ | PROT_WRITE), 0);
	CHECK_EQ(sgx2_eresume(&e, SGX2_TCS0, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(m.rax, 0);
	memset(&m, 0, sizeof(m));
	CHECK_EQ(sgx2_call(&e, t - e.base, &m, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(m.rbx, t);
	sgx2_encl_destroy(&e);
}

TEST(modify_types_rules)
{
	struct sgx_enclave_modify_types mt;
	struct sgx2_encl e;

	BUILD(e);
	/* The read-only page cannot become a TCS (no W at build time). */
	CHECK_EQ(modify_types(&e, SGX2_RO, 4096, SGX_PT_TCS, &mt), EPERM);
	CHECK_EQ(mt.count, 0);
	/* Types other than TCS and TRIM, bits above 7:0. */
	CHECK_EQ(modify_types(&e, SGX2_RW1, 4096, SGX_PT_REG, &mt), EINVAL);
	CHECK_EQ(modify_types(&e, SGX2_RW1, 4096, SGX_PT_SECS, &mt), EINVAL);
	CHECK_EQ(modify_types(&e, SGX2_RW1, 4096, 0x104, &mt), EINVAL);
	/* A TCS EADDed at build time can be trimmed. */
	CHECK_EQ(modify_types(&e, SGX2_TCS1, 4096, SGX_PT_TRIM, &mt), 0);
	CHECK_EQ(mt.count, 4096);
	/* TRIM -> anything: EINVAL. */
	CHECK_EQ(modify_types(&e, SGX2_TCS1, 4096, SGX_PT_TCS, &mt), EINVAL);
	sgx2_encl_destroy(&e);
}

/* --- bad inputs ----------------------------------------------------------------- */

TEST(sgx2_ioctls_bad_inputs)
{
	struct sgx_enclave_restrict_permissions rp;
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_remove_pages rm;
	struct sgx2_encl e;
	static const struct { uint64_t off, len; } bad[] = {
		{ 0x9001, 4096 },		/* unaligned offset */
		{ 0x9000, 100 },		/* unaligned length */
		{ 0x9000, 0 },			/* zero length */
		{ SGX2_SIZE, 4096 },		/* outside ELRANGE */
		{ SGX2_SIZE - 4096, 8192 },	/* runs out of it */
		{ ~0xfffULL, 0x2000 },		/* wraps */
	};

	BUILD(e);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(restrict_perms(&e, bad[i].off, bad[i].len, SGX_SECINFO_R,
					&rp), EINVAL);
		CHECK_EQ(modify_types(&e, bad[i].off, bad[i].len, SGX_PT_TRIM,
				      &mt), EINVAL);
		CHECK_EQ(remove_pages(&e, bad[i].off, bad[i].len, &rm), EINVAL);
	}
	/* Nonzero output fields on input, reserved permission bits, W
	 * without R. */
	memset(&rp, 0, sizeof(rp));
	rp.offset = SGX2_RW1;
	rp.length = 4096;
	rp.permissions = SGX_SECINFO_R;
	rp.count = 4096;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, &rp),
		 EINVAL);
	rp.count = 0;
	rp.result = 1;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, &rp),
		 EINVAL);
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, 8, &rp), EINVAL);
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, SGX_SECINFO_W, &rp), EINVAL);
	memset(&mt, 0, sizeof(mt));
	mt.offset = SGX2_RW1;
	mt.length = 4096;
	mt.page_type = SGX_PT_TRIM;
	mt.result = 5;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_MODIFY_TYPES, &mt), EINVAL);
	memset(&rm, 0, sizeof(rm));
	rm.offset = SGX2_RW1;
	rm.length = 4096;
	rm.count = 1;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, &rm), EINVAL);
	/* A bad argument pointer. */
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, (void *)8), EFAULT);
	/* An absent page; a REG page to remove. */
	CHECK_EQ(remove_pages(&e, SGX2_HEAP, 4096, &rm), EFAULT);
	CHECK_EQ(remove_pages(&e, SGX2_RW1, 4096, &rm), EPERM);
	/* Twice: restricting again is fine for the kernel (EMODPR of a
	 * PR page), and so is asking for more (EMODPR ignores it). */
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, SGX_SECINFO_R, &rp), 0);
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, SGX_SECINFO_R, &rp), 0);
	CHECK_EQ(restrict_perms(&e, SGX2_RW1, 4096, 7, &rp), 0);
	/* Trimming twice: the second meets a MODIFIED page. */
	CHECK_EQ(modify_types(&e, SGX2_RW1, 4096, SGX_PT_TRIM, &mt), 0);
	CHECK_EQ(modify_types(&e, SGX2_RW1, 4096, SGX_PT_TRIM, &mt), EINVAL);
	sgx2_encl_destroy(&e);
}

TEST(sgx2_ioctls_before_init_and_on_sgx1)
{
	struct sgx_enclave_restrict_permissions rp;
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_remove_pages rm;
	long want = sgx1_platform() ? ENODEV : EINVAL;
	struct sgx2_encl e;
	int fd;

	if (no_shim)
		test_skip("%s", no_shim);
	/* Not even created. */
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	memset(&rm, 0, sizeof(rm));
	rm.length = 4096;
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, &rm), want);
	close(fd);
	/* Created and added, not initialised. */
	REQUIRE_EQ(sgx2_encl_create(&e, SGX2_SIZE), 0);
	REQUIRE_EQ(sgx2_encl_add(&e), 0);
	CHECK_EQ(restrict_perms(&e, SGX2_RW0, 4096, SGX_SECINFO_R, &rp), want);
	CHECK_EQ(modify_types(&e, SGX2_RW0, 4096, SGX_PT_TRIM, &mt), want);
	CHECK_EQ(remove_pages(&e, SGX2_RW0, 4096, &rm), want);
	/* ENODEV comes before the argument is read. */
	if (sgx1_platform())
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, (void *)8),
			 ENODEV);
	sgx2_encl_destroy(&e);
}

/* --- host code on pages the enclave cannot use ------------------------------------ */

static sigjmp_buf touch_jb;
static volatile int touch_sig;

static void touch_fault(int sig, siginfo_t *si, void *ctx)
{
	(void)si;
	(void)ctx;
	touch_sig = sig;
	siglongjmp(touch_jb, 1);
}

/* The u64 at @a read (or @v written) by this host program: the signal
 * it got (0: none), the value read in *@out. */
/* What a host library does to a page: @op(@a, @buf) under handlers that
 * catch a fault (returned; 0 for none). */
static int guarded(void (*op)(uint64_t a, uint8_t *buf), uint64_t a,
		   uint8_t *buf)
{
	struct sigaction sa, old[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = touch_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old[0]);
	sigaction(SIGBUS, &sa, &old[1]);
	touch_sig = 0;
	if (!sigsetjmp(touch_jb, 1))
		op(a, buf);
	sigaction(SIGSEGV, &old[0], NULL);
	sigaction(SIGBUS, &old[1], NULL);
	return touch_sig;
}

static volatile uint64_t touch_v, touch_r;
static volatile bool touch_w;

static void touch_op(uint64_t a, uint8_t *buf)
{
	(void)buf;
	if (touch_w)
		*(volatile uint64_t *)(uintptr_t)a = touch_v;
	else
		touch_r = *(volatile uint64_t *)(uintptr_t)a;
}

static int touch(uint64_t a, bool write, uint64_t v, uint64_t *out)
{
	int sig;

	touch_w = write;
	touch_v = v;
	touch_r = 0;
	sig = guarded(touch_op, a, NULL);
	*out = touch_r;
	return sig;
}

/* An abort page for host code: a read of all ones and no signal. */
#define ABORT_READ(a) do { \
	uint64_t _v; \
	CHECK_EQ(touch((a), false, 0, &_v), 0); \
	CHECK_EQ(_v, ~0ULL); \
} while (0)
#define ABORT_WRITE(a, v) do { \
	uint64_t _v; \
	CHECK_EQ(touch((a), true, (v), &_v), 0); \
} while (0)

/*
 * Host code touching an EPCM-PENDING page, a MODIFIED (trimmed, not yet
 * accepted) page, and an address REMOVE_PAGES emptied: the kernel maps
 * the EPC page (or EAUGs a new one) and the hardware gives non-enclave
 * code abort-page semantics, so there is no signal, reads return all
 * ones and writes are lost (linux-driver-facts.md §8.1-8.3, §7.5).
 * The engine must hand host faults to the driver's hook for this
 * (sgxemu__paging_host_access, src/driver/paging.h): until engine.h says
 * it does (SGXEMU_ENCL_OPS_HOST_ACCESS) the program gets SIGSEGV.
 */
TEST(host_access_to_pending_modified_and_removed_pages)
{
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_remove_pages rm;
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t p, t;

#ifndef SGXEMU_ENCL_OPS_HOST_ACCESS
	test_skip("the engine does not call the driver's host-fault hook yet "
		  "(struct sgxemu_encl_ops .host_access)");
#endif
	if (guard_mode())
		test_skip("guard mode (SGXEMU_GUARD)");
	BUILD(e);
	/* PENDING: the enclave's touch EAUGed it and faulted. */
	p = e.base + SGX2_HEAP + 0x180000;
	load_faults(&e, p, &m, &run);
	ABORT_READ(p + 16);
	ABORT_WRITE(p + 16, 0x99);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PENDING, p, 0,
		      &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, p + 16, 0, 0, &m), 0);
	/* MODIFIED: trimmed, not accepted, then accepted. */
	t = e.base + SGX2_RW1;
	CHECK_EQ(call(&e, SGX2_OP_STORE, t, 0xfeed, 0, &m), 0);
	REQUIRE_EQ(modify_types(&e, SGX2_RW1, 4096, SGX_PT_TRIM, &mt), 0);
	ABORT_READ(t);
	ABORT_WRITE(t, 1);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, SGX_SECINFO_TRIM |
		      SGX_SECINFO_MODIFIED, t, 0, &m), 0);
	ABORT_READ(t);
	/* Removed: the access EAUGs a fresh, zeroed page. */
	REQUIRE_EQ(remove_pages(&e, SGX2_RW1, 4096, &rm), 0);
	ABORT_READ(t + 8);
	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PENDING, t, 0,
		      &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, t, 0, 0, &m), 0);
	sgx2_encl_destroy(&e);
}

static void copy_page_out(uint64_t a, uint8_t *buf)
{
	memcpy(buf, (const void *)(uintptr_t)a, 4096);
}

static void copy_some_out(uint64_t a, uint8_t *buf)
{
	memcpy(buf, (const void *)(uintptr_t)(a + 100), 200);
}

static void fill_page(uint64_t a, uint8_t *buf)
{
	(void)buf;
	memset((void *)(uintptr_t)a, 0x77, 4096);
}

static void rep_movsb_out(uint64_t a, uint8_t *buf)
{
	const void *src = (const void *)(uintptr_t)a;
	void *dst = buf;
	size_t n = 64;

	__asm__ volatile("rep movsb" : "+S"(src), "+D"(dst), "+c"(n)
			 : : "memory");
}

static void fetch_add(uint64_t a, uint8_t *buf)
{
	uint64_t old = __atomic_fetch_add((uint64_t *)(uintptr_t)a, 1,
					  __ATOMIC_SEQ_CST);

	memcpy(buf, &old, 8);
}

static void avx_copy_out(uint64_t a, uint8_t *buf)
{
	__asm__ volatile("vmovdqu (%0), %%ymm0\n\tvmovdqu %%ymm0, (%1)"
			 : : "r"(a), "r"(buf) : "xmm0", "memory");
}

static bool all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * The C library on a PENDING page: memcpy (vector moves, or REP MOVSB for
 * a whole page), memset, an atomic add, AVX loads and stores. With the
 * abort-page semantics of hardware, nothing faults, every read is all
 * ones, and no write reaches the page (EACCEPT then finds it zero).
 */
TEST(host_library_code_on_a_pending_page)
{
	static uint8_t buf[4096];
	struct sgx_enclave_run run;
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t p;

	if (guard_mode())
		test_skip("guard mode (SGXEMU_GUARD)");
	BUILD(e);
	p = e.base + SGX2_HEAP + 0x1c0000;
	load_faults(&e, p, &m, &run);

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(guarded(copy_page_out, p, buf), 0);
	CHECK(all_bytes(buf, 4096, 0xff));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(guarded(copy_some_out, p, buf), 0);
	CHECK(all_bytes(buf, 200, 0xff));
	CHECK(all_bytes(buf + 200, 100, 0));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(guarded(rep_movsb_out, p, buf), 0);
	CHECK(all_bytes(buf, 64, 0xff));
	CHECK(all_bytes(buf + 64, 64, 0));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(guarded(fetch_add, p + 8, buf), 0);
	CHECK(all_bytes(buf, 8, 0xff));
	if (__builtin_cpu_supports("avx")) {
		memset(buf, 0, sizeof(buf));
		CHECK_EQ(guarded(avx_copy_out, p + 32, buf), 0);
		CHECK(all_bytes(buf, 32, 0xff));
		CHECK(all_bytes(buf + 32, 32, 0));
	}
	CHECK_EQ(guarded(fill_page, p, buf), 0);

	CHECK_EQ(call(&e, SGX2_OP_EACCEPT, REG_RW | SGX_SECINFO_PENDING, p, 0,
		      &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, p, 0, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, p + 8, 0, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_LOAD, p + 4088, 0, 0, &m), 0);
	sgx2_encl_destroy(&e);
}

/* --- fork ------------------------------------------------------------------------ */

/*
 * @child(@e) in a forked child, whose exit status is its return value (one
 * bit per check that failed there); the parent waits and checks it is 0.
 */
static void in_child(struct sgx2_encl *e, int (*child)(struct sgx2_encl *))
{
	pid_t pid = fork();
	int status;

	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(child(e));
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}

#define FORK_HEAP	(SGX2_HEAP + 0x300000)

static int child_grows_inherited(struct sgx2_encl *e)
{
	uint64_t heap = e->base + FORK_HEAP;
	struct sgx2_mail m;
	int bad = 0;

	if (call(e, SGX2_OP_LOAD, heap + 8, 0, 0, &m) != 0x5eed)
		bad |= 1;
	/* Pages the parent never touched: EAUG on the child's faults,
	 * EACCEPT, then stored and read back. */
	if (call(e, SGX2_OP_GROW, heap + 0x10000, 4, 0, &m) != 0)
		bad |= 2;
	if (call(e, SGX2_OP_LOAD, heap + 0x12000, 0, 0, &m) != heap + 0x12000)
		bad |= 4;
#ifdef SGXEMU_ENCL_OPS_HOST_ACCESS
	/* The child's host code on an empty slot of the parent's range:
	 * EAUG, then an abort page (no signal, all ones). */
	{
		uint64_t v;

		if (!guard_mode() &&
		    (touch(heap + 0x30000, false, 0, &v) || v != ~0ULL))
			bad |= 8;
	}
#endif
	return bad;
}

/*
 * A forked child shares the parent's enclave (linux-driver-facts.md
 * §2.6: the VMA is inherited, still MAP_SHARED, and the child's faults
 * are resolved through the same enclave, EAUG included, §8.1-8.2): it
 * enters it, reads what the parent accepted, and grows it by EACCEPT on
 * fault.
 */
TEST(fork_child_grows_the_inherited_enclave)
{
	struct sgx2_encl e;
	struct sgx2_mail m;
	uint64_t heap;

	BUILD(e);
	heap = e.base + FORK_HEAP;
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap, 2, 0, &m), 0);
	CHECK_EQ(call(&e, SGX2_OP_STORE, heap + 8, 0x5eed, 0, &m), 0);
	in_child(&e, child_grows_inherited);
	/* The parent's enclave is untouched by the child's exit. */
	CHECK_EQ(call(&e, SGX2_OP_LOAD, heap + 8, 0, 0, &m), 0x5eed);
	CHECK_EQ(call(&e, SGX2_OP_GROW, heap + 0x20000, 1, 0, &m), 0);
	sgx2_encl_destroy(&e);
}

static int child_builds_its_own(struct sgx2_encl *e)
{
	struct sgx2_encl c;
	struct sgx2_mail m;
	uint64_t heap;
	int bad = 0;

	if (sgx2_encl_build(&c, key(), SGX2_SIZE))
		return 64;
	heap = c.base + SGX2_HEAP;
	if (call(&c, SGX2_OP_GROW, heap, 64, 0, &m) != 0)
		bad |= 1;
	if (call(&c, SGX2_OP_LOAD, heap + 63 * 4096, 0, 0, &m) !=
	    heap + 63 * 4096)
		bad |= 2;
	if (call(e, SGX2_OP_LOAD, e->base + SGX2_RO, 0, 0, &m) !=
	    0x5a5a5a5a5a5a5a5aULL)
		bad |= 4;
	sgx2_encl_destroy(&c);
	return bad;
}

/* A child builds its own SGX2 enclave next to the inherited one and grows
 * it by EACCEPT on fault; the parent's keeps working. */
TEST(fork_child_builds_and_grows_its_own_enclave)
{
	struct sgx2_encl e;
	struct sgx2_mail m;

	BUILD(e);
	in_child(&e, child_builds_its_own);
	CHECK_EQ(call(&e, SGX2_OP_GROW, e.base + SGX2_HEAP, 8, 0, &m), 0);
	sgx2_encl_destroy(&e);
}
