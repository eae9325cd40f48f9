// SPDX-License-Identifier: MIT
/*
 * The security hooks (see hooks.h): each consults the process-wide policy,
 * audits, and in permissive mode turns every denial into an audited allow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sgxemu/arch.h"
#include "lsm/audit.h"
#include "lsm/hooks.h"

static struct lsm_policy current_policy;
static bool current_set;

const struct lsm_policy *lsm_current(void)
{
	if (!current_set) {
		lsm_policy_default(&current_policy);
		current_set = true;
	}
	return &current_policy;
}

void lsm_set_policy(const struct lsm_policy *p)
{
	if (current_set)
		lsm_policy_free(&current_policy);
	current_policy = *p;
	current_set = true;
}

int lsm_init(const char *path, char *why, size_t whylen)
{
	struct lsm_policy p;
	int ret;

	if (!path)
		path = getenv("SGXEMU_POLICY");
	if (!path || !*path) {
		lsm_policy_default(&p);
		lsm_set_policy(&p);
		return 0;
	}
	ret = lsm_policy_load(path, &p, why, whylen);
	if (ret)
		return ret;
	lsm_set_policy(&p);
	return 0;
}

/*
 * Apply one setting to a page: returns -EACCES to deny, 0 otherwise, and
 * removes X from *@prot for strip-exec. Audits what it did.
 */
static int page_rule(const struct lsm_policy *p, const char *rule,
		     const struct lsm_setting *s, const struct lsm_enclave *e,
		     uint64_t addr, const struct lsm_source *src,
		     unsigned requested, unsigned *prot)
{
	struct lsm_audit_event ev = {
		.op = "page_add", .encl = e, .addr = addr, .src = src,
		.requested = (int)requested, .rule = rule, .line = s->line,
	};

	if (s->action == LSM_ALLOW)
		return 0;
	ev.denied = true;
	if (s->action == LSM_DENY) {
		ev.err = EACCES;
		ev.allowed = 0;
		lsm_audit(p, &ev);
		return p->permissive ? 0 : -EACCES;
	}
	ev.err = EACCES;	/* X refused, the rest allowed */
	ev.reduced = true;
	ev.allowed = (int)(*prot & ~LSM_X);
	lsm_audit(p, &ev);
	if (!p->permissive)
		*prot &= ~LSM_X;
	return 0;
}

int lsm_page_add(const struct lsm_enclave *e, uint64_t addr,
		 const struct lsm_source *src, unsigned *max_prot)
{
	const struct lsm_policy *p = lsm_current();
	unsigned requested = *max_prot;
	int ret = 0;

	if (src->noexec_mount)
		ret = page_rule(p, "page.noexec-source", &p->noexec_source, e,
				addr, src, requested, max_prot);
	if (!ret && !src->anonymous && src->exec_denied)
		ret = page_rule(p, "page.nonexec-file", &p->nonexec_file, e,
				addr, src, requested, max_prot);
	if (!ret && src->anonymous && (*max_prot & LSM_X))
		ret = page_rule(p, "page.anon-exec", &p->anon_exec, e, addr,
				src, requested, max_prot);
	if (!ret && (*max_prot & LSM_W) && (*max_prot & LSM_X))
		ret = page_rule(p, "page.write-exec", &p->page_wx, e, addr,
				src, requested, max_prot);
	if (!ret && p->audit == LSM_AUDIT_ALL) {
		struct lsm_audit_event ev = {
			.op = "page_add", .encl = e, .addr = addr, .src = src,
			.requested = (int)requested, .allowed = (int)*max_prot,
		};

		lsm_audit(p, &ev);
	}
	return ret;
}

/* First matching hash rule, else the default setting. */
static bool hash_allowed(const struct lsm_hash_rule *rules, size_t nr,
			 const struct lsm_setting *dflt, const uint8_t *hash,
			 int *line)
{
	for (size_t i = 0; i < nr; i++)
		if (hash && !memcmp(rules[i].hash, hash, 32)) {
			*line = rules[i].line;
			return rules[i].allow;
		}
	*line = dflt->line;
	return dflt->action == LSM_ALLOW;
}

int lsm_enclave_init(const struct lsm_enclave *e,
		     const struct lsm_init_info *info)
{
	const struct lsm_policy *p = lsm_current();
	struct lsm_audit_event ev = {
		.op = "init", .encl = e, .requested = -1, .allowed = -1,
		.mrenclave = info->mrenclave, .mrsigner = info->mrsigner,
	};
	int line;

	if (!hash_allowed(p->enclaves, p->nr_enclaves, &p->enclave_default,
			  info->mrenclave, &line))
		ev.rule = "enclave";
	else if (!hash_allowed(p->signers, p->nr_signers, &p->signer_default,
			       info->mrsigner, &line))
		ev.rule = "signer";
	else if ((info->attributes & SGX_ATTR_DEBUG) &&
		 p->debug.action == LSM_DENY) {
		ev.rule = "init.debug";
		line = p->debug.line;
	} else if ((info->attributes & SGX_ATTR_PROVISIONKEY) &&
		   p->provision_key.action == LSM_DENY) {
		ev.rule = "init.provision-key";
		line = p->provision_key.line;
	}
	ev.line = line;
	if (ev.rule) {
		ev.denied = true;
		ev.err = EACCES;
	}
	lsm_audit(p, &ev);
	return ev.denied && !p->permissive ? -EACCES : 0;
}

int lsm_enclave_map(const struct lsm_enclave *e, uint64_t addr, uint64_t len,
		    int prot, bool is_mprotect)
{
	const struct lsm_policy *p = lsm_current();
	unsigned bits = (prot & PROT_READ ? LSM_R : 0) |
			(prot & PROT_WRITE ? LSM_W : 0) |
			(prot & PROT_EXEC ? LSM_X : 0);
	struct lsm_audit_event ev = {
		.op = is_mprotect ? "mprotect" : "mmap", .encl = e,
		.addr = addr, .len = len, .requested = (int)bits,
		.allowed = (int)bits,
	};

	if ((bits & LSM_W) && (bits & LSM_X) && p->map_wx.action == LSM_DENY) {
		ev.denied = true;
		ev.err = EACCES;
		ev.allowed = (int)(bits & ~LSM_X);
		ev.rule = "map.write-exec";
		ev.line = p->map_wx.line;
	}
	lsm_audit(p, &ev);
	return ev.denied && !p->permissive ? -EACCES : 0;
}

int lsm_provision_open(const char *path)
{
	const struct lsm_policy *p = lsm_current();
	struct lsm_audit_event ev = {
		.op = "provision_open", .path = path, .requested = -1,
		.allowed = -1,
	};

	if (p->provision_device.action == LSM_DENY) {
		ev.denied = true;
		ev.err = EACCES;
		ev.rule = "provision-device";
		ev.line = p->provision_device.line;
	}
	lsm_audit(p, &ev);
	return ev.denied && !p->permissive ? -EACCES : 0;
}

void lsm_audit_driver_denial(const char *op, const struct lsm_enclave *e,
			     uint64_t addr, unsigned requested,
			     unsigned allowed, const char *rule, int err)
{
	struct lsm_audit_event ev = {
		.op = op, .denied = true, .encl = e, .addr = addr,
		.requested = (int)requested, .allowed = (int)allowed,
		.rule = rule, .err = err, .driver = true,
	};

	lsm_audit(lsm_current(), &ev);
}
