// SPDX-License-Identifier: MIT
/*
 * A TCB recovery as the driver lives it (Linux 6.19's usage count and SVN
 * update at open; issue 44): an open of either enclave device with no
 * enclave takes a pending microcode update (ENCLS[EUPDATESVN]) and records
 * the new CPUSVN; an open while an enclave object exists does not; each
 * EUPDATESVN code gives the kernel's errno (EAGAIN after ten entropy
 * failures, EIO for the unexpected, 0 for SGX_NO_UPDATE); many threads
 * opening at once take it once. Then what the update does to enclaves:
 * EREPORT carries the new CPUSVN, data sealed in a process before the
 * update unseals in one after it (EGETKEY with the old CPUSVN), and a
 * CPUSVN newer than the platform's is SGX_INVALID_CPUSVN.
 *
 * The opens go through the driver's API in-process, as the shim calls it
 * (tests/integration/test_platform_svn.sh does the same through `sgxemu
 * run` and the CLI).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "test.h"
#include "../enclaves/encl_util.h"
#include "../enclaves/keys_util.h"
#include "base/secrets.h"
#include "driver/driver.h"
#include "driver/svn.h"

extern char **environ;

static const uint8_t v2[16] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
static const uint8_t v3[16] = { 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };

static char secrets[512];

/* A new platform of its own for this test (before the platform exists);
 * with_leaf false: a processor without EUPDATESVN. */
static void fresh_platform_of(bool with_leaf)
{
	char dir[400];

	snprintf(dir, sizeof(dir), "%s/tmp", test_build_dir());
	mkdir(dir, 0700);
	snprintf(dir, sizeof(dir), "%s/tmp/svn-XXXXXX", test_build_dir());
	if (!mkdtemp(dir))
		test_skip("mkdtemp failed");
	snprintf(secrets, sizeof(secrets), "%s/platform-secrets", dir);
	setenv("SGXEMU_SECRETS_FILE", secrets, 1);
	unsetenv("SGXEMU_CPUSVN");
	if (with_leaf)
		unsetenv("SGXEMU_EUPDATESVN");
	else
		setenv("SGXEMU_EUPDATESVN", "0", 1);
	unsetenv("SGXEMU_EUPDATESVN_ENTROPY");
	REQUIRE_EQ(sgxemu_platform_init(), 0);
}

static void fresh_platform(void)
{
	fresh_platform_of(true);
}

