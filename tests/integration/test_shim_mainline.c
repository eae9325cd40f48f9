/* SPDX-License-Identifier: MIT */
/*
 * An SGX host program for the mainline API (<asm/sgx.h>, /dev/sgx_enclave,
 * __vdso_sgx_enter_enclave with struct sgx_enclave_run) run under the shim,
 * with its own enclave (tests/enclaves/shim_encl.h: four TCSs, an exception
 * path): the vDSO image, devices, every ioctl and mmap rule with the
 * kernel's errno (linux-driver-facts.md), fork and dup.
 *
 * The binary re-executes itself through `sgxemu run` when started without
 * the shim (tests/run.sh starts it directly).
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "../enclaves/shim_encl.h"
#include "cpu/cpu.h"
#include <dlfcn.h>
#include "test.h"


/*
 * These tests run under AddressSanitizer too. (They were skipped there
 * while the ERESUME calls came from other stack depths than the EENTERs
 * they resumed: the vDSO then found a stale frame through the enclave's
 * RBP. shim_enter() makes every call from the same depth, as a runtime's
 * must.)
 */

#include "../enclaves/shim_test.h"

static long ioctl_err(int fd, unsigned long cmd, void *arg)
{
	errno = 0;
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/* --- the vDSO ------------------------------------------------------------- */

TEST(vdso_exports_sgx_enter_enclave_and_keeps_clock)
{
	int (*gettime)(clockid_t, struct timespec *);
	struct timespec a, b;

	NEED_SHIM();
	CHECK(shim_vdso_sym("__vdso_sgx_enter_enclave") != NULL);
	gettime = (int (*)(clockid_t, struct timespec *))
		  shim_vdso_sym("__vdso_clock_gettime");
	REQUIRE(gettime != NULL);
	REQUIRE_EQ(gettime(CLOCK_MONOTONIC, &a), 0);
	REQUIRE_EQ(clock_gettime(CLOCK_MONOTONIC, &b), 0);
	CHECK(b.tv_sec - a.tv_sec <= 1 && b.tv_sec >= a.tv_sec);
	CHECK(shim_vdso_sym("__vdso_getcpu") != NULL);
	CHECK(shim_vdso_sym("no_such_symbol") == NULL);
}

/* --- device files ------------------------------------------------------- */

TEST(devices_stat_as_character_devices)
{
	struct stat st;
	int fd;

	NEED_SHIM();
	REQUIRE_EQ(stat("/dev/sgx_enclave", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(major(st.st_rdev), 10);
	REQUIRE_EQ(stat("/dev/sgx_provision", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	REQUIRE_EQ(stat("/dev/sgx/enclave", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(access("/dev/sgx_enclave", R_OK | W_OK), 0);
	fd = open("/dev/sgx_enclave", O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(fstat(fd, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	{
		struct stat *volatile bad = (struct stat *)8;

		CHECK_EQ(fstat(fd, bad), -1);
		CHECK_EQ(errno, EFAULT);
	}
	close(fd);
	/* A bad buffer is EFAULT, as from the kernel. */
	{
		struct stat *volatile bad = (struct stat *)8;
		struct statx *volatile badx = (struct statx *)8;

		CHECK_EQ(stat("/dev/sgx_enclave", bad), -1);
		CHECK_EQ(errno, EFAULT);
		CHECK_EQ(statx(AT_FDCWD, "/dev/sgx_provision", 0, STATX_BASIC_STATS,
			       badx), -1);
		CHECK_EQ(errno, EFAULT);
	}
	{
		struct statx stx;

		REQUIRE_EQ(statx(AT_FDCWD, "/dev/sgx/provision", 0,
				 STATX_BASIC_STATS, &stx), 0);
		CHECK(S_ISCHR(stx.stx_mode));
		CHECK_EQ(stx.stx_rdev_major, 10);
	}
	/* Other paths are untouched. */
	CHECK(stat("/dev/sgx_nonexistent", &st) != 0);
	CHECK_EQ(errno, ENOENT);
}

/* --- building and running ---------------------------------------------- */

TEST(ecall_on_every_tcs)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];

	BUILD(e);
	for (int t = 0; t < SHIM_ENCL_NR_TCS; t++) {
		memset(out, 0, sizeof(out));
		CHECK_EQ(shim_ecall(&e, t, 0, out, 41 + t, &run), 0);
		CHECK_EQ(run.function, SGX_EEXIT);
		CHECK_EQ(out[0], 42 + t);
		CHECK_EQ(out[1], e.base + SHIM_ENCL_TCS(t));
	}
}

struct thr {
	struct shim_encl *e;
	int tcs;
	int bad;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct sgx_enclave_run run;
	uint64_t out[2];

	for (int i = 0; i < 200; i++) {
		if (shim_ecall(t->e, t->tcs, 0, out, (unsigned long)i, &run) ||
		    out[0] != (uint64_t)i + 1 ||
		    out[1] != t->e->base + SHIM_ENCL_TCS(t->tcs))
			t->bad++;
	}
	return NULL;
}

TEST(threads_on_separate_tcs)
{
	pthread_t th[SHIM_ENCL_NR_TCS];
	struct thr t[SHIM_ENCL_NR_TCS];
	struct shim_encl e;

	BUILD(e);
	for (int i = 0; i < SHIM_ENCL_NR_TCS; i++) {
		t[i] = (struct thr){ &e, i, 0 };
		REQUIRE_EQ(pthread_create(&th[i], NULL, thread_main, &t[i]), 0);
	}
	for (int i = 0; i < SHIM_ENCL_NR_TCS; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(t[i].bad, 0);
	}
}

/* A #PF inside the enclave: reported in run, handled in the enclave
 * (EENTER with CSSA 1), then ERESUME finishes the call. */
TEST(exception_reported_then_resumed)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2] = { 0 };
	uint8_t *hole;

	BUILD(e);
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(hole != MAP_FAILED);
	CHECK_EQ(shim_ecall(&e, 1, 1, out, (unsigned long)(hole + 8), &run), 0);
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK(run.exception_error_code & X86_PF_USER);
	CHECK_EQ(run.exception_addr, (uint64_t)(uintptr_t)hole);
	/* The enclave's handler: skip the 3-byte load. */
	CHECK_EQ(shim_ecall(&e, 1, 0, out, SHIM_OP1_LEN, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	/* MISCSELECT.EXINFO is clear: a #PF is not reported in EXITINFO. */
	CHECK_EQ(out[0], 0);
	/* ERESUME continues after the load. */
	out[0] = 0;
	CHECK_EQ(shim_eresume(&e, 1, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[0], 0x600d);
	/* The TCS is usable again. */
	CHECK_EQ(shim_ecall(&e, 1, 0, out, 1, &run), 0);
	CHECK_EQ(out[0], 2);
}

/*
 * CPUID in enclave mode is #UD on hardware. Under CPUID faulting the
 * engine answers it as host code's CPUID is answered (the part's leaf 7,
 * SGX set), or with SGXEMU_CPUID_ENCLAVE=ud raises the #UD (an AEX the
 * vDSO reports, EXITINFO valid); without faulting it runs natively.
 */
TEST(cpuid_in_enclave_follows_the_mode)
{
	const char *(*mech)(void) = (const char *(*)(void))
		dlsym(RTLD_DEFAULT, "sgxemu_cpuid_mechanism");
	const char *encl = getenv("SGXEMU_CPUID_ENCLAVE");
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2] = { 0 };
	uint32_t a, b, c, d;
	bool fault;

	BUILD(e);
	REQUIRE(mech != NULL);
	fault = !strcmp(mech(), "fault");
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(7), "c"(0));
	CHECK_EQ(shim_ecall(&e, 3, 4, out, 7, &run), 0);
	if (fault && encl && !strcmp(encl, "ud")) {
		CHECK_EQ(run.function, SGX_ERESUME);
		CHECK_EQ(run.exception_vector, X86_TRAP_UD);
		/* The enclave's handler: EXITINFO, then skip the CPUID. */
		CHECK_EQ(shim_ecall(&e, 3, 0, out, SHIM_OP4_LEN, &run), 0);
		CHECK_EQ(out[0], 0x80000306);	/* valid, hardware, #UD */
		CHECK_EQ(shim_eresume(&e, 3, &run), 0);
		CHECK_EQ(run.function, SGX_EEXIT);
		CHECK_EQ(out[0], e.base + SHIM_ENCL_TCS(3));
		CHECK_EQ(out[1], 7);
		return;
	}
	REQUIRE_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[1], a);
	if (fault) {
		CHECK_EQ(out[0], b);		/* as host code's */
		CHECK(out[0] & 4);		/* the part's SGX bit */
	} else {
		CHECK_EQ(out[0], b & ~4U);	/* the host's own */
	}
}

TEST(ud2_and_epcm_readonly_write)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2] = { 0 };

	BUILD(e);
	CHECK_EQ(shim_ecall(&e, 2, 2, out, 0, &run), 0);
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_UD);
	CHECK_EQ(run.exception_addr, 0);
	/* #UD is always in EXITINFO: valid, hardware exception, vector 6. */
	CHECK_EQ(shim_ecall(&e, 2, 0, out, SHIM_OP2_LEN, &run), 0);
	CHECK_EQ(out[0], SGX_EXITINFO_VALID |
		 (SGX_EXITINFO_TYPE_HW << SGX_EXITINFO_TYPE_SHIFT) | X86_TRAP_UD);
	CHECK_EQ(shim_eresume(&e, 2, &run), 0);
	CHECK_EQ(run.function, SGX_EEXIT);
	CHECK_EQ(out[0], 0x600d);

	CHECK_EQ(shim_ecall(&e, 0, 3, out, 0, &run), 0);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);
	CHECK(run.exception_error_code & X86_PF_WRITE);
	CHECK_EQ(run.exception_addr, e.base + SHIM_ENCL_RO);
}

static int handler_calls;
static long handler_rsp;

/*
 * A handler that returns EENTER while reenter_left > 0, then 0. Written in
 * assembly so that RDI, RSI and RDX, which pass through to the enclave on
 * re-entry, stay as the enclave left them.
 */
extern int reenter_left, reenter_calls;
int reenter_handler(long, long, long, long, long, long, struct sgx_enclave_run *);
__asm__(
	".pushsection .data\n"
	".globl reenter_left, reenter_calls\n"
	"reenter_left: .long 0\n"
	"reenter_calls: .long 0\n"
	".popsection\n"
	".text\n"
	".globl reenter_handler\n"
	"reenter_handler:\n"
	"	incl reenter_calls(%rip)\n"
	"	decl reenter_left(%rip)\n"
	"	js 1f\n"
	"	mov $2, %eax\n"
	"	ret\n"
	"1:	xor %eax, %eax\n"
	"	ret\n");

static int on_exit_handler(long rdi, long rsi, long rdx, long rsp, long r8,
			   long r9, struct sgx_enclave_run *run)
{
	(void)rdi; (void)rsi; (void)rdx; (void)r8; (void)r9;
	handler_calls++;
	handler_rsp = rsp;
	if (run->function == SGX_EEXIT)
		return (int)run->user_data;
	return -EFAULT;
}

TEST(user_handler_sees_every_exit)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];
	uint8_t *hole;

	BUILD(e);
	memset(&run, 0, sizeof(run));
	run.tcs = e.base + SHIM_ENCL_TCS(3);
	run.user_handler = (uint64_t)(uintptr_t)on_exit_handler;
	run.user_data = (uint64_t)-1234;
	handler_calls = 0;
	CHECK_EQ(shim_vdso_call(0, (unsigned long)(uintptr_t)out, 5, SGX_EENTER,
				0, 0, &run), -1234);
	CHECK_EQ(handler_calls, 1);
	CHECK_EQ(out[0], 6);
	CHECK(handler_rsp != 0);

	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(hole != MAP_FAILED);
	CHECK_EQ(shim_vdso_call(1, (unsigned long)(uintptr_t)out,
				(unsigned long)(uintptr_t)hole, SGX_EENTER, 0, 0,
				&run), -EFAULT);
	CHECK_EQ(handler_calls, 2);
	CHECK_EQ(run.exception_vector, X86_TRAP_PF);

	/* A positive return re-enters: two more EEXITs, then the result. */
	{
		struct shim_encl e2;

		BUILD(e2);
		memset(&run, 0, sizeof(run));
		run.tcs = e2.base + SHIM_ENCL_TCS(0);
		run.user_handler = (uint64_t)(uintptr_t)reenter_handler;
		reenter_calls = 0;
		reenter_left = 2;
		out[0] = 0;
		CHECK_EQ(shim_vdso_call(0, (unsigned long)(uintptr_t)out, 9,
					SGX_EENTER, 0, 0, &run), 0);
		CHECK_EQ(reenter_calls, 3);
		CHECK_EQ(out[0], 10);
		CHECK_EQ(run.function, SGX_EEXIT);
	}
}

