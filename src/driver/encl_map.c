/* SPDX-License-Identifier: MIT */
/*
 * Additions to the engine's C API that the driver needs. First, for mmap,
 * rebuilding the host mapping of part of ELRANGE rather than only changing
 * its protection. sgxemu_enclave_set_prot() mprotects what the engine
 * mapped; after the program has unmapped part of ELRANGE and maps the
 * device there again (MAP_FIXED), as the kernel allows, the EPC pages must
 * be mapped anew. Then the windows' record: their permissions where no
 * page is yet, and the pages whose faults the driver refuses because a
 * window grants more than the page may have (SGXEMU_MAP_REFUSED). Kept
 * in its own file: src/driver/encl.c is the engine's.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "driver/drv.h"
#include "engine/engine.h"

int sgx_encl_remap(struct sgxemu_enclave *e, uint64_t addr, size_t len,
		   int prot)
{
	size_t first, n;
	int ret;

	if (!e || (addr & (SGX_PAGE_SIZE - 1)) || (len & (SGX_PAGE_SIZE - 1)) ||
	    !len || addr < e->base || addr - e->base >= e->size ||
	    len > e->size - (addr - e->base) ||
	    (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)))
		return -EINVAL;
	first = (addr - e->base) >> SGX_PAGE_SHIFT;
	n = len >> SGX_PAGE_SHIFT;
	pthread_mutex_lock(&e->lock);
	memset(e->map_prot + first, prot, n);
	ret = sgxemu__map_pages(e, first, n, true);
	pthread_mutex_unlock(&e->lock);
	return ret;
}

void sgx_encl_window_prot(struct sgxemu_enclave *e, uint64_t addr, size_t len,
			  int prot)
{
	size_t first = (addr - e->base) >> SGX_PAGE_SHIFT;

	pthread_mutex_lock(&e->lock);
	memset(e->map_prot + first, prot, len >> SGX_PAGE_SHIFT);
	pthread_mutex_unlock(&e->lock);
}

uint8_t sgx_map_refusal(uint8_t map, uint8_t max)
{
	map &= SGXEMU_MAP_PROT;
	return map & ~max & SGXEMU_MAP_PROT ? map | SGXEMU_MAP_REFUSED : map;
}

void sgx_encl_window_check(struct sgxemu_enclave *e, uint64_t addr,
			   uint8_t max)
{
	size_t n = (addr - e->base) >> SGX_PAGE_SHIFT;
	uint8_t map;

	pthread_mutex_lock(&e->lock);
	map = sgx_map_refusal(e->map_prot[n], max);
	if (map != e->map_prot[n]) {
		e->map_prot[n] = map;
		sgxemu__map_pages(e, n, 1, true);
	}
	pthread_mutex_unlock(&e->lock);
}
