/* SPDX-License-Identifier: MIT */
/*
 * ECREATE, EADD, EEXTEND and EINIT operands (src/cpu/): SECS, SECINFO,
 * PAGEINFO, the source pages, SIGSTRUCT and EINITTOKEN, on a processor
 * model of its own (32 EPC pages).
 *
 * Each operand starts from a valid value and the input patches it, so
 * the empty input builds and launches an enclave and every mutation is a
 * step away from a working one. Input, in order:
 *   u8  switches (see SW_*)
 *   SECS patches; ECREATE's SECINFO flags; PAGEINFO misalignment
 *   u8  number of pages, then per page: where, what, patches, EEXTEND mask
 *   SIGSTRUCT patches (re-signed with SW_SIGN); EINITTOKEN patches
 * A patch list is a u8 count (mod 8) of (u16 offset, u8 xor) pairs.
 *
 * After the run every page is EREMOVEd, children first, and the EPCM must
 * be empty again: a leaf that leaks an EPC page or a SECS shows up here.
 * With SW_UPDATESVN, 16 more bytes are a microcode's CPUSVN, and
 * EUPDATESVN runs before the teardown (SGX_EPC_NOT_READY exactly when a
 * page is valid) and after it (CPUSVN raised to the microcode's exactly
 * when that is newer, SGX_NO_UPDATE otherwise).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_sign.h"
#include "cpu/cpu.h"

#define NR_EPC		32
#define BASE		0x7f0000000000ULL
#define SIZE		0x10000ULL

#define SW_RAW_SECINFO	0x01	/* ECREATE's SECINFO flags from the input */
#define SW_BAD_PI	0x02	/* misaligned / odd PAGEINFO pointers */
#define SW_SIGN		0x04	/* re-sign the patched SIGSTRUCT */
#define SW_TOKEN	0x08	/* pass an EINITTOKEN (VALID=1 patched in) */
#define SW_LEHASH	0x10	/* IA32_SGXLEPUBKEYHASH not our signer */
#define SW_MEASURE	0x20	/* SIGSTRUCT.ENCLAVEHASH = running MRENCLAVE */
#define SW_UPDATESVN	0x40	/* EUPDATESVN before and after the teardown */

static struct sgx_cpu cpu;
static uint8_t mrsigner[32];
static uint8_t *src;			/* page-aligned source pages */
static struct sgx_sigstruct *sig;	/* page-aligned */
static struct sgx_einittoken *tok;	/* 512-aligned */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sgx_cpu_config cfg = {
		.epc_size = NR_EPC * SGX_PAGE_SIZE,
		.xfrm_supported = SGX_XFRM_LEGACY,
		.sgx2 = true,
		.eupdatesvn = true,
	};

	(void)argc;
	(void)argv;
	fuzz_sign_init();
	fuzz_mrsigner(mrsigner);
	src = aligned_alloc(SGX_PAGE_SIZE, 2 * SGX_PAGE_SIZE);
	sig = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	tok = aligned_alloc(512, 512);
	if (!src || !sig || !tok || sgx_cpu_init(&cpu, &cfg)) {
		fprintf(stderr, "fuzz_encls: set-up failed\n");
		abort();
	}
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

static void set_lehash(const uint8_t h[32])
{
	for (int i = 0; i < 4; i++) {
		uint64_t v;

		memcpy(&v, h + 8 * i, 8);
		if (sgx_wrmsr(&cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v))
			abort();
	}
}

/* EREMOVE everything, children before SECSs; the EPCM must end empty. */
static void teardown(void)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < NR_EPC; i++) {
			struct sgx_epcm_entry *e = &cpu.epcm[i];

			if (e->valid && (pass || e->page_type != SGX_PT_SECS))
				sgx_eremove(&cpu, sgx_epc_page(&cpu, i));
		}
	for (size_t i = 0; i < NR_EPC; i++)
		if (cpu.epcm[i].valid || cpu.ctl[i]) {
			fprintf(stderr, "EPC page %zu still in use\n", i);
			abort();
		}
}

static const uint64_t page_flags[] = {
	SGX_SECINFO_TCS,
	SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W | SGX_SECINFO_X,
	SGX_SECINFO_REG | SGX_SECINFO_R,
	SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X,
	SGX_SECINFO_REG | SGX_SECINFO_W,
	SGX_SECINFO_SECS,
};

static void add_pages(struct fuzz_in *in, uint8_t sw, size_t *next)
{
	unsigned n = fuzz_u8(in) % 6;

	for (unsigned i = 0; i < n; i++) {
		struct sgx_secinfo si __attribute__((aligned(64)));
		struct sgx_pageinfo pi __attribute__((aligned(32)));
		uint8_t where = fuzz_u8(in), what = fuzz_u8(in);
		uint16_t mask;
		size_t epc = (*next)++ % NR_EPC;
		void *target;

		memset(&si, 0, sizeof(si));
		si.flags = what < 0xf0 ? page_flags[what % 6] : fuzz_u64(in);
		patch(in, &si, sizeof(si));
		memset(src, 0, SGX_PAGE_SIZE);
		if ((si.flags & SGX_SECINFO_PT_MASK) == SGX_SECINFO_TCS) {
			struct sgx_tcs *t = (struct sgx_tcs *)src;

			t->ossa = 0x1000;
			t->nssa = 1;
			t->oentry = 0x2000;
		}
		patch(in, src, SGX_PAGE_SIZE);
		memset(&pi, 0, sizeof(pi));
		pi.linaddr = where < 0xf0 ? BASE + (where % 20) * SGX_PAGE_SIZE
					  : fuzz_u64(in);
		pi.srcpge = (uintptr_t)src;
		pi.secinfo = (uintptr_t)&si;
		pi.secs = (uintptr_t)sgx_epc_page(&cpu, 0);
		target = sgx_epc_page(&cpu, epc);
		if (sw & SW_BAD_PI) {
			uint8_t bad = fuzz_u8(in);

			if (bad & 1)
				pi.secs = (uintptr_t)sgx_epc_page(&cpu, bad % NR_EPC);
			if (bad & 2)
				pi.secinfo += 8 * (bad >> 5);
			if (bad & 4)
				pi.srcpge += 64;
			if (bad & 8)
				target = (uint8_t *)target + 32;
		}
		sgx_eadd(&cpu, &pi, target);
		mask = fuzz_u16(in);
		for (int c = 0; c < 16; c++)
			if (mask & (1u << c))
				sgx_eextend(&cpu, sgx_epc_page(&cpu, 0),
					    (uint8_t *)sgx_epc_page(&cpu, epc) +
					    256 * c + (sw & SW_BAD_PI ? 8 : 0));
	}
}

