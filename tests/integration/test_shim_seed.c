/* SPDX-License-Identifier: MIT */
/*
 * The seed (v22) API under the shim with the shim tests' enclave: the
 * seed's way of reserving ELRANGE (a device mmap before CREATE, trimmed by
 * partial munmap), ADD_PAGE with an absolute address and mrmask, INIT's
 * positive SGX return code, SET_ATTRIBUTE, and the seed vDSO ABI (leaf in
 * EAX; tcs, exception info and callback on the stack; -EFAULT with the
 * exception info on an exception; a callback that can re-enter). Also
 * ENCLU[EENTER] executed directly by host code.
 *
 * Re-executes itself through `sgxemu run` when started without the shim.
 */
#include <dlfcn.h>

#include "../enclaves/shim_encl.h"
#include "test.h"


/* v22 structures (seed-tree arch/x86/include/uapi/asm/sgx.h). */
struct seed_add_page {
	uint64_t addr, src, secinfo;
	uint16_t mrmask;
	uint8_t reserved[6];
};
struct seed_exception {
	uint32_t leaf;
	uint16_t trapnr;
	uint16_t error_code;
	uint64_t address;
	uint64_t reserved[2];
};
#define SEED_IOC_ADD_PAGE	_IOW(SGX_MAGIC, 0x01, struct seed_add_page)
#define SEED_IOC_SET_ATTRIBUTE	_IOW(SGX_MAGIC, 0x03, struct sgx_enclave_provision)

typedef int (*seed_cb)(long rdi, long rsi, long rdx, struct seed_exception *ex,
		       long r8, long r9, void *tcs, long ursp);

/*
 * seed_vdso_call(rdi, rsi, rdx, leaf, tcs, exinfo, callback): the seed
 * ABI from C. Keeps every callee-saved register (the entry itself keeps
 * none but RBP).
 */
int seed_vdso_call(unsigned long rdi, unsigned long rsi, unsigned long rdx,
		   unsigned int leaf, uint64_t tcs, struct seed_exception *ex,
		   seed_cb cb);
__asm__(
	".text\n"
	".globl seed_vdso_call\n"
	"seed_vdso_call:\n"
	SHIM_ASM_SAVE
	"	mov 56(%rsp), %r10\n"		/* callback: 7th argument */
	"	push %r10\n"
	"	push %r9\n"
	"	push %r8\n"
	"	mov %ecx, %eax\n"
	"	call *shim_vdso_fn(%rip)\n"
	"	add $24, %rsp\n"
	SHIM_ASM_RESTORE
	"	ret\n");

static const char *no_shim;

/* Every test here runs under AddressSanitizer too (host ENCLU included:
 * the engine recognises it whatever the fault). */

__attribute__((constructor))
static void under_shim(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)envp;
	no_shim = shim_reexec(argv);
}

static EVP_PKEY *key(void)
{
	static EVP_PKEY *k;

	if (!k)
		k = shim_load_key(test_signing_key());
	if (!k)
		test_abort("%s", shim_key_why);
	return k;
}

/* The seed way: reserve 2 x SIZE through the device, trim it to ELRANGE. */
/* @grant_fd: a provision fd to SET_ATTRIBUTE with before CREATE, or -1. */
static int seed_create_at(struct shim_encl *e, const char *dev, uint64_t attrs,
			  int grant_fd)
{
	struct sgx_enclave_create create;
	struct sgx_secs secs;
	uint8_t *area;

	memset(e, 0, sizeof(*e));
	e->fd = open(dev, O_RDWR);
	if (e->fd < 0)
		return -errno;
	if (grant_fd >= 0) {
		struct sgx_enclave_provision prov = { .fd = (uint64_t)grant_fd };

		if (ioctl(e->fd, SEED_IOC_SET_ATTRIBUTE, &prov))
			return -errno;
	}
	area = mmap(NULL, 2 * SHIM_ENCL_SIZE, PROT_NONE, MAP_SHARED, e->fd, 0);
	if (area == MAP_FAILED)
		return -errno;
	e->base = ((uint64_t)(uintptr_t)area + SHIM_ENCL_SIZE - 1) &
		  ~(SHIM_ENCL_SIZE - 1);
	if (e->base > (uintptr_t)area &&
	    munmap(area, e->base - (uintptr_t)area))
		return -errno;
	if ((uintptr_t)area + SHIM_ENCL_SIZE > e->base &&
	    munmap((void *)(uintptr_t)(e->base + SHIM_ENCL_SIZE),
		   (uintptr_t)area + SHIM_ENCL_SIZE - e->base))
		return -errno;
	shim_encl_secs(&secs, e->base, attrs);
	create.src = (uint64_t)(uintptr_t)&secs;
	if (ioctl(e->fd, SGX_IOC_ENCLAVE_CREATE, &create))
		return -errno;
	e->img = shim_encl_image();
	return e->img ? 0 : -ENOMEM;
}

