/* SPDX-License-Identifier: MIT */
/*
 * libsgxemu.so internals: the real libc functions the shim wraps, the
 * published vDSO, and the descriptor table that says which fds stand for
 * SGX device files.
 *
 *   init.c        start-up (vDSO publication), sigaction/signal
 *   interpose.c   open, close/dup, ioctl, mmap/mprotect/munmap/mremap, fork
 *   stat.c        the stat family and access for the device paths
 *   vdso.c        the published vDSO image
 *   vdso_entry.S  __vdso_sgx_enter_enclave (both ABIs)
 *   cpuid.c       host CPUID as the emulated part's: the mechanism, the
 *                 trap signal's handler and the program's disposition of
 *                 it, dlopen/dlmopen/dlclose
 *   cpuid_rewrite.c  CPUID instructions found by decoding, rewritten to UD2
 *   exec.c        the program's environment; the shim carried to children
 *   auxv.c        every view of the auxiliary vector and the vDSO agrees
 *   power.c       platform events on request (power-cycle), its socket
 *   audit/        the rtld-audit module that starts the shim before any
 *                 constructor (a library of its own)
 */
#ifndef SGXEMU_SHIM_H
#define SGXEMU_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/types.h>

#include "driver/driver.h"

/*
 * SHIM_REAL(ret, name, args...) declares get_name(), which returns libc's
 * own function (dlsym(RTLD_NEXT), looked up once, on first use: other
 * libraries' constructors may call a wrapper before ours has run).
 */
#define SHIM_REAL(ret, name, ...) \
	static ret (*real_##name)(__VA_ARGS__); \
	static inline ret (*get_##name(void))(__VA_ARGS__) \
	{ \
		if (!real_##name) \
			real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name); \
		return real_##name; \
	}

/*
 * libc declares most path arguments nonnull, which lets the compiler drop
 * NULL tests; hiding the pointer's origin keeps them, so NULL reaches libc
 * (EFAULT) instead of crashing here.
 */
static inline const char *shim_opaque(const char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* A device path, or a /proc file the shim serves (auxv.c). */
static inline bool shim_maybe_dev(const char *path)
{
	path = shim_opaque(path);
	return path && path[0] == '/' &&
	       ((path[1] == 'd' && path[2] == 'e') ||
		(path[1] == 'p' && path[2] == 'r'));
}

static inline bool shim_empty_path(const char *path)
{
	path = shim_opaque(path);
	return path && !path[0];
}

/* The device file behind @fd with a reference (drop it with
 * sgx_file_put()), or NULL for any other descriptor (interpose.c). */
struct sgx_file *shim_fd_get(int fd);

/* stat.c's start-up: the devices' timestamps. */
void shim_stat_init(void);

/* libc's own versions for the rest of the library. */
void *shim_real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off);
int shim_real_munmap(void *addr, size_t len);
int shim_real_mprotect(void *addr, size_t len, int prot);
int shim_real_close(int fd);

/* The wrappers' work as for a call from the program (the raw system
 * calls, rawsys.c, are made from inside libsgxemu.so). */
void *shim_app_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
int shim_app_munmap(void *addr, size_t len);
int shim_app_mprotect(void *addr, size_t len, int prot);
void *shim_app_mremap(void *old, size_t old_len, size_t new_len, int flags,
		      void *new_addr, bool internal);
int shim_app_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old);

/* rawsys.c: the program's own SYSCALL instructions (start-up; SIGSYS's
 * disposition as the program sees it). */
void shim_rawsys_init(void);
bool shim_rawsys_owns(int sig);
int shim_rawsys_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old);

/* sigchain.c: the program's disposition of a signal the shim takes first. */
struct shim_disp {
	struct sigaction act;
	pthread_mutex_t lock;
};
#define SHIM_DISP_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }
int shim_disp_sigaction(struct shim_disp *d, const struct sigaction *act,
			struct sigaction *old);