TEST(vdso_refuses_bad_leaf_and_reserved_bytes)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];

	BUILD(e);
	memset(&run, 0, sizeof(run));
	run.tcs = e.base;
	run.function = 77;
	CHECK_EQ(shim_vdso_call(0, (unsigned long)(uintptr_t)out, 0, SGX_EEXIT,
				0, 0, &run), -EINVAL);
	CHECK_EQ(run.function, 77);	/* not written on -EINVAL */
	CHECK_EQ(shim_vdso_call(0, (unsigned long)(uintptr_t)out, 0, 0, 0, 0,
				&run), -EINVAL);
	run.reserved[100] = 1;
	CHECK_EQ(shim_vdso_call(0, (unsigned long)(uintptr_t)out, 0, SGX_EENTER,
				0, 0, &run), -EINVAL);
}

/* --- CREATE ------------------------------------------------------------------ */

TEST(create_errnos)
{
	struct sgx_enclave_create c;
	struct sgx_secs secs;
	struct shim_encl e;
	uint64_t base;
	void *resv;
	int fd;

	NEED_SHIM();
	fd = open("/dev/sgx_enclave", O_RDONLY);	/* any mode opens */
	REQUIRE(fd >= 0);
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, (void *)8), EFAULT);
	c.src = 16;
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EFAULT);
	/*
	 * A reserved (PROT_NONE) ELRANGE, not a fixed address: whatever the
	 * host's ASLR put at a fixed one would make CREATE refuse it as the
	 * program's memory (EINVAL) before ECREATE ever sees the SECS.
	 */
	resv = mmap(NULL, 2 * SHIM_ENCL_SIZE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	REQUIRE(resv != MAP_FAILED);
	base = ((uint64_t)(uintptr_t)resv + SHIM_ENCL_SIZE - 1) &
	       ~(SHIM_ENCL_SIZE - 1);
	shim_encl_secs(&secs, base, SHIM_ENCL_ATTRS);
	c.src = (uint64_t)(uintptr_t)&secs;
	secs.size = 3 * 4096;
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EINVAL);
	secs.size = 0;
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EINVAL);
	secs.size = 4096;		/* a power of two ECREATE refuses */
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EIO);
	secs.size = SHIM_ENCL_SIZE;
	secs.base = base + 0x1000;	/* not aligned to SIZE */
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EIO);
	close(fd);
	munmap(resv, 2 * SHIM_ENCL_SIZE);

	/* ELRANGE over the program's own memory (here: its heap) is refused
	 * instead of replacing that memory with enclave pages. */
	{
		void *heap = aligned_alloc(SHIM_ENCL_SIZE, 2 * SHIM_ENCL_SIZE);

		REQUIRE(heap);
		memset(heap, 0x33, 2 * SHIM_ENCL_SIZE);
		fd = open("/dev/sgx_enclave", O_RDWR);
		REQUIRE(fd >= 0);
		shim_encl_secs(&secs, (uint64_t)(uintptr_t)heap, SHIM_ENCL_ATTRS);
		c.src = (uint64_t)(uintptr_t)&secs;
		CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EINVAL);
		CHECK_EQ(((uint8_t *)heap)[100], 0x33);
		close(fd);
		free(heap);
	}

	/* A failed CREATE can be retried; a second CREATE is EINVAL. */
	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
	shim_encl_secs(&secs, e.base, SHIM_ENCL_ATTRS);
	c.src = (uint64_t)(uintptr_t)&secs;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_CREATE, &c), EINVAL);
	CHECK_EQ(ioctl_err(e.fd, 0xA4ff, NULL), ENOTTY);
}

