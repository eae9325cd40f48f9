/* SPDX-License-Identifier: MIT */
/*
 * Enclave objects behind the public C API: ECREATE, EADD + EEXTEND, EINIT
 * and EREMOVE through the processor model, the ELRANGE reservation, the
 * per-page mapping permissions; each enclave is registered in the
 * engine's table (src/engine/encl_table.c) with the page hooks of
 * fault.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/sha.h>

#include "driver/edmm.h"
#include "driver/paging.h"

static void set_err(int *sgx_err, int v)
{
	if (sgx_err)
		*sgx_err = v;
}

/*
 * A byte per page of ELRANGE, zeroed. Gramine's EDMM ELRANGE is 1 TiB, so
 * these tables are 256 MiB each, and CREATE writes the whole window's
 * permissions into one of them: with 4 KiB pages that is 65536 page
 * faults (each worth a trap on a shadow-paging guest, about half of such
 * a start-up here); transparent huge pages make it 128. Anonymous memory
 * is zero already, as calloc's would be.
 */
#define TABLE_HUGE	(2UL << 20)

static uint8_t *table_alloc(size_t n)
{
	void *p;

	if (n < TABLE_HUGE)
		return calloc(n ? n : 1, 1);
	p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_HUGEPAGE);	/* a hint: fine if refused */
	return p;
}

static void table_free(uint8_t *p, size_t n)
{
	if (!p)
		return;
	if (n < TABLE_HUGE)
		free(p);
	else
		munmap(p, n);
}

int sgxemu_enclave_create(const struct sgx_secs *secs, unsigned flags,
			  struct sgxemu_enclave **out, int *sgx_err)
{
	struct sgx_secinfo secinfo __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_cpu *cpu;
	struct sgxemu_enclave *e;
	struct sgx_secs *copy;
	long idx;
	int ret;

	set_err(sgx_err, 0);
	if (!secs || !out || (flags & ~SGXEMU_CREATE_RESERVED))
		return -EINVAL;
	*out = NULL;
	ret = sgxemu_platform_init();
	if (ret)
		return ret;
	/* Before the first EPC page: a fork splits what is free. */
	sgxemu__epc_fork_register();
	cpu = sgxemu__cpu();
	/* EACCEPT/EMODPE changes reach the host mappings (edmm.c). */
	cpu->epcm_changed = sgxemu__epcm_changed;
	copy = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	e = calloc(1, sizeof(*e));
	if (!copy || !e) {
		ret = -ENOMEM;
		goto out_free;
	}
	memcpy(copy, secs, sizeof(*copy));
	idx = sgxemu__epc_alloc(-1, true);
	if (idx < 0) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(&secinfo, 0, sizeof(secinfo));
	secinfo.flags = SGX_SECINFO_SECS;
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uint64_t)(uintptr_t)copy;
	pi.secinfo = (uint64_t)(uintptr_t)&secinfo;
	ret = sgx_ecreate(cpu, &pi, sgx_epc_page(cpu, (size_t)idx));
	if (ret) {
		set_err(sgx_err, ret);
		sgxemu__epc_free(idx);
		ret = -EIO;
		goto out_free;
	}
	e->ctl = cpu->ctl[idx];
	e->secs_index = idx;
	e->base = secs->base;
	e->size = secs->size;
	e->npages = secs->size >> SGX_PAGE_SHIFT;
	e->flags = flags;
	e->xfrm = secs->attributes.xfrm;
	e->miscselect = secs->miscselect;
	e->table_slot = -1;
	pthread_mutex_init(&e->lock, NULL);
	e->map_prot = table_alloc(e->npages);
	e->host_map = table_alloc(e->npages);
	if (!e->map_prot || !e->host_map) {
		ret = -ENOMEM;
		goto out_remove;
	}
	if (!(flags & SGXEMU_CREATE_RESERVED)) {
		void *p = mmap((void *)(uintptr_t)e->base, e->size, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			       MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED) {
			ret = errno == EEXIST ? -EEXIST : -ENOMEM;
			goto out_remove;
		}
		if ((uintptr_t)p != e->base) {
			/* Old kernels treat the flag as a hint. */
			munmap(p, e->size);
			ret = -EEXIST;
			goto out_remove;
		}
		memset(e->host_map, HOST_NONE, e->npages);
	}
	ret = sgxemu__paging_create(e);
	if (ret)
		goto out_unmap;
	sgxemu__ksgxd_start();
	sgxemu__stats_init();
	e->ops = &sgxemu__paging_ops;
	ret = sgxemu__encl_register(e);
	if (ret) {
		sgxemu__paging_destroy(e);
out_unmap:
		if (!(flags & SGXEMU_CREATE_RESERVED))
			munmap((void *)(uintptr_t)e->base, e->size);
		goto out_remove;
	}
	free(copy);
	*out = e;
	return 0;

