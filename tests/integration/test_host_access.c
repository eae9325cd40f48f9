/* SPDX-License-Identifier: MIT */
/*
 * Host code touching SGX2 pages the enclave cannot use, resolved by the
 * driver's host-fault hook sgxemu__paging_host_access() as the kernel's
 * fault handler and the hardware do (linux-driver-facts.md §8.1-8.3):
 * an EPCM-PENDING page, a MODIFIED (trimmed, not accepted) page and an
 * address whose page REMOVE_PAGES took away (EAUGed again by the access)
 * read all ones and drop writes, with no signal; on an SGX1 platform a
 * window over no page is SIGBUS (BUS_ADRERR at the address).
 *
 * The enclave (tests/enclaves/sgx2_encl.h) is built in-process through
 * the driver's entry points, and each host access runs with this file's
 * SIGSEGV handler, which calls the hook the way the engine's host-fault
 * path is to call it (see the hook's comment in src/driver/paging.h), so
 * that the hook is tested on real faults before the engine calls it.
 * Writes dropped are checked in the EPC page itself (the processor's
 * view), not through the mapping under test.
 */
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>

#include "../enclaves/sgx2_encl.h"
#include "test.h"
#include "cpu/cpu.h"
#include "driver/driver.h"
#include "driver/paging.h"
#include "sgxemu/sgxemu.h"


struct encl {
	struct sgx_file *f;
	struct sgx2_encl e;
	struct sgxemu_enclave *engine;
};

/* The sgx2_encl helpers' device: the driver's entry points. */
static long dev_ioctl(struct sgx2_encl *e, unsigned long cmd, void *arg)
{
	long r = sgx_drv_ioctl(((struct encl *)e->dev_ctx)->f, cmd,
			       (unsigned long)(uintptr_t)arg);

	return r < 0 ? r : 0;
}

/* An ioctl of the test's enclave: 0 or the errno. */
static long drv(struct encl *x, unsigned long cmd, void *arg)
{
	return -dev_ioctl(&x->e, cmd, arg);
}

static void *dev_mmap(struct sgx2_encl *e, void *addr, size_t len, int prot)
{
	int err;
	void *p = sgx_drv_mmap(((struct encl *)e->dev_ctx)->f, addr, len,
			       prot, MAP_SHARED | MAP_FIXED, 0, &err);

	if (p == MAP_FAILED)
		errno = -err;
	return p;
}

static const struct sgx2_dev driver_dev = { dev_ioctl, dev_mmap };

/* sgx2_encl_build() through the driver instead of the shim's libc. */
static int build(struct encl *x)
{
	EVP_PKEY *key = shim_load_key(test_signing_key());
	int ret;

	if (!key)
		return -ENOKEY;
	memset(x, 0, sizeof(*x));
	x->f = sgx_drv_open(SGX_API_MAINLINE, SGX_DEV_ENCLAVE, &ret);
	if (!x->f)
		return ret;
	sgx_file_set_accmode(x->f, O_RDWR);
	x->e.fd = -1;
	x->e.dev = &driver_dev;
	x->e.dev_ctx = x;
	ret = sgx2_encl_ecreate(&x->e, SGX2_SIZE);
	if (!ret)
		ret = sgx2_encl_add(&x->e);
	if (!ret)
		ret = sgx2_encl_init(&x->e, key);
	if (!ret)
		ret = sgx2_encl_map(&x->e);
	if (ret)
		return ret;
	x->engine = sgxemu__encl_find(x->e.base);
	return x->engine ? 0 : -ENOENT;
}

/* One mailbox command on TCS 1 through the C API: the mailbox's RAX. */
static uint64_t call(struct encl *x, uint64_t op, uint64_t a, uint64_t b)
{
	struct sgxemu_run run;
	struct sgx2_mail m = { .op = op, .a = a, .b = b, .rax = ~0ULL };

	memset(&run, 0, sizeof(run));
	run.tcs = x->e.base + SGX2_TCS1;
	run.leaf = SGX_EENTER;
	run.regs.rdi = (uint64_t)(uintptr_t)&m;
	if (sgxemu_enter(&run) || run.leaf != SGX_EEXIT)
		return ~1ULL;
	return m.rax;
}

