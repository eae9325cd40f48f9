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
 *
 * fork() (epc_fork.c): pages a forked child may still use are "pinned"
 * to a group, the set of fork tokens (children) that hold them; they stay
 * allocated until every child of the set is gone, then go back to the
 * pool. Group 255 stands for a child that cannot be followed: its pages
 * never come back.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/paging.h"

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *bits;
static size_t nr_pages;
static size_t cursor;
static _Atomic size_t nr_free;
static _Atomic size_t sec_free[SGX_MAX_EPC_SECTIONS];
static atomic_bool enomem_logged;
/* Per page: the pin group holding it (0: none); per group: its tokens. */
static uint8_t *pin;
static uint64_t group_mask[SGX_EPC_GROUPS] = {
	[SGX_EPC_GROUP_FOREVER] = SGX_FORK_UNTRACKED,
};

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
	pin = calloc(cpu->nr_pages, 1);
	if (!bits || !pin) {
		free(bits);
		free(pin);
		bits = NULL;
		pin = NULL;
		return -ENOMEM;
	}
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
		/* Nothing reclaimable: maybe only until a forked child that
		 * shares the enclaves has gone (epc_fork.c). */
		if (!sgxemu__reclaim_batch(true) && !sgxemu__epc_fork_wait())
			break;
	}
	if (!atomic_exchange(&enomem_logged, true)) {
		/* write(2): this may run in a signal handler. */
		sgxemu__write_str("sgxemu: EPC exhausted: no free page and "
				  "nothing reclaimable (ENOMEM)\n");
	}
	return -ENOMEM;
}

/* alloc_lock held. */
static void put_locked(long index)
{
	if (bits && index >= 0 && (size_t)index < nr_pages &&
	    !is_free((size_t)index)) {
		bits[index / 64] &= ~(1ULL << (index % 64));
		pin[index] = 0;
		atomic_fetch_add(&nr_free, 1);
		atomic_fetch_add(&sec_free[section_of((size_t)index)], 1);
	}
}

void sgxemu__epc_free(long index)
{
	pthread_mutex_lock(&alloc_lock);
	put_locked(index);
	pthread_mutex_unlock(&alloc_lock);
}

/* --- pinning across fork ------------------------------------------------------- */

/* The group of exactly @mask, made when missing (alloc_lock held). A
 * full table, or a child we cannot follow, gives the group that never
 * comes back: safe, only not returned. */
static uint8_t group_locked(uint64_t mask)
{
	int spare = 0;

	if (!mask)
		return 0;
	if (mask & SGX_FORK_UNTRACKED)
		return SGX_EPC_GROUP_FOREVER;
	for (int g = 1; g < SGX_EPC_GROUP_FOREVER; g++) {
		if (group_mask[g] == mask)
			return (uint8_t)g;
		if (!group_mask[g] && !spare)
			spare = g;
	}
	if (!spare)
		return SGX_EPC_GROUP_FOREVER;
	group_mask[spare] = mask;
	return (uint8_t)spare;
}

uint8_t sgxemu__epc_group(uint64_t mask)
{
	uint8_t g;

	pthread_mutex_lock(&alloc_lock);
	g = group_locked(mask);
	pthread_mutex_unlock(&alloc_lock);
	return g;
}

/*
 * A page its enclave no longer needs: free, or held for group @g. A group
 * that emptied meanwhile (its children are gone) frees it at once; its
 * slot may already serve another set, which only holds the page longer.
 */
void sgxemu__epc_put(long index, uint8_t g)
{
	pthread_mutex_lock(&alloc_lock);
	if (g && group_mask[g] && bits && index >= 0 &&
	    (size_t)index < nr_pages && !is_free((size_t)index))
		pin[index] = g;
	else
		put_locked(index);
	pthread_mutex_unlock(&alloc_lock);
}

/* The children of @dead are gone: groups left without a child free
 * their pages. Returns the pages freed. */
size_t sgxemu__epc_fork_gone(uint64_t dead)
{
	size_t freed = 0;
	bool empty[SGX_EPC_GROUPS] = { false };
	bool any = false;

	pthread_mutex_lock(&alloc_lock);
	for (int g = 1; g < SGX_EPC_GROUP_FOREVER; g++)
		if (group_mask[g] & dead) {
			group_mask[g] &= ~dead;
			empty[g] = !group_mask[g];
			any |= empty[g];
		}
	for (size_t i = 0; any && bits && i < nr_pages; i++)
		if (pin[i] && empty[pin[i]]) {
			put_locked((long)i);
			freed++;
		}
	pthread_mutex_unlock(&alloc_lock);
	return freed;
}

/* fork(): the allocator held still from prepare to the split. */
void sgxemu__epc_fork_lock(void)
{
	pthread_mutex_lock(&alloc_lock);
	/* Set up now if the platform is: a child must not start from a
	 * whole free EPC of its own. */
	if (__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		setup();
}

/*
 * Split the free pages with the child, alloc_lock held: walking them in
 * index order, the parent keeps the even-numbered, the child the odd;
 * each marks the other's allocated, the parent pinned to the group of
 * @mask (the child's token) so that they come back when the child is gone. Both
 * compute the same split from the same state. The child also forgets the
 * parent's pins and groups: those pages belong to other processes.
 */
void sgxemu__epc_fork_split(bool child, uint64_t mask)
{
	uint8_t g = child ? 0 : group_locked(mask);
	size_t k = 0;

	if (child) {
		for (int i = 1; i < SGX_EPC_GROUP_FOREVER; i++)
			group_mask[i] = 0;
		if (pin)
			memset(pin, 0, nr_pages);
	}
	for (size_t i = 0; bits && i < nr_pages; i++) {
		if (!is_free(i))
			continue;
		if ((k++ & 1) != (size_t)child) {
			take(i);
			pin[i] = child ? 0 : g;
		}
	}
}

void sgxemu__epc_fork_unlock(bool child)
{
	/* The child's only thread is new: a fresh lock (never held). */
	if (child)
		pthread_mutex_init(&alloc_lock, NULL);
	else
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
