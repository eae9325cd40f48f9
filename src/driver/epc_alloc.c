/* SPDX-License-Identifier: MIT */
/*
 * The EPC page allocator over the processor's EPC sections, with free
 * counts per section, reclaiming under pressure (facts §9.1).
 *
 * The engine maps enclave pages from the EPC memfd, and the kernel merges
 * neighbouring mappings only when their file offsets are consecutive, so
 * the allocator tries to give an enclave's next page the EPC index after
 * its previous one (the hint); SECS pages come from the top of the EPC so
 * that they do not break such runs.
 *
 * When no page is free, the allocating thread runs one reclaim batch
 * itself (direct reclaim) and tries again; only when nothing at all can be
 * reclaimed is the answer -ENOMEM, with one line on stderr. Every
 * allocation that leaves fewer than the low watermark free wakes ksgxd.
 * Allocation may run in a signal handler (fault-in after an AEX): the
 * lock here is never held by a thread in enclave mode.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver/paging.h"

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *bits;
static size_t nr_pages;
static size_t cursor;
static _Atomic size_t nr_free;
static _Atomic size_t sec_free[SGX_MAX_EPC_SECTIONS];
static atomic_bool enomem_logged;

static bool is_free(size_t i)
{
	return !(bits[i / 64] & (1ULL << (i % 64)));
}

static unsigned section_of(size_t i)
{
	struct sgx_cpu *cpu = sgxemu__cpu();

	for (unsigned s = 0; s < cpu->nr_sections; s++)
		if (i >= cpu->sections[s].first_page &&
		    i - cpu->sections[s].first_page < cpu->sections[s].nr_pages)
			return s;
	return 0;
}

static void take(size_t i)
{
	bits[i / 64] |= 1ULL << (i % 64);
	atomic_fetch_sub(&nr_free, 1);
	atomic_fetch_sub(&sec_free[section_of(i)], 1);
}

/* First use (alloc_lock held). */
static int setup(void)
{
	struct sgx_cpu *cpu = sgxemu__cpu();

	if (bits)
		return 0;
	bits = calloc((cpu->nr_pages + 63) / 64, sizeof(*bits));
	if (!bits)
		return -ENOMEM;
	nr_pages = cpu->nr_pages;
	atomic_store(&nr_free, nr_pages);
	for (unsigned s = 0; s < cpu->nr_sections; s++)
		atomic_store(&sec_free[s], cpu->sections[s].nr_pages);
	return 0;
}

static long try_alloc(long hint, bool high)
{
	long ret = -ENOMEM;

	pthread_mutex_lock(&alloc_lock);
	if (setup()) {
		pthread_mutex_unlock(&alloc_lock);
		return -ENOMEM;
	}
	if (hint >= 0 && (size_t)hint < nr_pages && is_free((size_t)hint)) {
		ret = hint;
	} else if (high) {
		for (size_t i = nr_pages; i-- > 0;)
			if (is_free(i)) {
				ret = (long)i;
				break;
			}
	} else {
		/* Next fit, preferring a page whose successor is free too, so
		 * that the enclave's following pages can stay consecutive. */
		long any = -1;

		for (size_t n = 0; n < nr_pages; n++) {
			size_t i = (cursor + n) % nr_pages;

			if (!is_free(i))
				continue;
			if (any < 0)
				any = (long)i;
			if (i + 1 < nr_pages && is_free(i + 1)) {
				ret = (long)i;
				break;
			}
		}
		if (ret < 0 && any >= 0)
			ret = any;
	}
	if (ret >= 0) {
		take((size_t)ret);
		if (!high)
			cursor = (size_t)ret + 1;
	}
	pthread_mutex_unlock(&alloc_lock);
	return ret;
}

long sgxemu__epc_try_alloc(long hint, bool high)
{
	long idx = try_alloc(hint, high);

	if (idx >= 0 && atomic_load(&nr_free) < SGX_NR_LOW_PAGES)
		sgxemu__ksgxd_wake();
	return idx;
}

long sgxemu__epc_alloc(long hint, bool high)
{
	for (;;) {
		long idx = try_alloc(hint, high);

		if (idx >= 0) {
			if (atomic_load(&nr_free) < SGX_NR_LOW_PAGES)
				sgxemu__ksgxd_wake();
			return idx;
		}
		if (!sgxemu__reclaim_batch(true))
			break;
	}
	if (!atomic_exchange(&enomem_logged, true)) {
		/* write(2): this may run in a signal handler. */
		sgxemu__write_str("sgxemu: EPC exhausted: no free page and "
				  "nothing reclaimable (ENOMEM)\n");
	}
	return -ENOMEM;
}

void sgxemu__epc_free(long index)
{
	pthread_mutex_lock(&alloc_lock);
	if (bits && index >= 0 && (size_t)index < nr_pages &&
	    !is_free((size_t)index)) {
		bits[index / 64] &= ~(1ULL << (index % 64));
		atomic_fetch_add(&nr_free, 1);
		atomic_fetch_add(&sec_free[section_of((size_t)index)], 1);
	}
	pthread_mutex_unlock(&alloc_lock);
}

size_t sgxemu__epc_nr_free(void)
{
	return bits ? atomic_load(&nr_free) : sgxemu__cpu()->nr_pages;
}

size_t sgxemu__epc_section_free(unsigned s)
{
	if (!bits)
		return s < sgxemu__cpu()->nr_sections ?
		       sgxemu__cpu()->sections[s].nr_pages : 0;
	return s < SGX_MAX_EPC_SECTIONS ? atomic_load(&sec_free[s]) : 0;
}
