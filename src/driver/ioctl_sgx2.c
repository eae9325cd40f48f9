/* SPDX-License-Identifier: MIT */
/*
 * The mainline SGX2 ioctls (linux-driver-facts.md §7):
 * SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS, _MODIFY_TYPES and _REMOVE_PAGES,
 * with the kernel's order of checks, its errno for each refusal, and the
 * whole struct written back (result, count) after the page loop. The page
 * work is in edmm.c.
 */
#include <errno.h>

#include <asm/sgx.h>

#include "driver/edmm.h"

/*
 * The common prefix (§7.1 steps 2-5) after the ioctl gate: ENODEV on an
 * SGX1 platform (before the argument is read), EINVAL before INIT, EFAULT
 * for the argument, EINVAL for the kernel's offset/length validation.
 */
static int prefix(struct sgx_file *f, unsigned long arg, void *ioc,
		  size_t size, const char *name)
{
	struct sgx_encl *encl = f->encl;
	const uint64_t *head = ioc;

	if (!sgx_edmm_sgx2()) {
		sgx_drv_log("%s: the platform has no SGX2", name);
		return -ENODEV;
	}
	if (!encl->initialized) {
		sgx_drv_log("%s: the enclave is not initialized", name);
		return -EINVAL;
	}
	if (sgx_copy_from_user(ioc, arg, size))
		return -EFAULT;
	/* offset and length lead every SGX2 struct. */
	return sgx_validate_offset_length(encl, head[0], head[1], name);
}

/* The output fields must come in as 0 (EINVAL otherwise). */
static int outputs_zero(uint64_t result, uint64_t count, const char *name)
{
	if (result || count) {
		sgx_drv_log("%s: result and count must be 0", name);
		return -EINVAL;
	}
	return 0;
}

/* One page of an ioctl (edmm.c): 0 or -errno, an SGX status in *status. */
typedef int (*page_op)(struct sgx_encl *encl, uint64_t addr, uint64_t arg,
		       uint64_t *status);

/*
 * The page loop the three share (§7.1): @op with @op_arg on each page of
 * the struct's [offset, offset + length) up to the first error, an SGX
 * status into *@result where the struct has one, the bytes done into
 * *@count, then the whole struct @ioc back to the program (a failed copy
 * wins over the loop's result).
 */
static long page_loop(struct sgx_file *f, unsigned long arg, void *ioc,
		      size_t size, page_op op, uint64_t op_arg,
		      __u64 *result, __u64 *count)
{
	const uint64_t *head = ioc;
	uint64_t base = f->encl->base + head[0], length = head[1], c;
	int ret = 0;

	for (c = 0; c < length; c += 4096) {
		uint64_t status = 0;

		ret = op(f->encl, base + c, op_arg, &status);
		if (status && result)
			*result = status;
		if (ret)
			break;
	}
	*count = c;
	if (sgx_copy_to_user(arg, ioc, size))
		return -EFAULT;
	return ret;
}

static long ioc_restrict(struct sgx_file *f, unsigned long arg)
{
	static const char name[] = "RESTRICT_PERMISSIONS";
	struct sgx_enclave_restrict_permissions ioc;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), name);
	if (ret)
		return ret;
	if (ioc.permissions & ~SGX_SECINFO_PERM_MASK) {
		sgx_drv_log("%s: bits outside RWX", name);
		return -EINVAL;
	}
	if ((ioc.permissions & SGX_SECINFO_W) &&
	    !(ioc.permissions & SGX_SECINFO_R)) {
		sgx_drv_log("%s: W without R", name);
		return -EINVAL;
	}
	ret = outputs_zero(ioc.result, ioc.count, name);
	if (ret)
		return ret;
	return page_loop(f, arg, &ioc, sizeof(ioc), sgx_edmm_restrict,
			 ioc.permissions, &ioc.result, &ioc.count);
}

static long ioc_modify_types(struct sgx_file *f, unsigned long arg)
{
	static const char name[] = "MODIFY_TYPES";
	struct sgx_enclave_modify_types ioc;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), name);
	if (ret)
		return ret;
	if (ioc.page_type & ~0xffULL) {
		sgx_drv_log("%s: page_type has bits outside 7:0", name);
		return -EINVAL;
	}
	ret = outputs_zero(ioc.result, ioc.count, name);
	if (ret)
		return ret;
	if (ioc.page_type != SGX_PT_TCS && ioc.page_type != SGX_PT_TRIM) {
		sgx_drv_log("%s: page_type %llu is neither TCS nor TRIM", name,
			    (unsigned long long)ioc.page_type);
		return -EINVAL;
	}
	return page_loop(f, arg, &ioc, sizeof(ioc), sgx_edmm_modify_type,
			 ioc.page_type, &ioc.result, &ioc.count);
}

static long ioc_remove_pages(struct sgx_file *f, unsigned long arg)
{
	static const char name[] = "REMOVE_PAGES";
	struct sgx_enclave_remove_pages ioc;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), name);
	if (ret)
		return ret;
	if (ioc.count) {
		sgx_drv_log("%s: count must be 0", name);
		return -EINVAL;
	}
	/* The struct has no result field. */
	return page_loop(f, arg, &ioc, sizeof(ioc), sgx_edmm_remove, 0, NULL,
			 &ioc.count);
}

long sgx_ioc_sgx2(struct sgx_file *f, unsigned long cmd, unsigned long arg)
{
	switch (cmd) {
	case SGX_IOC_ENCLAVE_RESTRICT_PERMISSIONS:
		return ioc_restrict(f, arg);
	case SGX_IOC_ENCLAVE_MODIFY_TYPES:
		return ioc_modify_types(f, arg);
	case SGX_IOC_ENCLAVE_REMOVE_PAGES:
		return ioc_remove_pages(f, arg);
	default:
		return -ENOTTY;
	}
}