out_remove:
	sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)idx));
	sgxemu__epc_free(idx);
out_free:
	if (e) {
		table_free(e->map_prot, e->npages);
		table_free(e->host_map, e->npages);
	}
	free(e);
	free(copy);
	return ret;
}

static bool in_range(const struct sgxemu_enclave *e, uint64_t addr)
{
	return addr >= e->base && addr - e->base < e->size;
}

static long page_epc(const struct sgxemu_enclave *e, size_t page)
{
	uint32_t v = __atomic_load_n(&e->ctl->pages[page], __ATOMIC_ACQUIRE);

	return v ? (long)v - 1 : -1;
}

/*
 * The pages of an ADD_PAGES run so far: mapped in as few mmaps as their
 * EPC runs allow, then handed to the reclaimer. Until then they are off
 * the LRU, because a page the reclaimer took before its first mapping
 * would be mapped back as if it were resident. @e->lock held.
 */
static int batch_flush(struct sgxemu_enclave *e)
{
	size_t lo = e->batch_lo, hi = e->batch_hi;
	int ret;

	if (lo >= hi)
		return 0;
	e->batch_lo = e->batch_hi = 0;
	ret = sgxemu__map_pages(e, lo, hi - lo, true);
	sgxemu__paging_lock();
	for (size_t n = lo; n < hi; n++)
		if (e->pg->state[n] & PS_ADDED)
			sgxemu__lru_add(e, n);
	sgxemu__paging_unlock();
	return ret;
}

/* The longest run kept unmapped: 1 MiB of EPC held off the LRU. */
#define BATCH_MAX	256

void sgx_encl_add_batch_begin(struct sgxemu_enclave *e)
{
	pthread_mutex_lock(&e->lock);
	e->batch = true;
	e->batch_lo = e->batch_hi = 0;
	pthread_mutex_unlock(&e->lock);
}

int sgx_encl_add_batch_end(struct sgxemu_enclave *e)
{
	int ret;

	pthread_mutex_lock(&e->lock);
	ret = batch_flush(e);
	e->batch = false;
	pthread_mutex_unlock(&e->lock);
	return ret;
}

/*
 * Page @n joins the run: mapped now when it does not extend it (the run
 * is flushed first), or when the run is long enough.
 */
static int batch_add(struct sgxemu_enclave *e, size_t n)
{
	int ret = 0;

	if (e->batch_lo < e->batch_hi && n != e->batch_hi)
		ret = batch_flush(e);
	if (e->batch_lo >= e->batch_hi)
		e->batch_lo = e->batch_hi = n;
	e->batch_hi = n + 1;
	if (e->batch_hi - e->batch_lo >= BATCH_MAX) {
		int r = batch_flush(e);

		if (!ret)
			ret = r;
	}
	return ret;
}