static void set_pending(const uint8_t svn[16])
{
	char why[512] = "";

	if (sgx_secrets_set_pending(secrets, svn, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "update-svn: %s", why);
}

static struct sgx_file *open_dev(enum sgx_api api, int *err)
{
	*err = 0;
	return sgx_drv_open(api, SGX_DEV_ENCLAVE, err);
}

static void file_svn(struct sgx_svn_state *st)
{
	char why[512];

	REQUIRE_EQ(sgx_secrets_svn(secrets, st, why, sizeof(why)), 0);
}

TEST(no_update_pending_changes_nothing)
{
	struct sgx_file *f;
	struct stat sb;
	int err;

	fresh_platform();
	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	sgx_file_put(f);
	/* SGX_NO_UPDATE writes nothing: the file is still version 1. */
	REQUIRE_EQ(stat(secrets, &sb), 0);
	CHECK_EQ(sb.st_size, SGX_SECRETS_FILE_SIZE);
}

static void open_takes_the_update(enum sgx_api api)
{
	struct sgx_svn_state st;
	struct sgx_file *f;
	int err;

	fresh_platform();
	set_pending(v3);
	/* Loaded, not taken: CPUSVN stays until EUPDATESVN. */
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	f = open_dev(api, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v3, 16);
	file_svn(&st);
	CHECK_MEM(st.cpusvn, v3, 16);
	CHECK_MEM(st.previous, v2, 16);
	sgx_file_put(f);
}

TEST(open_of_dev_sgx_enclave_takes_a_pending_update)
{
	open_takes_the_update(SGX_API_MAINLINE);
}

/* /dev/sgx/enclave alike: which API the program will speak is unknown at
 * open(). */
TEST(open_of_dev_sgx_slash_enclave_takes_a_pending_update)
{
	open_takes_the_update(SGX_API_SEED);
}

/* The kernel's count is of enclave objects: an open file with no ECREATE
 * yet counts, and the update waits for it to go. */
TEST(never_while_an_enclave_object_exists)
{
	struct sgx_file *a, *b, *c;
	int err;

	fresh_platform();
	a = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(a != NULL);
	set_pending(v3);
	b = open_dev(SGX_API_SEED, &err);
	REQUIRE(b != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	sgx_file_put(a);
	c = open_dev(SGX_API_MAINLINE, &err);	/* b is still there */
	REQUIRE(c != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	sgx_file_put(b);
	sgx_file_put(c);
	a = open_dev(SGX_API_MAINLINE, &err);	/* none now */
	REQUIRE(a != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v3, 16);
	sgx_file_put(a);
}

/* An enclave of the engine's API is in the EPC, so EUPDATESVN finds the
 * EPC not ready: no update while it lives either. */
TEST(never_while_the_epc_holds_an_enclave)
{
	struct keys_encl k;
	struct sgx_file *f;
	int err;

	fresh_platform();
	REQUIRE(load_keys(&k, 0, 2));
	set_pending(v3);
	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	sgx_file_put(f);
	REQUIRE_EQ(sgxemu_enclave_destroy(k.e), 0);
	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v3, 16);
	sgx_file_put(f);
}

TEST(entropy_failures_retried_ten_times_then_eagain)
{
	struct sgx_svn_state st;
	struct sgx_file *f;
	int err;

	fresh_platform();
	set_pending(v3);
	atomic_store(&sgxemu__cpu()->rdseed_failures, 10);
	f = open_dev(SGX_API_MAINLINE, &err);
	CHECK(f == NULL);
	CHECK_EQ(err, -EAGAIN);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	file_svn(&st);
	CHECK_MEM(st.cpusvn, v2, 16);
	CHECK_MEM(st.pending, v3, 16);
	/* The count was given back: the next open tries again, and nine
	 * failures are within the kernel's ten tries. */
	atomic_store(&sgxemu__cpu()->rdseed_failures, 9);
	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v3, 16);
	sgx_file_put(f);
}

TEST(entropy_injection_from_the_environment)
{
	struct sgx_file *f;
	int err;

	fresh_platform();
	setenv("SGXEMU_EUPDATESVN_ENTROPY", "fail", 1);
	for (int i = 0; i < 3; i++) {
		f = open_dev(SGX_API_SEED, &err);
		CHECK(f == NULL);
		CHECK_EQ(err, -EAGAIN);
	}
}

static int codes[16], nr_codes, calls;

static int stand_in(struct sgx_cpu *cpu)
{
	(void)cpu;
	calls++;
	return codes[nr_codes ? (calls - 1) % nr_codes : 0];
}

/* Each code EUPDATESVN can give, and the errno open() gives for it. */
TEST(errno_per_eupdatesvn_code)
{
	static const struct { int code; int err; int calls; } t[] = {
		{ 0, 0, 1 },
		{ SGX_NO_UPDATE, 0, 1 },
		{ SGX_INSUFFICIENT_ENTROPY, -EAGAIN, 10 },
		{ SGX_EPC_PAGE_CONFLICT, -EIO, 1 },	/* SGX_LOCKFAIL */
		{ SGX_GP, -EIO, 1 },
		{ SGX_INVALID_CPUSVN, -EIO, 1 },
	};
	struct sgx_file *f;
	int err;

	fresh_platform();
	sgx_eupdatesvn_leaf = stand_in;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		codes[0] = t[i].code;
		nr_codes = 1;
		calls = 0;
		f = open_dev(i & 1 ? SGX_API_SEED : SGX_API_MAINLINE, &err);
		CHECK_EQ(err, t[i].err);
		CHECK_EQ(calls, t[i].calls);
		CHECK_EQ(f == NULL, t[i].err != 0);
		sgx_file_put(f);
	}
	sgx_eupdatesvn_leaf = sgx_eupdatesvn;
}

