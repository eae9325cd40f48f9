/* SPDX-License-Identifier: MIT */
/*
 * Audit records: one line per decision, key=value pairs modelled on
 * SELinux AVC records, so that grep/awk/ausearch-style tools work on them:
 *
 *   type=SGX_AVC msg=audit(1733203200.123:42): op=page_add result=denied
 *   permissive=0 pid=1234 comm="test_sgx" exe="/path/test_sgx"
 *   encl=0x7f0000000000 mrenclave=... mrsigner=... addr=0x7f0000001000
 *   requested=r-x allowed=r-- src="/mnt/x/encl.bin" dev=0:45 ino=12
 *   rule=page.noexec-source line=3 errno=EACCES policy="strict.policy"
 */
#ifndef SGXEMU_LSM_AUDIT_H
#define SGXEMU_LSM_AUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "lsm/hooks.h"

struct lsm_audit_event {
	const char *op;			/* page_add, init, mmap, mprotect, ... */
	bool denied;
	const struct lsm_enclave *encl;	/* may be NULL */
	uint64_t addr, len;
	int requested, allowed;		/* R/W/X bits, -1 if not applicable */
	const struct lsm_source *src;	/* may be NULL */
	const uint8_t *mrenclave, *mrsigner;	/* override encl's (init) */
	const char *rule;
	int line;
	int err;			/* errno of a denial */
	const char *path;		/* device path (provision open) */
	bool driver;			/* the driver's own rule: never permissive */
	bool reduced;			/* allowed with fewer permissions */
};

/* Write @ev if the policy's audit level asks for it. */
void lsm_audit(const struct lsm_policy *p, const struct lsm_audit_event *ev);

#endif /* SGXEMU_LSM_AUDIT_H */
