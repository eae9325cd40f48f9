/* SPDX-License-Identifier: MIT */
/*
 * The ioctls of both user APIs, with the Linux driver's checks in its
 * order and its errno for each refusal.
 *
 * Mainline (linux-driver-facts.md §3-§7): CREATE, ADD_PAGES, INIT,
 * PROVISION, and the SGX2 ioctls (ioctl_sgx2.c: RESTRICT_PERMISSIONS,
 * MODIFY_TYPES, REMOVE_PAGES; ENODEV when the platform has no SGX2).
 *
 * Seed v22 (seed-tree uapi/asm/sgx.h): CREATE, ADD_PAGE, INIT,
 * SET_ATTRIBUTE. Both APIs are served on every device path; each enclave
 * speaks one, decided by what the program sends (speak() below). Where
 * v22 differs from mainline, a v22 enclave gets v22's answer:
 *  - ADD_PAGE adds one page at an absolute address with an EEXTEND mask;
 *    a page already there is EEXIST (mainline: EBUSY);
 *  - v22 validated the SECS in software, so every SECS ECREATE refuses is
 *    EINVAL (mainline: EIO from the ECREATE fault);
 *  - an EADD/EEXTEND or EINIT fault is EFAULT; a failed EINIT returns its
 *    positive SGX error code as the ioctl's value (mainline: EPERM);
 *  - SET_ATTRIBUTE's grant survives CREATE (the v22 mask is set at open).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <asm/sgx.h>

#include "driver/drv.h"
#include "driver/edmm.h"
#include "driver/security.h"

/* The seed (v22) ioctls that differ from mainline's. */
struct sgx_seed_add_page {
	uint64_t addr;
	uint64_t src;
	uint64_t secinfo;
	uint16_t mrmask;
	uint8_t  reserved[6];
};
#define SGX_SEED_IOC_ENCLAVE_ADD_PAGE \
	_IOW(SGX_MAGIC, 0x01, struct sgx_seed_add_page)
#define SGX_SEED_IOC_ENCLAVE_SET_ATTRIBUTE \
	_IOW(SGX_MAGIC, 0x03, struct sgx_enclave_provision)

_Static_assert(SGX_SEED_IOC_ENCLAVE_ADD_PAGE == 0x4020A401, "v22 ADD_PAGE");
_Static_assert(SGX_IOC_ENCLAVE_ADD_PAGES == 0xC030A401, "ADD_PAGES");

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static int prot_of_secinfo(uint64_t flags)
{
	return ((flags & SGX_SECINFO_R) ? PROT_READ : 0) |
	       ((flags & SGX_SECINFO_W) ? PROT_WRITE : 0) |
	       ((flags & SGX_SECINFO_X) ? PROT_EXEC : 0);
}

/* --- CREATE ------------------------------------------------------------------- */

