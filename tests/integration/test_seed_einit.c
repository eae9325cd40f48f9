/* SPDX-License-Identifier: MIT */
/*
 * The seed selftest's enclave (built by mk/seed.mk from the seed tree, never
 * copied here) launched through the processor model the way the seed's
 * main.c and driver launch it on hardware: ECREATE with the SECS main.c
 * builds, EADD of every page (TCS first, the rest REG RWX) with all 16
 * EEXTENDs, the launch-control MSRs set to the signer as Linux sets them,
 * EINIT with a zeroed token. Once with the SIGSTRUCT the seed's own tool
 * wrote, once with the one `sgxemu sign` writes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpu.h"
#include "cpu/sigstruct.h"
#include "test.h"

#define PAGE		SGX_PAGE_SIZE
#define SEED_SRC	"seed-tree/tools/testing/selftests/x86/sgx"

struct seed_files {
	uint8_t *bin;
	size_t bin_size;
	struct sgx_sigstruct *ss;	/* 4 KiB aligned, as EINIT wants */
};

static bool load_seed(struct seed_files *f)
{
	char path[4096];
	void *ss;
	size_t n;

	snprintf(path, sizeof(path), "%s/seed/encl.bin", test_build_dir());
	f->bin = test_read_file(path, &f->bin_size);
	if (!f->bin)
		return false;
	snprintf(path, sizeof(path), "%s/seed/encl.ss", test_build_dir());
	ss = test_read_file(path, &n);
	if (!ss || n != sizeof(struct sgx_sigstruct)) {
		free(ss);
		free(f->bin);
		return false;
	}
	f->ss = aligned_alloc(PAGE, PAGE);
	memcpy(f->ss, ss, sizeof(*f->ss));
	free(ss);
	return true;
}

static void free_seed(struct seed_files *f)
{
	free(f->bin);
	free(f->ss);
}

/* The enclave size main.c's encl_create() picks. */
static uint64_t seed_encl_size(size_t bin_size)
{
	uint64_t size = PAGE;

	while (size < bin_size)
		size <<= 1;
	return size;
}

/* main.c reserves ELRANGE with mmap and aligns it; any aligned base will do. */
#define SEED_BASE	0x7f0000000000ULL

struct launch {
	struct sgx_cpu cpu;
	void *secs;
};

/*
 * ECREATE, EADD and EEXTEND of the flat image @bin, as the seed's loader and
 * driver do. EPC page 0 holds the SECS, page i+1 enclave page i. Returns 0 or
 * the first failing leaf's result.
 */
static int build_enclave(struct launch *l, const uint8_t *bin, size_t size)
{
	struct sgx_secinfo secinfo __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_secs *secs = aligned_alloc(PAGE, PAGE);
	uint8_t *src = aligned_alloc(PAGE, PAGE);
	int ret;

	memset(secs, 0, sizeof(*secs));
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT;
	secs->attributes.xfrm = 3;
	secs->size = seed_encl_size(size);
	secs->base = SEED_BASE;

	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = SGX_SECINFO_SECS;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uintptr_t)secs;
	pi.secinfo = (uintptr_t)&secinfo;
	l->secs = sgx_epc_page(&l->cpu, 0);
	ret = sgx_ecreate(&l->cpu, &pi, l->secs);
	for (size_t off = 0; !ret && off < size; off += PAGE) {
		uint8_t *epc = sgx_epc_page(&l->cpu, 1 + off / PAGE);

		memcpy(src, bin + off, PAGE);
		memset(&secinfo, 0, sizeof(secinfo));
		secinfo.flags = off ? SGX_SECINFO_REG | SGX_SECINFO_R |
				      SGX_SECINFO_W | SGX_SECINFO_X
				    : SGX_SECINFO_TCS;
		pi.linaddr = SEED_BASE + off;
		pi.srcpge = (uintptr_t)src;
		pi.secinfo = (uintptr_t)&secinfo;
		pi.secs = (uintptr_t)l->secs;
		ret = sgx_eadd(&l->cpu, &pi, epc);
		for (size_t c = 0; !ret && c < PAGE; c += 256)
			ret = sgx_eextend(&l->cpu, l->secs, epc + c);
	}
	free(secs);
	free(src);
	return ret;
}

/* What Linux does before EINIT on a Flexible Launch Control part. */
static int set_le_hash(struct sgx_cpu *cpu, const struct sgx_sigstruct *ss)
{
	uint8_t mrsigner[32];
	int ret = 0;

	sgx_sigstruct_mrsigner(ss, mrsigner);
	for (int i = 0; !ret && i < 4; i++) {
		uint64_t v;

		memcpy(&v, mrsigner + 8 * i, sizeof(v));
		ret = sgx_wrmsr(cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v);
	}
	return ret;
}

static int einit(struct launch *l, const struct sgx_sigstruct *ss)
{
	struct sgx_einittoken *token = aligned_alloc(512, 512);
	int ret;

	memset(token, 0, 512);	/* VALID = 0: the MSRs decide */
	ret = sgx_einit(&l->cpu, ss, l->secs, token);
	free(token);
	return ret;
}

