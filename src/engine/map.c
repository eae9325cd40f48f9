/* SPDX-License-Identifier: MIT */
/*
 * ELRANGE mappings and guard mode.
 *
 * An enclave page is mapped at its linear address from the EPC memfd
 * (offset = EPC index * 4096) with protection EPCM AND the mapping's
 * permissions; pages that are absent, or not accessible as data (TCS,
 * pending, ...), are PROT_NONE. Runs of pages with consecutive EPC indices
 * and the same protection are mapped with one mmap, and mprotect works on
 * runs too, so an enclave costs a handful of VMAs, not one per page
 * (vm.max_map_count).
 *
 * A page EAUG adds is PENDING, so PROT_NONE: where the engine's PROT_NONE
 * placeholder is there already it stays until EACCEPT maps the EPC page
 * (one system call a page less). host_map says which pages have their EPC
 * page mapped; an mprotect that would open a page which has not is a
 * remap instead, so an anonymous placeholder is never made accessible.
 *
 * Guard mode: while no thread of the process is in enclave mode, every
 * ELRANGE is PROT_NONE, so host code that touches enclave memory faults
 * (and signal.c reports it). The first thread to enter opens the enclaves,
 * the last to leave closes them. The lock is a spinlock because the exit
 * side runs in signal handlers; no thread holds it in enclave mode.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/engine.h"

static atomic_flag guard_lock = ATOMIC_FLAG_INIT;
static atomic_int guard_inside;		/* threads in enclave mode */
static bool guard_shut;			/* ELRANGEs are PROT_NONE now */

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&guard_lock,
						 memory_order_acquire))
		__builtin_ia32_pause();
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&guard_lock, memory_order_release);
}

int sgxemu__epcm_prot(struct sgxemu_enclave *e, size_t page)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgx_epcm_entry *m;
	uint32_t v = __atomic_load_n(&e->ctl->pages[page], __ATOMIC_ACQUIRE);

	if (!v)
		return PROT_NONE;
	m = &cpu->epcm[v - 1];
	if (!m->valid || m->page_type != SGX_PT_REG || m->pending ||
	    m->modified || m->blocked)
		return PROT_NONE;
	return (m->r ? PROT_READ : 0) | (m->w ? PROT_WRITE : 0) |
	       (m->x ? PROT_EXEC : 0);
}

static int effective(struct sgxemu_enclave *e, size_t page)
{
	int p;

	if (guard_shut || sgxemu__encl_hidden(e, page) ||
	    (e->map_prot[page] & SGXEMU_MAP_REFUSED))
		return PROT_NONE;
	p = sgxemu__epcm_prot(e, page) & e->map_prot[page];
	/* x86 pages cannot be write-only. */
	if (p & PROT_WRITE)
		p |= PROT_READ;
	return p;
}

static long epc_of(struct sgxemu_enclave *e, size_t page)
{
	uint32_t v = __atomic_load_n(&e->ctl->pages[page], __ATOMIC_ACQUIRE);

	return v ? (long)v - 1 : -1;
}

static int map_run(struct sgxemu_enclave *e, size_t first, size_t n,
		   long idx, int prot)
{
	void *addr = (void *)(uintptr_t)(e->base + (first << SGX_PAGE_SHIFT));
	size_t len = n << SGX_PAGE_SHIFT;
	void *p;

	if (idx < 0)
		p = mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_NORESERVE | MAP_FIXED, -1, 0);
	else
		p = mmap(addr, len, prot, MAP_SHARED | MAP_FIXED |
			 /* One page made accessible on a fault (EACCEPT,
			  * reload) is about to be touched: its page-table
			  * entry now, in this call, costs less than the
			  * fault it saves (a minor fault is worth a trap
			  * under shadow paging). */
			 (n == 1 && prot != PROT_NONE ? MAP_POPULATE : 0),
			 sgxemu__cpu()->epc_fd, (off_t)idx << SGX_PAGE_SHIFT);
	if (p == MAP_FAILED)
		return -errno;
	if (e->host_map)
		memset(e->host_map + first, idx < 0 ? HOST_NONE : HOST_EPC, n);
	return 0;
}

/*
 * Said once: an mmap or mprotect of ELRANGE refused for want of VMAs.
 * Pages whose EPC indices are not consecutive need a mapping each, and
 * paging scatters them: a 4 GiB enclave over a 1 GiB EPC reaches
 * vm.max_map_count (65530 by default) within a minute (issue 46: Gramine's
 * mmap_map_noreserve fork). A page left unmapped then faults for good,
 * which the engine can only report as the enclave's own #PF. The kernel's
 * driver has one VMA per enclave mapping and none of this.
 */
static void map_count_full(void)
{
	static atomic_bool said;

	if (atomic_exchange(&said, true))
		return;
	/* write(2): this may run in a signal handler. */
	sgxemu__write_str("sgxemu: ELRANGE mapping refused (ENOMEM): the "
			  "process has reached vm.max_map_count; pages of "
			  "its enclaves will fault as if absent (raise "
			  "vm.max_map_count, or a larger EPC: "
			  "SGXEMU_EPC_SIZE)\n");
}

