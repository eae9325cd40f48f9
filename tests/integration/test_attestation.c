// SPDX-License-Identifier: MIT
/*
 * Attestation and sealing through enclaves that really run EREPORT and
 * EGETKEY (tests/enclaves/keys_encl.S): local attestation between two
 * enclaves, tampering, sealing with MRENCLAVE and MRSIGNER policies, the
 * ISVSVN rules, a sealed secret that a new process unseals, and a remote
 * attestation quote of an enclave's REPORT that the verifier accepts, also
 * through `sgxemu aesmd` speaking the AESM socket protocol.
 */
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "test.h"
#include "../enclaves/encl_util.h"
#include "../enclaves/keys_util.h"
#include "aesm_client.h"
#include "attest/aesm.h"
#include "dcap/dcap.h"
#include "sgxemu/attest.h"

extern char **environ;

TEST(local_attestation_between_two_enclaves)
{
	struct keys_encl a, b;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t data[64];

	REQUIRE(load_keys(&a, 0, 1));
	REQUIRE(load_keys(&b, 0x5a, 1));
	CHECK(memcmp(a.info.mrenclave, b.info.mrenclave, 32) != 0);
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(3 * i + 1);
	targetinfo_of(&b, &ti);
	REQUIRE(report(&a, &ti, data, &r));
	/* The body describes A, as only EREPORT inside A can. */
	CHECK_MEM(r.body.mrenclave, a.expect_mrenclave, 32);
	CHECK_MEM(r.body.mrsigner, a.info.mrsigner, 32);
	CHECK_MEM(r.body.report_data, data, 64);
	CHECK_EQ(r.body.attributes.flags, a.info.attributes.flags);
	CHECK(r.body.attributes.flags & SGX_ATTR_INIT);
	CHECK_EQ(r.body.isvprodid, 0x42);
	CHECK_EQ(r.body.isvsvn, 1);
	/* B verifies it with its own REPORT key. */
	CHECK(verifies(&b, &r));
	/* A cannot: the report was made for B. */
	CHECK(!verifies(&a, &r));
}

TEST(tampered_report_fails_verification)
{
	struct keys_encl a, b;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t data[64] = { 7 };

	REQUIRE(load_keys(&a, 0, 0));
	REQUIRE(load_keys(&b, 1, 0));
	targetinfo_of(&b, &ti);
	REQUIRE(report(&a, &ti, data, &r));
	REQUIRE(verifies(&b, &r));
	for (size_t i = 0; i < sizeof(r.body) + 16; i += 7) {
		struct sgx_report t = r;

		if (i < sizeof(r.body))
			((uint8_t *)&t.body)[i] ^= 0x80;
		else
			t.mac[i - sizeof(r.body)] ^= 0x80;
		CHECK(!verifies(&b, &t));
	}
}

TEST(report_for_another_target_does_not_verify)
{
	struct keys_encl a, b, c;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t data[64] = { 0 };

	REQUIRE(load_keys(&a, 0, 0));
	REQUIRE(load_keys(&b, 1, 0));
	REQUIRE(load_keys(&c, 2, 0));
	targetinfo_of(&c, &ti);
	REQUIRE(report(&a, &ti, data, &r));
	CHECK(verifies(&c, &r));
	CHECK(!verifies(&b, &r));
}

TEST(seal_key_policies)
{
	struct keys_encl a, a2, v;
	struct sgx_keyrequest req;
	uint8_t k1[16], k2[16], k3[16];

	REQUIRE(load_keys(&a, 0, 2));
	REQUIRE(load_keys(&a2, 0, 2));	/* the same enclave again */
	REQUIRE(load_keys(&v, 0x33, 2));	/* one byte changed, same signer */
	seal_request(&req, SGX_KEYPOLICY_MRENCLAVE, 2);
	REQUIRE_EQ(getkey(&a, &req, k1), 0);
	REQUIRE_EQ(getkey(&a2, &req, k2), 0);
	REQUIRE_EQ(getkey(&v, &req, k3), 0);
	CHECK_MEM(k1, k2, 16);
	CHECK(memcmp(k1, k3, 16) != 0);
	/* MRSIGNER policy: both enclaves of the one signer share the key. */
	seal_request(&req, SGX_KEYPOLICY_MRSIGNER, 2);
	REQUIRE_EQ(getkey(&a, &req, k1), 0);
	REQUIRE_EQ(getkey(&v, &req, k3), 0);
	CHECK_MEM(k1, k3, 16);
}

