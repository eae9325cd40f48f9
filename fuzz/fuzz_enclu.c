/* SPDX-License-Identifier: MIT */
/*
 * ENCLU operands (src/cpu/enclu.c, ereport.c, egetkey.c): KEYREQUEST,
 * TARGETINFO, REPORTDATA and output addresses of EREPORT and EGETKEY,
 * other leaf numbers, and the SSA frame that ERESUME reads back after an
 * AEX (GPRSGX, XSAVE header). SECINFO for EACCEPT goes through the same
 * dispatch.
 *
 * Four initialised enclaves (DEBUG, +PROVISIONKEY, +EINITTOKENKEY, +KSS)
 * are built once; their EPC is restored from a snapshot after every
 * input, so runs do not depend on each other. Input: u8 enclave, then up
 * to 8 operations of a u8 opcode each:
 *   0 write a blob into the enclave's data pages   (u16 offset, u8 len)
 *   1 EREPORT  RBX RCX RDX                         (3 addresses)
 *   2 EGETKEY  RBX RCX                             (2 addresses)
 *   3 any leaf RAX RBX RCX RDX                     (u8 leaf, 3 addresses)
 *   4 AEX with input GPRs and XSAVE bytes, then ERESUME
 *   5 write a blob into SSA frame 0, AEX, then ERESUME
 * An address is a u16: below 0xF000 an offset into the data pages,
 * otherwise a raw u64 follows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_sign.h"
#include "cpu/cpu.h"
#include "cpu/enclu.h"

#define NR_ENCL		4
#define PAGES		8		/* TCS, 2 SSA pages, 5 data pages */
#define NR_EPC		(NR_ENCL * (PAGES + 1))
#define BASE(i)		(0x7f0000000000ULL + (uint64_t)(i) * 0x100000)
#define SIZE		0x10000ULL
#define DATA_OFF	0x3000
#define DATA_SIZE	(5 * SGX_PAGE_SIZE)
#define AEP		0x401000ULL

static struct sgx_cpu cpu;
static uint8_t *snapshot;
static struct sgx_epcm_entry *epcm_snapshot;
static const uint64_t encl_attr[NR_ENCL] = {
	0,
	SGX_ATTR_PROVISIONKEY,
	SGX_ATTR_EINITTOKENKEY,
	SGX_ATTR_KSS,
};

static void *epc(size_t i)
{
	return sgx_epc_page(&cpu, i);
}

static void add(size_t secs, size_t index, uint64_t lin, const void *page,
		uint64_t flags)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));

	memset(&si, 0, sizeof(si));
	si.flags = flags;
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = lin;
	pi.srcpge = (uintptr_t)page;
	pi.secinfo = (uintptr_t)&si;
	pi.secs = (uintptr_t)epc(secs);
	if (sgx_eadd(&cpu, &pi, epc(index)))
		abort();
	for (int c = 0; c < 16; c++)
		if (sgx_eextend(&cpu, epc(secs), (uint8_t *)epc(index) + 256 * c))
			abort();
}