static int seed_create(struct shim_encl *e, uint64_t attrs)
{
	return seed_create_at(e, "/dev/sgx/enclave", attrs, -1);
}

/* The v22 ADD_PAGE of the image's page at @off with SECINFO.FLAGS @flags,
 * measured in full. */
static void seed_page_req(const struct shim_encl *e, uint64_t off,
			  uint64_t flags, struct sgx_secinfo *si,
			  struct seed_add_page *ap)
{
	memset(si, 0, sizeof(*si));
	si->flags = flags;
	memset(ap, 0, sizeof(*ap));
	ap->addr = e->base + off;
	ap->src = (uint64_t)(uintptr_t)(e->img + off);
	ap->secinfo = (uint64_t)(uintptr_t)si;
	ap->mrmask = 0xffff;
}

static int seed_add_mask(struct shim_encl *e, uint64_t odd_page, uint16_t odd_mask)
{
	for (size_t i = 0; i < SHIM_NR_PAGES; i++) {
		struct sgx_secinfo si __attribute__((aligned(64)));
		struct seed_add_page ap;

		seed_page_req(e, shim_pages[i].offset, shim_pages[i].flags,
			      &si, &ap);
		if (shim_pages[i].offset == odd_page)
			ap.mrmask = odd_mask;
		if (ioctl(e->fd, SEED_IOC_ADD_PAGE, &ap))
			return -errno;
	}
	return 0;
}

static int seed_add(struct shim_encl *e)
{
	return seed_add_mask(e, ~0ULL, 0xffff);
}

/* INIT: the ioctl's value (0, a positive SGX code) or -errno. */
static int seed_init(struct shim_encl *e, uint64_t attrs, bool corrupt)
{
	struct sgx_enclave_init init;
	uint8_t mr[32];
	int r;

	shim_encl_measure(e->img, mr);
	if (shim_sign(key(), mr, attrs, &e->ss))
		return -EBADMSG;
	if (corrupt)
		e->ss.signature[7] ^= 1;
	init.sigstruct = (uint64_t)(uintptr_t)&e->ss;
	r = ioctl(e->fd, SGX_IOC_ENCLAVE_INIT, &init);
	return r < 0 ? -errno : r;
}

static int seed_build_at(struct shim_encl *e, const char *dev)
{
	int ret = seed_create_at(e, dev, SHIM_ENCL_ATTRS, -1);

	if (!ret)
		ret = seed_add(e);
	if (!ret)
		ret = seed_init(e, SHIM_ENCL_ATTRS, false);
	if (!ret)
		ret = shim_encl_map(e);
	if (!shim_vdso_fn)
		shim_vdso_fn = shim_vdso_sym("__vdso_sgx_enter_enclave");
	return ret;
}

#define BUILD_AT(e, dev) do { \
	if (no_shim) test_skip("%s", no_shim); \
	REQUIRE(key()); \
	int _r = seed_build_at(&(e), dev); \
	if (_r) test_fail(__FILE__, __LINE__, "build: %s", strerror(-_r)); \
	REQUIRE(_r == 0); \
	REQUIRE(shim_vdso_fn != NULL); \
} while (0)
#define BUILD(e) BUILD_AT(e, "/dev/sgx/enclave")

static uint64_t tcs(struct shim_encl *e, int i)
{
	return e->base + SHIM_ENCL_TCS(i);
}

TEST(seed_abi_ecall)
{
	struct seed_exception ex;
	struct shim_encl e;
	uint64_t out[2] = { 0 };

	BUILD(e);
	memset(&ex, 0xff, sizeof(ex));
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 9, SGX_EENTER,
				tcs(&e, 0), &ex, NULL), 0);
	CHECK_EQ(out[0], 10);
	CHECK_EQ(out[1], tcs(&e, 0));
	CHECK_EQ(ex.leaf, SGX_EEXIT);
	/* No exception info at all is fine too. */
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 19, SGX_EENTER,
				tcs(&e, 3), NULL, NULL), 0);
	CHECK_EQ(out[0], 20);
	/* Leaves other than EENTER/ERESUME. */
	CHECK_EQ(seed_vdso_call(0, 0, 0, SGX_EEXIT, tcs(&e, 0), &ex, NULL), -EINVAL);
	CHECK_EQ(seed_vdso_call(0, 0, 0, 0, tcs(&e, 0), &ex, NULL), 0);
}

