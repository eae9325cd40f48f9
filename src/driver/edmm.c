/* SPDX-License-Identifier: MIT */
/*
 * SGX2 page operations of the mainline driver (linux-driver-facts.md §7,
 * §8.2): EMODPR, EMODT and EREMOVE of trimmed pages for the ioctls, each
 * followed by the kernel's ETRACK + IPI sequence where it has one, and
 * EAUG of a page on fault. See edmm.h for the locking.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "driver/edmm.h"
#include "driver/paging.h"

/* Mainline enclaves by engine table slot (lock-free for the handlers). */
static struct sgx_encl *_Atomic owners[MAX_ENCLAVES];

void sgx_edmm_attach(struct sgx_encl *encl)
{
	int s = encl->engine ? encl->engine->table_slot : -1;

	if (s >= 0 && s < MAX_ENCLAVES)
		atomic_store(&owners[s], encl);
}

void sgx_edmm_detach(struct sgx_encl *encl)
{
	for (int s = 0; s < MAX_ENCLAVES; s++) {
		struct sgx_encl *want = encl;

		atomic_compare_exchange_strong(&owners[s], &want, NULL);
	}
}

static struct sgx_encl *owner_of(struct sgxemu_enclave *e)
{
	struct sgx_encl *encl;

	if (e->table_slot < 0 || e->table_slot >= MAX_ENCLAVES)
		return NULL;
	encl = atomic_load(&owners[e->table_slot]);
	return encl && encl->engine == e ? encl : NULL;
}

bool sgxemu__edmm_mainline(struct sgxemu_enclave *e)
{
	return owner_of(e) != NULL;
}

bool sgx_edmm_sgx2(void)
{
	uint32_t r[4];

	sgxemu_platform_cpuid(0, r);
	return r[0] & 2;
}

/* Log a line once per process (the kernel's pr_*_once). */
#define LOG_ONCE(flag, ...) do { \
	static atomic_bool flag; \
	if (!atomic_exchange(&flag, true)) \
		sgx_drv_log(__VA_ARGS__); \
} while (0)

/* --- the kernel's IPI: kick, then wait until the threads left ------------ */

/*
 * Every thread in enclave mode of @e leaves it (AEX), as the kernel's
 * synchronous IPI forces: kick them, and wait until the last ETRACK cycle
 * has drained. Bounded: a thread that blocks the kick signal only delays
 * its EACCEPT (SGX_NOT_TRACKED), as a CPU that never took the IPI would.
 */
static void ipi(struct sgxemu_enclave *e)
{
	struct timespec ts = { 0, 20000 };

	atomic_fetch_add(&sgxemu__st_kicks, (uint64_t)sgxemu__kick(e));
	for (unsigned tries = 1; !sgx_track_cycle_done(e->ctl) &&
	     tries < 100000; tries++) {
		if (tries % 50 == 0)
			atomic_fetch_add(&sgxemu__st_kicks,
					 (uint64_t)sgxemu__kick(e));
		nanosleep(&ts, NULL);
	}
}

/* The kernel's sgx_enclave_etrack() (§7.2). Paging lock held. */
static int etrack(struct sgxemu_enclave *e)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	void *secs = sgx_epc_page(cpu, (size_t)e->secs_index);
	int r = sgx_etrack(cpu, secs);

	if (r) {
		LOG_ONCE(warned1, "ETRACK returned %d (0x%x)", r, (unsigned)r);
		ipi(e);
		r = sgx_etrack(cpu, secs);
		if (r) {
			LOG_ONCE(warned2, "ETRACK repeat returned %d (0x%x)", r,
				 (unsigned)r);
			return -EFAULT;
		}
	}
	ipi(e);
	return 0;
}

/* --- page lookup ------------------------------------------------------------ */

static long resident(struct sgxemu_enclave *e, size_t n)
{
	uint32_t v = __atomic_load_n(&e->ctl->pages[n], __ATOMIC_ACQUIRE);

	return v ? (long)v - 1 : -1;
}

/*
 * The page at @n resident in the EPC, as the kernel's sgx_encl_load_page
 * (§7.1 step 3): -EFAULT when no page is there or it cannot be loaded,
 * -EAGAIN while it is being evicted or no EPC page is free to load it.
 * Paging lock held. Returns the EPC index.
 */
