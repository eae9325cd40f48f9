/* SPDX-License-Identifier: MIT */
/*
 * The enclave-mode leaves of the processor model (src/cpu/enclu.c) on
 * their own, without running code: EENTER/ERESUME checks and state, EEXIT,
 * AEX into the SSA frame (sgx-facts.md §4.16-4.19, §1.10, §1.11).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "test.h"
#include "cpu/cpu.h"
#include "cpu/enclu.h"

#define BASE	0x40000000ULL
#define SIZE	0x10000ULL
#define TCS_A	(BASE + 0x0000)	/* NSSA 2 */
#define TCS_B	(BASE + 0x1000)	/* NSSA 1 */
#define TCS_C	(BASE + 0x2000)	/* OSSA points at a missing page */
#define CODE	(BASE + 0x3000)
#define SSA_A	(BASE + 0x4000)	/* 2 frames */
#define SSA_B	(BASE + 0x6000)
#define AEP	0x401000ULL

struct fixture {
	struct sgx_cpu cpu;
	struct sgx_encl_ctl *ctl;
	void *secs;
	size_t next;
};

static void *page(struct fixture *f, size_t i)
{
	return sgx_epc_page(&f->cpu, i);
}

static int add(struct fixture *f, uint64_t lin, const void *src,
	       uint64_t flags)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	uint8_t *buf = aligned_alloc(4096, 4096);
	int ret;

	memset(buf, 0, 4096);
	if (src)
		memcpy(buf, src, 4096);
	memset(&si, 0, sizeof(si));
	si.flags = flags;
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = lin;
	pi.srcpge = (uint64_t)(uintptr_t)buf;
	pi.secinfo = (uint64_t)(uintptr_t)&si;
	pi.secs = (uint64_t)(uintptr_t)f->secs;
	ret = sgx_eadd(&f->cpu, &pi, page(f, f->next++));
	free(buf);
	return ret;
}

static int add_tcs(struct fixture *f, uint64_t lin, uint64_t ossa,
		   uint32_t nssa)
{
	struct sgx_tcs *t = aligned_alloc(4096, 4096);
	int ret;

	memset(t, 0, sizeof(*t));
	t->ossa = ossa;
	t->nssa = nssa;
	t->oentry = CODE - BASE;
	t->ofsbase = 0x8000;
	t->ogsbase = 0x9000;
	t->fslimit = t->gslimit = 0xffffffff;
	ret = add(f, lin, t, SGX_SECINFO_TCS);
	free(t);
	return ret;
}

/* ECREATE of an enclave at BASE with @attr added to its ATTRIBUTES into
 * EPC page @slot; its SECS or NULL. */
static void *ecreate_at(struct fixture *f, size_t slot, uint64_t attr)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_secs *s = aligned_alloc(4096, 4096);
	int ret;

	memset(s, 0, sizeof(*s));
	s->base = BASE;
	s->size = SIZE;
	s->ssa_frame_size = 1;
	s->miscselect = SGX_MISC_EXINFO;
	s->attributes.flags = SGX_ATTR_MODE64BIT | attr;
	s->attributes.xfrm = 3;
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_SECS;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uint64_t)(uintptr_t)s;
	pi.secinfo = (uint64_t)(uintptr_t)&si;
	ret = sgx_ecreate(&f->cpu, &pi, page(f, slot));
	free(s);
	return ret ? NULL : page(f, slot);
}

/*
 * An enclave with three TCSs, code and SSA pages, marked initialised
 * (EINIT has its own tests; these are about entry and exit), on a part
 * with or without AEX-Notify and with @attr added to its ATTRIBUTES.
 */
static bool setup_part(struct fixture *f, bool init, bool aexnotify,
		       uint64_t attr)
{
	struct sgx_cpu_config cc = { .epc_size = 64 * 4096,
				     .aexnotify = aexnotify };
	long idx;

	memset(f, 0, sizeof(*f));
	sgx_xsave_layout_init();
	if (sgx_cpu_init(&f->cpu, &cc))
		return false;
	f->secs = ecreate_at(f, 63, attr);
	if (!f->secs)
		return false;
	idx = sgx_epc_index(&f->cpu, f->secs);
	f->ctl = f->cpu.ctl[idx];
	if (add_tcs(f, TCS_A, SSA_A - BASE, 2) ||
	    add_tcs(f, TCS_B, SSA_B - BASE, 1) ||
	    add_tcs(f, TCS_C, 0xe000, 1) ||
	    add(f, CODE, NULL, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X) ||
	    add(f, SSA_A, NULL, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W) ||
	    add(f, SSA_A + 0x1000, NULL,
		SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W) ||
	    add(f, SSA_B, NULL, SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W))
		return false;
	f->ctl->initialized = init;
	return true;
}

static bool setup(struct fixture *f, bool init)
{
	return setup_part(f, init, false, 0);
}

static struct sgx_tcs *tcs_epc(struct fixture *f, uint64_t lin)
{
	long i = sgx_cpu_lookup(&f->cpu, lin);

	return i < 0 ? NULL : page(f, (size_t)i);
}

static struct sgx_gprsgx *gpr_epc(struct fixture *f, uint64_t frame)
{
	long i = sgx_cpu_lookup(&f->cpu, frame);

	return (struct sgx_gprsgx *)((uint8_t *)page(f, (size_t)i) + 4096 - 184);
}

TEST(eenter_not_initialised_gp)
{
	struct fixture f;
	struct sgx_lp lp;

	REQUIRE(setup(&f, false));
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_GP);
	/* The failed entry left the TCS free. */
	f.ctl->initialized = true;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	sgx_cpu_destroy(&f.cpu);
}

