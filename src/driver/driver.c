/* SPDX-License-Identifier: MIT */
/*
 * Device files and enclave objects: open, reference counting across dup,
 * fork and mappings, and release (every page EREMOVEd, the SECS last) when
 * the last descriptor is closed and the last mapping is gone, as the Linux
 * driver's release does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "driver/drv.h"
#include "driver/edmm.h"
#include "driver/paging.h"
#include "driver/security.h"
#include "driver/svn.h"

bool sgx_drv_debug;
const struct sgx_drv_observer *sgx_drv_observer;

void sgx_drv_set_observer(const struct sgx_drv_observer *o)
{
	__atomic_store_n(&sgx_drv_observer, o, __ATOMIC_RELEASE);
}
struct sgx_file *(*sgx_fd_resolver)(int fd);
/* Serialises the mapping list and file reference changes. */
pthread_mutex_t sgx_drv_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every live file, so that fork can mark the child's copies. */
static struct sgx_file *all_files;

/* "sgxemu: " and the line: write(2), no stdio, safe from any context. */
static void log_write(const char *buf, size_t n)
{
	if (write(STDERR_FILENO, "sgxemu: ", 8) < 0 ||
	    write(STDERR_FILENO, buf, n) < 0)
		return;
}

/*
 * A line equal to the one before it is counted, not printed again: a
 * runtime that repeats a refused call at every ECALL (the Intel SDK's
 * EDMM probe) gets its reason once, and the count when another line
 * comes or the process exits. A line that interrupts a writer (a signal
 * handler) is printed as it is.
 */
static atomic_flag log_busy = ATOMIC_FLAG_INIT;
static char log_last[512];
static size_t log_last_len;
static unsigned long log_repeats;

static void log_flush_repeats(void)
{
	char b[80];
	int m;

	if (!log_repeats)
		return;
	m = snprintf(b, sizeof(b), "(the line above repeated %lu more time%s)\n",
		     log_repeats, log_repeats == 1 ? "" : "s");
	log_repeats = 0;
	if (m > 0)
		log_write(b, (size_t)m);
}

__attribute__((destructor)) static void log_at_exit(void)
{
	if (atomic_flag_test_and_set(&log_busy))
		return;
	log_flush_repeats();
	atomic_flag_clear(&log_busy);
}

void sgx_drv_vlog(const char *fmt, va_list ap)
{
	/* Room for a long program path in a line (the shim's CPUID report
	 * names the object); still small enough for a signal stack. */
	char buf[512];
	int n;

	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (atomic_flag_test_and_set(&log_busy)) {
		log_write(buf, (size_t)n);
		return;
	}
	if ((size_t)n == log_last_len && !memcmp(buf, log_last, (size_t)n)) {
		log_repeats++;
	} else {
		log_flush_repeats();
		memcpy(log_last, buf, (size_t)n);
		log_last_len = (size_t)n;
		log_write(buf, (size_t)n);
	}
	atomic_flag_clear(&log_busy);
}

void sgx_drv_log(const char *fmt, ...)
{
	va_list ap;

	if (!sgx_drv_debug)
		return;
	va_start(ap, fmt);
	sgx_drv_vlog(fmt, ap);
	va_end(ap);
}

void sgx_drv_set_fd_resolver(struct sgx_file *(*resolve)(int fd))
{
	sgx_fd_resolver = resolve;
}

/* --- device names ----------------------------------------------------------- */

static const char *const dev_paths[2][2] = {
	[SGX_API_MAINLINE] = { "/dev/sgx_enclave", "/dev/sgx_provision" },
	[SGX_API_SEED]     = { "/dev/sgx/enclave", "/dev/sgx/provision" },
};

/* Compare @path with @want, letting one or more '/' match each '/'. */
static bool path_eq(const char *path, const char *want)
{
	while (*want) {
		if (*want == '/') {
			if (*path != '/')
				return false;
			while (*path == '/')
				path++;
			want++;
			continue;
		}
		if (*path++ != *want++)
			return false;
	}
	return !*path;
}