TEST(seal_isvsvn_rules_inside_the_enclave)
{
	struct keys_encl a;
	struct sgx_keyrequest req;
	uint8_t k2[16], k1[16], bad[16];

	REQUIRE(load_keys(&a, 0, 2));
	seal_request(&req, SGX_KEYPOLICY_MRSIGNER, 3);	/* newer than the enclave */
	memset(bad, 0xee, 16);
	CHECK_EQ(getkey(&a, &req, bad), SGX_INVALID_ISVSVN);
	seal_request(&req, SGX_KEYPOLICY_MRSIGNER, 2);
	REQUIRE_EQ(getkey(&a, &req, k2), 0);
	seal_request(&req, SGX_KEYPOLICY_MRSIGNER, 1);	/* an older version's key */
	REQUIRE_EQ(getkey(&a, &req, k1), 0);
	CHECK(memcmp(k1, k2, 16) != 0);
	/* Keys the enclave may not have. */
	req.keyname = SGX_KEYNAME_PROVISION;
	CHECK_EQ(getkey(&a, &req, bad), SGX_INVALID_ATTRIBUTE);
	req.keyname = 9;
	CHECK_EQ(getkey(&a, &req, bad), SGX_INVALID_KEYNAME);
	req.keyname = SGX_KEYNAME_SEAL;
	req.cpusvn[0] = 0xff;
	CHECK_EQ(getkey(&a, &req, bad), SGX_INVALID_CPUSVN);
}

/* AES-128-GCM with the enclave's key (test side: the enclave hands it out). */
static int gcm(bool enc, const uint8_t key[16], const uint8_t iv[12],
	       const uint8_t *in, uint8_t *out, size_t len, uint8_t tag[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n, ok;

	ok = c && (enc ? EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv)
		       : EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv));
	if (ok && enc)
		ok = EVP_EncryptUpdate(c, out, &n, in, (int)len) &&
		     EVP_EncryptFinal_ex(c, out + n, &n) &&
		     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, tag);
	else if (ok)
		ok = EVP_DecryptUpdate(c, out, &n, in, (int)len) &&
		     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, tag) &&
		     EVP_DecryptFinal_ex(c, out + n, &n) > 0;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -1;
}

struct sealed {
	uint8_t iv[12];
	uint8_t tag[16];
	uint8_t data[32];
};

static const char secret[32] = "sgxemu sealed secret, 32 bytes!";

/*
 * Runs in a new process (this binary, this test, SGXEMU_TEST_SEALED set):
 * load the enclave again (variant SGXEMU_TEST_VARIANT) and unseal. Exit 0
 * when the outcome is the expected one (SGXEMU_TEST_EXPECT=ok|fail).
 */
static void unseal_child(const char *file)
{
	const char *variant = getenv("SGXEMU_TEST_VARIANT");
	const char *expect = getenv("SGXEMU_TEST_EXPECT");
	struct sgx_keyrequest req;
	struct keys_encl k;
	struct sealed s;
	uint8_t key[16], plain[32];
	size_t n = 0;
	void *blob = test_read_file(file, &n);
	bool opened;

	REQUIRE(blob && n == sizeof(s));
	memcpy(&s, blob, sizeof(s));
	free(blob);
	REQUIRE(load_keys(&k, variant ? (uint8_t)atoi(variant) : 0, 2));
	seal_request(&req, SGX_KEYPOLICY_MRENCLAVE, 2);
	REQUIRE_EQ(getkey(&k, &req, key), 0);
	opened = gcm(false, key, s.iv, s.data, plain, sizeof(plain), s.tag) == 0 &&
		 !memcmp(plain, secret, sizeof(secret));
	CHECK_EQ(opened, !strcmp(expect ? expect : "ok", "ok"));
}