TEST(eenter_bad_tcs)
{
	struct fixture f;
	struct sgx_lp lp;

	REQUIRE(setup(&f, true));
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A + 8, AEP, 1, 2, &lp), SGX_GP);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, CODE, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + 0xf000, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + SIZE, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(sgx_eenter(&f.cpu, NULL, TCS_A, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, 0x8000000000000000ULL, 1, 2,
			    &lp), SGX_GP);
	/* SSA frame page not in the enclave: #PF. */
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_C, AEP, 1, 2, &lp), SGX_PF);
	sgx_cpu_destroy(&f.cpu);
}

TEST(eenter_state_and_outputs)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_tcs *t;
	struct sgx_gprsgx *g;

	REQUIRE(setup(&f, true));
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 0x7000, 0x7100, &lp), 0);
	t = tcs_epc(&f, TCS_A);
	CHECK_EQ(t->state, 1);
	CHECK_EQ(t->aep, AEP);
	CHECK_EQ(lp.rip, CODE);
	CHECK_EQ(lp.cssa, 0);
	CHECK_EQ(lp.fsbase, BASE + 0x8000);
	CHECK_EQ(lp.gsbase, BASE + 0x9000);
	g = gpr_epc(&f, SSA_A);
	CHECK_EQ(g->ursp, 0x7000);
	CHECK_EQ(g->urbp, 0x7100);
	CHECK_EQ(atomic_load(&f.ctl->active_threads), 1);
	/* Busy: a second logical processor gets #GP. */
	{
		struct sgx_lp lp2;

		CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp2),
			 SGX_GP);
		CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp2),
			 SGX_GP);
		CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp2), 0);
		sgx_eexit(&f.cpu, &lp2);
	}
	sgx_eexit(&f.cpu, &lp);
	CHECK_EQ(t->state, 0);
	CHECK_EQ(t->cssa, 0);
	CHECK_EQ(atomic_load(&f.ctl->active_threads), 0);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

TEST(eresume_cssa_zero_gp)
{
	struct fixture f;
	struct sgx_lp lp;

	REQUIRE(setup(&f, true));
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_GP);
	CHECK_EQ(tcs_epc(&f, TCS_A)->state, 0);
	sgx_cpu_destroy(&f.cpu);
}

TEST(aex_saves_frame_and_eresume_restores)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_aex_event ev;
	struct sgx_gprsgx *g;
	struct sgx_exinfo *x;
	uint8_t xsave[576];

	REQUIRE(setup(&f, true));
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 0x7000, 0x7100, &lp), 0);
	memset(&ev, 0, sizeof(ev));
	ev.gpr.rax = 0xaa;
	ev.gpr.r15 = 0xff;
	ev.gpr.rip = CODE + 0x10;
	ev.gpr.rflags = 0x246;
	ev.gpr.fsbase = BASE + 0x8000;
	ev.exception = true;
	ev.vector = X86_TRAP_PF;
	ev.error_code = X86_PF_SGX | X86_PF_WRITE | X86_PF_USER | X86_PF_PROT;
	ev.maddr = BASE + 0x3123;
	memset(xsave, 0, sizeof(xsave));
	xsave[160] = 0x5a;			/* xmm0 byte 0 */
	xsave[512] = 3;				/* XSTATE_BV */
	ev.xsave = xsave;
	ev.xsave_size = sizeof(xsave);
	sgx_aex(&f.cpu, &lp, &ev);
	CHECK_EQ(lp.ursp, 0x7000);
	CHECK_EQ(lp.urbp, 0x7100);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 1);
	CHECK_EQ(tcs_epc(&f, TCS_A)->state, 0);
	CHECK_EQ(atomic_load(&f.ctl->active_threads), 0);
	g = gpr_epc(&f, SSA_A);
	CHECK_EQ(g->rax, 0xaa);
	CHECK_EQ(g->r15, 0xff);
	CHECK_EQ(g->rip, CODE + 0x10);
	CHECK_EQ(g->exitinfo, SGX_EXITINFO_VALID | 3 << 8 | X86_TRAP_PF);
	x = (struct sgx_exinfo *)((uint8_t *)g - 16);
	CHECK_EQ(x->maddr, BASE + 0x3123);
	CHECK_EQ(x->errcd, ev.error_code);
	{
		uint8_t b[576];

		sgx_encl_read(&f.cpu, f.ctl, SSA_A, b, sizeof(b));
		CHECK_EQ(b[160], 0x5a);
		CHECK_EQ(b[512], 3);
	}

	/* Second AEX level: EENTER with CSSA 1 uses frame 1. */
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 0x6000, 0x6100, &lp), 0);
	CHECK_EQ(lp.cssa, 1);
	memset(&ev, 0, sizeof(ev));		/* an interrupt */
	ev.gpr.rip = CODE + 0x20;
	sgx_aex(&f.cpu, &lp, &ev);
	CHECK_EQ(gpr_epc(&f, SSA_A + 0x1000)->exitinfo, 0);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 2);
	/* CSSA == NSSA: no more EENTER. */
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_GP);

	/* ERESUME: frame 1, then frame 0. */
	REQUIRE_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 0x5000, 0x5100, &lp), 0);
	CHECK_EQ(lp.rip, CODE + 0x20);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 1);
	sgx_eexit(&f.cpu, &lp);
	REQUIRE_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 0x5000, 0x5100, &lp), 0);
	CHECK_EQ(lp.rip, CODE + 0x10);
	CHECK_EQ(lp.gpr->rax, 0xaa);
	CHECK_EQ(lp.fsbase, BASE + 0x8000);
	CHECK_EQ(lp.xsave, SSA_A);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 0);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