#define NR_THREADS	16

static pthread_barrier_t go;

static void *opener(void *arg)
{
	int err;

	pthread_barrier_wait(&go);
	*(struct sgx_file **)arg = open_dev(SGX_API_MAINLINE, &err);
	return NULL;
}

/* Many threads open at once: every open succeeds, the update is taken
 * once, and it is recorded once (previous = the old CPUSVN). */
TEST(concurrent_opens_take_the_update_once)
{
	pthread_t th[NR_THREADS];
	struct sgx_file *f[NR_THREADS];
	struct sgx_svn_state st;

	fresh_platform();
	set_pending(v3);
	pthread_barrier_init(&go, NULL, NR_THREADS);
	for (int i = 0; i < NR_THREADS; i++)
		REQUIRE_EQ(pthread_create(&th[i], NULL, opener, &f[i]), 0);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NR_THREADS; i++) {
		CHECK(f[i] != NULL);
		sgx_file_put(f[i]);
	}
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v3, 16);
	file_svn(&st);
	CHECK_MEM(st.cpusvn, v3, 16);
	CHECK_MEM(st.previous, v2, 16);
}

TEST(a_processor_without_the_leaf_keeps_its_cpusvn)
{
	struct sgx_file *f;
	int err;

	fresh_platform_of(false);
	CHECK(!sgxemu__cpu()->config.eupdatesvn);
	set_pending(v3);
	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	CHECK_MEM(sgxemu__cpu()->keys.cpusvn, v2, 16);
	sgx_file_put(f);
}

/* --- sealing across the update -------------------------------------------- */

struct sealed {
	uint8_t cpusvn[16];		/* the key's CPUSVN, as the SDK records it */
	uint8_t iv[12];
	uint8_t tag[16];
	uint8_t data[32];
};

static const char secret[32] = "sealed before the TCB recovery";

static int gcm(bool enc, const uint8_t key[16], struct sealed *s, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	const uint8_t *in = enc ? (const uint8_t *)secret : s->data;
	int n, ok = c != NULL;

	ok = ok && (enc ? EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, s->iv)
		       : EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, s->iv));
	if (ok && enc)
		ok = EVP_EncryptUpdate(c, s->data, &n, in, 32) &&
		     EVP_EncryptFinal_ex(c, s->data + n, &n) &&
		     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, s->tag);
	else if (ok)
		ok = EVP_DecryptUpdate(c, out, &n, in, 32) &&
		     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16, s->tag) &&
		     EVP_DecryptFinal_ex(c, out + n, &n) > 0;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -1;
}

/* The process's report of itself: what EREPORT says CPUSVN is. */
static void self_cpusvn(struct keys_encl *k, uint8_t out[16])
{
	struct sgx_targetinfo ti;
	struct sgx_report *r = aligned_alloc(512, 512);
	uint8_t data[64] = { 0 };

	REQUIRE(r != NULL);
	targetinfo_of(k, &ti);
	REQUIRE(report(k, &ti, data, r));
	memcpy(out, r->body.cpusvn, 16);
	free(r);
}

