/* SPDX-License-Identifier: MIT */
/*
 * The engine's fault classification (src/engine/classify.c), fed the
 * signals each vendor's kernel delivers. The expected forms are the ones
 * measured on the two kinds of host (issue 10): AMD raises #UD for ENCLU
 * (SIGILL, ILL_ILLOPN, trap 6); Intel raises #GP (SIGSEGV, SI_KERNEL,
 * trap 13, error 0) for EEXIT/EREPORT/EGETKEY/unknown leaves, and for
 * EENTER/ERESUME on a page that is not EPC a #PF with the SGX bit (error
 * 0x8007 at TCS + 0xfff), or error 0x6 on a PROT_NONE TCS. Both kinds are
 * checked on every host, whichever it is.
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "test.h"
#include "engine/engine.h"

#define SI_KERNEL_ 0x80

/* A fake address space: the instruction bytes at a fixed RIP. */
struct text {
	uint64_t base;
	uint8_t bytes[16];
	size_t len;
};

static bool text_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	struct text *t = ctx;

	if (addr < t->base || addr - t->base > t->len ||
	    n > t->len - (addr - t->base))
		return false;
	memcpy(buf, t->bytes + (addr - t->base), n);
	return true;
}

#define RIP 0x401000ULL

/* @bytes at RIP, then NOPs: 16 readable bytes. */
static struct text text_of(const char *bytes, size_t n)
{
	struct text t = { .base = RIP, .len = sizeof(t.bytes) };

	memset(t.bytes, 0x90, sizeof(t.bytes));
	memcpy(t.bytes, bytes, n);
	return t;
}

static const char enclu[] = "\x0f\x01\xd7";

/* A synchronous fault as the kernel hands it to a handler. */
static void fault(siginfo_t *si, ucontext_t *uc, int signo, int code,
		  unsigned trap, uint32_t err, uint64_t addr)
{
	memset(si, 0, sizeof(*si));
	memset(uc, 0, sizeof(*uc));
	si->si_signo = signo;
	si->si_code = code;
	si->si_addr = (void *)(uintptr_t)addr;
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)RIP;
	uc->uc_mcontext.gregs[REG_TRAPNO] = (greg_t)trap;
	uc->uc_mcontext.gregs[REG_ERR] = (greg_t)err;
}

static struct sgxemu_event classify(int signo, siginfo_t *si, ucontext_t *uc,
				    bool enclave, struct text *t)
{
	struct sgxemu_event ev;

	sgxemu__classify(signo, si, uc, enclave, text_read, t, &ev);
	return ev;
}

TEST(enclu_ud_amd_is_enclu_in_both_modes)
{
	struct text t = text_of(enclu, 3);
	siginfo_t si;
	ucontext_t uc;

	for (int enclave = 0; enclave < 2; enclave++) {
		struct sgxemu_event ev;

		fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
		ev = classify(SIGILL, &si, &uc, enclave, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_ENCLU);
		CHECK_EQ(ev.rip, RIP);
	}
}

TEST(enclu_gp_intel_is_enclu_in_both_modes)
{
	struct text t = text_of(enclu, 3);
	siginfo_t si;
	ucontext_t uc;

	for (int enclave = 0; enclave < 2; enclave++) {
		struct sgxemu_event ev;

		fault(&si, &uc, SIGSEGV, SI_KERNEL_, X86_TRAP_GP, 0, 0);
		ev = classify(SIGSEGV, &si, &uc, enclave, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_ENCLU);
		CHECK_EQ(ev.rip, RIP);
	}
}

TEST(enclu_pf_intel_eenter_is_enclu)
{
	struct text t = text_of(enclu, 3);
	const uint32_t errs[] = { 0x8007, 0x6, 0x4, 0x5 };
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < sizeof(errs) / sizeof(*errs); i++) {
		struct sgxemu_event ev;

		fault(&si, &uc, SIGSEGV, SEGV_ACCERR, X86_TRAP_PF, errs[i],
		      0x7f0000001fffULL);
		ev = classify(SIGSEGV, &si, &uc, false, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_ENCLU);
		CHECK_EQ(ev.addr, 0x7f0000001fffULL);
	}
}