TEST(exitinfo_rules)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_aex_event ev;
	static const struct { unsigned v; uint32_t want; } cases[] = {
		{ X86_TRAP_DE, SGX_EXITINFO_VALID | 3 << 8 | 0 },
		{ X86_TRAP_BP, SGX_EXITINFO_VALID | 6 << 8 | 3 },
		{ X86_TRAP_UD, SGX_EXITINFO_VALID | 3 << 8 | 6 },
		{ X86_TRAP_GP, SGX_EXITINFO_VALID | 3 << 8 | 13 },
		{ X86_TRAP_NM, 0 },
	};

	REQUIRE(setup(&f, true));
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
		memset(&ev, 0, sizeof(ev));
		ev.exception = true;
		ev.vector = (uint8_t)cases[i].v;
		ev.error_code = 0x10;
		sgx_aex(&f.cpu, &lp, &ev);
		CHECK_EQ(gpr_epc(&f, SSA_B)->exitinfo, cases[i].want);
		/* #GP with EXINFO: MADDR 0, ERRCD the error code. */
		if (cases[i].v == X86_TRAP_GP)
			CHECK_EQ(((struct sgx_exinfo *)((uint8_t *)gpr_epc(&f, SSA_B) -
							 16))->errcd, 0x10);
		REQUIRE_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
		sgx_eexit(&f.cpu, &lp);
	}
	sgx_cpu_destroy(&f.cpu);
}

TEST(eresume_bad_xsave_header_gp)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_aex_event ev;
	uint64_t bv = 1ULL << 9;	/* PKRU: not in XFRM */

	REQUIRE(setup(&f, true));
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
	memset(&ev, 0, sizeof(ev));
	sgx_aex(&f.cpu, &lp, &ev);
	sgx_encl_write(&f.cpu, f.ctl, SSA_B + 512, &bv, 8);
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), SGX_GP);
	CHECK_EQ(tcs_epc(&f, TCS_B)->cssa, 1);
	CHECK_EQ(tcs_epc(&f, TCS_B)->state, 0);
	bv = 3;
	sgx_encl_write(&f.cpu, f.ctl, SSA_B + 512, &bv, 8);
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/*
 * AEX-Notify (newer SDM / ISE "Asynchronous Enclave Exit Notify"): CPUID
 * leaf 0x12 enumerates EDECCSSA (0.EAX[11]) and the AEXNOTIFY attribute
 * (1.EAX[10]) only on a part that has them, and ECREATE and EENTER treat
 * the attribute and TCS.FLAGS.AEXNOTIFY as reserved bits elsewhere.
 */
TEST(aexnotify_enumerated_and_reserved_by_part)
{
	struct sgx_cpu_config on = { .aexnotify = true }, off = { 0 };
	uint32_t r[4];
	struct fixture f;
	struct sgx_lp lp;

	REQUIRE_EQ(sgx_cpu_config_defaults(&on), 0);
	REQUIRE_EQ(sgx_cpu_config_defaults(&off), 0);
	sgx_cpuid_leaf12(&on, NULL, 0, 0, r);
	CHECK_EQ(r[0] >> 11 & 1, 1);
	sgx_cpuid_leaf12(&on, NULL, 0, 1, r);
	CHECK_EQ(r[0] >> 10 & 1, 1);
	sgx_cpuid_leaf12(&off, NULL, 0, 0, r);
	CHECK_EQ(r[0] >> 11 & 1, 0);
	sgx_cpuid_leaf12(&off, NULL, 0, 1, r);
	CHECK_EQ(r[0] >> 10 & 1, 0);

	/* ECREATE with the attribute: #GP without the feature. */
	CHECK(!setup_part(&f, true, false, SGX_ATTR_AEXNOTIFY));
	sgx_cpu_destroy(&f.cpu);
	REQUIRE(setup_part(&f, true, true, SGX_ATTR_AEXNOTIFY));
	sgx_cpu_destroy(&f.cpu);

	/* TCS.FLAGS.AEXNOTIFY: a reserved bit (EENTER #GP) without it. */
	REQUIRE(setup_part(&f, true, false, 0));
	tcs_epc(&f, TCS_A)->flags |= SGX_TCS_AEXNOTIFY;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_GP);
	CHECK_EQ(tcs_epc(&f, TCS_A)->state, 0);
	sgx_cpu_destroy(&f.cpu);
	REQUIRE(setup_part(&f, true, true, 0));
	tcs_epc(&f, TCS_A)->flags |= SGX_TCS_AEXNOTIFY;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/* An interrupt AEX from TCS_A with SSA[0].AEXNOTIFY = @byte set first. */
static void aex_with_notify_byte(struct fixture *f, uint8_t byte,
				 struct sgx_lp *lp)
{
	struct sgx_aex_event ev;

	REQUIRE_EQ(sgx_eenter(&f->cpu, f->ctl, TCS_A, AEP, 0x7000, 0x7100,
			      lp), 0);
	gpr_epc(f, SSA_A)->aexnotify = byte;
	memset(&ev, 0, sizeof(ev));
	ev.gpr.rip = CODE + 0x40;
	ev.gpr.rbx = 0xbb;
	sgx_aex(&f->cpu, lp, &ev);
}

/*
 * The notification: AEX leaves the frame's AEXNOTIFY byte as software set
 * it; the ERESUME that follows enters at OENTRY as EENTER does (CSSA
 * stays 1, URSP/URBP recorded in frame 1); EDECCSSA inside makes frame 0
 * current again without touching its contents, and #GPs at CSSA 0.
 */
