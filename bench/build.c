/* SPDX-License-Identifier: MIT */
/*
 * bench/build: how fast the processor model builds a fully measured enclave,
 * against the floor set by the hashing itself.
 *
 * Emulated: ECREATE of a 64 MiB enclave, then for every page EADD plus 16
 * EEXTENDs (all of it measured), through the real leaf functions.
 * Raw: SHA-256 (OpenSSL EVP) over the same number of bytes that measurement
 * hashes per page: one 64-byte EADD record and 16 x (64-byte EEXTEND record
 * + 256 data bytes) = 5,184 bytes.
 * The ratio emulated pages/s / raw pages/s says how much the model adds on
 * top of the SHA-256 it cannot avoid. Both run in the same process, best of
 * ROUNDS each, interleaved so that frequency changes hit both alike.
 *
 * EADD must also copy each page into the EPC, which the raw floor leaves
 * out; the copy alone (page by page into a cold buffer of the enclave's size,
 * as EADD writes the EPC) is timed too, so the output shows the ceiling a
 * serial EADD-then-EEXTEND can reach on this host: hash / (hash + copy).
 *
 * Last line, as for every benchmark: `build ratio=R target=0.9`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "cpu/cpu.h"

#define PAGE		SGX_PAGE_SIZE
#define ENCL_SIZE	(64ULL << 20)
#define NR_PAGES	(ENCL_SIZE / PAGE)
#define HASHED_PER_PAGE	(64 + 16 * (64 + 256))
#define ENCL_BASE	0x7f0000000000ULL
#define ROUNDS		9
#define TARGET		0.9

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to build the enclave from @image, or a negative value on error. */
static double build_emulated(const uint8_t *image)
{
	struct sgx_secinfo secinfo __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_secs *secs = aligned_alloc(PAGE, PAGE);
	struct sgx_cpu cpu;
	double t0, t = -1;
	void *secs_page;
	int ret;

	if (sgx_cpu_init(&cpu, NULL)) {
		fprintf(stderr, "build: sgx_cpu_init failed\n");
		free(secs);
		return -1;
	}
	/*
	 * Fault the EPC in first: it is set up once per platform and lives as
	 * long as the process, so first-touch page faults are not part of
	 * building an enclave.
	 */
	memset(cpu.epc, 0, cpu.nr_pages * PAGE);

	memset(secs, 0, sizeof(*secs));
	secs->size = ENCL_SIZE;
	secs->base = ENCL_BASE;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = SGX_SECINFO_SECS;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uintptr_t)secs;
	pi.secinfo = (uintptr_t)&secinfo;
	secs_page = sgx_epc_page(&cpu, 0);

	t0 = now();
	ret = sgx_ecreate(&cpu, &pi, secs_page);
	secinfo.flags = SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;
	pi.secs = (uintptr_t)secs_page;
	for (uint64_t i = 0; !ret && i < NR_PAGES; i++) {
		uint8_t *epc = sgx_epc_page(&cpu, 1 + i);

		pi.linaddr = ENCL_BASE + i * PAGE;
		pi.srcpge = (uintptr_t)(image + i * PAGE);
		ret = sgx_eadd(&cpu, &pi, epc);
		for (unsigned c = 0; !ret && c < PAGE; c += 256)
			ret = sgx_eextend(&cpu, secs_page, epc + c);
	}
	if (!ret)
		t = now() - t0;
	else
		fprintf(stderr, "build: a leaf failed: 0x%x\n", ret);
	sgx_cpu_destroy(&cpu);
	free(secs);
	return t;
}

/* Seconds for SHA-256 over NR_PAGES x HASHED_PER_PAGE bytes of @image. */
static double hash_raw(const uint8_t *image, uint8_t digest[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	double t0, t;

	t0 = now();
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	/* One update per page, as the measurement is fed page by page. */
	for (uint64_t i = 0; i < NR_PAGES; i++)
		EVP_DigestUpdate(ctx, image + i * PAGE, HASHED_PER_PAGE);
	EVP_DigestFinal_ex(ctx, digest, NULL);
	t = now() - t0;
	EVP_MD_CTX_free(ctx);
	return t;
}

volatile uint8_t copy_sink;

/* Seconds to copy every page of @image into @dst, page by page, as EADD. */
static double copy_raw(const uint8_t *image, uint8_t *dst)
{
	double t0 = now(), t;

	for (uint64_t i = 0; i < NR_PAGES; i++)
		memcpy(dst + i * PAGE, image + i * PAGE, PAGE);
	t = now() - t0;
	copy_sink = dst[(NR_PAGES - 1) * PAGE];	/* the copies are used */
	return t;
}

int main(void)
{
	/* One page of slack so the raw hash can read 5,184 bytes at the end. */
	uint8_t *image = aligned_alloc(PAGE, ENCL_SIZE + 2 * PAGE);
	uint8_t *dst = aligned_alloc(PAGE, ENCL_SIZE);
	double emu = 1e9, raw = 1e9, copy = 1e9, emu_pps, raw_pps;
	uint8_t digest[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (!image || !dst) {
		fprintf(stderr, "build: out of memory\n");
		return 1;
	}
	memset(dst, 0, ENCL_SIZE);
	/* Incompressible-looking content; SHA-256 does not care, memcpy might. */
	for (size_t i = 0; i < (ENCL_SIZE + 2 * PAGE) / 8; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(image + 8 * i, &x, 8);
	}

	for (int r = 0; r < ROUNDS; r++) {
		double e = build_emulated(image), h = hash_raw(image, digest);
		double c = copy_raw(image, dst);

		if (e < 0)
			return 1;
		if (e < emu)
			emu = e;
		if (h < raw)
			raw = h;
		if (c < copy)
			copy = c;
	}
	emu_pps = NR_PAGES / emu;
	raw_pps = NR_PAGES / raw;
	printf("build: %llu MiB enclave, %llu pages, %d hashed bytes per page, "
	       "best of %d\n", ENCL_SIZE >> 20, (unsigned long long)NR_PAGES,
	       HASHED_PER_PAGE, ROUNDS);
	printf("build: emulated ECREATE + EADD + 16 x EEXTEND: %10.0f pages/s "
	       "(%.1f ms, %.0f MB/s hashed)\n", emu_pps, emu * 1e3,
	       NR_PAGES * (double)HASHED_PER_PAGE / emu / 1e6);
	printf("build: raw SHA-256 (EVP), same bytes:         %10.0f pages/s "
	       "(%.1f ms, %.0f MB/s)\n", raw_pps, raw * 1e3,
	       NR_PAGES * (double)HASHED_PER_PAGE / raw / 1e6);
	printf("build: EADD's page copy alone (cold):        %10.2f us/page; "
	       "serial ceiling hash/(hash+copy) = %.2f\n",
	       copy / NR_PAGES * 1e6, raw / (raw + copy));
	printf("build ratio=%.2f target=%.1f\n", emu_pps / raw_pps, TARGET);
	free(dst);
	free(image);
	return 0;
}
