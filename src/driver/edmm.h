/* SPDX-License-Identifier: MIT */
/*
 * SGX2 / EDMM in the driver (linux-driver-facts.md §7, §8.2): the page
 * operations behind SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, _MODIFY_TYPES
 * and _REMOVE_PAGES (edmm.c, ioctl_sgx2.c), and EAUG on fault.
 *
 * Locking: the page operations take sgxemu_enclave.lock, then the paging
 * lock, per page; the fault path takes only the paging lock (it runs in
 * the engine's signal handlers, after the AEX), which is what serialises
 * an EAUG against the ioctls and the reclaimer.
 */
#ifndef SGXEMU_DRIVER_EDMM_H
#define SGXEMU_DRIVER_EDMM_H

#include <stdbool.h>
#include <stdint.h>

#include "driver/drv.h"
#include "engine/engine.h"

#pragma GCC visibility push(hidden)

/*
 * The mainline driver's enclave behind an engine enclave: only those
 * EAUG on fault (the seed v22 API adds pages by ADD_PAGE alone). Attached
 * at CREATE, detached before release.
 */
void sgx_edmm_attach(struct sgx_encl *encl);
void sgx_edmm_detach(struct sgx_encl *encl);

/* True when @e is a mainline (not seed v22) driver's enclave. */
bool sgxemu__edmm_mainline(struct sgxemu_enclave *e);

/* True when the platform enumerates SGX2 (CPUID.(12H,0):EAX[1]). */
bool sgx_edmm_sgx2(void);

/*
 * One page of each ioctl, at @addr (page-aligned, inside ELRANGE), with
 * the ioctl's permissions or page type (REMOVE_PAGES: none): 0 or the
 * kernel's -errno. An SGX status of the leaf goes to *@status (the ioctl
 * then fails with -EFAULT); REMOVE_PAGES has none.
 */
int sgx_edmm_restrict(struct sgx_encl *encl, uint64_t addr, uint64_t perms,
		      uint64_t *status);
int sgx_edmm_modify_type(struct sgx_encl *encl, uint64_t addr, uint64_t type,
			 uint64_t *status);
int sgx_edmm_remove(struct sgx_encl *encl, uint64_t addr, uint64_t unused,
		    uint64_t *no_status);

/*
 * The fault path (fault.c). sgxemu__edmm_can_eaug: no page exists at page
 * @n of @e, @e is a mainline enclave on an SGX2 platform, and a window of
 * the program's maps it with permissions allowing an access of kind
 * @kerr (a #PF error code; 0 = any). sgxemu__edmm_eaug: EAUG it (paging
 * lock held): 0, or -EFAULT for the kernel's SIGBUS.
 */
bool sgxemu__edmm_can_eaug(struct sgxemu_enclave *e, size_t n, uint32_t kerr);
int sgxemu__edmm_eaug(struct sgxemu_enclave *e, size_t n);
/*
 * The same on a thread still in enclave mode (before any AEX; paging lock
 * taken with trylock): only when it cannot wait for any thread (no
 * reclaim, no new VA page). 0, or -EAGAIN for the AEX path.
 */
int sgxemu__edmm_eaug_now(struct sgxemu_enclave *e, size_t n);

/* The processor's epcm_changed hook (struct sgx_cpu), set at ECREATE. */
void sgxemu__epcm_changed(struct sgx_cpu *cpu, struct sgx_encl_ctl *ctl,
			  uint64_t linaddr);

#pragma GCC visibility pop
#endif
