/* SPDX-License-Identifier: MIT */
/*
 * The enclave's half of SGX2 page changes (sgx-facts.md §4.22-4.24; SDM
 * EACCEPT, EACCEPTCOPY, EMODPE):
 *   EACCEPT      (ENCLU[5]) completes an EAUG (PENDING), an EMODPR (PR) or
 *                an EMODT (MODIFIED, PT_TCS / PT_TRIM);
 *   EACCEPTCOPY  (ENCLU[7]) completes an EAUG by copying a page into it and
 *                giving it the SECINFO's permissions;
 *   EMODPE       (ENCLU[6]) extends a page's EPCM permissions.
 * Operands are enclave linear addresses of @ctl's enclave, executed by a
 * thread in enclave mode there. The SECINFO operand is itself enclave
 * memory: it must be a readable, accessible PT_REG page (#PF otherwise).
 *
 * These run in the engine's signal handler of a thread interrupted in
 * enclave mode; such a thread holds none of the processor's locks, so
 * taking cpu->lock here is safe.
 */
#include <string.h>

#include "cpu/encl_mem.h"
#include "cpu/internal.h"
#include "cpu/paging.h"

/* The EPCM entry of the page mapped at @linaddr, or NULL (#PF). */
static struct sgx_epcm_entry *target(struct sgx_cpu *cpu,
				     struct sgx_encl_ctl *ctl,
				     uint64_t linaddr, long *index)
{
	uint32_t v = __atomic_load_n(&ctl->pages[(linaddr - ctl->base) >>
						 SGX_PAGE_SHIFT],
				     __ATOMIC_ACQUIRE);

	if (!v || v - 1 >= cpu->nr_pages)
		return NULL;
	*index = (long)v - 1;
	return &cpu->epcm[v - 1];
}

static bool in_elrange(const struct sgx_encl_ctl *ctl, uint64_t linaddr)
{
	return linaddr >= ctl->base && linaddr - ctl->base < ctl->size;
}

/*
 * The start every leaf here shares: the processor lock taken (finish()
 * releases it, whatever this returns), then the SECINFO operand read at
 * @lin: 64-aligned and inside ELRANGE (#GP), on a readable, usable REG
 * page (#PF), reserved fields zero (#GP). 0, SGX_GP or SGX_PF.
 */
static int lock_secinfo(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			uint64_t lin, struct sgx_secinfo *si)
{
	void *p;
	int ret;

	pthread_mutex_lock(&cpu->lock);
	ret = sgx_encl_operand(cpu, ctl, lin, sizeof(*si), 64, false, &p);

	if (ret)
		return ret;
	memcpy(si, p, sizeof(*si));
	return sgx_secinfo_sgx2_reserved(si) ? SGX_GP : 0;
}

/* An operand @align-aligned inside ELRANGE (#GP otherwise). */
static bool placed(const struct sgx_encl_ctl *ctl, uint64_t linaddr,
		   uint64_t align)
{
	return !(linaddr & (align - 1)) && in_elrange(ctl, linaddr);
}

/*
 * The end every leaf here shares: the processor lock released, then, when
 * the leaf changed the EPCM at @linaddr, the platform told (the host
 * mapping follows it). Returns @ret.
 */
static int finish(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		  uint64_t linaddr, int ret)
{
	pthread_mutex_unlock(&cpu->lock);
	if (!ret && cpu->epcm_changed)
		cpu->epcm_changed(cpu, ctl, linaddr);
	return ret;
}

/* The TCS checks EACCEPT applies to a page becoming a TCS (64-bit). */
static bool tcs_acceptable(const struct sgx_tcs *tcs)
{
	return sgx_all_zero(tcs->reserved, sizeof(tcs->reserved)) &&
	       !(tcs->flags & SGX_TCS_DBGOPTIN) && tcs->cssa < tcs->nssa &&
	       tcs->aep == 0 && tcs->state == 0;
}