TEST(eresume_delivers_aex_notification_and_edeccssa_returns)
{
	struct fixture f;
	struct sgx_lp lp;
	uint64_t rax;
	bool zf;

	REQUIRE(setup_part(&f, true, true, SGX_ATTR_AEXNOTIFY));
	tcs_epc(&f, TCS_A)->flags |= SGX_TCS_AEXNOTIFY;
	aex_with_notify_byte(&f, 1, &lp);
	CHECK_EQ(gpr_epc(&f, SSA_A)->aexnotify, 1);
	CHECK_EQ(gpr_epc(&f, SSA_A)->rip, CODE + 0x40);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 1);

	REQUIRE_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 0x5000, 0x5100, &lp),
		   0);
	CHECK(lp.notify);
	CHECK_EQ(lp.rip, CODE);			/* OENTRY, not the frame's RIP */
	CHECK_EQ(lp.cssa, 1);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 1);
	CHECK_EQ(tcs_epc(&f, TCS_A)->state, 1);
	CHECK_EQ(lp.fsbase, BASE + 0x8000);
	CHECK_EQ(gpr_epc(&f, SSA_A + 0x1000)->ursp, 0x5000);
	CHECK_EQ(gpr_epc(&f, SSA_A + 0x1000)->urbp, 0x5100);

	REQUIRE_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EDECCSSA, 0, 0, 0, &rax,
				  &zf), 0);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 0);
	CHECK_EQ(lp.cssa, 0);
	CHECK_EQ(rax, SGX_EDECCSSA);		/* no output registers */
	CHECK_EQ(gpr_epc(&f, SSA_A)->rbx, 0xbb);
	CHECK_EQ(gpr_epc(&f, SSA_A)->rip, CODE + 0x40);
	/* CSSA 0: nothing to go back to. */
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EDECCSSA, 0, 0, 0, &rax, &zf),
		 SGX_GP);
	CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 0);
	sgx_eexit(&f.cpu, &lp);
	CHECK_EQ(tcs_epc(&f, TCS_A)->state, 0);
	sgx_cpu_destroy(&f.cpu);
}

/*
 * No notification unless the enclave (ATTRIBUTES), the thread (TCS.FLAGS)
 * and the frame (GPRSGX.AEXNOTIFY bit 0) all ask for it: ERESUME then
 * restores the frame as always. On a part without AEX-Notify the byte is
 * reserved, AEX clears it, and EDECCSSA is an undefined leaf (#GP).
 */
TEST(aex_notification_needs_enclave_thread_and_frame)
{
	static const struct {
		bool part;
		uint64_t attr;
		bool tcs_flag;
		uint8_t byte;
	} cases[] = {
		{ true, 0, true, 1 },
		{ true, SGX_ATTR_AEXNOTIFY, false, 1 },
		{ true, SGX_ATTR_AEXNOTIFY, true, 0 },
		{ true, SGX_ATTR_AEXNOTIFY, true, 2 },
		{ false, 0, false, 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture f;
		struct sgx_lp lp;
		uint64_t rax;
		bool zf;

		REQUIRE(setup_part(&f, true, cases[i].part, cases[i].attr));
		if (cases[i].tcs_flag)
			tcs_epc(&f, TCS_A)->flags |= SGX_TCS_AEXNOTIFY;
		aex_with_notify_byte(&f, cases[i].byte, &lp);
		CHECK_EQ(gpr_epc(&f, SSA_A)->aexnotify,
			 cases[i].part ? cases[i].byte : 0);
		REQUIRE_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp),
			   0);
		CHECK(!lp.notify);
		CHECK_EQ(lp.rip, CODE + 0x40);
		CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 0);
		if (!cases[i].part) {
			tcs_epc(&f, TCS_A)->cssa = 1;
			CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EDECCSSA, 0,
						0, 0, &rax, &zf), SGX_GP);
			CHECK_EQ(tcs_epc(&f, TCS_A)->cssa, 1);
			tcs_epc(&f, TCS_A)->cssa = 0;
		}
		sgx_eexit(&f.cpu, &lp);
		sgx_cpu_destroy(&f.cpu);
	}
}

/*
 * A notification needs a free frame as EENTER does: with CSSA == NSSA the
 * ERESUME is #GP and the TCS stays free. EDECCSSA #PFs when a page of
 * frame CSSA-1 is not a usable SSA page.
 */
TEST(aex_notification_frame_checks)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_aex_event ev;
	uint64_t rax;
	bool zf;

	REQUIRE(setup_part(&f, false, true, SGX_ATTR_AEXNOTIFY));
	/* TCS at 0xa000: frame 0 at 0xe000 is missing, frame 1 at 0xf000
	 * is there. */
	REQUIRE_EQ(add_tcs(&f, BASE + 0xa000, 0xe000, 2), 0);
	REQUIRE_EQ(add(&f, BASE + 0xf000, NULL,
		       SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W), 0);
	f.ctl->initialized = true;

	tcs_epc(&f, TCS_B)->flags |= SGX_TCS_AEXNOTIFY;
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
	gpr_epc(&f, SSA_B)->aexnotify = 1;
	memset(&ev, 0, sizeof(ev));
	sgx_aex(&f.cpu, &lp, &ev);
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), SGX_GP);
	CHECK_EQ(tcs_epc(&f, TCS_B)->cssa, 1);
	CHECK_EQ(tcs_epc(&f, TCS_B)->state, 0);

	tcs_epc(&f, BASE + 0xa000)->cssa = 1;
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + 0xa000, AEP, 1, 2, &lp), 0);
	CHECK_EQ(lp.cssa, 1);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EDECCSSA, 0, 0, 0, &rax, &zf),
		 SGX_PF);
	CHECK_EQ(tcs_epc(&f, BASE + 0xa000)->cssa, 1);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