static int spawn_self(const char *file, const char *variant, const char *expect)
{
	char self[4096], e1[4200], e2[64], e3[64], e4[256], e5[4200];
	char *argv[] = { self, "sealed_secret_survives_a_new_process", NULL };
	char *envp[] = { e1, e2, e3, e4, e5, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(e1, sizeof(e1), "SGXEMU_TEST_SEALED=%s", file);
	snprintf(e2, sizeof(e2), "SGXEMU_TEST_VARIANT=%s", variant);
	snprintf(e3, sizeof(e3), "SGXEMU_TEST_EXPECT=%s", expect);
	snprintf(e4, sizeof(e4), "HOME=%s", getenv("HOME") ? getenv("HOME") : "/");
	/* The child loads its enclave from the same build (make asan's is
	 * build-asan). */
	snprintf(e5, sizeof(e5), "B=%s", test_build_dir());
	if (posix_spawn(&pid, self, NULL, NULL, argv, envp))
		return -1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(sealed_secret_survives_a_new_process)
{
	const char *child = getenv("SGXEMU_TEST_SEALED");
	struct sgx_keyrequest req;
	struct keys_encl k;
	struct sealed s;
	uint8_t key[16];
	char file[512];
	FILE *f;

	if (child) {
		unseal_child(child);
		return;
	}
	(void)environ;
	REQUIRE(load_keys(&k, 0, 2));
	seal_request(&req, SGX_KEYPOLICY_MRENCLAVE, 2);
	REQUIRE_EQ(getkey(&k, &req, key), 0);
	REQUIRE_EQ(RAND_bytes(s.iv, sizeof(s.iv)), 1);
	REQUIRE_EQ(gcm(true, key, s.iv, (const uint8_t *)secret, s.data,
		       sizeof(s.data), s.tag), 0);
	snprintf(file, sizeof(file), "%s/tmp", test_build_dir());
	mkdir(file, 0700);
	snprintf(file, sizeof(file), "%s/tmp/sealed-%d.bin", test_build_dir(), (int)getpid());
	f = fopen(file, "wb");
	REQUIRE(f != NULL);
	REQUIRE_EQ(fwrite(&s, sizeof(s), 1, f), 1);
	fclose(f);
	/* The same enclave in a new process unseals it... */
	CHECK_EQ(spawn_self(file, "0", "ok"), 0);
	/* ...an enclave with one byte changed cannot. */
	CHECK_EQ(spawn_self(file, "17", "fail"), 0);
	unlink(file);
}

static void hex32(const uint8_t *h, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

/* MRSIGNER of the PEM key at @path (test-side OpenSSL, no platform). */
static bool mrsigner_of(const char *path, uint8_t out[32])
{
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);
	bool ok;

	memset(sig, 0, sizeof(*sig));
	ok = sig && !tu_sign(sig, path) &&
	     EVP_Digest(sig->modulus, 384, out, NULL, EVP_sha256(), NULL);
	free(sig);
	return ok;
}

/*
 * Locked launch control, as on parts without FLC: the MSRs name a launch
 * enclave's signer; every other signer needs an EINITTOKEN that the launch
 * enclave MACs with the key only it can get (EGETKEY EINITTOKEN).
 */
TEST(locked_launch_control_with_and_without_a_token)
{
	struct sgx_sigstruct *le_sig = aligned_alloc(4096, 4096);
	struct sgx_sigstruct *sig = aligned_alloc(4096, 4096);
	struct sgx_einittoken *tok = aligned_alloc(512, 512);
	const char *other_key = test_other_key();
	struct sgxemu_enclave_info app_info;
	struct sgx_keyrequest req;
	struct sgx_targetinfo ti;
	struct sgx_report self;
	struct keys_encl le, app;
	uint8_t le_mrsigner[32], app_mrsigner[32], key[16], data[64] = { 0 };
	char hex[65];
	int err = 0;

	REQUIRE(le_sig && sig && tok && other_key);
	/* Lock the MSRs to the signing key's hash before the platform exists. */
	REQUIRE(mrsigner_of(test_signing_key(), le_mrsigner));
	hex32(le_mrsigner, hex);
	setenv("SGXEMU_LAUNCH_CONTROL", "locked", 1);
	setenv("SGXEMU_LE_HASH", hex, 1);

	/* The launch enclave: EINITTOKEN_KEY, signed by that key: no token. */
	REQUIRE(build_keys(&le, 0, 5, SGX_ATTR_EINITTOKENKEY, NULL, le_sig));
	REQUIRE_EQ(sgxemu_enclave_init(le.e, le_sig, NULL, &err), 0);
	REQUIRE_EQ(sgxemu_enclave_get_info(le.e, &le.info), 0);

	/* An enclave of another signer: refused without a token... */
	REQUIRE(mrsigner_of(other_key, app_mrsigner));
	REQUIRE(build_keys(&app, 9, 1, 0, other_key, sig));
	CHECK_EQ(sgxemu_enclave_init(app.e, sig, NULL, &err), -EIO);
	CHECK_EQ(err, SGX_INVALID_EINITTOKEN);

	/* ...so the launch enclave makes one (sgx-facts §3.3). */
	targetinfo_of(&le, &ti);
	REQUIRE(report(&le, &ti, data, &self));
	memset(tok, 0, sizeof(*tok));
	tok->valid = 1;
	REQUIRE_EQ(sgxemu_enclave_get_info(app.e, &app_info), 0);
	tok->attributes = app_info.attributes;	/* INIT still clear */
	memcpy(tok->mrenclave, sig->body.enclavehash, 32);
	memcpy(tok->mrsigner, app_mrsigner, 32);
	memcpy(tok->cpusvnle, self.body.cpusvn, 16);
	tok->isvprodidle = self.body.isvprodid;
	tok->isvsvnle = self.body.isvsvn;
	tok->maskedmiscselectle = self.body.miscselect;
	tok->maskedattributesle.flags = self.body.attributes.flags & ~SGX_ATTR_MODE64BIT;
	memset(tok->keyid, 0x4b, 32);
	memset(&req, 0, sizeof(req));
	req.keyname = SGX_KEYNAME_EINITTOKEN;
	memcpy(req.cpusvn, tok->cpusvnle, 16);
	req.isvsvn = tok->isvsvnle;
	req.attributemask.flags = ~SGX_ATTR_MODE64BIT;
	req.miscmask = 0xFFFFFFFF;
	memcpy(req.keyid, tok->keyid, 32);
	REQUIRE_EQ(getkey(&le, &req, key), 0);
	REQUIRE_EQ(sgx_cmac(key, tok, SGX_EINITTOKEN_MACED_SIZE, tok->mac), 0);

	/* A tampered token is refused, the real one launches the enclave. */
	tok->mac[3] ^= 1;
	CHECK_EQ(sgxemu_enclave_init(app.e, sig, tok, &err), -EIO);
	CHECK_EQ(err, SGX_INVALID_EINITTOKEN);
	tok->mac[3] ^= 1;
	CHECK_EQ(sgxemu_enclave_init(app.e, sig, tok, &err), 0);
	REQUIRE_EQ(sgxemu_enclave_get_info(app.e, &app_info), 0);
	CHECK(app_info.initialized);
	CHECK_MEM(app_info.mrsigner, app_mrsigner, 32);

	/* An enclave without EINITTOKEN_KEY cannot get the launch key. */
	req.isvsvn = 0;
	CHECK_EQ(getkey(&app, &req, key), SGX_INVALID_ATTRIBUTE);
	free(le_sig);
	free(sig);
	free(tok);
}

TEST(launch_control_configuration_errors)
{
	setenv("SGXEMU_LAUNCH_CONTROL", "sometimes", 1);
	/* The platform refuses to start: no enclave runs half-configured. */
	CHECK(sgxemu_platform_init() < 0);
	CHECK(sgxemu_platform_cpu() == NULL);
}

TEST(damaged_secrets_file_stops_the_platform)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tmp", test_build_dir());
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/tmp/damaged-secrets-%d", test_build_dir(),
		 (int)getpid());
	f = fopen(path, "wb");
	REQUIRE(f != NULL);
	fputs("not a secrets file", f);
	fclose(f);
	chmod(path, 0600);
	setenv("SGXEMU_SECRETS_FILE", path, 1);
	CHECK_EQ(sgxemu_platform_init(), -EINVAL);
	/* And it was not replaced. */
	{
		size_t n = 0;
		char *t = test_read_file(path, &n);

		CHECK(t && n == strlen("not a secrets file"));
		free(t);
	}
	unlink(path);
}

