// SPDX-License-Identifier: MIT
/*
 * Finding an added page's source mapping: anonymous memory, files with and
 * without execute permission, a file on a noexec mount (root only: the test
 * mounts a tmpfs with noexec in a private mount namespace), and addresses
 * no mapping holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "driver/page_source.h"

/* A one-page file with @mode under @dir, mapped read-only. */
static void *map_file(const char *dir, const char *name, mode_t mode, char *path, size_t len)
{
	char page[4096] = { 1 };
	void *p;
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, mode);
	if (fd < 0 || write(fd, page, sizeof(page)) != sizeof(page)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	fchmod(fd, mode);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static const char *tmpdir(void)
{
	static char dir[256];

	snprintf(dir, sizeof(dir), "%s/tmp", test_build_dir());
	mkdir(dir, 0700);
	return dir;
}

TEST(anonymous_memory)
{
	struct sgx_page_source s;
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char data[4096];

	REQUIRE(p != MAP_FAILED);
	REQUIRE_EQ(sgx_page_source((uintptr_t)p + 4096, &s), 0);
	CHECK(s.src.anonymous);
	CHECK(!s.src.noexec_mount);
	REQUIRE_EQ(sgx_page_source((uintptr_t)data, &s), 0);	/* .bss */
	REQUIRE_EQ(sgx_page_source((uintptr_t)&s, &s), 0);	/* stack */
	CHECK(s.src.anonymous);
}

TEST(file_with_and_without_exec_permission)
{
	struct sgx_page_source s;
	char path[512];
	void *p;

	p = map_file(tmpdir(), "src-exec.bin", 0755, path, sizeof(path));
	REQUIRE(p != NULL);
	REQUIRE_EQ(sgx_page_source((uintptr_t)p, &s), 0);
	CHECK(!s.src.anonymous);
	CHECK(s.src.path && strstr(s.src.path, "src-exec.bin"));
	CHECK(!s.src.exec_denied);
	CHECK_EQ(s.src.mode & 0777, 0755);
	CHECK(s.src.ino != 0);

	p = map_file(tmpdir(), "src-noexec.bin", 0644, path, sizeof(path));
	REQUIRE(p != NULL);
	REQUIRE_EQ(sgx_page_source((uintptr_t)p, &s), 0);
	CHECK(s.src.exec_denied);
	CHECK(!s.src.noexec_mount);
}

TEST(unmapped_address_is_efault)
{
	struct sgx_page_source s;
	void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	REQUIRE(p != MAP_FAILED);
	munmap(p, 4096);
	CHECK_EQ(sgx_page_source((uintptr_t)p, &s), -EFAULT);
	CHECK_EQ(sgx_page_source(0, &s), -EFAULT);
}

TEST(file_on_noexec_mount)
{
	struct sgx_page_source s;
	char dir[300], path[512];
	void *p;

	if (geteuid() != 0)
		test_skip("needs root to mount a noexec tmpfs");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		test_skip("no private mount namespace here (%s)", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/noexec-mnt", tmpdir());
	mkdir(dir, 0700);
	REQUIRE_EQ(mount("tmpfs", dir, "tmpfs", MS_NOEXEC, "size=1m"), 0);
	p = map_file(dir, "encl.bin", 0755, path, sizeof(path));
	REQUIRE(p != NULL);
	REQUIRE_EQ(sgx_page_source((uintptr_t)p, &s), 0);
	CHECK(s.src.noexec_mount);
	/* Even with the file renamed away, the mapping still tells. */
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/moved.bin");
	REQUIRE_EQ(rename(path, dir), 0);
	REQUIRE_EQ(sgx_page_source((uintptr_t)p, &s), 0);
	CHECK(s.src.noexec_mount);
}