/* --- ADD_PAGES --------------------------------------------------------------- */

static struct sgx_enclave_add_pages addp(struct shim_encl *e, uint64_t off,
					 uint64_t len, struct sgx_secinfo *si)
{
	struct sgx_enclave_add_pages a = {
		.src = (uint64_t)(uintptr_t)(e->img + off),
		.offset = off, .length = len,
		.secinfo = (uint64_t)(uintptr_t)si, .flags = SGX_PAGE_MEASURE,
		.count = 12345,
	};
	return a;
}

TEST(add_pages_errnos)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_enclave_add_pages a;
	struct shim_encl e;
	int fd;

	NEED_SHIM();
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;

	/* Before CREATE. */
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	e.img = shim_encl_image();
	a = addp(&e, 0xd000, 4096, &si);
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	close(fd);
	free(e.img);

	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
	e.img = shim_encl_image();
	REQUIRE(e.img);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, (void *)1), EFAULT);
	a = addp(&e, 0xd000, 4096, &si);
	a.src += 8;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	a = addp(&e, 0xd008, 4096, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	a = addp(&e, 0xd000, 0, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	a = addp(&e, 0xd000, 100, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	a = addp(&e, 0xf000, 8192, &si);	/* last page past ELRANGE */
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	a = addp(&e, 0xd000, 4096, (void *)8);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EFAULT);

	/* SECINFO validation. */
	a = addp(&e, 0xd000, 4096, &si);
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_W;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	si.flags = SGX_SECINFO_TCS | SGX_SECINFO_R;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	si.flags = SGX_SECINFO_VA;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_PENDING;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
	si.reserved[10] = 1;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	si.reserved[10] = 0;

	/* Unreadable source: EFAULT, count 0 written back. */
	a.src = 4096;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EFAULT);
	CHECK_EQ(a.count, 0);

	/* One page, then two over it: EBUSY with the first counted... */
	a = addp(&e, 0xe000, 4096, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), 0);
	CHECK_EQ(a.count, 4096);
	a = addp(&e, 0xd000, 8192, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EBUSY);
	CHECK_EQ(a.count, 4096);
	a = addp(&e, 0xd000, 4096, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EBUSY);
	CHECK_EQ(a.count, 0);

	/* A source whose third page is unreadable: the driver reads ahead,
	 * yet the first two pages are added and counted, the third is
	 * EFAULT, and the two are there (adding them again is EBUSY). */
	{
		uint8_t *src = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		REQUIRE(src != MAP_FAILED);
		memset(src, 0x5a, 3 * 4096);
		REQUIRE_EQ(mprotect(src + 2 * 4096, 4096, PROT_NONE), 0);
		a = addp(&e, 0xa000, 3 * 4096, &si);
		a.src = (uint64_t)(uintptr_t)src;
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EFAULT);
		CHECK_EQ(a.count, 2 * 4096);
		a = addp(&e, 0xb000, 4096, &si);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EBUSY);
		a = addp(&e, 0xc000, 4096, &si);
		a.src = (uint64_t)(uintptr_t)src;
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), 0);
		munmap(src, 3 * 4096);
	}
}