/* The fetch of the ENCLU itself faulted: a paging fault, not an ENCLU. */
TEST(instruction_fetch_pf_at_enclu_is_not_enclu)
{
	struct text t = text_of(enclu, 3);
	siginfo_t si;
	ucontext_t uc;
	struct sgxemu_event ev;

	fault(&si, &uc, SIGSEGV, SEGV_ACCERR, X86_TRAP_PF,
	      X86_PF_INSTR | X86_PF_USER | X86_PF_PROT, RIP);
	ev = classify(SIGSEGV, &si, &uc, false, &t);
	CHECK_EQ(ev.kind, SGXEMU_EV_EXCEPTION);
	CHECK_EQ(ev.vector, X86_TRAP_PF);
	CHECK_EQ(ev.errcd, X86_PF_INSTR | X86_PF_USER | X86_PF_PROT);
}

TEST(unreadable_rip_is_an_exception)
{
	struct text t = { .base = RIP, .len = 2 };	/* 2 bytes readable */
	siginfo_t si;
	ucontext_t uc;
	struct sgxemu_event ev;

	memcpy(t.bytes, enclu, 2);
	fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
	ev = classify(SIGILL, &si, &uc, false, &t);
	CHECK_EQ(ev.kind, SGXEMU_EV_EXCEPTION);
	CHECK_EQ(ev.vector, X86_TRAP_UD);
}

/* Other bytes at the fault: the fault itself, with its vector. */
TEST(non_enclu_faults_keep_their_vector)
{
	struct text t = text_of("\x0f\x01\xd0", 3);	/* XGETBV, not ENCLU */
	const struct {
		int signo, code;
		unsigned trap, vector;
		uint32_t err, errcd;
	} c[] = {
		{ SIGILL, ILL_ILLOPN, X86_TRAP_UD, X86_TRAP_UD, 0, 0 },
		{ SIGSEGV, SI_KERNEL_, X86_TRAP_GP, X86_TRAP_GP, 0x10, 0x10 },
		{ SIGSEGV, SEGV_MAPERR, X86_TRAP_PF, X86_TRAP_PF, 6, 6 },
		{ SIGSEGV, SI_KERNEL_, 0, X86_TRAP_GP, 0, 0 },
		{ SIGFPE, FPE_INTDIV, X86_TRAP_DE, X86_TRAP_DE, 0, 0 },
		{ SIGFPE, FPE_FLTINV, X86_TRAP_MF, X86_TRAP_MF, 0, 0 },
		{ SIGFPE, FPE_FLTDIV, X86_TRAP_XF, X86_TRAP_XF, 0, 0 },
		{ SIGTRAP, TRAP_TRACE, X86_TRAP_DB, X86_TRAP_DB, 0, 0 },
		{ SIGTRAP, SI_KERNEL_, X86_TRAP_BP, X86_TRAP_BP, 0, 0 },
		{ SIGBUS, BUS_ADRALN, X86_TRAP_AC, X86_TRAP_AC, 0, 0 },
		{ SIGBUS, BUS_ADRERR, X86_TRAP_PF, X86_TRAP_PF, 4, 4 },
	};
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		struct sgxemu_event ev;

		fault(&si, &uc, c[i].signo, c[i].code, c[i].trap, c[i].err,
		      0x1000);
		ev = classify(c[i].signo, &si, &uc, true, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_EXCEPTION);
		CHECK_EQ(ev.vector, c[i].vector);
		CHECK_EQ(ev.errcd, c[i].errcd);
	}
}

/*
 * In enclave mode the instructions SGX makes #UD (sgx-facts.md §4.26)
 * that user mode runs into as #GP are reported as #UD; in host mode the
 * same #GP stays a #GP.
 */