static long ioc_create(struct sgx_file *f, unsigned long arg)
{
	struct sgx_encl *encl = f->encl;
	struct sgx_enclave_create ioc;
	struct sgx_secs secs;
	int sgx_err = 0, ret;

	if (encl->created) {
		sgx_drv_log("CREATE: the enclave already exists");
		return -EINVAL;
	}
	if (sgx_copy_from_user(&ioc, arg, sizeof(ioc)) ||
	    sgx_copy_from_user(&secs, ioc.src, sizeof(secs))) {
		sgx_drv_log("CREATE: bad pointer");
		return -EFAULT;
	}
	if (!is_pow2(secs.size) || secs.size == 1ULL << 63) {
		sgx_drv_log("CREATE: SECS.SIZE 0x%llx is not a power of two",
			    (unsigned long long)secs.size);
		return -EINVAL;
	}
	/*
	 * ELRANGE lives in this process: it must be reserved (PROT_NONE) or
	 * free, never the program's own memory, which the enclave's pages
	 * would replace. A SECS that ECREATE refuses anyway (unaligned base,
	 * bad size) keeps ECREATE's errno.
	 */
	if (!(secs.base & (secs.size - 1)) && secs.base + secs.size > secs.base &&
	    sgx_range_in_use(secs.base, secs.base + secs.size)) {
		sgx_drv_log("CREATE: ELRANGE [0x%llx, 0x%llx) holds accessible "
			    "memory of the program; reserve it first (PROT_NONE "
			    "mmap or a device mmap)",
			    (unsigned long long)secs.base,
			    (unsigned long long)(secs.base + secs.size));
		return -EINVAL;
	}
	ret = sgxemu_enclave_create(&secs, SGXEMU_CREATE_RESERVED,
				    &encl->engine, &sgx_err);
	if (ret) {
		sgx_drv_log("CREATE: ECREATE refused the SECS (%s, SGX %d)",
			    strerror(-ret), sgx_err);
		if (ret == -EIO)
			return sgx_encl_seed(encl) ? -EINVAL : -EIO;
		return ret;
	}
	if (sgx_drv_debug) {
		uint64_t xcr0 = sgx_host_xcr0();

		/* Legal, but not what hardware runs (docs/guide.md). */
		if (xcr0 & ~secs.attributes.xfrm)
			sgx_drv_log("CREATE: XFRM 0x%llx leaves out XCR0 "
				    "features 0x%llx, which stay enabled in "
				    "enclave mode here (XCR0 is the host's): "
				    "an all-ones XSAVE there writes them too",
				    (unsigned long long)secs.attributes.xfrm,
				    (unsigned long long)(xcr0 &
					~secs.attributes.xfrm));
	}
	encl->base = secs.base;
	encl->size = secs.size;
	encl->attributes = secs.attributes.flags;
	encl->debug = secs.attributes.flags & SGX_ATTR_DEBUG;
	if (!sgx_encl_seed(encl))
		encl->attributes_mask = SGX_ATTR_UNPRIV_MASK;
	encl->created = true;
	sgx_vma_created(f);
	/* Undecided enclaves too: a v22 ADD_PAGE detaches it again. */
	if (!sgx_encl_seed(encl))
		sgx_edmm_attach(encl);
	return 0;
}

/* --- ADD_PAGE(S) --------------------------------------------------------------- */

/* The kernel's sgx_validate_secinfo(): 0 or -EINVAL. */
static int validate_secinfo(const struct sgx_secinfo *si)
{
	uint64_t pt = si->flags & SGX_SECINFO_PT_MASK;
	uint64_t perm = si->flags & SGX_SECINFO_PERM_MASK;

	if (pt != SGX_SECINFO_REG && pt != SGX_SECINFO_TCS) {
		sgx_drv_log("ADD: SECINFO page type is neither REG nor TCS");
		return -EINVAL;
	}
	if ((perm & SGX_SECINFO_W) && !(perm & SGX_SECINFO_R)) {
		sgx_drv_log("ADD: SECINFO has W without R");
		return -EINVAL;
	}
	if (pt == SGX_SECINFO_TCS && perm) {
		sgx_drv_log("ADD: a TCS page must have no R/W/X in SECINFO");
		return -EINVAL;
	}
	if (si->flags & ~(SGX_SECINFO_PERM_MASK | SGX_SECINFO_PT_MASK)) {
		sgx_drv_log("ADD: SECINFO reserved flag bits set");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(si->reserved); i++)
		if (si->reserved[i]) {
			sgx_drv_log("ADD: SECINFO reserved bytes not zero");
			return -EINVAL;
		}
	return 0;
}

/*
 * One page: EADD (+EEXTEND per @mask) and the driver's bookkeeping. Its
 * contents are read from @src, or were read ahead into @read (NULL where
 * that page could not be read).
 */