static long load_page(struct sgx_encl *encl, struct sgxemu_enclave *e,
		      size_t n)
{
	uint8_t st = e->pg->state[n];
	int r;

	if (!sgx_encl_page_prot(encl, e->base + n * SGX_PAGE_SIZE) ||
	    !(st & PS_ADDED))
		return -EFAULT;
	if (st & PS_RECLAIM)
		return -EAGAIN;
	if (st & PS_LOST)
		return -EFAULT;
	r = sgxemu__paging_secs_locked(e);
	if (r)
		return r == -ENOMEM ? -EAGAIN : -EFAULT;
	if (st & PS_EVICTED) {
		if (sgxemu__epc_nr_free() == 0)
			return -EAGAIN;
		if (sgxemu__paging_load(e, n))
			return (e->pg->state[n] & PS_LOST) ? -EFAULT : -EAGAIN;
	}
	r = (int)resident(e, n);
	return r < 0 ? -EFAULT : r;
}

/* Direct reclaim before each page, as the kernel (§7.1 worker step 1). */
static void maybe_reclaim(void)
{
	if (sgxemu__epc_nr_free() < SGX_NR_LOW_PAGES)
		sgxemu__reclaim_batch(true);
}

static void lock(struct sgxemu_enclave *e)
{
	pthread_mutex_lock(&e->lock);
	sgxemu__paging_lock();
}

static void unlock(struct sgxemu_enclave *e)
{
	sgxemu__paging_unlock();
	pthread_mutex_unlock(&e->lock);
}

static uint8_t epcm_type(long idx)
{
	return sgxemu__cpu()->epcm[idx].page_type;
}

/* The page type an ioctl works on (@err and a log line otherwise). */
static int require_type(long idx, uint8_t type, int err, const char *ioctl,
			uint64_t addr)
{
	if (epcm_type(idx) == type)
		return 0;
	sgx_drv_log("%s: page 0x%llx is not %s", ioctl, (unsigned long long)addr,
		    type == SGX_PT_REG ? "PT_REG" : "PT_TRIM");
	return err;
}

/*
 * The start every ioctl page shares (§7.1 worker steps 1-3): direct
 * reclaim, both locks, the page resident. Its EPC index with the locks
 * held and its page number in *@n, or -errno with the locks released.
 */
static long begin_page(struct sgx_encl *encl, uint64_t addr, size_t *n)
{
	struct sgxemu_enclave *e = encl->engine;
	long idx;

	*n = (addr - e->base) >> SGX_PAGE_SHIFT;
	maybe_reclaim();
	lock(e);
	idx = load_page(encl, e, *n);
	if (idx < 0)
		unlock(e);
	return idx;
}

/*
 * The kernel's reading of an EMODPR or EMODT result (§7.3, §7.4): a fault
 * is logged once per leaf (@warned) and is -EFAULT, an SGX status goes to
 * *@status and is -EFAULT too.
 */
static int emod_result(int r, const char *leaf, atomic_bool *warned,
		       uint64_t *status)
{
	if (!r)
		return 0;
	if (!SGX_IS_FAULT(r))
		*status = (uint64_t)r;
	else if (!atomic_exchange(warned, true))
		sgx_drv_log("%s encountered exception %d", leaf,
			    SGX_FAULT_VECTOR(r));
	return -EFAULT;
}

/*
 * After a successful EMODPR or EMODT: the EPCM allows less (or, for a TCS
 * or TRIM page, no data access at all), so the host mapping follows at
 * once (the kernel's PTE zap, for a TCS), then the ETRACK sequence.
 */
static int emod_commit(struct sgxemu_enclave *e, size_t n)
{
	sgxemu__map_pages(e, n, 1, false);
	return etrack(e);
}

/* --- RESTRICT_PERMISSIONS ---------------------------------------------------- */

int sgx_edmm_restrict(struct sgx_encl *encl, uint64_t addr, uint64_t perms,
		      uint64_t *status)
{
	static atomic_bool warned;
	struct sgxemu_enclave *e = encl->engine;
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_cpu *cpu = sgxemu__cpu();
	long idx;
	size_t n;
	int ret;

	idx = begin_page(encl, addr, &n);
	if (idx < 0)
		return (int)idx;
	ret = require_type(idx, SGX_PT_REG, -EINVAL, "RESTRICT_PERMISSIONS",
			   addr);
	if (ret)
		goto out;
	memset(&si, 0, sizeof(si));
	si.flags = perms;
	ret = emod_result(sgx_emodpr(cpu, &si, sgx_epc_page(cpu, (size_t)idx)),
			  "EMODPR", &warned, status);
	if (!ret)
		ret = emod_commit(e, n);
out:
	unlock(e);
	return ret;
}

