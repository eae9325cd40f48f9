/* SPDX-License-Identifier: MIT */
/*
 * Where the driver meets the security hooks (src/lsm/): the calls the
 * kernel's SGX driver would make into the LSM layer at page add, EINIT,
 * mmap/mprotect and provision open, plus audit records for the driver's
 * own refusals, so that every refused attack leaves a record.
 */
#ifndef SGXEMU_DRIVER_SECURITY_H
#define SGXEMU_DRIVER_SECURITY_H

#include <stdbool.h>
#include <stdint.h>

#include "driver/page_source.h"
#include "driver/drv.h"

/*
 * Page add: the source mapping of @src (cached in @ps across the pages of
 * one ioctl) must exist (-EFAULT) and pass the policy; *@max (PROT_* bits)
 * may lose PROT_EXEC. 0 or -errno.
 */
int sgx_sec_page_add(struct sgx_file *f, uint64_t addr, unsigned long src,
		     struct sgx_page_source *ps, uint8_t *max);

/* EINIT: the enclave's identity from its SIGSTRUCT against the policy. */
int sgx_sec_init(struct sgx_file *f, const struct sgx_sigstruct *ss);

/* mmap/mprotect of [start, end) with @prot, after the driver's own rules. */
int sgx_sec_map(const struct sgx_file *f, uint64_t start, uint64_t end,
		int prot, bool is_mprotect);

/* Opening a provision device. */
int sgx_sec_provision_open(enum sgx_api api);

/* Audit one of the driver's own refusals (rule: a short name). */
void sgx_sec_denied(const struct sgx_file *f, const char *op, uint64_t addr,
		    int requested, int allowed, const char *rule, int err);

#endif /* SGXEMU_DRIVER_SECURITY_H */
