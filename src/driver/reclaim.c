/* SPDX-License-Identifier: MIT */
/*
 * The reclaimer: each enclave's LRU of resident REG/TCS pages, aging,
 * batches of 16 as the kernel's sgx_reclaim_pages (facts §9.3), and ksgxd.
 *
 * How "accessed" is observed. Hardware sets a PTE's accessed bit without a
 * fault; a user-space emulator cannot read its own PTEs' accessed bits, so
 * the reclaimer makes them observable: scanning a page that was young
 * clears "young" and removes the page's host protection (PROT_NONE, state
 * PS_AGED) before putting it back at the tail. The next access by enclave
 * code faults; the engine's handler sees an aged page, restores the
 * protection, marks the page young and lets the instruction run again *in
 * enclave mode*, without an AEX (fault.c), as the hardware's accessed bit
 * costs no exit. A page still old (never touched since it was aged) at its
 * next scan is evicted. Accesses the processor model makes itself (TCS,
 * SSA at EENTER/AEX) go through the EPC, not the mapping, so they do not
 * count: a TCS is young only while enclave code touches it (a later
 * entry reloads it if needed).
 *
 * One batch: isolate up to 16 old pages of one enclave (round robin over
 * the enclaves), make them inaccessible in the process, EBLOCK each,
 * ETRACK, kick the enclave's threads out of enclave mode, EWB each into
 * the backing file with its VA slot (SGX_NOT_TRACKED: kick again and wait
 * until the threads that could hold the old translation have left).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "driver/driver.h"
#include "driver/paging.h"

/*
 * The paging lock is recursive (the reclaimer runs inside allocations made
 * under it), with its owner named by the kernel's thread id: a glibc
 * recursive mutex names it by the TLS thread descriptor, which a thread
 * made by a raw clone() shares with its parent (Gramine's), so the two
 * would both "own" it and load one page twice.
 */
static pthread_mutex_t pg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic pid_t pg_owner;
static unsigned pg_depth;
static int enabled = 1;
static int rr_cursor;
static int ksgxd_efd = -1;
static pid_t ksgxd_pid;
static atomic_bool ewb_warned;
static atomic_bool exiting;

static pid_t kernel_tid(void)
{
	return (pid_t)sgxemu__thread_tid();
}

void sgxemu__paging_lock(void)
{
	pid_t me = kernel_tid();

	if (atomic_load_explicit(&pg_owner, memory_order_relaxed) == me) {
		pg_depth++;
		return;
	}
	pthread_mutex_lock(&pg_lock);
	atomic_store_explicit(&pg_owner, me, memory_order_relaxed);
	pg_depth = 1;
}

bool sgxemu__paging_trylock(void)
{
	pid_t me = kernel_tid();

	if (atomic_load_explicit(&pg_owner, memory_order_relaxed) == me) {
		pg_depth++;
		return true;
	}
	if (pthread_mutex_trylock(&pg_lock))
		return false;
	atomic_store_explicit(&pg_owner, me, memory_order_relaxed);
	pg_depth = 1;
	return true;
}

void sgxemu__paging_unlock(void)
{
	if (--pg_depth)
		return;
	atomic_store_explicit(&pg_owner, 0, memory_order_relaxed);
	pthread_mutex_unlock(&pg_lock);
}

bool sgxemu__reclaim_enabled(void)
{
	return enabled;
}

static void link_tail(struct sgxemu_paging *pg, size_t head, size_t n)
{
	uint32_t last = pg->prev[head];

	pg->next[n] = (uint32_t)head;
	pg->prev[n] = last;
	pg->next[last] = (uint32_t)n;
	pg->prev[head] = (uint32_t)n;
	pg->lru_len++;
	pg->state[n] |= PS_LRU;
}

static void unlink_page(struct sgxemu_paging *pg, size_t n)
{
	pg->next[pg->prev[n]] = pg->next[n];
	pg->prev[pg->next[n]] = pg->prev[n];
	pg->lru_len--;
	pg->state[n] &= (uint8_t)~PS_LRU;
}

/* A page became resident (EADD, ELDU): young, at the tail. Lock held. */
void sgxemu__lru_add(struct sgxemu_enclave *e, size_t n)
{
	struct sgxemu_paging *pg = e->pg;

	if (pg->state[n] & PS_LRU)
		return;
	pg->state[n] |= PS_YOUNG;
	link_tail(pg, e->npages, n);
}