static int add_one(struct sgx_file *f, uint64_t addr, unsigned long src,
		   const uint8_t *read, const struct sgx_secinfo *si,
		   uint16_t mask, struct sgx_page_source *ps)
{
	struct sgx_encl *encl = f->encl;
	uint8_t buf[4096] __attribute__((aligned(4096)));
	const uint8_t *page = read ? read : buf;
	uint8_t max;
	int sgx_err = 0, ret;

	if (sgx_encl_page_prot(encl, addr)) {
		sgx_drv_log("ADD: a page already exists at 0x%llx",
			    (unsigned long long)addr);
		return sgx_encl_seed(encl) ? -EEXIST : -EBUSY;
	}
	max = (si->flags & SGX_SECINFO_PT_MASK) == SGX_SECINFO_TCS
		? PROT_READ | PROT_WRITE : (uint8_t)prot_of_secinfo(si->flags);
	/* The source VMA (EFAULT), then the policy on it (EACCES: the kernel
	 * refuses a source that could never be executable). */
	ret = sgx_sec_page_add(f, addr, src, ps, &max);
	if (ret)
		return ret;
	if (!read && sgx_copy_from_user(buf, src, sizeof(buf))) {
		sgx_drv_log("ADD: source 0x%lx is not readable", src);
		return -EFAULT;
	}
	ret = sgx_encl_set_page_prot(encl, addr, SGX_PAGE_EXISTS | max);
	if (ret)
		return ret;
	ret = sgxemu_enclave_add_page(encl->engine, addr, page, si, mask,
				      sgx_vma_prot_at(f, addr), &sgx_err);
	if (ret) {
		sgx_encl_set_page_prot(encl, addr, 0);
		sgx_drv_log("ADD: EADD/EEXTEND at 0x%llx failed (%s, SGX %d)",
			    (unsigned long long)addr, strerror(-ret), sgx_err);
		if (ret == -EEXIST)
			return sgx_encl_seed(encl) ? -EEXIST : -EBUSY;
		if (ret == -EIO)
			return sgx_encl_seed(encl) ? -EFAULT : -EIO;
		return ret;
	}
	sgx_encl_window_check(encl->engine, addr, max);
	return 0;
}

static long ioc_add_page_seed(struct sgx_file *f, unsigned long arg)
{
	struct sgx_encl *encl = f->encl;
	struct sgx_seed_add_page ioc;
	struct sgx_page_source ps = { .valid = false };
	struct sgx_secinfo si;
	int ret;

	if (sgx_copy_from_user(&ioc, arg, sizeof(ioc)))
		return -EFAULT;
	if (!encl->created || encl->initialized) {
		sgx_drv_log("ADD_PAGE: the enclave is %s",
			    encl->created ? "already initialized" : "not created");
		return -EINVAL;
	}
	if ((ioc.addr & 0xfff) || (ioc.src & 0xfff)) {
		sgx_drv_log("ADD_PAGE: addr or src not page aligned");
		return -EINVAL;
	}
	if (ioc.addr < encl->base || ioc.addr - encl->base >= encl->size) {
		sgx_drv_log("ADD_PAGE: 0x%llx is outside ELRANGE",
			    (unsigned long long)ioc.addr);
		return -EINVAL;
	}
	if (sgx_copy_from_user(&si, ioc.secinfo, sizeof(si)))
		return -EFAULT;
	ret = validate_secinfo(&si);
	if (ret)
		return ret;
	return add_one(f, ioc.addr, ioc.src, NULL, &si, ioc.mrmask, &ps);
}

/*
 * The kernel's sgx_validate_offset_length() (facts §4.1 step 5), for
 * ADD_PAGES and the SGX2 ioctls: offset and length page-aligned, length
 * not 0, the range inside ELRANGE without wrapping. 0 or -EINVAL.
 */
int sgx_validate_offset_length(const struct sgx_encl *encl, uint64_t offset,
			       uint64_t length, const char *ioctl)
{
	if ((offset & 0xfff) || !length || (length & 0xfff) ||
	    offset + length < offset || offset + length - 4096 >= encl->size) {
		sgx_drv_log("%s: bad offset/length 0x%llx/0x%llx", ioctl,
			    (unsigned long long)offset,
			    (unsigned long long)length);
		return -EINVAL;
	}
	return 0;
}

/*
 * ADD_PAGES reads its source ADD_AHEAD pages at a time and maps what it
 * added a run at a time (sgx_encl_add_batch_*): a 64 MiB Gramine enclave
 * is 16k pages, and a system call or two per page was most of its
 * start-up. Each page's checks and errors stay its own, in page order.
 */
