// SPDX-License-Identifier: MIT
/*
 * The security versions in the platform-secrets file (secrets.h, struct
 * sgx_svn_state): a microcode update asked for by `sgxemu platform
 * update-svn`, and the CPUSVN an EUPDATESVN took, written back so that the
 * next process starts where this one left the platform.
 *
 * Both are read-modify-write of the one file that also holds the root
 * secrets, so each happens under an exclusive lock on @path.lock (several
 * processes may take an update at once) and replaces the file by a rename
 * of a complete, synced copy: a crash or a full disk leaves the old file,
 * never a half-written one, and the root secrets and OWNEREPOCH are copied
 * byte for byte, so the platform's identity and sealing keys never change.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "base/why.h"

int sgx_secrets_svn(const char *path, struct sgx_svn_state *st,
		    char *why, size_t whylen)
{
	uint8_t image[SGX_SECRETS_FILE_SIZE_V2];
	size_t len;
	int ret;

	ret = sgx_secrets_read(path, image, &len, why, whylen);
	if (ret == -ENOENT)
		return sgx_fail(why, whylen, ret, "%s: no platform yet (it is "
				"created at the first use of the platform)", path);
	if (ret)
		return ret;
	sgx_secrets_svn_of(image, len, st);
	memset(image, 0, sizeof(image));
	return 0;
}

/* @b is newer than @a: no component lower and one higher (keys.h's
 * CPUSVN order). */
static int newer(const uint8_t a[16], const uint8_t b[16])
{
	return sgx_cpusvn_supported(b, a) && memcmp(a, b, 16);
}

/* Write @image as @path through a synced temporary copy and a rename. */
static int replace_file(const char *path, const uint8_t *image, size_t len,
			char *why, size_t whylen)
{
	char tmp[4096 + 32];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "cannot write beside %s: %s "
				"(nothing changed)", path, strerror(errno));
	if (write(fd, image, len) != (ssize_t)len || fsync(fd))
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		return sgx_fail(why, whylen, -err, "cannot write %s: %s (nothing "
				"changed)", path, strerror(err));
	}
	return 0;
}

/*
 * Under the lock: read the file, let @edit change the security versions
 * (it returns 1 to write, 0 to leave the file as it is, or -errno), and
 * write the version-2 image.
 */
static int update_svn(const char *path,
		      int (*edit)(struct sgx_svn_state *st, const uint8_t *arg,
				  char *why, size_t whylen),
		      const uint8_t *arg, char *why, size_t whylen)
{
	uint8_t image[SGX_SECRETS_FILE_SIZE_V2];
	struct sgx_svn_state st;
	char lock[4096 + 8];
	size_t len;
	int fd, ret;

	snprintf(lock, sizeof(lock), "%s.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "cannot lock %s: %s (nothing "
				"changed)", lock, strerror(errno));
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	ret = sgx_secrets_svn(path, &st, why, whylen);
	if (!ret)
		ret = sgx_secrets_read(path, image, &len, why, whylen);
	if (!ret)
		ret = edit(&st, arg, why, whylen);
	if (ret == 1) {
		/* Roots and OWNEREPOCH stay at 16..112, as in version 1. */
		memcpy(image + 112, st.cpusvn, 16);
		memcpy(image + 128, st.pending, 16);
		memcpy(image + 144, st.previous, 16);
		ret = sgx_secrets_seal_image(image);
		if (ret)
			ret = sgx_fail(why, whylen, ret, "SHA-256 failed");
		else
			ret = replace_file(path, image, SGX_SECRETS_FILE_SIZE_V2,
					   why, whylen);
	}
	memset(image, 0, sizeof(image));
	close(fd);		/* drops the lock */
	return ret < 0 ? ret : 0;
}

static int edit_pending(struct sgx_svn_state *st, const uint8_t *pending,
			char *why, size_t whylen)
{
	char have[33], want[33];

	sgx_hex(want, pending, 16);
	if (!newer(st->pending, pending) || !newer(st->cpusvn, pending)) {
		sgx_hex(have, newer(st->cpusvn, st->pending) ? st->pending : st->cpusvn,
			16);
		return sgx_fail(why, whylen, -EINVAL, "CPUSVN %s is not newer than "
				"the platform's %s (every component at least as "
				"high, one higher)", want, have);
	}
	memcpy(st->pending, pending, 16);
	return 1;
}

int sgx_secrets_set_pending(const char *path, const uint8_t pending[16],
			    char *why, size_t whylen)
{
	return update_svn(path, edit_pending, pending, why, whylen);
}

static int edit_commit(struct sgx_svn_state *st, const uint8_t *cpusvn,
		       char *why, size_t whylen)
{
	(void)why;
	(void)whylen;
	if (!newer(st->cpusvn, cpusvn))
		return 0;	/* another process recorded it first */
	memcpy(st->previous, st->cpusvn, 16);
	memcpy(st->cpusvn, cpusvn, 16);
	if (!sgx_cpusvn_supported(st->pending, cpusvn))
		memcpy(st->pending, cpusvn, 16);
	return 1;
}

int sgx_secrets_commit_svn(const char *path, const uint8_t cpusvn[16],
			   char *why, size_t whylen)
{
	return update_svn(path, edit_commit, cpusvn, why, whylen);
}