int sgxemu_enclave_add_page(struct sgxemu_enclave *e, uint64_t linaddr,
			    const void *src, const struct sgx_secinfo *secinfo,
			    uint16_t measure_mask, int prot, int *sgx_err)
{
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_cpu *cpu = sgxemu__cpu();
	uint8_t *page, *bounce;
	size_t n;
	long idx, hint = -1;
	int ret;

	set_err(sgx_err, 0);
	if (!e || !src || !secinfo || (linaddr & (SGX_PAGE_SIZE - 1)) ||
	    !in_range(e, linaddr) || (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)))
		return -EINVAL;
	n = (linaddr - e->base) >> SGX_PAGE_SHIFT;
	bounce = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	if (!bounce)
		return -ENOMEM;
	memcpy(bounce, src, SGX_PAGE_SIZE);
	memcpy(&si, secinfo, sizeof(si));

	pthread_mutex_lock(&e->lock);
	ret = sgxemu__paging_secs(e);
	if (ret)
		goto out;
	/* A page paged out to backing memory exists as well. */
	if (page_epc(e, n) >= 0 || (e->pg->state[n] & PS_ADDED)) {
		ret = -EEXIST;
		goto out;
	}
	/* Its VA slot first, so that evicting it never allocates. */
	ret = sgxemu__paging_grow(e, n);
	if (ret)
		goto out;
	/* Keep the enclave's consecutive pages consecutive in the EPC. */
	if (n > 0 && page_epc(e, n - 1) >= 0)
		hint = page_epc(e, n - 1) + 1;
	else if (n + 1 < e->npages && page_epc(e, n + 1) > 0)
		hint = page_epc(e, n + 1) - 1;
	idx = e->batch ? sgxemu__epc_try_alloc(hint, false) : -1;
	if (idx < 0) {
		/* A shortage: the run so far becomes reclaimable first. */
		if (e->batch)
			batch_flush(e);
		idx = sgxemu__epc_alloc(hint, false);
	}
	if (idx < 0) {
		ret = -ENOMEM;
		goto out;
	}
	page = sgx_epc_page(cpu, (size_t)idx);
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = linaddr;
	pi.srcpge = (uint64_t)(uintptr_t)bounce;
	pi.secinfo = (uint64_t)(uintptr_t)&si;
	pi.secs = (uint64_t)(uintptr_t)sgx_epc_page(cpu, (size_t)e->secs_index);
	ret = sgx_eadd(cpu, &pi, page);
	if (ret) {
		set_err(sgx_err, ret);
		sgxemu__epc_free(idx);
		ret = -EIO;
		goto out;
	}
	for (unsigned i = 0; i < 16; i++) {
		if (!(measure_mask & (1U << i)))
			continue;
		ret = sgx_eextend(cpu, (void *)(uintptr_t)pi.secs,
				  page + 256 * i);
		if (ret) {
			/* The page stays (as EADD left it); the measurement
			 * is broken, so EINIT will refuse the enclave. */
			set_err(sgx_err, ret);
			ret = -EIO;
			break;
		}
	}
	/*
	 * Measured as given: now the engine may make its FS/GS base writes
	 * trap where the host kernel does not track them (fsgs_sites.c).
	 * Every site starts with F3, which the bounce copy (the page's bytes)
	 * tells without touching the EPC page: a zero page that EADD left a
	 * hole (Gramine's RWX free heap, 65,000 pages) would be faulted in
	 * by the scan alone, some 8 us a page under shadow paging. A lead-in
	 * page still a hole reads as zeros, whose decode (two-byte ADDs)
	 * meets the page boundary as a decode from the page's start does.
	 */
	if (!ret && (si.flags & SGX_SECINFO_X) &&
	    memchr(bounce, 0xf3, SGX_PAGE_SIZE)) {
		long pidx = n > 0 ? page_epc(e, n - 1) : -1;

		if (pidx >= 0 && !cpu->epc_used[pidx])
			pidx = -1;
		if (sgxemu__fsgs_scan_page(e, linaddr, page, pidx >= 0 ?
			sgx_epc_page(cpu, (size_t)pidx) : NULL) < 0)
			ret = -ENOMEM;
	}
	e->nr_pages++;
	e->map_prot[n] = (uint8_t)prot;
	if (!e->batch) {
		int r = sgxemu__map_pages(e, n, 1, true);

		if (!ret)
			ret = r;
	}
	/* Measured and mapped: from now on the reclaimer may take it (in a
	 * run, once the run is mapped). */
	sgxemu__paging_lock();
	e->pg->state[n] = PS_ADDED;
	e->pg->resident++;
	if (!e->batch)
		sgxemu__lru_add(e, n);
	sgxemu__paging_unlock();
	if (e->batch) {
		int r = batch_add(e, n);

		if (!ret)
			ret = r;
	}
