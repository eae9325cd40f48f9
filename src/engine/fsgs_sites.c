/* SPDX-License-Identifier: MIT */
/*
 * WRFSBASE and WRGSBASE in enclave code, where the host kernel runs them
 * without tracking them ("untracked" FSGSBASE, fsgsbase.c): the kernel
 * puts back, at every context switch, the base arch_prctl last set. The
 * engine hands the kernel a base the enclave wrote when it next sees it,
 * at an exit or AEX; a preemption before that loses it. Gramine's LibOS
 * writes a new thread's TLS base as the thread starts and its exitless
 * threads then wait on their RPC threads without an exit: on a loaded
 * host such a thread nearly always lost its base before its first tick,
 * and faulted on %fs:0 (test_gramine exitless_rpc_threads: 4 of 8 runs
 * with two busy loops beside it).
 *
 * So every such write becomes a trap, as on a host without FSGSBASE
 * (sgxemu__fsgsbase_emulate): as each page with EPCM.X is added, after
 * its EEXTENDs (the measurement is of the bytes as the enclave's author
 * gave them), its WRFSBASE/WRGSBASE instructions get LOCK (F0) in place of
 * their F3 prefix, one byte, which makes them #UD. The #UD of a recorded
 * site is the write done on the saved state, whose base the engine's
 * signal stub then gives the kernel too. An instruction is taken only
 * where a linear decode of its page (from the previous page's start when
 * that is there) lands on it: bytes of the pattern inside another
 * instruction or in data stay as they are.
 *
 * One trap per write would double the cost of Gramine's OCALL (it writes
 * its TLS base again after each), whose base the kernel already has (the
 * hint, fsgsbase.c). A site whose last SGXEMU_FSGS_QUIET writes all gave
 * the base the kernel already had gets its F3 back and runs natively;
 * sites that write new bases (a thread's first) keep trapping. A #UD at
 * a restored site (a stale fetch on another CPU) is still the write.
 *
 * Not covered: code that enclaves write into their own pages (EDMM's
 * EACCEPTCOPY, or pages made executable later), an instruction that
 * crosses into a page not added yet, and enclave code that reads its own
 * bytes there (it sees F0). SGXEMU_FSGS_SITES=1 turns this on on any host
 * (for tests), =0 off.
 */
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "engine/engine.h"

#define SGXEMU_FSGS_QUIET	16

static ZydisDecoder decoder;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;

static void decoder_init(void)
{
	ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
}

bool sgxemu__fsgs_sites_on(void)
{
	const char *v = getenv("SGXEMU_FSGS_SITES");

	if (v && *v)
		return strcmp(v, "0") != 0;
	return sgxemu__fsgsbase_unmanaged;
}

/*
 * Whether a linear decode of @buf from its start has an instruction
 * boundary at @at, with a WRFSBASE or WRGSBASE there. Undecodable bytes
 * are stepped over one at a time, as a disassembler resynchronises.
 */
static bool boundary_at(const uint8_t *buf, size_t len, size_t at)
{
	ZydisDecodedInstruction insn;
	size_t off = 0;

	while (off < at) {
		if (ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL,
				buf + off, len - off, &insn)))
			off += insn.length;
		else
			off++;
	}
	if (off != at ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder, NULL,
			buf + at, len - at, &insn)))
		return false;
	return insn.mnemonic == ZYDIS_MNEMONIC_WRFSBASE ||
	       insn.mnemonic == ZYDIS_MNEMONIC_WRGSBASE;
}

static int site_cmp(const void *a, const void *b)
{
	const struct sgxemu_fsgs_site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int site_add(struct sgxemu_enclave *e, uint64_t addr,
		    const struct sgxemu_fsgsbase_insn *insn)
{
	struct sgxemu_fsgs_site *s;

	if (e->nr_fsgs == e->cap_fsgs) {
		size_t cap = e->cap_fsgs ? 2 * e->cap_fsgs : 16;

		s = realloc(e->fsgs, cap * sizeof(*s));
		if (!s)
			return -1;
		e->fsgs = s;
		e->cap_fsgs = cap;
	}
	s = &e->fsgs[e->nr_fsgs++];
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->insn = *insn;
	return 0;
}

int sgxemu__fsgs_scan_page(struct sgxemu_enclave *e, uint64_t linaddr,
			   uint8_t *page, const uint8_t *prev)
{
	uint8_t buf[2 * SGX_PAGE_SIZE];
	size_t lead = prev ? SGX_PAGE_SIZE : 0, len = lead + SGX_PAGE_SIZE;
	int n = 0;

	if (!sgxemu__fsgs_sites_on())
		return 0;
	pthread_once(&decoder_once, decoder_init);
	if (prev)
		memcpy(buf, prev, SGX_PAGE_SIZE);
	memcpy(buf + lead, page, SGX_PAGE_SIZE);
	for (uint8_t *p = page, *end = page + SGX_PAGE_SIZE;
	     p < end && (p = memchr(p, 0xf3, (size_t)(end - p))) != NULL; p++) {
		struct sgxemu_fsgsbase_insn insn;
		size_t off = (size_t)(p - page);

		if (sgxemu__fsgsbase_decode(p, (size_t)(end - p), &insn) ||
		    insn.op < 2 || !boundary_at(buf, len, lead + off))
			continue;
		if (site_add(e, linaddr + off, &insn))
			return -1;
		*p = 0xf0;	/* LOCK: #UD */
		n++;
	}
	return n;
}

void sgxemu__fsgs_seal(struct sgxemu_enclave *e)
{
	if (e->nr_fsgs > 1)
		qsort(e->fsgs, e->nr_fsgs, sizeof(*e->fsgs), site_cmp);
}

void sgxemu__fsgs_free(struct sgxemu_enclave *e)
{
	free(e->fsgs);
	e->fsgs = NULL;
	e->nr_fsgs = e->cap_fsgs = 0;
}

static struct sgxemu_fsgs_site *site_find(struct sgxemu_enclave *e,
					  uint64_t addr)
{
	size_t lo = 0, hi = e->nr_fsgs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->fsgs[mid].addr == addr)
			return &e->fsgs[mid];
		if (e->fsgs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * In the #UD handler, enclave mode (async-signal-safe: no allocation,
 * no lock). The new base goes to the saved state, which the stub loads
 * and hands the kernel with arch_prctl on the way back (entry.S), and a
 * new FS base becomes the thread's hint for its later entries.
 */
int sgxemu__fsgs_emulate(struct sgxemu_tcb *tcb, struct sgxemu_enclave *e,
			 ucontext_t *uc, struct sgxemu_sigsave *save)
{
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	struct sgxemu_fsgs_site *s = site_find(e, rip);
	bool same;
	int r;

	if (!s)
		return -1;
	r = sgxemu__fsgsbase_apply(uc, &s->insn, &save->fs, &save->gs);
	if (r)
		return r;
	if (s->insn.op == 2) {
		same = tcb->fs_hint && save->fs == tcb->fs_hint;
		tcb->enc_fs = save->fs;
		tcb->fs_hint = save->fs;
	} else {
		same = save->gs == tcb->kern_gs;
		tcb->enc_gs = save->gs;
	}
	SGXEMU_COUNT(tcb, SGXEMU_C_FSGS_SITE);
	if (!same) {
		atomic_store(&s->same, 0);
	} else if (atomic_fetch_add(&s->same, 1) + 1 == SGXEMU_FSGS_QUIET &&
		   !atomic_exchange(&s->native, 1)) {
		uint8_t f3 = 0xf3;

		sgx_encl_write(sgxemu__cpu(), e->ctl, s->addr, &f3, 1);
	}
	return 0;
}
