/* SPDX-License-Identifier: MIT */
/*
 * The security hooks the driver calls (seed 007's enclave_load idea, plus
 * init and mapping hooks): each returns 0 to allow — possibly with reduced
 * permissions — or a negative errno to deny, and audits the decision as the
 * policy asks. In permissive mode a denial is audited and then allowed.
 */
#ifndef SGXEMU_LSM_HOOKS_H
#define SGXEMU_LSM_HOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lsm/policy.h"

/* Page permissions as declared at add time (SECINFO R/W/X bits). */
#define LSM_R	1U
#define LSM_W	2U
#define LSM_X	4U

/* Where an added page's contents came from (the source mapping). */
struct lsm_source {
	bool anonymous;		/* anonymous memory, no file behind it */
	bool noexec_mount;	/* file on a noexec mount (no VM_MAYEXEC) */
	bool exec_denied;	/* the caller could not execute the file */
	const char *path;	/* file path, or NULL */
	dev_t dev;
	ino_t ino;
	uid_t uid;
	mode_t mode;
};

/* What is known of the enclave at the time of a hook. */
struct lsm_enclave {
	uint64_t base;
	uint64_t size;
	const uint8_t *mrenclave;	/* NULL before EINIT */
	const uint8_t *mrsigner;	/* NULL before EINIT */
};

struct lsm_init_info {
	const uint8_t *mrenclave;	/* SIGSTRUCT.ENCLAVEHASH */
	const uint8_t *mrsigner;	/* SHA-256 of SIGSTRUCT.MODULUS */
	uint16_t isvprodid;
	uint16_t isvsvn;
	uint64_t attributes;		/* SECS ATTRIBUTES.FLAGS */
};

/*
 * The process-wide policy the hooks consult: the default (mainline) until
 * lsm_init() loads $SGXEMU_POLICY (or the file @path, if not NULL).
 * Returns 0 or -errno with a one-line reason in @why.
 */
int lsm_init(const char *path, char *why, size_t whylen);
const struct lsm_policy *lsm_current(void);
/* Replace the current policy (tests; the shim at start-up). */
void lsm_set_policy(const struct lsm_policy *p);

/* Page add: *@max_prot in/out: the declared R/W/X, maybe with X removed. */
int lsm_page_add(const struct lsm_enclave *e, uint64_t addr,
		 const struct lsm_source *src, unsigned *max_prot);
/* EINIT: signer and enclave lists, DEBUG, PROVISIONKEY. */
int lsm_enclave_init(const struct lsm_enclave *e,
		     const struct lsm_init_info *info);
/* mmap/mprotect of enclave memory with PROT_* bits @prot. */
int lsm_enclave_map(const struct lsm_enclave *e, uint64_t addr, uint64_t len,
		    int prot, bool is_mprotect);
/* Opening the provision device. */
int lsm_provision_open(const char *path);

/*
 * A refusal the driver itself makes (e.g. a mapping more permissive than
 * the pages it covers), audited with the same record format.
 */
void lsm_audit_driver_denial(const char *op, const struct lsm_enclave *e,
			     uint64_t addr, unsigned requested,
			     unsigned allowed, const char *rule, int err);

#endif /* SGXEMU_LSM_HOOKS_H */
