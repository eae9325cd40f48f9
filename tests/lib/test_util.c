/* SPDX-License-Identifier: MIT */
/*
 * The harness's helpers that need no harness (test.h): build directory,
 * shared files, whole-file reads, hex. Apart from test_main.c so that
 * programs with a main() of their own (tests/stress/) can link them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

const char *test_build_dir(void)
{
	const char *b = getenv("B");

	return b && *b ? b : "build";
}

const char *test_shared_path(const char *rel)
{
	static char path[4][4096];
	static int slot;
	const char *roots[] = { getenv("SGXEMU_SHARED"), "../shared", "../../shared" };
	struct stat st;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char *p = path[slot];

		if (!roots[i])
			continue;
		snprintf(p, sizeof(path[0]), "%s/%s", roots[i], rel);
		if (!stat(p, &st)) {
			slot = (slot + 1) % 4;
			return p;
		}
	}
	return NULL;
}

static const char *key_file(const char *env, const char *name, char *buf,
			    size_t len)
{
	const char *path = getenv(env);
	bool from_env = path && *path;

	if (!from_env) {
		snprintf(buf, len, "%s/keys/%s", test_build_dir(), name);
		path = buf;
	}
	if (access(path, R_OK)) {
		fprintf(stderr, "test: signing key %s: %s (%s)\n", path,
			strerror(errno), from_env ? env :
			"the build makes it: make keys");
		return NULL;
	}
	return path;
}

const char *test_signing_key(void)
{
	static char buf[4096];

	return key_file("SGXEMU_TEST_KEY", "signing_key.pem", buf, sizeof(buf));
}

const char *test_other_key(void)
{
	static char buf[4096];

	return key_file("SGXEMU_TEST_OTHER_KEY", "other_key.pem", buf,
			sizeof(buf));
}

void *test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;
	void *buf;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc(len ? len : 1);
	if (buf && fread(buf, 1, len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf && size)
		*size = len;
	return buf;
}

bool test_unhex(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = v;
	}
	return hex[2 * n] == '\0';
}