TEST(seed_abi_exception_is_efault)
{
	struct seed_exception ex;
	struct shim_encl e;
	uint64_t out[2] = { 0 };
	uint8_t *hole;

	BUILD(e);
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(hole != MAP_FAILED);
	memset(&ex, 0, sizeof(ex));
	CHECK_EQ(seed_vdso_call(1, (unsigned long)(uintptr_t)out,
				(unsigned long)(uintptr_t)(hole + 16), SGX_EENTER,
				tcs(&e, 1), &ex, NULL), -EFAULT);
	CHECK_EQ(ex.leaf, SGX_ERESUME);
	CHECK_EQ(ex.trapnr, X86_TRAP_PF);
	CHECK(ex.error_code & X86_PF_USER);
	CHECK_EQ(ex.address, (uint64_t)(uintptr_t)hole);
	/* Handle it in the enclave, then ERESUME. */
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, SHIM_OP1_LEN,
				SGX_EENTER, tcs(&e, 1), &ex, NULL), 0);
	CHECK_EQ(seed_vdso_call(0, 0, 0, SGX_ERESUME, tcs(&e, 1), &ex, NULL), 0);
	CHECK_EQ(out[0], 0x600d);
	CHECK_EQ(ex.leaf, SGX_EEXIT);
}

static int cb_calls;
static struct seed_exception *cb_ex;
static void *cb_tcs;
static int cb_ret;

static int callback(long rdi, long rsi, long rdx, struct seed_exception *ex,
		    long r8, long r9, void *tcs_addr, long ursp)
{
	(void)rdi; (void)rsi; (void)rdx; (void)r8; (void)r9; (void)ursp;
	cb_calls++;
	cb_ex = ex;
	cb_tcs = tcs_addr;
	return cb_ret;
}

/* EENTER the first time, 0 the second. */
static int callback_once(long rdi, long rsi, long rdx, struct seed_exception *ex,
			 long r8, long r9, void *tcs_addr, long ursp)
{
	(void)rdi; (void)rsi; (void)rdx; (void)ex; (void)r8; (void)r9;
	(void)tcs_addr; (void)ursp;
	return ++cb_calls == 1 ? SGX_EENTER : 0;
}

TEST(seed_abi_callback)
{
	struct seed_exception ex;
	struct shim_encl e;
	uint64_t out[2] = { 0 };

	BUILD(e);
	cb_calls = 0;
	cb_ret = -77;
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 1, SGX_EENTER,
				tcs(&e, 2), &ex, callback), -77);
	CHECK_EQ(cb_calls, 1);
	CHECK(cb_ex == &ex);
	CHECK(cb_tcs == (void *)(uintptr_t)tcs(&e, 2));
	CHECK_EQ(out[0], 2);
	/* An exception reaches the callback; its 0 is the result. */
	cb_ret = 0;
	CHECK_EQ(seed_vdso_call(2, (unsigned long)(uintptr_t)out, 0, SGX_EENTER,
				tcs(&e, 2), &ex, callback), 0);
	CHECK_EQ(cb_calls, 2);
	CHECK_EQ(ex.trapnr, X86_TRAP_UD);
	/* EENTER from the callback re-enters with the registers as the
	 * enclave left them (RDI = 0: echo again). */
	cb_calls = 0;
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 5, SGX_EENTER,
				tcs(&e, 1), &ex, callback_once), 0);
	CHECK_EQ(cb_calls, 2);
	CHECK_EQ(out[0], 6);
	/* A positive non-leaf from the callback is -EINVAL. */
	cb_ret = 9;
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 1, SGX_EENTER,
				tcs(&e, 3), &ex, callback), -EINVAL);
}

TEST(host_enclu_is_emulated)
{
	struct shim_encl e;
	uint64_t out[2] = { 0 };

	BUILD(e);
	host_enclu_eenter(0, (unsigned long)(uintptr_t)out, 33, tcs(&e, 0));
	CHECK_EQ(out[0], 34);
	CHECK_EQ(out[1], tcs(&e, 0));
}

/* The v22 API is served whichever name opened the device. */
TEST(seed_api_on_the_mainline_path)
{
	struct seed_exception ex;
	struct shim_encl e;
	uint64_t out[2] = { 0 };

	BUILD_AT(e, "/dev/sgx_enclave");
	CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 41, SGX_EENTER,
				tcs(&e, 0), &ex, NULL), 0);
	CHECK_EQ(out[0], 42);
	CHECK_EQ(ex.leaf, SGX_EEXIT);
}

