// SPDX-License-Identifier: MIT
/*
 * The policy engine: the file format (every error names its line; nothing
 * runs under a half-read policy), each hook's decisions under the default
 * (mainline) policy, the strict sample and permissive mode, and the audit
 * records they leave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "sgxemu/arch.h"
#include "lsm/hooks.h"
#include "lsm/policy.h"

static char log_path[256];

static const struct lsm_source anon_src = { .anonymous = true };
static const struct lsm_source noexec_src = {
	.noexec_mount = true, .path = "/mnt/noexec/encl.bin", .dev = 45, .ino = 12,
	.mode = 0644,
};
static const struct lsm_source nonexec_file_src = {
	.exec_denied = true, .path = "/home/u/encl.bin", .mode = 0644,
};
static const struct lsm_source file_src = {
	.path = "/usr/lib/encl.bin", .mode = 0755,
};
static const struct lsm_enclave encl = { .base = 0x7f0000000000ULL, .size = 0x10000 };

/* Load @text as the current policy, auditing everything to a fresh file. */
static int use_policy(const char *text)
{
	struct lsm_policy p;
	char why[256], *full;
	int ret;

	snprintf(log_path, sizeof(log_path), "%s/tmp", test_build_dir());
	mkdir(log_path, 0700);
	snprintf(log_path, sizeof(log_path), "%s/tmp/audit-%d.log",
		 test_build_dir(), (int)getpid());
	unlink(log_path);
	if (asprintf(&full, "%s\naudit-log %s\n", text, log_path) < 0)
		return -ENOMEM;
	ret = lsm_policy_parse("test.policy", full, &p, why, sizeof(why));
	free(full);
	if (ret) {
		test_fail(__FILE__, __LINE__, "policy: %s", why);
		return ret;
	}
	lsm_set_policy(&p);
	return 0;
}

/* The audit log as a NUL-terminated string (empty if there is none). */
static char *audit_text(void)
{
	size_t n = 0;
	char *t = test_read_file(log_path, &n), *s;

	s = malloc(n + 1);
	if (!s) {
		free(t);
		return strdup("");
	}
	if (t)
		memcpy(s, t, n);
	s[n] = '\0';
	free(t);
	return s;
}

/* Does the audit log have a line containing every one of @keys? */
static bool audited(const char *const keys[])
{
	char *text = audit_text(), *line, *save = NULL;
	bool found = false;

	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		found = true;
		for (int i = 0; keys[i]; i++)
			if (!strstr(line, keys[i]))
				found = false;
	}
	free(text);
	return found;
}

static size_t audit_lines(void)
{
	char *text = audit_text();
	size_t n = 0;

	for (char *c = text; *c; c++)
		n += *c == '\n';
	free(text);
	return n;
}

#define AUDITED(...) audited((const char *const[]){ __VA_ARGS__, NULL })

TEST(default_policy_is_mainline)
{
	struct lsm_policy p;

	lsm_policy_default(&p);
	CHECK_EQ(p.noexec_source.action, LSM_DENY);
	CHECK_EQ(p.nonexec_file.action, LSM_ALLOW);
	CHECK_EQ(p.anon_exec.action, LSM_ALLOW);
	CHECK_EQ(p.page_wx.action, LSM_ALLOW);
	CHECK_EQ(p.map_wx.action, LSM_ALLOW);
	CHECK_EQ(p.debug.action, LSM_ALLOW);
	CHECK_EQ(p.signer_default.action, LSM_ALLOW);
	CHECK(!p.permissive);
}

TEST(strict_sample_parses)
{
	struct lsm_policy p;
	char why[256] = "", path[512];
	const char *root = getenv("SGXEMU_SRC");

	snprintf(path, sizeof(path), "%s/policies/strict.policy", root ? root : ".");
	REQUIRE_EQ(lsm_policy_load(path, &p, why, sizeof(why)), 0);
	CHECK_EQ(p.anon_exec.action, LSM_DENY);
	CHECK_EQ(p.page_wx.action, LSM_DENY);
	CHECK_EQ(p.map_wx.action, LSM_DENY);
	CHECK_EQ(p.debug.action, LSM_DENY);
	CHECK_EQ(p.signer_default.action, LSM_DENY);
	CHECK(p.anon_exec.line > 0);
	lsm_policy_free(&p);
}