/* --- INIT and PROVISION --------------------------------------------------------- */

TEST(init_errnos)
{
	struct sgx_enclave_init init;
	struct sgx_sigstruct bad;
	struct shim_encl e;
	uint8_t mr[32];
	int fd;

	NEED_SHIM();
	REQUIRE(key());
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	init.sigstruct = (uint64_t)(uintptr_t)&bad;
	memset(&bad, 0, sizeof(bad));
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_INIT, &init), EINVAL);
	close(fd);

	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
	REQUIRE_EQ(shim_encl_add(&e), 0);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, (void *)8), EFAULT);
	init.sigstruct = 64;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, &init), EFAULT);

	shim_encl_measure(e.img, mr);
	REQUIRE_EQ(shim_sign(key(), mr, SHIM_ENCL_ATTRS, &bad), 0);
	init.sigstruct = (uint64_t)(uintptr_t)&bad;
	bad.header.vendor = 0x1234;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, &init), EINVAL);
	bad.header.vendor = 0;
	bad.body.attributes.flags |= 1ULL << 40;	/* reserved, masked */
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, &init), EINVAL);
	bad.body.attributes.flags &= ~(1ULL << 40);
	bad.signature[5] ^= 1;				/* EINIT refuses */
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, &init), EPERM);
	/* Still not initialized: the right SIGSTRUCT launches it. */
	REQUIRE_EQ(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS), 0);
	/* The driver wrote the launch-control MSRs with the signer's hash. */
	{
		struct sgx_cpu *(*cpu)(void) = (struct sgx_cpu *(*)(void))
			dlsym(RTLD_DEFAULT, "sgxemu_platform_cpu");
		uint8_t signer[32];

		REQUIRE(cpu && cpu());
		EVP_Digest(e.ss.modulus, sizeof(e.ss.modulus), signer, NULL,
			   EVP_sha256(), NULL);
		CHECK_MEM(cpu()->lepubkeyhash, signer, 32);
	}
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_INIT, &init), EINVAL);
	{
		struct sgx_secinfo si __attribute__((aligned(64))) = { 0 };
		struct sgx_enclave_add_pages a;

		si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
		a = addp(&e, 0xf000, 4096, &si);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), EINVAL);
	}
}

TEST(provision_and_privileged_attributes)
{
	struct sgx_enclave_provision prov;
	struct shim_encl e;
	int pfd, ret;

	NEED_SHIM();
	REQUIRE(key());
	/* PROVISIONKEY without PROVISION: EACCES at INIT. */
	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave",
				    SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY), 0);
	REQUIRE_EQ(shim_encl_add(&e), 0);
	CHECK_EQ(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY),
		 -EACCES);

	pfd = open("/dev/sgx_provision", O_RDONLY);
	REQUIRE(pfd >= 0);
	CHECK_EQ(ioctl_err(pfd, SGX_IOC_ENCLAVE_CREATE, &prov), ENOTTY);
	CHECK(mmap(NULL, 4096, PROT_NONE, MAP_SHARED, pfd, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENODEV);
	prov.fd = 9999;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_PROVISION, &prov), EINVAL);
	prov.fd = (uint64_t)e.fd;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_PROVISION, &prov), EINVAL);
	prov.fd = 1;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_PROVISION, &prov), EINVAL);
	prov.fd = (uint64_t)pfd;
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_PROVISION, &prov), 0);
	ret = shim_encl_init(&e, key(), SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY);
	CHECK_EQ(ret, 0);

	/* EINITTOKENKEY is never allowed. */
	{
		struct shim_encl e2;

		REQUIRE_EQ(shim_encl_create(&e2, "/dev/sgx_enclave",
					    SHIM_ENCL_ATTRS | SGX_ATTR_EINITTOKENKEY), 0);
		REQUIRE_EQ(shim_encl_add(&e2), 0);
		CHECK_EQ(shim_encl_init(&e2, key(),
					SHIM_ENCL_ATTRS | SGX_ATTR_EINITTOKENKEY), -EACCES);
	}
}

/*
 * How runtimes probe for EDMM: Gramine issues a zero-length REMOVE_PAGES
 * and expects EINVAL; the Intel SDK a zeroed RESTRICT_PERMISSIONS and
 * uses EDMM unless it gets ENOTTY. On an SGX1 platform (SGXEMU_SGX2=0,
 * as test_shim.sh runs this program too) the kernel answers ENODEV.
 */
TEST(sgx2_ioctls_answer_runtime_probes)
{
	struct sgx_enclave_restrict_permissions rp = { 0 };
	struct sgx_enclave_modify_types mt = { 0 };
	struct sgx_enclave_remove_pages rm = { 0 };
	const char *v = getenv("SGXEMU_SGX2");
	long want = v && !strcmp(v, "0") ? ENODEV : EINVAL;
	struct shim_encl e;

	BUILD(e);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, &rp),
		 want);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_MODIFY_TYPES, &mt), want);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_REMOVE_PAGES, &rm), want);
	CHECK_EQ(rm.count, 0);
	CHECK_EQ(rp.result, 0);
}

