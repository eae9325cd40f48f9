/* SPDX-License-Identifier: MIT */
/*
 * Loading the engine's test enclaves (and the seed's) through the public C
 * API, for tests and benchmarks: pick a free aligned ELRANGE, EADD every
 * page with its permissions, sign the measurement with the build's own key
 * (test_signing_key(), test-side OpenSSL), EINIT.
 */
#ifndef SGXEMU_TEST_ENCL_UTIL_H
#define SGXEMU_TEST_ENCL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "engine/engine.h"
#include "layout.h"
#include "meas_log.h"
#include "sgxemu/sgxemu.h"


static inline void *tu_read(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*size = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Room left free above the range handed out: the mmaps made until the
 * enclave claims it (ECREATE's own arrays, one of them a byte per EPC
 * page) take the top of the hole first. */
#define TU_FREE_SLACK	(64ULL << 20)

/* A free, @size-aligned range of @size bytes. */
static inline uint64_t tu_free_base(uint64_t size)
{
	void *p = (sgxemu_platform_init(), mmap(NULL, size * 2 + TU_FREE_SLACK,
		       PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0));
	uint64_t base;

	/* (The platform's own mappings are made first, above, or they could
	 * land in the range handed out here.) */
	if (p == MAP_FAILED)
		return 0;
	base = ((uint64_t)(uintptr_t)p + size - 1) & ~(size - 1);
	munmap(p, size * 2 + TU_FREE_SLACK);
	return base;
}

/* Sign @sig (header and body filled) with the PEM key at @path. */
static inline int tu_sign(struct sgx_sigstruct *sig, const char *path)
{
	uint8_t msg[256], s_be[384];
	size_t slen = sizeof(s_be);
	BIGNUM *n = NULL, *s = NULL, *q1 = BN_new(), *q2 = BN_new();
	BIGNUM *t = BN_new();
	BN_CTX *bc = BN_CTX_new();
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY *key = NULL;
	FILE *f = path ? fopen(path, "r") : NULL;
	int ok = 0;

	if (!f)
		goto out;
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!key || !EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    BN_bn2lebinpad(n, sig->modulus, 384) != 384)
		goto out;
	sig->exponent = 3;
	memcpy(msg, &sig->header, 128);
	memcpy(msg + 128, &sig->body, 128);
	if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(md, s_be, &slen, msg, sizeof(msg)) != 1)
		goto out;
	s = BN_bin2bn(s_be, (int)slen, NULL);
	/* q1 = floor(s^2 / n), q2 = floor((s^3 - q1 * s * n) / n) */
	ok = s && BN_sqr(t, s, bc) && BN_div(q1, NULL, t, n, bc) &&
	     BN_mul(t, t, s, bc) && BN_mul(q2, q1, s, bc) &&
	     BN_mul(q2, q2, n, bc) && BN_sub(t, t, q2) &&
	     BN_div(q2, NULL, t, n, bc) &&
	     BN_bn2lebinpad(s, sig->signature, 384) == 384 &&
	     BN_bn2lebinpad(q1, sig->q1, 384) == 384 &&
	     BN_bn2lebinpad(q2, sig->q2, 384) == 384;
out:
	BN_free(n); BN_free(s); BN_free(q1); BN_free(q2); BN_free(t);
	BN_CTX_free(bc);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	return ok ? 0 : -1;
}

/*
 * A SIGSTRUCT for @mrenclave, the value the test computed itself
 * (meas_log.h): EINIT accepts it only if the processor model measured
 * the enclave the same way.
 */
static inline int tu_sigstruct(const uint8_t mrenclave[32],
			       const struct sgx_secs *secs,
			       struct sgx_sigstruct *sig, const char *key)
{
	static const uint8_t h1[16] = { 6, 0, 0, 0, 0xe1, 0, 0, 0,
					0, 0, 1, 0, 0, 0, 0, 0 };
	static const uint8_t h2[16] = { 1, 1, 0, 0, 0x60, 0, 0, 0,
					0x60, 0, 0, 0, 1, 0, 0, 0 };
	memset(sig, 0, sizeof(*sig));
	memcpy(sig->header.header, h1, 16);
	memcpy(sig->header.header2, h2, 16);
	sig->body.miscselect = secs->miscselect;
	sig->body.miscmask = 0xffffffff;
	sig->body.attributes = secs->attributes;
	sig->body.attributemask.flags = ~0ULL;
	sig->body.attributemask.xfrm = ~0ULL;
	memcpy(sig->body.enclavehash, mrenclave, 32);
	return tu_sign(sig, key);
}

/* Page permissions of the test-enclave layout (layout.h). */
static inline uint64_t tu_layout_secinfo(size_t page)
{
	uint64_t off = (uint64_t)page << 12;

	if (off <= L_TCS2)
		return SGX_SECINFO_TCS;
	if (off < L_TEXT)
		return SGX_SECINFO_REG | SGX_SECINFO_R;
	if (off < L_DATA)
		return SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X;
	if (off == L_RO)
		return SGX_SECINFO_REG | SGX_SECINFO_R;
	return SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W;
}

