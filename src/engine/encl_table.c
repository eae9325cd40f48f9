/* SPDX-License-Identifier: MIT */
/*
 * The enclaves this process has, by ELRANGE: what the signal handlers and
 * the fast path look an address up in. Lookups are lock-free (handlers
 * cannot take locks); slots are only ever published or cleared with
 * atomic stores, and an enclave is destroyed only after it was removed
 * here and no thread is in it. The driver registers what it creates.
 */
#include <errno.h>

#include "engine/engine.h"

struct sgxemu_enclave *_Atomic sgxemu__enclaves[MAX_ENCLAVES];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int table_used;		/* slots [0, table_used) ever used */

struct sgxemu_enclave *sgxemu__encl_find(uint64_t addr)
{
	int n = atomic_load(&table_used);

	for (int i = 0; i < n; i++) {
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[i]);

		if (e && addr >= e->base && addr - e->base < e->size)
			return e;
	}
	return NULL;
}

struct sgxemu_enclave *sgxemu_enclave_find(uint64_t addr)
{
	return sgxemu__encl_find(addr);
}

int sgxemu__encl_register(struct sgxemu_enclave *e)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&table_lock);
	for (int i = 0; i < MAX_ENCLAVES; i++) {
		if (!atomic_load(&sgxemu__enclaves[i])) {
			e->table_slot = i;
			atomic_store(&sgxemu__enclaves[i], e);
			if (atomic_load(&table_used) <= i)
				atomic_store(&table_used, i + 1);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	return ret;
}

void sgxemu__encl_unregister(struct sgxemu_enclave *e)
{
	pthread_mutex_lock(&table_lock);
	if (e->table_slot >= 0 &&
	    atomic_load(&sgxemu__enclaves[e->table_slot]) == e)
		atomic_store(&sgxemu__enclaves[e->table_slot], NULL);
	e->table_slot = -1;
	pthread_mutex_unlock(&table_lock);
}