TEST(user_leaves_in_enclave_mode)
{
	struct fixture f;
	struct sgx_lp lp;
	uint64_t rax;
	bool zf;

	REQUIRE(setup(&f, true));
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EENTER, 0, 0, 0, &rax, &zf),
		 SGX_GP);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_ERESUME, 0, 0, 0, &rax, &zf),
		 SGX_GP);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, 99, 0, 0, 0, &rax, &zf), SGX_GP);
	/* EACCEPT with a SECINFO outside ELRANGE: #GP (SGX2 leaves are
	 * covered in test_cpu_sgx2.c). */
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EACCEPT, 0, 0, 0, &rax, &zf),
		 SGX_GP);
	/* EREPORT with operands outside ELRANGE: #GP from the leaf. */
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EREPORT, 0x1000, 0x2000,
				0x3000, &rax, &zf), SGX_GP);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/*
 * EENTER and ERESUME count the thread for ETRACK before they look at the
 * EPCM entries of its TCS and SSA pages, as the hardware's entry is
 * atomic with respect to ETRACK. Counted after the checks, a reclaimer
 * could EBLOCK such a page and finish an ETRACK cycle in between, and EWB
 * would free a page the thread then uses in enclave mode (seen as
 * SIGSEGVs and corrupted pages in test_paging under load). Deterministic
 * here: the EPCM is moved to pages of its own that are made inaccessible,
 * and the first access the leaf makes records whether the thread is
 * counted at that moment.
 */
static struct {
	uint8_t *epcm;
	size_t len;
	struct sgx_encl_ctl *ctl;
	volatile int faults;
	volatile uint64_t counted;
} epcm_watch;

static void epcm_watch_fault(int sig, siginfo_t *si, void *uc)
{
	uint8_t *a = si->si_addr;

	(void)uc;
	if (a < epcm_watch.epcm || a >= epcm_watch.epcm + epcm_watch.len) {
		signal(sig, SIG_DFL);
		return;
	}
	if (!epcm_watch.faults++)
		epcm_watch.counted = atomic_load(&epcm_watch.ctl->threads_at[0]) +
				     atomic_load(&epcm_watch.ctl->threads_at[1]);
	mprotect(epcm_watch.epcm, epcm_watch.len, PROT_READ | PROT_WRITE);
}

/* Run one entry with the EPCM inaccessible; the count seen at its first
 * EPCM access (~0 when it made none). */
static uint64_t counted_at_first_epcm_read(struct fixture *f, bool resume,
					   struct sgx_lp *lp, int *ret)
{
	epcm_watch.faults = 0;
	epcm_watch.counted = ~0ULL;
	mprotect(epcm_watch.epcm, epcm_watch.len, PROT_NONE);
	*ret = resume ? sgx_eresume(&f->cpu, f->ctl, TCS_B, AEP, 1, 2, lp)
		      : sgx_eenter(&f->cpu, f->ctl, TCS_B, AEP, 1, 2, lp);
	mprotect(epcm_watch.epcm, epcm_watch.len, PROT_READ | PROT_WRITE);
	return epcm_watch.counted;
}