void sgxemu__lru_del(struct sgxemu_enclave *e, size_t n)
{
	if (e->pg->state[n] & PS_LRU)
		unlink_page(e->pg, n);
}

static struct sgxemu_enclave *pick_enclave(void)
{
	for (int i = 0; i < MAX_ENCLAVES; i++) {
		int s = (rr_cursor + i) % MAX_ENCLAVES;
		struct sgxemu_enclave *e = atomic_load(&sgxemu__enclaves[s]);

		if (e && e->pg && e->pg->lru_len && !e->pg->shared) {
			rr_cursor = s + 1;
			return e;
		}
	}
	return NULL;
}

/* Waiting for threads to leave enclave mode: kick them again now and
 * then (a kick that landed just before an entry was lost), else sleep. */
static void wait_for_exits(struct sgxemu_enclave *e, unsigned tries)
{
	struct timespec ts = { 0, 20000 };

	if (tries % 50 == 0)
		atomic_fetch_add(&sgxemu__st_kicks, (uint64_t)sgxemu__kick(e));
	if (tries == 50000 && !atomic_exchange(&ewb_warned, true))
		sgxemu__write_str("sgxemu: reclaim: a thread does not leave "
				  "enclave mode (is SGXEMU_KICK_SIGNAL "
				  "blocked?); still waiting\n");
	nanosleep(&ts, NULL);
}

/*
 * Apply the protection of @nr pages whose state changed (aged, being
 * reclaimed, or evicted: @remap, which maps the placeholder there),
 * sorted, one call per run of consecutive pages: each call that takes
 * away access is a TLB shootdown of every CPU running the process, the
 * enclave's threads' among them, and under shadow paging an IPI costs
 * about a trap. A batch's pages are mostly consecutive.
 */
static void protect_runs(struct sgxemu_enclave *e, uint32_t *pages, size_t nr,
			 bool remap)
{
	sgxemu__sort_pages(pages, nr);
	for (size_t i = 0; i < nr;) {
		size_t j = i + 1;

		while (j < nr && pages[j] == pages[j - 1] + 1)
			j++;
		sgxemu__map_pages(e, pages[i], j - i, remap);
		i = j;
	}
}

#define AGE_RUN_MAX	64

/* Pick up to one batch of old pages, aging young ones on the way. */
static size_t isolate(struct sgxemu_enclave *e, uint32_t *sel)
{
	struct sgxemu_paging *pg = e->pg;
	size_t head = e->npages, nsel = 0, scanned = 0, naged = 0;
	size_t limit = 2 * pg->lru_len + 1;
	uint32_t aged[AGE_RUN_MAX];

	while (nsel < SGX_RECLAIM_BATCH && pg->lru_len && scanned < limit) {
		size_t n = pg->next[head];

		/* Like the kernel, look at a batch at a time, but keep going
		 * until something is old, so a pass never comes back empty
		 * while pages are resident. */
		if (scanned >= SGX_RECLAIM_BATCH && nsel)
			break;
		scanned++;
		unlink_page(pg, n);
		if (pg->state[n] & PS_YOUNG) {
			pg->state[n] = (uint8_t)((pg->state[n] & ~PS_YOUNG) |
						 PS_AGED);
			if (naged == AGE_RUN_MAX) {
				protect_runs(e, aged, naged, false);
				naged = 0;
			}
			aged[naged++] = (uint32_t)n;
			link_tail(pg, head, n);
			continue;
		}
		sel[nsel++] = (uint32_t)n;
	}
	protect_runs(e, aged, naged, false);
	return nsel;
}

