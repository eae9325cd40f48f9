/* SPDX-License-Identifier: MIT */
/*
 * EENTER, ERESUME, EEXIT, AEX and the ENCLU user-leaf dispatch
 * (sgx-facts.md §4.16-4.19, §1.10, §1.11).
 *
 * Everything here runs on the engine's entry path and in its signal
 * handlers, so it takes no locks and allocates nothing: the per-enclave
 * page table (ctl->pages) and the EPCM are read with relaxed atomics, and
 * the TCS busy state is a compare-and-swap on TCS.STATE in the EPC.
 */
#include <cpuid.h>
#include <string.h>

#include "cpu/enclu.h"
#include "cpu/internal.h"

struct sgx_xsave_layout sgx_xsave_layout;

void sgx_xsave_layout_init(void)
{
	unsigned a, b, c, d;

	/* Legacy region and header: fixed places in the standard format. */
	sgx_xsave_layout.offset[0] = 0;
	sgx_xsave_layout.size[0] = 160;
	sgx_xsave_layout.offset[1] = 160;
	sgx_xsave_layout.size[1] = 256;
	if (__get_cpuid_max(0, NULL) < 0xD)
		return;
	for (unsigned i = 2; i < 64; i++) {
		__cpuid_count(0xD, i, a, b, c, d);
		sgx_xsave_layout.size[i] = a;
		sgx_xsave_layout.offset[i] = b;
		if (c & 2)
			sgx_xsave_layout.align |= 1ULL << i;
	}
}

/* EPC index of the enclave page at @linaddr, or -1. */
static long page_index(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		       uint64_t linaddr)
{
	uint64_t off = linaddr - ctl->base;
	uint32_t v;

	if (linaddr < ctl->base || off >= ctl->size || !ctl->pages)
		return -1;
	v = __atomic_load_n(&ctl->pages[off >> SGX_PAGE_SHIFT],
			    __ATOMIC_ACQUIRE);
	if (!v || v - 1 >= cpu->nr_pages)
		return -1;
	return (long)v - 1;
}

/*
 * The EPCM checks the SDM applies to a page the processor itself touches
 * in enclave mode (TCS, SSA pages): valid, not blocked/pending/modified,
 * mapped at this address, owned by this enclave, of type @pt.
 */
static struct sgx_epcm_entry *page_ok(struct sgx_cpu *cpu,
				      struct sgx_encl_ctl *ctl,
				      uint64_t linaddr, unsigned pt,
				      long *index)
{
	struct sgx_epcm_entry *e;
	long i = page_index(cpu, ctl, linaddr);

	if (i < 0)
		return NULL;
	e = &cpu->epcm[i];
	if (!e->valid || e->blocked || e->pending || e->modified ||
	    e->page_type != pt || e->secs != ctl->secs_index ||
	    e->enclave_address != (linaddr & ~(SGX_PAGE_SIZE - 1)))
		return NULL;
	*index = i;
	return e;
}

void sgx_encl_read(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		   uint64_t linaddr, void *buf, size_t n)
{
	uint8_t *out = buf;

	while (n) {
		size_t in_page = SGX_PAGE_SIZE - (linaddr & (SGX_PAGE_SIZE - 1));
		size_t chunk = n < in_page ? n : in_page;
		long i = page_index(cpu, ctl, linaddr);

		if (i < 0)
			memset(out, 0, chunk);
		else
			memcpy(out, cpu->epc + ((size_t)i << SGX_PAGE_SHIFT) +
			       (linaddr & (SGX_PAGE_SIZE - 1)), chunk);
		out += chunk;
		linaddr += chunk;
		n -= chunk;
	}
}

void sgx_encl_write(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		    uint64_t linaddr, const void *buf, size_t n)
{
	const uint8_t *in = buf;

	while (n) {
		size_t in_page = SGX_PAGE_SIZE - (linaddr & (SGX_PAGE_SIZE - 1));
		size_t chunk = n < in_page ? n : in_page;
		long i = page_index(cpu, ctl, linaddr);

		if (i >= 0)
			memcpy(cpu->epc + ((size_t)i << SGX_PAGE_SHIFT) +
			       (linaddr & (SGX_PAGE_SIZE - 1)), in, chunk);
		in += chunk;
		linaddr += chunk;
		n -= chunk;
	}
}