/*
 * A v22 enclave and a mainline one in one process, entered alternately
 * through the one vDSO entry: its convention is decided per call.
 */
TEST(seed_and_mainline_enclaves_in_one_process)
{
	struct sgx_enclave_run run;
	struct seed_exception ex;
	struct shim_encl s, m;
	uint64_t out[2] = { 0 };

	BUILD(s);
	REQUIRE_EQ(shim_encl_create(&m, "/dev/sgx/enclave", SHIM_ENCL_ATTRS), 0);
	REQUIRE_EQ(shim_encl_add(&m), 0);
	REQUIRE_EQ(shim_encl_init(&m, key(), SHIM_ENCL_ATTRS), 0);
	REQUIRE_EQ(shim_encl_map(&m), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(seed_vdso_call(0, (unsigned long)(uintptr_t)out, 10 * i,
					SGX_EENTER, tcs(&s, 1), &ex, NULL), 0);
		CHECK_EQ(out[0], 10 * i + 1);
		CHECK_EQ(out[1], tcs(&s, 1));
		CHECK_EQ(shim_ecall(&m, 1, 0, out, 100 + i, &run), 0);
		CHECK_EQ(out[0], 101 + i);
		CHECK_EQ(out[1], tcs(&m, 1));
		CHECK_EQ(run.function, SGX_EEXIT);
	}
	/* An exception in each reports in its own convention. */
	memset(&ex, 0, sizeof(ex));
	CHECK_EQ(seed_vdso_call(2, (unsigned long)(uintptr_t)out, 0, SGX_EENTER,
				tcs(&s, 2), &ex, NULL), -EFAULT);
	CHECK_EQ(ex.trapnr, X86_TRAP_UD);
	CHECK_EQ(shim_ecall(&m, 2, 2, out, 0, &run), 0);
	CHECK_EQ(run.function, SGX_ERESUME);
	CHECK_EQ(run.exception_vector, X86_TRAP_UD);
}

TEST(seed_init_returns_sgx_code)
{
	struct shim_encl e;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE(key());
	REQUIRE_EQ(seed_create(&e, SHIM_ENCL_ATTRS), 0);
	REQUIRE_EQ(seed_add(&e), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS, true), SGX_INVALID_SIGNATURE);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS, false), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS, false), -EINVAL);
}

TEST(seed_add_page_errnos)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct seed_add_page ap;
	struct shim_encl e;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE_EQ(seed_create(&e, SHIM_ENCL_ATTRS), 0);
	seed_page_req(&e, SHIM_ENCL_DATA, SGX_SECINFO_REG | SGX_SECINFO_R, &si,
		      &ap);
	ap.addr += 8;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), -1);
	CHECK_EQ(errno, EINVAL);
	ap.addr -= 8;
	ap.src += 8;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), -1);
	CHECK_EQ(errno, EINVAL);
	ap.src -= 8;
	ap.secinfo = 1;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), -1);
	CHECK_EQ(errno, EFAULT);
	ap.secinfo = (uint64_t)(uintptr_t)&si;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, (void *)4), -1);
	CHECK_EQ(errno, EFAULT);
	si.flags = SGX_SECINFO_TCS | SGX_SECINFO_X;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), -1);
	CHECK_EQ(errno, EINVAL);
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), 0);
	CHECK_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), -1);
	CHECK_EQ(errno, EEXIST);
}

/*
 * v22 (seed 003's sgx_encl_may_map): where ELRANGE has no page only
 * PROT_NONE maps, by mmap and by mprotect; where one is, its permissions
 * rule (mainline checks nothing where no page is: test_shim_mainline).
 */
TEST(seed_no_page_maps_only_prot_none)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct seed_add_page ap;
	struct shim_encl e;
	void *p;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE_EQ(seed_create(&e, SHIM_ENCL_ATTRS), 0);
	/* A v22 ADD_PAGE makes this a v22 enclave (until then mainline's
	 * rules answer). */
	seed_page_req(&e, SHIM_ENCL_DATA, SGX_SECINFO_REG | SGX_SECINFO_R, &si,
		      &ap);
	REQUIRE_EQ(ioctl(e.fd, SEED_IOC_ADD_PAGE, &ap), 0);
	p = (void *)(uintptr_t)(e.base + 0xf000);	/* no page there */
	CHECK(mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) ==
	      MAP_FAILED);
	CHECK_EQ(errno, EACCES);
	CHECK(mmap(p, 4096, PROT_NONE, MAP_SHARED | MAP_FIXED, e.fd, 0) == p);
	CHECK_EQ(mprotect(p, 4096, PROT_READ), -1);
	CHECK_EQ(errno, EACCES);
	/* Where the page is, its own permissions rule. */
	p = (void *)(uintptr_t)(e.base + SHIM_ENCL_DATA);
	CHECK(mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0) == p);
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_WRITE), -1);
	CHECK_EQ(errno, EACCES);
}

