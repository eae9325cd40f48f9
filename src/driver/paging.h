/* SPDX-License-Identifier: MIT */
/*
 * EPC oversubscription in the driver (issue 6): the reclaiming EPC
 * allocator (epc_alloc.c), per-enclave backing memory and VA pages
 * (backing.c), the LRU, aging and reclaim batches with ksgxd
 * (reclaim.c), fault-in with ELDU (fault.c), statistics (stats.c).
 *
 * Locking: one process-wide paging lock (recursive, because the fault
 * path allocates and allocation may reclaim) guards every enclave's page
 * states, LRU and VA slots. Order: sgxemu_enclave.lock, then the paging
 * lock, then the allocator's lock, then the processor's locks. The
 * reclaimer never takes an enclave's lock. No thread holds the paging lock
 * in enclave mode, so a signal handler on a thread interrupted in enclave
 * mode may take it; the one handler path that runs *before* its AEX (the
 * aging fault, see fault.c) only try-locks, because the reclaimer may be
 * waiting, lock held, for that very thread to leave enclave mode.
 */
#ifndef SGXEMU_DRIVER_PAGING_H
#define SGXEMU_DRIVER_PAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "engine/engine.h"

/* Page states (sgxemu_paging.state[page]). */
#define PS_ADDED	0x01	/* an enclave page exists here (EPC or backing) */
#define PS_LRU		0x02	/* resident and on the enclave's LRU */
#define PS_YOUNG	0x04	/* accessed since the last scan */
#define PS_AGED		0x08	/* host protection removed to observe access */
#define PS_RECLAIM	0x10	/* blocked, being written back */
#define PS_EVICTED	0x20	/* in backing memory, VA slot holds its version */
#define PS_LOST		0x40	/* ELDU refused it: contents gone (as Linux) */

/* Watermarks and batch size of the kernel's reclaimer (facts §9.1). */
#define SGX_NR_LOW_PAGES	32
#define SGX_NR_HIGH_PAGES	64
#define SGX_RECLAIM_BATCH	16

#define SGXEMU_DROPS_MAX	256

struct sgxemu_paging {
	int      fd;			/* the backing memfd */
	uint8_t *backing;		/* its mapping: page i at i * 4096,
					 * used for the PCMDs (and by tests) */
	size_t   backing_len;
	struct sgx_pcmd *pcmd;		/* PCMD region: entry i for page i */
	uint8_t  *state;		/* per page: PS_* */
	uint32_t *slot;			/* per page: VA slot number + 1 */
	uint32_t *next, *prev;		/* LRU links; index npages = head */
	size_t   lru_len;
	long    *va;			/* EPC indices of the VA pages */
	size_t   nr_va, cap_va;
	uint32_t nr_slots;		/* VA slots handed out */
	size_t   resident, evicted;	/* child pages in EPC / in backing */
	uint64_t evictions, reloads;	/* counters for statistics */
	bool     shared;		/* a forked child may use it: not reclaimed */
	uint64_t fork_mask;		/* the fork tokens of those children */
	uint8_t  pin_group;		/* at destroy: where its EPC pages go */
	bool     secs_evicted;		/* the SECS is in backing memory */
	uint32_t secs_slot;		/* its VA slot number + 1 */
	uint64_t secs_evictions;
	/* Backing pages reloaded and not yet freed (backing.c). */
	uint32_t drops[SGXEMU_DROPS_MAX];
	size_t   nr_drops;
};

/* A window (mapping) permissions @prot allow an access of kind @kerr (#PF
 * code): the kernel's VMA check, which comes before its fault handler. */
static inline bool sgxemu__window_allows(int prot, uint32_t kerr)
{
	prot &= SGXEMU_MAP_PROT;
	if (kerr & X86_PF_INSTR)
		return prot & PROT_EXEC;
	if (kerr & X86_PF_WRITE)
		return prot & PROT_WRITE;
	return prot != PROT_NONE;
}