TEST(illegal_in_enclave_gp_becomes_ud)
{
	static const struct {
		const char *b;
		size_t n;
	} ill[] = {
		{ "\xcd\x80", 2 },		/* INT 0x80 */
		{ "\xce\x90", 2 },		/* INTO */
		{ "\xe4\x60", 2 },		/* IN AL, 0x60 */
		{ "\xee\x90", 2 },		/* OUT DX, AL */
		{ "\x66\xef\x90", 3 },		/* OUT DX, AX */
		{ "\xf3\x6c\x90", 3 },		/* REP INSB */
		{ "\x48\xcb\x90", 3 },		/* far RET (REX.W) */
		{ "\xff\x1c\x24", 3 },		/* far CALL [rsp] */
		{ "\xff\x2c\x24", 3 },		/* far JMP [rsp] */
		{ "\x0f\x33\x90", 3 },		/* RDPMC */
		{ "\x8e\xd8\x90", 3 },		/* MOV DS, AX */
		{ "\x0f\xb2\x00", 3 },		/* LSS */
		{ "\x0f\xa2\x90", 3 },		/* CPUID, faulting on */
	};
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < sizeof(ill) / sizeof(*ill); i++) {
		struct text t = text_of(ill[i].b, ill[i].n);
		struct sgxemu_event ev;

		fault(&si, &uc, SIGSEGV, SI_KERNEL_, X86_TRAP_GP, 0, 0);
		ev = classify(SIGSEGV, &si, &uc, true, &t);
		/* CPUID is its own event: the engine may answer it. */
		CHECK_EQ(ev.kind, ill[i].b[1] == '\xa2' ? SGXEMU_EV_CPUID :
						       SGXEMU_EV_EXCEPTION);
		if (ev.vector != X86_TRAP_UD)
			test_fail(__FILE__, __LINE__, "case %zu: vector %u",
				  i, ev.vector);
		ev = classify(SIGSEGV, &si, &uc, false, &t);
		CHECK_EQ(ev.vector, X86_TRAP_GP);
	}
}

/* An INT 0x80 in the last two bytes before an unreadable page. */
TEST(illegal_in_enclave_at_page_end)
{
	struct text t = { .base = RIP + 0xffe, .len = 2 };
	siginfo_t si;
	ucontext_t uc;
	struct sgxemu_event ev;

	memcpy(t.bytes, "\xcd\x80", 2);
	fault(&si, &uc, SIGSEGV, SI_KERNEL_, X86_TRAP_GP, 0, 0);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)t.base;
	ev = classify(SIGSEGV, &si, &uc, true, &t);
	CHECK_EQ(ev.vector, X86_TRAP_UD);
}

/* A #GP from an ordinary instruction in an enclave stays #GP. */
TEST(ordinary_gp_in_enclave_stays_gp)
{
	static const char *ok[] = {
		"\x48\x8b\x00",		/* MOV RAX, [RAX] (non-canonical) */
		"\xff\x10\x90",		/* near CALL [RAX]: /2 */
		"\xff\x20\x90",		/* near JMP [RAX]: /4 */
		"\x0f\x01\xd0",		/* XGETBV */
	};
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		struct text t = text_of(ok[i], 3);
		struct sgxemu_event ev;

		fault(&si, &uc, SIGSEGV, SI_KERNEL_, X86_TRAP_GP, 0, 0);
		ev = classify(SIGSEGV, &si, &uc, true, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_EXCEPTION);
		CHECK_EQ(ev.vector, X86_TRAP_GP);
	}
}

TEST(dispatched_syscall_is_ud_at_the_instruction)
{
	struct text t = text_of("\x0f\x05", 2);
	siginfo_t si;
	ucontext_t uc;
	struct sgxemu_event ev;

	fault(&si, &uc, SIGSYS, 2 /* SYS_USER_DISPATCH */, 0, 0, 0);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(RIP + 2);
	ev = classify(SIGSYS, &si, &uc, true, &t);
	CHECK_EQ(ev.kind, SGXEMU_EV_SYSCALL);
	CHECK_EQ(ev.vector, X86_TRAP_UD);
	CHECK_EQ(ev.rip, RIP);
}

/* Sent signals are interrupts, even with a fault signal's number. */
TEST(sent_signals_are_interrupts)
{
	struct text t = text_of(enclu, 3);
	const int sigs[] = { SIGALRM, SIGUSR1, SIGSEGV, SIGILL, SIGSYS,
			     SGXEMU_KICK_SIGNAL };
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++) {
		struct sgxemu_event ev;

		fault(&si, &uc, sigs[i], SI_USER, 0, 0, 0);
		ev = classify(sigs[i], &si, &uc, true, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_INTERRUPT);
		fault(&si, &uc, sigs[i], SI_TKILL, 0, 0, 0);
		ev = classify(sigs[i], &si, &uc, false, &t);
		CHECK_EQ(ev.kind, SGXEMU_EV_INTERRUPT);
	}
}

