/* SPDX-License-Identifier: MIT */
/*
 * Fixtures shared by the processor-model unit tests (test_cpu_*.c): a small
 * EPC, page-aligned host buffers, and one-call ECREATE/EADD wrappers that
 * build PAGEINFO/SECINFO the way a kernel does.
 */
#ifndef SGXEMU_TEST_CPU_HELPERS_H
#define SGXEMU_TEST_CPU_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "test.h"
#include "cpu/cpu.h"

#define T_EPC_PAGES	64
#define T_BASE		0x7f0000000000ULL	/* canonical, aligned to 1 MiB */
#define T_SIZE		0x10000ULL		/* 16 pages */

/* A page-aligned, zeroed host page (never freed: tests are short). */
static inline void *t_page(void)
{
	void *p = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);

	if (p)
		memset(p, 0, SGX_PAGE_SIZE);
	return p;
}

static inline int t_cpu_init(struct sgx_cpu *cpu)
{
	struct sgx_cpu_config cfg = {
		.epc_size = T_EPC_PAGES * SGX_PAGE_SIZE,
		/* Fixed so results do not depend on the host's XCR0. */
		.xfrm_supported = SGX_XFRM_LEGACY | SGX_XFRM_AVX,
	};

	return sgx_cpu_init(cpu, &cfg);
}

static inline void *t_epc(struct sgx_cpu *cpu, size_t i)
{
	return sgx_epc_page(cpu, i);
}

/* A valid 64-bit SECS source page for [base, base + size). */
static inline struct sgx_secs *t_secs(uint64_t base, uint64_t size)
{
	struct sgx_secs *secs = t_page();

	secs->base = base;
	secs->size = size;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	return secs;
}

static inline int t_ecreate_secinfo(struct sgx_cpu *cpu,
				    const struct sgx_secs *src, size_t epc_index,
				    uint64_t secinfo_flags)
{
	static _Thread_local struct sgx_secinfo secinfo;
	static _Thread_local struct sgx_pageinfo pi;

	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = secinfo_flags;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uintptr_t)src;
	pi.secinfo = (uintptr_t)&secinfo;
	return sgx_ecreate(cpu, &pi, t_epc(cpu, epc_index));
}

static inline int t_ecreate(struct sgx_cpu *cpu, const struct sgx_secs *src,
			    size_t epc_index)
{
	return t_ecreate_secinfo(cpu, src, epc_index, SGX_SECINFO_SECS);
}

/* The standard enclave: SECS in EPC page 0 at [T_BASE, T_BASE + T_SIZE). */
static inline int t_ecreate_std(struct sgx_cpu *cpu)
{
	return t_ecreate(cpu, t_secs(T_BASE, T_SIZE), 0);
}

static inline int t_eadd(struct sgx_cpu *cpu, size_t secs_index,
			 size_t epc_index, uint64_t linaddr,
			 uint64_t secinfo_flags, const void *src)
{
	static _Thread_local struct sgx_secinfo secinfo;
	static _Thread_local struct sgx_pageinfo pi;

	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = secinfo_flags;
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = linaddr;
	pi.srcpge = (uintptr_t)src;
	pi.secinfo = (uintptr_t)&secinfo;
	pi.secs = (uintptr_t)t_epc(cpu, secs_index);
	return sgx_eadd(cpu, &pi, t_epc(cpu, epc_index));
}

/* EEXTEND all 16 chunks of EPC page @epc_index. */
static inline int t_eextend_page(struct sgx_cpu *cpu, size_t secs_index,
				 size_t epc_index)
{
	for (int c = 0; c < 16; c++) {
		int ret = sgx_eextend(cpu, t_epc(cpu, secs_index),
				      (uint8_t *)t_epc(cpu, epc_index) + 256 * c);
		if (ret)
			return ret;
	}
	return 0;
}

/* A minimal valid TCS source page. */
static inline struct sgx_tcs *t_tcs(void)
{
	struct sgx_tcs *tcs = t_page();

	tcs->ossa = 0x1000;
	tcs->nssa = 1;
	tcs->oentry = 0x2000;
	return tcs;
}

/* The enclave whose SECS is EPC page @secs_index (NULL if none). */
static inline struct sgx_encl_ctl *t_ctl(struct sgx_cpu *cpu, size_t secs_index)
{
	return cpu->ctl[secs_index];
}

/*
 * MRENCLAVE as EINIT would finalise it now, from a copy of the running
 * hash (test-side OpenSSL, not the code under test).
 */
static inline bool t_mrenclave(struct sgx_cpu *cpu, size_t secs_index,
			       uint8_t out[32])
{
	struct sgx_encl_ctl *ctl = t_ctl(cpu, secs_index);
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;
	bool ok = c && ctl && ctl->mrenclave &&
		  EVP_MD_CTX_copy_ex(c, ctl->mrenclave) &&
		  EVP_DigestFinal_ex(c, out, &len);

	EVP_MD_CTX_free(c);
	return ok;
}

static inline bool t_hex_eq(const uint8_t *got, const char *hex, size_t n)
{
	uint8_t want[512];

	return n <= sizeof(want) && test_unhex(hex, want, n) &&
	       memcmp(got, want, n) == 0;
}

