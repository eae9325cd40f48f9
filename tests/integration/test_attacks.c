/* SPDX-License-Identifier: MIT */
/*
 * The attack suite of the security model (seeds 000, 003, 007): each attack
 * runs in an unmodified-style host program under `sgxemu run --policy P`
 * (this binary, re-executed with SGXEMU_ATTACK_CHILD set), must be refused
 * with the kernel's errno, and must leave an audit record naming the rule.
 * For each, the same program with a permissive policy or a legitimate input
 * succeeds, so the test shows the rule and not a broken path.
 */
#include <sched.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../enclaves/shim_encl.h"
#include "test.h"


static const char *mode(void)
{
	return getenv("SGXEMU_ATTACK_CHILD");
}

static bool expect_refused(void)
{
	return mode() && !strcmp(mode(), "refused");
}

/* --- the parent: policy, audit log, child under the shim -------------------- */

static EVP_PKEY *key(void);

static char audit_path[512];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const char *tmpdir(void)
{
	static char dir[256];

	snprintf(dir, sizeof(dir), "%s/tmp", test_build_dir());
	mkdir(dir, 0700);
	return dir;
}

/*
 * Run this test again under `sgxemu run --policy` with @policy_text, the
 * child expecting @expect ("refused" or "allowed"); its exit status.
 */