/* SGXEMU_FAULT_STYLE=ud: an Intel-style ENCLU fault becomes AMD's. */
TEST(fault_style_ud_rewrites_gp_and_pf)
{
	struct text t = text_of(enclu, 3);
	siginfo_t si;
	ucontext_t uc;
	int sig;

	sgxemu__fault_style = SGXEMU_STYLE_UD;
	fault(&si, &uc, SIGSEGV, SI_KERNEL_, X86_TRAP_GP, 0, 0);
	sig = sgxemu__fault_style_apply(SIGSEGV, &si, &uc, true, text_read, &t);
	CHECK_EQ(sig, SIGILL);
	CHECK_EQ(si.si_signo, SIGILL);
	CHECK_EQ(si.si_code, ILL_ILLOPN);
	CHECK_EQ((uintptr_t)si.si_addr, RIP);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_TRAPNO], X86_TRAP_UD);

	fault(&si, &uc, SIGSEGV, SEGV_ACCERR, X86_TRAP_PF, 0x8007, 0x5fff);
	sig = sgxemu__fault_style_apply(SIGSEGV, &si, &uc, false, text_read,
					&t);
	CHECK_EQ(sig, SIGILL);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_ERR], 0);
	sgxemu__fault_style = SGXEMU_STYLE_NATIVE;
}

/* SGXEMU_FAULT_STYLE=gp: an AMD-style ENCLU fault becomes Intel's. */
TEST(fault_style_gp_rewrites_ud)
{
	struct text t = text_of(enclu, 3);
	siginfo_t si;
	ucontext_t uc;
	int sig;

	sgxemu__fault_style = SGXEMU_STYLE_GP;
	/* EEXIT: #GP(0). */
	fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
	uc.uc_mcontext.gregs[REG_RAX] = SGX_EEXIT;
	sig = sgxemu__fault_style_apply(SIGILL, &si, &uc, false, text_read,
					&t);
	CHECK_EQ(sig, SIGSEGV);
	CHECK_EQ(si.si_code, SI_KERNEL_);
	CHECK(si.si_addr == NULL);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_TRAPNO], X86_TRAP_GP);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_ERR], 0);

	/* Host EENTER on a TCS that is not EPC: #PF, SGX bit, at +0xfff. */
	fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
	uc.uc_mcontext.gregs[REG_RAX] = SGX_EENTER;
	uc.uc_mcontext.gregs[REG_RBX] = 0x7f0000003000LL;
	sig = sgxemu__fault_style_apply(SIGILL, &si, &uc, false, text_read,
					&t);
	CHECK_EQ(sig, SIGSEGV);
	CHECK_EQ(si.si_code, SEGV_ACCERR);
	CHECK_EQ((uintptr_t)si.si_addr, 0x7f0000003fffULL);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_TRAPNO], X86_TRAP_PF);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_ERR], 0x8007);

	/* The same leaf in enclave mode: #GP. */
	fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
	uc.uc_mcontext.gregs[REG_RAX] = SGX_EENTER;
	sig = sgxemu__fault_style_apply(SIGILL, &si, &uc, true, text_read, &t);
	CHECK_EQ(sig, SIGSEGV);
	CHECK_EQ(uc.uc_mcontext.gregs[REG_TRAPNO], X86_TRAP_GP);
	sgxemu__fault_style = SGXEMU_STYLE_NATIVE;
}