TEST(syntax_errors_name_their_line)
{
	static const struct { const char *text; int line; const char *what; } cases[] = {
		{ "mode enforcing\nfrobnicate yes\n", 2, "unknown directive 'frobnicate'" },
		{ "\n\n# c\nmode lax\n", 4, "enforcing or permissive" },
		{ "page.anon-exec maybe\n", 1, "allow, deny or strip-exec" },
		{ "map.write-exec strip-exec\n", 1, "allow or deny" },
		{ "signer allow 1234\n", 1, "not 64 hex digits" },
		{ "enclave permit " "00000000000000000000000000000000"
		  "00000000000000000000000000000000\n", 1, "allow|deny" },
		{ "audit some\n", 1, "none, denials or all" },
		{ "init.debug deny extra\n", 1, "allow or deny" },
		{ "mode\n", 1, "enforcing or permissive" },
		/* sscanf's %2x took these as ff.. and f0..: no hex digits. */
		{ "signer deny " "-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1"
		  "-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1\n", 1, "not 64 hex digits" },
		{ "enclave deny " "+f+f+f+f+f+f+f+f+f+f+f+f+f+f+f+f"
		  "+f+f+f+f+f+f+f+f+f+f+f+f+f+f+f+f\n", 1, "not 64 hex digits" },
		{ "signer allow " "0x000000000000000000000000000000"
		  "00000000000000000000000000000000\n", 1, "not 64 hex digits" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lsm_policy p;
		char why[256] = "", want[64];

		CHECK_EQ(lsm_policy_parse("bad.policy", cases[i].text, &p, why,
					  sizeof(why)), -EINVAL);
		snprintf(want, sizeof(want), "bad.policy:%d: ", cases[i].line);
		if (strncmp(why, want, strlen(want)) || !strstr(why, cases[i].what))
			test_fail(__FILE__, __LINE__, "case %zu: got '%s'", i, why);
	}
}

TEST(missing_or_binary_policy_file_refused)
{
	struct lsm_policy p;
	char why[256] = "", path[256];
	int fd;

	CHECK_EQ(lsm_policy_load("/nonexistent/x.policy", &p, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "/nonexistent/x.policy") != NULL);
	snprintf(path, sizeof(path), "%s/tmp/bin-%d.policy", test_build_dir(), (int)getpid());
	mkdir(log_path, 0700);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/bin-%d.policy", (int)getpid());
		fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	}
	REQUIRE(fd >= 0);
	REQUIRE_EQ(write(fd, "mode\0x", 6), 6);
	close(fd);
	CHECK_EQ(lsm_policy_load(path, &p, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "NUL") != NULL);
	unlink(path);
}

TEST(lsm_init_refuses_a_bad_policy_and_keeps_the_old_one)
{
	char why[256] = "", path[256];
	FILE *f;

	REQUIRE_EQ(use_policy("page.anon-exec deny"), 0);
	snprintf(path, sizeof(path), "%s/tmp/broken-%d.policy", test_build_dir(), (int)getpid());
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs("page.write-exec deny\npage.anon-exec sometimes\n", f);
	fclose(f);
	CHECK_EQ(lsm_init(path, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, ":2:") != NULL);
	/* Nothing of the half-read file took effect. */
	CHECK_EQ(lsm_current()->anon_exec.action, LSM_DENY);
	CHECK_EQ(lsm_current()->page_wx.action, LSM_ALLOW);
	unlink(path);
}

TEST(noexec_source_refused_by_default)
{
	unsigned prot = LSM_R;

	REQUIRE_EQ(use_policy(""), 0);
	/* Mainline refuses the page whatever its declared permissions. */
	CHECK_EQ(lsm_page_add(&encl, encl.base + 0x1000, &noexec_src, &prot), -EACCES);
	CHECK(AUDITED("op=page_add", "result=denied", "rule=page.noexec-source",
		      "src=\"/mnt/noexec/encl.bin\"", "noexec_mount=1", "errno=EACCES",
		      "addr=0x7f0000001000", "requested=r--"));
	/* The same page from an ordinary file is fine, and not audited. */
	prot = LSM_R | LSM_X;
	CHECK_EQ(lsm_page_add(&encl, encl.base, &file_src, &prot), 0);
	CHECK_EQ(prot, LSM_R | LSM_X);
	CHECK_EQ(audit_lines(), 1);
}