/* --- mmap / mprotect / munmap ------------------------------------------------- */

TEST(mmap_rules)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];
	void *p;
	int fd;

	NEED_SHIM();
	/* Before CREATE any address maps, with any permissions. */
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EINVAL);
	if (p != MAP_FAILED)
		CHECK_EQ(munmap(p, 8192), 0);
	close(fd);
	/* A read-only open maps, but never writable. */
	fd = open("/dev/sgx_enclave", O_RDONLY);
	REQUIRE(fd >= 0);
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
	      MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE), -1);
	CHECK_EQ(errno, EACCES);
	close(fd);

	BUILD(e);
	/* More than the page allows: code is R-X, RO page R--. */
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_CODE);
	CHECK(mmap(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_SHARED | MAP_FIXED, e.fd, 0) == MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE), -1);
	CHECK_EQ(errno, EACCES);
	CHECK_EQ(mprotect(p, 4096, PROT_READ), 0);
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_RO);
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_EXEC), -1);
	CHECK_EQ(errno, EACCES);
	/* TCS pages count as RW; RWX is refused. */
	p = (void *)(uintptr_t)e.base;
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC), -1);
	CHECK_EQ(errno, EACCES);
	/* Mainline: where no page is, nothing is checked (inside ELRANGE). */
	p = (void *)(uintptr_t)(e.base + 0xf000);
	CHECK(mmap(p, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		   e.fd, 0) == p);
	/* After INIT, outside ELRANGE is EACCES: above it, and below its
	 * base (on the reservation's page there: shim_encl_create). */
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_SIZE);
	CHECK(mmap(p, 4096, PROT_NONE, MAP_SHARED | MAP_FIXED, e.fd, 0) ==
	      MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	p = (void *)(uintptr_t)(e.base - 4096);
	REQUIRE((uint8_t *)p >= e.reserve);
	CHECK(mmap(p, 4096, PROT_NONE, MAP_SHARED | MAP_FIXED, e.fd, 0) ==
	      MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	CHECK(mmap(p, 8192, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) ==
	      MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	/* Growing a window is EFAULT. */
	CHECK(mremap((void *)(uintptr_t)e.base, 4096, 8192, 0) == MAP_FAILED);
	CHECK_EQ(errno, EFAULT);
	/* A partial munmap leaves the rest working. */
	CHECK_EQ(munmap((void *)(uintptr_t)(e.base + SHIM_ENCL_RO), 4096), 0);
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 1, &run), 0);
	CHECK_EQ(out[0], 2);
	/* Unmapped, then mapped again: the page is back (its data too). */
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_DATA);
	CHECK_EQ(munmap(p, 4096), 0);
	CHECK(mmap(p, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		   e.fd, 0) == p);
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_CODE);
	CHECK_EQ(munmap(p, 4096), 0);
	CHECK(mmap(p, 4096, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED,
		   e.fd, 0) == p);
	CHECK_EQ(shim_ecall(&e, 1, 0, out, 5, &run), 0);
	CHECK_EQ(out[0], 6);
}

/* --- lifetime: dup, close, fork ------------------------------------------------ */

TEST(dup_and_close_keep_the_enclave)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];
	int fd2, fd3;
	struct stat st;

	BUILD(e);
	fd2 = dup(e.fd);
	REQUIRE(fd2 >= 0);
	fd3 = fcntl(e.fd, F_DUPFD_CLOEXEC, 100);
	REQUIRE(fd3 >= 100);
	CHECK_EQ(close(e.fd), 0);
	REQUIRE_EQ(fstat(fd3, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	/* The enclave lives on in fd2 and in the mappings. */
	CHECK_EQ(ioctl_err(fd2, 0xA4ff, NULL), ENOTTY);
	CHECK_EQ(close(fd2), 0);
	CHECK_EQ(close(fd3), 0);
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 7, &run), 0);
	CHECK_EQ(out[0], 8);
	/* Last mapping gone: released (nothing to observe but no crash). */
	CHECK_EQ(munmap(e.reserve, 2 * SHIM_ENCL_SIZE), 0);
}

TEST(fork_child_uses_inherited_enclave)
{
	struct sgx_enclave_run run;
	struct shim_encl e;
	uint64_t out[2];
	pid_t pid;
	int status;

	BUILD(e);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		int bad = 0;

		for (int t = 0; t < SHIM_ENCL_NR_TCS; t++) {
			if (shim_ecall(&e, t, 0, out, 100, &run) || out[0] != 101)
				bad++;
		}
		close(e.fd);
		_exit(bad);
	}
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(shim_ecall(&e, 2, 0, out, 200, &run), 0);
	CHECK_EQ(out[0], 201);
}

/* --- the device layout and the API of each enclave --------------------------- */

/* As on a machine with Intel's PSW: /dev/sgx/{enclave,provision} are udev
 * symlinks to the mainline devices. */