out:
	pthread_mutex_unlock(&e->lock);
	free(bounce);
	return ret;
}

int sgxemu_enclave_init(struct sgxemu_enclave *e,
			const struct sgx_sigstruct *sigstruct,
			const struct sgx_einittoken *token, int *sgx_err)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgx_sigstruct *ss;
	struct sgx_einittoken *tok;
	uint8_t hash[SHA256_DIGEST_LENGTH];
	int ret;

	set_err(sgx_err, 0);
	if (!e || !sigstruct)
		return -EINVAL;
	ss = aligned_alloc(SGX_PAGE_SIZE, SGX_PAGE_SIZE);
	tok = aligned_alloc(512, 512);
	if (!ss || !tok) {
		free(ss);
		free(tok);
		return -ENOMEM;
	}
	memcpy(ss, sigstruct, sizeof(*ss));
	memset(tok, 0, 512);
	if (token)
		memcpy(tok, token, sizeof(*tok));

	pthread_mutex_lock(&e->lock);
	/* As Linux on flexible-launch-control parts: the signer becomes the
	 * launch enclave's hash, so EINIT needs no token. */
	SHA256(ss->modulus, sizeof(ss->modulus), hash);
	for (int i = 0; i < 4; i++) {
		uint64_t v;

		memcpy(&v, hash + 8 * i, 8);
		sgx_wrmsr(cpu, MSR_IA32_SGXLEPUBKEYHASH0 + i, v);
	}
	ret = sgxemu__paging_secs(e);
	if (!ret)
		ret = sgx_einit(cpu, ss,
				sgx_epc_page(cpu, (size_t)e->secs_index), tok);
	if (!ret)
		sgxemu__fsgs_seal(e);
	pthread_mutex_unlock(&e->lock);
	free(ss);
	free(tok);
	if (ret) {
		set_err(sgx_err, ret);
		return -EIO;
	}
	return 0;
}

int sgxemu_enclave_set_prot(struct sgxemu_enclave *e, uint64_t addr,
			    size_t len, int prot)
{
	size_t first, n;
	int ret;

	if (!e || (addr & (SGX_PAGE_SIZE - 1)) || (len & (SGX_PAGE_SIZE - 1)) ||
	    !len || !in_range(e, addr) || len > e->size - (addr - e->base) ||
	    (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)))
		return -EINVAL;
	first = (addr - e->base) >> SGX_PAGE_SHIFT;
	n = len >> SGX_PAGE_SHIFT;
	pthread_mutex_lock(&e->lock);
	memset(e->map_prot + first, prot, n);
	ret = sgxemu__map_pages(e, first, n, false);
	pthread_mutex_unlock(&e->lock);
	return ret;
}

int sgxemu_enclave_page_info(struct sgxemu_enclave *e, uint64_t linaddr,
			     struct sgxemu_page_info *info)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgx_epcm_entry *m;
	size_t n;
	long idx;

	if (!e || !info || !in_range(e, linaddr))
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	n = (linaddr - e->base) >> SGX_PAGE_SHIFT;
	info->map_prot = e->map_prot[n] & SGXEMU_MAP_PROT;
	info->refused = e->map_prot[n] & SGXEMU_MAP_REFUSED;
	idx = page_epc(e, n);
	if (idx < 0)
		return 0;
	m = &cpu->epcm[idx];
	info->present = m->valid;
	info->type = m->page_type;
	info->epcm_prot = (m->r ? PROT_READ : 0) | (m->w ? PROT_WRITE : 0) |
			  (m->x ? PROT_EXEC : 0);
	info->pending = m->pending;
	info->modified = m->modified;
	return 0;
}

