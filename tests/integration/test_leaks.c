/* SPDX-License-Identifier: MIT */
/*
 * What the host must not see and the enclave must not be granted, end to
 * end through the engine (issue 27):
 *  - after an AEX, exception or interrupt, the host's context holds the
 *    SDM's synthetic state (sgx-facts.md §4.18): RAX = ERESUME, RBX = TCS,
 *    RCX = RIP = AEP, RSP/RBP = URSP/URBP, every other GPR 0, the
 *    arithmetic flags clear, x87/SSE and every XFRM feature in INIT
 *    state; none of the enclave's register values anywhere in the
 *    signal frame, not even in the bytes of a component whose XSTATE_BV
 *    bit says INIT, nor of a feature outside XFRM the enclave could use
 *    here because XCR0 stays the host's (the host's own values of those
 *    come back);
 *  - EEXIT gives RCX = the AEP of the entry (§4.17);
 *  - EREPORT and EGETKEY with their output on an EPCM read-only page take
 *    the #PF (W, SGX bits) and leave the page as it was (§4.20, §4.21).
 * The enclave (tests/enclaves/test_encl.S, CMD_SECRETS) fills every
 * register with SECRET | n; each test also shows that the values were
 * live at the exit, so that it cannot pass by the enclave doing nothing.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "../enclaves/encl_util.h"

#define EFL_ARITH	0x8d5ULL
#define EFL_TF		0x100ULL
#define EFL_RF		0x10000ULL
#define FP_MAGIC1	0x46505853U

/* CMD_SECRETS modes (layout.h). */
#define M_SPIN		1
#define M_YMM		2
#define M_ZMM		4

/* What the application's handler saw at the AEP. */
static struct {
	volatile int seen;
	greg_t g[NGREG];
	uint8_t fp[16384];
	uint32_t fp_size;
	uint64_t fp_features;
} seen;

static void record(const ucontext_t *uc)
{
	const uint8_t *fp = (const uint8_t *)uc->uc_mcontext.fpregs;
	uint32_t magic = 0, size = 512;

	memcpy(seen.g, uc->uc_mcontext.gregs, sizeof(seen.g));
	seen.fp_size = 0;
	if (fp) {
		/* The kernel's software bytes at 464: magic1, extended
		 * size, xfeatures, xstate_size. */
		memcpy(&magic, fp + 464, 4);
		if (magic == FP_MAGIC1) {
			memcpy(&seen.fp_features, fp + 472, 8);
			memcpy(&size, fp + 480, 4);
		}
		if (size > sizeof(seen.fp))
			size = sizeof(seen.fp);
		memcpy(seen.fp, fp, size);
		seen.fp_size = size;
	}
	seen.seen++;
}

/* Offset and size of XSAVE component @i in the standard format. */
static void component(unsigned i, uint32_t *off, uint32_t *size)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0xd), "c"(i));
	*size = a;
	*off = b;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * The AEX state the handler saw: @tcs, @aep (0: RIP == RCX is all that
 * is known), @rsp/@rbp (0: not known), @xfrm the enclave's.
 */
