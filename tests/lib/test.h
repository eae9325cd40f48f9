/* SPDX-License-Identifier: MIT */
/*
 * A small test harness. Each TEST() registers itself; test_main.c runs every
 * test in a forked child (so a crash or a stray signal fails one test, not
 * the binary), prints "ok NAME", "FAIL NAME: why" or "skip NAME: why", and
 * ends with "N passed, N failed, N skipped". tests/run.sh adds the counts of
 * all test binaries up.
 *
 * Run one test:  build/tests/unit/test_x NAME   (no fork: handy under gdb)
 */
#ifndef SGXEMU_TEST_H
#define SGXEMU_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef void (*test_fn)(void);

void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Fail the running test now, saying why: for what the build should have
 * made (its signing key), where a skip would hide a broken build. */
void test_abort(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Path of a file under ../shared (the seeds, vectors); NULL if missing. */
const char *test_shared_path(const char *rel);
/*
 * The suite's enclave signing key, RSA-3072 with exponent 3, which the
 * build makes itself (mk/keys.mk: $B/keys/signing_key.pem; "other" gives
 * a second signer, $B/keys/other_key.pem), or $SGXEMU_TEST_KEY and
 * $SGXEMU_TEST_OTHER_KEY. NULL, after one line on stderr naming the file,
 * when it cannot be read: a test then fails rather than skips, since the
 * key is part of the build.
 */
const char *test_signing_key(void);
const char *test_other_key(void);
/* The build directory ($B, default "build"). */
const char *test_build_dir(void);
/* Read a whole file; returns malloc'd data and its size, or NULL. */
void *test_read_file(const char *path, size_t *size);
/* This host's TSC rate in Hz, measured twice over 200 ms against
 * CLOCK_MONOTONIC (host_tsc.c); 0 with *@why set where the two disagree
 * (no steady rate to compare with) or SGXEMU_TEST_UNSTEADY_TSC=1. */
double test_tsc_hz(const char **why);
/* Whether this process may ptrace a child of its own (host_ptrace.c);
 * false with *@why set where the host refuses it or with
 * SGXEMU_TEST_NO_PTRACE=1. */
bool test_ptrace_allowed(const char **why);

#define TEST(name) \
	static void name(void); \
	__attribute__((constructor)) static void register_##name(void) \
	{ test_register(#name, name); } \
	static void name(void)

/* Non-fatal check: records the failure and carries on. */
#define CHECK(cond) do { \
	if (!(cond)) test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); \
} while (0)

/* Fatal check: records the failure and leaves the test. */
#define REQUIRE(cond) do { \
	if (!(cond)) { test_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } \
} while (0)

#define CHECK_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) test_fail(__FILE__, __LINE__, "%s == %s: %lld (0x%llx) != %lld (0x%llx)", \
				#a, #b, _a, (unsigned long long)_a, _b, (unsigned long long)_b); \
} while (0)

#define REQUIRE_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { test_fail(__FILE__, __LINE__, "%s == %s: %lld (0x%llx) != %lld (0x%llx)", \
				  #a, #b, _a, (unsigned long long)_a, _b, (unsigned long long)_b); return; } \
} while (0)

#define CHECK_MEM(a, b, n) do { \
	if (memcmp((a), (b), (n))) test_fail(__FILE__, __LINE__, "memcmp(%s, %s, %s) != 0", #a, #b, #n); \
} while (0)

/* Hex string (lower case) to bytes; returns false on a malformed string. */
bool test_unhex(const char *hex, uint8_t *out, size_t n);

#endif /* SGXEMU_TEST_H */