TEST(noexec_source_strip_exec)
{
	unsigned prot = LSM_R | LSM_X;

	REQUIRE_EQ(use_policy("page.noexec-source strip-exec"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &noexec_src, &prot), 0);
	CHECK_EQ(prot, LSM_R);
	CHECK(AUDITED("rule=page.noexec-source", "result=reduced", "requested=r-x", "allowed=r--", "line=1"));
}

TEST(nonexec_file_rule)
{
	unsigned prot = LSM_R | LSM_X;

	REQUIRE_EQ(use_policy(""), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &nonexec_file_src, &prot), 0);
	REQUIRE_EQ(use_policy("page.nonexec-file deny"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &nonexec_file_src, &prot), -EACCES);
	CHECK(AUDITED("rule=page.nonexec-file", "src=\"/home/u/encl.bin\""));
}

TEST(anon_exec_rule)
{
	unsigned prot = LSM_R | LSM_X;

	REQUIRE_EQ(use_policy(""), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), 0);
	REQUIRE_EQ(use_policy("page.anon-exec deny"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), -EACCES);
	CHECK(AUDITED("rule=page.anon-exec", "src=anon", "requested=r-x"));
	/* A data page from anonymous memory is not affected. */
	prot = LSM_R | LSM_W;
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), 0);
}

TEST(write_exec_page_rule)
{
	unsigned prot = LSM_R | LSM_W | LSM_X;

	REQUIRE_EQ(use_policy("page.write-exec deny"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &file_src, &prot), -EACCES);
	CHECK(AUDITED("rule=page.write-exec", "requested=rwx", "allowed=---"));
	prot = LSM_R | LSM_X;
	CHECK_EQ(lsm_page_add(&encl, encl.base, &file_src, &prot), 0);
	REQUIRE_EQ(use_policy("page.write-exec strip-exec"), 0);
	prot = LSM_R | LSM_W | LSM_X;
	CHECK_EQ(lsm_page_add(&encl, encl.base, &file_src, &prot), 0);
	CHECK_EQ(prot, LSM_R | LSM_W);
}

TEST(map_write_exec_rule)
{
	REQUIRE_EQ(use_policy(""), 0);
	CHECK_EQ(lsm_enclave_map(&encl, encl.base, 0x1000, PROT_READ | PROT_WRITE | PROT_EXEC, false), 0);
	REQUIRE_EQ(use_policy("map.write-exec deny"), 0);
	CHECK_EQ(lsm_enclave_map(&encl, encl.base, 0x1000, PROT_READ | PROT_WRITE | PROT_EXEC, true), -EACCES);
	CHECK(AUDITED("op=mprotect", "rule=map.write-exec", "len=0x1000", "requested=rwx"));
	CHECK_EQ(lsm_enclave_map(&encl, encl.base, 0x1000, PROT_READ | PROT_EXEC, false), 0);
}

/* Identities live in a small pool so several can be alive at once. */
static struct lsm_init_info init_info(uint8_t signer_byte, uint8_t encl_byte, uint64_t attrs)
{
	static uint8_t pool[8][2][32];
	static int next;
	uint8_t (*h)[32] = pool[next++ % 8];
	struct lsm_init_info info = { .mrsigner = h[0], .mrenclave = h[1],
				      .attributes = attrs };

	memset(h[0], signer_byte, 32);
	memset(h[1], encl_byte, 32);
	return info;
}

TEST(signer_allow_list)
{
	struct lsm_init_info ok = init_info(0xaa, 1, SGX_ATTR_MODE64BIT);
	struct lsm_init_info other = init_info(0xbb, 1, SGX_ATTR_MODE64BIT);

	REQUIRE_EQ(use_policy("signer.default deny\nsigner allow "
			      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &ok), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &other), -EACCES);
	CHECK(AUDITED("op=init", "result=denied", "rule=signer", "line=1",
		      "mrsigner=bbbbbbbb"));
}

