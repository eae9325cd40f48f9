// SPDX-License-Identifier: MIT
/*
 * The platform-secrets file: created on first use with mode 0600, stable
 * across loads (so sealing keys persist), and every kind of damage or
 * exposure refused with a reason instead of silently starting over.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "base/secrets.h"

static char dir[256];
static char path[320];

/* A new empty state directory under the build tree (make clean removes it). */
static void fresh_dir(void)
{
	char parent[200];

	snprintf(parent, sizeof(parent), "%s/tmp", test_build_dir());
	mkdir(parent, 0700);
	snprintf(dir, sizeof(dir), "%s/secrets-XXXXXX", parent);
	if (!mkdtemp(dir))
		test_skip("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/state/sgxemu/platform-secrets", dir);
	unsetenv("SGXEMU_CPUSVN");
	unsetenv("SGXEMU_OWNER_EPOCH");
}

static void patch_file(long off, uint8_t xor)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	if (fd < 0 || pread(fd, &b, 1, off) != 1)
		return;
	b ^= xor;
	if (pwrite(fd, &b, 1, off) != 1)
		b = 0;
	close(fd);
}

TEST(created_on_first_use_with_mode_0600)
{
	struct sgx_platform_keys k;
	char why[256] = "";
	struct stat st;

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	REQUIRE_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0600);
	CHECK_EQ(st.st_size, SGX_SECRETS_FILE_SIZE);
	snprintf(path, sizeof(path), "%s/state/sgxemu", dir);
	REQUIRE_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
}

TEST(persists_across_loads)
{
	struct sgx_platform_keys a, b;
	char why[256];

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &a, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_load(path, &b, why, sizeof(why)), 0);
	CHECK_MEM(a.root, b.root, sizeof(a.root));
	CHECK_MEM(a.owner_epoch, b.owner_epoch, sizeof(a.owner_epoch));
	/* The report key id is per boot: two loads are two boots. */
	CHECK(memcmp(a.report_keyid, b.report_keyid, sizeof(a.report_keyid)) != 0);
	/* Roots are random and distinct per key name. */
	CHECK(memcmp(a.root[0], a.root[1], 16) != 0);
}

TEST(two_platforms_differ)
{
	struct sgx_platform_keys a, b;
	char why[256], first[320], fa[33], fb[33];

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &a, why, sizeof(why)), 0);
	snprintf(first, sizeof(first), "%s", path);
	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &b, why, sizeof(why)), 0);
	CHECK(strcmp(first, path) != 0);
	CHECK(memcmp(a.root, b.root, sizeof(a.root)) != 0);
	REQUIRE_EQ(sgx_secrets_fingerprint(&a, fa), 0);
	REQUIRE_EQ(sgx_secrets_fingerprint(&b, fb), 0);
	CHECK(strcmp(fa, fb) != 0);
	CHECK_EQ(strlen(fa), 32);
}

TEST(fingerprint_is_stable_and_not_the_secret)
{
	struct sgx_platform_keys a, b;
	char why[256], fa[33], fb[33], root_hex[33];

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &a, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_load(path, &b, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_fingerprint(&a, fa), 0);
	REQUIRE_EQ(sgx_secrets_fingerprint(&b, fb), 0);
	CHECK(strcmp(fa, fb) == 0);
	for (int n = 0; n < 5; n++) {
		for (int i = 0; i < 16; i++)
			snprintf(root_hex + 2 * i, 3, "%02x", a.root[n][i]);
		CHECK(strcmp(fa, root_hex) != 0);
	}
}

TEST(flipped_byte_is_refused_not_replaced)
{
	struct sgx_platform_keys k;
	char why[256] = "";
	uint8_t before[SGX_SECRETS_FILE_SIZE], after[SGX_SECRETS_FILE_SIZE];
	int fd;

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	patch_file(40, 0x01);
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(read(fd, before, sizeof(before)), sizeof(before));
	close(fd);
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "checksum") != NULL);
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(read(fd, after, sizeof(after)), sizeof(after));
	close(fd);
	CHECK_MEM(before, after, sizeof(before));
}

