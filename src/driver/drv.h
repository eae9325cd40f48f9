/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by driver.c, ioctl.c and vma.c.
 */
#ifndef SGXEMU_DRIVER_DRV_H
#define SGXEMU_DRIVER_DRV_H

#include <pthread.h>
#include <stdatomic.h>

#include "driver/driver.h"
#include "sgxemu/sgxemu.h"

/* Kernel flag bits of a page's maximum VMA permissions (vm_max_prot_bits),
 * kept as PROT_* bits plus "a page exists here". */
#define SGX_PAGE_EXISTS		0x80

/* Attributes every enclave may have (DEBUG, MODE64BIT, KSS, AEXNOTIFY). */
#define SGX_ATTR_UNPRIV_MASK	0x486ULL
#define SGX_ATTR_PRIV_MASK	(SGX_ATTR_PROVISIONKEY | SGX_ATTR_EINITTOKENKEY)

/*
 * The user API an enclave speaks (docs/guide.md "Devices and APIs"): not
 * the device path's but the program's, decided by the first ioctl whose
 * number only one API has (ADD_PAGES and the SGX2 ioctls: mainline;
 * ADD_PAGE: v22). Until then it answers as the mainline kernel does.
 */
enum sgx_encl_api {
	SGX_ENCL_API_UNDECIDED = 0,
	SGX_ENCL_API_MAINLINE,
	SGX_ENCL_API_SEED,
};

/* The driver's enclave object: one per open of an enclave device. */
struct sgx_encl {
	atomic_bool in_ioctl;		/* the kernel's IOCTL bit */
	bool created, initialized, debug;
	enum sgx_encl_api api;
	/* A PROVISION/SET_ATTRIBUTE grant before CREATE: mainline's CREATE
	 * drops it, v22 keeps it (applied if the enclave turns out v22). */
	bool early_grant;
	uint64_t base, size;
	uint64_t attributes;		/* SECS ATTRIBUTES.FLAGS */
	uint64_t attributes_mask;	/* what INIT allows */
	struct sgxemu_enclave *engine;	/* the processor's enclave */
	/* Per page of ELRANGE: SGX_PAGE_EXISTS | PROT_* maximum, in chunks of
	 * 4096 pages allocated on first use. */
	uint8_t **pages;
	size_t nr_chunks;
	bool inherited;			/* copied into a forked child */
	bool counted;			/* in the usage count (svn.c) */
	uint8_t mrenclave[32];		/* known after INIT (audit records) */
	uint8_t mrsigner[32];
};

struct sgx_file {
	atomic_long refs;		/* fds and mappings */
	enum sgx_api api;
	enum sgx_dev dev;
	bool writable;			/* opened O_RDWR / O_WRONLY */
	struct sgx_encl *encl;		/* enclave devices only */
	struct sgx_file *next, *prev;	/* every live file (fork) */
};

/* True once @encl has spoken the v22 API (else mainline rules apply). */
static inline bool sgx_encl_seed(const struct sgx_encl *encl)
{
	return encl->api == SGX_ENCL_API_SEED;
}

/* The permission table's chunk: allocated on first use, none where no
 * page is (driver.c). */
#define SGX_ENCL_CHUNK_PAGES	4096

/* Max permissions of the page at @addr: 0 when no page exists. */
uint8_t sgx_encl_page_prot(const struct sgx_encl *encl, uint64_t addr);
/* Past @addr, the first address that may hold a page (UINT64_MAX: none). */
uint64_t sgx_encl_next_page(const struct sgx_encl *encl, uint64_t addr);
int sgx_encl_set_page_prot(struct sgx_encl *encl, uint64_t addr, uint8_t v);

/* User memory access that never crashes: 0 or -EFAULT. */
int sgx_copy_from_user(void *dst, unsigned long src, size_t n);
int sgx_copy_to_user(unsigned long dst, const void *src, size_t n);
/* As much of @n bytes as is readable from the start (a short count at
 * the first unreadable byte); -EFAULT when none is. */
long sgx_copy_from_user_upto(void *dst, unsigned long src, size_t n);

/* An ADD_PAGES run: the pages added between these are mapped at the end
 * (encl.c); the end's value is the mapping's 0 or -errno. */
void sgx_encl_add_batch_begin(struct sgxemu_enclave *e);
int sgx_encl_add_batch_end(struct sgxemu_enclave *e);

/* The kernel's sgx_encl_may_map(): 0 or -EACCES (see vma.c). */
int sgx_encl_may_map(const struct sgx_file *f, uint64_t start, uint64_t end,
		     int prot, bool is_mprotect);
/* True when [start, end) holds memory the program can access (vma.c). */
bool sgx_range_in_use(uint64_t start, uint64_t end);
/* The host mapping's permissions at @addr (0 where no window is). */
int sgx_vma_prot_at(const struct sgx_file *f, uint64_t addr);

/* Map [addr, addr+len) of ELRANGE anew with window permissions @prot
 * (encl_map.c): what a MAP_FIXED device mmap does to the host mapping. */
int sgx_encl_remap(struct sgxemu_enclave *e, uint64_t addr, size_t len,
		   int prot);

/* The kernel's offset/length check of ADD_PAGES and the SGX2 ioctls
 * (ioctl.c): 0 or -EINVAL, with a log line naming @ioctl. */
int sgx_validate_offset_length(const struct sgx_encl *encl, uint64_t offset,
			       uint64_t length, const char *ioctl);

/* Window bits @map, with SGXEMU_MAP_REFUSED when they exceed the page's
 * vm_max_prot bits @max (§8.1 step 3.2: the fault handler's SIGBUS;
 * encl_map.c). */
uint8_t sgx_map_refusal(uint8_t map, uint8_t max);

/* A page added at @addr with vm_max_prot bits @max under a window mapped
 * before it (encl_map.c): refused, and mapped so, when the window's bits
 * exceed @max. */
void sgx_encl_window_check(struct sgxemu_enclave *e, uint64_t addr,
			   uint8_t max);

/* Record window permissions @prot over [addr, addr+len) of ELRANGE, where
 * no page is yet (encl_map.c); and do it for every window of @f's enclave
 * once CREATE gave it an ELRANGE (vma.c). */
void sgx_encl_window_prot(struct sgxemu_enclave *e, uint64_t addr, size_t len,
			  int prot);
void sgx_vma_created(struct sgx_file *f);

/* The SGX2 ioctls (ioctl_sgx2.c), after the ioctl gate. */
long sgx_ioc_sgx2(struct sgx_file *f, unsigned long cmd, unsigned long arg);

/* Every live file, linked by next (driver.c). Caller holds sgx_drv_lock. */
struct sgx_file *sgx_drv_files(void);

extern struct sgx_file *(*sgx_fd_resolver)(int fd);
extern pthread_mutex_t sgx_drv_lock;
extern pthread_rwlock_t sgx_fork_lock;

#endif /* SGXEMU_DRIVER_DRV_H */
