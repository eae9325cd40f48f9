/* SPDX-License-Identifier: MIT */
/*
 * Mappings of enclave device files ("VMAs") and the kernel's rules for
 * them (linux-driver-facts.md §2):
 *  - MAP_PRIVATE is EINVAL; any address is accepted, before CREATE too;
 *  - a mapping may never be more permissive than the pages it covers, at
 *    mmap and at mprotect (sgx_encl_may_map, the may_mprotect hook of seed
 *    003); TCS pages count as RW;
 *  - where no page exists: the seed API (v21/v22) allows only PROT_NONE,
 *    mainline checks nothing (so SGX2 can add pages on fault);
 *  - after INIT, windows outside ELRANGE are EACCES;
 *  - munmap may cut any part of a window; growing one with mremap is EFAULT.
 *
 * Each window holds a reference on its file, so the enclave lives until
 * the last descriptor is closed and the last window unmapped.
 *
 * The host side: inside ELRANGE the engine maps the EPC pages with the
 * window's permissions AND the EPCM's (sgxemu_enclave_set_prot); outside
 * ELRANGE, or before CREATE, a window is an inaccessible reservation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver/drv.h"
#include "driver/security.h"

struct sgx_vma {
	uint64_t start, end;
	int prot;
	struct sgx_file *file;
};

static struct sgx_vma *vmas;
static size_t nr_vmas, cap_vmas;
static atomic_size_t nr_active;

#define PAGE_MASK_LOW	0xfffULL

/* libsgxemu's own mapping calls go to the kernel directly, so that the
 * shim's wrappers of these functions never see them. */
static void *raw_mmap(void *addr, size_t len, int prot, int flags)
{
	return (void *)syscall(SYS_mmap, addr, len, prot,
			       flags | MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
}

static int raw_munmap(uint64_t addr, uint64_t len)
{
	return (int)syscall(SYS_munmap, (void *)addr, (size_t)len);
}

bool sgx_vma_active(void)
{
	return atomic_load_explicit(&nr_active, memory_order_relaxed) != 0;
}

/* --- the list ----------------------------------------------------------------- */

static int vma_insert(uint64_t start, uint64_t end, int prot,
		      struct sgx_file *f)
{
	size_t i;

	if (nr_vmas == cap_vmas) {
		size_t cap = cap_vmas ? cap_vmas * 2 : 16;
		struct sgx_vma *n = realloc(vmas, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		vmas = n;
		cap_vmas = cap;
	}
	for (i = 0; i < nr_vmas && vmas[i].start < start; i++)
		;
	memmove(&vmas[i + 1], &vmas[i], (nr_vmas - i) * sizeof(*vmas));
	vmas[i] = (struct sgx_vma){ start, end, prot, f };
	nr_vmas++;
	atomic_store(&nr_active, nr_vmas);
	return 0;
}

struct drops {
	struct sgx_file **f;
	size_t n, cap;
};

static void drop_add(struct drops *d, struct sgx_file *f)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct sgx_file **n = realloc(d->f, cap * sizeof(*n));

		if (!n) {
			/* Keeping the reference leaks the enclave but never
			 * frees one still in use. */
			return;
		}
		d->f = n;
		d->cap = cap;
	}
	d->f[d->n++] = f;
}

/* Drop the references collected under the lock; true if one was the last. */
static bool drops_put(struct drops *d)
{
	bool released = false;

	for (size_t i = 0; i < d->n; i++) {
		if (atomic_load(&d->f[i]->refs) == 1)
			released = true;
		sgx_file_put(d->f[i]);
	}
	free(d->f);
	return released;
}

/* Cut [start, end) out of every window; references go to @d. */
static int vma_cut(uint64_t start, uint64_t end, struct drops *d)
{
	for (size_t i = 0; i < nr_vmas; i++) {
		struct sgx_vma *v = &vmas[i];

		if (v->end <= start || v->start >= end)
			continue;
		if (v->start < start && v->end > end) {
			/* A hole in the middle: the window splits in two. */
			struct sgx_vma tail = *v;
			int ret;

			tail.start = end;
			v->end = start;
			ret = vma_insert(tail.start, tail.end, tail.prot, tail.file);
			if (ret) {
				v->end = tail.end;
				return ret;
			}
			sgx_file_get(tail.file);
			return 0;
		}
		if (v->start >= start && v->end <= end) {
			drop_add(d, v->file);
			memmove(v, v + 1, (nr_vmas - i - 1) * sizeof(*v));
			nr_vmas--;
			atomic_store(&nr_active, nr_vmas);
			i--;
			continue;
		}
		if (v->start < start)
			v->end = start;
		else
			v->start = end;
	}
	return 0;
}