/* Faults that are not ENCLU pass through any style unchanged. */
TEST(fault_style_leaves_other_faults_alone)
{
	struct text t = text_of("\x0f\x0b", 2);		/* UD2 */
	const enum sgxemu_fault_style styles[] = { SGXEMU_STYLE_UD,
						   SGXEMU_STYLE_GP };
	siginfo_t si;
	ucontext_t uc;

	for (size_t i = 0; i < 2; i++) {
		sgxemu__fault_style = styles[i];
		fault(&si, &uc, SIGILL, ILL_ILLOPN, X86_TRAP_UD, 0, RIP);
		CHECK_EQ(sgxemu__fault_style_apply(SIGILL, &si, &uc, true,
						   text_read, &t), SIGILL);
		CHECK_EQ(si.si_code, ILL_ILLOPN);
		fault(&si, &uc, SIGSEGV, SEGV_MAPERR, X86_TRAP_PF, 4, 8);
		CHECK_EQ(sgxemu__fault_style_apply(SIGSEGV, &si, &uc, false,
						   text_read, &t), SIGSEGV);
		CHECK_EQ(uc.uc_mcontext.gregs[REG_ERR], 4);
	}
	sgxemu__fault_style = SGXEMU_STYLE_NATIVE;
}

/* The host reader: real bytes, and false (no fault) where nothing is
 * readable, when the kernel lets the process read itself. */
TEST(host_read_is_fault_safe)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t buf[3];
	struct iovec l = { buf, 1 }, r = { &pg, 1 };

	if (syscall(SYS_process_vm_readv, (long)getpid(), &l, 1UL, &r, 1UL,
		    0UL) != 1)
		test_skip("process_vm_readv refused here (%s): the reader "
			  "falls back to plain loads", strerror(errno));
	REQUIRE(p != MAP_FAILED);
	memcpy(p + pg - 3, enclu, 3);
	CHECK(sgxemu__host_read(NULL, (uintptr_t)(p + pg - 3), buf, 3));
	CHECK_MEM(buf, enclu, 3);
	REQUIRE_EQ(mprotect(p + pg, (size_t)pg, PROT_NONE), 0);
	CHECK(!sgxemu__host_read(NULL, (uintptr_t)(p + pg - 1), buf, 3));
	CHECK(!sgxemu__host_read(NULL, (uintptr_t)(p + pg), buf, 3));
	munmap(p, (size_t)pg * 2);
}

static bool cpu_vendor_is(const char *vendor)
{
	char line[256];
	bool yes = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "vendor_id", 9)) {
			yes = strstr(line, vendor) != NULL;
			break;
		}
	if (f)
		fclose(f);
	return yes;
}

/*
 * The probe's answer is one of the two forms, self-consistent, and on an
 * AMD host (no SGX at all) the #UD; the trap cost is a real figure.
 */
TEST(trap_probe_reports_this_hosts_fault)
{
	struct sgxemu_trap_info t;
	struct sigaction before[2], after[2];
	double ns;

	sigaction(SIGILL, NULL, &before[0]);
	sigaction(SIGSEGV, NULL, &before[1]);
	REQUIRE_EQ(sgxemu_trap_probe(&t), 0);
	CHECK(t.vector == X86_TRAP_UD || t.vector == X86_TRAP_GP);
	CHECK_EQ(t.signo, t.vector == X86_TRAP_UD ? SIGILL : SIGSEGV);
	if (t.vector == X86_TRAP_GP)
		CHECK_EQ(t.code, SI_KERNEL_);
	CHECK(t.eenter_vector == X86_TRAP_UD || t.eenter_vector == X86_TRAP_GP ||
	      t.eenter_vector == X86_TRAP_PF);
	if (t.eenter_vector == X86_TRAP_PF)
		CHECK_EQ(t.eenter_error_code & X86_PF_SGX, X86_PF_SGX);
	if (cpu_vendor_is("AuthenticAMD")) {
		CHECK_EQ(t.vector, X86_TRAP_UD);
		CHECK_EQ(t.eenter_vector, X86_TRAP_UD);
	}
	CHECK(t.forced == NULL);
	ns = sgxemu_trap_cost_ns(200);
	CHECK(ns > 0);
	CHECK(sgxemu_trap_cost_ns(0) < 0);
	/* The probe put the handlers back. */
	sigaction(SIGILL, NULL, &after[0]);
	sigaction(SIGSEGV, NULL, &after[1]);
	for (int i = 0; i < 2; i++) {
		CHECK(before[i].sa_sigaction == after[i].sa_sigaction);
		CHECK_EQ(before[i].sa_flags, after[i].sa_flags);
	}
	CHECK(!strcmp(sgxemu_trap_name(t.vector), t.vector == X86_TRAP_UD ?
		      "#UD (SIGILL)" : "#GP (SIGSEGV)"));
}
