/* SPDX-License-Identifier: MIT */
/*
 * The libc functions libsgxemu.so replaces. Each one first asks "is this an
 * SGX device file or enclave memory?" with at most a table load and a
 * counter test, and otherwise calls libc's own function unchanged, so a
 * program that never touches SGX pays nothing measurable.
 *
 * A device file is a real descriptor: a sealed, empty memfd named after the
 * device. It closes, dups, survives fork and shows in /proc/self/fd like
 * any file; the table below maps it to the driver's open file. Entries are
 * checked against the memfd's inode before use, so a descriptor closed
 * behind the shim's back (raw syscalls, closefrom) and reused for another
 * file is never mistaken for a device.
 *
 * Calls made by libsgxemu.so itself (the engine mapping EPC pages, the
 * driver reserving ELRANGE, handlers being installed) are recognised by
 * their return address and passed straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "driver/drv.h"
#include "shim/shim.h"

#define SHIM_MAX_FD	65536

/* --- libc's functions ----------------------------------------------------- */

SHIM_REAL(int, open, const char *, int, ...)
SHIM_REAL(int, open64, const char *, int, ...)
SHIM_REAL(int, openat, int, const char *, int, ...)
SHIM_REAL(int, openat64, int, const char *, int, ...)
SHIM_REAL(int, __open_2, const char *, int)
SHIM_REAL(int, __open64_2, const char *, int)
SHIM_REAL(int, __openat_2, int, const char *, int)
SHIM_REAL(int, __openat64_2, int, const char *, int)
SHIM_REAL(int, close, int)
SHIM_REAL(int, close_range, unsigned int, unsigned int, int)
SHIM_REAL(int, dup, int)
SHIM_REAL(int, dup2, int, int)
SHIM_REAL(int, dup3, int, int, int)
SHIM_REAL(int, fcntl, int, int, ...)
SHIM_REAL(int, fcntl64, int, int, ...)
SHIM_REAL(int, ioctl, int, unsigned long, ...)
SHIM_REAL(void *, mmap, void *, size_t, int, int, int, off_t)
SHIM_REAL(void *, mmap64, void *, size_t, int, int, int, off_t)
SHIM_REAL(int, munmap, void *, size_t)
SHIM_REAL(int, mprotect, void *, size_t, int)
SHIM_REAL(void *, mremap, void *, size_t, size_t, int, ...)
SHIM_REAL(pid_t, fork, void)
SHIM_REAL(int, fstat, int, struct stat *)

void *shim_real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		     off_t off)
{
	return get_mmap()(addr, len, prot, flags, fd, off);
}

int shim_real_munmap(void *addr, size_t len)
{
	return get_munmap()(addr, len);
}

int shim_real_mprotect(void *addr, size_t len, int prot)
{
	return get_mprotect()(addr, len, prot);
}

int shim_real_close(int fd)
{
	return get_close()(fd);
}

/* --- our own code's address range ---------------------------------------- */