static void check_aex_state(uint64_t tcs, uint64_t aep, uint64_t rsp,
			    uint64_t rbp, uint64_t xfrm)
{
	static const int zero[] = { REG_RDX, REG_RSI, REG_RDI, REG_R8, REG_R9,
				    REG_R10, REG_R11, REG_R12, REG_R13,
				    REG_R14, REG_R15 };
	const greg_t *g = seen.g;
	const uint8_t *fp = seen.fp;
	uint64_t bv = 0, leaks = 0;
	uint16_t fcw, fsw;
	uint32_t mxcsr;

	REQUIRE_EQ(seen.seen, 1);
	CHECK_EQ(g[REG_RAX], SGX_ERESUME);
	CHECK_EQ(g[REG_RBX], tcs);
	CHECK_EQ(g[REG_RCX], g[REG_RIP]);
	if (aep)
		CHECK_EQ(g[REG_RIP], aep);
	if (rsp) {
		CHECK_EQ(g[REG_RSP], rsp);
		CHECK_EQ(g[REG_RBP], rbp);
	}
	for (size_t i = 0; i < sizeof(zero) / sizeof(*zero); i++)
		if (g[zero[i]])
			test_fail(__FILE__, __LINE__, "GPR %d is 0x%llx after "
				  "the AEX, not 0", zero[i],
				  (unsigned long long)g[zero[i]]);
	CHECK_EQ(g[REG_EFL] & (EFL_ARITH | EFL_TF | EFL_RF), 0);
	for (int i = 0; i < NGREG; i++)
		if (((uint64_t)g[i] & SECRET_MASK) == SECRET)
			leaks++;

	REQUIRE(seen.fp_size >= 512);
	memcpy(&fcw, fp, 2);
	memcpy(&fsw, fp + 2, 2);
	memcpy(&mxcsr, fp + 24, 4);
	CHECK_EQ(fcw, 0x037f);
	CHECK_EQ(fsw, 0);
	CHECK_EQ(fp[4], 0);			/* abridged FTW: all empty */
	CHECK_EQ(mxcsr, 0x1f80);
	CHECK(all_zero(fp + 32, 128));		/* ST0-7 */
	CHECK(all_zero(fp + 160, 256));		/* XMM0-15 */
	if (seen.fp_size >= 576) {
		memcpy(&bv, fp + 512, 8);
		/* Every XFRM feature beyond SSE is INIT. Those beyond XFRM
		 * are the host's again (xstate.c): only the scan below
		 * applies to them. */
		for (unsigned i = 2; i < 64; i++) {
			uint32_t off, size;

			if (!(seen.fp_features & xfrm & (1ULL << i)))
				continue;
			component(i, &off, &size);
			if (bv & (1ULL << i))
				test_fail(__FILE__, __LINE__, "XSTATE_BV bit %u "
					  "set after the AEX", i);
			if (size && off + size <= seen.fp_size &&
			    !all_zero(fp + off, size))
				test_fail(__FILE__, __LINE__, "XSAVE component "
					  "%u not zero after the AEX", i);
		}
	}
	for (uint32_t o = 0; o + 8 <= seen.fp_size; o += 8) {
		uint64_t q;

		memcpy(&q, fp + o, 8);
		if ((q & SECRET_MASK) == SECRET)
			leaks++;
	}
	CHECK_EQ(leaks, 0);
}

/* --- exceptions: host ENCLU, no fixup, the application's SIGILL --------- */

static sigjmp_buf jb;
/* Written by the asm of host_enter(): the AEP, RSP and RBP at the ENCLU,
 * and RCX, RBX after it returns (EEXIT). */
static volatile uint64_t h_aep __attribute__((used));
static volatile uint64_t h_rsp __attribute__((used));
static volatile uint64_t h_rbp __attribute__((used));
static volatile uint64_t h_rcx __attribute__((used));
static volatile uint64_t h_rbx __attribute__((used));

static void on_ill(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	record(ctx);
	siglongjmp(jb, 1);
}

/* ENCLU[EENTER] of @tcs with RDI = @cmd, RSI = @rsi, by host code. */
static void host_enter(uint64_t tcs, uint64_t cmd, uint64_t rsi)
{
	register uint64_t r12 asm("r12") = tcs;
	register uint64_t r13 asm("r13") = rsi;
	register uint64_t r14 asm("r14") = cmd;

	__asm__ volatile(
		"push %%rbx\n\t"
		"push %%rbp\n\t"
		"mov %%r12, %%rbx\n\t"
		"mov %%r13, %%rsi\n\t"
		"mov %%r14, %%rdi\n\t"
		"lea 0f(%%rip), %%rcx\n\t"
		"mov %%rcx, h_aep(%%rip)\n\t"
		"mov %%rsp, h_rsp(%%rip)\n\t"
		"mov %%rbp, h_rbp(%%rip)\n\t"
		"mov $2, %%eax\n\t"
		"0: .byte 0x0f, 0x01, 0xd7\n\t"
		"mov %%rcx, h_rcx(%%rip)\n\t"
		"mov %%rbx, h_rbx(%%rip)\n\t"
		"pop %%rbp\n\t"
		"pop %%rbx\n\t"
		: "+r"(r12), "+r"(r13), "+r"(r14)
		:
		: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
		  "r11", "r15", "memory", "cc");
}

