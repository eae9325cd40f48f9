/* SPDX-License-Identifier: MIT */
/*
 * The built-in policy module: what the LSM hooks decide, read from a policy
 * file (docs/policy.md is the reference for its format). The default policy
 * is the mainline Linux kernel's behaviour; policies/strict.policy is the
 * shipped strict sample.
 */
#ifndef SGXEMU_LSM_POLICY_H
#define SGXEMU_LSM_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum lsm_action {
	LSM_ALLOW,
	LSM_DENY,
	LSM_STRIP_EXEC,		/* allow, with X removed from the page's maximum */
};

enum lsm_audit_level {
	LSM_AUDIT_NONE,
	LSM_AUDIT_DENIALS,
	LSM_AUDIT_ALL,
};

/* One switch of the policy, with where it was set (line 0: the default). */
struct lsm_setting {
	enum lsm_action action;
	int line;
};

/* A signer (MRSIGNER) or enclave (MRENCLAVE) rule. */
struct lsm_hash_rule {
	uint8_t hash[32];
	bool allow;
	int line;
};

struct lsm_policy {
	char source[256];		/* file name, or "built-in default" */
	bool permissive;		/* log denials, deny nothing */
	enum lsm_audit_level audit;
	char audit_log[256];		/* "" = the default log, "-" = stderr */

	struct lsm_setting noexec_source;	/* page.noexec-source */
	struct lsm_setting nonexec_file;	/* page.nonexec-file */
	struct lsm_setting anon_exec;		/* page.anon-exec */
	struct lsm_setting page_wx;		/* page.write-exec */
	struct lsm_setting map_wx;		/* map.write-exec */
	struct lsm_setting debug;		/* init.debug */
	struct lsm_setting provision_key;	/* init.provision-key */
	struct lsm_setting provision_device;	/* provision-device */
	struct lsm_setting signer_default;	/* signer.default */
	struct lsm_setting enclave_default;	/* enclave.default */

	struct lsm_hash_rule *signers;
	size_t nr_signers;
	struct lsm_hash_rule *enclaves;
	size_t nr_enclaves;
};

/* The default policy: mainline Linux (noexec sources refused, rest allowed). */
void lsm_policy_default(struct lsm_policy *p);

/*
 * Parse the policy file @path into @p (which starts from the default).
 * Returns 0, or -errno with "FILE:LINE: reason" in @why: a policy with any
 * error is refused whole, so nothing runs under a half-read policy.
 */
int lsm_policy_load(const char *path, struct lsm_policy *p, char *why,
		    size_t whylen);
/* The same, from text in memory (@name is used in messages). */
int lsm_policy_parse(const char *name, const char *text,
		     struct lsm_policy *p, char *why, size_t whylen);

void lsm_policy_free(struct lsm_policy *p);

/*
 * The default audit log: $SGXEMU_AUDIT_LOG, else
 * $XDG_STATE_HOME/sgxemu/audit.log, else ~/.local/state/sgxemu/audit.log.
 * Returns 0, or -ENOENT / -ENAMETOOLONG.
 */
int lsm_audit_default_path(char *buf, size_t len);

/* "allow" / "deny" / "strip-exec" */
const char *lsm_action_name(enum lsm_action a);

#endif /* SGXEMU_LSM_POLICY_H */