static uintptr_t text_lo, text_hi;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t me = (uintptr_t)data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    me >= lo && me < lo + ph->p_memsz) {
			text_lo = lo;
			text_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void shim_find_text(void)
{
	dl_iterate_phdr(find_text, (void *)(uintptr_t)&shim_internal_caller);
}

bool shim_internal_caller(const void *ret_addr)
{
	uintptr_t a = (uintptr_t)ret_addr;

	return a >= text_lo && a < text_hi;
}

#define INTERNAL() shim_internal_caller(__builtin_return_address(0))

/* --- the descriptor table ------------------------------------------------- */

struct fd_entry {
	struct sgx_file *file;
	ino_t ino;
};

static struct fd_entry fdtab[SHIM_MAX_FD];
static atomic_int nr_dev_fds;	/* > 0 once a device was opened */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The device file behind @fd, with a reference the caller drops with
 * sgx_file_put() (as the kernel holds the file during a system call, so
 * that a close() in another thread cannot free it under the call). NULL
 * for every other descriptor, at the cost of one load.
 */
struct sgx_file *shim_fd_get(int fd)
{
	struct sgx_file *f;
	struct stat st;
	bool same;

	if (!atomic_load_explicit(&nr_dev_fds, memory_order_relaxed) ||
	    fd < 0 || fd >= SHIM_MAX_FD)
		return NULL;
	if (!__atomic_load_n(&fdtab[fd].file, __ATOMIC_ACQUIRE))
		return NULL;
	same = get_fstat()(fd, &st) == 0;
	pthread_mutex_lock(&fd_lock);
	f = fdtab[fd].file;
	if (f && same && st.st_ino == fdtab[fd].ino) {
		sgx_file_get(f);
		pthread_mutex_unlock(&fd_lock);
		return f;
	}
	/* Closed behind our back and perhaps reused: forget the entry. */
	fdtab[fd].file = NULL;
	pthread_mutex_unlock(&fd_lock);
	if (f)
		sgx_file_put(f);
	return NULL;
}

/* Attach @f (whose reference the caller gives us) to @fd. */
static void fd_attach(int fd, struct sgx_file *f, ino_t ino)
{
	struct sgx_file *old;

	pthread_mutex_lock(&fd_lock);
	old = fdtab[fd].file;
	fdtab[fd].ino = ino;
	__atomic_store_n(&fdtab[fd].file, f, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fd_lock);
	atomic_fetch_add(&nr_dev_fds, 1);
	if (old)
		sgx_file_put(old);
}

static struct sgx_file *fd_take(int fd)
{
	struct sgx_file *f;

	if (fd < 0 || fd >= SHIM_MAX_FD)
		return NULL;
	pthread_mutex_lock(&fd_lock);
	f = fdtab[fd].file;
	fdtab[fd].file = NULL;
	pthread_mutex_unlock(&fd_lock);
	return f;
}

/* The driver resolves PROVISION's fd argument here (a reference). */
static struct sgx_file *resolve_fd(int fd)
{
	return shim_fd_get(fd);
}

static ino_t fd_ino(int fd)
{
	struct stat st;

	return get_fstat()(fd, &st) ? 0 : st.st_ino;
}

/* After dup-like calls: @newfd now shares @oldfd's file. */
static void fd_dup(int oldfd, int newfd)
{
	struct sgx_file *f;

	if (newfd < 0)
		return;
	f = shim_fd_get(oldfd);
	if (!f) {
		/* newfd was closed implicitly (dup2 onto a device fd). */
		if (atomic_load(&nr_dev_fds)) {
			struct sgx_file *old = fd_take(newfd);

			if (old)
				sgx_file_put(old);
		}
		return;
	}
	if (newfd >= SHIM_MAX_FD) {
		/* Too high to track: refuse rather than half-work. */
		sgx_file_put(f);
		get_close()(newfd);
		errno = EMFILE;
		return;
	}
	/* fd_get's reference becomes newfd's. */
	fd_attach(newfd, f, fd_ino(newfd));
}

/* --- open ----------------------------------------------------------------- */

static int dev_open(const char *path, int flags)
{
	enum sgx_api api;
	enum sgx_dev dev;
	struct sgx_file *f;
	char name[32];
	int fd, err;

	if (path[1] == 'p')
		return shim_auxv_open(path, flags);
	if (sgx_dev_match(path, &api, &dev))
		return -2;	/* not ours */
	/* /dev/sgx/... are symlinks (stat.c): O_NOFOLLOW stops at them. */
	if (api == SGX_API_SEED && (flags & O_NOFOLLOW) && !(flags & O_PATH)) {
		errno = ELOOP;
		return -1;
	}
	if (flags & (O_DIRECTORY | O_PATH)) {
		errno = (flags & O_DIRECTORY) ? ENOTDIR : EINVAL;
		return -1;
	}
	/* Named after the device the path resolves to. */
	snprintf(name, sizeof(name), "%s",
		 strrchr(sgx_dev_path(SGX_API_MAINLINE, dev), '/') + 1);
	fd = memfd_create(name, MFD_ALLOW_SEALING |
			  ((flags & O_CLOEXEC) ? MFD_CLOEXEC : 0));
	if (fd < 0)
		return -1;
	/* The kernel's device has no read/write: an empty, sealed file keeps
	 * write() from storing anything. */
	fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_WRITE |
	      F_SEAL_SEAL);
	if (fd >= SHIM_MAX_FD) {
		get_close()(fd);
		errno = EMFILE;
		return -1;
	}
	f = sgx_drv_open(api, dev, &err);
	if (!f) {
		get_close()(fd);
		errno = -err;
		return -1;
	}
	sgx_file_set_accmode(f, flags & O_ACCMODE);
	if (dev == SGX_DEV_ENCLAVE)
		shim_engine_start();
	fd_attach(fd, f, fd_ino(fd));
	shim_log("open %s -> fd %d", sgx_dev_path(api, dev), fd);
	return fd;
}