static struct sgxemu_enclave *load(uint64_t xfrm, uint64_t *base)
{
	const char *why = "?";
	char path[512];
	struct sgxemu_enclave *e;

	snprintf(path, sizeof(path), "%s/enclaves/test_encl.bin",
		 test_build_dir());
	e = tu_load_layout_xfrm(path, base, &why, xfrm);
	if (!e)
		test_fail(__FILE__, __LINE__, "load (XFRM 0x%llx): %s",
			  (unsigned long long)xfrm, why);
	return e;
}

/* An enclave of @xfrm, with @fn the application's handler of @sig and
 * nothing seen yet. */
static struct sgxemu_enclave *load_watched(uint64_t xfrm, uint64_t *base,
					   int sig,
					   void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sgxemu_sigaction(sig, &sa, NULL))
		return NULL;
	seen.seen = 0;
	return load(xfrm, base);
}

/* CMD_SECRETS then ud2 in an enclave of @xfrm: the host's SIGILL handler
 * sees the AEX state. */
static void exception_aex(uint64_t xfrm, uint64_t mode)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	struct sigaction sa;
	uint64_t base;

	e = load_watched(xfrm, &base, SIGILL, on_ill);
	REQUIRE(e != NULL);
	if (!sigsetjmp(jb, 1))
		host_enter(base + L_TCS0, CMD_SECRETS, mode);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sgxemu_sigaction(SIGILL, &sa, NULL);
	check_aex_state(base + L_TCS0, h_aep, h_rsp, h_rbp, xfrm);
	/* The values were live: the SSA frame has them (handler entry
	 * reports the frame's RDX in R9). */
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, 0, 2, 0, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	CHECK_EQ(run.regs.r9, SECRET | 0x102);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* --- interrupts: a signal while the enclave spins ------------------------ */

static volatile uint64_t spin[8192] __attribute__((aligned(64)));
#define SPIN_FLAG	4096		/* spin[] index of the flag; RSP there */

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	if (seen.seen)
		return;
	record(ctx);
	spin[SPIN_FLAG] = 1;
}

static pthread_t spinner;

static void *kicker(void *arg)
{
	(void)arg;
	/* The enclave stores 1 at flag + 8 once every register is loaded. */
	while (!spin[SPIN_FLAG + 1])
		usleep(100);
	while (!spin[SPIN_FLAG]) {
		pthread_kill(spinner, SIGUSR1);
		usleep(1000);
	}
	return NULL;
}

static void interrupt_aex(uint64_t xfrm, uint64_t mode)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	pthread_t k;
	uint64_t base;

	e = load_watched(xfrm, &base, SIGUSR1, on_usr1);
	REQUIRE(e != NULL);
	spin[SPIN_FLAG] = spin[SPIN_FLAG + 1] = 0;
	spinner = pthread_self();
	REQUIRE_EQ(pthread_create(&k, NULL, kicker, NULL), 0);
	REQUIRE_EQ(tu_call(&run, base + L_TCS1, CMD_SECRETS,
			   mode | M_SPIN,
			   (uint64_t)(uintptr_t)&spin[SPIN_FLAG], 0), 0);
	pthread_join(k, NULL);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	/* EEXIT scrubs nothing: the values were live in the loop. */
	CHECK_EQ(run.regs.r12, SECRET | 0x10c);
	check_aex_state(base + L_TCS1, 0, 0, 0, xfrm);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* Each state, after an exception and after an interrupt. */
