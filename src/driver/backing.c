/* SPDX-License-Identifier: MIT */
/*
 * Per-enclave paging state: backing memory and VA pages.
 *
 * Backing memory is one memfd per enclave, as the kernel's shmem file
 * (facts §9.6): the encrypted contents of page i at offset i * 4096, a
 * slot for the SECS at SIZE, and the PCMDs after it, 128 bytes per page.
 * The file is sparse: only evicted pages cost memory, and a reloaded
 * page's contents are punched out again.
 *
 * VA pages are EPC pages turned into version arrays with EPA; they are
 * never evicted. Each page added to the enclave is given a VA slot number
 * for its life (slot n lives in VA page n / 512), and a new VA page is
 * created whenever the added-page count crosses a multiple of 512, before
 * the page is added (the kernel's sgx_encl_grow), so eviction itself never
 * needs to allocate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driver/paging.h"

int sgxemu__paging_create(struct sgxemu_enclave *e)
{
	struct sgxemu_paging *pg = calloc(1, sizeof(*pg));
	size_t n = e->npages;
	size_t pcmd_off = (n + 1) * SGX_PAGE_SIZE;
	size_t pcmd_len = ((n + 1) * sizeof(struct sgx_pcmd) + SGX_PAGE_SIZE - 1) &
			  ~(size_t)(SGX_PAGE_SIZE - 1);

	if (!pg)
		return -ENOMEM;
	pg->fd = -1;
	pg->backing = MAP_FAILED;
	/* Arrays as big as ELRANGE: calloc gets them from mmap, so pages of
	 * ELRANGE that hold nothing cost no memory. */
	pg->state = calloc(n, 1);
	pg->slot = calloc(n, sizeof(*pg->slot));
	pg->next = calloc(n + 1, sizeof(*pg->next));
	pg->prev = calloc(n + 1, sizeof(*pg->prev));
	if (!pg->state || !pg->slot || !pg->next || !pg->prev)
		goto fail;
	pg->next[n] = pg->prev[n] = (uint32_t)n;	/* empty LRU */
	pg->fd = memfd_create("sgxemu-backing", MFD_CLOEXEC);
	if (pg->fd < 0)
		goto fail;
	pg->backing_len = pcmd_off + pcmd_len;
	if (ftruncate(pg->fd, (off_t)pg->backing_len))
		goto fail;
	pg->backing = mmap(NULL, pg->backing_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_NORESERVE, pg->fd, 0);
	if (pg->backing == MAP_FAILED)
		goto fail;
	pg->pcmd = (struct sgx_pcmd *)(pg->backing + pcmd_off);
	e->pg = pg;
	return 0;
fail:
	if (pg->fd >= 0)
		close(pg->fd);
	free(pg->state);
	free(pg->slot);
	free(pg->next);
	free(pg->prev);
	free(pg);
	return -ENOMEM;
}

/* Free the paging state after the enclave's pages are gone: VA pages are
 * EREMOVEd and returned to the allocator (or held for a forked child,
 * pin_group), the backing file closed. */
void sgxemu__paging_destroy(struct sgxemu_enclave *e)
{
	struct sgxemu_paging *pg = e->pg;
	struct sgx_cpu *cpu = sgxemu__cpu();

	if (!pg)
		return;
	for (size_t i = 0; i < pg->nr_va; i++)
		if (sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)pg->va[i])) == 0)
			sgxemu__epc_put(pg->va[i], pg->pin_group);
	if (pg->backing != MAP_FAILED)
		munmap(pg->backing, pg->backing_len);
	if (pg->fd >= 0)
		close(pg->fd);
	free(pg->va);
	free(pg->state);
	free(pg->slot);
	free(pg->next);
	free(pg->prev);
	free(pg);
	e->pg = NULL;
}