/*
 * Remote attestation end to end: EREPORT inside the enclave for the QE's
 * TARGETINFO, the QE's quote, and the verifier (the C API and the CLI)
 * showing the enclave's own MRENCLAVE and REPORTDATA.
 */
TEST(quote_of_an_enclave_report_verifies)
{
	struct keys_encl a, b;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	struct sgxemu_verify_result res;
	uint8_t data[64], *q = NULL;
	char why[256], path[512], cmd[1400];
	size_t len;
	FILE *f;

	REQUIRE(load_keys(&a, 0, 1));
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(0xc0 ^ i);
	REQUIRE_EQ(sgxemu_qe_target_info(&ti, why, sizeof(why)), 0);
	REQUIRE(report(&a, &ti, data, &r));
	REQUIRE_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)), 0);
	CHECK_EQ(sgxemu_quote_verify(q, len, NULL, &res), 0);
	CHECK_MEM(res.report.mrenclave, a.expect_mrenclave, 32);
	CHECK_MEM(res.report.report_data, data, 64);
	CHECK_EQ(res.report.isvprodid, 0x42);

	snprintf(path, sizeof(path), "%s/tmp/quote-%d", test_build_dir(), (int)getpid());
	mkdir(path, 0700);
	strcat(path, "/quote.dat");
	f = fopen(path, "wb");
	REQUIRE(f && fwrite(q, 1, len, f) == len);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/sgxemu quote verify %s | grep -qi '^MRENCLAVE: *",
		 test_build_dir(), path);
	for (int i = 0; i < 32; i++)
		snprintf(cmd + strlen(cmd), 3, "%02x", a.expect_mrenclave[i]);
	strcat(cmd, "'");
	CHECK_EQ(system(cmd), 0);
	unlink(path);
	free(q);

	/* The same enclave's REPORT for another enclave is refused. */
	REQUIRE(load_keys(&b, 0x5a, 1));
	targetinfo_of(&b, &ti);
	REQUIRE(report(&a, &ti, data, &r));
	q = NULL;
	CHECK_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)), 47);
	CHECK(q == NULL);
}