bool sgx_xsave_header_ok(const uint8_t *xsave, uint64_t xfrm)
{
	uint64_t bv, comp;

	memcpy(&bv, xsave + 512, 8);
	memcpy(&comp, xsave + 520, 8);
	if (bv & ~xfrm || comp)
		return false;
	/* Bytes 528..575 of the header are reserved (the SDM checks 520..535;
	 * XRSTOR itself faults on any of them). */
	return sgx_all_zero(xsave + 528, 48);
}

/* Linear address of SSA frame @n of @tcs. */
static uint64_t ssa_frame(const struct sgx_encl_ctl *ctl,
			  const struct sgx_secs *secs,
			  const struct sgx_tcs *tcs, uint32_t n)
{
	return ctl->base + tcs->ossa +
	       (uint64_t)n * secs->ssa_frame_size * SGX_PAGE_SIZE;
}

/* Every page of SSA frame @n must be a readable, writable REG page. */
static int check_frame(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		       const struct sgx_secs *secs, const struct sgx_tcs *tcs,
		       uint32_t n)
{
	uint64_t lin = ssa_frame(ctl, secs, tcs, n);

	for (uint32_t p = 0; p < secs->ssa_frame_size; p++) {
		struct sgx_epcm_entry *e;
		long i;

		e = page_ok(cpu, ctl, lin + (uint64_t)p * SGX_PAGE_SIZE,
			    SGX_PT_REG, &i);
		if (!e || !e->r || !e->w)
			return SGX_PF;
	}
	return 0;
}

static struct sgx_gprsgx *frame_gpr(struct sgx_cpu *cpu,
				    struct sgx_encl_ctl *ctl,
				    const struct sgx_secs *secs,
				    const struct sgx_tcs *tcs, uint32_t n)
{
	uint64_t end = ssa_frame(ctl, secs, tcs, n) +
		       (uint64_t)secs->ssa_frame_size * SGX_PAGE_SIZE;
	long i = page_index(cpu, ctl, end - sizeof(struct sgx_gprsgx));

	/* check_frame() made sure the page is there. */
	return (struct sgx_gprsgx *)(cpu->epc + ((size_t)i << SGX_PAGE_SHIFT) +
				     SGX_PAGE_SIZE - sizeof(struct sgx_gprsgx));
}

/* TCS.FLAGS.AEXNOTIFY is a reserved bit on a part without AEX-Notify. */
static uint64_t tcs_flags_reserved(const struct sgx_cpu *cpu)
{
	return SGX_TCS_FLAGS_RESERVED |
	       (cpu->config.aexnotify ? 0 : SGX_TCS_AEXNOTIFY);
}

/*
 * The checks EENTER and ERESUME share, in the SDM's order, up to taking
 * the TCS. On success the TCS is ACTIVE (owned by the caller).
 */