TEST(entry_counts_for_etrack_before_its_page_checks)
{
	struct sigaction sa, old;
	struct sgx_epcm_entry *saved;
	struct sgx_aex_event ev;
	struct fixture f;
	struct sgx_lp lp;
	int ret;

	REQUIRE(setup(&f, true));
	epcm_watch.len = (f.cpu.nr_pages * sizeof(*f.cpu.epcm) + 4095) & ~4095UL;
	epcm_watch.epcm = mmap(NULL, epcm_watch.len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(epcm_watch.epcm != MAP_FAILED);
	memcpy(epcm_watch.epcm, f.cpu.epcm, f.cpu.nr_pages * sizeof(*f.cpu.epcm));
	saved = f.cpu.epcm;
	f.cpu.epcm = (struct sgx_epcm_entry *)(void *)epcm_watch.epcm;
	epcm_watch.ctl = f.ctl;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = epcm_watch_fault;
	sa.sa_flags = SA_SIGINFO;
	REQUIRE_EQ(sigaction(SIGSEGV, &sa, &old), 0);

	CHECK_EQ(counted_at_first_epcm_read(&f, false, &lp, &ret), 1);
	CHECK_EQ(ret, 0);
	memset(&ev, 0, sizeof(ev));
	sgx_aex(&f.cpu, &lp, &ev);
	CHECK_EQ(atomic_load(&f.ctl->threads_at[0]) +
		 atomic_load(&f.ctl->threads_at[1]), 0);
	CHECK_EQ(counted_at_first_epcm_read(&f, true, &lp, &ret), 1);
	CHECK_EQ(ret, 0);
	sgx_eexit(&f.cpu, &lp);
	/* A refused entry (SSA page blocked) does not stay counted. */
	f.cpu.epcm[sgx_cpu_lookup(&f.cpu, SSA_B)].blocked = 1;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(atomic_load(&f.ctl->threads_at[0]) +
		 atomic_load(&f.ctl->threads_at[1]), 0);
	CHECK_EQ(tcs_epc(&f, TCS_B)->state, 0);

	sigaction(SIGSEGV, &old, NULL);
	memcpy(saved, epcm_watch.epcm, f.cpu.nr_pages * sizeof(*f.cpu.epcm));
	f.cpu.epcm = saved;
	munmap(epcm_watch.epcm, epcm_watch.len);
	sgx_cpu_destroy(&f.cpu);
}

/*
 * Every memory operand of every in-enclave leaf against the EPCM
 * permission the SDM asks of it (sgx-facts.md §4.20-4.24): inputs need R
 * (an X-only page refuses them), outputs need W (an R page refuses them),
 * a TCS is never an operand; each refusal is #PF and writes nothing. A
 * control call on a read-write page shows each leaf does write there.
 */
#define PAGE_R	(BASE + 0x8000)
#define PAGE_RW	(BASE + 0x9000)
#define PAGE_X	(BASE + 0xa000)

static bool setup_operands(struct fixture *f, struct sgx_lp *lp)
{
	if (!setup(f, false) ||
	    add(f, PAGE_R, NULL, SGX_SECINFO_REG | SGX_SECINFO_R) ||
	    add(f, PAGE_RW, NULL,
		SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_W) ||
	    add(f, PAGE_X, NULL, SGX_SECINFO_REG | SGX_SECINFO_X))
		return false;
	f->ctl->initialized = true;
	f->cpu.config.sgx2 = true;
	return sgx_eenter(&f->cpu, f->ctl, TCS_A, AEP, 1, 2, lp) == 0;
}

/* ENCLU @leaf; SGX_PF expected, and the page at @out unchanged. */
static void refused(struct fixture *f, struct sgx_lp *lp, uint64_t leaf,
		    uint64_t rbx, uint64_t rcx, uint64_t rdx, uint64_t out,
		    const char *what)
{
	uint8_t before[4096], after[4096];
	uint64_t rax;
	bool zf;
	int ret;

	sgx_encl_read(&f->cpu, f->ctl, out & ~0xfffULL, before, 4096);
	ret = sgx_enclu_user(&f->cpu, lp, leaf, rbx, rcx, rdx, &rax, &zf);
	if (ret != SGX_PF)
		test_fail(__FILE__, __LINE__, "leaf %llu, %s: %d, not #PF",
			  (unsigned long long)leaf, what, ret);
	sgx_encl_read(&f->cpu, f->ctl, out & ~0xfffULL, after, 4096);
	if (memcmp(before, after, 4096))
		test_fail(__FILE__, __LINE__, "leaf %llu, %s: the page at "
			  "0x%llx changed", (unsigned long long)leaf, what,
			  (unsigned long long)out);
}

TEST(every_leaf_operand_needs_its_epcm_permission)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_secinfo si;
	uint8_t junk[4096], key_before[16], key_after[16];
	uint16_t report_key = SGX_KEYNAME_REPORT;
	uint64_t rax;
	bool zf;

	REQUIRE(setup_operands(&f, &lp));
	/* Recognisable bytes on every page an output could land on. */
	memset(junk, 0xa5, sizeof(junk));
	sgx_encl_write(&f.cpu, f.ctl, PAGE_R, junk, 4096);
	sgx_encl_write(&f.cpu, f.ctl, PAGE_X, junk, 4096);
	/* KEYREQUEST for the REPORT key (no SVN checks), a SECINFO asking
	 * for R, in the read-write page and as input bytes elsewhere. */
	memset(junk, 0, sizeof(junk));
	sgx_encl_write(&f.cpu, f.ctl, PAGE_RW, junk, 4096);
	sgx_encl_write(&f.cpu, f.ctl, PAGE_RW + 2048, &report_key, 2);
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_REG | SGX_SECINFO_R;
	sgx_encl_write(&f.cpu, f.ctl, PAGE_RW + 3072, &si, sizeof(si));

	/* EREPORT: TARGETINFO (RBX) and REPORTDATA (RCX) read, REPORT
	 * (RDX) written. */
	refused(&f, &lp, SGX_EREPORT, PAGE_X, PAGE_RW + 512, PAGE_RW + 1024,
		PAGE_RW, "TARGETINFO on an X-only page");
	refused(&f, &lp, SGX_EREPORT, TCS_B, PAGE_RW + 512, PAGE_RW + 1024,
		PAGE_RW, "TARGETINFO on a TCS");
	refused(&f, &lp, SGX_EREPORT, PAGE_RW, PAGE_X, PAGE_RW + 1024,
		PAGE_RW, "REPORTDATA on an X-only page");
	refused(&f, &lp, SGX_EREPORT, PAGE_RW, PAGE_RW + 512, PAGE_R + 512,
		PAGE_R, "REPORT on an R page");
	refused(&f, &lp, SGX_EREPORT, PAGE_RW, PAGE_RW + 512, PAGE_X + 512,
		PAGE_X, "REPORT on an X-only page");
	refused(&f, &lp, SGX_EREPORT, PAGE_RW, PAGE_RW + 512, TCS_B,
		TCS_B, "REPORT on a TCS");
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EREPORT, PAGE_RW,
				PAGE_RW + 512, PAGE_RW + 1024, &rax, &zf), 0);
	sgx_encl_read(&f.cpu, f.ctl, PAGE_RW + 1024, key_after, 16);
	CHECK(memcmp(key_after, junk, 16) != 0);	/* CPUSVN written */

	/* EGETKEY: KEYREQUEST (RBX) read, the key (RCX) written. */
	refused(&f, &lp, SGX_EGETKEY, PAGE_X + 512, PAGE_RW + 3584, 0,
		PAGE_RW, "KEYREQUEST on an X-only page");
	refused(&f, &lp, SGX_EGETKEY, PAGE_RW + 2048, PAGE_R + 16, 0, PAGE_R,
		"key on an R page");
	refused(&f, &lp, SGX_EGETKEY, PAGE_RW + 2048, PAGE_X + 16, 0, PAGE_X,
		"key on an X-only page");
	refused(&f, &lp, SGX_EGETKEY, PAGE_RW + 2048, TCS_B + 16, 0, TCS_B,
		"key on a TCS");
	sgx_encl_read(&f.cpu, f.ctl, PAGE_RW + 3584, key_before, 16);
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EGETKEY, PAGE_RW + 2048,
				PAGE_RW + 3584, 0, &rax, &zf), 0);
	CHECK_EQ(rax, 0);
	sgx_encl_read(&f.cpu, f.ctl, PAGE_RW + 3584, key_after, 16);
	CHECK(memcmp(key_before, key_after, 16) != 0);

	/* SGX2: the SECINFO (RBX) of EACCEPT, EACCEPTCOPY and EMODPE, and
	 * EACCEPTCOPY's source (RDX), are read. */
	refused(&f, &lp, SGX_EACCEPT, PAGE_X + 64, PAGE_RW, 0, PAGE_RW,
		"EACCEPT's SECINFO on an X-only page");
	refused(&f, &lp, SGX_EMODPE, PAGE_X + 64, PAGE_RW, 0, PAGE_RW,
		"EMODPE's SECINFO on an X-only page");
	refused(&f, &lp, SGX_EACCEPTCOPY, PAGE_X + 64, PAGE_RW, PAGE_R,
		PAGE_RW, "EACCEPTCOPY's SECINFO on an X-only page");
	refused(&f, &lp, SGX_EACCEPTCOPY, PAGE_RW + 3072, PAGE_RW, PAGE_X,
		PAGE_RW, "EACCEPTCOPY's source on an X-only page");
	refused(&f, &lp, SGX_EACCEPTCOPY, PAGE_RW + 3072, PAGE_RW, TCS_B,
		PAGE_RW, "EACCEPTCOPY's source a TCS");
	/* Readable SECINFO and source: past the operand checks, to the
	 * SDM's answer for a destination that is not pending. */
	CHECK_EQ(sgx_enclu_user(&f.cpu, &lp, SGX_EACCEPTCOPY, PAGE_RW + 3072,
				PAGE_RW, PAGE_R, &rax, &zf), 0);
	CHECK_EQ(rax, SGX_PAGE_ATTRIBUTES_MISMATCH);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/* Every page of the SSA frame EENTER would use must be R and W (#PF). */