/* v22's grant is set at open and survives CREATE (mainline's does not). */
TEST(seed_set_attribute_before_create)
{
	struct sgx_enclave_provision prov;
	struct shim_encl e;
	int pfd, fd;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE(key());
	pfd = open("/dev/sgx/provision", O_RDONLY);
	REQUIRE(pfd >= 0);
	/* Any provision device grants (one device under two names); an fd
	 * that is none does not. */
	fd = open("/dev/sgx/enclave", O_RDWR);
	REQUIRE(fd >= 0);
	prov.fd = (uint64_t)open("/dev/sgx_provision", O_RDONLY);
	CHECK_EQ(ioctl(fd, SEED_IOC_SET_ATTRIBUTE, &prov), 0);
	prov.fd = (uint64_t)fd;
	CHECK_EQ(ioctl(fd, SEED_IOC_SET_ATTRIBUTE, &prov), -1);
	CHECK_EQ(errno, EINVAL);
	close(fd);

	REQUIRE_EQ(seed_create(&e, SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY), 0);
	REQUIRE_EQ(seed_add(&e), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY, false),
		 -EACCES);
	prov.fd = (uint64_t)pfd;
	CHECK_EQ(ioctl(e.fd, SEED_IOC_SET_ATTRIBUTE, &prov), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY, false), 0);

	/* A grant before CREATE: the enclave's API is not known yet, and
	 * CREATE drops it as mainline's does; the first ADD_PAGE (v22)
	 * brings it back, mainline's ADD_PAGES does not. */
	REQUIRE_EQ(seed_create_at(&e, "/dev/sgx/enclave", SHIM_ENCL_ATTRS |
				  SGX_ATTR_PROVISIONKEY, pfd), 0);
	REQUIRE_EQ(seed_add(&e), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY, false), 0);
	REQUIRE_EQ(seed_create_at(&e, "/dev/sgx/enclave", SHIM_ENCL_ATTRS |
				  SGX_ATTR_PROVISIONKEY, pfd), 0);
	REQUIRE_EQ(shim_encl_add(&e), 0);
	CHECK_EQ(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS |
				SGX_ATTR_PROVISIONKEY), -EACCES);
}

/* Closing every fd and unmapping every window releases the enclave. */
TEST(release_on_last_close_and_unmap)
{
	struct sgxemu_enclave *(*find)(uint64_t);
	struct shim_encl e;

	BUILD(e);
	find = (struct sgxemu_enclave *(*)(uint64_t))
	       dlsym(RTLD_DEFAULT, "sgxemu_enclave_find");
	REQUIRE(find != NULL);
	CHECK(find(e.base) != NULL);
	CHECK_EQ(close(e.fd), 0);
	CHECK(find(e.base) != NULL);	/* the windows keep it */
	CHECK_EQ(munmap((void *)(uintptr_t)e.base, SHIM_ENCL_SIZE / 2), 0);
	CHECK(find(e.base) != NULL);
	CHECK_EQ(munmap((void *)(uintptr_t)(e.base + SHIM_ENCL_SIZE / 2),
			SHIM_ENCL_SIZE / 2), 0);
	CHECK(find(e.base) == NULL);
}

/* mrmask selects the 256-byte chunks EEXTEND measures: measuring less than
 * the signer did is EINIT's SGX_INVALID_MEASUREMENT, returned as is. */
TEST(seed_mrmask_is_measured)
{
	struct shim_encl e;

	if (no_shim)
		test_skip("%s", no_shim);
	REQUIRE(key());
	REQUIRE_EQ(seed_create(&e, SHIM_ENCL_ATTRS), 0);
	REQUIRE_EQ(seed_add_mask(&e, SHIM_ENCL_DATA, 0x00ff), 0);
	CHECK_EQ(seed_init(&e, SHIM_ENCL_ATTRS, false), SGX_INVALID_MEASUREMENT);
}