TEST(psw_device_layout)
{
	struct stat st, lst, dst;
	struct statx stx;
	char buf[64];
	int fd;

	NEED_SHIM();
	REQUIRE_EQ(stat("/dev/sgx_enclave", &dst), 0);
	REQUIRE_EQ(lstat("/dev/sgx/enclave", &lst), 0);
	CHECK(S_ISLNK(lst.st_mode));
	CHECK_EQ(lst.st_size, (off_t)strlen("../sgx_enclave"));
	REQUIRE_EQ(stat("/dev/sgx/enclave", &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_rdev, dst.st_rdev);
	CHECK_EQ(st.st_ino, dst.st_ino);
	REQUIRE_EQ(fstatat(AT_FDCWD, "/dev/sgx/provision", &lst,
			   AT_SYMLINK_NOFOLLOW), 0);
	CHECK(S_ISLNK(lst.st_mode));
	REQUIRE_EQ(statx(AT_FDCWD, "/dev/sgx/provision", AT_SYMLINK_NOFOLLOW,
			 STATX_BASIC_STATS, &stx), 0);
	CHECK(S_ISLNK(stx.stx_mode));
	REQUIRE_EQ(stat("/dev/sgx/provision", &st), 0);
	REQUIRE_EQ(stat("/dev/sgx_provision", &dst), 0);
	CHECK_EQ(st.st_rdev, dst.st_rdev);
	REQUIRE_EQ(stat("/dev/sgx", &st), 0);
	CHECK(S_ISDIR(st.st_mode));

	memset(buf, 0, sizeof(buf));
	CHECK_EQ(readlink("/dev/sgx/enclave", buf, sizeof(buf)), 14);
	CHECK(!strcmp(buf, "../sgx_enclave"));
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(readlinkat(AT_FDCWD, "/dev//sgx/provision", buf, sizeof(buf)), 16);
	CHECK(!strcmp(buf, "../sgx_provision"));
	CHECK_EQ(readlink("/dev/sgx/enclave", buf, 3), 3);	/* truncated */
	CHECK_EQ(readlink("/dev/sgx_enclave", buf, sizeof(buf)), -1);
	CHECK_EQ(errno, EINVAL);			/* not a link */
	{
		char *volatile bad = (char *)8;

		CHECK_EQ(readlink("/dev/sgx/enclave", bad, 64), -1);
		CHECK_EQ(errno, EFAULT);
	}
	/* O_NOFOLLOW stops at the link; the device behind it is the same. */
	CHECK_EQ(open("/dev/sgx/enclave", O_RDWR | O_NOFOLLOW), -1);
	CHECK_EQ(errno, ELOOP);
	fd = open("/dev/sgx/enclave", O_RDWR);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(fstat(fd, &st), 0);
	REQUIRE_EQ(stat("/dev/sgx_enclave", &dst), 0);
	CHECK_EQ(st.st_rdev, dst.st_rdev);
	close(fd);
}

/* Release an enclave: its descriptor, its windows, its reservation. */
static void drop(struct shim_encl *e)
{
	close(e->fd);
	munmap(e->reserve, 2 * SHIM_ENCL_SIZE);
}

/* v22's ADD_PAGE from a test (seed-tree uapi/asm/sgx.h). */
struct seed_add_page {
	uint64_t addr, src, secinfo;
	uint16_t mrmask;
	uint8_t reserved[6];
};
#define SEED_IOC_ADD_PAGE _IOW(SGX_MAGIC, 0x01, struct seed_add_page)

static int seed_add_one(struct shim_encl *e, uint64_t off, uint64_t flags)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct seed_add_page ap;

	memset(&si, 0, sizeof(si));
	si.flags = flags;
	memset(&ap, 0, sizeof(ap));
	ap.addr = e->base + off;
	ap.src = (uint64_t)(uintptr_t)(e->img + off);
	ap.secinfo = (uint64_t)(uintptr_t)&si;
	ap.mrmask = 0xffff;
	return ioctl_err(e->fd, SEED_IOC_ADD_PAGE, &ap);
}

/*
 * Both APIs on every path; each enclave speaks the one its program uses.
 * Before anything tells them apart the answer is mainline's; after, the
 * other API's own numbers are ENOTTY.
 */
TEST(api_decided_by_the_program)
{
	struct sgx_enclave_restrict_permissions rp = { 0 };
	struct sgx_secinfo si __attribute__((aligned(64))) = { 0 };
	struct sgx_enclave_add_pages ap;
	const char *v = getenv("SGXEMU_SGX2");
	long sgx2 = v && !strcmp(v, "0") ? ENODEV : EINVAL;
	const char *paths[] = { "/dev/sgx/enclave", "/dev/sgx_enclave" };
	struct shim_encl e;
	void *p;

	NEED_SHIM();
	for (int k = 0; k < 2; k++) {
		/* Undecided: mainline's answers. The SDK's EDMM probe gets
		 * EINVAL before INIT, and a mapping where no page is yet is
		 * allowed. The probe is mainline's own: the enclave is
		 * mainline from then on. */
		REQUIRE_EQ(shim_encl_create(&e, paths[k], SHIM_ENCL_ATTRS), 0);
		e.img = shim_encl_image();
		REQUIRE(e.img);
		p = (void *)(uintptr_t)e.base;
		CHECK(mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) == p);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, &rp),
			 sgx2);
		CHECK_EQ(seed_add_one(&e, SHIM_ENCL_DATA, SGX_SECINFO_REG |
				      SGX_SECINFO_R), ENOTTY);
		si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
		ap = addp(&e, SHIM_ENCL_DATA, 4096, &si);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &ap), 0);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &ap), EBUSY);
		drop(&e);

		/* v22 on the same path: its first ADD_PAGE decides. */
		REQUIRE_EQ(shim_encl_create(&e, paths[k], SHIM_ENCL_ATTRS), 0);
		e.img = shim_encl_image();
		REQUIRE(e.img);
		CHECK_EQ(seed_add_one(&e, SHIM_ENCL_DATA, SGX_SECINFO_REG |
				      SGX_SECINFO_R), 0);
		CHECK_EQ(seed_add_one(&e, SHIM_ENCL_DATA, SGX_SECINFO_REG |
				      SGX_SECINFO_R), EEXIST);
		ap = addp(&e, SHIM_ENCL_RO, 4096, &si);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &ap), ENOTTY);
		CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, &rp),
			 ENOTTY);
		/* v22's mapping rule: where no page is, only PROT_NONE. */
		p = (void *)(uintptr_t)(e.base + SHIM_ENCL_RO);
		CHECK(mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) ==
		      MAP_FAILED);
		CHECK_EQ(errno, EACCES);
		p = (void *)(uintptr_t)(e.base + SHIM_ENCL_DATA);
		CHECK(mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) == p);
		CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE), -1);
		CHECK_EQ(errno, EACCES);
		drop(&e);
	}
}