static inline int tu_prot(uint64_t secinfo)
{
	if ((secinfo & SGX_SECINFO_PT_MASK) == SGX_SECINFO_TCS)
		return PROT_READ | PROT_WRITE;
	return (secinfo & SGX_SECINFO_R ? PROT_READ : 0) |
	       (secinfo & SGX_SECINFO_W ? PROT_WRITE : 0) |
	       (secinfo & SGX_SECINFO_X ? PROT_EXEC : 0);
}

/*
 * Load a flat test-enclave image @path (layout.h) and EINIT it. Returns
 * the enclave (base in *base) or NULL with a reason in @why.
 */
static inline struct sgxemu_enclave *tu_load_layout_attr(const char *path,
							 uint64_t *base,
							 const char **why,
							 uint64_t xfrm,
							 uint64_t attr)
{
	struct sgxemu_enclave *e = NULL;
	struct sgx_secs secs;
	struct sgx_sigstruct *sig = NULL;
	uint8_t *img, page[4096], mr[32];
	struct tm_log log = { 0 };
	size_t size = 0;
	int err = 0;

	img = tu_read(path, &size);
	if (!img) {
		*why = "cannot read the enclave image (make test builds it)";
		return NULL;
	}
	tm_init(&log, 1, L_SIZE);
	memset(&secs, 0, sizeof(secs));
	secs.size = L_SIZE;
	secs.base = tu_free_base(L_SIZE);
	secs.ssa_frame_size = 1;
	secs.miscselect = SGX_MISC_EXINFO;
	secs.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG | attr;
	secs.attributes.xfrm = xfrm;
	if (sgxemu_enclave_create(&secs, 0, &e, &err)) {
		*why = "ECREATE failed";
		goto fail;
	}
	for (size_t i = 0; i < L_PAGES; i++) {
		struct sgx_secinfo si;

		memset(&si, 0, sizeof(si));
		si.flags = tu_layout_secinfo(i);
		memset(page, 0, sizeof(page));
		if ((i + 1) * 4096 <= size)
			memcpy(page, img + i * 4096, 4096);
		tm_add(&log, i * 4096, si.flags, page, 0xffff);
		if (sgxemu_enclave_add_page(e, secs.base + i * 4096, page, &si,
					    0xffff, tu_prot(si.flags), &err)) {
			*why = "EADD failed";
			goto fail;
		}
	}
	if (tm_final(&log, mr)) {
		*why = "out of memory for the measurement log";
		goto fail;
	}
	sig = aligned_alloc(4096, 4096);
	if (!sig || tu_sigstruct(mr, &secs, sig,
				 test_signing_key())) {
		*why = "signing failed (the build's key, tests/lib/test.h)";
		goto fail;
	}
	if (sgxemu_enclave_init(e, sig, NULL, &err)) {
		*why = err == SGX_INVALID_MEASUREMENT ?
		       "EINIT: MRENCLAVE differs from the test's own measurement" :
		       "EINIT failed";
		goto fail;
	}
	free(sig);
	free(img);
	*base = secs.base;
	return e;
fail:
	free(log.buf);
	if (e)
		sgxemu_enclave_destroy(e);
	free(sig);
	free(img);
	return NULL;
}

static inline struct sgxemu_enclave *tu_load_layout_xfrm(const char *path,
							 uint64_t *base,
							 const char **why,
							 uint64_t xfrm)
{
	return tu_load_layout_attr(path, base, why, xfrm, 0);
}

static inline struct sgxemu_enclave *tu_load_layout(const char *path,
						    uint64_t *base,
						    const char **why)
{
	return tu_load_layout_xfrm(path, base, why, SGX_XFRM_LEGACY);
}

static inline struct sgxemu_enclave *tu_load_test_encl(uint64_t *base,
						       const char **why)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/enclaves/test_encl.bin",
		 test_build_dir());
	return tu_load_layout(path, base, why);
}

/* The host's XCR0 (x87 and SSE where the OS has no XSAVE). */
static inline uint64_t tu_host_xcr0(void)
{
	uint32_t a, b, c, d, lo, hi;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(1), "c"(0));
	if (!(c & (1U << 27)))		/* OSXSAVE */
		return 3;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

/* AVX-512 on the CPU and enabled in XCR0 (opmask, ZMM_Hi256, Hi16_ZMM). */
static inline bool tu_host_avx512(void)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(7), "c"(0));
	return (b & (1U << 16)) && (tu_host_xcr0() & 0xe0) == 0xe0;
}

/* Call the enclave: EENTER of @tcs with RDI = @cmd, RSI, RDX, R8. */
static inline int tu_call(struct sgxemu_run *run, uint64_t tcs, uint64_t cmd,
			  uint64_t rsi, uint64_t rdx, uint64_t r8)
{
	memset(run, 0, sizeof(*run));
	run->tcs = tcs;
	run->leaf = SGX_EENTER;
	run->regs.rdi = cmd;
	run->regs.rsi = rsi;
	run->regs.rdx = rdx;
	run->regs.r8 = r8;
	return sgxemu_enter(run);
}

static inline int tu_resume(struct sgxemu_run *run, uint64_t tcs)
{
	memset(run, 0, sizeof(*run));
	run->tcs = tcs;
	run->leaf = SGX_ERESUME;
	return sgxemu_enter(run);
}

#endif
