/* SPDX-License-Identifier: MIT */
/*
 * The stat family for the SGX device paths and descriptors: stat, lstat,
 * fstat, fstatat (newfstatat), their 64-bit names, the versioned __xstat
 * family older binaries call, statx, access, faccessat, readlink and
 * readlinkat. The layout is a machine's with Intel's PSW: /dev/sgx_enclave
 * and /dev/sgx_provision show as devtmpfs would show them (crw-rw-rw- root
 * root, misc major 10); /dev/sgx is a directory holding the PSW's udev
 * symlinks enclave -> ../sgx_enclave and provision -> ../sgx_provision, so
 * stat follows them to the devices and lstat and readlink show the links.
 * Every other path and descriptor goes to libc unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "driver/drv.h"
#include "shim/shim.h"

SHIM_REAL(int, stat, const char *, struct stat *)
SHIM_REAL(int, lstat, const char *, struct stat *)
SHIM_REAL(int, fstat, int, struct stat *)
SHIM_REAL(int, fstatat, int, const char *, struct stat *, int)
SHIM_REAL(int, stat64, const char *, struct stat64 *)
SHIM_REAL(int, lstat64, const char *, struct stat64 *)
SHIM_REAL(int, fstat64, int, struct stat64 *)
SHIM_REAL(int, fstatat64, int, const char *, struct stat64 *, int)
SHIM_REAL(int, __xstat, int, const char *, struct stat *)
SHIM_REAL(int, __lxstat, int, const char *, struct stat *)
SHIM_REAL(int, __fxstat, int, int, struct stat *)
SHIM_REAL(int, __fxstatat, int, int, const char *, struct stat *, int)
SHIM_REAL(int, __xstat64, int, const char *, struct stat64 *)
SHIM_REAL(int, __lxstat64, int, const char *, struct stat64 *)
SHIM_REAL(int, __fxstat64, int, int, struct stat64 *)
SHIM_REAL(int, __fxstatat64, int, int, const char *, struct stat64 *, int)
SHIM_REAL(int, statx, int, const char *, int, unsigned int, struct statx *)
SHIM_REAL(int, access, const char *, int)
SHIM_REAL(int, faccessat, int, const char *, int, int)
SHIM_REAL(ssize_t, readlink, const char *, char *, size_t)
SHIM_REAL(ssize_t, readlinkat, int, const char *, char *, size_t)


static struct timespec dev_time;

/* A device node as devtmpfs shows it: crw-rw-rw- root root, misc major. */
static void fill_stat(struct stat *st, enum sgx_dev dev)
{
	struct stat d;

	memset(st, 0, sizeof(*st));
	if (get_stat()("/dev", &d) == 0)
		st->st_dev = d.st_dev;
	st->st_ino = 0x5ea0 + (ino_t)dev;
	st->st_mode = S_IFCHR | 0666;
	st->st_nlink = 1;
	st->st_rdev = sgx_dev_rdev(dev);
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = dev_time;
}

/* The udev link /dev/sgx/<name> points at: "../sgx_<name>". */
static const char *link_target(enum sgx_dev dev)
{
	return dev == SGX_DEV_ENCLAVE ? "../sgx_enclave" : "../sgx_provision";
}

/* The link itself, as lstat shows a symlink on devtmpfs. */
static void fill_link(struct stat *st, enum sgx_dev dev)
{
	fill_stat(st, dev);
	st->st_ino = 0x5ea8 + (ino_t)dev;
	st->st_mode = S_IFLNK | 0777;
	st->st_rdev = 0;
	st->st_size = (off_t)strlen(link_target(dev));
}