/*
 * The DCAP in-process quote library (libsgx_dcap_ql.so.1, src/dcap/ql.c)
 * on this process's platform: this test exports libsgxemu's API
 * (-rdynamic, mk/dcap.mk) as libsgxemu.so does under sgxemu run. Its
 * quote is the AESM path's: same size, same body, and it verifies.
 */
TEST(dcap_ql_quotes_an_enclave_report)
{
	uint32_t (*target_info)(struct sgx_targetinfo *);
	uint32_t (*quote_size)(uint32_t *);
	uint32_t (*get_quote)(const struct sgx_report *, uint32_t, uint8_t *);
	struct keys_encl a, b;
	struct sgx_targetinfo ti, ti_direct;
	struct sgx_report r;
	struct sgxemu_verify_result res;
	uint8_t data[64], *q, *aesm_q = NULL;
	char path[512], why[256];
	uint32_t size = 0;
	size_t aesm_len;
	void *ql;

	snprintf(path, sizeof(path), "%s/dcap/libsgx_dcap_ql.so.1", test_build_dir());
	ql = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(ql);
	target_info = (uint32_t (*)(struct sgx_targetinfo *))dlsym(ql, "sgx_qe_get_target_info");
	quote_size = (uint32_t (*)(uint32_t *))dlsym(ql, "sgx_qe_get_quote_size");
	get_quote = (uint32_t (*)(const struct sgx_report *, uint32_t, uint8_t *))
		dlsym(ql, "sgx_qe_get_quote");
	REQUIRE(target_info && quote_size && get_quote);
	/* Nothing but Intel's API leaves the library. */
	CHECK(!dlsym(ql, "fail") && !dlsym(ql, "qe_find"));

	REQUIRE(load_keys(&a, 0, 1));
	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(0x3c ^ i);
	REQUIRE_EQ(target_info(&ti), 0);
	REQUIRE_EQ(sgxemu_qe_target_info(&ti_direct, why, sizeof(why)), 0);
	CHECK_MEM(&ti, &ti_direct, sizeof(ti));
	REQUIRE_EQ(quote_size(&size), 0);
	REQUIRE(report(&a, &ti, data, &r));
	q = calloc(1, size);
	REQUIRE(q);
	CHECK_EQ(get_quote(&r, size - 1, q), 0xE002);
	REQUIRE_EQ(get_quote(&r, size, q), 0);
	CHECK_EQ(sgxemu_quote_verify(q, size, NULL, &res), 0);
	CHECK_MEM(res.report.mrenclave, a.expect_mrenclave, 32);
	CHECK_MEM(res.report.report_data, data, 64);

	/* The AESM path's quote of the same REPORT: the same bytes up to
	 * the ECDSA signature (48-byte header, 384-byte body, the length), the same
	 * size, the same certification data after the signature data. */
	REQUIRE_EQ(sgxemu_quote_generate(&r, &aesm_q, &aesm_len, why, sizeof(why)), 0);
	CHECK_EQ(aesm_len, size);
	CHECK_MEM(q, aesm_q, 48 + 384 + 4);
	CHECK_MEM(q + 436 + 64, aesm_q + 436 + 64, aesm_len - 436 - 64);

	/* A REPORT targeted at another enclave: SGX_QL_INVALID_REPORT. */
	REQUIRE(load_keys(&b, 0x5a, 1));
	targetinfo_of(&b, &ti);
	REQUIRE(report(&a, &ti, data, &r));
	CHECK_EQ(get_quote(&r, size, q), 0xE015);
	/* A bit of the body flipped: its MAC no longer holds. */
	REQUIRE_EQ(target_info(&ti), 0);
	REQUIRE(report(&a, &ti, data, &r));
	r.body.report_data[5] ^= 1;
	CHECK_EQ(get_quote(&r, size, q), 0xE015);
	free(aesm_q);
	free(q);
	dlclose(ql);
}