/* The paging lock (reclaim.c). */
void sgxemu__paging_lock(void);
bool sgxemu__paging_trylock(void);
void sgxemu__paging_unlock(void);
/* In a forked child: a new paging lock, held by nobody. */
void sgxemu__paging_lock_reinit(void);

/* backing.c: create/free an enclave's paging state (normal context). */
int sgxemu__paging_create(struct sgxemu_enclave *e);
void sgxemu__paging_destroy(struct sgxemu_enclave *e);
/* Reserve a VA slot for one more page, creating a VA page when the last
 * one is full (the kernel's sgx_encl_grow). 0 or -ENOMEM. */
int sgxemu__paging_grow(struct sgxemu_enclave *e, size_t page);
uint64_t *sgxemu__va_slot(struct sgxemu_enclave *e, size_t page);
/*
 * Backing page @n (the SECS at npages) by the file, not the mapping:
 * EWB writes into sgxemu__bounce, then sgxemu__backing_put() stores it;
 * sgxemu__backing_get() fills sgxemu__bounce for ELDU, and
 * sgxemu__backing_drop() frees the page after it. The hot path never
 * maps a backing page, so dropping one zaps no page-table entry and
 * needs no TLB shootdown of the process's other CPUs (ksgxd's among
 * them), which a punch-hole under a mapping did at every reload. The
 * paging lock serialises the one bounce page. 0, or -EIO.
 */
extern uint8_t sgxemu__bounce[4096];
int sgxemu__backing_put(struct sgxemu_paging *pg, size_t n);
int sgxemu__backing_get(struct sgxemu_paging *pg, size_t n);
/*
 * Freeing a reloaded page's backing is deferred: sgxemu__backing_drop()
 * queues it and sgxemu__backing_flush() frees the queue, a run of
 * consecutive pages by one punch-hole. The reclaimer flushes before it
 * writes any page back (so a queued drop never frees newer contents),
 * fork before the backing becomes shared; a full queue flushes itself.
 * The punch-hole (3 us here) so leaves the reloading thread's fault, and
 * at most SGXEMU_DROPS_MAX pages (1 MiB) of backing stay allocated.
 */
void sgxemu__backing_drop(struct sgxemu_paging *pg, size_t n);
void sgxemu__backing_flush(struct sgxemu_paging *pg);
/* Sort @nr page numbers (a batch's: insertion sort, no allocation). */
void sgxemu__sort_pages(uint32_t *p, size_t nr);

/* reclaim.c */
void sgxemu__lru_add(struct sgxemu_enclave *e, size_t page);
void sgxemu__lru_del(struct sgxemu_enclave *e, size_t page);
/* One reclaim batch: pages freed (0: nothing reclaimable). Paging lock
 * held or not (it is recursive). */
size_t sgxemu__reclaim_batch(bool direct);
bool sgxemu__reclaim_enabled(void);
/* Start ksgxd in this process if it is not running (normal context). */
void sgxemu__ksgxd_start(void);
/* Wake ksgxd (async-signal-safe: a write to an eventfd). */
void sgxemu__ksgxd_wake(void);

/* epc_alloc.c */
long sgxemu__epc_alloc(long hint, bool high);
void sgxemu__epc_free(long index);
/* An EPC page without reclaiming (for a thread still in enclave mode,
 * which the reclaimer might wait for): the index or -ENOMEM. */
long sgxemu__epc_try_alloc(long hint, bool high);
size_t sgxemu__epc_nr_free(void);
size_t sgxemu__epc_section_free(unsigned section);

/*
 * fork() and the EPC (epc_fork.c). Each fork gets a token, a bit of a
 * 64-bit mask: bits 1..63 are children followed through a pipe that
 * hangs up when the child (and everything it forked) has exited or
 * exec'd; bit 0 (SGX_FORK_UNTRACKED) a child that cannot be followed
 * (no token left, or, in a child, the parent that owns the inherited
 * enclaves), which never goes.
 */