/* --- host accesses under the hook ----------------------------------------- */

static sigjmp_buf jb;
static volatile int got_sig, got_code;
static volatile uint64_t got_addr;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	uint64_t addr = (uint64_t)(uintptr_t)si->si_addr;
	int r = sig == SIGSEGV && !sgxemu__guard_closed() ?
		sgxemu__paging_host_access(sgxemu__encl_find(addr), addr, ctx) :
		0;

	if (r > 0)
		return;		/* resolved: carried out, or runs again */
	got_sig = r < 0 ? SIGBUS : sig;
	got_code = r < 0 ? BUS_ADRERR : si->si_code;
	got_addr = addr;
	siglongjmp(jb, 1);
}

/*
 * Read (or write @v to) the u64 at @a in host mode with on_fault() as the
 * SIGSEGV/SIGBUS handler; the engine's handlers are put back after.
 * Returns the signal the access ended with (0: none), the value in *@out.
 */
static int host_access(uint64_t a, bool write, uint64_t v, uint64_t *out)
{
	struct sigaction sa;
	long old_segv[4], old_bus[4];
	uint64_t r = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	syscall(SYS_rt_sigaction, SIGSEGV, NULL, old_segv, 8);
	syscall(SYS_rt_sigaction, SIGBUS, NULL, old_bus, 8);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	got_sig = 0;
	if (!sigsetjmp(jb, 1)) {
		if (write)
			*(volatile uint64_t *)(uintptr_t)a = v;
		else
			r = *(volatile uint64_t *)(uintptr_t)a;
	}
	syscall(SYS_rt_sigaction, SIGSEGV, old_segv, NULL, 8);
	syscall(SYS_rt_sigaction, SIGBUS, old_bus, NULL, 8);
	if (out)
		*out = r;
	return got_sig;
}

/* The EPCM entry and EPC contents behind @linaddr (the processor's view). */
static struct sgx_epcm_entry *epcm(uint64_t linaddr, uint64_t **data)
{
	struct sgx_cpu *cpu = sgxemu_platform_cpu();
	long idx = sgx_cpu_lookup(cpu, linaddr);

	if (idx < 0)
		return NULL;
	if (data)
		*data = (uint64_t *)((uint8_t *)sgx_epc_page(cpu, (size_t)idx) +
				     (linaddr & 0xfff));
	return &cpu->epcm[idx];
}

static void destroy(struct encl *x)
{
	munmap(x->e.reserve, 2 * x->e.size);
	sgx_file_put(x->f);
	free(x->e.img);
}

static bool sgx1_platform(void)
{
	const char *v = getenv("SGXEMU_SGX2");

	return v && !strcmp(v, "0");
}

/* Build @x; skip on an SGX1 platform unless @any, and in guard mode,
 * where host accesses are the guard's faults (the engine calls no hook). */
#define BUILD_IF(x, any) do { \
	if (!(any) && sgx1_platform()) \
		test_skip("SGX1 platform (SGXEMU_SGX2=0)"); \
	int _r = build(&(x)); \
	if (_r == -ENOKEY) test_skip("no seed signing key"); \
	REQUIRE_EQ(_r, 0); \
	if (sgxemu__platform.guard) { \
		destroy(&(x)); \
		test_skip("guard mode: host accesses are the guard's"); \
	} \
} while (0)
#define BUILD(x) BUILD_IF(x, false)