/* MRENCLAVE as EINIT would finish it now (a copy of the running hash). */
static void running_mrenclave(uint8_t out[32])
{
	struct sgx_encl_ctl *ctl = cpu.ctl[0];
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;

	memset(out, 0, 32);
	if (c && ctl && ctl->mrenclave && EVP_MD_CTX_copy_ex(c, ctl->mrenclave))
		EVP_DigestFinal_ex(c, out, &len);
	EVP_MD_CTX_free(c);
}

static bool any_valid(void)
{
	for (size_t i = 0; i < cpu.nr_pages; i++)
		if (cpu.epcm[i].valid)
			return true;
	return false;
}

/* EUPDATESVN on whatever the run left, then on the empty EPC. */
static void updatesvn(const uint8_t ucode[16], bool after_teardown)
{
	uint8_t before[16];
	bool newer = true, same = true;
	int rc, want;

	memcpy(before, cpu.keys.cpusvn, 16);
	for (int i = 0; i < 16; i++) {
		newer &= ucode[i] >= before[i];
		same &= ucode[i] == before[i];
	}
	sgx_cpu_load_microcode(&cpu, ucode);
	rc = sgx_eupdatesvn(&cpu);
	want = any_valid() ? SGX_EPC_NOT_READY :
	       newer && !same ? 0 : SGX_NO_UPDATE;
	if (rc != want || (after_teardown && want == SGX_EPC_NOT_READY) ||
	    memcmp(cpu.keys.cpusvn, rc ? before : ucode, 16)) {
		fprintf(stderr, "EUPDATESVN returned %d, expected %d\n", rc, want);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_secs *secs = (struct sgx_secs *)src;
	uint8_t sw = fuzz_u8(&in), off;
	size_t next = 1;
	int rc;

	set_lehash(sw & SW_LEHASH ? (const uint8_t[32]){ 1 } : mrsigner);

	memset(secs, 0, sizeof(*secs));
	secs->base = BASE;
	secs->size = SIZE;
	secs->ssa_frame_size = 1;
	secs->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	secs->attributes.xfrm = SGX_XFRM_LEGACY;
	patch(&in, secs, 512);
	memset(&si, 0, sizeof(si));
	si.flags = sw & SW_RAW_SECINFO ? fuzz_u64(&in) : SGX_SECINFO_SECS;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uintptr_t)secs;
	pi.secinfo = (uintptr_t)&si;
	off = fuzz_u8(&in);
	if (sw & SW_BAD_PI) {
		pi.linaddr = off & 1 ? BASE : 0;
		pi.secs = off & 2 ? (uintptr_t)sgx_epc_page(&cpu, 1) : 0;
		if (off & 4)
			pi.srcpge += 1024;
	}
	rc = sgx_ecreate(&cpu, &pi, sgx_epc_page(&cpu, 0));
	if (rc < 0) {
		fprintf(stderr, "ECREATE returned %d\n", rc);
		abort();
	}
	add_pages(&in, sw, &next);

	fuzz_sigstruct_header(sig);
	sig->body.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	sig->body.attributes.xfrm = SGX_XFRM_LEGACY;
	sig->body.attributemask.flags = ~0ULL;
	sig->body.attributemask.xfrm = ~0ULL;
	sig->body.miscmask = ~0U;
	if (sw & SW_MEASURE)
		running_mrenclave(sig->body.enclavehash);
	patch(&in, sig, 1028);
	if (sw & SW_SIGN)
		fuzz_sign_cached(sig);
	patch(&in, sig, sizeof(*sig));

	memset(tok, 0, 512);
	if (sw & SW_TOKEN) {
		tok->valid = 1;
		memcpy(tok->mrenclave, sig->body.enclavehash, 32);
		memcpy(tok->mrsigner, mrsigner, 32);
		tok->attributes = sig->body.attributes;
		patch(&in, tok, sizeof(*tok));
	}
	rc = sgx_einit(&cpu, sig, sgx_epc_page(&cpu, 0), tok);
	if (rc < 0) {
		fprintf(stderr, "EINIT returned %d\n", rc);
		abort();
	}
	/* Pages after EINIT must all be refused. */
	add_pages(&in, sw, &next);
	if (sw & SW_UPDATESVN) {
		uint8_t ucode[16];

		fuzz_bytes(&in, ucode, sizeof(ucode));
		memset(cpu.keys.cpusvn, 2, 16);
		updatesvn(ucode, false);
		teardown();
		updatesvn(ucode, true);
		return 0;
	}
	teardown();
	return 0;
}