/* MRSIGNER of sig1.key.pem (sgx-facts §6.2). */
#define T_SIG1_MRSIGNER \
	"83d719e77deaca1470f6baf62a4d774303c899db69020f9c70ee1dfc08c7ce9e"

/* Write IA32_SGXLEPUBKEYHASH0..3 from a hex MRSIGNER. */
static inline bool t_set_lehash(struct sgx_cpu *cpu, const char *hex)
{
	uint8_t h[32];

	if (!test_unhex(hex, h, 32))
		return false;
	for (int i = 0; i < 4; i++) {
		uint64_t v = 0;

		for (int b = 7; b >= 0; b--)
			v = (v << 8) | h[8 * i + b];
		if (sgx_wrmsr(cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v))
			return false;
	}
	return true;
}

/*
 * A SIGSTRUCT with the fixed header fields, the given body fields left to
 * the caller; page-aligned as EINIT demands.
 */
static inline struct sgx_sigstruct *t_sigstruct(void)
{
	static const uint8_t h1[16] = SGX_SIGSTRUCT_HEADER;
	static const uint8_t h2[16] = SGX_SIGSTRUCT_HEADER2;
	struct sgx_sigstruct *sig = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);

	memset(sig, 0, sizeof(*sig));
	memcpy(sig->header.header, h1, 16);
	memcpy(sig->header.header2, h2, 16);
	sig->header.date = 0x20261203;
	sig->exponent = 3;
	sig->body.miscmask = 0xFFFFFFFF;
	sig->body.attributemask.flags = ~0ULL;
	sig->body.attributemask.xfrm = ~0ULL;
	return sig;
}

/*
 * Sign @sig with the PEM key at @path the way a signing tool does, with
 * OpenSSL's own RSA (PKCS#1 v1.5, SHA-256) and BIGNUM for Q1/Q2: nothing
 * from the code under test.
 */
static inline bool t_sign(struct sgx_sigstruct *sig, const char *path)
{
	uint8_t msg[256], s_be[512];
	size_t slen = sizeof(s_be);
	BIGNUM *n = NULL, *s = NULL, *q1 = BN_new(), *q2 = BN_new(), *t = BN_new();
	BN_CTX *bctx = BN_CTX_new();
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY *pk = NULL;
	FILE *f = path ? fopen(path, "r") : NULL;
	bool ok = false;

	if (!f)
		goto out;
	pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!pk || !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    BN_bn2lebinpad(n, sig->modulus, 384) != 384)
		goto out;
	sig->exponent = 3;
	memcpy(msg, &sig->header, 128);
	memcpy(msg + 128, &sig->body, 128);
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pk) != 1 ||
	    EVP_DigestSign(md, s_be, &slen, msg, sizeof(msg)) != 1 || slen != 384)
		goto out;
	s = BN_bin2bn(s_be, (int)slen, NULL);
	/* Q1 = s^2 / n; Q2 = (s^3 - Q1*s*n) / n */
	if (!s || !BN_sqr(t, s, bctx) || !BN_div(q1, NULL, t, n, bctx) ||
	    !BN_mul(t, t, s, bctx) || !BN_mul(q2, q1, s, bctx) ||
	    !BN_mul(q2, q2, n, bctx) || !BN_sub(t, t, q2) ||
	    !BN_div(q2, NULL, t, n, bctx))
		goto out;
	ok = BN_bn2lebinpad(s, sig->signature, 384) == 384 &&
	     BN_bn2lebinpad(q1, sig->q1, 384) == 384 &&
	     BN_bn2lebinpad(q2, sig->q2, 384) == 384;
out:
	BN_free(n);
	BN_free(s);
	BN_free(q1);
	BN_free(q2);
	BN_free(t);
	BN_CTX_free(bctx);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pk);
	return ok;
}

/* Sign with the build's own key (test_signing_key()). */
static inline bool t_sign_key(struct sgx_sigstruct *sig)
{
	return t_sign(sig, test_signing_key());
}

/*
 * MRSIGNER of the build's key, hex: SHA-256 of the modulus as SIGSTRUCT
 * stores it (384 bytes, little-endian), by OpenSSL here, not by the code
 * under test. All zeros when the key is unreadable (EINIT then fails).
 */
static inline const char *t_key_mrsigner(void)
{
	static char hex[65];
	const char *path = test_signing_key();
	uint8_t mod[384], h[32];
	EVP_PKEY *pk = NULL;
	BIGNUM *n = NULL;
	FILE *f;

	if (hex[0])
		return hex;
	memset(hex, '0', 64);
	f = path ? fopen(path, "r") : NULL;
	if (f) {
		pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
	}
	if (pk && EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) &&
	    BN_bn2lebinpad(n, mod, 384) == 384 &&
	    EVP_Digest(mod, 384, h, NULL, EVP_sha256(), NULL))
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", h[i]);
	BN_free(n);
	EVP_PKEY_free(pk);
	return hex;
}

/* A zeroed (VALID=0) EINITTOKEN, 512-byte aligned. */
static inline struct sgx_einittoken *t_token(void)
{
	struct sgx_einittoken *tok = aligned_alloc(512, 512);

	memset(tok, 0, 512);
	return tok;
}

#endif /* SGXEMU_TEST_CPU_HELPERS_H */
