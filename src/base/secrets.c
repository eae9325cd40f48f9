// SPDX-License-Identifier: MIT
/*
 * Platform secrets file (see secrets.h). Layout, version 1, 144 bytes:
 *   0  "SGXEMUPS"      magic
 *   8  u32 version (1), u32 payload size (96)
 *   16 root keys, 5 x 16 bytes, by KEYNAME
 *   96 OWNEREPOCH, 16 bytes
 *   112 SHA-256 of bytes [0,112)
 * Version 2 (192 bytes; written only once a microcode update is asked
 * for, secrets_svn.c) is version 1's payload followed by the security
 * versions, payload size 144:
 *   112 CPUSVN, 128 pending CPUSVN, 144 previous CPUSVN (16 bytes each)
 *   160 SHA-256 of bytes [0,160)
 * The checksum turns a truncated or bit-flipped file into a clear error
 * instead of a silently different platform.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <stdbool.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/hex.h"
#include "base/secrets.h"
#include "base/why.h"

#define SECRETS_MAGIC		"SGXEMUPS"
#define SECRETS_VERSION		1
#define SECRETS_PAYLOAD		96
#define SECRETS_SUM_OFF		112
#define SECRETS_V2_PAYLOAD	144
#define SECRETS_V2_SUM_OFF	160

/*
 * The state directory's base when the environment names none: the
 * password database's home of the effective user where that exists and is
 * writable, else SGX_STATE_FALLBACK-<uid>, made 0700 and used only while
 * it is a directory of ours that no one else can enter (it is in a
 * world-writable place). 0 or -errno.
 */
