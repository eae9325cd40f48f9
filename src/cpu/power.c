/* SPDX-License-Identifier: MIT */
/*
 * What a power transition does to the processor's SGX state (the SDM's
 * SGX chapters on power management; linux-driver-facts.md §0.4, §8.3): on
 * S3, S4 or a reset the EPC's protection keys are lost with the platform's
 * memory encryption, so at resume every EPC page is garbage and every EPCM
 * entry invalid. Nothing is written back and nothing is told to software:
 * the kernel still believes its pages are there, and learns otherwise
 * only when a leaf meets one (EENTER and ERESUME #PF on the TCS, with the
 * SGX bit in the error code; ENCLS leaves #PF, or EBLOCK's SGX_PG_INVLD).
 * EREMOVE of an invalid page succeeds, so tearing a lost enclave down
 * works as for any other.
 *
 * The paging key (CR_BASE_PK) is chosen anew at each power-up, and the VA
 * pages that held the versions of evicted pages were in the EPC too: an
 * enclave page written back before the loss can never be loaded again.
 */
#include <sched.h>
#include <string.h>

#include "cpu/internal.h"

void sgx_power_suspend(struct sgx_cpu *cpu)
{
	atomic_store(&cpu->suspended, true);
}

unsigned sgx_power_lps_inside(struct sgx_cpu *cpu)
{
	unsigned n = 0;

	pthread_mutex_lock(&cpu->lock);
	for (struct sgx_encl_ctl *ctl = cpu->enclaves; ctl; ctl = ctl->next)
		n += atomic_load(&ctl->threads_at[0]) +
		     atomic_load(&ctl->threads_at[1]);
	pthread_mutex_unlock(&cpu->lock);
	return n;
}

void sgx_power_resume(struct sgx_cpu *cpu)
{
	atomic_store(&cpu->suspended, false);
}

/*
 * While the platform sleeps no logical processor runs: an EENTER or
 * ERESUME issued meanwhile (a kicked thread's AEP, another thread's next
 * call) completes at resume, against the EPCM the resume left. So no
 * thread learns of the loss while another still runs in the enclave that
 * is being lost. Async-signal-safe: the engine enters from its handlers.
 */
void sgx_power_wait_awake(struct sgx_cpu *cpu)
{
	while (atomic_load_explicit(&cpu->suspended, memory_order_acquire))
		sched_yield();
}

unsigned sgx_power_loss(struct sgx_cpu *cpu)
{
	struct sgx_encl_ctl *ctl, *next;
	unsigned lost = 0;

	pthread_mutex_lock(&cpu->lock);
	/*
	 * The engine and the driver hold pointers to the enclaves' hidden
	 * state (threads that were in enclave mode a moment ago among
	 * them): it moves to the lost list, out of every lookup, instead of
	 * being freed under them.
	 */
	for (ctl = cpu->enclaves; ctl; ctl = next) {
		next = ctl->next;
		ctl->next = cpu->lost;
		cpu->lost = ctl;
		lost++;
	}
	cpu->enclaves = NULL;
	for (size_t i = 0; i < cpu->nr_pages; i++) {
		memset(&cpu->epcm[i], 0, sizeof(cpu->epcm[i]));
		cpu->ctl[i] = NULL;
	}
	memset(cpu->paging_key, 0, sizeof(cpu->paging_key));
	cpu->paging_key_set = false;
	pthread_mutex_unlock(&cpu->lock);
	return lost;
}

void sgx_power_lost_free(struct sgx_cpu *cpu, long index)
{
	for (struct sgx_encl_ctl **p = &cpu->lost; *p; p = &(*p)->next) {
		struct sgx_encl_ctl *ctl = *p;

		/* A SECS written back before the loss left its page to
		 * another owner: that page's EREMOVE is not this one's end. */
		if (ctl->secs_index != (size_t)index || ctl->secs_evicted)
			continue;
		*p = ctl->next;
		pthread_mutex_lock(&ctl->lock);
		pthread_mutex_unlock(&ctl->lock);
		sgx_encl_ctl_free(ctl);
		return;
	}
}