int sgx_eaccept(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		uint64_t secinfo, uint64_t page)
{
	struct sgx_secinfo si;
	struct sgx_epcm_entry *e;
	uint64_t f;
	unsigned pt;
	long index;
	bool pr, pending, modified;
	int ret;

	if (!cpu->config.sgx2 || !ctl)
		return SGX_GP;
	ret = lock_secinfo(cpu, ctl, secinfo, &si);
	if (ret)
		goto out;
	f = si.flags;
	if (!placed(ctl, page, SGX_PAGE_SIZE)) {
		ret = SGX_GP;
		goto out;
	}
	e = target(cpu, ctl, page, &index);
	if (!e) {
		ret = SGX_PF;
		goto out;
	}
	pt = (unsigned)((f & SGX_SECINFO_PT_MASK) >> SGX_SECINFO_PT_SHIFT);
	pr = f & SGX_SECINFO_PR;
	pending = f & SGX_SECINFO_PENDING;
	modified = f & SGX_SECINFO_MODIFIED;
	/* The only requests the SDM allows. */
	if (!((pt == SGX_PT_REG && (pr || pending) && !modified) ||
	      ((pt == SGX_PT_TCS || pt == SGX_PT_TRIM) && !pr && !pending &&
	       modified))) {
		ret = SGX_GP;
		goto out;
	}
	if (!e->valid || e->blocked || e->secs != ctl->secs_index ||
	    (e->page_type != SGX_PT_REG && e->page_type != SGX_PT_TCS &&
	     e->page_type != SGX_PT_TRIM)) {
		ret = SGX_PF;
		goto out;
	}
	if (e->enclave_address != page || e->pending != pending ||
	    e->modified != modified || e->page_type != pt ||
	    e->r != !!(f & SGX_SECINFO_R) || e->w != !!(f & SGX_SECINFO_W) ||
	    e->x != !!(f & SGX_SECINFO_X)) {
		ret = SGX_PAGE_ATTRIBUTES_MISMATCH;
		goto out;
	}
	if (e->pr || e->modified) {
		bool done;

		pthread_mutex_lock(&ctl->lock);
		done = sgx_tracking_done(ctl, e->mod_epoch);
		pthread_mutex_unlock(&ctl->lock);
		if (!done) {
			ret = SGX_NOT_TRACKED;
			goto out;
		}
	}
	if (pt == SGX_PT_TCS && !tcs_acceptable(sgx_epc_page(cpu, (size_t)index))) {
		ret = SGX_GP;
		goto out;
	}
	e->pending = 0;
	e->modified = 0;
	e->pr = 0;
out:
	return finish(cpu, ctl, page, ret);
}

int sgx_eacceptcopy(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
		    uint64_t secinfo, uint64_t dst, uint64_t src)
{
	struct sgx_secinfo si;
	struct sgx_epcm_entry *e;
	void *from;
	uint64_t f;
	long index;
	int ret;

	if (!cpu->config.sgx2 || !ctl)
		return SGX_GP;
	if (!placed(ctl, secinfo, 64) || !placed(ctl, dst, SGX_PAGE_SIZE) ||
	    !placed(ctl, src, SGX_PAGE_SIZE))
		return SGX_GP;
	ret = lock_secinfo(cpu, ctl, secinfo, &si);
	if (ret)
		goto out;
	f = si.flags;
	if ((!(f & SGX_SECINFO_R) && (f & SGX_SECINFO_W)) ||
	    (f & SGX_SECINFO_PT_MASK) != SGX_SECINFO_REG) {
		ret = SGX_GP;
		goto out;
	}
	/* The source: a page the enclave could read (#PF otherwise). */
	ret = sgx_encl_operand(cpu, ctl, src, SGX_PAGE_SIZE, SGX_PAGE_SIZE,
			       false, &from);
	if (ret)
		goto out;
	e = target(cpu, ctl, dst, &index);
	if (!e) {
		ret = SGX_PF;
		goto out;
	}
	if (!e->valid || !e->pending || e->modified ||
	    e->page_type != SGX_PT_REG || e->secs != ctl->secs_index ||
	    !e->r || !e->w || e->x || e->enclave_address != dst) {
		ret = SGX_PAGE_ATTRIBUTES_MISMATCH;
		goto out;
	}
	memcpy(sgx_epc_page(cpu, (size_t)index), from, SGX_PAGE_SIZE);
	e->r = !!(f & SGX_SECINFO_R);
	e->w = !!(f & SGX_SECINFO_W);
	e->x = !!(f & SGX_SECINFO_X);
	e->pending = 0;
out:
	return finish(cpu, ctl, dst, ret);
}

int sgx_emodpe(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
	       uint64_t secinfo, uint64_t page)
{
	struct sgx_secinfo si;
	struct sgx_epcm_entry *e;
	uint64_t f;
	long index;
	int ret;

	if (!cpu->config.sgx2 || !ctl)
		return SGX_GP;
	if (!placed(ctl, secinfo, 64) || !placed(ctl, page, SGX_PAGE_SIZE))
		return SGX_GP;
	ret = lock_secinfo(cpu, ctl, secinfo, &si);
	if (ret)
		goto out;
	f = si.flags;
	e = target(cpu, ctl, page, &index);
	if (!e || !e->valid || e->pending || e->modified || e->blocked ||
	    e->page_type != SGX_PT_REG || e->secs != ctl->secs_index ||
	    e->enclave_address != page) {
		ret = SGX_PF;
		goto out;
	}
	/* The result may not be writable without being readable. */
	if (!e->r && !(f & SGX_SECINFO_R) && (f & SGX_SECINFO_W)) {
		ret = SGX_GP;
		goto out;
	}
	e->r |= !!(f & SGX_SECINFO_R);
	e->w |= !!(f & SGX_SECINFO_W);
	e->x |= !!(f & SGX_SECINFO_X);
out:
	return finish(cpu, ctl, page, ret);
}
