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

#define REAL(ret, name, ...) \
	static ret (*real_##name)(__VA_ARGS__); \
	static inline ret (*get_##name(void))(__VA_ARGS__) \
	{ \
		if (!real_##name) \
			real_##name = (ret (*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name); \
		return real_##name; \
	}

REAL(int, open, const char *, int, ...)
REAL(int, open64, const char *, int, ...)
REAL(int, openat, int, const char *, int, ...)
REAL(int, openat64, int, const char *, int, ...)
REAL(int, __open_2, const char *, int)
REAL(int, __open64_2, const char *, int)
REAL(int, __openat_2, int, const char *, int)
REAL(int, __openat64_2, int, const char *, int)
REAL(int, close, int)
REAL(int, close_range, unsigned int, unsigned int, int)
REAL(int, dup, int)
REAL(int, dup2, int, int)
REAL(int, dup3, int, int, int)
REAL(int, fcntl, int, int, ...)
REAL(int, fcntl64, int, int, ...)
REAL(int, ioctl, int, unsigned long, ...)
REAL(void *, mmap, void *, size_t, int, int, int, off_t)
REAL(void *, mmap64, void *, size_t, int, int, int, off_t)
REAL(int, munmap, void *, size_t)
REAL(int, mprotect, void *, size_t, int)
REAL(void *, mremap, void *, size_t, size_t, int, ...)
REAL(pid_t, fork, void)
REAL(int, stat, const char *, struct stat *)
REAL(int, lstat, const char *, struct stat *)
REAL(int, fstat, int, struct stat *)
REAL(int, fstatat, int, const char *, struct stat *, int)
REAL(int, stat64, const char *, struct stat64 *)
REAL(int, lstat64, const char *, struct stat64 *)
REAL(int, fstat64, int, struct stat64 *)
REAL(int, fstatat64, int, const char *, struct stat64 *, int)
REAL(int, __xstat, int, const char *, struct stat *)
REAL(int, __lxstat, int, const char *, struct stat *)
REAL(int, __fxstat, int, int, struct stat *)
REAL(int, __fxstatat, int, int, const char *, struct stat *, int)
REAL(int, __xstat64, int, const char *, struct stat64 *)
REAL(int, __lxstat64, int, const char *, struct stat64 *)
REAL(int, __fxstat64, int, int, struct stat64 *)
REAL(int, __fxstatat64, int, int, const char *, struct stat64 *, int)
REAL(int, statx, int, const char *, int, unsigned int, struct statx *)
REAL(int, access, const char *, int)
REAL(int, faccessat, int, const char *, int, int)

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
static struct sgx_file *fd_get(int fd)
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
	return fd_get(fd);
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
	f = fd_get(oldfd);
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

	if (sgx_dev_match(path, &api, &dev))
		return -2;	/* not ours */
	if (flags & (O_DIRECTORY | O_PATH)) {
		errno = (flags & O_DIRECTORY) ? ENOTDIR : EINVAL;
		return -1;
	}
	snprintf(name, sizeof(name), "%s", strrchr(sgx_dev_path(api, dev), '/') + 1);
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
	/* The first enclave device opened decides the vDSO entry's ABI. */
	if (dev == SGX_DEV_ENCLAVE) {
		shim_engine_start();
		static atomic_bool decided;
		bool no = false;

		if (atomic_compare_exchange_strong(&decided, &no, true) &&
		    !getenv("SGXEMU_VDSO_ABI"))
			sgxemu_vdso_abi = api == SGX_API_SEED;
	}
	fd_attach(fd, f, fd_ino(fd));
	shim_log("open %s -> fd %d", sgx_dev_path(api, dev), fd);
	return fd;
}

/*
 * libc declares most path arguments nonnull, which lets the compiler drop
 * NULL tests; hiding the pointer's origin keeps them, so NULL reaches libc
 * (EFAULT) instead of crashing here.
 */
static inline const char *opaque(const char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

static bool maybe_dev(const char *path)
{
	path = opaque(path);
	return path && path[0] == '/' && path[1] == 'd' && path[2] == 'e';
}

static bool empty_path(const char *path)
{
	path = opaque(path);
	return path && !path[0];
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

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_open()(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_open64()(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_openat()(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags);
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get_openat64()(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE builds call these for open() without a mode. */
int __open_2(const char *path, int flags)
{
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___open_2()(path, flags);
}

int __open64_2(const char *path, int flags)
{
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___open64_2()(path, flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
		return fd;
	return get___openat_2()(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	int fd;

	if (maybe_dev(path) && (fd = dev_open(path, flags)) != -2)
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
	f = fd_get(fd);
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
	if (!(flags & MAP_ANONYMOUS) && (f = fd_get(fd))) {
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

int munmap(void *addr, size_t len)
{
	int ret;

	if (!INTERNAL() && sgx_vma_active()) {
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

int mprotect(void *addr, size_t len, int prot)
{
	int ret;

	if (!INTERNAL() && sgx_vma_active()) {
		ret = sgx_vma_mprotect(addr, len, prot);
		if (ret <= 0) {
			if (ret < 0) {
				errno = -ret;
				return -1;
			}
			return 0;
		}
	}
	return get_mprotect()(addr, len, prot);
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *new_addr = NULL, *res;
	va_list ap;
	int ret;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!INTERNAL() && sgx_vma_active()) {
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

/* --- fork -------------------------------------------------------------------- */

pid_t fork(void)
{
	pid_t pid;

	sgx_drv_fork_prepare();
	pid = get_fork()();
	if (pid == 0) {
		pthread_mutex_init(&fd_lock, NULL);
		sgx_drv_fork_child();
	} else {
		sgx_drv_fork_parent();
	}
	return pid;
}

/* --- stat ------------------------------------------------------------------- */

static struct timespec dev_time;

/* A device node as devtmpfs shows it: crw-rw-rw- root root, misc major. */
static void fill_stat(struct stat *st, enum sgx_api api, enum sgx_dev dev)
{
	struct stat d;

	memset(st, 0, sizeof(*st));
	if (get_stat()("/dev", &d) == 0)
		st->st_dev = d.st_dev;
	st->st_ino = 0x5ea0 + (ino_t)api * 2 + (ino_t)dev;
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = sgx_dev_rdev(api, dev);
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = dev_time;
}

/* /dev/sgx, the seed API's directory, exists when its devices do. */
static bool is_sgx_dir(const char *path)
{
	path = opaque(path);
	return path && !strcmp(path, "/dev/sgx");
}

static int fake_dir(struct stat *st)
{
	struct stat d;

	if (get_stat()("/dev", &d))
		return -1;
	*st = d;
	st->st_ino = 0x5e9f;
	st->st_nlink = 2;
	return 0;
}

/* Store a result in the caller's buffer: a bad pointer is EFAULT, as
 * the kernel's copy_to_user makes it, not a crash here. */
static int put_user(void *dst, const void *src, size_t n)
{
	if (sgx_copy_to_user((unsigned long)dst, src, n)) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

/* 1 = handled (*ret is stat's result), 0 = not a device path. */
static int path_stat(const char *path, struct stat *st, int *ret)
{
	enum sgx_api api;
	enum sgx_dev dev;
	struct stat tmp;

	if (!maybe_dev(path))
		return 0;
	if (!sgx_dev_match(path, &api, &dev)) {
		fill_stat(&tmp, api, dev);
		*ret = put_user(st, &tmp, sizeof(tmp));
		return 1;
	}
	if (is_sgx_dir(path)) {
		/* A real /dev/sgx (an SGX host) wins. */
		if (get_stat()(path, &tmp) == 0 || fake_dir(&tmp) == 0)
			*ret = put_user(st, &tmp, sizeof(tmp));
		else
			*ret = -1;
		return 1;
	}
	return 0;
}

/* -2 = not a device fd, else fstat's result. */
static int fd_stat(int fd, struct stat *st)
{
	struct sgx_file *f = fd_get(fd);
	struct stat tmp;

	if (!f)
		return -2;
	fill_stat(&tmp, sgx_file_api(f), sgx_file_dev(f));
	sgx_file_put(f);
	return put_user(st, &tmp, sizeof(tmp));
}

int stat(const char *path, struct stat *st)
{
	int ret;

	if (path_stat(path, st, &ret))
		return ret;
	return get_stat()(path, st);
}

int lstat(const char *path, struct stat *st)
{
	int ret;

	if (path_stat(path, st, &ret))
		return ret;
	return get_lstat()(path, st);
}

int fstat(int fd, struct stat *st)
{
	int r = fd_stat(fd, st);

	return r != -2 ? r : get_fstat()(fd, st);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int ret;

	if (empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, st)) != -2)
		return ret;
	if (path_stat(path, st, &ret))
		return ret;
	return get_fstatat()(dirfd, path, st, flags);
}

/* On x86-64 struct stat64 and struct stat are the same layout. */
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "stat64 layout");

int stat64(const char *path, struct stat64 *st)
{
	int ret;

	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get_stat64()(path, st);
}

int lstat64(const char *path, struct stat64 *st)
{
	int ret;

	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get_lstat64()(path, st);
}

int fstat64(int fd, struct stat64 *st)
{
	int r = fd_stat(fd, (struct stat *)st);

	return r != -2 ? r : get_fstat64()(fd, st);
}

int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	int ret;

	if (empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, (struct stat *)st)) != -2)
		return ret;
	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get_fstatat64()(dirfd, path, st, flags);
}

/* Binaries built against glibc < 2.33 call the versioned __xstat family. */
int __xstat(int ver, const char *path, struct stat *st)
{
	int ret;

	if (path_stat(path, st, &ret))
		return ret;
	return get___xstat()(ver, path, st);
}

int __lxstat(int ver, const char *path, struct stat *st)
{
	int ret;

	if (path_stat(path, st, &ret))
		return ret;
	return get___lxstat()(ver, path, st);
}

int __fxstat(int ver, int fd, struct stat *st)
{
	int r = fd_stat(fd, st);

	return r != -2 ? r : get___fxstat()(ver, fd, st);
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	int ret;

	if (path_stat(path, st, &ret))
		return ret;
	return get___fxstatat()(ver, dirfd, path, st, flags);
}

int __xstat64(int ver, const char *path, struct stat64 *st)
{
	int ret;

	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get___xstat64()(ver, path, st);
}

int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	int ret;

	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get___lxstat64()(ver, path, st);
}

int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int r = fd_stat(fd, (struct stat *)st);

	return r != -2 ? r : get___fxstat64()(ver, fd, st);
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags)
{
	int ret;

	if (path_stat(path, (struct stat *)st, &ret))
		return ret;
	return get___fxstatat64()(ver, dirfd, path, st, flags);
}

static void stat_to_statx(const struct stat *st, struct statx *stx)
{
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = (uint32_t)st->st_blksize;
	stx->stx_nlink = (uint32_t)st->st_nlink;
	stx->stx_uid = st->st_uid;
	stx->stx_gid = st->st_gid;
	stx->stx_mode = (uint16_t)st->st_mode;
	stx->stx_ino = st->st_ino;
	stx->stx_atime.tv_sec = st->st_atim.tv_sec;
	stx->stx_mtime.tv_sec = st->st_mtim.tv_sec;
	stx->stx_ctime.tv_sec = st->st_ctim.tv_sec;
	stx->stx_rdev_major = major(st->st_rdev);
	stx->stx_rdev_minor = minor(st->st_rdev);
	stx->stx_dev_major = major(st->st_dev);
	stx->stx_dev_minor = minor(st->st_dev);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	struct statx tmp;
	struct stat st;
	int ret;

	if (empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, &st)) != -2) {
		if (ret)
			return ret;
		stat_to_statx(&st, &tmp);
		return put_user(stx, &tmp, sizeof(tmp));
	}
	if (path_stat(path, &st, &ret)) {
		if (ret)
			return ret;
		stat_to_statx(&st, &tmp);
		return put_user(stx, &tmp, sizeof(tmp));
	}
	return get_statx()(dirfd, path, flags, mask, stx);
}

int access(const char *path, int mode)
{
	enum sgx_api api;
	enum sgx_dev dev;

	if (maybe_dev(path) && (!sgx_dev_match(path, &api, &dev) ||
				is_sgx_dir(path)))
		return (mode & X_OK) && !is_sgx_dir(path) ? (errno = EACCES, -1) : 0;
	return get_access()(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	enum sgx_api api;
	enum sgx_dev dev;

	if (maybe_dev(path) && (!sgx_dev_match(path, &api, &dev) ||
				is_sgx_dir(path)))
		return (mode & X_OK) && !is_sgx_dir(path) ? (errno = EACCES, -1) : 0;
	return get_faccessat()(dirfd, path, mode, flags);
}

/* --- set-up ------------------------------------------------------------------ */

void shim_interpose_init(void)
{
	shim_find_text();
	clock_gettime(CLOCK_REALTIME, &dev_time);
	dev_time.tv_nsec = 0;
	sgx_drv_set_fd_resolver(resolve_fd);
}
