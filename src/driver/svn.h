/* SPDX-License-Identifier: MIT */
/*
 * The kernel's SGX usage count (svn.c): taken at each open of an enclave
 * device, where the count going from 0 to 1 runs ENCLS[EUPDATESVN]
 * (0, -EAGAIN or -EIO), and given back when the enclave object is freed.
 */
#ifndef SGXEMU_DRIVER_SVN_H
#define SGXEMU_DRIVER_SVN_H

struct sgx_cpu;

int sgx_inc_usage_count(void);
/* The leaf the count calls: sgx_eupdatesvn, or a test's stand-in that
 * returns each SGX code in turn (tests/integration/test_svn.c). */
extern int (*sgx_eupdatesvn_leaf)(struct sgx_cpu *cpu);
void sgx_dec_usage_count(void);
/* The child of a fork starts the count's lock afresh (driver.c). */
void sgx_svn_fork_child(void);

#endif /* SGXEMU_DRIVER_SVN_H */