void shim_disp_chain(struct shim_disp *d, int sig, siginfo_t *si,
		     ucontext_t *uc, bool reruns,
		     int (*set)(int, const struct sigaction *,
				struct sigaction *));

/* True when @ret_addr (a caller's return address) is inside libsgxemu.so:
 * the engine's and driver's own mmap/mprotect/sigaction calls must reach
 * libc untouched. */
bool shim_internal_caller(const void *ret_addr);

/* Build the vDSO image whose __vdso_sgx_enter_enclave leads to @entry. */
int shim_vdso_build(void *entry, void **image);
/* Point AT_SYSINFO_EHDR at @image (envp: the initial environment). */
int shim_vdso_publish(char **envp, void *image);
void *shim_vdso_image(void);
/* The kernel's vDSO that the image stands for (@size: its extent), and
 * the auxiliary vector that names the image; NULL before publication. */
const void *shim_vdso_real(size_t *size);
const Elf64_auxv_t *shim_auxv_vector(void);
/* auxv.c: open() of the process's own /proc auxv file (-2: another path). */
int shim_auxv_open(const char *path, int flags);
/* Set @bits in the initial auxiliary vector's entry @type (-ENOENT if the
 * vector has none). */
int shim_auxv_or(char **envp, unsigned long type, uint64_t bits);

/* The entry code (vdso_entry.S). */
void sgxemu_vdso_sgx_enter_enclave(void);
/* Which ABI the entry follows: SGXEMU_VDSO_ABI_CALL decides per call
 * (sgxemu_vdso_seed_call), the others force mainline (struct
 * sgx_enclave_run) or seed (v22: leaf in EAX, tcs/exinfo/callback on the
 * stack). */
enum { SGXEMU_VDSO_ABI_CALL, SGXEMU_VDSO_ABI_SEED, SGXEMU_VDSO_ABI_MAIN };
extern uint8_t sgxemu_vdso_abi;
/* True when a call's first stack argument @arg is a TCS (inside some
 * enclave's ELRANGE, page aligned): the v22 convention; a mainline
 * struct sgx_enclave_run lives in the program's own memory. */
bool sgxemu_vdso_seed_call(uint64_t arg);
/* The engine's ENCLU entry, called with ENCLU register semantics. */
extern void *sgxemu_vdso_enclu;
/* Addresses for the engine's exception fixup table (AEP -> handler). */
extern char sgxemu_vdso_main_aep[], sgxemu_vdso_main_fixup[];
extern char sgxemu_vdso_seed_aep[], sgxemu_vdso_seed_fixup[];

/* exec.c: the shim's own variables kept for children (@audit: the audit
 * module's path when it started us), and taken out of what the program
 * sees once libc has set environ. */
void shim_exec_init(const char *audit);
void shim_env_hide(char **stack_envp);

/* Bring the engine's side up (exception fixups, signal routing) once the
 * first enclave device is open. */
void shim_engine_start(void);

/* power.c: platform events from outside (the platform's socket), once
 * the platform is up; the fork child serves its own. */
void shim_power_start(void);
void shim_power_fork_child(void);

/* cpuid.c: start-up (before main), the platform's values once it is up,
 * the fork child, new executable file mappings (mmap/mprotect PROT_EXEC). */
void shim_cpuid_init(void);
void shim_cpuid_platform_up(void);
void shim_cpuid_fork_child(void);
void shim_cpuid_exec_mapped(void);
/* The trap's signal: the program's disposition of it is kept by cpuid.c
 * (sigaction's contract, 0 or -1 with errno). */
bool shim_cpuid_owns(int sig);
int shim_cpuid_sigaction(int sig, const struct sigaction *act,
			 struct sigaction *old);
/* cpuid_rewrite.c: scan what is newly mapped, forget what is gone;
 * returns the number of CPUIDs rewritten. */
size_t shim_cpuid_rewrite_scan(void);
void shim_cpuid_rewrite_fork_child(void);

/* Log a line on stderr when SGXEMU_DEBUG is set. */
void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SGXEMU_SHIM_H */
