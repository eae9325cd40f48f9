/* SPDX-License-Identifier: MIT */
/*
 * Faults on pages the driver keeps inaccessible: aging faults, the
 * fault-in of evicted pages (facts §8.1, §9.6), and EAUG of a missing page
 * on an SGX2 platform (§8.2, edmm.c).
 *
 * These run in the engine's signal handlers:
 *  - sgxemu__paging_fault_enclave() before any AEX, on a thread still in
 *    enclave mode: it only try-locks (the reclaimer may hold the lock while
 *    waiting for this very thread to leave enclave mode);
 *  - sgxemu__paging_fault() after the AEX (#PF written to the SSA, CSSA+1,
 *    the thread counted out for ETRACK), or for host code touching ELRANGE:
 *    it takes the paging lock, allocates an EPC page (which may reclaim)
 *    and runs ELDU. ELDU's AES-GCM goes through OpenSSL, whose EVP context
 *    comes from malloc: that is safe here because the interrupted code is
 *    enclave code (or host code at an ELRANGE access), which holds no host
 *    lock, the allocator's included; the handler runs on the thread's
 *    alternate stack with the host's FS base, so TLS and malloc work. The
 *    rest is allocation-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "driver/abort_page.h"
#include "driver/drv.h"
#include "driver/edmm.h"
#include "driver/paging.h"

#define PS_HIDDEN	(PS_AGED | PS_RECLAIM | PS_EVICTED | PS_LOST)

static bool abort_noted;

/*
 * Also true for an address where SGX2 would EAUG a page on fault (no page,
 * a mainline enclave, a window over it): to the engine that is one more
 * page the driver brings in on a fault, so the ENCLU-operand and host-code
 * paths reach sgxemu__paging_fault() for it.
 */
bool sgxemu__paging_hidden(struct sgxemu_enclave *e, size_t page)
{
	uint8_t st;

	if (!e->pg)
		return false;
	st = __atomic_load_n(&e->pg->state[page], __ATOMIC_ACQUIRE);
	return (st & PS_HIDDEN) ||
	       (!(st & PS_ADDED) && sgxemu__edmm_can_eaug(e, page, 0));
}

static long resident_index(struct sgxemu_enclave *e, size_t n)
{
	uint32_t v = __atomic_load_n(&e->ctl->pages[n], __ATOMIC_ACQUIRE);

	return v ? (long)v - 1 : -1;
}

/* The aged page was accessed: young again, protection back (lock held). */
static void unage(struct sgxemu_enclave *e, size_t n)
{
	e->pg->state[n] = (uint8_t)((e->pg->state[n] & ~PS_AGED) | PS_YOUNG);
	sgxemu__map_pages(e, n, 1, false);
	atomic_fetch_add(&sgxemu__st_aging_faults, 1);
}

/* ELDU of evicted page @n; @may_reclaim: the allocation may reclaim (and
 * so wait for threads to leave enclave mode). Paging lock held. */
