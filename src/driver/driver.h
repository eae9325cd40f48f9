/* SPDX-License-Identifier: MIT */
/*
 * The SGX driver as a library: what the Linux driver does for the device
 * files, their ioctls and their mappings, for both user APIs (the seed's
 * v22 API and the mainline API, on every device path).
 *
 * The shim (src/shim/) maps libc calls onto these functions; tests can call
 * them directly. Every function returns the kernel's errno as -errno and
 * never crashes on a bad user pointer.
 *
 * Files:
 *   driver.c  open files, enclave objects and their lifetime, fork
 *   ioctl.c   the ioctls of both APIs
 *   vma.c     mmap/mprotect/munmap/mremap of enclave memory
 */
#ifndef SGXEMU_DRIVER_H
#define SGXEMU_DRIVER_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The two names of each device. As on a machine with Intel's PSW,
 * /dev/sgx/enclave and /dev/sgx/provision are symlinks to /dev/sgx_enclave
 * and /dev/sgx_provision: one device each, and both user APIs (mainline
 * and the seed's v22) are served whichever name opened it; each enclave
 * speaks the API its program uses (drv.h, enum sgx_encl_api).
 */
enum sgx_api {
	SGX_API_MAINLINE = 0,	/* /dev/sgx_enclave, /dev/sgx_provision */
	SGX_API_SEED = 1,	/* /dev/sgx/enclave, /dev/sgx/provision (links) */
};

enum sgx_dev {
	SGX_DEV_ENCLAVE = 0,
	SGX_DEV_PROVISION = 1,
};

/* One open file description of an SGX device (shared by dup and fork). */
struct sgx_file;

/*
 * Which device @path names: 0 with *api and *dev set, or -ENOENT for every
 * other path. Repeated slashes are accepted ("/dev//sgx_enclave").
 */
int sgx_dev_match(const char *path, enum sgx_api *api, enum sgx_dev *dev);
/* The canonical path of a device ("/dev/sgx_enclave", ...). */
const char *sgx_dev_path(enum sgx_api api, enum sgx_dev dev);
/* A plausible device number (misc major 10) for stat; both names of a
 * device have the same. */
dev_t sgx_dev_rdev(enum sgx_dev dev);

/*
 * open(): a new file. Opening an enclave device creates a new, empty
 * enclave. Returns NULL with *err = -errno on failure.
 */
struct sgx_file *sgx_drv_open(enum sgx_api api, enum sgx_dev dev, int *err);
/* References: one per fd (dup adds one) and one per mapping. */
void sgx_file_get(struct sgx_file *f);
/* Dropping the last reference releases the enclave: every page EREMOVEd,
 * the SECS last. */
void sgx_file_put(struct sgx_file *f);
enum sgx_api sgx_file_api(const struct sgx_file *f);
/* The open's access mode (O_RDONLY, O_WRONLY, O_RDWR): a window with
 * PROT_WRITE needs a writable file, as for any shared file mapping. */
void sgx_file_set_accmode(struct sgx_file *f, int accmode);
enum sgx_dev sgx_file_dev(const struct sgx_file *f);

/*
 * The driver resolves fds (the argument of PROVISION / SET_ATTRIBUTE)
 * through this function, which the shim provides: the file with a
 * reference (the driver drops it), or NULL for an fd that is no SGX
 * device file.
 */
void sgx_drv_set_fd_resolver(struct sgx_file *(*resolve)(int fd));

/* ioctl(): the result (>= 0) or -errno. */
long sgx_drv_ioctl(struct sgx_file *f, unsigned long cmd, unsigned long arg);

/*
 * mmap() of a device file: the address, or MAP_FAILED with *err = -errno.
 * offset is ignored, as the kernel ignores it.
 */
void *sgx_drv_mmap(struct sgx_file *f, void *addr, size_t len, int prot,
		   int flags, off_t offset, int *err);

/* True when some enclave mapping exists (the shim's fast path test). */
bool sgx_vma_active(void);
/*
 * mprotect/munmap/mremap over ranges that may hold enclave mappings.
 * They return 1 when [addr, addr+len) touches no enclave mapping (the
 * caller passes the call through), 0 on success, or -errno.
 */
int sgx_vma_mprotect(void *addr, size_t len, int prot);
int sgx_vma_munmap(void *addr, size_t len);
int sgx_vma_mremap(void *old, size_t old_len, size_t new_len, int flags,
		   void *new_addr, void **result);
/* An mmap that is not of a device file but lands over enclave mappings
 * (MAP_FIXED) replaces them, as the kernel does: forget them first. */
void sgx_vma_forget(void *addr, size_t len);

/*
 * Who else wants to know of an enclave's life (src/cov/, coverage of
 * enclave code): @initialized after a successful EINIT, @releasing when
 * the last reference goes, before its pages are removed. Neither may
 * change the enclave. One observer; NULL for none.
 */
struct sgxemu_enclave;
struct sgx_drv_observer {
	void (*initialized)(struct sgxemu_enclave *e);
	void (*releasing)(struct sgxemu_enclave *e);
};
void sgx_drv_set_observer(const struct sgx_drv_observer *o);
extern const struct sgx_drv_observer *sgx_drv_observer;

/* fork(): keep the driver's locks consistent across it. */
void sgx_drv_fork_prepare(void);
void sgx_drv_fork_parent(void);
void sgx_drv_fork_child(void);

/*
 * A suspend to S3 and the resume after it, on request (power.c): every
 * enclave of the process lost, as hardware loses the EPC; the threads in
 * enclave mode leave it first. The number of enclaves lost, or -errno.
 */
int sgx_drv_power_cycle(void);
/*
 * The thread that serves such requests (the shim's) is the platform's, as
 * the reclaimer is: once it runs, the shim says so, and the engine's count
 * of the program's own threads leaves it out (ENCLU sites are rewritten
 * only while the program has one thread).
 */
void sgx_drv_event_thread_started(void);
int sgx_drv_event_threads(void);

/* Refusal reasons go to stderr when this is set (SGXEMU_DEBUG). */
extern bool sgx_drv_debug;
void sgx_drv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same line, unconditionally ("sgxemu: " prefix, one write). */
void sgx_drv_vlog(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif /* SGXEMU_DRIVER_H */