/* This platform's collateral as sgx_ql_qve_collateral_t 3.1 (DER CRLs,
 * text with its NUL), pointing into @s. */
static void collateral_abi(struct sgxemu_collateral *s, sgx_ql_qve_collateral_t *c)
{
	memset(c, 0, sizeof(*c));
	c->version = QVE_COLLATERAL_VERSION31;
	c->pck_crl_issuer_chain = s->pck_chain;
	c->pck_crl_issuer_chain_size = (uint32_t)strlen(s->pck_chain) + 1;
	c->root_ca_crl = (char *)s->root_crl;
	c->root_ca_crl_size = (uint32_t)s->root_crl_len;
	c->pck_crl = (char *)s->pck_crl;
	c->pck_crl_size = (uint32_t)s->pck_crl_len;
	c->tcb_info_issuer_chain = s->tcb_chain;
	c->tcb_info_issuer_chain_size = (uint32_t)strlen(s->tcb_chain) + 1;
	c->tcb_info = s->tcb_info;
	c->tcb_info_size = (uint32_t)strlen(s->tcb_info) + 1;
	c->qe_identity_issuer_chain = s->tcb_chain;
	c->qe_identity_issuer_chain_size = (uint32_t)strlen(s->tcb_chain) + 1;
	c->qe_identity = s->qe_identity;
	c->qe_identity_size = (uint32_t)strlen(s->qe_identity) + 1;
}