TEST(truncated_and_foreign_files_are_refused)
{
	struct sgx_platform_keys k;
	char why[256] = "";

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	REQUIRE_EQ(truncate(path, 100), 0);
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "damaged") != NULL);

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	patch_file(0, 0x20);	/* magic */
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not an sgxemu") != NULL);
}

TEST(readable_by_others_is_refused)
{
	struct sgx_platform_keys k;
	char why[256] = "";

	fresh_dir();
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	REQUIRE_EQ(chmod(path, 0644), 0);
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), -EPERM);
	CHECK(strstr(why, "0600") != NULL);
	REQUIRE_EQ(chmod(path, 0600), 0);
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
}

TEST(unusable_location_is_an_error)
{
	struct sgx_platform_keys k;
	char why[256] = "";
	char file[300];

	fresh_dir();
	/* A regular file where a directory should be. */
	snprintf(file, sizeof(file), "%s/state", dir);
	close(open(file, O_CREAT | O_WRONLY, 0600));
	CHECK(sgx_secrets_load(path, &k, why, sizeof(why)) < 0);
	CHECK(why[0] != '\0');
}

TEST(environment_overrides_cpusvn_and_owner_epoch)
{
	struct sgx_platform_keys k;
	char why[256] = "";

	fresh_dir();
	setenv("SGXEMU_CPUSVN", "0102030405060708090a0b0c0d0e0f10", 1);
	setenv("SGXEMU_OWNER_EPOCH", "ffeeddccbbaa99887766554433221100", 1);
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	CHECK_EQ(k.cpusvn[0], 0x01);
	CHECK_EQ(k.cpusvn[15], 0x10);
	CHECK_EQ(k.owner_epoch[0], 0xff);
	setenv("SGXEMU_CPUSVN", "12zz", 1);
	CHECK_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "SGXEMU_CPUSVN") != NULL);
}

/*
 * Found by fuzz/fuzz_secrets.c: the old sscanf("%2x") loop read past the
 * end of a short value and took signs, blanks and "0x" as digits, so
 * "-1" sixteen times became a CPUSVN of all ff.
 */
TEST(environment_hex_is_digits_only)
{
	static const char *bad[] = {
		"abc",
		"-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1",
		"+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1",
		" 102030405060708090a0b0c0d0e0f1",
		"0x02030405060708090a0b0c0d0e0f10",
		"0102030405060708090a0b0c0d0e0f100",
	};
	struct sgx_platform_keys k;
	char why[256];

	fresh_dir();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		setenv("SGXEMU_OWNER_EPOCH", bad[i], 1);
		if (sgx_secrets_load(path, &k, why, sizeof(why)) != -EINVAL ||
		    !strstr(why, "SGXEMU_OWNER_EPOCH"))
			test_fail(__FILE__, __LINE__, "'%s' accepted (%s)", bad[i], why);
	}
	setenv("SGXEMU_OWNER_EPOCH", "A0B1C2D3E4F5a6b7c8d9eafb0c1d2e3f", 1);
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	CHECK_EQ(k.owner_epoch[0], 0xa0);
	CHECK_EQ(k.owner_epoch[15], 0x3f);
	unsetenv("SGXEMU_OWNER_EPOCH");
}

TEST(path_from_environment)
{
	char buf[256];

	setenv("SGXEMU_SECRETS_FILE", "/x/y", 1);
	REQUIRE_EQ(sgx_secrets_path(buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "/x/y") == 0);
	unsetenv("SGXEMU_SECRETS_FILE");
	setenv("XDG_STATE_HOME", "/st", 1);
	REQUIRE_EQ(sgx_secrets_path(buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "/st/sgxemu/platform-secrets") == 0);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/h", 1);
	REQUIRE_EQ(sgx_secrets_path(buf, sizeof(buf)), 0);
	CHECK(strcmp(buf, "/h/.local/state/sgxemu/platform-secrets") == 0);
	CHECK_EQ(sgx_secrets_path(buf, 8), -ENAMETOOLONG);
}