static int load(struct sgxemu_enclave *e, size_t n, bool may_reclaim)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgxemu_paging *pg = e->pg;
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	long idx, hint = -1, nb;
	int r;

	if (pg->state[n] & PS_LOST)
		return -EFAULT;
	/* Next to a neighbour in the EPC, so the mappings can merge. */
	if (n > 0 && (nb = resident_index(e, n - 1)) >= 0)
		hint = nb + 1;
	else if (n + 1 < e->npages && (nb = resident_index(e, n + 1)) > 0)
		hint = nb - 1;
	/*
	 * The page first, the SECS second: allocating may reclaim, and a
	 * reclaim batch that empties this enclave writes its SECS back
	 * (sgxemu__evict_secs), so a SECS reloaded before the allocation
	 * could be gone again at ELDU (found by `make stress`: ELDU #PF on
	 * the SECS operand). Nothing allocates between these two and ELDU.
	 */
	idx = may_reclaim ? sgxemu__epc_alloc(hint, false) :
			    sgxemu__epc_try_alloc(hint, false);
	if (idx < 0)
		return -EFAULT;
	if (sgxemu__paging_secs_locked(e)) {
		sgxemu__epc_free(idx);
		return -EFAULT;
	}
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = e->base + n * SGX_PAGE_SIZE;
	pi.srcpge = (uint64_t)(uintptr_t)sgxemu__bounce;
	pi.secinfo = (uint64_t)(uintptr_t)&pg->pcmd[n];
	pi.secs = (uint64_t)(uintptr_t)sgx_epc_page(cpu, (size_t)e->secs_index);
	r = sgxemu__backing_get(pg, n);
	if (!r)
		r = sgx_eldu(cpu, &pi, sgx_epc_page(cpu, (size_t)idx),
			     sgxemu__va_slot(e, n));
	/* As the kernel, success or not: the PCMD entry is zeroed and the
	 * contents dropped from the backing file. */
	memset(&pg->pcmd[n], 0, sizeof(pg->pcmd[n]));
	sgxemu__backing_drop(pg, n);
	if (r) {
		sgxemu__epc_free(idx);
		pg->state[n] |= PS_LOST;
		atomic_fetch_add(&sgxemu__st_reload_failed, 1);
		sgxemu__write_str("sgxemu: ELDU refused the enclave page at ");
		sgxemu__write_hex(pi.linaddr);
		sgxemu__write_str(r == SGX_MAC_COMPARE_FAIL ?
				  " (SGX_MAC_COMPARE_FAIL: backing tampered or "
				  "replayed); its accesses fault\n" :
				  " (ELDU error); its accesses fault\n");
		return -EFAULT;
	}
	pg->state[n] = PS_ADDED;
	pg->evicted--;
	pg->resident++;
	pg->reloads++;
	atomic_fetch_add(&sgxemu__st_reloaded, 1);
	sgxemu__lru_add(e, n);
	sgxemu__map_pages(e, n, 1, true);
	return 0;
}

int sgxemu__paging_load(struct sgxemu_enclave *e, size_t n)
{
	return load(e, n, true);
}

/*
 * The same from a handler still in enclave mode, where nothing may wait
 * for this thread to leave it: only with a free page, taken without
 * reclaim (the kernel's fault path does not reclaim either, §8.1 step
 * 3.4.2), and the SECS resident (whose reload could need an allocation
 * of its own).
 */
static int load_now(struct sgxemu_enclave *e, size_t n)
{
	if (e->pg->secs_evicted || sgxemu__epc_nr_free() == 0)
		return -EAGAIN;
	return load(e, n, false);
}

int sgxemu__paging_secs_locked(struct sgxemu_enclave *e)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgxemu_paging *pg = e->pg;
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	long idx;
	int r;

	if (!pg || !pg->secs_evicted)
		return 0;
	/* Its old place if free, so the EPC layout stays as it was. */
	idx = sgxemu__epc_alloc(e->secs_index, true);
	if (idx < 0)
		return -ENOMEM;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uint64_t)(uintptr_t)sgxemu__bounce;
	pi.secinfo = (uint64_t)(uintptr_t)&pg->pcmd[e->npages];
	r = sgxemu__backing_get(pg, e->npages);
	if (!r)
		r = sgx_eldu(cpu, &pi, sgx_epc_page(cpu, (size_t)idx),
			     sgxemu__va_slot(e, e->npages));
	memset(&pg->pcmd[e->npages], 0, sizeof(pg->pcmd[0]));
	if (r) {
		sgxemu__epc_free(idx);
		atomic_fetch_add(&sgxemu__st_reload_failed, 1);
		sgxemu__write_str("sgxemu: ELDU refused an enclave's SECS\n");
		return -EFAULT;
	}
	e->secs_index = idx;
	pg->secs_evicted = false;
	return 0;
}

int sgxemu__paging_secs(struct sgxemu_enclave *e)
{
	int r;

	if (!e->pg)
		return 0;
	sgxemu__paging_lock();
	r = sgxemu__paging_secs_locked(e);
	sgxemu__paging_unlock();
	return r;
}

