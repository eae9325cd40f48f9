/* SPDX-License-Identifier: MIT */
/*
 * Where an added page's contents come from: the mapping that holds the
 * source address, as the kernel's ADD_PAGES finds the source VMA. The
 * security hooks (src/lsm/) decide on it; the kernel's own rule is that a
 * source whose VMA could never be executable (a file on a noexec mount:
 * no VM_MAYEXEC) is refused with EACCES.
 */
#ifndef SGXEMU_DRIVER_PAGE_SOURCE_H
#define SGXEMU_DRIVER_PAGE_SOURCE_H

#include <stdint.h>

#include "lsm/hooks.h"

struct sgx_page_source {
	struct lsm_source src;		/* what the hooks see */
	char path[512];			/* storage for src.path */
	uint64_t start, end;		/* the mapping, for reuse by the */
	bool valid;			/* next page of the same ioctl */
};

/*
 * Describe the mapping containing @addr. Returns 0, or -EFAULT when no
 * mapping contains it (the kernel's answer for a missing source VMA).
 */
int sgx_page_source(uint64_t addr, struct sgx_page_source *out);

#endif /* SGXEMU_DRIVER_PAGE_SOURCE_H */
