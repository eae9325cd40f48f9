/* SPDX-License-Identifier: MIT */
/*
 * A power transition on request (docs/guide.md "Platform events"): what a
 * suspend to S3 or S4 and the resume after it do to this process's
 * enclaves. The processor loses the EPC and the EPCM (src/cpu/power.c);
 * the kernel is not told and changes nothing of its own: its enclaves,
 * pages, VA slots and mappings stay as they were, and it meets the loss
 * only as faults of the leaves it runs later (EREMOVE at release succeeds
 * on the invalid pages, a reload of an evicted page fails, EADD and EINIT
 * fault). Programs meet it at their next EENTER or ERESUME: #PF with the
 * SGX bit on the TCS, which the vDSO reports in struct sgx_enclave_run
 * and host ENCLU as SIGSEGV (linux-driver-facts.md §8.3).
 *
 * The host mappings of the lost enclaves follow their EPCM, as after any
 * EPCM change: host code meets the abort page there (abort_page.c).
 *
 * A thread in enclave mode at the moment of the suspend takes the
 * interrupt's AEX first, and its AEP's ERESUME is what faults: the same
 * kick the reclaimer's ETRACK uses (src/engine/kick.c) makes it AEX, and
 * its ERESUME, like every other entry, waits while the platform sleeps
 * (sgx_power_suspend), so that nothing runs in an enclave after another
 * thread has seen it lost, as on hardware, where all CPUs sleep at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "driver/drv.h"
#include "driver/paging.h"

/*
 * Kick every thread in enclave mode until the processor counts none in
 * it. Bounded (about two seconds): a thread that missed every kick AEXes
 * at its next interrupt anyway.
 */
static void leave_enclave_mode(struct sgx_file **files, size_t n)
{
	struct sgx_cpu *cpu = sgxemu__cpu();
	struct timespec ts = { 0, 100000 };

	for (unsigned tries = 0; sgx_power_lps_inside(cpu) && tries < 20000;
	     tries++) {
		for (size_t i = 0; tries % 20 == 0 && i < n; i++) {
			int kicked = sgxemu__kick(files[i]->encl->engine);

			atomic_fetch_add(&sgxemu__st_kicks, (uint64_t)kicked);
		}
		nanosleep(&ts, NULL);
	}
}

static pid_t event_thread_pid;

/* Counted only once it runs, in the process that started it: a thread
 * counted too early would let the engine take a program thread for it. */
void sgx_drv_event_thread_started(void)
{
	__atomic_store_n(&event_thread_pid, getpid(), __ATOMIC_RELEASE);
}

int sgx_drv_event_threads(void)
{
	return __atomic_load_n(&event_thread_pid, __ATOMIC_ACQUIRE) == getpid();
}

int sgx_drv_power_cycle(void)
{
	struct sgx_file **files = NULL;
	size_t n = 0, cap = 0;
	unsigned lost;
	int ret = 0;

	/* No platform yet: no EPC, nothing to lose. */
	if (!__atomic_load_n(&sgxemu__platform.ready, __ATOMIC_ACQUIRE))
		return 0;
	/* No fork copies the driver half way through (as the ioctls). */
	pthread_rwlock_rdlock(&sgx_fork_lock);
	pthread_mutex_lock(&sgx_drv_lock);
	for (struct sgx_file *f = sgx_drv_files(); f; f = f->next) {
		if (!f->encl || !f->encl->engine)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct sgx_file **nf;

			nf = realloc(files, ncap * sizeof(*nf));

			if (!nf) {
				ret = -ENOMEM;
				break;
			}
			files = nf;
			cap = ncap;
		}
		sgx_file_get(f);
		files[n++] = f;
	}
	pthread_mutex_unlock(&sgx_drv_lock);
	if (!ret) {
		struct sgx_cpu *cpu = sgxemu__cpu();

		/* The suspend: every thread out of enclave mode, none let
		 * back in, before anything is lost. */
		sgx_power_suspend(cpu);
		leave_enclave_mode(files, n);
		/* The reclaimer is not half way through a batch meanwhile. */
		sgxemu__paging_lock();
		lost = sgx_power_loss(cpu);
		sgxemu__paging_unlock();
		/* The host mappings follow the EPCM (cpu.h, epcm_changed):
		 * nothing of a lost enclave is accessible any more. */
		for (size_t i = 0; i < n; i++) {
			struct sgxemu_enclave *e = files[i]->encl->engine;

			pthread_mutex_lock(&e->lock);
			sgxemu__map_pages(e, 0, e->npages, false);
			pthread_mutex_unlock(&e->lock);
		}
		sgx_power_resume(cpu);
		ret = (int)lost;
	}
	pthread_rwlock_unlock(&sgx_fork_lock);
	for (size_t i = 0; i < n; i++)
		sgx_file_put(files[i]);
	free(files);
	return ret;
}