size_t sgxemu__reclaim_batch(bool direct)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	uint32_t sel[SGX_RECLAIM_BATCH], runs[SGX_RECLAIM_BATCH];
	long idx[SGX_RECLAIM_BATCH];
	struct sgxemu_enclave *e;
	struct sgxemu_paging *pg;
	size_t nsel, freed = 0;
	void *secs;
	unsigned tries;
	int r;

	/*
	 * An EPC smaller than twice the high watermark cannot keep the
	 * watermarks at all (tests of EPC exhaustion use such sizes): there
	 * a full EPC is ENOMEM, as without a reclaimer.
	 */
	if (!enabled || sgxemu__cpu()->nr_pages < 2 * SGX_NR_HIGH_PAGES)
		return 0;
	sgxemu__paging_lock();
	sgxemu__epc_fork_reap();
	e = atomic_load(&exiting) ? NULL : pick_enclave();
	if (!e)
		goto out;
	pg = e->pg;
	secs = sgx_epc_page(cpu, (size_t)e->secs_index);
	sgxemu__backing_flush(pg);
	nsel = isolate(e, sel);

	/* Block: no new translations, in the process and in the EPCM. */
	for (size_t i = 0; i < nsel; i++) {
		pg->state[sel[i]] = (uint8_t)((pg->state[sel[i]] & ~PS_AGED) |
					      PS_RECLAIM);
		runs[i] = sel[i];
	}
	protect_runs(e, runs, nsel, false);
	for (size_t i = 0; i < nsel; i++) {
		size_t n = sel[i];
		uint32_t v = __atomic_load_n(&e->ctl->pages[n], __ATOMIC_ACQUIRE);

		idx[i] = (long)v - 1;
		r = v ? sgx_eblock(cpu, sgx_epc_page(cpu, (size_t)idx[i])) : -1;
		if (r && r != SGX_BLKSTATE) {
			/* Not blockable (e.g. EREMOVEd meanwhile): skip. */
			pg->state[n] &= (uint8_t)~PS_RECLAIM;
			if (v)
				sgxemu__lru_add(e, n);
			sgxemu__map_pages(e, n, 1, false);
			idx[i] = -1;
		}
	}

	/* Track: start a cycle, then make every thread in the enclave AEX. */
	for (tries = 0; (r = sgx_etrack(cpu, secs)) == SGX_PREV_TRK_INCMPL;
	     tries++)
		wait_for_exits(e, tries);
	atomic_fetch_add(&sgxemu__st_kicks, (uint64_t)sgxemu__kick(e));

	for (size_t i = 0; i < nsel; i++) {
		size_t n = sel[i];

		if (idx[i] < 0)
			continue;
		for (tries = 1;; tries++) {
			memset(&pi, 0, sizeof(pi));
			pi.srcpge = (uint64_t)(uintptr_t)sgxemu__bounce;
			pi.secinfo = (uint64_t)(uintptr_t)&pg->pcmd[n];
			r = sgx_ewb(cpu, &pi, sgx_epc_page(cpu, (size_t)idx[i]),
				    sgxemu__va_slot(e, n));
			if (r != SGX_NOT_TRACKED)
				break;
			wait_for_exits(e, tries);
		}
		if ((!r || r == SGX_VA_SLOT_OCCUPIED) &&
		    sgxemu__backing_put(pg, n))
			r = -EIO;	/* the encrypted page has nowhere to go */
		if (r && r != SGX_VA_SLOT_OCCUPIED) {
			/* As the kernel: the contents are lost. */
			sgxemu__write_str("sgxemu: reclaim: EWB failed\n");
			pg->state[n] = PS_ADDED | PS_EVICTED | PS_LOST;
			continue;
		}
		sgxemu__epc_free(idx[i]);
		pg->state[n] = PS_ADDED | PS_EVICTED;
		pg->resident--;
		pg->evicted++;
		pg->evictions++;
		runs[freed++] = (uint32_t)n;
	}
	/*
	 * The evicted pages' mappings become the PROT_NONE placeholder now,
	 * a run at a time, so that their reload maps over an empty range:
	 * replacing the old EPC mapping there would zap its page-table entry
	 * and make the faulting thread wait for a TLB shootdown of this
	 * thread's CPU, once per reload instead of once per run here.
	 */
	protect_runs(e, runs, freed, true);
	if (freed && !pg->resident)
		sgxemu__evict_secs(e);
	atomic_fetch_add(&sgxemu__st_evicted, freed);
	atomic_fetch_add(direct ? &sgxemu__st_direct_runs
				: &sgxemu__st_ksgxd_runs, 1);
out:
	sgxemu__paging_unlock();
	return freed;
}

/*
 * The SECS follows its last child out (facts §9.5), into backing page
 * SIZE/4096, only for an initialised enclave. Its VA slot is taken from
 * spare capacity the first time; without one it simply stays.
 */
