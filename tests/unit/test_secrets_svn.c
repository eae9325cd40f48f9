// SPDX-License-Identifier: MIT
/*
 * The security versions in the platform-secrets file (a TCB recovery):
 * a version-1 file means no update pending and the CPUSVN of old; an
 * update writes version 2 with the root secrets byte for byte; a version
 * not newer, a damaged file and an unwritable directory are refused with
 * the file unchanged; a commit moves CPUSVN and remembers the previous.
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

static const uint8_t v2[16] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
static const uint8_t v3[16] = { 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
static const uint8_t v4[16] = { 2, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };

static void fresh_platform(struct sgx_platform_keys *k)
{
	char parent[200], why[256];

	snprintf(parent, sizeof(parent), "%s/tmp", test_build_dir());
	mkdir(parent, 0700);
	snprintf(dir, sizeof(dir), "%s/svn-XXXXXX", parent);
	if (!mkdtemp(dir))
		test_skip("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/platform-secrets", dir);
	unsetenv("SGXEMU_CPUSVN");
	unsetenv("SGXEMU_OWNER_EPOCH");
	REQUIRE_EQ(sgx_secrets_load(path, k, why, sizeof(why)), 0);
}

static size_t file_bytes(uint8_t *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, n);

	if (fd >= 0)
		close(fd);
	return r < 0 ? 0 : (size_t)r;
}

TEST(version_1_means_no_update_pending)
{
	struct sgx_platform_keys k;
	struct sgx_svn_state st;
	char why[256];
	struct stat sb;

	fresh_platform(&k);
	REQUIRE_EQ(stat(path, &sb), 0);
	CHECK_EQ(sb.st_size, SGX_SECRETS_FILE_SIZE);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.cpusvn, v2, 16);
	CHECK_MEM(st.pending, v2, 16);
	CHECK_MEM(st.previous, v2, 16);
	CHECK_MEM(k.cpusvn, v2, 16);
}

TEST(update_keeps_the_identity_and_sealing_roots)
{
	struct sgx_platform_keys a, b;
	struct sgx_svn_state st;
	char why[256], fa[33], fb[33];
	struct stat sb;

	fresh_platform(&a);
	REQUIRE_EQ(sgx_secrets_set_pending(path, v3, why, sizeof(why)), 0);
	REQUIRE_EQ(stat(path, &sb), 0);
	CHECK_EQ(sb.st_size, SGX_SECRETS_FILE_SIZE_V2);
	CHECK_EQ(sb.st_mode & 0777, 0600);
	REQUIRE_EQ(sgx_secrets_load(path, &b, why, sizeof(why)), 0);
	CHECK_MEM(a.root, b.root, sizeof(a.root));
	CHECK_MEM(a.owner_epoch, b.owner_epoch, 16);
	REQUIRE_EQ(sgx_secrets_fingerprint(&a, fa), 0);
	REQUIRE_EQ(sgx_secrets_fingerprint(&b, fb), 0);
	CHECK(strcmp(fa, fb) == 0);
	/* Pending only: CPUSVN is still the old one until EUPDATESVN. */
	CHECK_MEM(b.cpusvn, v2, 16);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.pending, v3, 16);
	CHECK_MEM(st.cpusvn, v2, 16);
}

TEST(a_version_not_newer_is_refused_and_nothing_written)
{
	struct sgx_platform_keys k;
	uint8_t before[256], after[256], mixed[16];
	size_t nb, na;
	char why[256] = "";

	fresh_platform(&k);
	REQUIRE_EQ(sgx_secrets_set_pending(path, v3, why, sizeof(why)), 0);
	nb = file_bytes(before, sizeof(before));
	CHECK_EQ(sgx_secrets_set_pending(path, v3, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "not newer") != NULL);
	CHECK_EQ(sgx_secrets_set_pending(path, v2, why, sizeof(why)), -EINVAL);
	memcpy(mixed, v4, 16);
	mixed[0] = 1;
	CHECK_EQ(sgx_secrets_set_pending(path, mixed, why, sizeof(why)), -EINVAL);
	na = file_bytes(after, sizeof(after));
	CHECK_EQ(na, nb);
	CHECK_MEM(after, before, nb);
}

