/* SPDX-License-Identifier: MIT */
/*
 * The ioctls of both driver APIs (src/driver/ioctl.c) with the argument
 * structures and the memory they point at: CREATE (SECS), ADD_PAGES /
 * v22 ADD_PAGE (SECINFO, source, offsets, masks), INIT (SIGSTRUCT),
 * PROVISION / SET_ATTRIBUTE (an fd), and any other command number.
 *
 * Input: u8 switches (bit 0: the seed's v22 API), then up to 8
 * operations of a u8 opcode each (see the cases below). Operands start
 * from a canonical enclave — a TCS and an RWX page in 8 KiB, whose
 * SIGSTRUCT is signed at start-up — so the empty input stops short of
 * nothing and the seeds reach a launched enclave. ELRANGE always lies in
 * a PROT_NONE region the harness reserved, so a fuzzed SECS never maps
 * an enclave over memory of the fuzzer's own.
 *
 * After each input the enclave file is closed and the EPC's free page
 * count must be back where it was: nothing leaked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <asm/sgx.h>

#include "fuzz.h"
#include "fuzz_sign.h"
#include "driver/driver.h"
#include "image.h"
#include "sgxemu/sgxemu.h"

#define REGION		(16ULL << 20)
#define ENCL_SIZE	0x2000ULL

/* The v22 ADD_PAGE argument (seed uapi). */
struct seed_add_page {
	uint64_t addr, src, secinfo;
	uint16_t mrmask;
	uint8_t  reserved[6];
};
#define SEED_ADD_PAGE	_IOW(SGX_MAGIC, 0x01, struct seed_add_page)
#define SEED_SET_ATTR	_IOW(SGX_MAGIC, 0x03, struct sgx_enclave_provision)

static uint64_t region;			/* REGION bytes, REGION-aligned */
static struct sgx_file *prov[2];	/* provision files of both APIs */
static struct sgx_file *current;	/* the enclave file of this input */
static struct sgx_sigstruct *good_sig;	/* signs the canonical enclave */
static struct sgx_sigstruct *sig;
static uint8_t *pages;			/* canonical TCS page, RWX page */
static uint8_t *src;			/* 4 pages of source for ADD */
static struct sgx_secs *secs;
static uint64_t free_pages;

static struct sgx_file *resolve(int fd)
{
	struct sgx_file *f = fd == 100 ? prov[0] : fd == 101 ? prov[1] :
			     fd == 102 ? current : NULL;

	if (f)
		sgx_file_get(f);
	return f;
}