#define ADD_AHEAD	64

static long ioc_add_pages(struct sgx_file *f, unsigned long arg)
{
	struct sgx_encl *encl = f->encl;
	struct sgx_enclave_add_pages ioc;
	struct sgx_page_source ps = { .valid = false };
	struct sgx_secinfo si;
	uint8_t *ahead = NULL;
	uint64_t c, chunk = 0, readable = 0;
	int ret = 0, r;

	if (!encl->created || encl->initialized) {
		sgx_drv_log("ADD_PAGES: the enclave is %s",
			    encl->created ? "already initialized" : "not created");
		return -EINVAL;
	}
	if (sgx_copy_from_user(&ioc, arg, sizeof(ioc)))
		return -EFAULT;
	if (ioc.src & 0xfff) {
		sgx_drv_log("ADD_PAGES: src not page aligned");
		return -EINVAL;
	}
	ret = sgx_validate_offset_length(encl, ioc.offset, ioc.length,
					 "ADD_PAGES");
	if (ret)
		return ret;
	if (sgx_copy_from_user(&si, ioc.secinfo, sizeof(si)))
		return -EFAULT;
	ret = validate_secinfo(&si);
	if (ret)
		return ret;
	if (ioc.length > 4096) {
		ahead = aligned_alloc(4096, ADD_AHEAD * 4096);
		/* The paging lock's owner checks, without a gettid each. */
		sgxemu__thread_learn(false);
	}
	if (ahead)
		sgx_encl_add_batch_begin(encl->engine);
	for (c = 0; c < ioc.length; c += 4096) {
		const uint8_t *read = NULL;

		if (ahead) {
			if (c >= chunk + ADD_AHEAD * 4096 || !c) {
				uint64_t n = ioc.length - c;
				long got;

				if (n > ADD_AHEAD * 4096)
					n = ADD_AHEAD * 4096;
				chunk = c;
				got = sgx_copy_from_user_upto(ahead, ioc.src + c, n);
				readable = got > 0 ? (uint64_t)got & ~4095ULL : 0;
			}
			/* A page past the readable part is read (and fails)
			 * on its own, after its own earlier checks. */
			if (c - chunk < readable)
				read = ahead + (c - chunk);
		}
		ret = add_one(f, encl->base + ioc.offset + c, ioc.src + c, read,
			      &si, (ioc.flags & SGX_PAGE_MEASURE) ? 0xFFFF : 0, &ps);
		if (ret)
			break;
	}
	if (ahead) {
		r = sgx_encl_add_batch_end(encl->engine);
		if (!ret && r) {
			sgx_drv_log("ADD_PAGES: mapping the added pages failed (%s)",
				    strerror(-r));
			ret = r;
		}
		free(ahead);
	}
	ioc.count = c;
	if (sgx_copy_to_user(arg, &ioc, sizeof(ioc)))
		return -EFAULT;
	return ret;
}

/* --- INIT ------------------------------------------------------------------------ */

/* The kernel's platform checks on the SIGSTRUCT (facts §5 step 8). */
static int check_sigstruct_masks(const struct sgx_sigstruct *ss)
{
	uint32_t r0[4], r1[4];
	uint64_t attr_rsvd, xfrm_rsvd, misc_rsvd;

	sgxemu_platform_cpuid(0, r0);
	sgxemu_platform_cpuid(1, r1);
	misc_rsvd = ~(uint64_t)r0[1] | ~1ULL;
	attr_rsvd = ~((uint64_t)r1[1] << 32 | r1[0]) |
		    (1ULL << 3) | SGX_ATTR_CET | (1ULL << 8) | (1ULL << 9) |
		    ~((1ULL << 11) - 1);
	xfrm_rsvd = ~((uint64_t)r1[3] << 32 | r1[2]);
	if (ss->body.attributes.flags & ss->body.attributemask.flags & attr_rsvd)
		return -EINVAL;
	if ((uint64_t)(ss->body.miscselect & ss->body.miscmask) & misc_rsvd)
		return -EINVAL;
	if (ss->body.attributes.xfrm & ss->body.attributemask.xfrm & xfrm_rsvd)
		return -EINVAL;
	return 0;
}