static int run_child(const char *test, const char *policy_text, const char *expect,
		     const char *extra_env)
{
	char self[1024], cli[512], lib[512], policy[512], e1[64], e2[600], e3[600],
	     e4[600], e5[600], e6[600], e7[600];
	char *argv[] = { cli, "run", "--lib", lib, "--policy", policy, self,
			 (char *)test, NULL };
	char *envp[] = { e1, e2, e3, e4, e5, e6, e7, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	/* The child signs with the build's key (tests/lib/test.h). */
	key();
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(cli, sizeof(cli), "%s/sgxemu", test_build_dir());
	snprintf(lib, sizeof(lib), "%s/libsgxemu.so", test_build_dir());
	snprintf(policy, sizeof(policy), "%s/attack-%d.policy", tmpdir(), (int)getpid());
	write_file(policy, policy_text);
	snprintf(audit_path, sizeof(audit_path), "%s/attack-%d.audit", tmpdir(), (int)getpid());
	snprintf(e1, sizeof(e1), "SGXEMU_ATTACK_CHILD=%s", expect);
	snprintf(e2, sizeof(e2), "SGXEMU_AUDIT_LOG=%s", audit_path);
	snprintf(e3, sizeof(e3), "SGXEMU_SHARED=%s",
		 getenv("SGXEMU_SHARED") ? getenv("SGXEMU_SHARED") : "../shared");
	snprintf(e4, sizeof(e4), "HOME=%s", getenv("HOME") ? getenv("HOME") : "/");
	snprintf(e5, sizeof(e5), "%s", extra_env ? extra_env : "SGXEMU_ATTACK_EXTRA=");
	/* Under `make asan` the preloaded library carries the ASan runtime. */
	snprintf(e6, sizeof(e6), "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
	snprintf(e7, sizeof(e7), "B=%s", test_build_dir());
	if (posix_spawn(&pid, cli, NULL, NULL, argv, envp))
		return -1;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	unlink(policy);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Does the child's audit log hold a denial with all of @keys? */
static bool audited_denial(const char *const keys[])
{
	size_t n = 0;
	char *text = test_read_file(audit_path, &n), *copy, *line, *save = NULL;
	bool found = false;

	if (!text)
		return false;
	copy = calloc(1, n + 1);
	memcpy(copy, text, n);
	for (line = strtok_r(copy, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		found = strstr(line, "result=denied") != NULL;
		for (int i = 0; keys[i] && found; i++)
			found = strstr(line, keys[i]) != NULL;
	}
	free(copy);
	free(text);
	return found;
}
#define AUDITED(...) audited_denial((const char *const[]){ __VA_ARGS__, NULL })

static void reset_audit(void)
{
	unlink(audit_path);
}

/* Parent side of one case: refused under @deny_policy, allowed under @ok_policy. */
#define RULE_CASE(test, deny_policy, ok_policy, ...) do { \
	CHECK_EQ(run_child(test, deny_policy, "refused", NULL), 0); \
	CHECK(AUDITED(__VA_ARGS__)); \
	reset_audit(); \
	CHECK_EQ(run_child(test, ok_policy, "allowed", NULL), 0); \
	CHECK(!AUDITED(__VA_ARGS__)); \
	reset_audit(); \
} while (0)

/* --- the child: host-program steps under the shim ------------------------ */

static EVP_PKEY *key(void)
{
	static EVP_PKEY *k;

	if (!k)
		k = shim_load_key(test_signing_key());
	if (!k)
		test_abort("%s", shim_key_why);
	return k;
}

/* ADD_PAGES of one page from @src with SECINFO @flags at @off. */
static int add_page(struct shim_encl *e, uint64_t off, const void *src, uint64_t flags)
{
	struct sgx_enclave_add_pages add;
	struct sgx_secinfo si __attribute__((aligned(64)));

	memset(&si, 0, sizeof(si));
	si.flags = flags;
	memset(&add, 0, sizeof(add));
	add.src = (uint64_t)(uintptr_t)src;
	add.offset = off;
	add.length = 4096;
	add.secinfo = (uint64_t)(uintptr_t)&si;
	add.flags = SGX_PAGE_MEASURE;
	return ioctl(e->fd, SGX_IOC_ENCLAVE_ADD_PAGES, &add) ? -errno : 0;
}

/* The outcome of the attack step: refused with @err, or allowed. */
static void outcome(int ret, int err)
{
	if (expect_refused())
		CHECK_EQ(ret, -err);
	else
		CHECK_EQ(ret, 0);
}

static void *anon_page(int prot)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x90, 4096);
	mprotect(p, 4096, prot);
	return p;
}

/*
 * Seed 000's attack: a read-only page from a file on a noexec mount, then
 * mprotect(PROT_EXEC) of it. Mainline refuses the page at ADD (EACCES);
 * a policy that strips X instead lets ADD pass, and the mprotect fails.
 */
TEST(article_attack_noexec_source_then_mprotect_exec)
{
	if (mode()) {
		struct shim_encl e;
		const char *path = getenv("SGXEMU_ATTACK_EXTRA");
		int fd = open(path, O_RDONLY);
		void *src, *win;
		int ret;

		REQUIRE(fd >= 0);
		src = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		REQUIRE(src != MAP_FAILED);
		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
		ret = add_page(&e, SHIM_ENCL_CODE, src, SGX_SECINFO_REG | SGX_SECINFO_R);
		if (!strcmp(mode(), "refused")) {
			CHECK_EQ(ret, -EACCES);
			return;
		}
		/* Allowed (or X stripped): the page is there, read-only... */
		REQUIRE_EQ(ret, 0);
		win = mmap((void *)(uintptr_t)(e.base + SHIM_ENCL_CODE), 4096, PROT_READ,
			   MAP_SHARED | MAP_FIXED, e.fd, 0);
		REQUIRE(win != MAP_FAILED);
		/* ...and it never becomes executable. */
		CHECK_EQ(mprotect(win, 4096, PROT_READ | PROT_EXEC), -1);
		CHECK_EQ(errno, EACCES);
		return;
	}
	{
		char dir[600], file[700], env[800];
		char page[4096];
		int fd;

		if (geteuid() != 0)
			test_skip("needs root to mount a noexec tmpfs");
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			test_skip("no private mount namespace (%s)", strerror(errno));
		snprintf(dir, sizeof(dir), "%s/noexec-%d", tmpdir(), (int)getpid());
		mkdir(dir, 0700);
		REQUIRE_EQ(mount("tmpfs", dir, "tmpfs", MS_NOEXEC, "size=1m"), 0);
		snprintf(file, sizeof(file), "%s/encl_text.bin", dir);
		memset(page, 0xc3, sizeof(page));
		fd = open(file, O_CREAT | O_WRONLY, 0755);
		REQUIRE(fd >= 0);
		REQUIRE_EQ(write(fd, page, sizeof(page)), sizeof(page));
		close(fd);
		snprintf(env, sizeof(env), "SGXEMU_ATTACK_EXTRA=%s", file);
		/* Default policy (mainline): refused at ADD. */
		CHECK_EQ(run_child("article_attack_noexec_source_then_mprotect_exec", "",
				   "refused", env), 0);
		CHECK(AUDITED("op=page_add", "rule=page.noexec-source", "noexec_mount=1",
			      "errno=EACCES", "encl_text.bin"));
		reset_audit();
		/* strip-exec: ADD passes, the later mprotect(PROT_EXEC) fails. */
		CHECK_EQ(run_child("article_attack_noexec_source_then_mprotect_exec",
				   "page.noexec-source strip-exec\n", "stripped", env), 0);
		CHECK(AUDITED("op=mprotect", "rule=max-permissions", "requested=r-x"));
		reset_audit();
		/* A policy that allows noexec sources: the page loads. */
		CHECK_EQ(run_child("article_attack_noexec_source_then_mprotect_exec",
				   "page.noexec-source allow\n", "allowed", env), 0);
		umount(dir);
	}
}

TEST(mmap_rwx_over_rx_page)
{
	if (mode()) {
		struct shim_encl e;
		void *want, *p;

		REQUIRE_EQ(shim_encl_build(&e, key()), 0);
		want = (void *)(uintptr_t)(e.base + SHIM_ENCL_CODE);
		p = mmap(want, 4096, expect_refused() ? PROT_READ | PROT_WRITE | PROT_EXEC :
			 PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, e.fd, 0);
		outcome(p == MAP_FAILED ? -errno : 0, EACCES);
		return;
	}
	CHECK_EQ(run_child("mmap_rwx_over_rx_page", "", "refused", NULL), 0);
	CHECK(AUDITED("op=mmap", "rule=max-permissions", "requested=rwx", "allowed=r-x"));
	reset_audit();
	CHECK_EQ(run_child("mmap_rwx_over_rx_page", "", "allowed", NULL), 0);
}

TEST(mprotect_write_on_text_page)
{
	if (mode()) {
		struct shim_encl e;
		void *text;

		REQUIRE_EQ(shim_encl_build(&e, key()), 0);
		text = (void *)(uintptr_t)(e.base + SHIM_ENCL_CODE);
		outcome(mprotect(text, 4096, expect_refused() ? PROT_READ | PROT_WRITE :
				 PROT_READ) ? -errno : 0, EACCES);
		return;
	}
	CHECK_EQ(run_child("mprotect_write_on_text_page", "", "refused", NULL), 0);
	CHECK(AUDITED("op=mprotect", "rule=max-permissions", "requested=rw-"));
	reset_audit();
	CHECK_EQ(run_child("mprotect_write_on_text_page", "", "allowed", NULL), 0);
}

TEST(write_exec_page_under_strict_policy)
{
	if (mode()) {
		struct shim_encl e;
		void *src = anon_page(PROT_READ);

		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
		outcome(add_page(&e, SHIM_ENCL_CODE, src, SGX_SECINFO_REG | 7), EACCES);
		return;
	}
	RULE_CASE("write_exec_page_under_strict_policy", "page.write-exec deny\n", "",
		  "op=page_add", "rule=page.write-exec", "requested=rwx");
}

TEST(exec_page_from_anonymous_memory_under_strict_policy)
{
	if (mode()) {
		struct shim_encl e;
		void *src = anon_page(PROT_READ);

		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
		outcome(add_page(&e, SHIM_ENCL_CODE, src,
				 SGX_SECINFO_REG | SGX_SECINFO_R | SGX_SECINFO_X), EACCES);
		return;
	}
	RULE_CASE("exec_page_from_anonymous_memory_under_strict_policy",
		  "page.anon-exec deny\n", "page.anon-exec allow\n",
		  "op=page_add", "rule=page.anon-exec", "src=anon", "line=1");
}

TEST(map_private_refused)
{
	if (mode()) {
		struct shim_encl e;
		void *p;

		REQUIRE_EQ(shim_encl_build(&e, key()), 0);
		p = mmap((void *)(uintptr_t)(e.base + SHIM_ENCL_DATA), 4096, PROT_READ,
			 (expect_refused() ? MAP_PRIVATE : MAP_SHARED) | MAP_FIXED, e.fd, 0);
		outcome(p == MAP_FAILED ? -errno : 0, EINVAL);
		return;
	}
	CHECK_EQ(run_child("map_private_refused", "", "refused", NULL), 0);
	CHECK(AUDITED("op=mmap", "rule=map-private", "errno=EINVAL"));
	reset_audit();
	CHECK_EQ(run_child("map_private_refused", "", "allowed", NULL), 0);
}

TEST(mapping_beyond_the_enclave_after_init)
{
	if (mode()) {
		struct shim_encl e;
		void *p;

		REQUIRE_EQ(shim_encl_build(&e, key()), 0);
		/* The reservation's second half lies outside ELRANGE. */
		p = mmap((void *)(uintptr_t)(e.base + (expect_refused() ? SHIM_ENCL_SIZE :
						       SHIM_ENCL_DATA)),
			 4096, PROT_READ, MAP_SHARED | MAP_FIXED, e.fd, 0);
		outcome(p == MAP_FAILED ? -errno : 0, EACCES);
		return;
	}
	CHECK_EQ(run_child("mapping_beyond_the_enclave_after_init", "", "refused", NULL), 0);
	CHECK(AUDITED("op=mmap", "rule=outside-elrange"));
	reset_audit();
	CHECK_EQ(run_child("mapping_beyond_the_enclave_after_init", "", "allowed", NULL), 0);
}

/* MRSIGNER of the signing key, hex (test-side OpenSSL). */
static void seed_mrsigner_hex(char out[65])
{
	struct sgx_sigstruct ss;
	uint8_t mr[32], h[32] = { 0 };

	memset(out, '0', 64);
	out[64] = '\0';
	if (!key() || shim_sign(key(), h, SHIM_ENCL_ATTRS, &ss))
		return;
	EVP_Digest(ss.modulus, 384, mr, NULL, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", mr[i]);
}

TEST(unlisted_signer_under_an_allow_list)
{
	char deny[300], ok[300], hex[65];

	if (mode()) {
		struct shim_encl e;

		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", SHIM_ENCL_ATTRS), 0);
		REQUIRE_EQ(shim_encl_add(&e), 0);
		outcome(shim_encl_init(&e, key(), SHIM_ENCL_ATTRS), EACCES);
		return;
	}
	seed_mrsigner_hex(hex);
	snprintf(deny, sizeof(deny), "signer.default deny\nsigner allow %064d\n", 7);
	snprintf(ok, sizeof(ok), "signer.default deny\nsigner allow %s\n", hex);
	RULE_CASE("unlisted_signer_under_an_allow_list", deny, ok,
		  "op=init", "rule=signer", "line=1");
}

TEST(debug_enclave_where_policy_denies_debug)
{
	if (mode()) {
		struct shim_encl e;
		uint64_t attrs = SGX_ATTR_MODE64BIT |
				 (getenv("SGXEMU_ATTACK_DEBUG") ? SGX_ATTR_DEBUG : 0);

		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", attrs), 0);
		REQUIRE_EQ(shim_encl_add(&e), 0);
		outcome(shim_encl_init(&e, key(), attrs), EACCES);
		return;
	}
	CHECK_EQ(run_child("debug_enclave_where_policy_denies_debug", "init.debug deny\n",
			   "refused", "SGXEMU_ATTACK_DEBUG=1"), 0);
	CHECK(AUDITED("op=init", "rule=init.debug"));
	reset_audit();
	/* The same program with a production enclave passes the same policy. */
	CHECK_EQ(run_child("debug_enclave_where_policy_denies_debug", "init.debug deny\n",
			   "allowed", NULL), 0);
	/* And the debug enclave passes the default policy. */
	CHECK_EQ(run_child("debug_enclave_where_policy_denies_debug", "",
			   "allowed", "SGXEMU_ATTACK_DEBUG=1"), 0);
}

TEST(provisionkey_without_the_provision_descriptor)
{
	if (mode()) {
		uint64_t attrs = SHIM_ENCL_ATTRS | SGX_ATTR_PROVISIONKEY;
		struct shim_encl e;

		REQUIRE_EQ(shim_encl_create(&e, "/dev/sgx_enclave", attrs), 0);
		if (!expect_refused()) {
			struct sgx_enclave_provision prov;
			int pfd = open("/dev/sgx_provision", O_RDONLY);

			REQUIRE(pfd >= 0);
			prov.fd = (uint64_t)pfd;
			REQUIRE_EQ(ioctl(e.fd, SGX_IOC_ENCLAVE_PROVISION, &prov), 0);
		}
		REQUIRE_EQ(shim_encl_add(&e), 0);
		outcome(shim_encl_init(&e, key(), attrs), EACCES);
		return;
	}
	CHECK_EQ(run_child("provisionkey_without_the_provision_descriptor", "",
			   "refused", NULL), 0);
	CHECK(AUDITED("op=init", "rule=provisionkey-without-device"));
	reset_audit();
	CHECK_EQ(run_child("provisionkey_without_the_provision_descriptor", "",
			   "allowed", NULL), 0);
}

TEST(provision_device_closed_by_policy)
{
	if (mode()) {
		int fd = open("/dev/sgx_provision", O_RDONLY);

		outcome(fd < 0 ? -errno : 0, EACCES);
		return;
	}
	RULE_CASE("provision_device_closed_by_policy", "provision-device deny\n", "",
		  "op=provision_open", "rule=provision-device", "path=\"/dev/sgx_provision\"");
}

TEST(policy_file_with_an_error_is_refused_at_start)
{
	char policy[600], cmd[2000];
	FILE *p;
	char out[1024] = "";
	int status;

	if (mode()) {
		/* Never reached: the shim refuses to start the program. */
		test_fail(__FILE__, __LINE__, "the program ran under a broken policy");
		return;
	}
	snprintf(policy, sizeof(policy), "%s/broken-%d.policy", tmpdir(), (int)getpid());
	write_file(policy, "mode enforcing\npage.anon-exec deny\npage.write-exec perhaps\n");
	/* Through the CLI: refused before anything runs, with the line. */
	snprintf(cmd, sizeof(cmd), "%s/sgxemu run --policy %s /bin/true 2>&1",
		 test_build_dir(), policy);
	p = popen(cmd, "r");
	REQUIRE(p != NULL);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	status = pclose(p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	CHECK(strstr(out, ":3:") != NULL);
	/* Through the environment: the shim stops the program before main. */
	snprintf(cmd, sizeof(cmd), "SGXEMU_ATTACK_CHILD=refused SGXEMU_POLICY=%s "
		 "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "
		 "LD_PRELOAD=%s/libsgxemu.so /proc/%d/exe "
		 "policy_file_with_an_error_is_refused_at_start 2>&1",
		 policy, test_build_dir(), (int)getpid());
	p = popen(cmd, "r");
	REQUIRE(p != NULL);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	status = pclose(p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 126);
	CHECK(strstr(out, "policy refused") && strstr(out, ":3:"));
	/* A correct policy lets the same program start. */
	write_file(policy, "mode enforcing\npage.anon-exec deny\n");
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "
		 "%s/sgxemu run --policy %s /bin/true", test_build_dir(), policy);
	CHECK_EQ(system(cmd), 0);
	unlink(policy);
}