/* Split windows so that @at is a boundary. */
static int vma_split_at(uint64_t at)
{
	for (size_t i = 0; i < nr_vmas; i++) {
		struct sgx_vma *v = &vmas[i];

		if (v->start < at && v->end > at) {
			struct sgx_vma tail = *v;
			int ret;

			v->end = at;
			ret = vma_insert(at, tail.end, tail.prot, tail.file);
			if (ret) {
				vmas[i].end = tail.end;
				return ret;
			}
			sgx_file_get(tail.file);
			return 0;
		}
	}
	return 0;
}

static bool vma_overlaps(uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < nr_vmas; i++)
		if (vmas[i].start < end && vmas[i].end > start)
			return true;
	return false;
}

int sgx_vma_prot_at(const struct sgx_file *f, uint64_t addr)
{
	int prot = 0;

	pthread_mutex_lock(&sgx_drv_lock);
	for (size_t i = 0; i < nr_vmas; i++)
		if (vmas[i].file->encl == f->encl &&
		    addr >= vmas[i].start && addr < vmas[i].end) {
			prot = vmas[i].prot;
			break;
		}
	pthread_mutex_unlock(&sgx_drv_lock);
	return prot;
}

/*
 * At CREATE: windows the program mapped before there was an ELRANGE
 * (Gramine maps the whole range first) give the pages they cover their
 * mapping permissions, so that SGX2 adds a page on fault there as the
 * kernel's VMA check allows. No pages exist yet: nothing to map.
 */
void sgx_vma_created(struct sgx_file *f)
{
	struct sgx_encl *encl = f->encl;

	pthread_mutex_lock(&sgx_drv_lock);
	for (size_t i = 0; i < nr_vmas; i++) {
		uint64_t lo = vmas[i].start, hi = vmas[i].end;

		if (vmas[i].file->encl != encl)
			continue;
		if (lo < encl->base)
			lo = encl->base;
		if (hi > encl->base + encl->size)
			hi = encl->base + encl->size;
		if (lo < hi)
			sgx_encl_window_prot(encl->engine, lo, hi - lo,
					     vmas[i].prot);
	}
	pthread_mutex_unlock(&sgx_drv_lock);
}

/* --- the rules ------------------------------------------------------------------ */

int sgx_encl_may_map(const struct sgx_file *f, uint64_t start, uint64_t end,
		     int prot, bool is_mprotect)
{
	const char *op = is_mprotect ? "mprotect" : "mmap";
	const struct sgx_encl *encl = f->encl;
	int want = prot & (PROT_READ | PROT_WRITE | PROT_EXEC);
	bool seed = sgx_encl_seed(encl);

	if (encl->initialized &&
	    (start < encl->base || end > encl->base + encl->size)) {
		sgx_drv_log("mmap: [0x%llx, 0x%llx) is outside ELRANGE of an "
			    "initialized enclave", (unsigned long long)start,
			    (unsigned long long)end);
		sgx_sec_denied(f, op, start, want, -1, "outside-elrange", EACCES);
		return -EACCES;
	}
	if (personality(0xffffffff) & READ_IMPLIES_EXEC) {
		sgx_drv_log("mmap: READ_IMPLIES_EXEC personality");
		sgx_sec_denied(f, op, start, want, -1, "read-implies-exec", EACCES);
		return -EACCES;
	}
	if (!want)
		return sgx_sec_map(f, start, end, prot, is_mprotect);
	/* Page by page, but past whatever the table holds nothing for. */
	for (uint64_t a = start; a < end; a = sgx_encl_next_page(encl, a)) {
		uint8_t v = sgx_encl_page_prot(encl, a);

		if (!v) {
			if (!seed)
				continue;
			sgx_drv_log("mmap: no enclave page at 0x%llx: only "
				    "PROT_NONE may map it (v22 rule)",
				    (unsigned long long)a);
			sgx_sec_denied(f, op, a, want, 0, "no-page", EACCES);
			return -EACCES;
		}
		if (want & ~v & 7) {
			sgx_drv_log("mmap: permissions 0x%x exceed the page's "
				    "0x%x at 0x%llx", want, v & 7,
				    (unsigned long long)a);
			sgx_sec_denied(f, op, a, want, v & 7, "max-permissions",
				       EACCES);
			return -EACCES;
		}
	}
	return sgx_sec_map(f, start, end, prot, is_mprotect);
}

