/* SPDX-License-Identifier: MIT */
/*
 * What the shim's test programs share (test_shim_mainline, test_power,
 * test_vdso_image): the re-execution under the shim before main (the
 * reason in no_shim where it cannot be), NEED_SHIM() to skip with it, and
 * for those that build enclaves, the signing key and BUILD(e), a ready
 * shim_encl enclave or a failed test. Include after shim_encl.h and
 * test.h.
 */
#ifndef SGXEMU_TEST_SHIM_TEST_H
#define SGXEMU_TEST_SHIM_TEST_H

static const char *no_shim;

__attribute__((constructor))
static void under_shim(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)envp;
	no_shim = shim_reexec(argv);
}

#define NEED_SHIM() do { if (no_shim) test_skip("%s", no_shim); } while (0)

__attribute__((unused))
static EVP_PKEY *key(void)
{
	static EVP_PKEY *k;

	if (!k)
		k = shim_load_key(test_signing_key());
	if (!k)
		test_abort("%s", shim_key_why);
	return k;
}

/* A ready enclave, or the test fails. */
#define BUILD(e) do { \
	NEED_SHIM(); \
	REQUIRE(key()); \
	int _r = shim_encl_build(&(e), key()); \
	if (_r) test_fail(__FILE__, __LINE__, "build: %s", strerror(-_r)); \
	REQUIRE(_r == 0); \
	REQUIRE(shim_vdso_fn != NULL); \
} while (0)

#endif /* SGXEMU_TEST_SHIM_TEST_H */
