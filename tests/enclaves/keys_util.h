/* SPDX-License-Identifier: MIT */
/*
 * The keys enclave (tests/enclaves/keys_encl.S) through the public C API:
 * build and EINIT it, and run EREPORT and EGETKEY inside it. Shared by the
 * attestation tests (test_attestation.c) and the TCB-recovery tests
 * (test_svn.c), which include it after test.h and encl_util.h.
 */
#ifndef SGXEMU_TEST_KEYS_UTIL_H
#define SGXEMU_TEST_KEYS_UTIL_H

#include "encl_util.h"

/* Each includer uses a different subset of the helpers below. */
#define KU_FN static __attribute__((unused))

#define K_REPORT	1
#define K_GETKEY	2
#define VARIANT_OFF	(L_SCRATCH + 0xff0)	/* a measured byte no code uses */

struct keys_encl {
	struct sgxemu_enclave *e;
	uint64_t base;
	struct sgxemu_enclave_info info;
	uint8_t expect_mrenclave[32];	/* from the test's measurement log */
};

/*
 * Build keys_encl.bin with @variant XORed into one measured byte (another
 * MRENCLAVE, same code), @extra attribute flags, and a SIGSTRUCT with ISVSVN
 * @isvsvn signed with the key at @key_path (the build's signing key when
 * NULL). *@sig is left ready for EINIT.
 */
KU_FN bool build_keys(struct keys_encl *k, uint8_t variant, uint16_t isvsvn,
		       uint64_t extra, const char *key_path,
		       struct sgx_sigstruct *sig)
{
	struct sgx_secs secs;
	char path[512];
	uint8_t *img, page[4096];
	struct tm_log log = { 0 };
	size_t size = 0;
	int err = 0;
	bool ok = false;

	tm_init(&log, 1, L_SIZE);
	if (!key_path)
		key_path = test_signing_key();
	snprintf(path, sizeof(path), "%s/enclaves/keys_encl.bin", test_build_dir());
	img = tu_read(path, &size);
	if (!img) {
		test_fail(__FILE__, __LINE__, "cannot read %s", path);
		return false;
	}
	memset(&secs, 0, sizeof(secs));
	secs.size = L_SIZE;
	secs.base = tu_free_base(L_SIZE);
	secs.ssa_frame_size = 1;
	secs.attributes.flags = SGX_ATTR_MODE64BIT | extra;
	secs.attributes.xfrm = SGX_XFRM_LEGACY;
	if (sgxemu_enclave_create(&secs, 0, &k->e, &err))
		goto out;
	for (size_t i = 0; i < L_PAGES; i++) {
		struct sgx_secinfo si;

		memset(&si, 0, sizeof(si));
		si.flags = tu_layout_secinfo(i);
		memset(page, 0, sizeof(page));
		if ((i + 1) * 4096 <= size)
			memcpy(page, img + i * 4096, 4096);
		if (i == VARIANT_OFF / 4096)
			page[VARIANT_OFF % 4096] ^= variant;
		tm_add(&log, i * 4096, si.flags, page, 0xffff);
		if (sgxemu_enclave_add_page(k->e, secs.base + i * 4096, page, &si,
					    0xffff, tu_prot(si.flags), &err))
			goto out;
	}
	/* The expected MRENCLAVE is the test's own (meas_log.h). */
	if (tm_final(&log, k->expect_mrenclave) ||
	    tu_sigstruct(k->expect_mrenclave, &secs, sig, key_path))
		goto out;
	sig->body.isvsvn = isvsvn;
	sig->body.isvprodid = 0x42;
	if (tu_sign(sig, key_path))
		goto out;
	k->base = secs.base;
	ok = true;
out:
	if (!ok)
		test_fail(__FILE__, __LINE__, "building keys_encl failed (err %d)", err);
	free(log.buf);
	free(img);
	return ok;
}

KU_FN bool load_keys(struct keys_encl *k, uint8_t variant, uint16_t isvsvn)
{
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);
	int err = 0;
	bool ok = sig && build_keys(k, variant, isvsvn, 0, NULL, sig) &&
		  !sgxemu_enclave_init(k->e, sig, NULL, &err) &&
		  !sgxemu_enclave_get_info(k->e, &k->info);

	if (!ok)
		test_fail(__FILE__, __LINE__, "EINIT of keys_encl failed (err %d)", err);
	else if (memcmp(k->info.mrenclave, k->expect_mrenclave, 32))
		test_fail(__FILE__, __LINE__, "MRENCLAVE differs from the "
			  "test's own measurement log");
	free(sig);
	return ok;
}

/* EREPORT inside @k for @ti: the report, written by the enclave. */
KU_FN bool report(struct keys_encl *k, const struct sgx_targetinfo *ti,
		   const uint8_t data[64], struct sgx_report *out)
{
	struct sgxemu_run run;

	memset(out, 0, sizeof(*out));
	return tu_call(&run, k->base, K_REPORT, (uintptr_t)ti, (uintptr_t)data,
		       (uintptr_t)out) == 0 &&
	       run.exit_reason == SGXEMU_EXIT_EEXIT;
}

/* EGETKEY inside @k: its error code (0, or an SGX code), key in @key. */
KU_FN int getkey(struct keys_encl *k, const struct sgx_keyrequest *req,
		  uint8_t key[16])
{
	struct sgx_keyrequest *copy = aligned_alloc(512, 512);
	struct sgxemu_run run;
	int ret;

	memcpy(copy, req, sizeof(*req));
	memset(key, 0, 16);
	if (tu_call(&run, k->base, K_GETKEY, (uintptr_t)copy, (uintptr_t)key, 0) ||
	    run.exit_reason != SGXEMU_EXIT_EEXIT)
		ret = -1;
	else
		ret = (int)run.regs.rdx;
	free(copy);
	return ret;
}

KU_FN void targetinfo_of(const struct keys_encl *k, struct sgx_targetinfo *ti)
{
	memset(ti, 0, sizeof(*ti));
	memcpy(ti->measurement, k->info.mrenclave, 32);
	ti->attributes = k->info.attributes;
	ti->miscselect = k->info.miscselect;
}

/* The REPORT key of @verifier, from inside it, checks @r's MAC. */
KU_FN bool verifies(struct keys_encl *verifier, const struct sgx_report *r)
{
	struct sgx_keyrequest req;
	uint8_t key[16], mac[16];

	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_REPORT;
	memcpy(req.keyid, r->keyid, sizeof(req.keyid));
	if (getkey(verifier, &req, key) != 0 ||
	    sgx_cmac(key, &r->body, sizeof(r->body), mac))
		return false;
	return memcmp(mac, r->mac, 16) == 0;
}

KU_FN void seal_request(struct sgx_keyrequest *req, uint16_t policy, uint16_t isvsvn)
{
	memset(req, 0, sizeof(*req));
	req->keyname = SGX_KEYNAME_SEAL;
	req->keypolicy = policy;
	req->isvsvn = isvsvn;
	req->attributemask.flags = 0xFF0000000000000BULL;
	req->miscmask = 0xF0000000;
	/* CPUSVN 0: the oldest, always accepted; stable across platforms. */
}

#endif /* SGXEMU_TEST_KEYS_UTIL_H */