static void build(unsigned i, uint8_t *page, struct sgx_sigstruct *sig)
{
	size_t secs = i * (PAGES + 1);
	struct sgx_secs *s = (struct sgx_secs *)page;
	struct sgx_tcs *t = (struct sgx_tcs *)page;
	struct sgx_secinfo si __attribute__((aligned(64))) = {
		.flags = SGX_SECINFO_SECS,
	};
	struct sgx_pageinfo pi __attribute__((aligned(32))) = { 0 };
	struct sgx_einittoken tok __attribute__((aligned(512))) = { 0 };
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned int len = 32;

	memset(page, 0, SGX_PAGE_SIZE);
	s->base = BASE(i);
	s->size = SIZE;
	s->ssa_frame_size = 1;
	s->attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG | encl_attr[i];
	s->attributes.xfrm = SGX_XFRM_LEGACY;
	pi.srcpge = (uintptr_t)s;
	pi.secinfo = (uintptr_t)&si;
	if (sgx_ecreate(&cpu, &pi, epc(secs)))
		abort();
	memset(page, 0, SGX_PAGE_SIZE);
	t->ossa = 0x1000;
	t->nssa = 2;
	t->oentry = DATA_OFF;
	add(secs, secs + 1, BASE(i), t, SGX_SECINFO_TCS);
	memset(page, 0, SGX_PAGE_SIZE);
	for (size_t p = 1; p < PAGES; p++)
		add(secs, secs + 1 + p, BASE(i) + p * SGX_PAGE_SIZE, page,
		    SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W |
		    (p >= 3 ? SGX_SECINFO_X : 0));

	fuzz_sigstruct_header(sig);
	sig->body.attributes.flags = SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG;
	sig->body.attributes.xfrm = SGX_XFRM_LEGACY;
	sig->body.isvprodid = 0x1234;
	sig->body.isvsvn = 7;
	if (!c || !EVP_MD_CTX_copy_ex(c, cpu.ctl[secs]->mrenclave) ||
	    !EVP_DigestFinal_ex(c, sig->body.enclavehash, &len))
		abort();
	EVP_MD_CTX_free(c);
	fuzz_sign(sig);
	if (sgx_einit(&cpu, sig, epc(secs), &tok)) {
		fprintf(stderr, "fuzz_enclu: EINIT of enclave %u failed\n", i);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sgx_cpu_config cfg = {
		.epc_size = NR_EPC * SGX_PAGE_SIZE,
		.xfrm_supported = SGX_XFRM_LEGACY,
		.sgx2 = true,
	};
	uint8_t *page = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	struct sgx_sigstruct *sig = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	uint8_t mrsigner[32];

	(void)argc;
	(void)argv;
	if (!page || !sig || sgx_cpu_init(&cpu, &cfg))
		abort();
	sgx_xsave_layout_init();
	fuzz_sign_init();
	fuzz_mrsigner(mrsigner);
	/* Our signer is the launch enclave's: EINITTOKENKEY may launch. */
	for (int i = 0; i < 4; i++) {
		uint64_t v;

		memcpy(&v, mrsigner + 8 * i, 8);
		if (sgx_wrmsr(&cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v))
			abort();
	}
	for (unsigned i = 0; i < NR_ENCL; i++)
		build(i, page, sig);
	snapshot = malloc(NR_EPC * SGX_PAGE_SIZE);
	epcm_snapshot = malloc(NR_EPC * sizeof(*epcm_snapshot));
	if (!snapshot || !epcm_snapshot)
		abort();
	memcpy(snapshot, cpu.epc, NR_EPC * SGX_PAGE_SIZE);
	memcpy(epcm_snapshot, cpu.epcm, NR_EPC * sizeof(*epcm_snapshot));
	free(page);
	free(sig);
	return 0;
}

static uint64_t addr(struct fuzz_in *in, uint64_t base)
{
	uint16_t a = fuzz_u16(in);

	return a < 0xf000 ? base + DATA_OFF + a % DATA_SIZE : fuzz_u64(in);
}

static void check_leaf(int ret)
{
	/* A leaf ends, or faults with a vector; nothing else. */
	if (ret && !SGX_IS_FAULT(ret)) {
		fprintf(stderr, "ENCLU returned %d\n", ret);
		abort();
	}
}

/* AEX with an input-made event, then ERESUME of the frame it wrote. */
static int aex_eresume(struct fuzz_in *in, struct sgx_lp *lp,
		       struct sgx_encl_ctl *ctl, uint64_t base, bool ssa_blob)
{
	uint8_t xsave[1024] __attribute__((aligned(64)));
	struct sgx_aex_event ev;
	uint8_t sw = fuzz_u8(in);
	int ret;

	memset(&ev, 0, sizeof(ev));
	fuzz_bytes(in, &ev.gpr, sizeof(ev.gpr));
	ev.exception = sw & 1;
	ev.vector = fuzz_u8(in) % 32;
	ev.error_code = (uint32_t)fuzz_u16(in);
	ev.maddr = fuzz_u64(in);
	if (sw & 2) {
		memset(xsave, 0, sizeof(xsave));
		fuzz_bytes(in, xsave + 512, 64);
		ev.xsave = xsave;
		ev.xsave_size = 576 + fuzz_u8(in) % 64;
	}
	sgx_aex(&cpu, lp, &ev);
	if (ssa_blob) {
		uint8_t blob[256];
		uint16_t off = fuzz_u16(in) % (2 * SGX_PAGE_SIZE - sizeof(blob));

		fuzz_bytes(in, blob, sizeof(blob));
		sgx_encl_write(&cpu, ctl, base + 0x1000 + off, blob, sizeof(blob));
	}
	ret = sgx_eresume(&cpu, ctl, base, AEP, 0x7ffd0000, 0x7ffd0100, lp);
	check_leaf(ret);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	unsigned e = fuzz_u8(&in) % NR_ENCL;
	struct sgx_encl_ctl *ctl = cpu.ctl[e * (PAGES + 1)];
	uint64_t base = BASE(e), rax;
	struct sgx_lp lp;
	bool inside, zf;

	memset(&lp, 0, sizeof(lp));
	if (!ctl || sgx_eenter(&cpu, ctl, base, AEP, 0x7ffd0000, 0x7ffd0100, &lp))
		abort();
	inside = true;
	for (int op = 0; op < 8 && in.left && inside; op++) {
		switch (fuzz_u8(&in) % 6) {
		case 0: {
			uint8_t blob[256];
			uint16_t off = fuzz_u16(&in) % (DATA_SIZE - sizeof(blob));

			fuzz_bytes(&in, blob, sizeof(blob));
			sgx_encl_write(&cpu, ctl, base + DATA_OFF + off, blob,
				       sizeof(blob));
			break;
		}
		case 1: {
			uint64_t b = addr(&in, base), c = addr(&in, base);

			check_leaf(sgx_enclu_user(&cpu, &lp, SGX_EREPORT, b, c,
						  addr(&in, base), &rax, &zf));
			break;
		}
		case 2: {
			uint64_t b = addr(&in, base);
			int ret = sgx_enclu_user(&cpu, &lp, SGX_EGETKEY, b,
						 addr(&in, base), 0, &rax, &zf);

			check_leaf(ret);
			/* EGETKEY's RAX is 0 or an SGX error code, ZF with it. */
			if (!ret && zf != (rax != 0))
				abort();
			break;
		}
		case 3: {
			uint64_t leaf = fuzz_u8(&in), b = addr(&in, base);
			uint64_t c = addr(&in, base);

			check_leaf(sgx_enclu_user(&cpu, &lp, leaf, b, c,
						  addr(&in, base), &rax, &zf));
			break;
		}
		case 4:
		case 5:
			/* A refused ERESUME leaves the thread outside. */
			inside = !aex_eresume(&in, &lp, ctl, base, true);
			break;
		}
	}
	if (inside)
		sgx_eexit(&cpu, &lp);
	memcpy(cpu.epc, snapshot, NR_EPC * SGX_PAGE_SIZE);
	memcpy(cpu.epcm, epcm_snapshot, NR_EPC * sizeof(*epcm_snapshot));
	return 0;
}