/* EAUG by the host's own access, then a PENDING page: no signal. */
TEST(host_access_to_pending_page_is_an_abort_page)
{
	struct encl x;
	struct sgx_epcm_entry *m;
	uint64_t a, v, *data;

	BUILD(x);
	a = x.e.base + SGX2_HEAP + 0x5000;
	CHECK_EQ(host_access(a + 8, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	m = epcm(a, &data);
	REQUIRE(m);
	CHECK(m->valid && m->pending && m->page_type == SGX_PT_REG);
	CHECK_EQ(host_access(a + 8, true, 0x1234, NULL), 0);
	CHECK_EQ(data[1], 0);		/* EAUG zeroes; the write dropped */
	CHECK_EQ(host_access(a + 8, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	/* The enclave accepts it and finds it zero-filled. */
	CHECK_EQ(call(&x, SGX2_OP_EACCEPT, SGX2_RW_FLAGS | SGX_SECINFO_PENDING,
		      a), 0);
	CHECK_EQ(call(&x, SGX2_OP_LOAD, a + 8, 0), 0);
	destroy(&x);
}

/* Trimmed, before and after the enclave's EACCEPT, then removed. */
TEST(host_access_to_modified_and_removed_pages)
{
	struct sgx_enclave_modify_types mt;
	struct sgx_enclave_remove_pages rm;
	struct sgx_epcm_entry *m;
	struct encl x;
	uint64_t a, v, *data;

	BUILD(x);
	a = x.e.base + SGX2_RW1;
	CHECK_EQ(call(&x, SGX2_OP_STORE, a, 0xfeed), 0);
	memset(&mt, 0, sizeof(mt));
	mt.offset = SGX2_RW1;
	mt.length = 4096;
	mt.page_type = SGX_PT_TRIM;
	REQUIRE_EQ(drv(&x, SGX_IOC_ENCLAVE_MODIFY_TYPES, &mt), 0);
	m = epcm(a, &data);
	REQUIRE(m);
	CHECK(m->modified && m->page_type == SGX_PT_TRIM);
	CHECK_EQ(host_access(a, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	CHECK_EQ(host_access(a, true, 7, NULL), 0);
	CHECK_EQ(data[0], 0xfeed);
	CHECK_EQ(call(&x, SGX2_OP_EACCEPT, SGX_SECINFO_TRIM |
		      SGX_SECINFO_MODIFIED, a), 0);
	CHECK_EQ(host_access(a, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	memset(&rm, 0, sizeof(rm));
	rm.offset = SGX2_RW1;
	rm.length = 4096;
	REQUIRE_EQ(drv(&x, SGX_IOC_ENCLAVE_REMOVE_PAGES, &rm), 0);
	CHECK(epcm(a, NULL) == NULL);
	/* No page: the access EAUGs a fresh one (§7.5, §8.2), PENDING. */
	CHECK_EQ(host_access(a, true, 9, NULL), 0);
	m = epcm(a, &data);
	REQUIRE(m);
	CHECK(m->pending);
	CHECK_EQ(data[0], 0);
	CHECK_EQ(host_access(a, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	destroy(&x);
}

/* The VMA's check comes first: a write to a read-only window over no
 * page is SIGSEGV and adds nothing; a read there EAUGs. */
TEST(host_write_to_read_only_window_is_sigsegv_without_eaug)
{
	struct encl x;
	uint64_t a, v;
	int err;

	BUILD(x);
	a = x.e.base + SGX2_HEAP + 0x9000;
	REQUIRE(sgx_drv_mmap(x.f, (void *)(uintptr_t)a, 4096, PROT_READ,
			     MAP_SHARED | MAP_FIXED, 0, &err) != MAP_FAILED);
	CHECK_EQ(host_access(a, true, 1, NULL), SIGSEGV);
	CHECK_EQ(got_code, SEGV_ACCERR);
	CHECK(epcm(a, NULL) == NULL);
	CHECK_EQ(host_access(a, false, 0, &v), 0);
	CHECK_EQ(v, ~0ULL);
	CHECK(epcm(a, NULL) != NULL);
	destroy(&x);
}

/*
 * A window over no page: on SGX2 the access EAUGs (then an abort page);
 * on SGX1 the kernel finds no page and returns VM_FAULT_SIGBUS (§8.1
 * step 3.1): SIGBUS, BUS_ADRERR, si_addr the address.
 */
TEST(host_access_where_no_page_is)
{
	struct encl x;
	uint64_t a, v;

	BUILD_IF(x, true);
	a = x.e.base + SGX2_HEAP + 0x7008;
	if (sgx1_platform()) {
		CHECK_EQ(host_access(a, false, 0, &v), SIGBUS);
		CHECK_EQ(got_code, BUS_ADRERR);
		CHECK_EQ(got_addr, a);
		CHECK(epcm(a, NULL) == NULL);
	} else {
		CHECK_EQ(host_access(a, false, 0, &v), 0);
		CHECK_EQ(v, ~0ULL);
		CHECK(epcm(a, NULL) != NULL);
	}
	destroy(&x);
}