/*
 * The QvE-checked verification of libsgx_dcap_quoteverify.so.1 (loaded by
 * path, as test_dcap_samples.sh's programs load it by soname): its REPORT
 * is checked inside real enclaves, by EGETKEY(REPORT) there and the CMAC
 * (what sgx_verify_report does under Intel's TVL): the enclave whose
 * TARGETINFO the call carried accepts it, another refuses it; its
 * REPORTDATA is SHA-256 of what the call returned.
 */
TEST(dcap_qve_report_verifies_inside_the_target_enclave)
{
	quote3_error_t (*verify)(const uint8_t *, uint32_t,
				 const sgx_ql_qve_collateral_t *, time_t,
				 uint32_t *, sgx_ql_qv_result_t *,
				 sgx_ql_qe_report_info_t *, uint32_t, uint8_t *);
	struct keys_encl a, b, quoted;
	struct sgxemu_collateral s;
	sgx_ql_qve_collateral_t c;
	sgx_ql_qe_report_info_t info;
	sgx_ql_qv_result_t res;
	struct sgx_targetinfo ti;
	struct sgx_report r;
	uint8_t data[64] = { 9 }, rd[64] = { 0 }, *q = NULL;
	char path[512], why[256];
	time_t now = time(NULL);
	int64_t date = now;
	uint32_t exp;
	size_t len;
	EVP_MD_CTX *md;
	void *qv;

	snprintf(path, sizeof(path), "%s/dcap/libsgx_dcap_quoteverify.so.1",
		 test_build_dir());
	qv = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	REQUIRE(qv);
	verify = (__typeof__(verify))dlsym(qv, "sgx_qv_verify_quote");
	REQUIRE(verify);
	REQUIRE(load_keys(&quoted, 0x11, 1));
	REQUIRE_EQ(sgxemu_qe_target_info(&ti, why, sizeof(why)), 0);
	REQUIRE(report(&quoted, &ti, data, &r));
	REQUIRE_EQ(sgxemu_quote_generate(&r, &q, &len, why, sizeof(why)), 0);
	REQUIRE_EQ(sgxemu_collateral_make(NULL, &s, why, sizeof(why)), 0);
	collateral_abi(&s, &c);

	REQUIRE(load_keys(&a, 0, 1));
	REQUIRE(load_keys(&b, 0x5a, 1));
	memset(&info, 0, sizeof(info));
	REQUIRE(RAND_bytes(info.nonce.rand, sizeof(info.nonce.rand)) == 1);
	targetinfo_of(&a, &info.app_enclave_target_info);
	REQUIRE_EQ(verify(q, (uint32_t)len, &c, now, &exp, &res, &info, 0, NULL), 0);
	CHECK_EQ(res, 0u);
	CHECK(verifies(&a, &info.qe_report));
	CHECK(!verifies(&b, &info.qe_report));
	md = EVP_MD_CTX_new();
	REQUIRE(md);
	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	EVP_DigestUpdate(md, info.nonce.rand, 16);
	EVP_DigestUpdate(md, q, len);
	EVP_DigestUpdate(md, &date, 8);
	EVP_DigestUpdate(md, &exp, 4);
	EVP_DigestUpdate(md, &res, 4);
	EVP_DigestFinal_ex(md, rd, NULL);
	EVP_MD_CTX_free(md);
	CHECK_MEM(info.qe_report.body.report_data, rd, 64);
	CHECK_EQ(info.qe_report.body.isvprodid, 2);
	CHECK_EQ(info.qe_report.body.isvsvn, 12);
	/* The same call for B: B's now, not A's. */
	targetinfo_of(&b, &info.app_enclave_target_info);
	REQUIRE_EQ(verify(q, (uint32_t)len, &c, now, &exp, &res, &info, 0, NULL), 0);
	CHECK(verifies(&b, &info.qe_report));
	CHECK(!verifies(&a, &info.qe_report));
	sgxemu_collateral_free(&s);
	free(q);
	dlclose(qv);
}