TEST(ssa_frame_must_be_readable_and_writable)
{
	struct fixture f;
	struct sgx_lp lp;

	REQUIRE(setup(&f, false));
	REQUIRE_EQ(add(&f, PAGE_R, NULL, SGX_SECINFO_REG | SGX_SECINFO_R), 0);
	REQUIRE_EQ(add(&f, PAGE_X, NULL, SGX_SECINFO_REG | SGX_SECINFO_X), 0);
	REQUIRE_EQ(add(&f, PAGE_RW, NULL, SGX_SECINFO_REG | SGX_SECINFO_R |
		       SGX_SECINFO_W), 0);
	REQUIRE_EQ(add_tcs(&f, BASE + 0xb000, PAGE_R - BASE, 1), 0);
	REQUIRE_EQ(add_tcs(&f, BASE + 0xc000, PAGE_X - BASE, 1), 0);
	REQUIRE_EQ(add_tcs(&f, BASE + 0xd000, PAGE_RW - BASE, 1), 0);
	f.ctl->initialized = true;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + 0xb000, AEP, 1, 2, &lp),
		 SGX_PF);
	CHECK_EQ(tcs_epc(&f, BASE + 0xb000)->state, 0);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + 0xc000, AEP, 1, 2, &lp),
		 SGX_PF);
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, BASE + 0xd000, AEP, 1, 2, &lp),
		   0);
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/*
 * The page tables are the OS's: a linear address of this enclave that
 * resolves to another enclave's page, at the same address of an enclave
 * with the same base, is #PF for an ENCLU operand (EPCM.ENCLAVESECS), and
 * that page is neither read nor written. ctl->pages stands for the page
 * tables here.
 */
TEST(operand_on_another_enclaves_page_is_pf)
{
	struct fixture f;
	struct sgx_lp lp;
	void *secs_a;
	uint64_t other = BASE + 0xb000;
	long slot;

	REQUIRE(setup_operands(&f, &lp));
	sgx_eexit(&f.cpu, &lp);
	secs_a = f.secs;
	f.secs = ecreate_at(&f, 62, 0);
	REQUIRE(f.secs != NULL);
	REQUIRE_EQ(add(&f, other, NULL, SGX_SECINFO_REG | SGX_SECINFO_R |
		       SGX_SECINFO_W), 0);
	f.secs = secs_a;
	slot = sgx_cpu_lookup(&f.cpu, other);
	REQUIRE(slot >= 0);
	REQUIRE_EQ(f.cpu.epcm[slot].enclave_address, other);
	f.ctl->pages[(other - BASE) >> SGX_PAGE_SHIFT] = (uint32_t)slot + 1;
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	refused(&f, &lp, SGX_EREPORT, PAGE_RW, PAGE_RW + 512, other + 512,
		other, "REPORT on another enclave's page");
	refused(&f, &lp, SGX_EREPORT, other, PAGE_RW + 512, PAGE_RW + 1024,
		PAGE_RW, "TARGETINFO on another enclave's page");
	refused(&f, &lp, SGX_EGETKEY, PAGE_RW + 2048, other + 16, 0, other,
		"key on another enclave's page");
	f.ctl->pages[(other - BASE) >> SGX_PAGE_SHIFT] = 0;
	sgx_eexit(&f.cpu, &lp);
	sgx_cpu_destroy(&f.cpu);
}

/* --- a power transition (power.c) ----------------------------------------- */

/*
 * After S3/S4 every EPCM entry is invalid: EENTER and ERESUME fault on the
 * TCS (#PF, which the engine reports with the SGX bit), a thread that was
 * caught inside (AEX before the loss) cannot resume, the leaves that build
 * an enclave fault on the lost SECS, and teardown by EREMOVE succeeds on
 * every page without doing anything.
 */