/* --- MODIFY_TYPES ------------------------------------------------------------ */

int sgx_edmm_modify_type(struct sgx_encl *encl, uint64_t addr, uint64_t type,
			 uint64_t *status)
{
	static atomic_bool warned;
	struct sgxemu_enclave *e = encl->engine;
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_cpu *cpu = sgxemu__cpu();
	uint8_t max = sgx_encl_page_prot(encl, addr), cur, map = 0;
	long idx;
	size_t n;
	int ret;

	idx = begin_page(encl, addr, &n);
	if (idx < 0)
		return (int)idx;
	cur = epcm_type(idx);
	if (!((cur == SGX_PT_REG && (type == SGX_PT_TCS || type == SGX_PT_TRIM)) ||
	      (cur == SGX_PT_TCS && type == SGX_PT_TRIM))) {
		sgx_drv_log("MODIFY_TYPES: page 0x%llx cannot go from type %u "
			    "to %llu", (unsigned long long)addr, cur,
			    (unsigned long long)type);
		ret = -EINVAL;
		goto out;
	}
	if (cur == SGX_PT_REG && type == SGX_PT_TCS) {
		if ((max & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE)) {
			sgx_drv_log("MODIFY_TYPES: page 0x%llx was not added "
				    "RW: it cannot become a TCS",
				    (unsigned long long)addr);
			ret = -EPERM;
			goto out;
		}
		sgx_encl_set_page_prot(encl, addr,
				       SGX_PAGE_EXISTS | PROT_READ | PROT_WRITE);
		/* The PTEs are zapped: an executable window now faults
		 * with SIGBUS (§8.1 step 3.2). */
		map = e->map_prot[n];
		e->map_prot[n] = sgx_map_refusal(map, PROT_READ | PROT_WRITE);
	}
	memset(&si, 0, sizeof(si));
	si.flags = type << SGX_SECINFO_PT_SHIFT;
	ret = emod_result(sgx_emodt(cpu, &si, sgx_epc_page(cpu, (size_t)idx)),
			  "EMODT", &warned, status);
	if (ret) {
		sgx_encl_set_page_prot(encl, addr, max);
		if (map)
			e->map_prot[n] = map;
	} else {
		ret = emod_commit(e, n);
	}
out:
	unlock(e);
	return ret;
}

/* --- REMOVE_PAGES ------------------------------------------------------------ */

int sgx_edmm_remove(struct sgx_encl *encl, uint64_t addr, uint64_t unused,
		    uint64_t *no_status)
{
	struct sgxemu_enclave *e = encl->engine;
	struct sgx_secinfo si __attribute__((aligned(64)));
	struct sgx_cpu *cpu = sgxemu__cpu();
	long idx;
	size_t n;
	int r, ret = 0;

	(void)unused;
	(void)no_status;
	idx = begin_page(encl, addr, &n);
	if (idx < 0)
		return (int)idx;
	ret = require_type(idx, SGX_PT_TRIM, -EPERM, "REMOVE_PAGES", addr);
	if (ret)
		goto out;
	/* Accepted by the enclave? Only EMODPR's #PF says so (§7.5). */
	memset(&si, 0, sizeof(si));
	si.flags = SGX_SECINFO_R | SGX_SECINFO_W | SGX_SECINFO_X;
	r = sgx_emodpr(cpu, &si, sgx_epc_page(cpu, (size_t)idx));
	if (r != SGX_PF) {
		sgx_drv_log("REMOVE_PAGES: the enclave has not accepted the "
			    "trim of 0x%llx", (unsigned long long)addr);
		ret = -EPERM;
		goto out;
	}
	sgxemu__lru_del(e, n);
	r = sgx_eremove(cpu, sgx_epc_page(cpu, (size_t)idx));
	if (r)
		LOG_ONCE(warned, "EREMOVE returned %d (0x%x) and an EPC page "
			 "was leaked. SGX may become unusable.", r,
			 (unsigned)r);
	else
		sgxemu__epc_free(idx);
	/* Gone from the enclave either way, as in the kernel. */
	if (e->pg->state[n] & PS_ADDED)
		e->pg->resident--;
	e->pg->state[n] = 0;
	e->nr_pages--;
	sgx_encl_set_page_prot(encl, addr, 0);
	/* EAUG may add a page here again, with all permissions. */
	e->map_prot[n] &= SGXEMU_MAP_PROT;
	sgxemu__map_pages(e, n, 1, true);
out:
	unlock(e);
	return ret;
}