/* Make the host mapping of [start, end) reflect window permissions @prot. */
static int host_apply(struct sgx_file *f, uint64_t start, uint64_t end,
		      int prot, bool placeholder)
{
	struct sgx_encl *encl = f->encl;
	uint64_t lo = start, hi = end;
	int ret = 0;

	if (encl->created) {
		lo = start > encl->base ? start : encl->base;
		hi = end < encl->base + encl->size ? end : encl->base + encl->size;
	}
	if (!encl->created || lo >= hi) {
		lo = hi = end;
	}
	if (placeholder) {
		/* Outside ELRANGE a window has no pages: inaccessible. */
		if (start < lo &&
		    raw_mmap((void *)start, lo - start, PROT_NONE,
			     MAP_FIXED | MAP_NORESERVE) == MAP_FAILED)
			return -ENOMEM;
		if (hi < end &&
		    raw_mmap((void *)hi, end - hi, PROT_NONE,
			     MAP_FIXED | MAP_NORESERVE) == MAP_FAILED)
			return -ENOMEM;
	}
	/* A new window (placeholder: MAP_FIXED) replaces whatever the host
	 * had there, so the pages are mapped anew; mprotect only changes
	 * the protection of what is mapped. */
	if (lo < hi)
		ret = placeholder ?
		      sgx_encl_remap(encl->engine, lo, hi - lo, prot) :
		      sgxemu_enclave_set_prot(encl->engine, lo, hi - lo, prot);
	return ret;
}

/* --- ELRANGE at CREATE ------------------------------------------------------------- */

/*
 * Does [start, end) hold memory the program can access? The engine maps
 * ELRANGE over whatever is there, which on hardware would not touch the
 * program's own mappings; a SECS.BASEADDR pointing at the heap or a stack
 * must not wipe them. Reservations (PROT_NONE, anonymous or device
 * windows) are fine. Reads /proc/self/maps with raw system calls.
 */