TEST(aex_scrubs_gprs_x87_sse)
{
	exception_aex(SGX_XFRM_LEGACY, 0);
	interrupt_aex(SGX_XFRM_LEGACY, 0);
}

TEST(aex_scrubs_avx_state)
{
	if (!(tu_host_xcr0() & SGX_XFRM_AVX))
		test_skip("no AVX in this host's XCR0");
	exception_aex(SGX_XFRM_LEGACY | SGX_XFRM_AVX, M_YMM);
	interrupt_aex(SGX_XFRM_LEGACY | SGX_XFRM_AVX, M_YMM);
}

TEST(aex_scrubs_avx512_state)
{
	if (!tu_host_avx512())
		test_skip("no AVX-512 in this host's XCR0");
	exception_aex(SGX_XFRM_LEGACY | SGX_XFRM_AVX | 0xe0, M_YMM | M_ZMM);
	interrupt_aex(SGX_XFRM_LEGACY | SGX_XFRM_AVX | 0xe0, M_YMM | M_ZMM);
}

/*
 * XFRM without AVX: hardware would disable AVX in enclave mode (XCR0 :=
 * XFRM); here XCR0 stays the host's and the enclave can use it, so the
 * AEX must not hand those registers to the host either.
 */
TEST(aex_scrubs_features_outside_xfrm)
{
	uint64_t m = M_YMM | (tu_host_avx512() ? M_ZMM : 0);

	if (!(tu_host_xcr0() & SGX_XFRM_AVX))
		test_skip("no AVX in this host's XCR0");
	exception_aex(SGX_XFRM_LEGACY, m);
	interrupt_aex(SGX_XFRM_LEGACY, m);
}

/* --- EEXIT ---------------------------------------------------------------- */

