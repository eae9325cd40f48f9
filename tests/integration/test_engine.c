/* SPDX-License-Identifier: MIT */
/*
 * The native engine end to end through the public C API: the seed
 * selftest's enclave, and the engine's own test enclave
 * (tests/enclaves/test_encl.S) for register passing, faults and AEX,
 * ERESUME, FS/GS, XSAVE state, the TCS rules.
 * Every check reads a value only the enclave computes.
 */
#include <signal.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"
#include "../enclaves/encl_util.h"

#define LOAD(e, base) do { \
	const char *why_ = "?"; \
	(e) = tu_load_test_encl(&(base), &why_); \
	if (!(e)) { test_fail(__FILE__, __LINE__, "load: %s", why_); return; } \
} while (0)

TEST(seed_enclave_copies_magic)
{
	static const uint64_t MAGIC = 0x1122334455667788ULL;
	char bin[512], ss[512];
	struct sgxemu_enclave *e = NULL;
	struct sgx_sigstruct *sig;
	struct sgx_secs secs;
	struct sgxemu_run run;
	uint64_t src = MAGIC, dst = 0;
	uint8_t *img;
	size_t size = 0, sigsize = 0;
	void *sigfile;
	int err = 0;

	snprintf(bin, sizeof(bin), "%s/seed/encl.bin", test_build_dir());
	snprintf(ss, sizeof(ss), "%s/seed/encl.ss", test_build_dir());
	img = tu_read(bin, &size);
	sigfile = tu_read(ss, &sigsize);
	if (!img || !sigfile || sigsize < sizeof(*sig))
		test_skip("seed enclave not built (%s)", bin);
	sig = aligned_alloc(4096, 4096);
	memcpy(sig, sigfile, sizeof(*sig));

	memset(&secs, 0, sizeof(secs));
	secs.ssa_frame_size = 1;
	secs.attributes.flags = SGX_ATTR_MODE64BIT;
	secs.attributes.xfrm = 3;
	for (secs.size = 4096; secs.size < size;)
		secs.size <<= 1;
	secs.base = tu_free_base(secs.size);
	REQUIRE_EQ(sgxemu_enclave_create(&secs, 0, &e, &err), 0);
	for (size_t off = 0; off < size; off += 4096) {
		struct sgx_secinfo si;

		memset(&si, 0, sizeof(si));
		si.flags = off ? SGX_SECINFO_REG | SGX_SECINFO_R |
				 SGX_SECINFO_W | SGX_SECINFO_X
			       : SGX_SECINFO_TCS;
		REQUIRE_EQ(sgxemu_enclave_add_page(e, secs.base + off,
						   img + off, &si, 0xffff,
						   off ? PROT_READ | PROT_WRITE |
							 PROT_EXEC
						       : PROT_READ | PROT_WRITE,
						   &err), 0);
	}
	REQUIRE_EQ(sgxemu_enclave_init(e, sig, NULL, &err), 0);
	CHECK_EQ(err, 0);

	memset(&run, 0, sizeof(run));
	run.tcs = secs.base;
	run.leaf = SGX_EENTER;
	run.regs.rdi = (uint64_t)(uintptr_t)&src;
	run.regs.rsi = (uint64_t)(uintptr_t)&dst;
	REQUIRE_EQ(sgxemu_enter(&run), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.leaf, SGX_EEXIT);
	CHECK_EQ(dst, MAGIC);
	/* The seed enclave clears the GPRs it does not return. */
	CHECK_EQ(run.regs.r15, 0);

	/* Twice more: the TCS is free again after EEXIT. */
	for (int i = 0; i < 2; i++) {
		dst = 0;
		src = MAGIC + (uint64_t)i + 1;
		memset(&run, 0, sizeof(run));
		run.tcs = secs.base;
		run.leaf = SGX_EENTER;
		run.regs.rdi = (uint64_t)(uintptr_t)&src;
		run.regs.rsi = (uint64_t)(uintptr_t)&dst;
		REQUIRE_EQ(sgxemu_enter(&run), 0);
		CHECK_EQ(dst, MAGIC + (uint64_t)i + 1);
	}
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
	free(sig);
	free(sigfile);
	free(img);
}

TEST(registers_pass_both_ways)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	uint64_t base;

	LOAD(e, base);
	memset(&run, 0, sizeof(run));
	run.tcs = base + L_TCS0;
	run.leaf = SGX_EENTER;
	run.regs.rdi = CMD_REGS;
	run.regs.rsi = 0x1000;
	run.regs.rdx = 0x234;
	run.regs.r8 = 0x4444;
	run.regs.r9 = 0x9999;
	run.regs.r10 = 0x10;
	run.regs.r13 = 0x13000;
	run.regs.r14 = 0x14;
	run.regs.r15 = 0x15;
	REQUIRE_EQ(sgxemu_enter(&run), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.rdx, 0x1234);
	CHECK_EQ(run.regs.rsi, ~0x1000ULL);
	CHECK_EQ(run.regs.rdi, 0x1111);
	CHECK_EQ(run.regs.r8, 0x8888);
	CHECK_EQ(run.regs.r9, 0x9999 ^ 0x5555);
	CHECK_EQ(run.regs.r10, 0x11);
	CHECK_EQ(run.regs.r11, 0);		/* RAX = CSSA at EENTER */
	CHECK_EQ(run.regs.r12, base + L_TCS0);	/* RBX = TCS */
	CHECK_EQ(run.regs.r13, 0x13014);
	CHECK_EQ(run.regs.r14, run.regs.rbx);	/* RCX = return = target */
	CHECK(run.regs.r14 != 0);
	CHECK_EQ(run.regs.r15, 0x1c);
	CHECK_EQ(run.regs.rax, SGX_EEXIT);
	/* EEXIT: RCX = AEP, which is not the return address. */
	CHECK(run.regs.rcx != 0 && run.regs.rcx != run.regs.rbx);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}