/* One provision device under two names: every pairing grants. */
TEST(provision_every_pairing)
{
	const char *encl[] = { "/dev/sgx/enclave", "/dev/sgx_enclave" };
	const char *prov[] = { "/dev/sgx/provision", "/dev/sgx_provision" };
	struct sgx_enclave_provision pr;
	struct shim_encl e;

	NEED_SHIM();
	REQUIRE(key());
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			REQUIRE_EQ(shim_encl_create(&e, encl[i], SHIM_ENCL_ATTRS |
						    SGX_ATTR_PROVISIONKEY), 0);
			pr.fd = (uint64_t)open(prov[j], O_RDONLY);
			REQUIRE((int)pr.fd >= 0);
			CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_PROVISION, &pr), 0);
			REQUIRE_EQ(shim_encl_add(&e), 0);
			CHECK_EQ(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS |
						SGX_ATTR_PROVISIONKEY), 0);
			close((int)pr.fd);
			drop(&e);
		}
}

/* Where process_vm_readv/writev are refused (container seccomp profiles),
 * the driver still reads and writes user memory and still gives EFAULT for
 * bad pointers. */
TEST(user_copies_without_process_vm_syscalls)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct sgx_enclave_run run;
	struct sgx_enclave_create c;
	struct shim_encl e;
	uint64_t out[2];
	char buf[8];
	struct iovec l = { buf, 8 }, r = { buf, 8 };
	int fd;

	NEED_SHIM();
	REQUIRE_EQ(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	REQUIRE_EQ(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
	CHECK(process_vm_readv(getpid(), &l, 1, &r, 1, 0) < 0 && errno == EPERM);
	fd = open("/dev/sgx_enclave", O_RDWR);
	REQUIRE(fd >= 0);
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, (void *)8), EFAULT);
	c.src = 4096;
	CHECK_EQ(ioctl_err(fd, SGX_IOC_ENCLAVE_CREATE, &c), EFAULT);
	close(fd);
	BUILD(e);	/* every ioctl, the ADD_PAGES count write-back included */
	CHECK_EQ(shim_ecall(&e, 0, 0, out, 4, &run), 0);
	CHECK_EQ(out[0], 5);
}

/* An EPC too small for the enclave: ADD_PAGES stops with ENOMEM and
 * reports the pages it added in count. (Each test runs in its own
 * process, where the platform comes up at the first device open.) */
TEST(add_pages_until_the_epc_is_full)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_enclave_add_pages a;
	struct shim_encl e;

	NEED_SHIM();
	setenv("SGXEMU_EPC_SIZE", "32K", 1);
	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
	e.img = shim_encl_image();
	REQUIRE(e.img);
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;
	a = addp(&e, 0x1000, 12 * 4096, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), ENOMEM);
	CHECK(a.count > 0 && a.count < a.length && !(a.count & 4095));
	a = addp(&e, 0xe000, 4096, &si);
	CHECK_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), ENOMEM);
	CHECK_EQ(a.count, 0);
}

/* Pages added without SGX_PAGE_MEASURE are not in MRENCLAVE: EINIT of the
 * fully measured signature is refused (EPERM). */
TEST(unmeasured_pages_change_mrenclave)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_enclave_add_pages a;
	struct shim_encl e;

	NEED_SHIM();
	REQUIRE(key());
	REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
	e.img = shim_encl_image();
	REQUIRE(e.img);
	/* In the signed order, but the data page unmeasured. */
	for (size_t i = 0; i < SHIM_NR_PAGES; i++) {
		memset(&si, 0, sizeof(si));
		si.flags = shim_pages[i].flags;
		a = addp(&e, shim_pages[i].offset, 4096, &si);
		if (shim_pages[i].offset == SHIM_ENCL_DATA)
			a.flags = 0;
		REQUIRE_EQ(ioctl_err(e.fd, SGX_IOC_ENCLAVE_ADD_PAGES, &a), 0);
	}
	CHECK_EQ(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS), -EPERM);
}

/* ioctl and close racing on one descriptor: every call ends with a result
 * (ENOTTY while open, EBADF after), none with a crash. */
static atomic_int race_fd = -1;
static atomic_bool race_stop;

static void *race_ioctl(void *arg)
{
	long *bad = arg;

	while (!atomic_load(&race_stop)) {
		int fd = atomic_load(&race_fd);
		long e = ioctl_err(fd, 0xA4ff, NULL);

		if (e != ENOTTY && e != EBADF && e != EBUSY)
			(*bad)++;
	}
	return NULL;
}

TEST(ioctl_races_close)
{
	pthread_t th;
	long bad = 0;

	NEED_SHIM();
	REQUIRE_EQ(pthread_create(&th, NULL, race_ioctl, &bad), 0);
	for (int i = 0; i < 2000; i++) {
		int fd = open("/dev/sgx_enclave", O_RDWR);

		atomic_store(&race_fd, fd);
		close(fd);
	}
	atomic_store(&race_stop, true);
	pthread_join(th, NULL);
	CHECK_EQ(bad, 0);
}

/* The program's signal handlers keep working once the engine owns the
 * real handlers: installed before the first device open (handed over
 * then), after it (through sigaction/signal), and for a host fault. */
static volatile sig_atomic_t got_usr1, got_usr2;
static sigjmp_buf segv_jmp;

static void on_usr(int sig)
{
	if (sig == SIGUSR1)
		got_usr1++;
	else
		got_usr2++;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SEGV_ACCERR || si->si_code == SEGV_MAPERR)
		siglongjmp(segv_jmp, 1);
}