TEST(eexit_rcx_is_the_entry_aep)
{
	struct sgxemu_enclave *e;
	uint64_t base;

	e = load(SGX_XFRM_LEGACY, &base);
	REQUIRE(e != NULL);
	host_enter(base + L_TCS2, CMD_NOP, 0);
	/* The enclave exits to the return address (its RCX at EENTER,
	 * the ENCLU + 3); EEXIT puts the AEP in RCX. */
	CHECK_EQ(h_rbx, h_aep + 3);
	CHECK_EQ(h_rcx, h_aep);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* EEXIT to a non-canonical address: #GP(0) in enclave mode (an AEX), not
 * a jump there in host mode. */
TEST(eexit_to_noncanonical_target_is_gp)
{
	struct sgxemu_enclave *e;
	struct sgxemu_run run;
	uint64_t base;

	e = load(SGX_XFRM_LEGACY, &base);
	REQUIRE(e != NULL);
	REQUIRE_EQ(tu_call(&run, base + L_TCS0, CMD_EEXIT_TO,
			   0x8000000000001000ULL, 0, 0), 0);
	CHECK_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.exception.vector, X86_TRAP_GP);
	CHECK_EQ(run.leaf, SGX_ERESUME);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

/* --- ENCLU outputs on a read-only page -------------------------------- */

#define PF_BITS	(X86_PF_WRITE | X86_PF_PROT | X86_PF_USER | X86_PF_SGX)

/* @cmd with RSI = @rsi on @tcs of @e: #PF at @page with error code @want
 * (of PF_BITS), and @page as it was (read from the EPC: the mapping may
 * be PROT_NONE). */
static void expect_pf(struct sgxemu_enclave *e, uint64_t tcs, uint64_t cmd,
		      uint64_t rsi, uint64_t page, uint32_t want)
{
	uint8_t before[4096], after[4096];
	struct sgxemu_run run;

	sgx_encl_read(sgxemu__cpu(), e->ctl, page, before, sizeof(before));
	REQUIRE_EQ(tu_call(&run, tcs, cmd, rsi, 0, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EXCEPTION);
	CHECK_EQ(run.exception.vector, X86_TRAP_PF);
	CHECK_EQ(run.exception.address, page);
	CHECK_EQ(run.exception.error_code & PF_BITS, want);
	sgx_encl_read(sgxemu__cpu(), e->ctl, page, after, sizeof(after));
	CHECK_MEM(before, after, sizeof(before));
}

/* @cmd with its output at @out on @tcs exits normally, @out written. */
static void expect_written(uint64_t tcs, uint64_t cmd, uint64_t out)
{
	uint8_t before[16], after[16];
	struct sgxemu_run run;

	memcpy(before, (void *)(uintptr_t)out, sizeof(before));
	REQUIRE_EQ(tu_call(&run, tcs, cmd, out, 0, 0), 0);
	REQUIRE_EQ(run.exit_reason, SGXEMU_EXIT_EEXIT);
	memcpy(after, (void *)(uintptr_t)out, sizeof(after));
	CHECK(memcmp(before, after, sizeof(before)) != 0);
}

/*
 * @cmd with its output at the EPCM read-only page: #PF at that page, W and
 * P set, the page as it was. Mapped read-write (the PTE allows the write,
 * the EPCM refuses it) the error code has the SGX bit; mapped read-only as
 * the driver maps it, the page walk refuses first, without it. At a
 * writable page the same call writes its output (the control).
 */
static void output_on_readonly_page(uint64_t cmd, uint64_t ok_off)
{
	struct sgxemu_enclave *e;
	uint64_t base, ro;

	e = load(SGX_XFRM_LEGACY, &base);
	REQUIRE(e != NULL);
	ro = base + L_RO;
	REQUIRE_EQ(sgxemu_enclave_set_prot(e, ro, 4096,
					   PROT_READ | PROT_WRITE), 0);
	expect_pf(e, base + L_TCS0, cmd, ro + 512, ro, PF_BITS);
	REQUIRE_EQ(sgxemu_enclave_set_prot(e, ro, 4096, PROT_READ), 0);
	expect_pf(e, base + L_TCS1, cmd, ro + 512, ro, PF_BITS & ~X86_PF_SGX);
	expect_written(base + L_TCS2, cmd, base + L_SCRATCH + ok_off);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}

TEST(ereport_output_on_readonly_page_is_pf)
{
	output_on_readonly_page(CMD_EREPORT_AT, 1024);
}

TEST(egetkey_output_on_readonly_page_is_pf)
{
	output_on_readonly_page(CMD_EGETKEY_AT, 3072);
}

/*
 * The page walk comes before the EPCM: an EREPORT whose output page is
 * mapped read-only (EPCM read-write), or whose TARGETINFO page is mapped
 * PROT_NONE, takes a #PF without the SGX bit there and writes nothing.
 */
TEST(enclu_operands_follow_the_mapping)
{
	struct sgxemu_enclave *e;
	uint64_t base, page;

	e = load(SGX_XFRM_LEGACY, &base);
	REQUIRE(e != NULL);
	page = base + L_SCRATCH;
	REQUIRE_EQ(sgxemu_enclave_set_prot(e, page, 4096, PROT_READ), 0);
	expect_pf(e, base + L_TCS0, CMD_EREPORT_AT, page + 1024, page,
		  X86_PF_WRITE | X86_PF_PROT | X86_PF_USER);
	/* TARGETINFO (scratch) behind PROT_NONE, output elsewhere. */
	REQUIRE_EQ(sgxemu_enclave_set_prot(e, page, 4096, PROT_NONE), 0);
	expect_pf(e, base + L_TCS1, CMD_EREPORT_AT,
		  base + L_FSGS + 0x1000 + 512, page, X86_PF_USER);
	/* Mapped read-write again, the same call writes its report. */
	REQUIRE_EQ(sgxemu_enclave_set_prot(e, page, 4096,
					   PROT_READ | PROT_WRITE), 0);
	expect_written(base + L_TCS2, CMD_EREPORT_AT, page + 1024);
	CHECK_EQ(sgxemu_enclave_destroy(e), 0);
}