/*
 * Linux registers /dev/sgx_enclave only on parts with Flexible Launch
 * Control (linux-driver-facts.md §1.1), and without it (and without VMX
 * for /dev/sgx_vepc) it drops /dev/sgx_provision too; the v22 driver
 * needed writable launch-control MSRs as well. So with the platform's
 * launch control locked no SGX device exists.
 */
static bool devices_exist(void)
{
	static int cached = -1;
	const char *lc;

	if (cached < 0) {
		lc = getenv("SGXEMU_LAUNCH_CONTROL");
		cached = !(lc && !strcmp(lc, "locked"));
	}
	return cached;
}

int sgx_dev_match(const char *path, enum sgx_api *api, enum sgx_dev *dev)
{
	if (!path || !devices_exist())
		return -ENOENT;
	for (int a = 0; a < 2; a++)
		for (int d = 0; d < 2; d++)
			if (path_eq(path, dev_paths[a][d])) {
				*api = (enum sgx_api)a;
				*dev = (enum sgx_dev)d;
				return 0;
			}
	return -ENOENT;
}

const char *sgx_dev_path(enum sgx_api api, enum sgx_dev dev)
{
	return dev_paths[api & 1][dev & 1];
}

dev_t sgx_dev_rdev(enum sgx_dev dev)
{
	/* Misc devices (major 10) with dynamic minors, as the kernel
	 * registers them; the numbers are this emulator's choice. */
	return makedev(10, 120 + (unsigned)dev);
}

/* --- user memory -------------------------------------------------------------- */

/*
 * process_vm_readv/writev on ourselves copy like copy_from_user/to_user:
 * an unmapped or unreadable address gives EFAULT instead of SIGSEGV.
 */
/*
 * Where process_vm_readv/writev are refused (seccomp profiles of some
 * container runtimes), a pipe does the same job: write() from an
 * unreadable buffer and read() into an unwritable one fail with EFAULT
 * instead of faulting. Chunks stay below the pipe's capacity.
 */
static int pipe_copy(void *dst, const void *src, size_t n)
{
	int p[2], ret = 0;

	if (pipe2(p, O_CLOEXEC))
		return -EFAULT;
	while (n && !ret) {
		size_t c = n < 4096 ? n : 4096;

		if (write(p[1], src, c) != (ssize_t)c ||
		    read(p[0], dst, c) != (ssize_t)c)
			ret = -EFAULT;
		src = (const uint8_t *)src + c;
		dst = (uint8_t *)dst + c;
		n -= c;
	}
	close(p[0]);
	close(p[1]);
	return ret;
}

int sgx_copy_from_user(void *dst, unsigned long src, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)src, n };
	ssize_t r;

	if (!n)
		return 0;
	if (src + n < src)
		return -EFAULT;
	r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (r < 0 && (errno == EPERM || errno == ENOSYS))
		return pipe_copy(dst, (const void *)src, n);
	return r == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * ADD_PAGES reads its source ahead, many pages per call. process_vm_readv
 * never splits an iovec, so one remote iovec per page makes a short read
 * stop exactly at the first page it cannot read: the caller reports that
 * page's EFAULT when it gets there, as a page-by-page copy would.
 */
#define UPTO_PAGES	64

long sgx_copy_from_user_upto(void *dst, unsigned long src, size_t n)
{
	struct iovec local = { dst, n }, remote[UPTO_PAGES];
	size_t cnt = 0, off;
	ssize_t r;

	if (!n || n > (size_t)UPTO_PAGES * 4096 || src + n < src)
		return -EFAULT;
	for (off = 0; off < n; off += 4096, cnt++) {
		remote[cnt].iov_base = (void *)(src + off);
		remote[cnt].iov_len = n - off < 4096 ? n - off : 4096;
	}
	r = process_vm_readv(getpid(), &local, 1, remote, cnt, 0);
	if (r < 0 && (errno == EPERM || errno == ENOSYS)) {
		for (off = 0; off < n; off += remote[off / 4096].iov_len)
			if (pipe_copy((uint8_t *)dst + off, remote[off / 4096].iov_base,
				      remote[off / 4096].iov_len))
				break;
		r = (ssize_t)off;
	}
	return r > 0 ? r : -EFAULT;
}