TEST(commit_moves_cpusvn_and_remembers_the_previous)
{
	struct sgx_platform_keys k;
	struct sgx_svn_state st;
	char why[256];

	fresh_platform(&k);
	REQUIRE_EQ(sgx_secrets_set_pending(path, v4, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_commit_svn(path, v4, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.cpusvn, v4, 16);
	CHECK_MEM(st.previous, v2, 16);
	CHECK_MEM(st.pending, v4, 16);
	/* A second process committing the same (or an older) one: no-op. */
	REQUIRE_EQ(sgx_secrets_commit_svn(path, v3, why, sizeof(why)), 0);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.cpusvn, v4, 16);
	CHECK_MEM(st.previous, v2, 16);
	REQUIRE_EQ(sgx_secrets_load(path, &k, why, sizeof(why)), 0);
	CHECK_MEM(k.cpusvn, v4, 16);
}

TEST(damaged_file_is_refused_and_left_alone)
{
	struct sgx_platform_keys k;
	uint8_t before[256], after[256];
	char why[256] = "";
	size_t n;
	int fd;

	fresh_platform(&k);
	REQUIRE_EQ(sgx_secrets_set_pending(path, v3, why, sizeof(why)), 0);
	fd = open(path, O_RDWR);
	REQUIRE(fd >= 0);
	REQUIRE_EQ(pwrite(fd, "\x55", 1, 130), 1);
	close(fd);
	n = file_bytes(before, sizeof(before));
	CHECK_EQ(sgx_secrets_set_pending(path, v4, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "checksum") != NULL);
	CHECK_EQ(sgx_secrets_commit_svn(path, v4, why, sizeof(why)), -EINVAL);
	CHECK_EQ(file_bytes(after, sizeof(after)), n);
	CHECK_MEM(after, before, n);
}

TEST(unwritable_directory_is_an_error_and_the_file_stays)
{
	struct sgx_platform_keys k;
	struct sgx_svn_state st;
	char why[256] = "";
	int ret;

	if (geteuid() == 0)
		test_skip("root writes into a read-only directory");
	fresh_platform(&k);
	REQUIRE_EQ(chmod(dir, 0500), 0);
	ret = sgx_secrets_set_pending(path, v3, why, sizeof(why));
	chmod(dir, 0700);
	CHECK_EQ(ret, -EACCES);
	CHECK(strstr(why, "nothing changed") != NULL);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.pending, v2, 16);
}

/* The lock file exists but the file beside it cannot be written: the
 * rename never happens and no temporary copy is left. */
TEST(unwritable_secrets_copy_leaves_no_temporary)
{
	struct sgx_platform_keys k;
	char why[256] = "", tmp[400];
	int ret;

	fresh_platform(&k);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	/* A directory where the temporary copy would go. */
	REQUIRE_EQ(mkdir(tmp, 0700), 0);
	ret = sgx_secrets_set_pending(path, v3, why, sizeof(why));
	rmdir(tmp);
	CHECK(ret < 0);
	CHECK(strstr(why, "nothing changed") != NULL);
	CHECK_EQ(access(tmp, F_OK), -1);
}

/* The lock cannot be taken (works as root too, unlike a mode): refused,
 * nothing written. */
TEST(no_lock_no_write)
{
	struct sgx_platform_keys k;
	struct sgx_svn_state st;
	char why[256] = "", lock[400];
	int ret;

	fresh_platform(&k);
	snprintf(lock, sizeof(lock), "%s.lock", path);
	REQUIRE_EQ(mkdir(lock, 0700), 0);
	ret = sgx_secrets_set_pending(path, v3, why, sizeof(why));
	rmdir(lock);
	CHECK_EQ(ret, -EISDIR);
	CHECK(strstr(why, "cannot lock") != NULL);
	REQUIRE_EQ(sgx_secrets_svn(path, &st, why, sizeof(why)), 0);
	CHECK_MEM(st.pending, v2, 16);
}