int sgxemu__paging_fault_enclave(struct sgxemu_enclave *e, uint64_t addr,
				 uint32_t kerr)
{
	size_t n;
	uint8_t st;
	int ret = 2;

	if (!e || !e->pg || addr < e->base || addr - e->base >= e->size)
		return 0;
	n = (addr - e->base) >> SGX_PAGE_SHIFT;
	st = __atomic_load_n(&e->pg->state[n], __ATOMIC_ACQUIRE);
	/* A page whose faults the driver refuses (§8.1 step 3.2): SIGBUS
	 * after the AEX, from sgxemu__paging_fault(). */
	if ((st & PS_ADDED) && (e->map_prot[n] & SGXEMU_MAP_REFUSED))
		return sgxemu__window_allows(e->map_prot[n], kerr) ? 2 : 0;
	/*
	 * No page here, and SGX2 adds one on fault (facts §8.2). When that
	 * needs neither reclaim nor a new VA page it is done at once, like
	 * the aging fault, and the access runs again with no exit (saving an
	 * AEX and the AEP's ERESUME); otherwise AEX, then
	 * sgxemu__paging_fault() EAUGs it and the ERESUME retries.
	 */
	if (!(st & PS_ADDED) && sgxemu__edmm_can_eaug(e, n, kerr)) {
		if (sgxemu__paging_trylock()) {
			if (sgxemu__edmm_eaug_now(e, n) == 0)
				ret = 1;
			sgxemu__paging_unlock();
		}
		return ret;
	}
	/*
	 * No page and none to add, in a mainline window that allows the
	 * access: the kernel's fault handler gives SIGBUS (§8.1 step 3.1;
	 * SGX1, or EAUG refused), after the AEX every enclave-mode #PF is.
	 * The seed API's windows over no page are reservations: #PF.
	 */
	if (!(st & PS_ADDED) && sgxemu__edmm_mainline(e) &&
	    sgxemu__window_allows(e->map_prot[n], kerr))
		return 2;
	if (!(st & PS_HIDDEN)) {
		/*
		 * Another thread loaded (or un-aged) the page between this
		 * fault and now: if the page's protection now allows the
		 * access, the fault is stale and the access runs again.
		 */
		int prot = sgxemu__epcm_prot(e, n) & e->map_prot[n];

		if ((st & PS_ADDED) && resident_index(e, n) >= 0 &&
		    (kerr & X86_PF_INSTR ? prot & PROT_EXEC :
		     kerr & X86_PF_WRITE ? prot & PROT_WRITE : prot != 0))
			return 3;
		return 0;
	}
	if ((st & PS_HIDDEN) == PS_AGED && sgxemu__paging_trylock()) {
		if ((e->pg->state[n] & PS_HIDDEN) == PS_AGED) {
			unage(e, n);
			ret = 1;
		}
		sgxemu__paging_unlock();
		return ret;
	}
	/*
	 * An evicted page, with EPC to spare: ELDU now, and the access runs
	 * again with no exit, as for EAUG above. A reload that fails here
	 * (MAC mismatch: the page is lost) is reported by the slow path,
	 * which finds it lost.
	 */
	if ((st & PS_HIDDEN) == PS_EVICTED && !(st & PS_LOST) &&
	    sgxemu__paging_trylock()) {
		st = e->pg->state[n];
		if ((st & PS_HIDDEN) == PS_EVICTED && !(st & PS_LOST) &&
		    load_now(e, n) == 0)
			ret = 1;
		sgxemu__paging_unlock();
	}
	return ret;
}