static uint64_t epc_free(void)
{
	struct sgxemu_platform_stats st;

	if (sgxemu_platform_stats(&st))
		abort();
	return st.epc_free_pages;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/sgxemu-fuzz-ioctl-XXXXXX", path[128];
	uint8_t mrenclave[32];
	struct sgx_tcs *tcs;
	char err[128];
	void *r;
	int e;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/secrets", dir);
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	setenv("SGXEMU_AUDIT_LOG", "/dev/null", 1);
	setenv("SGXEMU_EPC_SIZE", "1M", 1);
	if (sgxemu_platform_init())
		abort();
	/* FUZZ_DEBUG=1: the driver's refusal reasons, to check the seeds. */
	sgx_drv_debug = getenv("FUZZ_DEBUG") != NULL;
	r = mmap(NULL, 2 * REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		abort();
	region = ((uint64_t)(uintptr_t)r + REGION - 1) & ~(REGION - 1);

	pages = aligned_alloc(4096, 2 * 4096);
	src = aligned_alloc(4096, 4 * 4096);
	secs = aligned_alloc(4096, 4096);
	good_sig = aligned_alloc(4096, 4096);
	sig = aligned_alloc(4096, 4096);
	if (!pages || !src || !secs || !good_sig || !sig)
		abort();
	memset(pages, 0, 2 * 4096);
	tcs = (struct sgx_tcs *)pages;
	tcs->ossa = 0x1000;
	tcs->nssa = 1;
	tcs->oentry = 0x1000;
	if (image_measure_flat(pages, 2 * 4096, mrenclave, err, sizeof(err)))
		abort();
	fuzz_sign_init();
	fuzz_sigstruct_header(good_sig);
	good_sig->body.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	good_sig->body.attributes.xfrm = SGX_XFRM_LEGACY;
	memcpy(good_sig->body.enclavehash, mrenclave, 32);
	fuzz_sign(good_sig);

	prov[0] = sgx_drv_open(SGX_API_MAINLINE, SGX_DEV_PROVISION, &e);
	prov[1] = sgx_drv_open(SGX_API_SEED, SGX_DEV_PROVISION, &e);
	if (!prov[0] || !prov[1])
		abort();
	sgx_drv_set_fd_resolver(resolve);
	free_pages = epc_free();
	return 0;
}

static void patch(struct fuzz_in *in, void *obj, size_t size)
{
	unsigned n = fuzz_u8(in) % 8;

	for (unsigned i = 0; i < n; i++) {
		uint16_t off = fuzz_u16(in);
		uint8_t x = fuzz_u8(in);

		((uint8_t *)obj)[off % size] ^= x;
	}
}

/* A user pointer: the good one, or (by @mode) a bad or unaligned one. */
static unsigned long uptr(const void *good, uint8_t mode)
{
	switch (mode & 3) {
	case 1:
		return 8;			/* unmapped */
	case 2:
		return region;			/* PROT_NONE */
	case 3:
		return (unsigned long)good + 1;	/* misaligned */
	default:
		return (unsigned long)good;
	}
}

static void op_create(struct fuzz_in *in, bool seed_api)
{
	struct sgx_enclave_create ioc;
	uint8_t mode = fuzz_u8(in);

	(void)seed_api;
	memset(secs, 0, sizeof(*secs));
	secs->size = ENCL_SIZE;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	patch(in, secs, 512);
	/* ELRANGE inside our reservation, whatever SIZE says. */
	if (secs->size && !(secs->size & (secs->size - 1)) &&
	    secs->size <= REGION)
		secs->base = region + (secs->base & (REGION - 1) &
				       ~(secs->size - 1)) +
			     (mode & 0x80 ? secs->base & 0xfff : 0);
	else
		secs->base = region;
	ioc.src = mode & 0x10 ? uptr(secs, mode) : (uintptr_t)secs;
	sgx_drv_ioctl(current, SGX_IOC_ENCLAVE_CREATE,
		      mode & 0x20 ? uptr(&ioc, mode >> 2) : (uintptr_t)&ioc);
}

static const uint64_t page_flags[] = {
	SGX_SECINFO_TCS,
	SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W | SGX_SECINFO_X,
	SGX_SECINFO_REG | SGX_SECINFO_R,
	SGX_SECINFO_REG | SGX_SECINFO_W,
	SGX_SECINFO_SECS,
	SGX_SECINFO_TCS | SGX_SECINFO_R,
};

static void op_add(struct fuzz_in *in, bool seed_api)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	uint8_t what = fuzz_u8(in), mode = fuzz_u8(in);
	unsigned page = what & 1;	/* 0: the TCS at 0, 1: the RWX page */
	uint64_t off = page * 4096;
	unsigned long sip, srcp;

	memset(&si, 0, sizeof(si));
	si.flags = page ? page_flags[1] : page_flags[0];
	memcpy(src, pages + off, 4096);
	if (what & 2) {
		si.flags = page_flags[fuzz_u8(in) % 6];
		patch(in, &si, sizeof(si));
		patch(in, src, 4096);
	}
	if (what & 4)
		off = (uint64_t)fuzz_u16(in) << 12 | (what & 8 ? fuzz_u8(in) : 0);
	sip = mode & 0x10 ? uptr(&si, mode) : (uintptr_t)&si;
	srcp = mode & 0x20 ? uptr(src, mode >> 2) : (uintptr_t)src;
	if (seed_api) {
		struct seed_add_page ioc = {
			.addr = region + off, .src = srcp, .secinfo = sip,
			.mrmask = what & 0x10 ? fuzz_u16(in) : 0xffff,
		};

		if (what & 0x20)
			ioc.reserved[0] = 1;
		sgx_drv_ioctl(current, SEED_ADD_PAGE, mode & 0x40 ?
			      uptr(&ioc, mode >> 4) : (uintptr_t)&ioc);
	} else {
		struct sgx_enclave_add_pages ioc = {
			.src = srcp, .offset = off, .length = 4096,
			.secinfo = sip, .flags = SGX_PAGE_MEASURE,
		};

		if (what & 0x10)
			ioc.length = (uint64_t)(fuzz_u8(in) % 5) << 12 |
				     (what & 0x40 ? 1 : 0);
		if (what & 0x20)
			ioc.flags = fuzz_u64(in);
		if (what & 0x80)
			ioc.count = fuzz_u64(in);
		sgx_drv_ioctl(current, SGX_IOC_ENCLAVE_ADD_PAGES, mode & 0x40 ?
			      uptr(&ioc, mode >> 4) : (uintptr_t)&ioc);
	}
}