TEST(enclave_deny_list)
{
	struct lsm_init_info bad = init_info(0xaa, 0x66, SGX_ATTR_MODE64BIT);
	struct lsm_init_info good = init_info(0xaa, 0x67, SGX_ATTR_MODE64BIT);

	REQUIRE_EQ(use_policy("enclave deny "
			      "6666666666666666666666666666666666666666666666666666666666666666"), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &bad), -EACCES);
	CHECK_EQ(lsm_enclave_init(&encl, &good), 0);
	CHECK(AUDITED("rule=enclave", "mrenclave=6666"));
}

TEST(debug_and_provision_key_rules)
{
	struct lsm_init_info dbg = init_info(1, 1, SGX_ATTR_MODE64BIT | SGX_ATTR_DEBUG);
	struct lsm_init_info prov = init_info(1, 1, SGX_ATTR_MODE64BIT | SGX_ATTR_PROVISIONKEY);
	struct lsm_init_info plain = init_info(1, 1, SGX_ATTR_MODE64BIT);

	REQUIRE_EQ(use_policy(""), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &dbg), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &prov), 0);
	REQUIRE_EQ(use_policy("init.debug deny\ninit.provision-key deny"), 0);
	CHECK_EQ(lsm_enclave_init(&encl, &dbg), -EACCES);
	CHECK(AUDITED("rule=init.debug", "line=1"));
	CHECK_EQ(lsm_enclave_init(&encl, &prov), -EACCES);
	CHECK(AUDITED("rule=init.provision-key", "line=2"));
	CHECK_EQ(lsm_enclave_init(&encl, &plain), 0);
}

TEST(provision_device_rule)
{
	REQUIRE_EQ(use_policy(""), 0);
	CHECK_EQ(lsm_provision_open("/dev/sgx_provision"), 0);
	REQUIRE_EQ(use_policy("provision-device deny"), 0);
	CHECK_EQ(lsm_provision_open("/dev/sgx_provision"), -EACCES);
	CHECK(AUDITED("op=provision_open", "path=\"/dev/sgx_provision\"", "rule=provision-device"));
}

TEST(permissive_mode_logs_but_allows)
{
	unsigned prot = LSM_R | LSM_X;
	struct lsm_init_info dbg = init_info(1, 1, SGX_ATTR_DEBUG);

	REQUIRE_EQ(use_policy("mode permissive\npage.anon-exec deny\ninit.debug deny"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), 0);
	CHECK_EQ(prot, LSM_R | LSM_X);
	CHECK_EQ(lsm_enclave_init(&encl, &dbg), 0);
	CHECK(AUDITED("rule=page.anon-exec", "result=denied", "permissive=1"));
	CHECK(AUDITED("rule=init.debug", "permissive=1"));
}

TEST(audit_levels)
{
	unsigned prot = LSM_R;

	REQUIRE_EQ(use_policy("audit all"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &file_src, &prot), 0);
	CHECK(AUDITED("op=page_add", "result=allowed", "allowed=r--"));
	REQUIRE_EQ(use_policy("audit none\npage.anon-exec deny"), 0);
	prot = LSM_R | LSM_X;
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), -EACCES);
	CHECK_EQ(audit_lines(), 0);
}

TEST(audit_record_identifies_the_process)
{
	unsigned prot = LSM_R | LSM_X;
	char pid[32], comm[64], *name = program_invocation_short_name;

	REQUIRE_EQ(use_policy("page.anon-exec deny"), 0);
	CHECK_EQ(lsm_page_add(&encl, encl.base, &anon_src, &prot), -EACCES);
	snprintf(pid, sizeof(pid), "pid=%d ", (int)getpid());
	snprintf(comm, sizeof(comm), "comm=\"%.15s\"", name);
	CHECK(AUDITED("type=SGX_AVC msg=audit(", pid, comm, "exe=\"",
		      "encl=0x7f0000000000", "policy=\"test.policy\""));
}

TEST(driver_denials_are_never_permissive)
{
	REQUIRE_EQ(use_policy("mode permissive"), 0);
	lsm_audit_driver_denial("mprotect", &encl, encl.base, LSM_R | LSM_X, LSM_R,
				"max-permissions", EACCES);
	CHECK(AUDITED("op=mprotect", "permissive=0", "rule=max-permissions"));
}