static int fallback_base(char *buf, size_t len, bool *home)
{
	struct passwd pw, *res = NULL;
	char pwbuf[4096];
	struct stat st;
	uid_t uid = geteuid();
	int n;

	if (!getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) && res &&
	    res->pw_dir && res->pw_dir[0] == '/' && !access(res->pw_dir, W_OK)) {
		*home = true;
		n = snprintf(buf, len, "%s", res->pw_dir);
		return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	*home = false;
	n = snprintf(buf, len, "%s-%u", SGX_STATE_FALLBACK, (unsigned)uid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(buf, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
		return -EACCES;
	return 0;
}

int sgx_state_path(const char *env, const char *name, char *buf, size_t len)
{
	const char *val = getenv(env);
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char base[4096];
	bool is_home;
	int n, ret;

	if (val && *val)
		n = snprintf(buf, len, "%s", val);
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/sgxemu/%s", xdg, name);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.local/state/sgxemu/%s", home, name);
	else if ((ret = fallback_base(base, sizeof(base), &is_home)))
		return ret;
	else
		n = snprintf(buf, len, is_home ? "%s/.local/state/sgxemu/%s" :
			     "%s/%s", base, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int sgx_secrets_path(char *buf, size_t len)
{
	return sgx_state_path("SGXEMU_SECRETS_FILE", "platform-secrets", buf, len);
}

static int sha256(const void *data, size_t len, uint8_t out[32])
{
	return EVP_Digest(data, len, out, NULL, EVP_sha256(), NULL) ? 0 : -1;
}

static int random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int sgx_make_parent_dirs(const char *path)
{
	char dir[4096];
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/*
 * Create the file with fresh secrets: written to a temporary file, synced,
 * then linked into place with link(), which fails if another process won
 * the race; the caller then reads the winner's file.
 */
static int create_secrets(const char *path, char *why, size_t whylen)
{
	uint8_t image[SGX_SECRETS_FILE_SIZE] = { 0 };
	uint32_t version = SECRETS_VERSION, size = SECRETS_PAYLOAD;
	char tmp[4096 + 32];
	int fd, ret;

	ret = sgx_make_parent_dirs(path);
	if (ret)
		return sgx_fail(why, whylen, ret, "cannot create the directory of %s: %s",
			    path, strerror(-ret));
	memcpy(image, SECRETS_MAGIC, 8);
	memcpy(image + 8, &version, 4);
	memcpy(image + 12, &size, 4);
	ret = random_bytes(image + 16, SECRETS_PAYLOAD);
	if (ret)
		return sgx_fail(why, whylen, ret, "no randomness for platform secrets: %s",
			    strerror(-ret));
	if (sha256(image, SECRETS_SUM_OFF, image + SECRETS_SUM_OFF))
		return sgx_fail(why, whylen, -EIO, "SHA-256 failed");

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "cannot create %s: %s", tmp,
			    strerror(errno));
	if (write(fd, image, sizeof(image)) != (ssize_t)sizeof(image) ||
	    fsync(fd)) {
		ret = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		return sgx_fail(why, whylen, -ret, "cannot write %s: %s", tmp, strerror(ret));
	}
	close(fd);
	ret = link(tmp, path) ? errno : 0;
	unlink(tmp);
	if (ret && ret != EEXIST)
		return sgx_fail(why, whylen, -ret, "cannot create %s: %s", path, strerror(ret));
	return 0;
}

int sgx_secrets_read(const char *path, uint8_t image[SGX_SECRETS_FILE_SIZE_V2],
		     size_t *len, char *why, size_t whylen)
{
	uint8_t sum[32];
	uint32_t version, size;
	struct stat st;
	size_t want, sum_off;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;		/* first use: the caller creates it */
	if (fd < 0)
		return sgx_fail(why, whylen, -errno, "cannot open %s: %s", path,
			    strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return sgx_fail(why, whylen, -errno, "cannot stat %s: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return sgx_fail(why, whylen, -EINVAL, "%s is not a regular file", path);
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return sgx_fail(why, whylen, -EPERM,
			    "%s must be owned by you and mode 0600 (it is %03o): "
			    "refusing secrets others can read", path,
			    (unsigned)(st.st_mode & 0777));
	}
	n = read(fd, image, SGX_SECRETS_FILE_SIZE_V2);
	if (n < 0) {
		int err = errno;

		close(fd);
		return sgx_fail(why, whylen, -err, "cannot read %s: %s", path, strerror(err));
	}
	close(fd);
	if (n < 16 || n != st.st_size ||
	    (n != SGX_SECRETS_FILE_SIZE && n != SGX_SECRETS_FILE_SIZE_V2))
		return sgx_fail(why, whylen, -EINVAL,
			    "%s is damaged: %lld bytes, expected %d or %d (not "
			    "replaced; move it away to start a new platform)", path,
			    (long long)st.st_size, SGX_SECRETS_FILE_SIZE,
			    SGX_SECRETS_FILE_SIZE_V2);
	memcpy(&version, image + 8, 4);
	memcpy(&size, image + 12, 4);
	want = version == 1 ? SGX_SECRETS_FILE_SIZE : SGX_SECRETS_FILE_SIZE_V2;
	sum_off = version == 1 ? SECRETS_SUM_OFF : SECRETS_V2_SUM_OFF;
	if (memcmp(image, SECRETS_MAGIC, 8) || (version != 1 && version != 2) ||
	    size != (version == 1 ? SECRETS_PAYLOAD : SECRETS_V2_PAYLOAD) ||
	    (size_t)n != want)
		return sgx_fail(why, whylen, -EINVAL,
			    "%s is not an sgxemu platform-secrets file (version 1 "
			    "or 2)", path);
	if (sha256(image, sum_off, sum) || memcmp(sum, image + sum_off, sizeof(sum)))
		return sgx_fail(why, whylen, -EINVAL,
			    "%s is damaged: checksum mismatch (not replaced; move it "
			    "away to start a new platform)", path);
	*len = (size_t)n;
	return 0;
}

void sgx_secrets_svn_of(const uint8_t *image, size_t len,
			struct sgx_svn_state *st)
{
	if (len == SGX_SECRETS_FILE_SIZE_V2) {
		memcpy(st->cpusvn, image + 112, 16);
		memcpy(st->pending, image + 128, 16);
		memcpy(st->previous, image + 144, 16);
		return;
	}
	/* Version 1: no update ever asked for. */
	memset(st->cpusvn, SGX_DEFAULT_CPUSVN_BYTE, 16);
	memcpy(st->pending, st->cpusvn, 16);
	memcpy(st->previous, st->cpusvn, 16);
}

int sgx_secrets_seal_image(uint8_t image[SGX_SECRETS_FILE_SIZE_V2])
{
	uint32_t version = 2, size = SECRETS_V2_PAYLOAD;

	memcpy(image + 8, &version, 4);
	memcpy(image + 12, &size, 4);
	return sha256(image, SECRETS_V2_SUM_OFF, image + SECRETS_V2_SUM_OFF) ?
	       -EIO : 0;
}

/* 32 hex digits from the environment variable @name into @out. */
static int env_hex16(const char *name, uint8_t out[16], char *why, size_t whylen)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return 0;
	if (sgx_unhex(v, out, 16))
		return sgx_fail(why, whylen, -EINVAL, "%s must be 32 hex digits", name);
	return 0;
}

int sgx_secrets_load(const char *path, struct sgx_platform_keys *keys,
		     char *why, size_t whylen)
{
	uint8_t image[SGX_SECRETS_FILE_SIZE_V2];
	struct sgx_svn_state svn;
	size_t len = 0;
	int ret;

	ret = sgx_secrets_read(path, image, &len, why, whylen);
	if (ret == -ENOENT) {
		ret = create_secrets(path, why, whylen);
		if (ret)
			return ret;
		ret = sgx_secrets_read(path, image, &len, why, whylen);
	}
	if (ret == -ENOENT)
		return sgx_fail(why, whylen, -ENOENT, "%s vanished while it was created",
			    path);
	if (ret)
		return ret;

	memcpy(keys->root, image + 16, sizeof(keys->root));
	memcpy(keys->owner_epoch, image + 96, sizeof(keys->owner_epoch));
	sgx_secrets_svn_of(image, len, &svn);
	memset(image, 0, sizeof(image));
	memcpy(keys->cpusvn, svn.cpusvn, sizeof(keys->cpusvn));
	ret = env_hex16("SGXEMU_CPUSVN", keys->cpusvn, why, whylen);
	if (!ret)
		ret = env_hex16("SGXEMU_OWNER_EPOCH", keys->owner_epoch, why, whylen);
	if (!ret)
		ret = random_bytes(keys->report_keyid, sizeof(keys->report_keyid));
	return ret;
}

int sgx_secrets_fingerprint(const struct sgx_platform_keys *keys, char out[33])
{
	static const char label[] = "sgxemu platform fingerprint";
	uint8_t mac[16];

	/* A MAC under the SEAL root: public, stable, and reveals no key. */
	if (sgx_cmac(keys->root[SGX_KEYNAME_SEAL], label, sizeof(label) - 1, mac))
		return -EIO;
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	return 0;
}