TEST(power_loss_invalidates_every_epcm_entry)
{
	struct fixture f;
	struct sgx_lp lp, caught;
	struct sgx_aex_event ev;
	long secs = 63;

	REQUIRE(setup(&f, true));
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
	sgx_eexit(&f.cpu, &lp);
	/* TCS_A's thread is inside at the loss: the interrupt's AEX. */
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &caught), 0);
	memset(&ev, 0, sizeof(ev));
	ev.gpr.rip = CODE + 0x10;
	sgx_aex(&f.cpu, &caught, &ev);

	CHECK_EQ(sgx_power_loss(&f.cpu), 1);
	for (size_t i = 0; i < f.cpu.nr_pages; i++)
		if (f.cpu.epcm[i].valid)
			test_fail(__FILE__, __LINE__, "EPCM entry %zu valid", i);
	CHECK(f.cpu.ctl[secs] == NULL);
	CHECK_EQ(sgx_cpu_lookup(&f.cpu, TCS_A), -1);
	CHECK(sgx_cpu_find_enclave(&f.cpu, TCS_A) == NULL);
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_PF);
	CHECK_EQ(atomic_load(&f.ctl->active_threads), 0);
	/* Building on the lost SECS: EADD's SECS operand is invalid. */
	CHECK_EQ(add(&f, BASE + 0xa000, NULL,
		     SGX_SECINFO_REG | SGX_SECINFO_R), SGX_PF);
	/* A second loss finds nothing more to lose. */
	CHECK_EQ(sgx_power_loss(&f.cpu), 0);

	/* The kernel's teardown: every page, the SECS last; the lost
	 * enclave's hidden state goes with its SECS page. */
	for (size_t i = 0; i < f.next; i++)
		CHECK_EQ(sgx_eremove(&f.cpu, page(&f, i)), 0);
	REQUIRE(f.cpu.lost != NULL);
	CHECK_EQ(sgx_eremove(&f.cpu, page(&f, (size_t)secs)), 0);
	CHECK(f.cpu.lost == NULL);
	sgx_cpu_destroy(&f.cpu);
}

/* The same EPC pages, the same ELRANGE: a new enclave after the loss is
 * built and entered as on a fresh part. */
TEST(power_loss_then_a_new_enclave_runs)
{
	struct fixture f;
	struct sgx_lp lp;
	long idx;

	REQUIRE(setup(&f, true));
	CHECK_EQ(sgx_power_loss(&f.cpu), 1);
	for (size_t i = 0; i < f.next; i++)
		REQUIRE_EQ(sgx_eremove(&f.cpu, page(&f, i)), 0);
	REQUIRE_EQ(sgx_eremove(&f.cpu, page(&f, 63)), 0);
	f.next = 0;
	f.secs = ecreate_at(&f, 63, 0);
	REQUIRE(f.secs != NULL);
	idx = sgx_epc_index(&f.cpu, f.secs);
	f.ctl = f.cpu.ctl[idx];
	REQUIRE(f.ctl != NULL);
	REQUIRE_EQ(add_tcs(&f, TCS_B, SSA_B - BASE, 1), 0);
	REQUIRE_EQ(add(&f, CODE, NULL, SGX_SECINFO_REG | SGX_SECINFO_R |
		       SGX_SECINFO_X), 0);
	REQUIRE_EQ(add(&f, SSA_B, NULL, SGX_SECINFO_REG | SGX_SECINFO_R |
		       SGX_SECINFO_W), 0);
	f.ctl->initialized = true;
	CHECK_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_B, AEP, 1, 2, &lp), 0);
	sgx_eexit(&f.cpu, &lp);
	/* Teardown with a lost enclave still unremoved frees both. */
	CHECK_EQ(sgx_power_loss(&f.cpu), 1);
	sgx_cpu_destroy(&f.cpu);
}

struct waiter {
	struct fixture *f;
	atomic_int started;
	int ret;
};

static void *enter_while_asleep(void *arg)
{
	struct waiter *w = arg;
	struct sgx_lp lp;

	atomic_store(&w->started, 1);
	w->ret = sgx_eenter(&w->f->cpu, w->f->ctl, TCS_B, AEP, 1, 2, &lp);
	return NULL;
}

/*
 * The suspend counts the logical processors in enclave mode (until none,
 * the caller kicks them); an EENTER issued while the platform sleeps
 * waits for the resume and then meets the EPCM the loss left: #PF, never
 * an entry into the enclave being lost.
 */
TEST(power_suspend_counts_and_holds_entries)
{
	struct fixture f;
	struct sgx_lp lp;
	struct sgx_aex_event ev;
	struct waiter w = { .f = &f };
	pthread_t t;

	REQUIRE(setup(&f, true));
	CHECK_EQ(sgx_power_lps_inside(&f.cpu), 0);
	REQUIRE_EQ(sgx_eenter(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), 0);
	CHECK_EQ(sgx_power_lps_inside(&f.cpu), 1);
	sgx_power_suspend(&f.cpu);
	/* The interrupt: its AEX leaves enclave mode. */
	memset(&ev, 0, sizeof(ev));
	ev.gpr.rip = CODE;
	sgx_aex(&f.cpu, &lp, &ev);
	CHECK_EQ(sgx_power_lps_inside(&f.cpu), 0);
	REQUIRE_EQ(pthread_create(&t, NULL, enter_while_asleep, &w), 0);
	while (!atomic_load(&w.started))
		sched_yield();
	CHECK_EQ(sgx_power_loss(&f.cpu), 1);
	sgx_power_resume(&f.cpu);
	pthread_join(t, NULL);
	CHECK_EQ(w.ret, SGX_PF);
	CHECK_EQ(sgx_eresume(&f.cpu, f.ctl, TCS_A, AEP, 1, 2, &lp), SGX_PF);
	sgx_cpu_destroy(&f.cpu);
}
