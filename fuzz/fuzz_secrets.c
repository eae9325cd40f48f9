/* SPDX-License-Identifier: MIT */
/*
 * The platform secrets file (src/base/secrets.c) and the two variables
 * that override parts of it. Input: one byte of switches, a length byte
 * and that many bytes of $SGXEMU_CPUSVN, the same for
 * $SGXEMU_OWNER_EPOCH, then the file's content, written to a private
 * file (mode 0600) that sgx_secrets_load() reads. A load either succeeds
 * or fails with an errno and a one-line reason; it never replaces a
 * damaged file. With switch 4, a microcode update to the first 16 bytes
 * of the CPUSVN string follows a load that succeeded: refused with the
 * file byte for byte as it was, or written with the same root secrets.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "base/secrets.h"

static char path[256];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/sgxemu-fuzz-secrets-XXXXXX";

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/platform-secrets", dir);
	return 0;
}

/* A length-prefixed string (at most 63 bytes) from the input. */
static void fuzz_string(struct fuzz_in *in, char out[64])
{
	size_t n = fuzz_u8(in) % 64;

	fuzz_bytes(in, out, n);
	out[n] = '\0';
}

/* A microcode update on a file that loaded as @keys (@file, @len bytes). */
static void update(const struct sgx_platform_keys *keys, const uint8_t *pending,
		   const uint8_t *file, size_t len)
{
	struct sgx_platform_keys again;
	struct sgx_svn_state st;
	uint8_t now[SGX_SECRETS_FILE_SIZE_V2 + 64];
	char why[512] = "";
	ssize_t n;
	int fd, ret;

	ret = sgx_secrets_set_pending(path, pending, why, sizeof(why));
	if (ret) {
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, now, sizeof(now));
		if (fd >= 0)
			close(fd);
		if (ret > 0 || !why[0] || strchr(why, '\n') ||
		    n != (ssize_t)len || memcmp(now, file, len))
			abort();
		return;
	}
	if (sgx_secrets_load(path, &again, why, sizeof(why)) ||
	    memcmp(again.root, keys->root, sizeof(keys->root)) ||
	    memcmp(again.owner_epoch, keys->owner_epoch, 16) ||
	    sgx_secrets_svn(path, &st, why, sizeof(why)) ||
	    memcmp(st.pending, pending, 16))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct sgx_platform_keys keys;
	char cpusvn[64], epoch[64], why[512] = "";
	uint8_t sw = fuzz_u8(&in), before[SGX_SECRETS_FILE_SIZE_V2 + 64];
	ssize_t nb;
	int fd, ret;

	fuzz_string(&in, cpusvn);
	fuzz_string(&in, epoch);
	if (sw & 1)
		setenv("SGXEMU_CPUSVN", cpusvn, 1);
	else
		unsetenv("SGXEMU_CPUSVN");
	if (sw & 2)
		setenv("SGXEMU_OWNER_EPOCH", epoch, 1);
	else
		unsetenv("SGXEMU_OWNER_EPOCH");

	if (in.left > SGX_SECRETS_FILE_SIZE_V2 + 32)
		in.left = SGX_SECRETS_FILE_SIZE_V2 + 32;
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		abort();
	if (write(fd, in.p, in.left) != (ssize_t)in.left)
		abort();
	close(fd);

	memset(&keys, 0, sizeof(keys));
	ret = sgx_secrets_load(path, &keys, why, sizeof(why));
	if (ret > 0 || (ret && (!why[0] || strchr(why, '\n')))) {
		fprintf(stderr, "bad result %d, '%s'\n", ret, why);
		abort();
	}
	/* A file that was there is never rewritten, loaded or not. */
	fd = open(path, O_RDONLY);
	if (fd < 0)
		abort();
	nb = read(fd, before, sizeof(before));
	close(fd);
	if (nb != (ssize_t)in.left || memcmp(before, in.p, in.left))
		abort();
	if ((sw & 4) && !ret)
		update(&keys, (const uint8_t *)cpusvn, in.p, in.left);
	return 0;
}
