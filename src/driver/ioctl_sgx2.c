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
	uint64_t off, len;

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
	off = ((const uint64_t *)ioc)[0];
	len = ((const uint64_t *)ioc)[1];
	if ((off & 0xfff) || !len || (len & 0xfff) || off + len < off ||
	    off + len - 4096 >= encl->size) {
		sgx_drv_log("%s: bad offset/length 0x%llx/0x%llx", name,
			    (unsigned long long)off, (unsigned long long)len);
		return -EINVAL;
	}
	return 0;
}

static long ioc_restrict(struct sgx_file *f, unsigned long arg)
{
	struct sgx_enclave_restrict_permissions ioc;
	uint64_t c;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), "RESTRICT_PERMISSIONS");
	if (ret)
		return ret;
	if (ioc.permissions & ~SGX_SECINFO_PERM_MASK) {
		sgx_drv_log("RESTRICT_PERMISSIONS: bits outside RWX");
		return -EINVAL;
	}
	if ((ioc.permissions & SGX_SECINFO_W) &&
	    !(ioc.permissions & SGX_SECINFO_R)) {
		sgx_drv_log("RESTRICT_PERMISSIONS: W without R");
		return -EINVAL;
	}
	if (ioc.result || ioc.count) {
		sgx_drv_log("RESTRICT_PERMISSIONS: result and count must be 0");
		return -EINVAL;
	}
	for (c = 0; c < ioc.length; c += 4096) {
		uint64_t status = 0;

		ret = sgx_edmm_restrict(f->encl, f->encl->base + ioc.offset + c,
					ioc.permissions, &status);
		if (status)
			ioc.result = status;
		if (ret)
			break;
	}
	ioc.count = c;
	if (sgx_copy_to_user(arg, &ioc, sizeof(ioc)))
		return -EFAULT;
	return ret;
}

static long ioc_modify_types(struct sgx_file *f, unsigned long arg)
{
	struct sgx_enclave_modify_types ioc;
	uint64_t c;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), "MODIFY_TYPES");
	if (ret)
		return ret;
	if (ioc.page_type & ~0xffULL) {
		sgx_drv_log("MODIFY_TYPES: page_type has bits outside 7:0");
		return -EINVAL;
	}
	if (ioc.result || ioc.count) {
		sgx_drv_log("MODIFY_TYPES: result and count must be 0");
		return -EINVAL;
	}
	if (ioc.page_type != SGX_PT_TCS && ioc.page_type != SGX_PT_TRIM) {
		sgx_drv_log("MODIFY_TYPES: page_type %llu is neither TCS nor "
			    "TRIM", (unsigned long long)ioc.page_type);
		return -EINVAL;
	}
	for (c = 0; c < ioc.length; c += 4096) {
		uint64_t status = 0;

		ret = sgx_edmm_modify_type(f->encl,
					   f->encl->base + ioc.offset + c,
					   ioc.page_type, &status);
		if (status)
			ioc.result = status;
		if (ret)
			break;
	}
	ioc.count = c;
	if (sgx_copy_to_user(arg, &ioc, sizeof(ioc)))
		return -EFAULT;
	return ret;
}

static long ioc_remove_pages(struct sgx_file *f, unsigned long arg)
{
	struct sgx_enclave_remove_pages ioc;
	uint64_t c;
	int ret;

	ret = prefix(f, arg, &ioc, sizeof(ioc), "REMOVE_PAGES");
	if (ret)
		return ret;
	if (ioc.count) {
		sgx_drv_log("REMOVE_PAGES: count must be 0");
		return -EINVAL;
	}
	for (c = 0; c < ioc.length; c += 4096) {
		ret = sgx_edmm_remove(f->encl, f->encl->base + ioc.offset + c);
		if (ret)
			break;
	}
	ioc.count = c;
	if (sgx_copy_to_user(arg, &ioc, sizeof(ioc)))
		return -EFAULT;
	return ret;
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