bool sgx_range_in_use(uint64_t start, uint64_t end)
{
	char buf[4096], line[512];
	size_t ll = 0;
	bool used = false;
	ssize_t n;
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps",
			      O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;	/* cannot tell: let ECREATE decide */
	while (!used && (n = syscall(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && !used; i++) {
			unsigned long lo, hi;
			char perms[5];

			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
				continue;
			if (lo < end && hi > start && strncmp(perms, "---", 3))
				used = true;
		}
	}
	syscall(SYS_close, fd);
	return used;
}

/* --- mmap ------------------------------------------------------------------------ */

void *sgx_drv_mmap(struct sgx_file *f, void *addr, size_t len, int prot,
		   int flags, off_t offset, int *err)
{
	uint64_t start, end;
	struct drops d = { 0 };
	bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
	void *p;
	int ret;

	(void)offset;	/* the kernel ignores it: addresses are linear */
	if (f->dev != SGX_DEV_ENCLAVE) {
		*err = -ENODEV;
		return MAP_FAILED;
	}
	if (!len || len > (1ULL << 47)) {
		*err = len ? -ENOMEM : -EINVAL;
		return MAP_FAILED;
	}
	if ((flags & MAP_TYPE) == MAP_PRIVATE) {
		sgx_drv_log("mmap: MAP_PRIVATE of an enclave is refused");
		sgx_sec_denied(f, "mmap", (uintptr_t)addr, prot, -1, "map-private",
			       EINVAL);
		*err = -EINVAL;
		return MAP_FAILED;
	}
	if ((prot & PROT_WRITE) && !f->writable) {
		sgx_drv_log("mmap: PROT_WRITE of a device opened read-only");
		*err = -EACCES;
		return MAP_FAILED;
	}
	len = (len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	if (fixed && ((uintptr_t)addr & PAGE_MASK_LOW)) {
		*err = -EINVAL;
		return MAP_FAILED;
	}

	pthread_mutex_lock(&sgx_drv_lock);
	if (!fixed || (flags & MAP_FIXED_NOREPLACE)) {
		p = raw_mmap(addr, len, PROT_NONE,
			     MAP_NORESERVE | (flags & MAP_FIXED_NOREPLACE));
		if (p == MAP_FAILED || (fixed && p != addr)) {
			ret = p == MAP_FAILED ? -errno : -EEXIST;
			if (p != MAP_FAILED)
				raw_munmap((uintptr_t)p, len);
			goto fail;
		}
		start = (uintptr_t)p;
		end = start + len;
		ret = sgx_encl_may_map(f, start, end, prot, false);
		if (ret) {
			raw_munmap(start, len);
			goto fail;
		}
		/* Should the new range lie in ELRANGE (the program unmapped
		 * part of it), the EPC pages are mapped into it anew. */
		ret = host_apply(f, start, end, prot, true);
	} else {
		start = (uintptr_t)addr;
		end = start + len;
		if (end < start) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = sgx_encl_may_map(f, start, end, prot, false);
		if (ret)
			goto fail;
		ret = vma_cut(start, end, &d);
		if (!ret)
			ret = host_apply(f, start, end, prot, true);
	}
	if (!ret)
		ret = vma_insert(start, end, prot, f);
	if (ret)
		goto fail;
	sgx_file_get(f);
	pthread_mutex_unlock(&sgx_drv_lock);
	drops_put(&d);
	return (void *)(uintptr_t)start;
fail:
	pthread_mutex_unlock(&sgx_drv_lock);
	drops_put(&d);
	*err = ret;
	return MAP_FAILED;
}

/* --- mprotect --------------------------------------------------------------------- */

int sgx_vma_mprotect(void *addr, size_t len, int prot)
{
	uint64_t start = (uintptr_t)addr, end;
	int ret = 0;

	len = (len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	end = start + len;
	pthread_mutex_lock(&sgx_drv_lock);
	if (!vma_overlaps(start, end)) {
		pthread_mutex_unlock(&sgx_drv_lock);
		return 1;
	}
	if ((start & PAGE_MASK_LOW) || end < start) {
		ret = -EINVAL;
		goto out;
	}
	ret = vma_split_at(start);
	if (!ret)
		ret = vma_split_at(end);
	if (ret)
		goto out;
	/* In address order; the first refusal stops, earlier parts keep their
	 * new permissions, as mprotect does across VMAs. */
	for (uint64_t a = start; a < end && !ret; ) {
		struct sgx_vma *v = NULL;
		uint64_t next = end;

		for (size_t i = 0; i < nr_vmas; i++) {
			if (vmas[i].start <= a && vmas[i].end > a) {
				v = &vmas[i];
				break;
			}
			if (vmas[i].start > a && vmas[i].start < next)
				next = vmas[i].start;
		}
		if (!v) {
			/* Not enclave memory: libc's mprotect. */
			if (syscall(SYS_mprotect, (void *)a, (size_t)(next - a), prot))
				ret = -errno;
			a = next;
			continue;
		}
		/* A read-only open never had VM_MAYWRITE. */
		if ((prot & PROT_WRITE) && !v->file->writable) {
			ret = -EACCES;
			break;
		}
		ret = sgx_encl_may_map(v->file, v->start, v->end, prot, true);
		if (ret)
			break;
		ret = host_apply(v->file, v->start, v->end, prot, false);
		if (!ret)
			v->prot = prot;
		a = v->end;
	}
out:
	pthread_mutex_unlock(&sgx_drv_lock);
	return ret;
}

/* --- munmap / mremap ----------------------------------------------------------- */

int sgx_vma_munmap(void *addr, size_t len)
{
	uint64_t start = (uintptr_t)addr, end;
	struct drops d = { 0 };
	int ret;

	if ((start & PAGE_MASK_LOW) || !len)
		return 1;	/* libc's munmap gives the EINVAL */
	len = (len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	end = start + len;
	pthread_mutex_lock(&sgx_drv_lock);
	if (end < start || !vma_overlaps(start, end)) {
		pthread_mutex_unlock(&sgx_drv_lock);
		return 1;
	}
	ret = vma_cut(start, end, &d);
	if (!ret && raw_munmap(start, len))
		ret = -errno;
	pthread_mutex_unlock(&sgx_drv_lock);
	/* A release puts an inaccessible reservation back over ELRANGE
	 * (the engine's destroy): what was just unmapped stays unmapped. */
	if (drops_put(&d))
		raw_munmap(start, len);
	return ret;
}

void sgx_vma_forget(void *addr, size_t len)
{
	uint64_t start = (uintptr_t)addr;
	struct drops d = { 0 };

	len = (len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	pthread_mutex_lock(&sgx_drv_lock);
	vma_cut(start, start + len, &d);
	pthread_mutex_unlock(&sgx_drv_lock);
	drops_put(&d);
}

int sgx_vma_mremap(void *old, size_t old_len, size_t new_len, int flags,
		   void *new_addr, void **result)
{
	uint64_t start = (uintptr_t)old;
	int ret;

	(void)new_addr;
	old_len = (old_len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	new_len = (new_len + PAGE_MASK_LOW) & ~PAGE_MASK_LOW;
	pthread_mutex_lock(&sgx_drv_lock);
	if (!vma_overlaps(start, start + (old_len ? old_len : 4096))) {
		pthread_mutex_unlock(&sgx_drv_lock);
		return 1;
	}
	pthread_mutex_unlock(&sgx_drv_lock);
	if (new_len > old_len) {
		/* VM_DONTEXPAND: an enclave window cannot grow. */
		sgx_drv_log("mremap: enclave mappings cannot grow");
		return -EFAULT;
	}
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		sgx_drv_log("mremap: moving an enclave mapping is not supported");
		return -EINVAL;
	}
	if (new_len < old_len) {
		ret = sgx_vma_munmap((void *)(uintptr_t)(start + new_len),
				     old_len - new_len);
		if (ret < 0)
			return ret;
	}
	*result = old;
	return 0;
}