int sgx_copy_to_user(unsigned long dst, const void *src, size_t n)
{
	struct iovec local = { (void *)src, n }, remote = { (void *)dst, n };
	ssize_t r;

	if (!n)
		return 0;
	if (dst + n < dst)
		return -EFAULT;
	r = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	if (r < 0 && (errno == EPERM || errno == ENOSYS))
		return pipe_copy((void *)dst, src, n);
	return r == (ssize_t)n ? 0 : -EFAULT;
}

/* --- page permissions ------------------------------------------------------------- */


uint8_t sgx_encl_page_prot(const struct sgx_encl *encl, uint64_t addr)
{
	uint64_t idx, c;

	if (!encl->created || addr < encl->base || addr - encl->base >= encl->size)
		return 0;
	idx = (addr - encl->base) >> 12;
	c = idx / SGX_ENCL_CHUNK_PAGES;
	if (c >= encl->nr_chunks || !encl->pages[c])
		return 0;
	return encl->pages[c][idx % SGX_ENCL_CHUNK_PAGES];
}

/*
 * The first page address past @addr that may hold a page: past the end
 * of a run the table holds nothing for (a whole chunk, or everything
 * outside ELRANGE), so that a walk over a window of mostly absent pages
 * (an EDMM heap reserved up front: Gramine's is 1 TiB) costs a step per
 * chunk and not per page, as the kernel's xarray walk visits only the
 * pages present.
 */
uint64_t sgx_encl_next_page(const struct sgx_encl *encl, uint64_t addr)
{
	uint64_t c, next;

	if (!encl->created || addr >= encl->base + encl->size)
		return UINT64_MAX;
	if (addr < encl->base)
		return encl->base;
	c = ((addr - encl->base) >> 12) / SGX_ENCL_CHUNK_PAGES;
	if (c < encl->nr_chunks && encl->pages[c])
		return (addr & ~(uint64_t)4095) + 4096;
	next = encl->base + ((c + 1) * SGX_ENCL_CHUNK_PAGES << 12);
	return next < encl->base + encl->size ? next : UINT64_MAX;
}

int sgx_encl_set_page_prot(struct sgx_encl *encl, uint64_t addr, uint8_t v)
{
	uint64_t idx = (addr - encl->base) >> 12;
	size_t c = idx / SGX_ENCL_CHUNK_PAGES;

	if (!encl->pages) {
		encl->nr_chunks = (size_t)((encl->size >> 12) + SGX_ENCL_CHUNK_PAGES - 1) /
				  SGX_ENCL_CHUNK_PAGES;
		encl->pages = calloc(encl->nr_chunks, sizeof(*encl->pages));
		if (!encl->pages)
			return -ENOMEM;
	}
	if (!encl->pages[c]) {
		if (!v)
			return 0;
		encl->pages[c] = calloc(SGX_ENCL_CHUNK_PAGES, 1);
		if (!encl->pages[c])
			return -ENOMEM;
	}
	encl->pages[c][idx % SGX_ENCL_CHUNK_PAGES] = v;
	return 0;
}

/* --- files ---------------------------------------------------------------------- */

struct sgx_file *sgx_drv_open(enum sgx_api api, enum sgx_dev dev, int *err)
{
	struct sgx_file *f;