static long ioc_init(struct sgx_file *f, unsigned long arg)
{
	struct sgx_encl *encl = f->encl;
	struct sgx_enclave_init ioc;
	struct sgx_sigstruct ss;
	int sgx_err = 0, ret;

	if (!encl->created || encl->initialized) {
		sgx_drv_log("INIT: the enclave is %s",
			    encl->created ? "already initialized" : "not created");
		return -EINVAL;
	}
	if (sgx_copy_from_user(&ioc, arg, sizeof(ioc)) ||
	    sgx_copy_from_user(&ss, ioc.sigstruct, sizeof(ss))) {
		sgx_drv_log("INIT: bad pointer");
		return -EFAULT;
	}
	if (ss.header.vendor != 0 && ss.header.vendor != SGX_SIGSTRUCT_VENDOR_INTEL) {
		sgx_drv_log("INIT: SIGSTRUCT.VENDOR 0x%x is neither 0 nor 0x8086",
			    ss.header.vendor);
		return -EINVAL;
	}
	if (encl->attributes & ~encl->attributes_mask) {
		sgx_drv_log("INIT: attributes 0x%llx not allowed (allowed 0x%llx:"
			    " PROVISIONKEY needs %s, EINITTOKENKEY is never allowed)",
			    (unsigned long long)encl->attributes,
			    (unsigned long long)encl->attributes_mask,
			    sgx_encl_seed(encl) ? "SET_ATTRIBUTE" :
			    "PROVISION after CREATE");
		sgx_sec_denied(f, "init", encl->base, -1, -1,
			       encl->attributes & SGX_ATTR_PROVISIONKEY &
			       ~encl->attributes_mask ?
			       "provisionkey-without-device" : "attributes",
			       EACCES);
		return -EACCES;
	}
	if (check_sigstruct_masks(&ss)) {
		sgx_drv_log("INIT: SIGSTRUCT requests reserved attribute, "
			    "MISCSELECT or XFRM bits");
		return -EINVAL;
	}
	ret = sgx_sec_init(f, &ss);
	if (ret)
		return ret;
	/* The engine writes the launch-control MSRs with the signer's hash
	 * before EINIT, as the kernel does on FLC parts. */
	ret = sgxemu_enclave_init(encl->engine, &ss, NULL, &sgx_err);
	if (ret == -EIO && sgx_err > 0 && !SGX_IS_FAULT(sgx_err)) {
		sgx_drv_log("INIT: EINIT returned %d (%s)", sgx_err,
			    sgx_error_name(sgx_err));
		return sgx_encl_seed(encl) ? sgx_err : -EPERM;
	}
	if (ret) {
		sgx_drv_log("INIT: EINIT failed (%s)", strerror(-ret));
		if (ret == -EIO)
			return sgx_encl_seed(encl) ? -EFAULT : -EIO;
		return ret;
	}
	encl->initialized = true;
	{
		const struct sgx_drv_observer *o =
			__atomic_load_n(&sgx_drv_observer, __ATOMIC_ACQUIRE);

		if (o && o->initialized)
			o->initialized(encl->engine);
	}
	return 0;
}

/* --- PROVISION / SET_ATTRIBUTE ------------------------------------------------------- */

/*
 * PROVISION (mainline) and SET_ATTRIBUTE (v22) share a number and a
 * struct. Any provision descriptor grants, whichever path opened it: on a
 * machine with the PSW's udev rules /dev/sgx/provision is a symlink to
 * /dev/sgx_provision, one device.
 */