/* Child, before the update: seal with the CPUSVN EREPORT gives. */
static void seal_child(const char *file)
{
	struct sgx_keyrequest req;
	struct keys_encl k;
	struct sealed s;
	struct sgx_file *f;
	uint8_t key[16];
	int err;
	FILE *out;

	f = open_dev(SGX_API_MAINLINE, &err);
	REQUIRE(f != NULL);
	REQUIRE(load_keys(&k, 0, 2));
	self_cpusvn(&k, s.cpusvn);
	CHECK_MEM(s.cpusvn, v2, 16);
	seal_request(&req, SGX_KEYPOLICY_MRENCLAVE, 2);
	memcpy(req.cpusvn, s.cpusvn, 16);
	REQUIRE_EQ(getkey(&k, &req, key), 0);
	REQUIRE_EQ(RAND_bytes(s.iv, sizeof(s.iv)), 1);
	REQUIRE_EQ(gcm(true, key, &s, NULL), 0);
	out = fopen(file, "wb");
	REQUIRE(out != NULL);
	REQUIRE_EQ(fwrite(&s, sizeof(s), 1, out), 1);
	fclose(out);
}

/* Child, after `update-svn`: the open takes it; unseal with the old
 * CPUSVN; the new one gives another key; a newer one is refused. */
static void unseal_child(const char *file)
{
	struct sgx_keyrequest req;
	struct keys_encl k;
	struct sealed s;
	struct sgx_file *f;
	uint8_t key[16], key_new[16], plain[32], now[16], newer[16];
	size_t n = 0;
	void *blob = test_read_file(file, &n);
	int err;

	REQUIRE(blob && n == sizeof(s));
	memcpy(&s, blob, sizeof(s));
	free(blob);
	f = open_dev(SGX_API_SEED, &err);
	REQUIRE(f != NULL);
	REQUIRE(load_keys(&k, 0, 2));
	self_cpusvn(&k, now);
	CHECK_MEM(now, v3, 16);
	seal_request(&req, SGX_KEYPOLICY_MRENCLAVE, 2);
	memcpy(req.cpusvn, s.cpusvn, 16);
	REQUIRE_EQ(getkey(&k, &req, key), 0);
	REQUIRE_EQ(gcm(false, key, &s, plain), 0);
	CHECK_MEM(plain, secret, 32);
	memcpy(req.cpusvn, now, 16);
	REQUIRE_EQ(getkey(&k, &req, key_new), 0);
	CHECK(memcmp(key_new, key, 16) != 0);
	memcpy(newer, now, 16);
	newer[1]++;
	memcpy(req.cpusvn, newer, 16);
	CHECK_EQ(getkey(&k, &req, key), SGX_INVALID_CPUSVN);
}

static int spawn_self(const char *mode, const char *file)
{
	char self[4096], e1[4200], e2[600], e3[4200], e4[64];
	char *argv[] = { self, "sealed_before_an_update_unseals_after_it", NULL };
	char *envp[] = { e1, e2, e3, e4, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(e1, sizeof(e1), "SGXEMU_TEST_SVN_FILE=%s", file);
	snprintf(e2, sizeof(e2), "SGXEMU_SECRETS_FILE=%s", secrets);
	snprintf(e3, sizeof(e3), "B=%s", test_build_dir());
	snprintf(e4, sizeof(e4), "SGXEMU_TEST_SVN_MODE=%s", mode);
	if (posix_spawn(&pid, self, NULL, NULL, argv, envp))
		return -1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A TCB recovery across runs: a process seals, `update-svn` raises the
 * pending SVN, a new process's open takes it and unseals the data.
 */
TEST(sealed_before_an_update_unseals_after_it)
{
	const char *mode = getenv("SGXEMU_TEST_SVN_MODE");
	char file[600];

	if (mode) {
		REQUIRE_EQ(sgxemu_platform_init(), 0);
		if (!strcmp(mode, "seal"))
			seal_child(getenv("SGXEMU_TEST_SVN_FILE"));
		else
			unseal_child(getenv("SGXEMU_TEST_SVN_FILE"));
		return;
	}
	fresh_platform();
	snprintf(file, sizeof(file), "%s.sealed", secrets);
	CHECK_EQ(spawn_self("seal", file), 0);
	set_pending(v3);
	CHECK_EQ(spawn_self("unseal", file), 0);
	unlink(file);
}