/* One AESM request to @a; the decoded Response or NULL. */
static Aesm__Message__Response *aesm_ask(const struct sockaddr_un *a, socklen_t len,
					 Aesm__Message__Request *q)
{
	for (int i = 0; i < 200; i++) {		/* until the service listens */
		Aesm__Message__Response *r = tc_aesm_call(a, len, q);

		if (r)
			return r;
		usleep(25000);
	}
	return NULL;
}

/*
 * The standalone service: `sgxemu aesmd --socket PATH` in another process
 * gives the QE's TARGETINFO (InitQuoteEx) and quotes the REPORT this
 * enclave makes for it (GetQuoteEx), as the PSW's quote library asks.
 */
TEST(aesmd_quotes_an_enclave_report)
{
	Aesm__Message__Request__InitQuoteExRequest iq =
		AESM__MESSAGE__REQUEST__INIT_QUOTE_EX_REQUEST__INIT;
	Aesm__Message__Request q = AESM__MESSAGE__REQUEST__INIT;
	Aesm__Message__Response *r;
	struct sgxemu_verify_result res;
	struct sgx_targetinfo ti;
	struct sgx_report rep;
	struct keys_encl a;
	struct sockaddr_un addr;
	socklen_t alen;
	char dir[256], sock[300], cli[300];
	char *argv[] = { cli, (char *)"aesmd", (char *)"--socket", sock, NULL };
	uint8_t id[256], data[64];
	pid_t pid;
	int st;

	REQUIRE(load_keys(&a, 0, 1));
	snprintf(dir, sizeof(dir), "%s/tmp/aesmd-%d", test_build_dir(), (int)getpid());
	snprintf(sock, sizeof(sock), "%s/aesm.socket", dir);
	snprintf(cli, sizeof(cli), "%s/sgxemu", test_build_dir());
	REQUIRE_EQ(posix_spawn(&pid, cli, NULL, NULL, argv, environ), 0);
	tc_aesm_addr(sock, &addr, &alen);

	sgx_aesm_key_id(id);
	iq.has_att_key_id = 1;
	iq.att_key_id.data = id;
	iq.att_key_id.len = sizeof(id);
	iq.b_pub_key_id = 1;
	iq.has_buf_size = 1;
	iq.buf_size = 32;
	q.init_quote_ex_req = &iq;
	r = aesm_ask(&addr, alen, &q);
	if (!r || !r->init_quote_ex_res || r->init_quote_ex_res->errorcode ||
	    r->init_quote_ex_res->target_info.len != sizeof(ti)) {
		test_fail(__FILE__, __LINE__, "InitQuoteEx failed");
		goto out;
	}
	memcpy(&ti, r->init_quote_ex_res->target_info.data, sizeof(ti));
	aesm__message__response__free_unpacked(r, NULL);

	for (int i = 0; i < 64; i++)
		data[i] = (uint8_t)(i * 7);
	r = NULL;
	if (!report(&a, &ti, data, &rep)) {
		test_fail(__FILE__, __LINE__, "EREPORT failed");
		goto out;
	}
	r = tc_aesm_get_quote(&addr, alen, &rep, id);
	if (!r || !r->get_quote_ex_res || r->get_quote_ex_res->errorcode) {
		test_fail(__FILE__, __LINE__, "GetQuoteEx failed (%u)",
			  r && r->get_quote_ex_res ? r->get_quote_ex_res->errorcode : 0);
		goto out;
	}
	{
		const uint8_t *quote = r->get_quote_ex_res->quote.data;
		uint32_t sig_len;

		memcpy(&sig_len, quote + 432, 4);
		CHECK_EQ(sgxemu_quote_verify(quote, 436 + (size_t)sig_len, NULL, &res), 0);
		CHECK_MEM(res.report.mrenclave, a.expect_mrenclave, 32);
		CHECK_MEM(res.report.report_data, data, 64);
	}
out:
	if (r)
		aesm__message__response__free_unpacked(r, NULL);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	unlink(sock);
	rmdir(dir);
}