static long ioc_provision(struct sgx_file *f, unsigned long arg)
{
	struct sgx_enclave_provision ioc;
	struct sgx_file *pf;

	if (sgx_copy_from_user(&ioc, arg, sizeof(ioc)))
		return -EFAULT;
	pf = sgx_fd_resolver ? sgx_fd_resolver((int)(unsigned int)ioc.fd) : NULL;
	if (!pf || pf->dev != SGX_DEV_PROVISION) {
		sgx_drv_log("PROVISION: fd %u is not an open provision device",
			    (unsigned int)ioc.fd);
		sgx_file_put(pf);
		return -EINVAL;
	}
	sgx_file_put(pf);
	f->encl->attributes_mask |= SGX_ATTR_PROVISIONKEY;
	if (!f->encl->created)
		f->encl->early_grant = true;
	return 0;
}

/* --- dispatch ------------------------------------------------------------------------- */

/*
 * Whether the enclave may take an ioctl that only @api has: it may when it
 * has spoken @api or nothing API-specific yet, and the ioctl decides it.
 * The first v22 ADD_PAGE gives the enclave what v22 granted at open and
 * what a SET_ATTRIBUTE before CREATE granted, and takes it off mainline's
 * EAUG-on-fault list.
 */
static bool speak(struct sgx_file *f, enum sgx_encl_api api, unsigned long cmd)
{
	struct sgx_encl *encl = f->encl;

	if (encl->api == api)
		return true;
	if (encl->api != SGX_ENCL_API_UNDECIDED) {
		sgx_drv_log("ioctl 0x%lx: the enclave speaks the %s API, this "
			    "number is the other API's", cmd,
			    sgx_encl_seed(encl) ? "v22" : "mainline");
		return false;
	}
	encl->api = api;
	if (api == SGX_ENCL_API_SEED) {
		encl->attributes_mask |= SGX_ATTR_UNPRIV_MASK;
		if (encl->early_grant)
			encl->attributes_mask |= SGX_ATTR_PROVISIONKEY;
		sgx_edmm_detach(encl);
	}
	return true;
}

_Static_assert(SGX_SEED_IOC_ENCLAVE_SET_ATTRIBUTE == SGX_IOC_ENCLAVE_PROVISION,
	       "SET_ATTRIBUTE and PROVISION share a number");

long sgx_drv_ioctl(struct sgx_file *f, unsigned long cmd, unsigned long arg)
{
	struct sgx_encl *encl = f->encl;
	bool busy = false;
	long ret;

	if (f->dev != SGX_DEV_ENCLAVE || !encl)
		return -ENOTTY;
	/* One ioctl at a time per enclave, unknown commands included. */
	if (!atomic_compare_exchange_strong(&encl->in_ioctl, &busy, true)) {
		sgx_drv_log("ioctl 0x%lx: another ioctl is running", cmd);
		return -EBUSY;
	}
	pthread_rwlock_rdlock(&sgx_fork_lock);
	switch (cmd) {
	case SGX_IOC_ENCLAVE_CREATE:
		ret = ioc_create(f, arg);
		break;
	case SGX_IOC_ENCLAVE_INIT:
		ret = ioc_init(f, arg);
		break;
	case SGX_IOC_ENCLAVE_PROVISION:
		ret = ioc_provision(f, arg);
		break;
	case SGX_IOC_ENCLAVE_ADD_PAGES:
		ret = speak(f, SGX_ENCL_API_MAINLINE, cmd) ?
		      ioc_add_pages(f, arg) : -ENOTTY;
		break;
	case SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS:
	case SGX_IOC_ENCLAVE_MODIFY_TYPES:
	case SGX_IOC_ENCLAVE_REMOVE_PAGES:
		ret = speak(f, SGX_ENCL_API_MAINLINE, cmd) ?
		      sgx_ioc_sgx2(f, cmd, arg) : -ENOTTY;
		break;
	case SGX_SEED_IOC_ENCLAVE_ADD_PAGE:
		ret = speak(f, SGX_ENCL_API_SEED, cmd) ?
		      ioc_add_page_seed(f, arg) : -ENOTTY;
		break;
	default:
		ret = -ENOTTY;
	}
	pthread_rwlock_unlock(&sgx_fork_lock);
	atomic_store(&encl->in_ioctl, false);
	return ret;
}
