// SPDX-License-Identifier: MIT
/* The driver's calls into the security hooks (see security.h). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/evp.h>

#include "driver/driver.h"
#include "driver/security.h"
#include "lsm/hooks.h"

static unsigned lsm_bits(int prot)
{
	return (prot & PROT_READ ? LSM_R : 0) | (prot & PROT_WRITE ? LSM_W : 0) |
	       (prot & PROT_EXEC ? LSM_X : 0);
}

static int prot_bits(unsigned bits)
{
	return (bits & LSM_R ? PROT_READ : 0) | (bits & LSM_W ? PROT_WRITE : 0) |
	       (bits & LSM_X ? PROT_EXEC : 0);
}

static void lsm_view(const struct sgx_encl *encl, struct lsm_enclave *e)
{
	memset(e, 0, sizeof(*e));
	if (!encl)
		return;
	e->base = encl->base;
	e->size = encl->size;
	if (encl->initialized) {
		e->mrenclave = encl->mrenclave;
		e->mrsigner = encl->mrsigner;
	}
}

int sgx_sec_page_add(struct sgx_file *f, uint64_t addr, unsigned long src,
		     struct sgx_page_source *ps, uint8_t *max)
{
	struct lsm_enclave e;
	unsigned bits;
	int ret;

	if (!ps->valid || src < ps->start || src >= ps->end) {
		ret = sgx_page_source(src, ps);
		if (ret) {
			sgx_drv_log("ADD: no mapping holds the source 0x%lx", src);
			return ret;
		}
	}
	lsm_view(f->encl, &e);
	bits = lsm_bits(*max);
	ret = lsm_page_add(&e, addr, &ps->src, &bits);
	if (ret) {
		sgx_drv_log("ADD: the security policy refuses the page at 0x%llx "
			    "(see the audit log)", (unsigned long long)addr);
		return ret;
	}
	*max = (uint8_t)prot_bits(bits);
	return 0;
}

int sgx_sec_init(struct sgx_file *f, const struct sgx_sigstruct *ss)
{
	struct sgx_encl *encl = f->encl;
	struct lsm_init_info info;
	struct lsm_enclave e;
	uint8_t mrsigner[32];
	int ret;

	if (!EVP_Digest(ss->modulus, sizeof(ss->modulus), mrsigner, NULL,
			EVP_sha256(), NULL))
		return -ENOMEM;
	lsm_view(encl, &e);
	memset(&info, 0, sizeof(info));
	info.mrenclave = ss->body.enclavehash;
	info.mrsigner = mrsigner;
	info.isvprodid = ss->body.isvprodid;
	info.isvsvn = ss->body.isvsvn;
	info.attributes = encl->attributes;
	ret = lsm_enclave_init(&e, &info);
	if (ret)
		sgx_drv_log("INIT: the security policy refuses this enclave "
			    "(see the audit log)");
	else {
		/* Known from here on: audit records name the enclave. */
		memcpy(encl->mrenclave, ss->body.enclavehash, 32);
		memcpy(encl->mrsigner, mrsigner, 32);
	}
	return ret;
}

int sgx_sec_map(const struct sgx_file *f, uint64_t start, uint64_t end,
		int prot, bool is_mprotect)
{
	struct lsm_enclave e;

	lsm_view(f->encl, &e);
	return lsm_enclave_map(&e, start, end - start, prot, is_mprotect);
}

int sgx_sec_provision_open(enum sgx_api api)
{
	return lsm_provision_open(sgx_dev_path(api, SGX_DEV_PROVISION));
}

void sgx_sec_denied(const struct sgx_file *f, const char *op, uint64_t addr,
		    int requested, int allowed, const char *rule, int err)
{
	struct lsm_enclave e;

	lsm_view(f ? f->encl : NULL, &e);
	lsm_audit_driver_denial(op, f && f->encl ? &e : NULL, addr,
				requested < 0 ? 0 : lsm_bits(requested),
				allowed < 0 ? 0 : lsm_bits(allowed), rule, err);
}