TEST(signal_handlers_are_chained)
{
	struct sigaction sa, old;
	struct shim_encl e;
	volatile uint8_t *none;

	NEED_SHIM();
	REQUIRE(signal(SIGUSR2, on_usr) != SIG_ERR);	/* before any device */
	BUILD(e);
	raise(SIGUSR2);
	CHECK_EQ(got_usr2, 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr;
	REQUIRE_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	REQUIRE_EQ(sigaction(SIGUSR1, NULL, &old), 0);
	CHECK(old.sa_handler == on_usr);
	raise(SIGUSR1);
	CHECK_EQ(got_usr1, 1);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
	none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(none != MAP_FAILED);
	if (!sigsetjmp(segv_jmp, 1)) {
		(void)none[0];
		CHECK(!"the host fault did not reach the handler");
	}
	/* And the enclave still runs. */
	{
		struct sgx_enclave_run run;
		uint64_t out[2];

		CHECK_EQ(shim_ecall(&e, 0, 0, out, 1, &run), 0);
		CHECK_EQ(out[0], 2);
	}
}

struct blocked_call {
	struct shim_encl *e;
	int ok, view_has_segv, real_has_trap;
};

/* A worker that blocks every signal, as many do, then calls the enclave:
 * its EEXIT traps with SIGILL or SIGSEGV, which must not be blocked. */
static void *blocked_caller(void *arg)
{
	struct blocked_call *b = arg;
	struct sgx_enclave_run run;
	uint64_t out[2], real = 0;
	sigset_t all, cur;

	sigfillset(&all);
	if (pthread_sigmask(SIG_BLOCK, &all, NULL))
		return NULL;
	b->ok = shim_ecall(b->e, 1, 0, out, 9, &run) == 0 && out[0] == 10;
	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	b->view_has_segv = sigismember(&cur, SIGSEGV) && sigismember(&cur, SIGILL);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &real, 8);
	b->real_has_trap = !!(real & (1ULL << (SIGILL - 1) | 1ULL << (SIGSEGV - 1)));
	return NULL;
}

static struct shim_encl *handler_encl;
static volatile int handler_ecall_ok;

static void ecall_in_handler(int sig)
{
	struct sgx_enclave_run run;
	uint64_t out[2];

	(void)sig;
	handler_ecall_ok = shim_ecall(handler_encl, 2, 0, out, 20, &run) == 0 &&
			   out[0] == 21;
}

/*
 * On hardware ENCLU does not care about the signal mask; under the shim
 * its trap is a signal (SIGILL on AMD, SIGSEGV on Intel) that the kernel
 * would kill a thread for raising while it blocks it. A thread with every
 * signal blocked, and a handler whose sa_mask holds everything, call the
 * enclave; the program still reads back the mask it set.
 */
TEST(enclave_calls_with_every_signal_blocked)
{
	struct blocked_call b = { 0 };
	struct sigaction sa;
	struct shim_encl e;
	pthread_t t;

	NEED_SHIM();
	BUILD(e);
	b.e = &e;
	REQUIRE_EQ(pthread_create(&t, NULL, blocked_caller, &b), 0);
	pthread_join(t, NULL);
	CHECK_EQ(b.ok, 1);
	CHECK_EQ(b.view_has_segv, 1);	/* the program's view */
	CHECK_EQ(b.real_has_trap, 0);	/* the kernel's */

	/* This thread enters first (see test_engine_signals). */
	handler_encl = &e;
	ecall_in_handler(0);
	REQUIRE_EQ(handler_ecall_ok, 1);
	handler_ecall_ok = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ecall_in_handler;
	sigfillset(&sa.sa_mask);
	REQUIRE_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	raise(SIGUSR1);
	CHECK_EQ(handler_ecall_ok, 1);
	sa.sa_handler = SIG_DFL;
	REQUIRE_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	/* Bad input: the kernel's EINVAL for an unknown `how`. */
	{
		sigset_t s;

		sigemptyset(&s);
		errno = 0;
		CHECK_EQ(sigprocmask(99, &s, NULL), -1);
		CHECK_EQ(errno, EINVAL);
		CHECK_EQ(pthread_sigmask(99, &s, NULL), EINVAL);
	}
}

/* Enclaves created after a fork on both sides get different EPC pages
 * (the EPC is shared with the child, the allocators are not). */
static long epc_index(uint64_t linaddr)
{
	struct sgx_cpu *(*cpu)(void) = (struct sgx_cpu *(*)(void))
		dlsym(RTLD_DEFAULT, "sgxemu_platform_cpu");
	long (*lookup)(struct sgx_cpu *, uint64_t) =
		(long (*)(struct sgx_cpu *, uint64_t))
		dlsym(RTLD_DEFAULT, "sgx_cpu_lookup");

	return cpu && lookup ? lookup(cpu(), linaddr) : -2;
}

TEST(fork_then_create_on_both_sides)
{
	struct sgx_enclave_run run;
	struct shim_encl a, b, c;
	long child_idx[SHIM_NR_PAGES];
	uint64_t out[2] = { 0 };
	int to_parent[2], to_child[2];
	char x;
	pid_t pid;
	int status;

	BUILD(a);
	REQUIRE_EQ(pipe(to_parent), 0);
	REQUIRE_EQ(pipe(to_child), 0);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		long idx[SHIM_NR_PAGES];
		int bad = 0;

		if (shim_encl_build(&b, key()))
			_exit(10);
		for (size_t i = 0; i < SHIM_NR_PAGES; i++)
			idx[i] = epc_index(b.base + shim_pages[i].offset);
		if (write(to_parent[1], idx, sizeof(idx)) != (ssize_t)sizeof(idx) ||
		    read(to_child[0], &x, 1) != 1)
			bad |= 2;
		/* Both of the child's enclaves answer. */
		if (shim_ecall(&a, 3, 0, out, 30, &run) || out[0] != 31)
			bad |= 4;
		if (shim_ecall(&b, 2, 0, out, 40, &run) || out[0] != 41)
			bad |= 8;
		_exit(bad);
	}
	REQUIRE_EQ(read(to_parent[0], child_idx, sizeof(child_idx)),
		   (ssize_t)sizeof(child_idx));
	BUILD(c);
	for (size_t i = 0; i < SHIM_NR_PAGES; i++) {
		long mine = epc_index(c.base + shim_pages[i].offset);

		CHECK(mine >= 0 && child_idx[i] >= 0);
		for (size_t j = 0; j < SHIM_NR_PAGES; j++)
			if (mine == child_idx[j])
				test_fail(__FILE__, __LINE__,
					  "EPC page %ld is in both processes' enclaves", mine);
	}
	CHECK_EQ(shim_ecall(&c, 0, 0, out, 70, &run), 0);
	CHECK_EQ(out[0], 71);
	CHECK_EQ(shim_ecall(&a, 1, 0, out, 80, &run), 0);
	CHECK_EQ(out[0], 81);
	CHECK_EQ(write(to_child[1], "c", 1), 1);
	REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}