	/* Who may provision is policy, as file permissions are on Linux. */
	if (dev == SGX_DEV_PROVISION) {
		int ret = sgx_sec_provision_open(api);

		if (ret) {
			sgx_drv_log("open %s: refused by the security policy",
				    sgx_dev_path(api, dev));
			*err = ret;
			return NULL;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	f->api = api;
	f->dev = dev;
	f->writable = true;
	atomic_init(&f->refs, 1);
	pthread_mutex_lock(&sgx_drv_lock);
	f->next = all_files;
	if (all_files)
		all_files->prev = f;
	all_files = f;
	pthread_mutex_unlock(&sgx_drv_lock);
	if (dev == SGX_DEV_ENCLAVE) {
		/* The platform comes up with the first enclave device, so a
		 * program that never opens one never pays for it. */
		int ret = sgxemu_platform_init();

		if (ret) {
			sgx_drv_log("open %s: platform: %s",
				    sgx_dev_path(api, dev), strerror(-ret));
			sgx_file_put(f);
			*err = ret;
			return NULL;
		}
		/* From now on a fork splits the free EPC (epc_fork.c). */
		sgxemu__epc_fork_register();
		f->encl = calloc(1, sizeof(*f->encl));
		if (!f->encl) {
			sgx_file_put(f);
			*err = -ENOMEM;
			return NULL;
		}
		/* The kernel's usage count, and at 0 -> 1 its SVN update:
		 * -EAGAIN or -EIO (svn.c). */
		ret = sgx_inc_usage_count();
		if (ret) {
			sgx_file_put(f);
			*err = ret;
			return NULL;
		}
		f->encl->counted = true;
		/* Mainline sets the mask at CREATE (0 until then); v22
		 * granted the unprivileged attributes at open, which its
		 * first ADD_PAGE catches up on (ioctl.c, speak()). */
	}
	return f;
}

struct sgx_file *sgx_drv_files(void)
{
	return all_files;
}

void sgx_file_get(struct sgx_file *f)
{
	atomic_fetch_add(&f->refs, 1);
}

static void encl_release(struct sgx_file *f)
{
	struct sgx_encl *encl = f->encl;
	int ret;

	if (!encl)
		return;
	sgx_edmm_detach(encl);
	/*
	 * In a forked child the processor state is a copy that shares the
	 * EPC with the parent: removing pages here would destroy the
	 * parent's enclave, so the child only forgets it.
	 */
	if (encl->engine && !encl->inherited) {
		const struct sgx_drv_observer *o =
			__atomic_load_n(&sgx_drv_observer, __ATOMIC_ACQUIRE);

		if (o && o->releasing && encl->initialized)
			o->releasing(encl->engine);
		ret = sgxemu_enclave_destroy(encl->engine);
		if (ret)
			sgx_drv_log("release: EREMOVE of the enclave at 0x%llx "
				    "failed (%s); its EPC pages are leaked",
				    (unsigned long long)encl->base, strerror(-ret));
	}
	for (size_t c = 0; c < encl->nr_chunks; c++)
		free(encl->pages[c]);
	free(encl->pages);
	/* An enclave a forked child inherited is still the parent's: it
	 * stays counted here, as the kernel's one count sees it. */
	if (encl->counted && !encl->inherited)
		sgx_dec_usage_count();
	free(encl);
	f->encl = NULL;
}

void sgx_file_put(struct sgx_file *f)
{
	if (!f)
		return;
	if (atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	pthread_mutex_lock(&sgx_drv_lock);
	if (f->prev)
		f->prev->next = f->next;
	else
		all_files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	pthread_mutex_unlock(&sgx_drv_lock);
	encl_release(f);
	free(f);
}

enum sgx_api sgx_file_api(const struct sgx_file *f)
{
	return f->api;
}

void sgx_file_set_accmode(struct sgx_file *f, int accmode)
{
	f->writable = (accmode & O_ACCMODE) != O_RDONLY;
}

enum sgx_dev sgx_file_dev(const struct sgx_file *f)
{
	return f->dev;
}

/* --- fork --------------------------------------------------------------------------- */

/* ioctls hold this for reading, fork for writing, so that no ioctl is
 * half done in the child. */
pthread_rwlock_t sgx_fork_lock = PTHREAD_RWLOCK_INITIALIZER;

void sgx_drv_fork_prepare(void)
{
	pthread_rwlock_wrlock(&sgx_fork_lock);
	pthread_mutex_lock(&sgx_drv_lock);
}

/* The EPC itself is split by the library's own fork handlers, which
 * run inside fork() (src/driver/epc_fork.c). */
void sgx_drv_fork_parent(void)
{
	pthread_mutex_unlock(&sgx_drv_lock);
	pthread_rwlock_unlock(&sgx_fork_lock);
}

void sgx_drv_fork_child(void)
{
	/* The child is single-threaded and has a new thread id, which the
	 * rwlock's writer record would not recognise: start both afresh. */
	pthread_mutex_init(&sgx_drv_lock, NULL);
	sgx_svn_fork_child();
	for (struct sgx_file *f = all_files; f; f = f->next)
		if (f->encl)
			f->encl->inherited = true;
	pthread_rwlock_init(&sgx_fork_lock, NULL);
}