int sgxemu__paging_grow(struct sgxemu_enclave *e, size_t page)
{
	struct sgxemu_paging *pg = e->pg;
	struct sgx_cpu *cpu = sgxemu__cpu();
	long idx;
	int ret = 0;

	sgxemu__paging_lock();
	if (!pg->slot[page] && pg->nr_slots < pg->nr_va * SGX_VA_SLOT_COUNT)
		pg->slot[page] = ++pg->nr_slots;
	/* A page re-added after EREMOVE keeps its slot. */
	if (pg->slot[page]) {
		sgxemu__paging_unlock();
		return 0;
	}
	sgxemu__paging_unlock();
	/* Allocated without the paging lock: it may reclaim. */
	idx = sgxemu__epc_alloc(-1, true);
	if (idx < 0)
		return -ENOMEM;
	if (sgx_epa(cpu, SGX_PT_VA, sgx_epc_page(cpu, (size_t)idx))) {
		sgxemu__epc_free(idx);
		return -EFAULT;
	}
	sgxemu__paging_lock();
	if (pg->nr_va == pg->cap_va) {
		size_t cap = pg->cap_va ? pg->cap_va * 2 : 4;
		long *va = realloc(pg->va, cap * sizeof(*va));

		if (!va) {
			ret = -ENOMEM;
			goto out;
		}
		pg->va = va;
		pg->cap_va = cap;
	}
	pg->va[pg->nr_va++] = idx;
	idx = -1;
	pg->slot[page] = ++pg->nr_slots;
out:
	sgxemu__paging_unlock();
	if (idx >= 0 && sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)idx)) == 0)
		sgxemu__epc_free(idx);
	return ret;
}

uint64_t *sgxemu__va_slot(struct sgxemu_enclave *e, size_t page)
{
	struct sgxemu_paging *pg = e->pg;
	/* page == npages: the SECS (its slot taken when first evicted). */
	uint32_t s = (page == e->npages ? pg->secs_slot : pg->slot[page]) - 1;

	return (uint64_t *)sgx_epc_page(sgxemu__cpu(),
					(size_t)pg->va[s / SGX_VA_SLOT_COUNT]) +
	       s % SGX_VA_SLOT_COUNT;
}

uint8_t sgxemu__bounce[4096] __attribute__((aligned(4096)));

int sgxemu__backing_put(struct sgxemu_paging *pg, size_t n)
{
	return pwrite(pg->fd, sgxemu__bounce, SGX_PAGE_SIZE,
		      (off_t)(n * SGX_PAGE_SIZE)) == SGX_PAGE_SIZE ? 0 : -EIO;
}

int sgxemu__backing_get(struct sgxemu_paging *pg, size_t n)
{
	return pread(pg->fd, sgxemu__bounce, SGX_PAGE_SIZE,
		     (off_t)(n * SGX_PAGE_SIZE)) == SGX_PAGE_SIZE ? 0 : -EIO;
}

/* Free @nr backing pages from @n; zeros where the file cannot punch. */
static void punch(struct sgxemu_paging *pg, size_t n, size_t nr)
{
	if (!fallocate(pg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		       (off_t)(n * SGX_PAGE_SIZE), (off_t)(nr * SGX_PAGE_SIZE)))
		return;
	memset(sgxemu__bounce, 0, SGX_PAGE_SIZE);
	for (size_t i = 0; i < nr; i++)
		(void)sgxemu__backing_put(pg, n + i);
}

void sgxemu__sort_pages(uint32_t *p, size_t nr)
{
	for (size_t i = 1; i < nr; i++)
		for (size_t j = i; j > 0 && p[j - 1] > p[j]; j--) {
			uint32_t t = p[j];

			p[j] = p[j - 1];
			p[j - 1] = t;
		}
}

void sgxemu__backing_flush(struct sgxemu_paging *pg)
{
	uint32_t *d = pg->drops;
	size_t nr = pg->nr_drops;

	sgxemu__sort_pages(d, nr);
	for (size_t i = 0; i < nr;) {
		size_t j = i + 1;

		while (j < nr && d[j] <= d[j - 1] + 1)
			j++;
		punch(pg, d[i], d[j - 1] - d[i] + 1);
		i = j;
	}
	pg->nr_drops = 0;
}

void sgxemu__backing_drop(struct sgxemu_paging *pg, size_t n)
{
	if (pg->nr_drops == SGXEMU_DROPS_MAX)
		sgxemu__backing_flush(pg);
	pg->drops[pg->nr_drops++] = (uint32_t)n;
}