/* /dev/sgx, the seed API's directory, exists when its devices do. */
static bool is_sgx_dir(const char *path)
{
	enum sgx_api api;
	enum sgx_dev dev;

	path = shim_opaque(path);
	return path && !strcmp(path, "/dev/sgx") &&
	       !sgx_dev_match("/dev/sgx/enclave", &api, &dev);
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

/* 1 = handled (*ret is stat's result), 0 = not a device path; @follow:
 * stat (true) or lstat (false). */
static int path_stat_at(const char *path, struct stat *st, int *ret,
			bool follow)
{
	enum sgx_api api;
	enum sgx_dev dev;
	struct stat tmp;

	if (!shim_maybe_dev(path))
		return 0;
	if (!sgx_dev_match(path, &api, &dev)) {
		if (api == SGX_API_SEED && !follow)
			fill_link(&tmp, dev);
		else
			fill_stat(&tmp, dev);
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

static int path_stat(const char *path, struct stat *st, int *ret)
{
	return path_stat_at(path, st, ret, true);
}

static int path_lstat(const char *path, struct stat *st, int *ret)
{
	return path_stat_at(path, st, ret, false);
}

/* -2 = not a device fd, else fstat's result. */
static int fd_stat(int fd, struct stat *st)
{
	struct sgx_file *f = shim_fd_get(fd);
	struct stat tmp;

	if (!f)
		return -2;
	fill_stat(&tmp, sgx_file_dev(f));
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

	if (path_lstat(path, st, &ret))
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

	if (shim_empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, st)) != -2)
		return ret;
	if (path_stat_at(path, st, &ret,
			 !(flags & AT_SYMLINK_NOFOLLOW)))
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

	if (path_lstat(path, (struct stat *)st, &ret))
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

	if (shim_empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, (struct stat *)st)) != -2)
		return ret;
	if (path_stat_at(path, (struct stat *)st, &ret,
			 !(flags & AT_SYMLINK_NOFOLLOW)))
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

	if (path_lstat(path, st, &ret))
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

	if (path_stat_at(path, st, &ret,
			 !(flags & AT_SYMLINK_NOFOLLOW)))
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

	if (path_lstat(path, (struct stat *)st, &ret))
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

	if (path_stat_at(path, (struct stat *)st, &ret,
			 !(flags & AT_SYMLINK_NOFOLLOW)))
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
	stx->stx_size = (uint64_t)st->st_size;
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

	if (shim_empty_path(path) && (flags & AT_EMPTY_PATH) &&
	    (ret = fd_stat(dirfd, &st)) != -2) {
		if (ret)
			return ret;
		stat_to_statx(&st, &tmp);
		return put_user(stx, &tmp, sizeof(tmp));
	}
	if (path_stat_at(path, &st, &ret, !(flags & AT_SYMLINK_NOFOLLOW))) {
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

	if (shim_maybe_dev(path) && (!sgx_dev_match(path, &api, &dev) ||
				is_sgx_dir(path)))
		return (mode & X_OK) && !is_sgx_dir(path) ? (errno = EACCES, -1) : 0;
	return get_access()(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
	enum sgx_api api;
	enum sgx_dev dev;

	if (shim_maybe_dev(path) && (!sgx_dev_match(path, &api, &dev) ||
				is_sgx_dir(path)))
		return (mode & X_OK) && !is_sgx_dir(path) ? (errno = EACCES, -1) : 0;
	return get_faccessat()(dirfd, path, mode, flags);
}

/* 1 = a link of ours (*ret is readlink's result), 0 = not ours. */
static int dev_readlink(const char *path, char *buf, size_t size,
			ssize_t *ret)
{
	enum sgx_api api;
	enum sgx_dev dev;
	const char *t;
	size_t n;

	if (!shim_maybe_dev(path) || sgx_dev_match(path, &api, &dev))
		return 0;
	if (api != SGX_API_SEED || !size) {
		errno = EINVAL;		/* a device, not a link */
		*ret = -1;
		return 1;
	}
	t = link_target(dev);
	n = strlen(t) < size ? strlen(t) : size;
	*ret = put_user(buf, t, n) ? -1 : (ssize_t)n;
	return 1;
}

ssize_t readlink(const char *path, char *buf, size_t size)
{
	ssize_t ret;

	if (dev_readlink(path, buf, size, &ret))
		return ret;
	return get_readlink()(path, buf, size);
}

ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t ret;

	if (dev_readlink(path, buf, size, &ret))
		return ret;
	return get_readlinkat()(dirfd, path, buf, size);
}

void shim_stat_init(void)
{
	clock_gettime(CLOCK_REALTIME, &dev_time);
	dev_time.tv_nsec = 0;
}