/* --- EAUG on fault -------------------------------------------------------------- */

bool sgxemu__edmm_can_eaug(struct sgxemu_enclave *e, size_t n, uint32_t kerr)
{
	if (!e->pg || n >= e->npages || !sgxemu__cpu()->config.sgx2 ||
	    !owner_of(e))
		return false;
	if ((__atomic_load_n(&e->pg->state[n], __ATOMIC_ACQUIRE) & PS_ADDED) ||
	    resident(e, n) >= 0)
		return false;
	return sgxemu__window_allows(e->map_prot[n], kerr);
}

static int eaug(struct sgxemu_enclave *e, size_t n, bool may_reclaim)
{
	struct sgx_pageinfo pi __attribute__((aligned(32)));
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct sgx_encl *encl = owner_of(e);
	uint64_t addr = e->base + n * SGX_PAGE_SIZE;
	long idx, hint = -1;
	int r;

	if (!encl || !__atomic_load_n(&e->ctl->initialized, __ATOMIC_ACQUIRE))
		return -EFAULT;
	if (e->pg->state[n] & PS_ADDED)
		return 0;		/* added meanwhile: retry the access */
	if (sgxemu__paging_secs_locked(e) || sgxemu__paging_grow(e, n))
		return -EFAULT;
	if (n > 0 && resident(e, n - 1) >= 0)
		hint = resident(e, n - 1) + 1;
	idx = may_reclaim ? sgxemu__epc_alloc(hint, false) :
			    sgxemu__epc_try_alloc(hint, false);
	if (idx < 0)
		return -EFAULT;
	memset(&pi, 0, sizeof(pi));
	pi.linaddr = addr;
	pi.secs = (uint64_t)(uintptr_t)sgx_epc_page(cpu, (size_t)e->secs_index);
	r = sgx_eaug(cpu, &pi, sgx_epc_page(cpu, (size_t)idx));
	if (r) {
		sgxemu__epc_free(idx);
		return -EFAULT;
	}
	/* The kernel's maximum for an EAUGed page: the enclave decides. */
	sgx_encl_set_page_prot(encl, addr, SGX_PAGE_EXISTS | PROT_READ |
			       PROT_WRITE | PROT_EXEC);
	e->nr_pages++;
	e->pg->state[n] = PS_ADDED;
	e->pg->resident++;
	sgxemu__lru_add(e, n);
	/* PENDING: inaccessible, as the placeholder is (map.c). */
	if (!sgxemu__map_is_placeholder(e, n))
		sgxemu__map_pages(e, n, 1, true);
	return 0;
}

int sgxemu__edmm_eaug_now(struct sgxemu_enclave *e, size_t n)
{
	struct sgxemu_paging *pg = e->pg;

	/* Anything that could wait for this thread to leave enclave mode
	 * (reclaim, a VA page's allocation) is for the slow path. */
	if (pg->secs_evicted || sgxemu__epc_nr_free() <= SGX_NR_LOW_PAGES ||
	    (!pg->slot[n] && pg->nr_slots >= pg->nr_va * SGX_VA_SLOT_COUNT))
		return -EAGAIN;
	return eaug(e, n, false) ? -EAGAIN : 0;
}

int sgxemu__edmm_eaug(struct sgxemu_enclave *e, size_t n)
{
	return eaug(e, n, true);
}

/*
 * The processor's epcm_changed hook: an EACCEPT, EACCEPTCOPY or EMODPE
 * changed what the EPCM allows at @linaddr; the host mapping follows.
 */
void sgxemu__epcm_changed(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			  uint64_t linaddr)
{
	struct sgxemu_enclave *e = sgxemu__encl_find(linaddr);

	(void)cpu;
	/* Mapped anew rather than mprotect'ed: one system call either way,
	 * and the new mapping comes with its page-table entry (map.c). */
	if (e && e->ctl == ctl)
		sgxemu__map_pages(e, (linaddr - e->base) >> SGX_PAGE_SHIFT, 1,
				  true);
}
