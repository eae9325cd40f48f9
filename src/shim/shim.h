/* SPDX-License-Identifier: MIT */
/*
 * libsgxemu.so internals: the real libc functions the shim wraps, the
 * published vDSO, and the descriptor table that says which fds stand for
 * SGX device files.
 */
#ifndef SGXEMU_SHIM_H
#define SGXEMU_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver/driver.h"

/* libc's own versions (dlsym(RTLD_NEXT)); resolved on first use. */
void *shim_real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off);
int shim_real_munmap(void *addr, size_t len);
int shim_real_mprotect(void *addr, size_t len, int prot);
int shim_real_close(int fd);

/* True when @ret_addr (a caller's return address) is inside libsgxemu.so:
 * the engine's and driver's own mmap/mprotect/sigaction calls must reach
 * libc untouched. */
bool shim_internal_caller(const void *ret_addr);

/* Build the vDSO image whose __vdso_sgx_enter_enclave leads to @entry. */
int shim_vdso_build(void *entry, void **image);
/* Point AT_SYSINFO_EHDR at @image (envp: the initial environment). */
int shim_vdso_publish(char **envp, void *image);
void *shim_vdso_image(void);

/* The entry code (vdso_entry.S). */
void sgxemu_vdso_sgx_enter_enclave(void);
/* Which ABI the entry follows: 0 mainline (struct sgx_enclave_run), 1 seed
 * (v22: leaf in EAX, tcs/exinfo/callback on the stack). */
extern uint8_t sgxemu_vdso_abi;
/* The engine's ENCLU entry, called with ENCLU register semantics. */
extern void *sgxemu_vdso_enclu;
/* Addresses for the engine's exception fixup table (AEP -> handler). */
extern char sgxemu_vdso_main_aep[], sgxemu_vdso_main_fixup[];
extern char sgxemu_vdso_seed_aep[], sgxemu_vdso_seed_fixup[];

/* Bring the engine's side up (exception fixups, signal routing) once the
 * first enclave device is open. */
void shim_engine_start(void);

/* Log a line on stderr when SGXEMU_DEBUG is set. */
void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SGXEMU_SHIM_H */
