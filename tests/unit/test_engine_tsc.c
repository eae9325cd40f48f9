/* SPDX-License-Identifier: MIT */
/*
 * RDTSC/RDTSCP on an SGX1 platform (src/engine/tsc.c), the parts that do
 * not need a host whose CR4.TSD traps, so that they run on every host:
 * the instruction test, the #GP-of-TSD test that turns into the #UD the
 * enclave sees, and the host-mode emulation of a trapped RDTSC. Where the
 * host does trap, test_engine's rdtsc_is_ud_on_sgx1 runs the whole
 * path through an enclave as well.
 */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <x86intrin.h>

#include "test.h"
#include "engine/engine.h"

static const uint8_t rdtsc[] = { 0x0f, 0x31 };
static const uint8_t rdtscp[] = { 0x0f, 0x01, 0xf9 };
static const uint8_t enclu[] = { 0x0f, 0x01, 0xd7 };

TEST(tsc_instructions_by_their_bytes)
{
	static const uint8_t rdpid[] = { 0xf3, 0x0f, 0xc7, 0xf8 };

	CHECK_EQ(sgxemu__tsc_insn_len(rdtsc, sizeof(rdtsc)), 2);
	CHECK_EQ(sgxemu__tsc_insn_len(rdtscp, sizeof(rdtscp)), 3);
	CHECK_EQ(sgxemu__tsc_insn_len(enclu, sizeof(enclu)), 0);
	CHECK_EQ(sgxemu__tsc_insn_len(rdpid, sizeof(rdpid)), 0);
	/* Cut short: not an instruction that was there. */
	CHECK_EQ(sgxemu__tsc_insn_len(rdtscp, 2), 0);
	CHECK_EQ(sgxemu__tsc_insn_len(rdtsc, 1), 0);
}

/* Only the #GP that CR4.TSD raises (SIGSEGV, SI_KERNEL) at one of them,
 * and only when the engine trapped the TSC. */
TEST(tsc_trap_is_the_gp_of_tsd)
{
	siginfo_t gp = { .si_signo = SIGSEGV, .si_code = SI_KERNEL };
	siginfo_t pf = { .si_signo = SIGSEGV, .si_code = SEGV_MAPERR };
	siginfo_t ud = { .si_signo = SIGILL, .si_code = ILL_ILLOPN };
	bool saved = sgxemu__tsc_trapped;

	sgxemu__tsc_trapped = true;
	CHECK(sgxemu__tsc_is_trap(SIGSEGV, &gp, rdtsc, sizeof(rdtsc)));
	CHECK(sgxemu__tsc_is_trap(SIGSEGV, &gp, rdtscp, sizeof(rdtscp)));
	CHECK(!sgxemu__tsc_is_trap(SIGSEGV, &gp, enclu, sizeof(enclu)));
	CHECK(!sgxemu__tsc_is_trap(SIGSEGV, &pf, rdtsc, sizeof(rdtsc)));
	CHECK(!sgxemu__tsc_is_trap(SIGILL, &ud, rdtsc, sizeof(rdtsc)));
	sgxemu__tsc_trapped = false;
	CHECK(!sgxemu__tsc_is_trap(SIGSEGV, &gp, rdtsc, sizeof(rdtsc)));
	sgxemu__tsc_trapped = saved;
}

/* A host RDTSC(P) trapped in the entry window is carried out: the TSC in
 * EDX:EAX (TSC_AUX in ECX for RDTSCP), RIP past it. */
static void emulate_at(const uint8_t *insn, int len)
{
	siginfo_t gp = { .si_signo = SIGSEGV, .si_code = SI_KERNEL };
	ucontext_t uc;
	greg_t *g = uc.uc_mcontext.gregs;
	uint64_t before = __rdtsc(), tsc;

	memset(&uc, 0, sizeof(uc));
	g[REG_RIP] = (greg_t)(uintptr_t)insn;
	g[REG_RCX] = 0x5555;
	sgxemu__tsc_trapped = true;
	REQUIRE(sgxemu__tsc_emulate_host(SIGSEGV, &gp, &uc));
	sgxemu__tsc_trapped = false;
	/* It leaves the TSC trapped, as it found it in the window. */
	prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	tsc = (uint64_t)(uint32_t)g[REG_RDX] << 32 | (uint32_t)g[REG_RAX];
	CHECK(tsc >= before && tsc <= __rdtsc());
	CHECK_EQ(g[REG_RIP], (greg_t)(uintptr_t)insn + len);
	if (len == 3)
		CHECK(g[REG_RCX] != 0x5555);
	else
		CHECK_EQ(g[REG_RCX], 0x5555);
}

TEST(host_rdtsc_in_the_window_is_carried_out)
{
	emulate_at(rdtsc, 2);
	emulate_at(rdtscp, 3);
}

/* Nothing else is taken for one. */
TEST(host_emulation_refuses_other_faults)
{
	siginfo_t gp = { .si_signo = SIGSEGV, .si_code = SI_KERNEL };
	ucontext_t uc;

	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)enclu;
	sgxemu__tsc_trapped = true;
	CHECK(!sgxemu__tsc_emulate_host(SIGSEGV, &gp, &uc));
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)rdtsc;
	CHECK(!sgxemu__tsc_emulate_host(SIGILL, &gp, &uc));
	sgxemu__tsc_trapped = false;
	CHECK(!sgxemu__tsc_emulate_host(SIGSEGV, &gp, &uc));
	CHECK_EQ(uc.uc_mcontext.gregs[REG_RIP], (greg_t)(uintptr_t)rdtsc);
}

/* Bytes readable up to @len from 0x1000, as at the end of a page. */
struct edge {
	const uint8_t *bytes;
	size_t len;
};

static bool edge_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	struct edge *t = ctx;

	if (addr != 0x1000 || n > t->len)
		return false;
	memcpy(buf, t->bytes, n);
	return true;
}

/* An RDTSC whose third byte is not readable is still one; an RDTSCP is
 * not taken from two of its bytes. */
TEST(tsc_read_at_the_end_of_what_is_readable)
{
	siginfo_t gp = { .si_signo = SIGSEGV, .si_code = SI_KERNEL };
	struct edge at_end = { rdtsc, 2 }, cut = { rdtscp, 2 }, none = { 0 };
	uint8_t b[3];
	size_t n;
	bool saved = sgxemu__tsc_trapped;

	sgxemu__tsc_trapped = true;
	n = sgxemu__tsc_read(edge_read, &at_end, 0x1000, b);
	CHECK_EQ(n, 2);
	CHECK(sgxemu__tsc_is_trap(SIGSEGV, &gp, b, n));
	n = sgxemu__tsc_read(edge_read, &cut, 0x1000, b);
	CHECK_EQ(n, 2);
	CHECK(!sgxemu__tsc_is_trap(SIGSEGV, &gp, b, n));
	CHECK_EQ(sgxemu__tsc_read(edge_read, &none, 0x1000, b), 0);
	sgxemu__tsc_trapped = saved;
}