#define SGX_FORK_UNTRACKED	1ULL
#define SGX_EPC_GROUPS		256
#define SGX_EPC_GROUP_FOREVER	255
/* Register the fork handlers (idempotent; normal context). */
void sgxemu__epc_fork_register(void);
/* Notice children that are gone: their enclaves become reclaimable, the
 * EPC they held comes back. True when one went. Any context. */
bool sgxemu__epc_fork_reap(void);
/* Out of EPC with nothing reclaimable: wait (bounded, once per child)
 * for a child sharing the enclaves to go. True when one went. */
bool sgxemu__epc_fork_wait(void);
/* The pin group an enclave's pages go to when it is destroyed (0: free
 * them). */
uint8_t sgxemu__epc_fork_group(struct sgxemu_enclave *e);

/* epc_alloc.c: pin groups, and the allocator's side of fork. */
uint8_t sgxemu__epc_group(uint64_t mask);
void sgxemu__epc_put(long index, uint8_t group);
size_t sgxemu__epc_fork_gone(uint64_t dead);
void sgxemu__epc_fork_lock(void);
void sgxemu__epc_fork_split(bool child, uint64_t mask);
void sgxemu__epc_fork_unlock(bool child);

/* fault.c: the engine's hooks for every enclave (struct sgxemu_encl_ops;
 * engine/engine.h says what each returns). */
extern const struct sgxemu_encl_ops sgxemu__paging_ops;
int sgxemu__paging_fault_enclave(struct sgxemu_enclave *e, uint64_t addr,
				 uint32_t kerr);
int sgxemu__paging_fault(struct sgxemu_enclave *e, uint64_t addr);
bool sgxemu__paging_prefault_entry(struct sgxemu_enclave *e, uint64_t tcs);
bool sgxemu__paging_hidden(struct sgxemu_enclave *e, size_t page);
/*
 * Host code's fault at @addr in @e's ELRANGE (not in enclave mode, guard
 * mode open), resolved as the kernel's fault handler and the hardware
 * would (linux-driver-facts.md §8.1-8.3), with the #PF error code and
 * registers of @uc: a paged-out page is brought back; no page is EAUGed
 * (SGX2) or is the kernel's SIGBUS; an EPC page the EPCM keeps from
 * enclave-mode access (PENDING, MODIFIED, TCS, restricted) gets
 * abort-page semantics (abort_page.h), the instruction carried out.
 * 1: resolved (resume at @uc); 0: the program's own fault (SIGSEGV);
 * -1: SIGBUS, BUS_ADRERR at @addr. To be the engine's host-fault hook
 * (struct sgxemu_encl_ops .host_access) in place of .hidden + .fault.
 */
int sgxemu__paging_host_access(struct sgxemu_enclave *e, uint64_t addr,
			       ucontext_t *uc);

/* fault.c: load an evicted page (paging lock held). 0 or -EFAULT. */
int sgxemu__paging_load(struct sgxemu_enclave *e, size_t page);
/* The SECS back in the EPC if it was evicted (facts §9.5), before
 * anything uses e->secs_index. Takes the paging lock. 0 or -errno. */
int sgxemu__paging_secs(struct sgxemu_enclave *e);
int sgxemu__paging_secs_locked(struct sgxemu_enclave *e);
/* reclaim.c: write the SECS back when no child is left in the EPC. */
void sgxemu__evict_secs(struct sgxemu_enclave *e);

/* stats.c: SGXEMU_STATS at exit, set up with the first enclave. */
void sgxemu__stats_init(void);
extern _Atomic uint64_t sgxemu__st_evicted, sgxemu__st_reloaded,
	sgxemu__st_ksgxd_runs, sgxemu__st_direct_runs, sgxemu__st_reload_failed,
	sgxemu__st_aging_faults, sgxemu__st_kicks;

#endif