bool sgxemu__map_is_placeholder(struct sgxemu_enclave *e, size_t page)
{
	return e->host_map && page < e->npages &&
	       __atomic_load_n(&e->host_map[page], __ATOMIC_RELAXED) ==
	       HOST_NONE;
}

/* A page whose EPC page is not what is mapped there, yet would open. */
static bool needs_remap(struct sgxemu_enclave *e, size_t i)
{
	return e->host_map && e->host_map[i] != HOST_EPC &&
	       epc_of(e, i) >= 0 && effective(e, i) != PROT_NONE;
}

int sgxemu__map_pages(struct sgxemu_enclave *e, size_t first, size_t n,
		      bool remap)
{
	size_t end = first + n;
	int ret = 0;

	if (first > e->npages || n > e->npages - first)
		return -EINVAL;
	lock();
	for (size_t i = first; i < end && !remap; i++)
		remap = needs_remap(e, i);
	for (size_t i = first; i < end;) {
		long idx = epc_of(e, i);
		int prot = effective(e, i);
		size_t j = i + 1;

		while (j < end) {
			long nidx = epc_of(e, j);

			if (effective(e, j) != prot)
				break;
			if (remap && ((idx < 0) != (nidx < 0) ||
				      (idx >= 0 && nidx != idx + (long)(j - i))))
				break;
			j++;
		}
		if (remap) {
			ret = map_run(e, i, j - i, idx, prot);
		} else if (mprotect((void *)(uintptr_t)(e->base +
							(i << SGX_PAGE_SHIFT)),
				    (j - i) << SGX_PAGE_SHIFT, prot)) {
			ret = -errno;
		}
		if (ret)
			break;
		i = j;
	}
	unlock();
	if (ret == -ENOMEM)
		map_count_full();
	return ret;
}

/* What mprotect may give page @i: nothing where its EPC page is not the
 * mapping (until a remap puts it there). */
static int held(struct sgxemu_enclave *e, size_t i)
{
	return e->host_map && e->host_map[i] != HOST_EPC ? PROT_NONE :
	       effective(e, i);
}

/* mprotect every enclave to its effective protections (guard_shut says
 * which). Called with the lock held. */
static void reprotect_all(void)
{
	for (int s = 0; s < MAX_ENCLAVES; s++) {
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[s]);

		if (!e)
			continue;
		if (guard_shut) {
			mprotect((void *)(uintptr_t)e->base, e->size, PROT_NONE);
			continue;
		}
		for (size_t i = 0; i < e->npages;) {
			int prot = held(e, i);
			size_t j = i + 1;

			while (j < e->npages && held(e, j) == prot)
				j++;
			mprotect((void *)(uintptr_t)(e->base +
						     (i << SGX_PAGE_SHIFT)),
				 (j - i) << SGX_PAGE_SHIFT, prot);
			i = j;
		}
	}
}

/*
 * With guard mode off (the common case) entry and exit only count, without
 * the lock: nothing is shut, nothing needs opening.
 */
void sgxemu__guard_enter(void)
{
	if (!__atomic_load_n(&sgxemu__platform.guard, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&guard_shut, __ATOMIC_ACQUIRE)) {
		atomic_fetch_add(&guard_inside, 1);
		return;
	}
	lock();
	if (atomic_fetch_add(&guard_inside, 1) == 0 && guard_shut) {
		guard_shut = false;
		reprotect_all();
	}
	unlock();
}

void sgxemu__guard_exit(void)
{
	if (!__atomic_load_n(&sgxemu__platform.guard, __ATOMIC_ACQUIRE)) {
		atomic_fetch_sub(&guard_inside, 1);
		return;
	}
	lock();
	if (atomic_fetch_sub(&guard_inside, 1) == 1 &&
	    __atomic_load_n(&sgxemu__platform.guard, __ATOMIC_ACQUIRE)) {
		guard_shut = true;
		reprotect_all();
	}
	unlock();
}

bool sgxemu__guard_closed(void)
{
	return __atomic_load_n(&guard_shut, __ATOMIC_ACQUIRE);
}

void sgxemu_set_guard(bool on)
{
	if (sgxemu_platform_init())
		return;
	lock();
	__atomic_store_n(&sgxemu__platform.guard, on, __ATOMIC_RELEASE);
	if (on && atomic_load(&guard_inside) == 0 && !guard_shut) {
		guard_shut = true;
		reprotect_all();
	} else if (!on && guard_shut) {
		guard_shut = false;
		reprotect_all();
	}
	unlock();
}

bool sgxemu_guard(void)
{
	return sgxemu_platform_init() == 0 &&
	       __atomic_load_n(&sgxemu__platform.guard, __ATOMIC_ACQUIRE);
}

void sgxemu__guard_init(bool on)
{
	guard_shut = on;
}