void sgxemu__evict_secs(struct sgxemu_enclave *e)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgxemu_paging *pg = e->pg;
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	int r;

	if (pg->secs_evicted || pg->shared || e->ctl->child_count ||
	    !__atomic_load_n(&e->ctl->initialized, __ATOMIC_ACQUIRE))
		return;
	if (!pg->secs_slot) {
		if (pg->nr_slots >= pg->nr_va * SGX_VA_SLOT_COUNT)
			return;
		pg->secs_slot = ++pg->nr_slots;
	}
	memset(&pi, 0, sizeof(pi));
	pi.srcpge = (uint64_t)(uintptr_t)sgxemu__bounce;
	pi.secinfo = (uint64_t)(uintptr_t)&pg->pcmd[e->npages];
	r = sgx_ewb(cpu, &pi, sgx_epc_page(cpu, (size_t)e->secs_index),
		    sgxemu__va_slot(e, e->npages));
	if ((!r || r == SGX_VA_SLOT_OCCUPIED) &&
	    sgxemu__backing_put(pg, e->npages))
		r = -EIO;
	if (r && r != SGX_VA_SLOT_OCCUPIED)
		return;
	sgxemu__epc_free(e->secs_index);
	pg->secs_evicted = true;
	pg->secs_evictions++;
}

/* ksgxd: sleeps until an allocation leaves fewer than the low watermark
 * free, then reclaims until the high watermark is reached or nothing is
 * reclaimable. All signals blocked: it never enters an enclave, and
 * process-directed signals belong to the application's threads. */
static void *ksgxd(void *arg)
{
	struct pollfd p = { .fd = (int)(intptr_t)arg, .events = POLLIN };
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		uint64_t v;

		if (poll(&p, 1, 100) > 0 && read(p.fd, &v, sizeof(v)) < 0)
			continue;
		/* A forked child gone gives enclaves back to reclaim. */
		sgxemu__epc_fork_reap();
		while (sgxemu__epc_nr_free() < SGX_NR_HIGH_PAGES &&
		       sgxemu__reclaim_batch(false))
			;
	}
	return NULL;
}

/* After fork (epc_fork.c). The child's only thread has a new thread id,
 * so the lock the parent's fork_prepare() took is not its own: the child
 * starts with a free one. */
void sgxemu__paging_lock_reinit(void)
{
	pthread_mutex_init(&pg_lock, NULL);
	atomic_store(&pg_owner, 0);
	pg_depth = 0;
}

/*
 * At exit OpenSSL's own atexit handler frees its locks, and an EWB after
 * that crashes in EVP_CipherInit_ex (ksgxd, still running, did so while
 * LeakSanitizer held the exit up). This handler is registered after
 * OpenSSL's (ECREATE has used it), so it runs first: it waits for the
 * batch in flight, and none starts afterwards.
 */
static void reclaim_at_exit(void)
{
	atomic_store(&exiting, true);
	sgxemu__paging_lock();
	sgxemu__paging_unlock();
}

static void register_exit(void)
{
	atexit(reclaim_at_exit);
}

void sgxemu__ksgxd_start(void)
{
	static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
	static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
	const char *v = getenv("SGXEMU_EPC_RECLAIM");
	pthread_attr_t attr;
	pthread_t t;
	int fd;

	enabled = !(v && !strcmp(v, "0"));
	sgxemu__epc_fork_register();
	pthread_once(&exit_once, register_exit);
	pthread_mutex_lock(&start_lock);
	/* Once per process: a forked child starts its own. */
	if (!enabled || ksgxd_pid == getpid())
		goto out;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		goto out;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, ksgxd, (void *)(intptr_t)fd) == 0) {
		ksgxd_efd = fd;
		ksgxd_pid = getpid();
	} else {
		close(fd);
	}
	pthread_attr_destroy(&attr);
out:
	pthread_mutex_unlock(&start_lock);
}

int sgxemu__platform_threads(void)
{
	return (ksgxd_pid == getpid()) + sgx_drv_event_threads();
}

void sgxemu__ksgxd_wake(void)
{
	uint64_t one = 1;
	int fd = ksgxd_efd;

	if (fd >= 0 && ksgxd_pid == getpid() && write(fd, &one, sizeof(one)) < 0)
		return;
}