static int take_tcs(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		    uint64_t tcs_lin, uint64_t aep, struct sgx_lp *lp)
{
	struct sgx_secs *secs;
	struct sgx_tcs *tcs;
	uint64_t expect = 0;
	long i;

	if (tcs_lin & (SGX_PAGE_SIZE - 1))
		return SGX_GP;
	if (!ctl || !page_ok(cpu, ctl, tcs_lin, SGX_PT_TCS, &i))
		return SGX_PF;
	if (!sgx_canonical(aep))
		return SGX_GP;
	tcs = (struct sgx_tcs *)(cpu->epc + ((size_t)i << SGX_PAGE_SHIFT));
	secs = sgx_epc_page(cpu, ctl->secs_index);
	if (!__atomic_load_n(&ctl->initialized, __ATOMIC_ACQUIRE) ||
	    !(secs->attributes.flags & SGX_ATTR_MODE64BIT))
		return SGX_GP;
	/* Busy: another logical processor is in this TCS. */
	if (!__atomic_compare_exchange_n((uint64_t *)(void *)tcs, &expect, 1,
					 false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return SGX_GP;
	if ((tcs->ossa | tcs->ofsbase | tcs->ogsbase) & (SGX_PAGE_SIZE - 1) ||
	    (tcs->flags & tcs_flags_reserved(cpu)) ||
	    !sgx_canonical(ctl->base + tcs->ofsbase) ||
	    !sgx_canonical(ctl->base + tcs->ogsbase)) {
		__atomic_store_n((uint64_t *)(void *)tcs, 0, __ATOMIC_RELEASE);
		return SGX_GP;
	}
	memset(lp, 0, sizeof(*lp));
	lp->ctl = ctl;
	lp->secs = secs;
	lp->tcs = tcs;
	lp->tcs_linaddr = tcs_lin;
	lp->aep = aep;
	return 0;
}

/*
 * The thread counts for ETRACK *before* the TCS and SSA pages are checked,
 * as hardware's EENTER is atomic with respect to ETRACK. Counted only
 * after the checks, a reclaimer could EBLOCK one of those pages and
 * complete an ETRACK cycle in between (the thread not counted yet), so
 * that EWB wrote back and freed a TCS or SSA page this thread then used
 * in enclave mode: the AEX and EEXIT wrote through lp->tcs and the SSA
 * frame into a freed, possibly reused EPC page (corrupted enclave data,
 * a SIGSEGV in the handler). Counted first, a page not yet blocked at
 * the check is blocked in this epoch or later, and EWB waits for this
 * thread to leave.
 */
static int enter_common(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			uint64_t tcs_lin, uint64_t aep, struct sgx_lp *lp)
{
	uint64_t epoch;
	int ret;

	/*
	 * Counted first, then the platform asleep? (sgx_power_suspend sets
	 * it, then waits for the counts): one of the two sees the other, so
	 * no logical processor is in enclave mode once the suspend finds
	 * none counted. Asleep: not counted, the entry waits for the resume.
	 */
	for (;;) {
		epoch = ctl ? sgx_track_enter(ctl) : 0;
		if (!atomic_load(&cpu->suspended))
			break;
		if (ctl)
			sgx_track_exit(ctl, epoch);
		sgx_power_wait_awake(cpu);
	}
	ret = take_tcs(cpu, ctl, tcs_lin, aep, lp);

	if (ret) {
		if (ctl)
			sgx_track_exit(ctl, epoch);
		return ret;
	}
	lp->entry_epoch = epoch;
	return 0;
}

static void enter_done(struct sgx_lp *lp)
{
	lp->tcs->aep = lp->aep;
	atomic_fetch_add(&lp->ctl->active_threads, 1);
}

static int enter_fail(struct sgx_lp *lp, int ret)
{
	/* TCS.STATE is the first field of the page-aligned TCS. */
	__atomic_store_n((uint64_t *)(void *)lp->tcs, 0, __ATOMIC_RELEASE);
	sgx_track_exit(lp->ctl, lp->entry_epoch);
	return ret;
}

/*
 * EENTER after the TCS is taken: frame CSSA must be free and usable, and
 * execution starts at OENTRY with the outside stack recorded there.
 * ERESUME does the same when it delivers an AEX notification.
 */
static int enter_at_oentry(struct sgx_cpu *cpu, struct sgx_lp *lp,
			   uint64_t rsp, uint64_t rbp)
{
	struct sgx_encl_ctl *ctl = lp->ctl;
	struct sgx_tcs *tcs = lp->tcs;
	struct sgx_gprsgx *gpr;
	int ret;

	if (tcs->cssa >= tcs->nssa)
		return enter_fail(lp, SGX_GP);
	ret = check_frame(cpu, ctl, lp->secs, tcs, tcs->cssa);
	if (ret)
		return enter_fail(lp, ret);
	if (!sgx_canonical(ctl->base + tcs->oentry))
		return enter_fail(lp, SGX_GP);

	gpr = frame_gpr(cpu, ctl, lp->secs, tcs, tcs->cssa);
	gpr->ursp = rsp;
	gpr->urbp = rbp;
	lp->rip = ctl->base + tcs->oentry;
	lp->cssa = tcs->cssa;
	lp->fsbase = ctl->base + tcs->ofsbase;
	lp->gsbase = ctl->base + tcs->ogsbase;
	lp->ursp = rsp;
	lp->urbp = rbp;
	enter_done(lp);
	return 0;
}

int sgx_eenter(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl, uint64_t tcs_lin,
	       uint64_t aep, uint64_t rsp, uint64_t rbp, struct sgx_lp *lp)
{
	int ret;

	ret = enter_common(cpu, ctl, tcs_lin, aep, lp);
	if (ret)
		return ret;
	return enter_at_oentry(cpu, lp, rsp, rbp);
}

/*
 * AEX-Notify: the frame ERESUME would restore asks for a notification
 * (its GPRSGX.AEXNOTIFY bit 0, which software sets and AEX leaves alone)
 * in an enclave and thread that opted in (ATTRIBUTES.AEXNOTIFY,
 * TCS.FLAGS.AEXNOTIFY). ERESUME then enters as EENTER does, CSSA left
 * as it is, so the enclave's handler runs in the next frame and may go
 * back to the interrupted one with EDECCSSA.
 */
static bool aex_notify(const struct sgx_cpu *cpu, const struct sgx_secs *secs,
		       const struct sgx_tcs *tcs, const struct sgx_gprsgx *gpr)
{
	return cpu->config.aexnotify &&
	       (secs->attributes.flags & SGX_ATTR_AEXNOTIFY) &&
	       (tcs->flags & SGX_TCS_AEXNOTIFY) && (gpr->aexnotify & 1);
}

int sgx_eresume(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl, uint64_t tcs_lin,
		uint64_t aep, uint64_t rsp, uint64_t rbp, struct sgx_lp *lp)
{
	struct sgx_gprsgx *gpr;
	struct sgx_tcs *tcs;
	uint8_t header[SGX_XSAVE_MIN_SIZE];
	uint64_t frame;
	int ret;

	ret = enter_common(cpu, ctl, tcs_lin, aep, lp);
	if (ret)
		return ret;
	tcs = lp->tcs;
	if (tcs->cssa == 0 || tcs->cssa > tcs->nssa)
		return enter_fail(lp, SGX_GP);
	ret = check_frame(cpu, ctl, lp->secs, tcs, tcs->cssa - 1);
	if (ret)
		return enter_fail(lp, ret);
	gpr = frame_gpr(cpu, ctl, lp->secs, tcs, tcs->cssa - 1);
	if (aex_notify(cpu, lp->secs, tcs, gpr)) {
		lp->notify = true;
		return enter_at_oentry(cpu, lp, rsp, rbp);
	}
	if (!sgx_canonical(gpr->rip) ||
	    !sgx_canonical(gpr->fsbase) || !sgx_canonical(gpr->gsbase))
		return enter_fail(lp, SGX_GP);
	frame = ssa_frame(ctl, lp->secs, tcs, tcs->cssa - 1);
	sgx_encl_read(cpu, ctl, frame, header, sizeof(header));
	if (!sgx_xsave_header_ok(header, lp->secs->attributes.xfrm))
		return enter_fail(lp, SGX_GP);

	tcs->cssa--;
	/*
	 * The SDM has only EENTER record the outside stack. Recording it
	 * here too keeps the next AEX on the stack of the ERESUME that
	 * actually runs (a vDSO call may resume from another frame than the
	 * one that entered), which is what every AEP handler assumes.
	 */
	gpr->ursp = rsp;
	gpr->urbp = rbp;
	lp->gpr = gpr;
	lp->xsave = frame;
	lp->rip = gpr->rip;
	lp->fsbase = gpr->fsbase;
	lp->gsbase = gpr->gsbase;
	lp->cssa = tcs->cssa;
	lp->ursp = rsp;
	lp->urbp = rbp;
	enter_done(lp);
	return 0;
}

static void leave(struct sgx_lp *lp)
{
	/*
	 * TCS.STATE is the first field of the page-aligned TCS. It is
	 * cleared before the thread stops counting for ETRACK: once it has
	 * left, EWB may write the TCS page back (and free it), and the copy
	 * must say "not busy".
	 */
	__atomic_store_n((uint64_t *)(void *)lp->tcs, 0, __ATOMIC_RELEASE);
	atomic_fetch_sub(&lp->ctl->active_threads, 1);
	sgx_track_exit(lp->ctl, lp->entry_epoch);
}

void sgx_eexit(struct sgx_cpu *cpu, struct sgx_lp *lp)
{
	(void)cpu;
	leave(lp);
}

/* EXITINFO for an exception (§1.11): which vectors are reported. */
static uint32_t exitinfo(const struct sgx_aex_event *ev, uint32_t misc)
{
	uint32_t type;

	if (!ev->exception)
		return 0;
	switch (ev->vector) {
	case X86_TRAP_DE: case X86_TRAP_DB: case X86_TRAP_BP:
	case X86_TRAP_BR: case X86_TRAP_UD: case X86_TRAP_MF:
	case X86_TRAP_AC: case X86_TRAP_XF:
		break;
	case X86_TRAP_GP: case X86_TRAP_PF:
		if (misc & SGX_MISC_EXINFO)
			break;
		return 0;
	default:
		return 0;
	}
	type = ev->vector == X86_TRAP_BP ? SGX_EXITINFO_TYPE_SW
					 : SGX_EXITINFO_TYPE_HW;
	return ev->vector | type << SGX_EXITINFO_TYPE_SHIFT | SGX_EXITINFO_VALID;
}

void sgx_aex(struct sgx_cpu *cpu, struct sgx_lp *lp,
	     const struct sgx_aex_event *ev)
{
	struct sgx_encl_ctl *ctl = lp->ctl;
	struct sgx_secs *secs = lp->secs;
	struct sgx_tcs *tcs = lp->tcs;
	uint64_t frame = ssa_frame(ctl, secs, tcs, tcs->cssa);
	uint64_t xfrm = secs->attributes.xfrm;
	struct sgx_gprsgx *gpr;
	uint8_t legacy[SGX_XSAVE_MIN_SIZE];
	uint64_t bv = 0;

	/* EENTER/ERESUME validated this frame; CSSA < NSSA holds. */
	gpr = frame_gpr(cpu, ctl, secs, tcs, tcs->cssa);
	lp->ursp = gpr->ursp;
	lp->urbp = gpr->urbp;
	memcpy(gpr, &ev->gpr, offsetof(struct sgx_gprsgx, ursp));
	gpr->exitinfo = exitinfo(ev, secs->miscselect);
	memset(gpr->reserved, 0, sizeof(gpr->reserved));
	/* AEX-Notify's byte is the enclave's: AEX leaves it as it was. On
	 * a part without AEX-Notify it is a reserved byte of GPRSGX. */
	if (!cpu->config.aexnotify)
		gpr->aexnotify = 0;
	gpr->fsbase = ev->gpr.fsbase;
	gpr->gsbase = ev->gpr.gsbase;
	if (secs->miscselect & SGX_MISC_EXINFO) {
		struct sgx_exinfo *x = (struct sgx_exinfo *)
			((uint8_t *)gpr - sizeof(struct sgx_exinfo));

		memset(x, 0, sizeof(*x));
		if (gpr->exitinfo && (ev->vector == X86_TRAP_PF ||
				      ev->vector == X86_TRAP_GP)) {
			x->maddr = ev->vector == X86_TRAP_PF ? ev->maddr : 0;
			x->errcd = ev->error_code;
		}
	}

	/* XSAVE of the XFRM features, standard format, at the frame start. */
	memset(legacy, 0, sizeof(legacy));
	if (ev->xsave && ev->xsave_size >= SGX_XSAVE_LEGACY_SIZE) {
		/* Bytes 464..511 are software-available, not saved state. */
		memcpy(legacy, ev->xsave, 464);
		if (ev->xsave_size >= SGX_XSAVE_MIN_SIZE)
			memcpy(&bv, ev->xsave + 512, 8);
		else
			bv = SGX_XFRM_LEGACY;
	} else {
		/* No image: the state is the INIT state. */
		legacy[0] = 0x7f;
		legacy[1] = 0x03;
		legacy[24] = 0x80;
		legacy[25] = 0x1f;
	}
	bv &= xfrm;
	memcpy(legacy + 512, &bv, 8);
	sgx_encl_write(cpu, ctl, frame, legacy, sizeof(legacy));
	for (unsigned i = 2; i < 64; i++) {
		uint32_t off = sgx_xsave_layout.offset[i];
		uint32_t size = sgx_xsave_layout.size[i];

		if (!(xfrm & (1ULL << i)) || !size)
			continue;
		if ((bv & (1ULL << i)) && off + size <= ev->xsave_size) {
			sgx_encl_write(cpu, ctl, frame + off, ev->xsave + off,
				       size);
		} else {
			static const uint8_t zero[256];

			for (uint32_t done = 0; done < size; done += sizeof(zero)) {
				uint32_t n = size - done < sizeof(zero) ?
					     size - done : sizeof(zero);

				sgx_encl_write(cpu, ctl, frame + off + done,
					       zero, n);
			}
		}
	}

	tcs->cssa++;
	leave(lp);
}

/*
 * EDECCSSA: make the previous SSA frame current without leaving the
 * enclave (the way back from an AEX-Notify handler). CSSA must be
 * non-zero (#GP) and every page of frame CSSA-1 a usable SSA page (#PF);
 * no register changes, the enclave restores that frame itself.
 */
static int sgx_edeccssa(struct sgx_cpu *cpu, struct sgx_lp *lp)
{
	struct sgx_tcs *tcs = lp->tcs;
	int ret;

	if (tcs->cssa == 0)
		return SGX_GP;
	ret = check_frame(cpu, lp->ctl, lp->secs, tcs, tcs->cssa - 1);
	if (ret)
		return ret;
	tcs->cssa--;
	lp->cssa = tcs->cssa;
	return 0;
}

int sgx_enclu_user(struct sgx_cpu *cpu, struct sgx_lp *lp, uint64_t rax,
		   uint64_t rbx, uint64_t rcx, uint64_t rdx,
		   uint64_t *rax_out, bool *zf_out)
{
	int ret;

	*zf_out = false;
	*rax_out = rax;
	switch (rax) {
	case SGX_EREPORT:
		ret = sgx_ereport(cpu, lp->ctl, rbx, rcx, rdx);
		if (SGX_IS_FAULT(ret))
			return ret;
		/* EREPORT has no error codes and leaves RAX alone. */
		return 0;
	case SGX_EGETKEY:
		ret = sgx_egetkey(cpu, lp->ctl, rbx, rcx);
		if (SGX_IS_FAULT(ret))
			return ret;
		*rax_out = (uint64_t)ret;
		*zf_out = ret != 0;
		return 0;
	case SGX_EACCEPT:
	case SGX_EACCEPTCOPY:
		/* Undefined leaves on an SGX1 part (#GP, as any bad EAX). */
		if (!cpu->config.sgx2)
			return SGX_GP;
		ret = rax == SGX_EACCEPT ?
		      sgx_eaccept(cpu, lp->ctl, rbx, rcx) :
		      sgx_eacceptcopy(cpu, lp->ctl, rbx, rcx, rdx);
		if (SGX_IS_FAULT(ret))
			return ret;
		*rax_out = (uint64_t)ret;
		*zf_out = ret != 0;
		return 0;
	case SGX_EMODPE:
		if (!cpu->config.sgx2)
			return SGX_GP;
		ret = sgx_emodpe(cpu, lp->ctl, rbx, rcx);
		if (SGX_IS_FAULT(ret))
			return ret;
		/* EMODPE has no error codes and leaves RAX alone. */
		return 0;
	case SGX_EDECCSSA:
		if (!cpu->config.aexnotify)
			return SGX_GP;
		return sgx_edeccssa(cpu, lp);
	case SGX_EENTER:
	case SGX_ERESUME:
		/* Already in enclave mode. */
		return SGX_GP;
	default:
		return SGX_GP;
	}
}
