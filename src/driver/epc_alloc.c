/* SPDX-License-Identifier: MIT */
/*
 * A simple EPC page allocator over the processor's EPC (all sections).
 *
 * The engine maps enclave pages from the EPC memfd, and the kernel merges
 * neighbouring mappings only when their file offsets are consecutive, so
 * the allocator tries to give an enclave's next page the EPC index after
 * its previous one (the hint); SECS pages come from the top of the EPC so
 * that they do not break such runs. The EPC-oversubscription work replaces
 * this with a reclaiming allocator.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "engine/engine.h"

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *bits;
static size_t nr_pages;
static size_t cursor;

static bool is_free(size_t i)
{
	return !(bits[i / 64] & (1ULL << (i % 64)));
}

static void take(size_t i)
{
	bits[i / 64] |= 1ULL << (i % 64);
}

long sgxemu__epc_alloc(long hint, bool high)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	long ret = -ENOMEM;

	pthread_mutex_lock(&alloc_lock);
	if (!bits) {
		nr_pages = cpu->nr_pages;
		bits = calloc((nr_pages + 63) / 64, sizeof(*bits));
		if (!bits) {
			pthread_mutex_unlock(&alloc_lock);
			return -ENOMEM;
		}
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

void sgxemu__epc_free(long index)
{
	pthread_mutex_lock(&alloc_lock);
	if (bits && index >= 0 && (size_t)index < nr_pages)
		bits[index / 64] &= ~(1ULL << (index % 64));
	pthread_mutex_unlock(&alloc_lock);
}