#define OPEN_MODE(flags) ({ \
	mode_t _m = 0; \
	if ((flags) & (O_CREAT | __O_TMPFILE)) { \
		va_list ap; \
		va_start(ap, flags); \
		_m = va_arg(ap, mode_t); \
		va_end(ap); \
	} \
	_m; })

int open(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_open()(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_open64()(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_openat()(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_openat64()(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE builds call these for open() without a mode. */
int __open_2(const char *path, int flags)
{
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___open_2()(path, flags);
}

int __open64_2(const char *path, int flags)
{
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___open64_2()(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___openat_2()(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd;

	if (shim_maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___openat64_2()(dirfd, path, flags);
}

/* --- close and dup ------------------------------------------------------- */

int close(int fd)
{
	struct sgx_file *f = NULL;

	if (atomic_load_explicit(&nr_dev_fds, memory_order_relaxed))
		f = fd_take(fd);
	if (f)
		sgx_file_put(f);
	return get_close()(fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	int ret = get_close_range()(first, last, flags);

	if (!ret && !(flags & CLOSE_RANGE_CLOEXEC) &&
	    atomic_load(&nr_dev_fds)) {
		for (unsigned int fd = first; fd <= last && fd < SHIM_MAX_FD; fd++) {
			struct sgx_file *f = fd_take((int)fd);

			if (f)
				sgx_file_put(f);
		}
	}
	return ret;
}

int dup(int fd)
{
	int newfd = get_dup()(fd);

	if (newfd >= 0 && atomic_load_explicit(&nr_dev_fds, memory_order_relaxed))
		fd_dup(fd, newfd);
	return newfd;
}

int dup2(int fd, int newfd)
{
	int ret = get_dup2()(fd, newfd);

	if (ret >= 0 && fd != newfd &&
	    atomic_load_explicit(&nr_dev_fds, memory_order_relaxed))
		fd_dup(fd, ret);
	return ret;
}

int dup3(int fd, int newfd, int flags)
{
	int ret = get_dup3()(fd, newfd, flags);

	if (ret >= 0 && atomic_load_explicit(&nr_dev_fds, memory_order_relaxed))
		fd_dup(fd, ret);
	return ret;
}

static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	int ret = real(fd, cmd, arg);

	if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) &&
	    atomic_load_explicit(&nr_dev_fds, memory_order_relaxed))
		fd_dup(fd, ret);
	return ret;
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(get_fcntl(), fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return do_fcntl(get_fcntl64(), fd, cmd, arg);
}

/* --- ioctl ----------------------------------------------------------------- */

int ioctl(int fd, unsigned long req, ...)
{
	struct sgx_file *f;
	va_list ap;
	void *arg;
	long ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	f = shim_fd_get(fd);
	if (!f)
		return get_ioctl()(fd, req, arg);
	ret = sgx_drv_ioctl(f, req, (unsigned long)arg);
	sgx_file_put(f);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return (int)ret;
}

/* --- memory ------------------------------------------------------------------ */

static void *do_mmap(void *(*real)(void *, size_t, int, int, int, off_t),
		     void *addr, size_t len, int prot, int flags, int fd,
		     off_t off, bool internal)
{
	struct sgx_file *f;
	void *p;
	int err;

	if (internal)
		return real(addr, len, prot, flags, fd, off);
	if (!(flags & MAP_ANONYMOUS) && (f = shim_fd_get(fd))) {
		p = sgx_drv_mmap(f, addr, len, prot, flags, off, &err);
		sgx_file_put(f);
		if (p == MAP_FAILED)
			errno = -err;
		return p;
	}
	p = real(addr, len, prot, flags, fd, off);
	/* A fixed mapping replaces whatever enclave window was there. */
	if (p != MAP_FAILED && (flags & MAP_FIXED) && sgx_vma_active())
		sgx_vma_forget(p, len);
	/* New code from a file: its CPUIDs (cpuid_rewrite.c). */
	if (p != MAP_FAILED && (prot & PROT_EXEC) && !(flags & MAP_ANONYMOUS)) {
		int saved = errno;

		shim_cpuid_exec_mapped();
		errno = saved;
	}
	return p;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(get_mmap(), addr, len, prot, flags, fd, off, INTERNAL());
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(get_mmap64(), addr, len, prot, flags, fd, off, INTERNAL());
}

void *shim_app_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	return do_mmap(get_mmap(), addr, len, prot, flags, fd, off, false);
}

static int do_munmap(void *addr, size_t len, bool internal)
{
	int ret;

	if (!internal && sgx_vma_active()) {
		ret = sgx_vma_munmap(addr, len);
		if (ret <= 0) {
			if (ret < 0) {
				errno = -ret;
				return -1;
			}
			return 0;
		}
	}
	return get_munmap()(addr, len);
}

int munmap(void *addr, size_t len)
{
	return do_munmap(addr, len, INTERNAL());
}

int shim_app_munmap(void *addr, size_t len)
{
	return do_munmap(addr, len, false);
}

static int do_mprotect(void *addr, size_t len, int prot, bool internal)
{
	int ret;

	if (!internal && sgx_vma_active()) {
		ret = sgx_vma_mprotect(addr, len, prot);
		if (ret <= 0) {
			if (ret < 0) {
				errno = -ret;
				return -1;
			}
			return 0;
		}
	}
	ret = get_mprotect()(addr, len, prot);
	if (!ret && (prot & PROT_EXEC) && !internal) {
		int saved = errno;

		shim_cpuid_exec_mapped();
		errno = saved;
	}
	return ret;
}

int mprotect(void *addr, size_t len, int prot)
{
	return do_mprotect(addr, len, prot, INTERNAL());
}

int shim_app_mprotect(void *addr, size_t len, int prot)
{
	return do_mprotect(addr, len, prot, false);
}

void *shim_app_mremap(void *old, size_t old_len, size_t new_len, int flags,
		      void *new_addr, bool internal)
{
	void *res;
	int ret;

	if (!internal && sgx_vma_active()) {
		ret = sgx_vma_mremap(old, old_len, new_len, flags, new_addr, &res);
		if (ret <= 0) {
			if (ret < 0) {
				errno = -ret;
				return MAP_FAILED;
			}
			return res;
		}
	}
	return get_mremap()(old, old_len, new_len, flags, new_addr);
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	return shim_app_mremap(old, old_len, new_len, flags, new_addr,
			       INTERNAL());
}

/* --- fork -------------------------------------------------------------------- */

pid_t fork(void)
{
	pid_t pid;

	sgx_drv_fork_prepare();
	pid = get_fork()();
	if (pid == 0) {
		pthread_mutex_init(&fd_lock, NULL);
		shim_cpuid_fork_child();
		sgx_drv_fork_child();
		shim_power_fork_child();
	} else {
		sgx_drv_fork_parent();
	}
	return pid;
}

/* --- set-up ------------------------------------------------------------------ */

void shim_interpose_init(void)
{
	shim_find_text();
	shim_stat_init();
	sgx_drv_set_fd_resolver(resolve_fd);
}