int sgxemu__paging_fault(struct sgxemu_enclave *e, uint64_t addr)
{
	size_t n;
	uint8_t st;
	int ret = 0;

	if (!e || !e->pg || addr < e->base || addr - e->base >= e->size)
		return -EFAULT;
	n = (addr - e->base) >> SGX_PAGE_SHIFT;
	sgxemu__paging_lock();
	st = e->pg->state[n];
	if ((st & PS_LOST) || (e->map_prot[n] & SGXEMU_MAP_REFUSED))
		ret = -EFAULT;
	else if (st & PS_EVICTED)
		ret = sgxemu__paging_load(e, n);
	else if (st & PS_AGED)
		unage(e, n);
	else if (!(st & PS_ADDED) && sgxemu__edmm_can_eaug(e, n, 0))
		ret = sgxemu__edmm_eaug(e, n);
	else if (!(st & PS_ADDED))
		ret = -EFAULT;		/* no page: SIGBUS (§8.1 step 3.1) */
	/* Otherwise it was loaded meanwhile: the access is retried. */
	sgxemu__paging_unlock();
	return ret;
}

static bool load_if_evicted(struct sgxemu_enclave *e, size_t n)
{
	uint8_t st = e->pg->state[n];

	if (!(st & PS_EVICTED) || (st & PS_LOST))
		return false;
	return sgxemu__paging_load(e, n) == 0;
}

bool sgxemu__paging_prefault_entry(struct sgxemu_enclave *e, uint64_t tcs)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	const struct sgx_secs *secs;
	const struct sgx_tcs *t;
	bool loaded = false;
	uint64_t first, count;
	size_t n;
	long idx;

	if (!e || !e->pg || tcs < e->base || tcs - e->base >= e->size)
		return false;
	n = (tcs - e->base) >> SGX_PAGE_SHIFT;
	sgxemu__paging_lock();
	loaded = load_if_evicted(e, n);
	idx = resident_index(e, n);
	if (idx >= 0) {
		/* Every SSA frame of the TCS: EENTER uses frame CSSA,
		 * ERESUME frame CSSA-1, AEX the next. */
		t = sgx_epc_page(cpu, (size_t)idx);
		secs = sgx_epc_page(cpu, (size_t)e->secs_index);
		first = t->ossa >> SGX_PAGE_SHIFT;
		count = (uint64_t)t->nssa * secs->ssa_frame_size;
		for (uint64_t p = first; p < first + count && p < e->npages; p++)
			loaded |= load_if_evicted(e, (size_t)p);
	}
	sgxemu__paging_unlock();
	return loaded;
}

/*
 * @n bytes at @addr are on an abort page of @e for host code: an EPC page
 * of it, resident, in a window that allows the access, that the EPCM
 * keeps from it (the kernel would have mapped the page and hardware
 * would give abort-page semantics).
 */
static bool is_abort(void *ctx, uint64_t addr, size_t n, bool write)
{
	struct sgxemu_enclave *e = ctx;
	uint32_t kerr = write ? X86_PF_WRITE : 0;
	size_t i;
	int prot;

	(void)n;
	if (addr < e->base || addr - e->base >= e->size)
		return false;
	i = (addr - e->base) >> SGX_PAGE_SHIFT;
	prot = e->map_prot[i];
	return !(prot & SGXEMU_MAP_REFUSED) && sgxemu__window_allows(prot, kerr) &&
	       (__atomic_load_n(&e->pg->state[i], __ATOMIC_ACQUIRE) &
		(PS_ADDED | PS_HIDDEN)) == PS_ADDED &&
	       resident_index(e, i) >= 0 &&
	       !sgxemu__window_allows(sgxemu__epcm_prot(e, i) & prot, kerr);
}

/* Loads and stores of ordinary memory through the driver's fault-safe
 * copies (no fault in this handler, also where seccomp refuses
 * process_vm_readv/writev); errno stays the interrupted code's. */
static bool mem_read(void *ctx, uint64_t addr, uint8_t *buf, size_t n)
{
	int saved = errno, r;

	(void)ctx;
	r = sgx_copy_from_user(buf, (unsigned long)addr, n);
	errno = saved;
	return r == 0;
}

static bool mem_write(void *ctx, uint64_t addr, const void *buf, size_t n)
{
	int saved = errno, r;

	(void)ctx;
	r = sgx_copy_to_user((unsigned long)addr, buf, n);
	errno = saved;
	return r == 0;
}