static void op_init(struct fuzz_in *in)
{
	struct sgx_enclave_init ioc;
	uint8_t mode = fuzz_u8(in);

	memcpy(sig, good_sig, sizeof(*sig));
	if (mode & 1) {
		patch(in, sig, 1028);
		if (mode & 2)
			fuzz_sign_cached(sig);
		patch(in, sig, sizeof(*sig));
	}
	ioc.sigstruct = mode & 0x10 ? uptr(sig, mode >> 2) : (uintptr_t)sig;
	sgx_drv_ioctl(current, SGX_IOC_ENCLAVE_INIT,
		      mode & 0x20 ? uptr(&ioc, mode >> 4) : (uintptr_t)&ioc);
}

static void op_provision(struct fuzz_in *in, bool seed_api)
{
	struct sgx_enclave_provision ioc;
	uint8_t which = fuzz_u8(in);

	ioc.fd = which < 0xf0 ? 100 + which % 4 : (uint32_t)fuzz_u64(in);
	sgx_drv_ioctl(current, seed_api ? SEED_SET_ATTR :
		      SGX_IOC_ENCLAVE_PROVISION, (uintptr_t)&ioc);
}

static void op_raw(struct fuzz_in *in)
{
	static const unsigned long cmds[] = {
		SGX_IOC_ENCLAVE_CREATE, SGX_IOC_ENCLAVE_ADD_PAGES,
		SGX_IOC_ENCLAVE_INIT, SGX_IOC_ENCLAVE_PROVISION,
		SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS,
		SGX_IOC_ENCLAVE_MODIFY_TYPES, SGX_IOC_ENCLAVE_REMOVE_PAGES,
		SEED_ADD_PAGE, SEED_SET_ATTR,
	};
	uint8_t buf[128] __attribute__((aligned(64)));
	uint8_t which = fuzz_u8(in), mode = fuzz_u8(in);
	unsigned long cmd = which < 0xf0 ? cmds[which % 9] :
			    (unsigned long)(uint32_t)fuzz_u64(in);

	fuzz_bytes(in, buf, sizeof(buf));
	sgx_drv_ioctl(current, cmd, mode & 1 ? fuzz_u64(in) :
		      uptr(buf, mode >> 1));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t sw = fuzz_u8(&in);
	bool seed_api = sw & 1;
	int err;

	current = sgx_drv_open(seed_api ? SGX_API_SEED : SGX_API_MAINLINE,
			       SGX_DEV_ENCLAVE, &err);
	if (!current)
		abort();
	for (int op = 0; op < 8 && in.left; op++) {
		switch (fuzz_u8(&in) % 6) {
		case 0:
			op_create(&in, seed_api);
			break;
		case 1:
		case 2:
			op_add(&in, seed_api);
			break;
		case 3:
			op_init(&in);
			break;
		case 4:
			op_provision(&in, seed_api);
			break;
		case 5:
			op_raw(&in);
			break;
		}
	}
	sgx_file_put(current);
	current = NULL;
	if (epc_free() != free_pages) {
		fprintf(stderr, "EPC pages leaked: %llu free, %llu before\n",
			(unsigned long long)epc_free(),
			(unsigned long long)free_pages);
		abort();
	}
	return 0;
}