int sgxemu_enclave_remove_page(struct sgxemu_enclave *e, uint64_t linaddr,
			       int *sgx_err)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	size_t n;
	long idx;
	int ret;

	set_err(sgx_err, 0);
	if (!e || (linaddr & (SGX_PAGE_SIZE - 1)) || !in_range(e, linaddr))
		return -EINVAL;
	n = (linaddr - e->base) >> SGX_PAGE_SHIFT;
	pthread_mutex_lock(&e->lock);
	/* The reclaimer must not take the page meanwhile; a paged-out
	 * page is loaded first (EREMOVE works on EPC pages). */
	sgxemu__paging_lock();
	if ((e->pg->state[n] & PS_EVICTED) && sgxemu__paging_load(e, n) &&
	    (e->pg->state[n] & PS_LOST)) {
		/* Its contents are lost anyway: drop it. */
		e->pg->state[n] = 0;
		e->pg->evicted--;
		e->nr_pages--;
		ret = 0;
		goto out;
	}
	idx = page_epc(e, n);
	if (idx < 0) {
		ret = -ENOENT;
		goto out;
	}
	ret = sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)idx));
	if (ret) {
		set_err(sgx_err, ret);
		ret = -EIO;
		goto out;
	}
	sgxemu__epc_free(idx);
	sgxemu__lru_del(e, n);
	if (e->pg->state[n] & PS_ADDED)
		e->pg->resident--;
	e->pg->state[n] = 0;
	e->nr_pages--;
	ret = sgxemu__map_pages(e, n, 1, true);
out:
	sgxemu__paging_unlock();
	pthread_mutex_unlock(&e->lock);
	return ret;
}

int sgxemu_enclave_get_info(const struct sgxemu_enclave *e,
			    struct sgxemu_enclave_info *info)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	const struct sgx_secs *secs;

	if (!e || !info)
		return -EINVAL;
	if (sgxemu__paging_secs((struct sgxemu_enclave *)e))
		return -EFAULT;
	secs = sgx_epc_page(cpu, (size_t)e->secs_index);
	memset(info, 0, sizeof(*info));
	info->base = e->base;
	info->size = e->size;
	info->ssa_frame_size = secs->ssa_frame_size;
	info->miscselect = secs->miscselect;
	info->attributes = secs->attributes;
	info->initialized = __atomic_load_n(&e->ctl->initialized,
					    __ATOMIC_ACQUIRE);
	memcpy(info->mrenclave, secs->mrenclave, sizeof(info->mrenclave));
	memcpy(info->mrsigner, secs->mrsigner, sizeof(info->mrsigner));
	info->nr_pages = e->nr_pages;
	return 0;
}

/*
 * EREMOVE every page, the SECS last. The EPC pages go back to the pool,
 * unless a forked child may still be using the enclave (epc_fork.c):
 * then they stay allocated until that child is gone, as Linux frees them
 * only with the last reference to the enclave.
 */
int sgxemu_enclave_destroy(struct sgxemu_enclave *e)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	uint8_t pin;

	if (!e)
		return -EINVAL;
	pthread_mutex_lock(&e->lock);
	if (atomic_load(&e->ctl->active_threads)) {
		pthread_mutex_unlock(&e->lock);
		return -EBUSY;
	}
	pin = sgxemu__epc_fork_group(e);
	/* Out of the reclaimer's sight before its pages go; its SECS back
	 * in the EPC, where EREMOVE can take it. */
	sgxemu__paging_lock();
	sgxemu__encl_unregister(e);
	sgxemu__paging_secs_locked(e);
	sgxemu__paging_unlock();
	for (size_t n = 0; n < e->npages; n++) {
		long idx = page_epc(e, n);

		if (idx < 0)
			continue;
		if (sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)idx)) == 0)
			sgxemu__epc_put(idx, pin);
	}
	/* VA slots, VA pages and backing memory go with it. */
	sgxemu__paging_destroy(e);
	if (sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)e->secs_index)) == 0)
		sgxemu__epc_put(e->secs_index, pin);
	if (e->flags & SGXEMU_CREATE_RESERVED)
		mmap((void *)(uintptr_t)e->base, e->size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		     -1, 0);
	else
		munmap((void *)(uintptr_t)e->base, e->size);
	pthread_mutex_unlock(&e->lock);
	pthread_mutex_destroy(&e->lock);
	table_free(e->map_prot, e->npages);
	table_free(e->host_map, e->npages);
	sgxemu__fsgs_free(e);
	free(e);
	return 0;
}
