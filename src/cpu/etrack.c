// SPDX-License-Identifier: MIT
/*
 * ETRACK (ENCLS[0x0C], sgx-facts.md §4.9) and the entry-epoch accounting
 * behind it. Hardware tracks which logical processors might still hold TLB
 * entries of a blocked page; the model here (suggested in §4.9) keeps an
 * entry epoch per enclave, counts the threads in enclave mode per epoch,
 * and calls an ETRACK cycle complete when every thread that entered before
 * it has left enclave mode.
 */
#include "cpu/internal.h"
#include "cpu/paging.h"

/*
 * Count this thread in the current epoch. The re-check closes the race
 * with a concurrent ETRACK: a thread that counted itself in epoch e while
 * the epoch moved on retries, so a counted thread is always visible to the
 * first ETRACK cycle that starts after it entered.
 */
uint64_t sgx_track_enter(struct sgx_encl_ctl *ctl)
{
	for (;;) {
		uint64_t e = atomic_load(&ctl->epoch);

		atomic_fetch_add(&ctl->threads_at[e & 1], 1);
		if (atomic_load(&ctl->epoch) == e)
			return e;
		atomic_fetch_sub(&ctl->threads_at[e & 1], 1);
	}
}

void sgx_track_exit(struct sgx_encl_ctl *ctl, uint64_t entry_epoch)
{
	atomic_fetch_sub(&ctl->threads_at[entry_epoch & 1], 1);
}

int sgx_etrack(struct sgx_cpu *cpu, void *secs)
{
	struct sgx_epcm_entry *e;
	struct sgx_encl_ctl *ctl;
	uint64_t epoch;
	long index;
	int ret = 0;

	if (!sgx_aligned(secs, SGX_PAGE_SIZE))
		return SGX_GP;
	index = sgx_epc_index(cpu, secs);
	if (index < 0)
		return SGX_PF;

	pthread_mutex_lock(&cpu->lock);
	e = &cpu->epcm[index];
	if (!e->valid || e->page_type != SGX_PT_SECS) {
		ret = SGX_PF;
		goto out;
	}
	ctl = cpu->ctl[index];
	pthread_mutex_lock(&ctl->lock);
	epoch = atomic_load(&ctl->epoch);
	/* Threads of the previous cycle (entered before the last ETRACK). */
	if (epoch > 0 && atomic_load(&ctl->threads_at[(epoch - 1) & 1]))
		ret = SGX_PREV_TRK_INCMPL;
	else
		atomic_store(&ctl->epoch, epoch + 1);
	pthread_mutex_unlock(&ctl->lock);
out:
	pthread_mutex_unlock(&cpu->lock);
	return ret;
}

/*
 * EWB's question: has an ETRACK cycle that started after this page was
 * blocked (at epoch @blocked) completed? Called with ctl->lock held.
 */
bool sgx_tracking_done(struct sgx_encl_ctl *ctl, uint64_t blocked)
{
	uint64_t epoch = atomic_load(&ctl->epoch);

	if (epoch <= blocked)
		return false;		/* no ETRACK since EBLOCK */
	if (epoch > blocked + 1)
		return true;		/* a later ETRACK needed this cycle done */
	return atomic_load(&ctl->threads_at[blocked & 1]) == 0;
}

/*
 * True when the ETRACK cycle started last has completed: no logical
 * processor that entered before it is still in enclave mode. The kernel
 * learns this by the completion of its IPI, which forces an AEX on every
 * CPU; the emulator's kick is asynchronous, so the driver waits on this.
 */
bool sgx_track_cycle_done(struct sgx_encl_ctl *ctl)
{
	uint64_t epoch = atomic_load(&ctl->epoch);

	return epoch == 0 || atomic_load(&ctl->threads_at[(epoch - 1) & 1]) == 0;
}