/* Carry out the host instruction at RIP on an abort page (abort_page.c);
 * its bytes are read fault-safely, up to where they stop being readable. */
static bool abort_access(struct sgxemu_enclave *e, ucontext_t *uc)
{
	const struct sgxemu_abort_mem mem = {
		.read = mem_read, .write = mem_write, .is_abort = is_abort,
		.ctx = e,
	};
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	size_t first = SGX_PAGE_SIZE - (rip & (SGX_PAGE_SIZE - 1)), len = 15;
	uint8_t insn[15];

	if (first < len) {
		if (!sgxemu__host_read(NULL, rip, insn, first))
			return false;
		if (!sgxemu__host_read(NULL, rip + first, insn + first,
				       len - first))
			len = first;
	} else if (!sgxemu__host_read(NULL, rip, insn, len)) {
		return false;
	}
	return sgxemu__abort_page_emulate(uc, insn, len, &mem);
}

int sgxemu__paging_host_access(struct sgxemu_enclave *e, uint64_t addr,
			       ucontext_t *uc)
{
	uint32_t kerr = (uint32_t)uc->uc_mcontext.gregs[REG_ERR];
	size_t n;
	uint8_t st;
	int prot, r;

	if (!e || !e->pg || addr < e->base || addr - e->base >= e->size)
		return 0;
	n = (addr - e->base) >> SGX_PAGE_SHIFT;
	prot = e->map_prot[n];
	/* The kernel's VMA check comes before its fault handler. */
	if (!sgxemu__window_allows(prot, kerr))
		return 0;
	st = __atomic_load_n(&e->pg->state[n], __ATOMIC_ACQUIRE);
	/* The window's bits exceed the page's (§8.1 step 3.2). */
	if ((st & PS_ADDED) && (prot & SGXEMU_MAP_REFUSED))
		return -1;
	if (st & PS_HIDDEN)
		return sgxemu__paging_fault(e, addr) ? -1 : 1;
	if (!(st & PS_ADDED)) {
		/* The seed API's windows over no page are reservations. */
		if (!sgxemu__edmm_mainline(e))
			return 0;
		/* No page: EAUG on SGX2 (§8.2), else the kernel's SIGBUS
		 * (§8.1 step 3.1, §8.2 step 1 before INIT). */
		if (!sgxemu__edmm_can_eaug(e, n, kerr))
			return -1;
		sgxemu__paging_lock();
		r = sgxemu__edmm_eaug(e, n);
		sgxemu__paging_unlock();
		if (r)
			return -1;
	}
	/* Loaded or accepted meanwhile: the access runs again, on the
	 * mapping made anew from the page's state (so it cannot loop). */
	if (sgxemu__window_allows(sgxemu__epcm_prot(e, n) & prot, kerr)) {
		sgxemu__paging_lock();
		sgxemu__map_pages(e, n, 1, false);
		sgxemu__paging_unlock();
		return 1;
	}
	/* An EPC page the kernel would have mapped: abort-page semantics
	 * (fetches from it are left to fault). */
	if (!(kerr & X86_PF_INSTR) && abort_access(e, uc))
		return 1;
	if (!__atomic_exchange_n(&abort_noted, true, __ATOMIC_RELAXED))
		sgxemu__write_str("sgxemu: host code touched an EPC page the "
				  "EPCM keeps inaccessible (pending, modified, "
				  "TCS or restricted) with an instruction not "
				  "emulated as an abort-page access: SIGSEGV "
				  "(hardware: reads all ones, drops writes)\n");
	return 0;
}

const struct sgxemu_encl_ops sgxemu__paging_ops = {
	.fault_enclave = sgxemu__paging_fault_enclave,
	.fault = sgxemu__paging_fault,
	.prefault_entry = sgxemu__paging_prefault_entry,
	.hidden = sgxemu__paging_hidden,
	.host_access = sgxemu__paging_host_access,
};