/* Full launch of @bin with @ss; returns EINIT's result (or an earlier one). */
static int launch(const uint8_t *bin, size_t size,
		  const struct sgx_sigstruct *ss, bool set_msrs)
{
	struct launch l;
	int ret;

	if (sgx_cpu_init(&l.cpu, NULL)) {
		printf("    sgx_cpu_init failed\n");
		return -1;
	}
	ret = build_enclave(&l, bin, size);
	if (ret) {
		printf("    building the enclave failed: 0x%x\n", ret);
	} else {
		ret = set_msrs ? set_le_hash(&l.cpu, ss) : 0;
		if (!ret)
			ret = einit(&l, ss);
	}
	sgx_cpu_destroy(&l.cpu);
	return ret;
}

/* Run `sgxemu sign` on image @in with the seed's key. */
static struct sgx_sigstruct *sgxemu_sign(const char *in)
{
	const char *key = test_shared_path(SEED_SRC "/signing_key.pem");
	char out[] = "/tmp/sgxemu-seed-ss-XXXXXX", cmd[8192];
	struct sgx_sigstruct *ss = NULL;
	void *data;
	size_t n;
	int fd;

	if (!key)
		return NULL;
	fd = mkstemp(out);
	if (fd < 0)
		return NULL;
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/sgxemu sign --key '%s' --in '%s' --out %s",
		 test_build_dir(), key, in, out);
	if (system(cmd) == 0) {
		data = test_read_file(out, &n);
		if (data && n == sizeof(*ss)) {
			ss = aligned_alloc(PAGE, PAGE);
			memcpy(ss, data, sizeof(*ss));
		}
		free(data);
	}
	unlink(out);
	return ss;
}

TEST(seed_einit_with_seed_sigstruct)
{
	struct seed_files f;

	if (!load_seed(&f))
		test_skip("%s/seed/encl.bin or encl.ss not built (make seed-build)",
			  test_build_dir());
	CHECK_EQ(launch(f.bin, f.bin_size, f.ss, true), 0);
	free_seed(&f);
}

TEST(seed_einit_with_sgxemu_sigstruct)
{
	struct sgx_sigstruct *ss;
	struct seed_files f;
	char in[4096];

	if (!load_seed(&f))
		test_skip("%s/seed/encl.bin not built (make seed-build)",
			  test_build_dir());
	snprintf(in, sizeof(in), "%s/seed/encl.bin", test_build_dir());
	ss = sgxemu_sign(in);
	REQUIRE(ss != NULL);
	CHECK_MEM(ss, f.ss, sizeof(*ss));
	CHECK_EQ(launch(f.bin, f.bin_size, ss, true), 0);
	free(ss);
	free_seed(&f);
}

/* The launch must fail if the loaded enclave is not the signed one. */
TEST(seed_einit_changed_page_is_refused)
{
	struct seed_files f;

	if (!load_seed(&f))
		test_skip("seed enclave not built");
	f.bin[f.bin_size - 1] ^= 1;
	CHECK_EQ(launch(f.bin, f.bin_size, f.ss, true),
		 SGX_INVALID_MEASUREMENT);
	free_seed(&f);
}

/* Without the MSRs naming its signer (and no token) it must not launch. */
TEST(seed_einit_needs_launch_control)
{
	struct seed_files f;

	if (!load_seed(&f))
		test_skip("seed enclave not built");
	CHECK_EQ(launch(f.bin, f.bin_size, f.ss, false),
		 SGX_INVALID_EINITTOKEN);
	free_seed(&f);
}

/*
 * EADD clears the TCS fields the processor owns (STATE, CSSA, AEP,
 * FLAGS.DBGOPTIN) before the page is measured; `sgxemu sign` must measure
 * the cleared bytes too, or its SIGSTRUCT would not launch an image whose
 * TCS carries junk there.
 */
TEST(sgxemu_sign_measures_tcs_as_eadd_leaves_it)
{
	char in[] = "/tmp/sgxemu-seed-bin-XXXXXX";
	struct sgx_sigstruct *ss;
	struct seed_files f;
	struct sgx_tcs tcs;
	int fd;

	if (!load_seed(&f))
		test_skip("seed enclave not built");
	memcpy(&tcs, f.bin, sizeof(tcs));
	tcs.state = 0x5a5a;
	tcs.flags |= SGX_TCS_DBGOPTIN;
	tcs.cssa = 1;
	tcs.aep = 0x1234;
	memcpy(f.bin, &tcs, sizeof(tcs));
	fd = mkstemp(in);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, f.bin, f.bin_size) == (ssize_t)f.bin_size);
	close(fd);
	ss = sgxemu_sign(in);
	unlink(in);
	REQUIRE(ss != NULL);
	CHECK_EQ(launch(f.bin, f.bin_size, ss, true), 0);
	free(ss);
	free_seed(&f);
}
